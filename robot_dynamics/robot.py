"""The public face of the library: a Robot wraps a frozen RobotModel and validates every input once.

Every state argument may carry leading batch dimensions: q (..., nq), v (..., nv) -> results (..., .).
"""
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .algorithms import entry_points as kernels
from .algorithms.entry_points import dynamics_batch
from .algorithms.kinematics import (ERR_AREF, ERR_Q, ERR_QUAT, ERR_SINGULAR, ERR_V, ERR_VREF, outward_pass,
                                    workspace)
from .compiled import announce_if_cold, resolve
from .configuration import ConfigurationSpace
from .model import build_model
from .urdf import parse_urdf


_F64 = np.dtype(np.float64)


@dataclass(frozen=True)
class Dynamics:
    """What one pass of paper 002 gives: tau = M a + C v + g; Y pi = M a_r + C v_r + g when references are given.

    M, C: (..., nv, nv); g: (..., nv); com: (..., 3); J_com: (..., 3, nv); Y: (..., nv, 10 nbodies) or None.
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
    """M(q), C(q, v), g(q), the CoM Jacobian and the Slotine-Li regressor of a tree of rigid bodies (paper 002)."""

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
        nv, self._coupled = model.nv, any(j.mimic is not None for j in model.joints)
        self._no_y = np.empty((nv, 10 * model.nbodies))
        self._none = (np.empty(0), np.empty(0), np.empty((0, 0)))      # "not wanted" outputs of _k_gravity
        # Resolve (load, or compile on first use) each kernel for these argument types, with a valid state.
        q, v, g = self._space.neutral(), np.zeros(nv), self.gravity
        M, C, gv, com, J_com = np.empty((nv, nv)), np.empty((nv, nv)), np.empty(nv), np.empty(3), np.empty((3, nv))
        b, w = self._bodies, self._work
        resolve(self, "_k_dynamics", kernels.dynamics, b, w, g, q, v, v, v, True, M, C, gv, com, J_com, self._no_y)
        resolve(self, "_k_mass", kernels.mass_matrix, b, w, q, M)
        resolve(self, "_k_coriolis", kernels.coriolis_matrix, b, w, q, v, C)
        resolve(self, "_k_gravity", kernels.gravity_terms, b, w, g, q, gv, com, J_com)
        resolve(self, "_k_regressor", kernels.regressor, b, w, g, q, v, v, v, self._no_y)
        resolve(self, "_k_rnea", kernels.inverse_dynamics, b, w, g, q, v, v, gv)
        resolve(self, "_k_aba", kernels.forward_dynamics, b, w, g, q, v, v, gv)

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
        q, shape = self._batch(q=q)
        T = np.zeros((q.shape[0], self.nbodies, 4, 4))
        for i in range(q.shape[0]):
            self._raise(outward_pass(self._bodies, self._work, q[i], q[i], False))
            T[i, :, :3, :3], T[i, :, :3, 3], T[i, :, 3, 3] = self._work["R0"][:self.nbodies], \
                self._work["p0"][:self.nbodies], 1.0
        return T.reshape(shape + (self.nbodies, 4, 4))

    # ---- the dynamics of paper 002 ---------------------------------------------------------------------------
    def dynamics(self, q, v, v_ref=None, a_ref=None):
        """M, C, g, com, J_com and, when v_ref and a_ref are given, the Slotine-Li Y, from one outward pass.

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  Dynamics (see its docstring for shapes).
        """
        if (v_ref is None) != (a_ref is None):
            raise ValueError("give both v_ref and a_ref for the regressor, or neither")
        nv, ny = self.nv, 10 * self.nbodies
        want_y = v_ref is not None
        if self._single(q, v) and (not want_y or self._single(None, v_ref, a_ref)):
            M, C, g, com, J_com = (np.empty((nv, nv)), np.empty((nv, nv)), np.empty(nv), np.empty(3),
                                   np.empty((3, nv)))
            Y = np.empty((nv, ny)) if want_y else self._no_y
            self._raise(self._k_dynamics(self._bodies, self._work, self.gravity, q, v, v_ref if want_y else v,
                                         a_ref if want_y else v, want_y, M, C, g, com, J_com, Y))
            return Dynamics(M, C, g, com, J_com, Y if want_y else None)
        if want_y:
            q, v, v_ref, a_ref, shape = self._batch(q=q, v=v, v_ref=v_ref, a_ref=a_ref)
        else:
            q, v, shape = self._batch(q=q, v=v)
            v_ref = a_ref = v
        B = q.shape[0]
        M, C, g, com, J_com = (np.empty((B, nv, nv)), np.empty((B, nv, nv)), np.empty((B, nv)), np.empty((B, 3)),
                               np.empty((B, 3, nv)))
        Y = np.empty((B, nv, ny)) if want_y else np.empty((1, nv, ny))
        status = np.zeros(B, dtype=np.int64)
        announce_if_cold(dynamics_batch)
        dynamics_batch(self._bodies, self.gravity, q, v, v_ref, a_ref, want_y, M, C, g, com, J_com, Y, status)
        if status.any():
            self._raise(status[np.flatnonzero(status)[0]])
        out = [x.reshape(shape + x.shape[1:]) for x in (M, C, g, com, J_com)]
        return Dynamics(*out, Y.reshape(shape + Y.shape[1:]) if want_y else None)

    def mass_matrix(self, q):
        """M(q) = sum_k J_k^T Lambda_k J_k (paper 002, eq. (6a)).  q: (..., nq) -> (..., nv, nv)"""
        if self._single(q):
            M = np.empty((self.nv, self.nv))
            status = self._k_mass(self._bodies, self._work, q, M)
            if status:
                self._raise(status)
            return M
        return self._each(self._k_mass, (self._bodies, self._work), dict(q=q), (self.nv, self.nv))

    def coriolis_matrix(self, q, v):
        """C(q, v) of paper 002, eq. (6b): C v holds the Coriolis and centrifugal torques, Mdot = C + C^T.

        q: (..., nq), v: (..., nv) -> (..., nv, nv)
        """
        if self._single(q, v):
            C = np.empty((self.nv, self.nv))
            status = self._k_coriolis(self._bodies, self._work, q, v, C)
            if status:
                self._raise(status)
            return C
        return self._each(self._k_coriolis, (self._bodies, self._work), dict(q=q, v=v), (self.nv, self.nv))

    def gravity_vector(self, q):
        """g(q) = sum_k J_k^T Lambda_k Ad^-1_{0,k} gamma_0 (paper 002, eq. (6c)).  q: (..., nq) -> (..., nv)"""
        return self._gravity_terms(q, 0, (self.nv,))

    def com_position(self, q):
        """Centre of mass of the moving bodies in the world frame.  q: (..., nq) -> (..., 3)"""
        return self._gravity_terms(q, 1, (3,))

    def com_jacobian(self, q):
        """J_com = (1/m) P^T Lambda J (paper 002, eq. (7)): CoM velocity = J_com v.  q: (..., nq) -> (..., 3, nv)"""
        return self._gravity_terms(q, 2, (3, self.nv))

    def _gravity_terms(self, q, which, shape):
        """g (0), com (1) or J_com (2): the kernel fills the one of non-zero size."""
        none = self._none
        if self._single(q):
            outs = list(none)
            outs[which] = out = np.empty(shape)
            status = self._k_gravity(self._bodies, self._work, self.gravity, q, *outs)
            if status:
                self._raise(status)
            return out
        def one(bodies, work, gravity, q, out):
            return self._k_gravity(bodies, work, gravity, q, *(out if k == which else none[k] for k in range(3)))

        return self._each(one, (self._bodies, self._work, self.gravity), dict(q=q), shape)

    def regressor(self, q, v, v_ref, a_ref):
        """Slotine-Li Y(q, v, v_r, a_r) with Y pi = M a_r + C(q, v) v_r + g (paper 002, eq. (16)).

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  (..., nv, 10 nbodies), columns in body_names order.
        """
        shape = (self.nv, 10 * self.nbodies)
        if self._single(q, v, v_ref, a_ref):
            Y = np.empty(shape)
            self._raise(self._k_regressor(self._bodies, self._work, self.gravity, q, v, v_ref, a_ref, Y))
            return Y
        return self._each(self._k_regressor, (self._bodies, self._work, self.gravity),
                          dict(q=q, v=v, v_ref=v_ref, a_ref=a_ref), shape)

    def inverse_dynamics(self, q, v, a):
        """tau = M a + C v + g by the recursive Newton-Euler algorithm, O(n).  (..., nq), (..., nv) x2 -> (..., nv)"""
        return self._newton_euler(self._k_rnea, q, v, a, "a")

    def forward_dynamics(self, q, v, tau):
        """a = M^-1 (tau - C v - g) by the articulated-body algorithm, O(n) (with coupled mimic joints: by a
        Cholesky factor of M).  (..., nq), (..., nv) x2 -> (..., nv)"""
        if self._coupled:
            q, v, tau, shape = self._batch(q=q, v=v, tau=tau)
            d = self.dynamics(q, v)
            bias = np.einsum("...ij,...j->...i", d.C, v) + d.g
            try:
                a = np.array([cho_solve(cho_factor(M), t - b) for M, t, b in zip(d.M, tau, bias)])
            except np.linalg.LinAlgError:
                self._raise(ERR_SINGULAR)
            return a.reshape(shape + (self.nv,))
        return self._newton_euler(self._k_aba, q, v, tau, "tau")

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

    def _single(self, q, *vs):
        """True when q (unless None) and every v are single C-contiguous float64 states of the right width: they
        go to the compiled kernels as they are (which check finiteness); anything else takes the general path."""
        if q is not None and not (type(q) is np.ndarray and q.shape == self._q_shape and q.dtype == _F64
                                  and q.flags.c_contiguous):
            return False
        for v in vs:
            if not (type(v) is np.ndarray and v.shape == self._v_shape and v.dtype == _F64
                    and v.flags.c_contiguous):
                return False
        return True

    def _newton_euler(self, kernel, q, v, x, name):
        if self._single(q, v, x):
            out = np.empty(self.nv)
            self._raise(kernel(self._bodies, self._work, self.gravity, q, v, x, out), name)
            return out
        return self._each(kernel, (self._bodies, self._work, self.gravity), {"q": q, "v": v, name: x}, (self.nv,),
                          name)

    def _each(self, kernel, prefix, inputs, shape, accel_name="a_ref"):
        """kernel(*prefix, *state_i, out_i) for every state of a batch of validated inputs -> (..., *shape)."""
        *flat, batch = self._batch(**inputs)
        out = np.empty((flat[0].shape[0],) + shape)
        for i in range(out.shape[0]):
            self._raise(kernel(*prefix, *(x[i] for x in flat), out[i]), accel_name)
        return out.reshape(batch + shape)

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
