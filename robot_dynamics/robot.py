"""The public face of the library: a Robot wraps a frozen RobotModel and validates every input once.

Every state argument may carry leading batch dimensions: q (..., nq), v (..., nv) -> results (..., .).
"""
from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .algorithms.kinematics import outward_pass
from .algorithms.matrices import WANT_C, WANT_Y, dynamics_pass, workspace
from .algorithms.newton_euler import rnea, rnea_workspace
from .configuration import ConfigurationSpace
from .model import build_model
from .urdf import parse_urdf


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
        self.gravity = model.gravity
        self.parameters = model.pi.reshape(-1).copy()
        self.parameters.flags.writeable = False
        self.total_mass = float(model.pi[:, 0].sum())
        self._space = ConfigurationSpace(model)
        self._work = workspace(model.nbodies, model.nv)
        self._rnea_work = rnea_workspace(model.nbodies)

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
        R_pk, p_pk, R0, p0, vb, J, Jdot = self._work
        T = np.zeros((q.shape[0], self.nbodies, 4, 4))
        zero = np.zeros(self.nv)
        for i in range(q.shape[0]):
            outward_pass(self.model.kin, q[i], zero, False, R_pk, p_pk, R0, p0, vb, J, Jdot)
            T[i, :, :3, :3], T[i, :, :3, 3], T[i, :, 3, 3] = R0, p0, 1.0
        return T.reshape(shape + (self.nbodies, 4, 4))

    # ---- the dynamics of paper 002 ---------------------------------------------------------------------------
    def dynamics(self, q, v, v_ref=None, a_ref=None):
        """M, C, g, com, J_com and, when v_ref and a_ref are given, the Slotine-Li Y, from one outward pass.

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  Dynamics (see its docstring for shapes).
        """
        if (v_ref is None) != (a_ref is None):
            raise ValueError("give both v_ref and a_ref for the regressor, or neither")
        want_y = v_ref is not None
        if want_y:
            q, v, v_ref, a_ref, shape = self._batch(q=q, v=v, v_ref=v_ref, a_ref=a_ref)
        else:
            q, v, shape = self._batch(q=q, v=v)
            v_ref = a_ref = v
        out = self._run(q, v, v_ref, a_ref, WANT_C | (WANT_Y if want_y else 0))
        return Dynamics(*(x.reshape(shape + x.shape[1:]) for x in out[:5]),
                        out[5].reshape(shape + out[5].shape[1:]) if want_y else None)

    def mass_matrix(self, q):
        """M(q) = sum_k J_k^T Lambda_k J_k (paper 002, eq. (6a)).  q: (..., nq) -> (..., nv, nv)"""
        q, shape = self._batch(q=q)
        return self._run(q, None, None, None, 0)[0].reshape(shape + (self.nv, self.nv))

    def coriolis_matrix(self, q, v):
        """C(q, v) of paper 002, eq. (6b): C v holds the Coriolis and centrifugal torques, Mdot = C + C^T.

        q: (..., nq), v: (..., nv) -> (..., nv, nv)
        """
        q, v, shape = self._batch(q=q, v=v)
        return self._run(q, v, v, v, WANT_C)[1].reshape(shape + (self.nv, self.nv))

    def gravity_vector(self, q):
        """g(q) = sum_k J_k^T Lambda_k Ad^-1_{0,k} gamma_0 (paper 002, eq. (6c)).  q: (..., nq) -> (..., nv)"""
        q, shape = self._batch(q=q)
        return self._run(q, None, None, None, 0)[2].reshape(shape + (self.nv,))

    def com_position(self, q):
        """Centre of mass of the moving bodies in the world frame.  q: (..., nq) -> (..., 3)"""
        q, shape = self._batch(q=q)
        return self._run(q, None, None, None, 0)[3].reshape(shape + (3,))

    def com_jacobian(self, q):
        """J_com = (1/m) P^T Lambda J (paper 002, eq. (7)): CoM velocity = J_com v.  q: (..., nq) -> (..., 3, nv)"""
        q, shape = self._batch(q=q)
        return self._run(q, None, None, None, 0)[4].reshape(shape + (3, self.nv))

    def regressor(self, q, v, v_ref, a_ref):
        """Slotine-Li Y(q, v, v_r, a_r) with Y pi = M a_r + C(q, v) v_r + g (paper 002, eq. (16)).

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  (..., nv, 10 nbodies), columns in body_names order.
        """
        q, v, v_ref, a_ref, shape = self._batch(q=q, v=v, v_ref=v_ref, a_ref=a_ref)
        return self._run(q, v, v_ref, a_ref, WANT_Y)[5].reshape(shape + (self.nv, 10 * self.nbodies))

    def inverse_dynamics(self, q, v, a):
        """tau = M a + C v + g by the recursive Newton-Euler algorithm.  (..., nq), (..., nv) x2 -> (..., nv)"""
        q, v, a, shape = self._batch(q=q, v=v, a=a)
        m = self.model
        tau = np.empty((q.shape[0], self.nv))
        for i in range(q.shape[0]):
            rnea(m.kin, m.Lam, m.gravity, q[i], v[i], a[i], tau[i], self._rnea_work)
        return tau.reshape(shape + (self.nv,))

    def forward_dynamics(self, q, v, tau):
        """a = M^-1 (tau - C v - g), by a Cholesky factor of M and Newton-Euler for C v + g.  -> (..., nv)"""
        q, v, tau, shape = self._batch(q=q, v=v, tau=tau)
        m = self.model
        M = self._run(q, None, None, None, 0)[0]
        a = np.empty((q.shape[0], self.nv))
        bias = np.empty(self.nv)
        zero = np.zeros(self.nv)
        for i in range(q.shape[0]):
            rnea(m.kin, m.Lam, m.gravity, q[i], v[i], zero, bias, self._rnea_work)
            try:
                a[i] = cho_solve(cho_factor(M[i]), tau[i] - bias)
            except np.linalg.LinAlgError:
                raise ValueError("the mass matrix is singular at this q: a moving body without mass or inertia "
                                 "makes the forward dynamics undefined") from None
        return a.reshape(shape + (self.nv,))

    def kinetic_energy(self, q, v):
        """1/2 v^T M(q) v.  -> (...,)"""
        M = self.mass_matrix(q)
        v = np.asarray(v, dtype=float)
        return 0.5 * np.einsum("...i,...ij,...j->...", v, M, v)

    def potential_energy(self, q):
        """-m gravity . com, zero with the CoM at the world origin.  -> (...,)"""
        return -self.total_mass * self.com_position(q) @ self.gravity

    # ---- plumbing ---------------------------------------------------------------------------------------------
    def _run(self, q, v, v_ref, a_ref, want):
        """The fused kernel over a flat batch q (B, nq); v, v_ref, a_ref (B, nv) or None (then zeros)."""
        B, nv, nb, m = q.shape[0], self.nv, self.nbodies, self.model
        zeros = np.zeros((B, nv))
        v, v_ref, a_ref = (zeros if x is None else x for x in (v, v_ref, a_ref))
        M, C = np.empty((B, nv, nv)), np.empty((B, nv, nv))
        g, com, J_com = np.empty((B, nv)), np.empty((B, 3)), np.empty((B, 3, nv))
        Y = np.empty((B, nv, 10 * nb)) if want & WANT_Y else np.empty((1, nv, 10 * nb))
        for i in range(B):
            dynamics_pass(m.kin, m.Lam, m.pi, m.gravity, q[i], v[i], v_ref[i], a_ref[i], want, M[i], C[i], g[i],
                          com[i], J_com[i], Y[i if want & WANT_Y else 0], self._work)
        return M, C, g, com, J_com, Y

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
