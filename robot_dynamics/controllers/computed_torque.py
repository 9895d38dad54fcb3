"""Computed-torque (inverse-dynamics) control and the tracking error shared by the controllers.

    tau = M(q) (qddot_d + K_d edot + K_p e) + C(q, qdot) qdot + g(q),   e = q_d - q,   edot = qdot_d - qdot

With the exact model the closed loop is M (edd + K_d ed + K_p e) = 0, i.e. the linear error dynamics
edd + K_d ed + K_p e = 0 whatever the configuration. For a floating base the position error lives in the tangent space,
e = robot.difference(q, q_d), and the base rows of tau are the wrench a fully actuated base would need.

With drives (robot_dynamics/drives.py) M holds the armature, and the friction the model knows is compensated,
tau += tau_f(v) at the measured velocity (robot.friction_torque: smooth at a reversal, so the feedback does not
chatter): the closed loop is again the linear error dynamics, up to the model's friction error.
"""
import numpy as np

from ..dispatch import check_vector


def gain_matrix(gain, n, name="gain"):
    """A gain given as a scalar, a diagonal (n,) or a full (n, n) matrix  ->  (n, n) matrix."""
    gain = np.asarray(gain, dtype=float)
    if gain.ndim == 0:
        matrix = gain * np.eye(n)
    elif gain.shape == (n,):
        matrix = np.diag(gain)
    elif gain.shape == (n, n):
        matrix = gain.copy()
    else:
        raise ValueError(f"{name} must be a scalar, ({n},) or ({n}, {n}), got shape {gain.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} is not finite")
    return matrix


def tracking_error(robot, q, v, q_d, v_d):
    """e = q_d (-) q (robot.difference(q, q_d), the tangent vector at q towards q_d) and edot = v_d - v.

    q, q_d: (nq,); v, v_d: (nv,)  ->  e: (nv,), edot: (nv,)
    """
    q = check_vector("q", q, robot.nq)
    q_d = check_vector("q_d", q_d, robot.nq)
    v = check_vector("v", v, robot.nv)
    v_d = check_vector("v_d", v_d, robot.nv)
    return robot.difference(q, q_d), v_d - v


class ComputedTorque:
    """tau = M(q)(a_d + K_d edot + K_p e) + C(q, v) v + g(q), evaluated as inverse_dynamics(q, v, a_cmd).

    robot: the controller's model; K_p, K_d: scalar, (nv,) diagonal or (nv, nv); friction: add the model's
    friction torque tau_f(v) (module docstring; nothing for a robot without drives).
    Stateless: call ``torque`` once per control tick.
    """

    def __init__(self, robot, K_p, K_d, friction=True):
        self.robot = robot
        self.K_p = gain_matrix(K_p, robot.nv, "K_p")
        self.K_d = gain_matrix(K_d, robot.nv, "K_d")
        self.friction = bool(friction) and not robot.model.drives.frictionless   # the armature is in M already

    def torque(self, q, v, q_d, v_d, a_d):
        """Joint torques (nv,) for state q (nq,), v (nv,) and reference q_d (nq,), v_d (nv,), a_d (nv,)."""
        e, e_dot = tracking_error(self.robot, q, v, q_d, v_d)
        a_cmd = check_vector("a_d", a_d, self.robot.nv) + self.K_d @ e_dot + self.K_p @ e
        v = np.asarray(v, float)
        tau = self.robot.inverse_dynamics(np.asarray(q, float), v, a_cmd)
        return tau + self.robot.friction_torque(v) if self.friction else tau
