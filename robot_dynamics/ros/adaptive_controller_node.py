"""adaptive_controller_node: the library's default adaptive controller (composite Slotine-Li) on every joint state,
its estimate, tracking error and torque-prediction error published at ``state_rate``.

Run it as ``adaptive_controller_node --ros-args -p urdf_path:=arm7.urdf`` (pip install), ``ros2 run
robot_dynamics adaptive_controller_node ...`` or ``python -m robot_dynamics.ros.adaptive_controller_node
--ros-args ...``. Its topics, clock and shared parameters: robot_dynamics.ros.controller_node.
"""
import sys
from collections import Counter

import numpy as np
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics.controllers import RelativeGains
from robot_dynamics.ros.controller_node import ControllerNode
from robot_dynamics.ros.conversions import float_field, multiarray_layout
from robot_dynamics.ros.description import describe
from robot_dynamics.ros.runner import run

# The adaptive controller's diagnostics: reliable, the last 100 kept, so a recorder that falls up to 100 ticks
# behind loses nothing (OUTPUT_QOS keeps only the newest).
DIAGNOSTICS_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


class AdaptiveControllerNode(ControllerNode):
    """``adaptive_controller_node``: the library's default adaptive controller (composite Slotine-Li:
    robot_dynamics.controllers.RelativeGains(...).slotine_li, composite.CompositeSlotineLi).

    One ``update`` per answered joint state: the filters, the information and the estimate advance by the time
    since the last answered stamp (at most ``max_adaptation_step``), then the torque uses the estimate.  The effort
    it commanded is taken as the effort applied until the next joint state (the torque-prediction error compares
    the two).  The controller is built at the first state answered; its settings:

    - ``bandwidth`` [Hz] (2): lambda = kd = 2 pi bandwidth unless they are given;
    - ``lambda`` [1/s]: Lambda of s = v - v_d - Lambda e; ``kd`` [1/s]: K_D(q) = D^1/2 M(q; pi_ref) D^1/2,
      D = diag(kd); one number or one per joint; 0: from ``bandwidth``;
    - ``adaptation_gain`` gamma (1): the prior information Omega_0 = G(pi_ref) / gamma; one, or one per body;
    - ``payload`` [kg]: the rated payload, the scale of the tool body's prior; -1: a quarter of the moving mass;
      ``payload_body``: the tool body ("": the last body moved by a revolute joint);
    - ``prediction`` [s] (-1: 30 for the least-squares law, 0 for the others; 0: the tracking error alone),
      ``memory`` [s] (1), ``cutoff`` [Hz] (2),
      ``barrier`` (0.003), ``law`` ("least_squares", "gradient" or "natural");
    - ``initial_parameters``: pi_hat0 (10 nbodies,), default the description's.

    lambda, kd and adaptation_gain may change while running (the information gathered so far is kept); the others
    are read when the controller is built.  Ticks where the controller bounded its step or capped its gains (see
    CompositeSlotineLi.status) are counted on /diagnostics (WARN), and ``~/prediction_error`` carries, per joint,
    the filtered torque the estimate predicts minus the one applied (effort, N m).
    """

    GAINS = ("lambda", "kd", "adaptation_gain", "bandwidth")
    SETTINGS = ("payload", "payload_body", "prediction", "memory", "cutoff", "barrier", "law")

    def __init__(self, node_name="adaptive_controller_node", **kwargs):
        self.controller = None                    # CompositeSlotineLi, from the first state answered
        self._pi_hat0 = None                      # the initial estimate (10 nb,)
        self.flagged = Counter()                  # ticks where the controller's safeguards acted, per kind
        super().__init__(node_name, **kwargs)
        self._estimate_pub = self.create_publisher(Float64MultiArray, "~/parameter_estimate", DIAGNOSTICS_QOS)
        self._error_pub = self.create_publisher(JointState, "~/tracking_error", DIAGNOSTICS_QOS)
        self._prediction_pub = self.create_publisher(JointState, "~/prediction_error", DIAGNOSTICS_QOS)

    def _declare_gains(self):
        defaults = RelativeGains()
        self.declare_parameter("bandwidth", defaults.bandwidth, describe(
            "Bandwidth [Hz]: lambda = kd = 2 pi bandwidth unless given."))
        self.declare_parameter("lambda", 0.0, describe(
            "Lambda [1/s] of s = v - v_d - Lambda e: one number, or one per joint; 0: 2 pi bandwidth.",
            dynamic_typing=True))
        self.declare_parameter("kd", 0.0, describe(
            "Damping rate [1/s]: K_D(q) = D^1/2 M(q; pi_ref) D^1/2; one number, or one per joint; 0: 2 pi bandwidth.",
            dynamic_typing=True))
        self.declare_parameter("adaptation_gain", defaults.gamma, describe(
            "gamma of the prior information Omega_0 = G(pi_ref) / gamma: one number, or one per body.",
            dynamic_typing=True))
        self.declare_parameter("payload", -1.0, describe(
            "Rated payload [kg] on payload_body, the scale of its prior; -1: a quarter of the moving mass.",
            read_only=True))
        self.declare_parameter("payload_body", "", describe(
            "The body carrying tools and payloads; empty: the last body moved by a revolute joint.", read_only=True))
        for name, value, text in (("prediction", -1.0,
                                   "Weight [s] of the torque-prediction error, R = prediction M(q; pi_ref)^-1; "
                                   "-1: 30 for the least-squares law, 0 for the others."),
                                  ("memory", defaults.memory, "Time [s] over which the information is forgotten."),
                                  ("cutoff", defaults.cutoff, "Cut-off [Hz] of the momentum filter."),
                                  ("barrier", defaults.barrier, "Weight of the log-det barrier, times gamma.")):
            self.declare_parameter(name, value, describe(text, read_only=True))
        self.declare_parameter("law", defaults.law, describe(
            "least_squares (default), gradient (fixed gain, projected) or natural (log-det metric).",
            read_only=True))
        self._initial_parameters = self.declare_parameter("initial_parameters", Parameter.Type.DOUBLE_ARRAY, describe(
            "Initial estimate pi_hat0, 10 per body in body_names order; default: the description's.",
            read_only=True)).value
        self._max_step = self.declare_parameter("max_adaptation_step", 0.01, describe(
            "Longest time [s] one adaptation step integrates (a gap between joint states counts as this).")).value
        rate = self.declare_parameter("state_rate", 100.0, describe(
            "Rate [Hz] of ~/tracking_error, ~/parameter_estimate and ~/prediction_error, by the joint states' "
            "stamps; 0: after every answered joint state.", read_only=True)).value
        if not (np.isfinite(rate) and rate >= 0):
            raise ValueError(f"parameter state_rate must be a rate in Hz >= 0, got {rate}")
        self._state_period = 1.0 / rate if rate > 0 else 0.0
        self._state_reported = None               # stamp [s] of the last joint state whose state was published

    def _check_gain(self, name, value):
        if self.robot is None:
            values, positive = np.asarray(value, dtype=float), name in ("bandwidth", "adaptation_gain")
            if not np.all(values > 0 if positive else values >= 0):
                raise ValueError(f"parameter {name} must be {'positive' if positive else 'at least 0'}, got {value}")
        elif name == "adaptation_gain":
            self._per_body(value, self.robot.nbodies)
        elif name == "bandwidth":
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"parameter bandwidth must be a positive frequency in Hz, got {value}")
        else:
            self._rate(name, value)

    def _rate(self, name, value):
        """lambda or kd: (n,) in model order, or None for 0 (from the bandwidth)."""
        values = np.atleast_1d(np.asarray(value, dtype=float))
        if values.shape == (1,) and values[0] == 0.0:
            return None
        return self._per_joint(name, value)

    @staticmethod
    def _per_body(value, nb):
        values = np.atleast_1d(np.asarray(value, dtype=float))
        if values.ndim != 1 or len(values) not in (1, nb) or not np.all(np.isfinite(values) & (values > 0)):
            raise ValueError(f"parameter adaptation_gain must be one positive number or {nb} (one per body), "
                             f"got {value}")
        return np.broadcast_to(values, (nb,))

    def _prepare(self, robot):
        """Check ``initial_parameters`` and the settings (by building the controller once and running it two ticks);
        the controller itself is built at the first state answered."""
        given = self._initial_parameters
        pi_hat0 = np.array(robot.parameters if given is None else given, dtype=float)
        if pi_hat0.shape != robot.parameters.shape or not np.all(np.isfinite(pi_hat0)):
            raise ValueError(f"parameter initial_parameters must be {robot.parameters.size} finite numbers "
                             f"(10 per body), got {pi_hat0.size}")
        self._pi_hat0 = pi_hat0
        trial = self._settings(robot).slotine_li(robot, pi_hat0)     # a bad setting refuses the robot now, by name
        q, zero = robot.neutral(), np.zeros(robot.nv)                # and two ticks load (or compile) every kernel
        trial.update(q, zero, q, zero, zero, 0.0)                    # its updates use, before the first state
        trial.update(q, zero, q, zero, zero, 1e-3)
        self.declare_parameter("body_names", list(robot.body_names), describe(
            "Read-only. The bodies in the order of the rows of ~/parameter_estimate.", read_only=True))
        n = len(self.joints)
        self._estimate = Float64MultiArray(layout=multiarray_layout((robot.nbodies, 10)))
        self._estimate_view = float_field(self._estimate, "data", robot.parameters.size)
        self._error = JointState(name=list(self.joints))             # e and edot, joints order
        self._e, self._edot = float_field(self._error, "position", n), float_field(self._error, "velocity", n)
        self._prediction = JointState(name=list(self.joints))
        self._prediction_view = float_field(self._prediction, "effort", n)
        self._difference = np.empty(n)                                  # q_d - q or v_d - v, model order

    def _settings(self, robot):
        """RelativeGains from the parameters: lambda and kd (n,) in model order or None, gamma (nbodies,)."""
        p = {name: self.get_parameter(name).value for name in self.GAINS + self.SETTINGS}
        return RelativeGains(Lambda=self._rate("lambda", p["lambda"]), kd=self._rate("kd", p["kd"]),
                             gamma=self._per_body(p["adaptation_gain"], robot.nbodies), bandwidth=p["bandwidth"],
                             payload=None if p["payload"] < 0 else p["payload"],
                             payload_body=p["payload_body"] or None,
                             prediction=None if p["prediction"] < 0 else p["prediction"], memory=p["memory"],
                             cutoff=p["cutoff"], barrier=p["barrier"], law=p["law"])

    def _apply_parameters(self, params):
        super()._apply_parameters(params)
        if any(p.name == "max_adaptation_step" for p in params):
            self._max_step = self.get_parameter("max_adaptation_step").value

    def _set_gains(self):
        if self.controller is not None:
            settings = self._settings(self.robot)
            self.controller.set_gains(*settings.rates(), settings.gamma)

    def _torque(self, q, v, reference, dt):
        if self.controller is None:
            self.controller = self._settings(self.robot).slotine_li(self.robot, self._pi_hat0)
        tau = self.controller.update(q, v, reference.q, reference.v, reference.a, min(dt, self._max_step))
        status = self.controller.status
        if status.step_limited:
            self.flagged["step_limited"] += 1
        if status.gains_capped:
            self.flagged["gains_capped"] += 1
        return tau

    def _publish_diagnostics(self, stamp, t, q, v, reference):
        if self._state_reported is not None and 0.0 <= t - self._state_reported < self._state_period:
            return
        self._state_reported = t
        i = self.joint_index
        difference = self._difference
        self._error.header.stamp = stamp
        np.subtract(reference.q, q, out=difference).take(i, out=self._e)
        np.subtract(reference.v, v, out=difference).take(i, out=self._edot)
        self._error_pub.publish(self._error)
        self._estimate_view[:] = self.controller.pi_hat
        self._estimate_pub.publish(self._estimate)
        self._prediction.header.stamp = stamp
        self.controller.prediction_error.take(i, out=self._prediction_view)
        self._prediction_pub.publish(self._prediction)


def main(args=None):
    """Console entry point ``adaptive_controller_node --ros-args -p name:=value ...``."""
    return run(AdaptiveControllerNode, args)


if __name__ == "__main__":
    sys.exit(main())
