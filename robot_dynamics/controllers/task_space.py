"""Operational-space (task-space impedance) control of one frame, with null-space posture control.

The frame's motion obeys Lambda xddot + eta = F for joint torques tau = J^T F (Robot.task_space_dynamics: paper
004, eqs. (9.98)-(9.99); for a redundant arm, Khatib's dynamically consistent form).  The controller commands

    xddot_cmd = A_d + K_d (V_d - V) + K_p e                         (the desired closed loop of the frame)
    tau = J^T (Lambda xddot_cmd + eta) + N^T tau_0,   tau_0 = ID(q, v, a_0),   a_0 = K_p0 (q_0 - q) - K_d0 v

with V = J v the frame's velocity and e its pose error, both in the frame's "local_world_aligned" reference
(world axes at the frame's origin): e = [p_d - p; log(R_d R^T)].  N = E - J_bar J is the null-space projector, so
N^T tau_0 does not accelerate the frame (J M^-1 N^T = 0): the posture torques -- the inverse dynamics of a
joint-space PD towards q_0, which also carry the part of C v + g that J^T eta leaves out -- shape only the
self-motion of a redundant arm.  With an exact model the frame's classical acceleration is xddot_cmd exactly:

    J a + Jdot v = J M^-1 (tau - C v - g) + Jdot v = xddot_cmd

so its error obeys edd + K_d ed + K_p e = 0 (in position; the rotation error to first order), whatever the
configuration away from singularities (damping > 0 regularizes Lambda near one).  ``position_only`` controls
the frame's origin (3 rows) and leaves its orientation to the posture task.  The model's drives: M holds the
armature, and the friction torque tau_f(v) is added whole (M a = tau - C v - g - tau_f; drives.py).

A tick is five kernel calls into preallocated buffers -- the frame's J, Jdot v and pose, M and h = C v + g =
ID(q, v, 0) -- and one compiled step (_operational_step) for the rest: M = L L^T (Cholesky), M^-1 J^T and the
unactuated acceleration a_0 = -M^-1 h by its triangular solves, tau_0 = M a_0' + h for the posture's acceleration
a_0', and N^T tau_0 = tau_0 - J^T Lambda (M^-1 J^T)^T tau_0:

    tau = tau_0 + J^T Lambda (xddot_cmd - (J a_0 + Jdot v) - (M^-1 J^T)^T tau_0) + tau_f(v)
"""
import numpy as np
from numba import njit

from ..calls.compiling import compiled, signature
from ..configuration import ConfigurationSpace, so3_log
from ..dense import cholesky_into, solve_lower
from ..drives import COULOMB_VELOCITY
from ..model import FREE, PLANAR
from .computed_torque import _F64, _ND, check_vector, gain_matrix

OK, SINGULAR, OVERFLOW, BAD_Q, BAD_V, BAD_T_D, BAD_V_D, BAD_A_D = range(8)      # _operational_step's status
_CULPRITS = {BAD_Q: "q", BAD_V: "v", BAD_T_D: "T_d", BAD_V_D: "V_d", BAD_A_D: "A_d"}


