"""The public face of the library: a Robot wraps a frozen RobotModel and validates every input once.

Every state argument may carry leading batch dimensions: q (..., nq), v (..., nv) -> results (..., .).
"""
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .algorithms import entry_points as kernels
from .algorithms.kinematics import ERR_AREF, ERR_Q, ERR_QUAT, ERR_SINGULAR, ERR_V, ERR_VREF, workspace
from .compiled import clear_stale_cache, resolve, strided
from .configuration import ConfigurationSpace
from . import model
from .model import build_model
from .urdf import parse_urdf


_ND, _F64, _empty = np.ndarray, np.dtype(np.float64), np.empty
clear_stale_cache(kernels.dynamics, [*Path(kernels.__file__).parent.glob("*.py"), Path(model.__file__)])


def _is_state(x, shape):
    """x goes to a kernel as it is: a float64 ndarray of exactly this shape (any strides: layout 'A')."""
    return type(x) is _ND and x.dtype is _F64 and x.shape == shape


def _arrays(d):
    """M, C, g, com, J_com (and Y when present) of a Dynamics."""
    return [d.M, d.C, d.g, d.com, d.J_com] + ([] if d.Y is None else [d.Y])


def _merged_batch(x, batch_ndim, B):
    """A view of x with its batch_ndim leading dimensions merged into one of size B; None if that needs a copy."""
    y = x.reshape((B,) + x.shape[batch_ndim:])
    return y if np.may_share_memory(x, y) else None     # a copy is new memory


def _checked_out(out, shape, name="out"):
    """out, if it can receive a result of this shape in place; else a ValueError naming it."""
    if not (isinstance(out, np.ndarray) and out.dtype == _F64 and out.shape == shape and out.flags.writeable):
        got = (f"a {'read-only ' if not out.flags.writeable else ''}{out.dtype} array of shape {out.shape}"
               if isinstance(out, np.ndarray) else type(out).__name__)
        raise ValueError(f"{name} must be a writeable float64 array of shape {shape}, got {got}")
    return out


@dataclass(slots=True)            # not frozen: building a frozen one costs ~1 us, a tenth of a small arm's call
class Dynamics:
    """What one pass of paper 002 gives: tau = M a + C v + g; Y pi = M a_r + C v_r + g when references are given.

    M, C: (..., nv, nv); g: (..., nv); com: (..., 3); J_com: (..., 3, nv); Y: (..., nv, 10 nbodies) or None.
    A Dynamics can be handed back as dynamics(..., out=d) to receive the next state's results in place.
    """
    M: np.ndarray
    C: np.ndarray
    g: np.ndarray
    com: np.ndarray
    J_com: np.ndarray
    Y: np.ndarray | None = None


def load_urdf(source, floating_base=False, gravity=(0.0, 0.0, -9.81), mimic=False, strict_inertia=False):
    """Robot of a URDF file path or XML string.

    floating_base: put a free 6-DoF joint between the world and the root link (Pinocchio's free flyer).
    gravity: (3,) in the world frame.  mimic: False -> mimic joints are independent DoFs (Pinocchio's default);
    True -> a mimic joint follows its master, q = multiplier q_master + offset, and is not a DoF.
    strict_inertia: refuse physically impossible inertias (not PSD, or I1 + I2 < I3) instead of loading them with
    a URDFWarning; many published URDFs carry such placeholder inertias, and Pinocchio loads them.
    Raises URDFError (a ValueError) naming the element at fault.
    """
    description = parse_urdf(source, strict_inertia=strict_inertia)
    return Robot(build_model(description, floating_base=floating_base, gravity=gravity, mimic=mimic))


