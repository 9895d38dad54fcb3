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

A tick is one compiled call (_osc_tick.osc_tick): five of the robot's kernels called from it into preallocated
buffers -- the frame's J, Jdot v and pose, M and h = C v + g = ID(q, v, 0) -- then the rest (_operational_step):
M = L L^T (Cholesky), M^-1 J^T and the unactuated acceleration a_0 = -M^-1 h by its triangular solves, tau_0 =
M a_0' + h for the posture's acceleration a_0', and N^T tau_0 = tau_0 - J^T Lambda (M^-1 J^T)^T tau_0:

    tau = tau_0 + J^T Lambda (xddot_cmd - (J a_0 + Jdot v) - (M^-1 J^T)^T tau_0) + tau_f(v)
"""
import numpy as np

from ..configuration import ConfigurationSpace, so3_log
from . import _ct_tick, _osc_tick as kernel
from ._ct_tick import SHAPE
from ._osc_tick import BAD_A_D, BAD_Q, BAD_T_D, BAD_V, BAD_V_D, KERNEL, OVERFLOW, QUATERNION, SINGULAR
from .computed_torque import check_vector, gain_matrix

_CULPRITS = {BAD_Q: "q", BAD_V: "v", BAD_T_D: "T_d", BAD_V_D: "V_d", BAD_A_D: "A_d"}


class _Gain:
    """A gain matrix attribute, checked by gain_matrix whenever it is set and written into its place in the tick's
    data (which the compiled tick reads unchecked): (k, k) for the task's K_p and K_d, (nv, nv) for the posture's
    K_p0 and K_d0."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else obj.__dict__[self.name]

    def __set__(self, obj, value):
        n = obj.robot.nv if self.name.endswith("0") else 3 if obj.position_only else 6
        obj.__dict__[self.name][:] = gain_matrix(value, n, self.name)


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
        q_posture = robot.neutral() if q_posture is None else check_vector("q_posture", q_posture, robot.nq)
        self._buffers(q_posture)
        self.damping = damping
        self.K_p, self.K_d = K_p, K_d
        self.K_p0 = K_p0
        self.K_d0 = 2.0 * np.sqrt(np.diag(self.K_p0).clip(0.0)) if K_d0 is None else K_d0

    @property
    def damping(self):
        """mu, added to J M^-1 J^T before it is inverted: a finite number >= 0."""
        return float(self._mu[0])

    @damping.setter
    def damping(self, damping):
        mu = float(damping) if isinstance(damping, (int, float, np.floating, np.integer)) else np.nan
        if not (np.isfinite(mu) and mu >= 0):
            raise ValueError(f"damping must be a finite non-negative number, got {damping!r}")
        self._mu[0] = mu

    @property
    def q_posture(self):
        """The posture q_0 (nq,) of the null-space task (read-only: build another controller to change it)."""
        view = self._q_posture.view()
        view.flags.writeable = False
        return view

    def _buffers(self, q_posture):
        """The tick's data (_osc_tick.osc_views: its buffers, posture, gains, drives and damping) and the plan of the
        robot's five calls into it; how the tick takes the posture error (q_0 - q, or the space's difference)."""
        robot, nv, nq = self.robot, self.robot.nv, self.robot.nq
        k = 3 if self.position_only else 6
        self._data = np.zeros(kernel.osc_size(nv, nq, k))
        (self._J, self._bias, self._T, self._M, self._h, zero, q, v, self._dq, self._q_posture, _, _, K_p, K_d, K_p0,
         K_d0, drives, self._mu) = kernel.osc_views.py_func(self._data, nv, nq, k)
        self.__dict__.update(K_p=K_p, K_d=K_d, K_p0=K_p0, K_d0=K_d0)
        self._q_posture[:] = q_posture
        self._T_d = np.zeros((4, 4))
        self._numpy_friction = robot.model.drives.model is not None
        if not self._numpy_friction:
            drives[:] = robot.model.drives.damping, robot.model.drives.friction
        self._space = ConfigurationSpace(robot.model)
        self._mode = _ct_tick.difference_mode(self._space)                 # how the tick takes q_0 (-) q
        self._direct = self._mode != _ct_tick.PYTHON                        # the tick alone, when the inputs are
        model, f = robot.model, self._frame
        frames = (_ct_tick.frame_input(model, f, "local_world_aligned"), _ct_tick.frame_input(model, f, "local"))
        calls = [("_frame_jacobian", (q, frames[0]), (self._J,)), ("_frame_acceleration_bias", (q, v, frames[0]),
                 (self._bias,)), ("_frame_placement", (q, frames[1]), (self._T,)), ("mass_matrix", (q,), (self._M,)),
                 ("inverse_dynamics", (q, v, zero), (self._h,))]
        assert tuple(name for name, _, _ in calls) == kernel.CALLS
        self._plan, arrays = _ct_tick.plan(model, calls, (nv, nq, k, self._mode), self._space)
        self._arrays = arrays + frames
        self._fixed = arrays[:2] + (self._plan, self._data)               # the body records and workspace first
        example = (self._plan, self._data, q, v, self._T_d, self._h[:k], self._h[:k], v)
        self._tick = _ct_tick.tick_entry(kernel.osc_tick, kernel.osc_entry, example, 5)

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
        tau = np.empty(self._h.shape[0]) if out is None else out
        try:                                        # float64 arrays of the tick's shapes, straight in (else SHAPE)
            status = self._tick(*self._fixed, q, v, T_d, V_d, A_d, tau) if self._direct and (
                out is None or out.flags.writeable) else SHAPE
        except (TypeError, AttributeError):
            status = SHAPE
        if status == SHAPE:                         # converted and checked, each culprit named
            q, v, T_d, V_d, A_d = self._inputs(q, v, T_d, V_d, A_d)
            if self._mode == _ct_tick.PYTHON and np.isfinite(q).all():     # (else the tick names q)
                self._space.difference(q, self._q_posture, out=self._dq)
            tau = np.empty(self.robot.nv) if out is None else self._checked_out(out)
            status = self._tick(*self._fixed, q, v, T_d, V_d, A_d, tau)
        if status:
            self._refuse(status, q, v)
        if self._numpy_friction:
            tau += self.robot.friction_torque(v)                              # tau_f whole
        return tau

    def _refuse(self, status, q, v):
        """The ValueError of the tick's status (not OK)."""
        if status == SINGULAR:
            raise ValueError(f"J M^-1 J^T of frame {self.frame!r} is singular at this q (a kinematic singularity, or a "
                             f"frame that its joints cannot move in all {self.K_p.shape[0]} directions); pass "
                             f"damping > 0")
        if status == OVERFLOW:
            raise ValueError("the torque overflows float64: the state or the targets are out of range")
        if status in _CULPRITS:
            raise ValueError(f"{_CULPRITS[status]} is not finite")
        if status == QUATERNION:
            self._space.difference(q, self._q_posture)
        if status == _ct_tick.OVERLAP:
            raise ValueError("out must not overlap q, v, T_d, V_d or A_d")
        robot, f = self.robot, self._frame          # KERNEL + c: a call refused q or v; the robot's own message
        robot.frame_jacobian(q, f, "local_world_aligned")
        robot.frame_acceleration_bias(q, v, f, "local_world_aligned")
        robot.frame_placement(q, f)
        robot.mass_matrix(q)
        robot.inverse_dynamics(q, v, np.zeros(robot.nv))
        raise ValueError(f"robot.{kernel.CALLS[status - KERNEL].lstrip('_')} refused this state")

    def _checked_out(self, out):
        if not (type(out) is np.ndarray and out.dtype == np.float64 and out.shape == self._h.shape
                and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {self._h.shape}")
        return out

    def _inputs(self, q, v, T_d, V_d, A_d):
        """The tick's arguments as C-contiguous float arrays of their shapes (finiteness: the tick's); a ValueError
        naming the first that is not."""
        k = self.K_p.shape[0]
        q, v = np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(v, dtype=float)
        V_d, A_d = np.ascontiguousarray(V_d, dtype=float), np.ascontiguousarray(A_d, dtype=float)
        T_d = np.ascontiguousarray(T_d, dtype=float)
        if q.shape != self._q_posture.shape or v.shape != self._h.shape or V_d.shape != (k,) or A_d.shape != (k,):
            for name, x, n in (("q", q, self.robot.nq), ("v", v, self.robot.nv), ("V_d", V_d, k), ("A_d", A_d, k)):
                if x.shape != (n,):
                    raise ValueError(f"{name} has shape {x.shape}, expected ({n},)")
        return q, v, (T_d if T_d.shape == (4, 4) else self._desired(T_d)), V_d, A_d