class _Gain:
    """A gain matrix attribute, checked by gain_matrix whenever it is set (the compiled tick reads it unchecked):
    (k, k) for the task's K_p and K_d, (nv, nv) for the posture's K_p0 and K_d0."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else obj.__dict__[self.name]

    def __set__(self, obj, value):
        n = obj.robot.nv if self.name.endswith("0") else 3 if obj.position_only else 6
        obj.__dict__[self.name] = np.ascontiguousarray(gain_matrix(value, n, self.name))


class OperationalSpace:
    """tau = J^T (Lambda (A_d + K_d (V_d - V) + K_p e) + eta) + N^T ID(q, v, K_p0 (q_0 - q) - K_d0 v).

    robot: the controller's model; frame: a name of robot.frame_names (or its index); K_p, K_d: task gains
    (scalar, (k,) diagonal or (k, k); k = 6 rows [linear; angular], or 3 with position_only); q_posture: the
    posture q_0 (nq,) of the null-space task (default: the robot's neutral configuration), K_p0, K_d0 its gains
    (scalar, (nv,) or (nv, nv)); damping: added to J M^-1 J^T before it is inverted (0: a singular
    configuration is a ValueError).  Stateless: call ``torque`` once per control tick.
    """

    K_p, K_d, K_p0, K_d0 = _Gain(), _Gain(), _Gain(), _Gain()

    def __init__(self, robot, frame, K_p, K_d, q_posture=None, K_p0=10.0, K_d0=None, position_only=False,
                 damping=0.0):
        self.robot, self.frame, self.position_only = robot, frame, bool(position_only)
        robot.task_space_dynamics(robot.neutral(), np.zeros(robot.nv), frame, damping=1.0)   # an unknown frame, or
        # one fixed to the world: its ValueError now
        self._frame = frame if isinstance(frame, (int, np.integer)) else robot.frame_names.index(frame)
        mu = float(damping) if isinstance(damping, (int, float, np.floating, np.integer)) else np.nan
        if not (np.isfinite(mu) and mu >= 0):
            raise ValueError(f"damping must be a finite non-negative number, got {damping!r}")
        self.damping = mu
        self.K_p, self.K_d = K_p, K_d
        self._q_posture = robot.neutral() if q_posture is None else check_vector("q_posture", q_posture, robot.nq)
        self.K_p0 = K_p0
        self.K_d0 = 2.0 * np.sqrt(np.diag(self.K_p0).clip(0.0)) if K_d0 is None else K_d0
        self._buffers()

    @property
    def q_posture(self):
        """The posture q_0 (nq,) of the null-space task (read-only: build another controller to change it)."""
        view = self._q_posture.view()
        view.flags.writeable = False
        return view

    def _buffers(self):
        """The tick's arrays, and how it takes the posture error and the drives."""
        robot, k, nv = self.robot, self.K_p.shape[0], self.robot.nv
        self._J, self._bias, self._T, self._T_d = np.empty((6, nv)), np.empty(6), np.empty((4, 4)), np.zeros((4, 4))
        self._M, self._h, self._zero = np.empty((nv, nv)), np.empty(nv), np.zeros(nv)
        self._work_n, self._work_k = np.empty((nv + k + 3, nv)), np.empty((3 * k + 3, k))     # the step's scratch
        scalar = robot.nq == nv and not np.isin(robot.model.bodies["jtype"], (FREE, PLANAR)).any()
        self._dq = np.empty(nv)                                               # q_0 (-) q, by the space's
        self._space = ConfigurationSpace(robot.model)                         # difference (compiled)
        self._posture = self._q_posture if scalar else np.empty(0)           # or q_0 - q in the step
        drives = robot.model.drives
        self._numpy_friction = drives.model is not None
        self._drives = np.zeros((2, nv)) if self._numpy_friction else np.array([drives.damping, drives.friction])
        example = self._arguments(self._q_posture, self._h, self._T_d, self._bias[:k], self._bias[:k], self._h)
        self._step = compiled(_operational_step, signature(*example))

    def _arguments(self, q, v, T_d, V_d, A_d, tau):
        """_operational_step's arguments for one tick (its types fixed at construction: the compiled step is called
        without numba's dispatcher, ~2 us a tick for 21 arguments)."""
        return (self._J, self._bias, self._T, self._M, self._h, q, v, T_d, V_d, A_d, self._posture, self._dq,
                self.K_p, self.K_d, self.K_p0, self.K_d0, self.damping, self._drives, self._work_n, self._work_k, tau)

    def pose_error(self, q, T_d):
        """e = [p_d - p; log(R_d R^T)] (world axes) of the frame at q towards the pose T_d (4, 4); (3,) for
        position_only, when T_d may also be the position p_d (3,)."""
        T = self.robot.frame_placement(np.asarray(q, dtype=float), self.frame)
        p_d = self._desired(T_d)[:3, 3]
        if self.position_only:
            return p_d - T[:3, 3]
        return np.concatenate([p_d - T[:3, 3], so3_log(self._T_d[:3, :3] @ T[:3, :3].T)])

    def _desired(self, T_d):
        """T_d as a (4, 4) float array (a position p_d (3,) in the last column of self._T_d)."""
        T_d = np.asarray(T_d, dtype=float)
        if T_d.shape == (4, 4):
            np.copyto(self._T_d, T_d)
        elif T_d.shape == (3,) and self.position_only:
            self._T_d[:3, 3] = T_d
        else:
            raise ValueError(f"T_d must be a finite pose (4, 4){' or position (3,)' if self.position_only else ''}, "
                             f"got shape {T_d.shape}")
        if not np.isfinite(self._T_d).all():
            raise ValueError(f"T_d must be a finite pose (4, 4){' or position (3,)' if self.position_only else ''}")
        return self._T_d

    def torque(self, q, v, T_d, V_d, A_d, out=None):
        """Joint torques (nv,) at the state q (nq,), v (nv,) towards the frame's desired pose T_d (4, 4) (or
        position (3,) with position_only), velocity V_d and classical acceleration A_d ((6,) [linear; angular] or
        (3,), local_world_aligned: world axes at the frame's origin).  out: an (nv,) array to write into."""
        robot, f = self.robot, self._frame
        q, v, T_d, V_d, A_d = self._inputs(q, v, T_d, V_d, A_d)
        robot.frame_jacobian(q, f, "local_world_aligned", out=self._J)
        robot.frame_acceleration_bias(q, v, f, "local_world_aligned", out=self._bias)
        robot.frame_placement(q, f, out=self._T)
        robot.mass_matrix(q, out=self._M)
        robot.inverse_dynamics(q, v, self._zero, out=self._h)                # h = C v + g
        if not self._posture.size:
            self._space.difference(q, self._q_posture, out=self._dq)
        tau = np.empty(robot.nv) if out is None else self._checked_out(out)
        status = self._step(*self._arguments(q, v, T_d, V_d, A_d, tau))
        if status == SINGULAR:
            raise ValueError(f"J M^-1 J^T of frame {self.frame!r} is singular at this q (a kinematic singularity, or a "
                             f"frame that its joints cannot move in all {self.K_p.shape[0]} directions); pass "
                             f"damping > 0")
        if status == OVERFLOW:
            raise ValueError("the torque overflows float64: the state or the targets are out of range")
        if status != OK:
            raise ValueError(f"{_CULPRITS[status]} is not finite")
        if self._numpy_friction:
            tau += robot.friction_torque(v)                                   # tau_f whole
        return tau

    def _checked_out(self, out):
        if not (type(out) is np.ndarray and out.dtype == np.float64 and out.shape == self._h.shape
                and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {self._h.shape}")
        return out

    def _inputs(self, q, v, T_d, V_d, A_d):
        """The tick's arguments as C-contiguous float arrays of their shapes (finiteness: the step's);
        a ValueError naming the first that is not."""
        k = self.K_p.shape[0]
        args = q, v, T_d, V_d, A_d
        if all([type(x) is _ND and x.dtype is _F64 and x.flags.c_contiguous for x in args]) and (
                q.shape == self._q_posture.shape and v.shape == self._h.shape and T_d.shape == (4, 4)
                and V_d.shape == (k,) and A_d.shape == (k,)):
            return args
        q, v = np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(v, dtype=float)
        V_d, A_d = np.ascontiguousarray(V_d, dtype=float), np.ascontiguousarray(A_d, dtype=float)
        T_d = np.ascontiguousarray(T_d, dtype=float)
        if q.shape != self._q_posture.shape or v.shape != self._h.shape or V_d.shape != (k,) or A_d.shape != (k,):
            for name, x, n in (("q", q, self.robot.nq), ("v", v, self.robot.nv), ("V_d", V_d, k), ("A_d", A_d, k)):
                if x.shape != (n,):
                    raise ValueError(f"{name} has shape {x.shape}, expected ({n},)")
        return q, v, (T_d if T_d.shape == (4, 4) else self._desired(T_d)), V_d, A_d


@njit(cache=True)
def _finite_status(q, v, T_d, V_d, A_d):
    """The first of the tick's inputs with a NaN or inf, as a status (OK: none)."""
    for status, x in ((BAD_Q, q), (BAD_V, v), (BAD_V_D, V_d), (BAD_A_D, A_d)):
        for i in range(x.shape[0]):
            if not np.isfinite(x[i]):
                return status
    for i in range(4):
        for j in range(4):
            if not np.isfinite(T_d[i, j]):
                return BAD_T_D
    return OK


@njit(cache=True)
def _commanded_acceleration(J, T, v, T_d, V_d, A_d, K_p, K_d, R, e, r, x):
    """x = xddot_cmd = A_d + K_d (V_d - J v) + K_p e, e = [p_d - p; log(R_d R^T)]; R (3, 3), e, r (k,): scratch."""
    k = K_p.shape[0]
    for i in range(3):
        e[i] = T_d[i, 3] - T[i, 3]
    if k == 6:
        for i in range(3):
            for j in range(3):
                R[i, j] = T_d[i, 0] * T[j, 0] + T_d[i, 1] * T[j, 1] + T_d[i, 2] * T[j, 2]     # R_d R^T
        so3_log(R, e[3:])
    for i in range(k):
        s = 0.0
        for j in range(v.shape[0]):
            s += J[i, j] * v[j]
        r[i] = V_d[i] - s                                   # V_d - V, V = J v
    for i in range(k):
        s = A_d[i]
        for j in range(k):
            s += K_d[i, j] * r[j]
        for j in range(k):
            s += K_p[i, j] * e[j]
        x[i] = s


@njit(cache=True)
def _mass_solves(M, h, J, L, MJt, a0):
    """M = L L^T; MJt = (M^-1 J^T)^T (k, nv) for J's first k rows and a0 = -M^-1 h, the unactuated acceleration.
    False when M is not positive definite."""
    if not cholesky_into(M, L):
        return False
    for i in range(MJt.shape[0]):
        MJt[i] = J[i]
        solve_lower(L, MJt[i], False)
        solve_lower(L, MJt[i], True)
    for j in range(h.shape[0]):
        a0[j] = -h[j]
    solve_lower(L, a0, False)
    solve_lower(L, a0, True)
    return True


@njit(cache=True)
def _task_inertia(J, MJt, mu, L, L_inv, Lam):
    """Lam = (J M^-1 J^T + mu E)^-1 (k, k) by its Cholesky factor L (L_inv its inverse), MJt = (M^-1 J^T)^T;
    False when J M^-1 J^T + mu E is not positive definite to 1e-12 of its largest diagonal entry."""
    k = L.shape[0]
    scale = 0.0
    for i in range(k):
        for j in range(k):
            s = mu if i == j else 0.0
            for m in range(MJt.shape[1]):
                s += J[i, m] * MJt[j, m]
            Lam[i, j] = s
        scale = max(scale, abs(Lam[i, i]))
    if not cholesky_into(Lam, L, 0.0, 1e-12 * scale):
        return False
    for j in range(k):                                      # L_inv, lower triangular
        for i in range(k):
            if i < j:
                L_inv[i, j] = 0.0
                continue
            s = 1.0 if i == j else 0.0
            for m in range(j, i):
                s -= L[i, m] * L_inv[m, j]
            L_inv[i, j] = s / L[i, i]
    for i in range(k):                                      # Lam = L^-T L^-1
        for j in range(k):
            s = 0.0
            for m in range(max(i, j), k):
                s += L_inv[m, i] * L_inv[m, j]
            Lam[i, j] = s
    return True


@njit(cache=True)
def _posture_torque(M, h, q, v, q_posture, dq, K_p0, K_d0, a, tau0):
    """tau0 = M a + h, a = K_p0 (q_0 (-) q) - K_d0 v: q_0 - q when q_posture (nq = nv) is given, else dq."""
    n = v.shape[0]
    for j in range(n):
        if q_posture.shape[0]:
            dq[j] = q_posture[j] - q[j]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += K_p0[i, j] * dq[j] - K_d0[i, j] * v[j]
        a[i] = s
    for i in range(n):
        s = h[i]
        for j in range(n):
            s += M[i, j] * a[j]
        tau0[i] = s


@njit(cache=True)
def _operational_step(J, bias, T, M, h, q, v, T_d, V_d, A_d, q_posture, dq, K_p, K_d, K_p0, K_d0, mu, drives,
                      work_n, work_k, tau):
    """tau = tau_0 + J^T Lambda (xddot_cmd - (J a_0 + Jdot v) - (M^-1 J^T)^T tau_0) + tau_f(v) (the module
    docstring; tau_f = damping v + coulomb tanh(v / COULOMB_VELOCITY), drives = [damping; coulomb] (2, nv)).
    J (6, nv) (its first k rows used), bias = Jdot v (6,), T the frame's pose, M (nv, nv), h = C v + g;
    work_n (nv + k + 3, nv), work_k (3 k + 3, k).  Returns OK, SINGULAR, OVERFLOW or the first non-finite
    input's status."""
    status = _finite_status(q, v, T_d, V_d, A_d)
    if status != OK:
        return status
    k, nv = K_p.shape[0], v.shape[0]
    L_M, MJt = work_n[:nv], work_n[nv:nv + k]
    a0, a, tau0 = work_n[nv + k], work_n[nv + k + 1], work_n[nv + k + 2]
    L, L_inv, Lam = work_k[:k], work_k[k:2 * k], work_k[2 * k:3 * k]
    e, r, x = work_k[3 * k], work_k[3 * k + 1], work_k[3 * k + 2]
    _commanded_acceleration(J, T, v, T_d, V_d, A_d, K_p, K_d, L_inv, e, r, x)
    if not (_mass_solves(M, h, J, L_M, MJt, a0) and _task_inertia(J, MJt, mu, L, L_inv, Lam)):
        return SINGULAR
    _posture_torque(M, h, q, v, q_posture, dq, K_p0, K_d0, a, tau0)
    for i in range(k):                                      # r = xddot_cmd - (J a0 + Jdot v) - MJt tau0
        s = bias[i]
        for j in range(nv):
            s += J[i, j] * a0[j]
        t = 0.0
        for j in range(nv):
            t += MJt[i, j] * tau0[j]
        r[i] = x[i] - s - t
    for i in range(k):                                      # e = Lam r
        s = 0.0
        for j in range(k):
            s += Lam[i, j] * r[j]
        e[i] = s
    finite = True
    for j in range(nv):
        s = tau0[j] + drives[0, j] * v[j] + drives[1, j] * np.tanh(v[j] / COULOMB_VELOCITY)
        for i in range(k):
            s += J[i, j] * e[i]
        tau[j] = s
        finite &= np.isfinite(s)
    return OK if finite else OVERFLOW