class Robot:
    """M(q), C(q, v), g(q), the CoM Jacobian and the Slotine-Li regressor of a tree of rigid bodies (paper 002).

    Threads: every method fills its results within one compiled call, which holds the GIL, so threads that share
    a Robot take turns and never see each other's scratch workspace.  For speed on several cores, pass a batch.
    """

    def __init__(self, model):
        self.model = model
        self.nq, self.nv, self.nbodies = model.nq, model.nv, model.nbodies
        self.joint_names = model.joint_names
        self.body_names = list(model.body_names)
        self.root_link = model.root_link
        self.floating_base = model.floating_base
        self.gravity = np.array(model.gravity, dtype=float)
        self.parameters = model.pi.reshape(-1).copy()
        self.parameters.flags.writeable = False
        self.total_mass = float(model.pi[:, 0].sum())
        self._space = ConfigurationSpace(model)
        self._q_shape, self._v_shape = (model.nq,), (model.nv,)
        self._bodies = model.bodies.copy()          # kernels take writable arrays; the model stays frozen
        self._work = workspace(model.nbodies)
        nq, nv, nb = model.nq, model.nv, model.nbodies
        self._coupled = any(j.mimic is not None for j in model.joints)
        self._nn, self._3n, self._ny = (nv, nv), (3, nv), (nv, 10 * nb)
        self._no_y = np.empty(self._ny)
        # Resolve (load, or compile on first use) each kernel for arrays of any strides (compiled.strided), with a
        # valid state; gravity, bodies and the workspace are always Robot's own contiguous arrays.
        q, v, M, x, J = strided(nq), strided(nv), strided(nv, nv), strided(nv), strided(3, nv)
        q[:] = self._space.neutral()
        b, w, g, com, Y = self._bodies, self._work, self.gravity, strided(3), strided(nv, 10 * nb)
        resolve(self, "_k_dynamics", kernels.dynamics, b, w, g, q, v, v, v, True, M, M, x, com, J, Y)
        resolve(self, "_k_mass", kernels.mass_matrix, b, w, q, M)
        resolve(self, "_k_coriolis", kernels.coriolis_matrix, b, w, q, v, M)
        resolve(self, "_k_gravity", kernels.gravity_vector, b, w, g, q, x)
        resolve(self, "_k_com", kernels.com_position, b, w, q, com)
        resolve(self, "_k_com_jacobian", kernels.com_jacobian, b, w, q, J)
        resolve(self, "_k_regressor", kernels.regressor, b, w, g, q, v, v, v, Y)
        resolve(self, "_k_placements", kernels.body_placements, b, w, q, strided(nb, 4, 4))
        resolve(self, "_k_rnea", kernels.inverse_dynamics, b, w, g, q, v, v, x)
        resolve(self, "_k_aba", kernels.forward_dynamics, b, w, g, q, v, v, x)
        # The parallel batch kernel, for the same layout: it then shares every compiled pass with the above.
        Q, V = strided(2, nq), strided(2, nv)
        Q[:] = q
        resolve(self, "_k_batch", kernels.dynamics_batch, b, g, Q, V, V, V, True, strided(2, nv, nv),
                strided(2, nv, nv), V, strided(2, 3), strided(2, 3, nv), strided(2, nv, 10 * nb),
                np.zeros(2, dtype=np.int64))

    def __repr__(self):
        base = "floating" if self.floating_base else "fixed"
        return f"<Robot '{self.model.name}': {self.nbodies} bodies, nq={self.nq}, nv={self.nv}, {base} base>"

    # ---- models that differ in parameters or gravity -------------------------------------------------------
    def with_parameters(self, pi):
        """The same kinematics with other inertial parameters pi: (10 nbodies,)."""
        pi = self._vector(pi, "pi", 10 * self.nbodies)
        return Robot(self.model.with_parameters(pi))

    def with_gravity(self, gravity):
        """The same robot under another gravity vector (3,), world frame."""
        return Robot(self.model.with_gravity(self._vector(gravity, "gravity", 3)))

    # ---- configurations --------------------------------------------------------------------------------------
    def neutral(self):
        """A valid q: zero joint positions, identity orientations.  -> (nq,)"""
        return self._space.neutral()

    def random_configuration(self, rng=None):
        """A random valid q (angles in [-pi, pi], positions in [-0.5, 0.5], uniform rotations).  -> (nq,)"""
        return self._space.random(np.random.default_rng(rng))

    def random_state(self, rng=None):
        """(q, v): a random configuration and a standard normal velocity."""
        rng = np.random.default_rng(rng)
        return self._space.random(rng), rng.normal(size=self.nv)

    def integrate(self, q, v, dt=1.0):
        """q (+) v dt on the configuration manifold (SE(3) exponential for a free joint).  -> (..., nq)"""
        q, v, shape = self._batch(q=q, v=v)
        out = np.array([self._space.integrate(qi, vi * dt) for qi, vi in zip(q, v)])
        return out.reshape(shape + (self.nq,))

    def difference(self, q0, q1):
        """v with integrate(q0, v) = q1.  -> (..., nv)"""
        q0, q1, shape = self._batch(q0=q0, q1=q1)
        out = np.array([self._space.difference(a, b) for a, b in zip(q0, q1)])
        return out.reshape(shape + (self.nv,))

    def body_placements(self, q):
        """T_{0,k} of every body: (..., nbodies, 4, 4) homogeneous transforms, body frames in the world."""
        return self._run(self._k_placements, (self._bodies, self._work), dict(q=q), (self.nbodies, 4, 4), None)

    # ---- the dynamics of paper 002 ---------------------------------------------------------------------------
    # Every method takes one state or a batch, and an optional `out`: a writeable float64 array of the result's
    # shape (any strides) that receives the result and is returned -- no allocation per call.  `out` must not
    # share memory with the inputs.  A single state of float64 arrays goes straight to the compiled kernel (which
    # checks finiteness); anything else is validated and converted by `_batch` first.
    def dynamics(self, q, v, v_ref=None, a_ref=None, out=None):
        """M, C, g, com, J_com and, when v_ref and a_ref are given, the Slotine-Li Y, from one outward pass.

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  Dynamics (see its docstring for shapes).
        out: a Dynamics of such arrays (with Y exactly when v_ref is given) to write into and return.
        """
        if (v_ref is None) != (a_ref is None):
            raise ValueError("give both v_ref and a_ref for the regressor, or neither")
        want_y = v_ref is not None
        qs, vs = self._q_shape, self._v_shape
        if (_is_state(q, qs) and _is_state(v, vs)
                and (not want_y or (_is_state(v_ref, vs) and _is_state(a_ref, vs)))):
            if out is None:
                nv = self.nv
                out = Dynamics(_empty(self._nn), _empty(self._nn), _empty(nv), _empty(3), _empty(self._3n),
                               _empty(self._ny) if want_y else None)
            else:
                self._check_out_dynamics(out, (), want_y)
            status = self._k_dynamics(self._bodies, self._work, self.gravity, q, v, v_ref if want_y else v,
                                      a_ref if want_y else v, want_y, out.M, out.C, out.g, out.com, out.J_com,
                                      out.Y if want_y else self._no_y)
            if status:
                self._raise(status)
            return out
        return self._dynamics_batch(q, v, v_ref, a_ref, out)

    def mass_matrix(self, q, out=None):
        """M(q) = sum_k J_k^T Lambda_k J_k (paper 002, eq. (6a)).  q: (..., nq) -> (..., nv, nv)"""
        if type(q) is _ND and q.dtype is _F64 and q.shape == self._q_shape:
            out = _empty(self._nn) if out is None else _checked_out(out, self._nn)
            status = self._k_mass(self._bodies, self._work, q, out)
            if status:
                self._raise(status)
            return out
        return self._run(self._k_mass, (self._bodies, self._work), dict(q=q), self._nn, out)

    def coriolis_matrix(self, q, v, out=None):
        """C(q, v) of paper 002, eq. (6b): C v holds the Coriolis and centrifugal torques, Mdot = C + C^T.

        q: (..., nq), v: (..., nv) -> (..., nv, nv)
        """
        if _is_state(q, self._q_shape) and _is_state(v, self._v_shape):
            out = _empty(self._nn) if out is None else _checked_out(out, self._nn)
            status = self._k_coriolis(self._bodies, self._work, q, v, out)
            if status:
                self._raise(status)
            return out
        return self._run(self._k_coriolis, (self._bodies, self._work), dict(q=q, v=v), self._nn, out)

    def gravity_vector(self, q, out=None):
        """g(q) = sum_k J_k^T Lambda_k Ad^-1_{0,k} gamma_0 (paper 002, eq. (6c)).  q: (..., nq) -> (..., nv)"""
        if type(q) is _ND and q.dtype is _F64 and q.shape == self._q_shape:
            out = _empty(self.nv) if out is None else _checked_out(out, self._v_shape)
            status = self._k_gravity(self._bodies, self._work, self.gravity, q, out)
            if status:
                self._raise(status)
            return out
        return self._run(self._k_gravity, (self._bodies, self._work, self.gravity), dict(q=q), self._v_shape, out)

    def com_position(self, q, out=None):
        """Centre of mass of the moving bodies in the world frame.  q: (..., nq) -> (..., 3)"""
        if type(q) is _ND and q.dtype is _F64 and q.shape == self._q_shape:
            out = _empty(3) if out is None else _checked_out(out, (3,))
            status = self._k_com(self._bodies, self._work, q, out)
            if status:
                self._raise(status)
            return out
        return self._run(self._k_com, (self._bodies, self._work), dict(q=q), (3,), out)

    def com_jacobian(self, q, out=None):
        """J_com = (1/m) P^T Lambda J (paper 002, eq. (7)): CoM velocity = J_com v.  q: (..., nq) -> (..., 3, nv)"""
        if type(q) is _ND and q.dtype is _F64 and q.shape == self._q_shape:
            out = _empty(self._3n) if out is None else _checked_out(out, self._3n)
            status = self._k_com_jacobian(self._bodies, self._work, q, out)
            if status:
                self._raise(status)
            return out
        return self._run(self._k_com_jacobian, (self._bodies, self._work), dict(q=q), self._3n, out)

    def regressor(self, q, v, v_ref, a_ref, out=None):
        """Slotine-Li Y(q, v, v_r, a_r) with Y pi = M a_r + C(q, v) v_r + g (paper 002, eq. (16)).

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  (..., nv, 10 nbodies), columns in body_names order.
        """
        vs = self._v_shape
        if _is_state(q, self._q_shape) and _is_state(v, vs) and _is_state(v_ref, vs) and _is_state(a_ref, vs):
            out = _empty(self._ny) if out is None else _checked_out(out, self._ny)
            status = self._k_regressor(self._bodies, self._work, self.gravity, q, v, v_ref, a_ref, out)
            if status:
                self._raise(status)
            return out
        return self._run(self._k_regressor, (self._bodies, self._work, self.gravity),
                         dict(q=q, v=v, v_ref=v_ref, a_ref=a_ref), self._ny, out)

    def inverse_dynamics(self, q, v, a, out=None):
        """tau = M a + C v + g by the recursive Newton-Euler algorithm, O(n).  (..., nq), (..., nv) x2 -> (..., nv)"""
        return self._newton_euler(self._k_rnea, q, v, a, "a", out)

    def forward_dynamics(self, q, v, tau, out=None):
        """a = M^-1 (tau - C v - g) by the articulated-body algorithm, O(n) (with coupled mimic joints: by a
        Cholesky factor of M).  (..., nq), (..., nv) x2 -> (..., nv)"""
        if self._coupled:
            return self._forward_dynamics_coupled(q, v, tau, out)
        return self._newton_euler(self._k_aba, q, v, tau, "tau", out)

    def kinetic_energy(self, q, v):
        """1/2 v^T M(q) v.  -> (...,)"""
        M = self.mass_matrix(q)
        v = np.asarray(v, dtype=float)
        return 0.5 * np.einsum("...i,...ij,...j->...", v, M, v)

    def potential_energy(self, q):
        """-m gravity . com, zero with the CoM at the world origin.  -> (...,)"""
        return -self.total_mass * self.com_position(q) @ self.gravity

    # ---- plumbing ---------------------------------------------------------------------------------------------
    _ERRORS = {ERR_Q: "q contains non-finite values (NaN or inf)", ERR_V: "v contains non-finite values (NaN or inf)",
               ERR_VREF: "v_ref contains non-finite values (NaN or inf)",
               ERR_AREF: "{} contains non-finite values (NaN or inf)",
               ERR_SINGULAR: "the mass matrix is singular at this q: a joint moves a subtree without mass or "
                             "inertia, so the forward dynamics is undefined"}

    def _raise(self, status, accel_name="a_ref"):
        if status == 0:
            return
        if status == ERR_QUAT:
            iq = [j.idx_q for j in self.model.joints if j.type in ("free", "floating")]
            where = ", ".join(f"q[{i + 3}:{i + 7}]" for i in iq)
            raise ValueError(f"{where} is a zero quaternion; expected [qx, qy, qz, qw] of non-zero norm")
        raise ValueError(self._ERRORS[int(status)].format(accel_name))

    def _newton_euler(self, kernel, q, v, x, name, out):
        vs = self._v_shape
        if _is_state(q, self._q_shape) and _is_state(v, vs) and _is_state(x, vs):
            out = _empty(self.nv) if out is None else _checked_out(out, vs)
            status = kernel(self._bodies, self._work, self.gravity, q, v, x, out)
            if status:
                self._raise(status, name)
            return out
        return self._run(kernel, (self._bodies, self._work, self.gravity), {"q": q, "v": v, name: x}, vs, out,
                         name)

    def _forward_dynamics_coupled(self, q, v, tau, out):
        """Forward dynamics through a Cholesky factor of M: ABA does not apply to joints coupled by mimics."""
        from scipy.linalg import cho_factor, cho_solve       # here: importing scipy.linalg takes ~0.25 s
        q, v, tau, shape = self._batch(q=q, v=v, tau=tau)
        out = _empty(shape + self._v_shape) if out is None else _checked_out(out, shape + self._v_shape)
        d = self.dynamics(q, v)
        bias = np.einsum("...ij,...j->...i", d.C, v) + d.g
        try:
            a = np.array([cho_solve(cho_factor(M), t - b) for M, t, b in zip(d.M, tau, bias)])
        except np.linalg.LinAlgError:
            self._raise(ERR_SINGULAR)
        out[...] = a.reshape(out.shape)
        return out

    def _run(self, kernel, prefix, inputs, shape, out, accel_name="a_ref"):
        """kernel(*prefix, *state_i, out_i) for every state of a batch of validated inputs -> out (..., *shape),
        allocated unless given."""
        *flat, batch = self._batch(**inputs)
        out = _empty(batch + shape) if out is None else _checked_out(out, batch + shape)
        for i, index in enumerate(np.ndindex(batch)):
            self._raise(kernel(*prefix, *(x[i] for x in flat), out[index]), accel_name)
        return out

    def _dynamics_batch(self, q, v, v_ref, a_ref, out):
        """dynamics() of validated states (any batch shape, or one state given as lists, other dtypes...) by the
        parallel kernel, into `out` when given."""
        want_y = v_ref is not None
        if want_y:
            q, v, v_ref, a_ref, shape = self._batch(q=q, v=v, v_ref=v_ref, a_ref=a_ref)
        else:
            q, v, shape = self._batch(q=q, v=v)
            v_ref = a_ref = v
        B = q.shape[0]
        if out is None:
            shapes = [self._nn, self._nn, self._v_shape, (3,), self._3n] + ([self._ny] if want_y else [])
            fresh = [_empty((B,) + s) for s in shapes]
            self._dynamics_parallel(q, v, v_ref, a_ref, want_y, fresh)
            return Dynamics(*(x.reshape(shape + x.shape[1:]) for x in fresh), *([] if want_y else [None]))
        self._check_out_dynamics(out, shape, want_y)
        targets = [_merged_batch(x, len(shape), B) for x in _arrays(out)]
        if all(x is not None for x in targets):
            self._dynamics_parallel(q, v, v_ref, a_ref, want_y, targets)
        else:                                      # views whose batch dimensions do not merge: compute, copy in
            fresh = [_empty((B,) + x.shape[len(shape):]) for x in _arrays(out)]
            self._dynamics_parallel(q, v, v_ref, a_ref, want_y, fresh)
            for x, y in zip(_arrays(out), fresh):
                x[...] = y.reshape(x.shape)
        return out

    def _dynamics_parallel(self, q, v, v_ref, a_ref, want_y, arrays):
        """dynamics_batch over the B states of (B, .) inputs into the (B, .) arrays (any strides) M, C, g, com,
        J_com (and Y when want_y)."""
        Y = arrays[5] if want_y else self._no_y[None]
        status = np.zeros(q.shape[0], dtype=np.int64)
        self._k_batch(self._bodies, self.gravity, q, v, v_ref, a_ref, want_y, *arrays[:5], Y, status)
        if status.any():
            self._raise(status[np.flatnonzero(status)[0]])

    def _check_out_dynamics(self, out, shape, want_y):
        if type(out) is not Dynamics:
            raise ValueError(f"out must be a Dynamics (as returned by dynamics()), got {type(out).__name__}")
        if (out.Y is not None) != want_y:
            raise ValueError("out.Y must be an array exactly when v_ref and a_ref are given"
                             + (" (out.Y is None)" if want_y else " (out.Y is not None)"))
        nn = shape + self._nn
        _checked_out(out.M, nn, "out.M")
        _checked_out(out.C, nn, "out.C")
        _checked_out(out.g, shape + self._v_shape, "out.g")
        _checked_out(out.com, shape + (3,), "out.com")
        _checked_out(out.J_com, shape + self._3n, "out.J_com")
        if want_y:
            _checked_out(out.Y, shape + self._ny, "out.Y")

    def _vector(self, x, name, n):
        x = np.array(x, dtype=float)
        if x.shape != (n,) or not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be a finite array of shape ({n},), got shape {x.shape}"
                             + ("" if x.shape != (n,) else " with non-finite values"))
        return x

    def _batch(self, **arrays):
        """Validate named arrays, q-like ones (names starting with q) of width nq, others nv; flatten the batch.

        Returns the flattened (B, width) arrays followed by the common leading shape.
        """
        out, shape = [], None
        for name, x in arrays.items():
            width, what = (self.nq, "nq") if name.startswith("q") else (self.nv, "nv")
            try:
                x = np.array(x, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be a numeric array of shape (..., {what}={width})") from None
            if x.ndim == 0 or x.shape[-1] != width:
                raise ValueError(f"{name} must have shape (..., {what}={width}), got {x.shape}")
            if shape is None:
                shape = x.shape[:-1]
            elif x.shape[:-1] != shape:
                raise ValueError(f"{name} has batch shape {x.shape[:-1]}, expected {shape} like "
                                 f"{next(iter(arrays))}")
            if not np.all(np.isfinite(x)):
                raise ValueError(f"{name} contains non-finite values (NaN or inf)")
            if width == self.nq and name.startswith("q"):
                self._space.normalize(x, name)
            out.append(x.reshape(int(np.prod(shape)), width))
        return (*out, shape)
