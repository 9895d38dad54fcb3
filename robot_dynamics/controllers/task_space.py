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
"""
import numpy as np

from ..configuration import _so3_log
from .computed_torque import check_vector, gain_matrix


class OperationalSpace:
    """tau = J^T (Lambda (A_d + K_d (V_d - V) + K_p e) + eta) + N^T ID(q, v, K_p0 (q_0 - q) - K_d0 v).

    robot: the controller's model; frame: a name of robot.frame_names (or its index); K_p, K_d: task gains
    (scalar, (k,) diagonal or (k, k); k = 6 rows [linear; angular], or 3 with position_only); q_posture: the
    posture q_0 (nq,) of the null-space task (default: the robot's neutral configuration), K_p0, K_d0 its gains
    (scalar, (nv,) or (nv, nv)); damping: added to J M^-1 J^T before it is inverted (0: a singular
    configuration is a ValueError).  Stateless: call ``torque`` once per control tick.
    """

    def __init__(self, robot, frame, K_p, K_d, q_posture=None, K_p0=10.0, K_d0=None, position_only=False,
                 damping=0.0):
        self.robot, self.frame, self.position_only, self.damping = robot, frame, bool(position_only), damping
        robot.frame_placement(robot.neutral(), frame)                        # an unknown frame: its ValueError now
        k = 3 if self.position_only else 6
        self.K_p = gain_matrix(K_p, k, "K_p")
        self.K_d = gain_matrix(K_d, k, "K_d")
        self.q_posture = robot.neutral() if q_posture is None else check_vector("q_posture", q_posture, robot.nq)
        self.K_p0 = gain_matrix(K_p0, robot.nv, "K_p0")
        self.K_d0 = gain_matrix(2.0 * np.sqrt(np.diag(self.K_p0).clip(0.0)) if K_d0 is None else K_d0, robot.nv,
                                "K_d0")

    def pose_error(self, q, T_d):
        """e = [p_d - p; log(R_d R^T)] (world axes) of the frame at q towards the pose T_d (4, 4); (3,) for
        position_only, when T_d may also be the position p_d (3,)."""
        T = self.robot.frame_placement(np.asarray(q, dtype=float), self.frame)
        T_d = np.asarray(T_d, dtype=float)
        p_d = T_d[:3, 3] if T_d.shape == (4, 4) else check_vector("T_d", T_d, 3) if self.position_only else None
        if p_d is None or not np.all(np.isfinite(T_d)):
            raise ValueError(f"T_d must be a finite pose (4, 4){' or position (3,)' if self.position_only else ''}, "
                             f"got shape {T_d.shape}")
        if self.position_only:
            return p_d - T[:3, 3]
        return np.concatenate([p_d - T[:3, 3], _so3_log(T_d[:3, :3] @ T[:3, :3].T)])

    def torque(self, q, v, T_d, V_d, A_d):
        """Joint torques (nv,) at the state q (nq,), v (nv,) towards the frame's desired pose T_d (4, 4) (or
        position (3,) with position_only), velocity V_d and classical acceleration A_d ((6,) [linear; angular] or
        (3,), local_world_aligned: world axes at the frame's origin)."""
        robot, k = self.robot, self.K_p.shape[0]
        q = check_vector("q", q, robot.nq)
        v = check_vector("v", v, robot.nv)
        task = robot.task_space_dynamics(q, v, self.frame, "local_world_aligned", position_only=self.position_only,
                                         damping=self.damping)
        x_ddot = (check_vector("A_d", A_d, k) + self.K_d @ (check_vector("V_d", V_d, k) - task.J @ v)
                  + self.K_p @ self.pose_error(q, T_d))
        a_posture = self.K_p0 @ robot.difference(q, self.q_posture) - self.K_d0 @ v
        tau = task.J.T @ (task.Lambda @ x_ddot + task.eta) + task.N.T @ robot.inverse_dynamics(q, v, a_posture)
        return tau if robot.model.drives.frictionless else tau + robot.friction_torque(v)  # tau_f whole
