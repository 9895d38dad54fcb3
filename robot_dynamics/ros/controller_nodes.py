"""computed_torque_node and adaptive_controller_node: joint states and a desired trajectory in, joint efforts out.

Run them as ``computed_torque_node --ros-args -p urdf_path:=arm7.urdf`` (pip install),
``ros2 run robot_dynamics adaptive_controller_node ...`` (full ROS install) or
``python -m robot_dynamics.ros.controller_nodes adaptive --ros-args ...``.

Both control a fixed-base robot whose every joint takes an effort command, as ros2_control's
forward_command_controller for efforts does (``joints`` and the ``commands`` topic of that controller).

Topics (``~`` is the node's name)::

    in   joint_states          sensor_msgs/JointState           positions and velocities by joint name
    in   ~/joint_trajectory    trajectory_msgs/JointTrajectory  desired motion, sampled at every joint state
    in   ~/joint_references    trajectory_msgs/JointTrajectoryPoint   one desired point (q_d, v_d, a_d), held
    out  effort_controller/commands   std_msgs/Float64MultiArray  efforts (n,) in the order of ``joints``
                                                                (parameter ``command_topic``; relative, as
                                                                JointGroupEffortController's ~/commands)
    out  /diagnostics          diagnostic_msgs/DiagnosticArray  rate, compute time, skipped messages by reason
    out  ~/parameter_estimate  std_msgs/Float64MultiArray       adaptive only: pi_hat (nbodies, 10), rows in the
                                                                order of the read-only parameter ``body_names``
    out  ~/tracking_error      sensor_msgs/JointState           adaptive only: position = e = q_d - q,
                                                                velocity = edot, stamped as the joint state
    out  ~/prediction_error    sensor_msgs/JointState           adaptive only: effort = the filtered torque the
                                                                estimate predicts minus the one applied (N m)
                                                                (these three at ``state_rate``, by the stamps)

Time. The controller's clock is the stamps of the joint states: a JointTrajectory stamped zero starts at the
first joint state after it arrives, one with a stamp starts at that stamp, and the adaptation advances by the
time between the stamps of two answered joint states (at most ``max_adaptation_step``). Each stamp is answered
once: a repeated stamp is ignored, a slightly older one skipped; a clock that goes back by more than a second
(a restarted simulator) restarts a trajectory stamped zero. Before its first point a trajectory holds that
point; after its last, the last one. The last trajectory or reference point received is the one in force.

Every joint state (with velocities) that finds a reference is answered with one effort command. Nothing is
published before the first reference. ``enabled:=false`` publishes zero effort once (ros2_control keeps
applying the last command) and stops answering; so does shutting down (Ctrl-C, SIGTERM). A message that
cannot be used is skipped with a warning throttled per kind of fault and counted in ``skipped``.

The robot description arrives as for dynamics_node: the ``robot_description`` parameter, else the file
``urdf_path``, else the ``robot_description`` topic (transient local). The first description that loads is kept:
a controller's model (and an adaptive estimate) does not change under it; restart the node to change robots.

Parameters (read-only unless marked *)::

    robot_description, urdf_path, xacro_args, gravity   the model, as for dynamics_node
    joints              command order; every joint of the model once (default: the model's order)
    command_topic       default effort_controller/commands, relative: it follows the namespace, as
                        ros2_control's JointGroupEffortController named effort_controller does
    enabled *           false: zero effort once, then silence
    computed_torque_node:      kp * [1/s^2] (100), kd * [1/s] (20): one number or one per joint
    adaptive_controller_node:  bandwidth * [Hz] (2); lambda * [1/s], kd * [1/s] (0: 2 pi bandwidth): one number
                               or one per joint; adaptation_gain * (1): one or one per body; payload [kg]
                               (-1: a quarter of the moving mass), payload_body; prediction [s] (-1: 30), memory [s]
                               (1), cutoff [Hz] (2), barrier (0.003), law (least_squares); initial_parameters
                               (10 per body); max_adaptation_step * [s] (0.01); state_rate [Hz] (100: the
                               three outputs of its state after the joint state that follows 1 / state_rate s
                               after the last ones; 0: after every answered joint state); body_names (output)
"""
import array
import sys
import time
from collections import Counter

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.duration import Duration
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics.controllers import ComputedTorque, PiecewiseTrajectory, Reference, RelativeGains, gain_matrix
from robot_dynamics.ros.conversions import (BadMessage, JointStateMerger, as_float_array, multiarray_layout,
                                            seconds, set_multiarray_data)
from robot_dynamics.ros.description import describe
from robot_dynamics.ros.diagnostics import Diagnostics
from robot_dynamics.ros.qos import OUTPUT_QOS, STATE_QOS
from robot_dynamics.ros.robot_node import COMMAND_TOPIC, RobotNode
from robot_dynamics.ros.runner import run

ACK_TIMEOUT = 1.0                 # s, how long the last (zero) command may take to be acknowledged on shutdown
CLOCK_RESET = 1.0                 # s, a joint-state clock that jumps back further has been reset
# The adaptive controller's diagnostics: reliable, the last 100 kept, so a recorder that falls up to 100 ticks
# behind loses nothing (OUTPUT_QOS keeps only the newest).
DIAGNOSTICS_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


# --- messages -> arrays ----------------------------------------------------------------------------------------

def trajectory_from_msg(msg, joint_names):
    """``(trajectory, start)`` of a JointTrajectory: a PiecewiseTrajectory over time_from_start.

    Parameters
    ----------
    msg : trajectory_msgs.msg.JointTrajectory
        Its ``joint_names`` must name every joint of ``joint_names`` once, in any order.
    joint_names : list of str
        The model's joints: the order of the trajectory's arrays.

    Returns
    -------
    trajectory : PiecewiseTrajectory
        Of degree 1, 3 or 5 as every point gives positions, velocities, accelerations; arrays (N, n).
    start : float or None
        ``header.stamp`` in seconds; None for a zero stamp (start at the next joint state).
    """
    if not msg.points:
        raise BadMessage("trajectory_empty", "joint trajectory has no points")
    names = list(msg.joint_names)
    if sorted(names) != sorted(joint_names):
        raise BadMessage("trajectory_joints", f"joint trajectory names {names}; the controlled joints are "
                                              f"{list(joint_names)}")
    columns = [names.index(name) for name in joint_names]
    positions = _point_arrays(msg.points, "positions", columns, required=True)
    velocities = _point_arrays(msg.points, "velocities", columns, required=False)
    accelerations = _point_arrays(msg.points, "accelerations", columns, required=False)
    if accelerations is not None and velocities is None:
        raise BadMessage("trajectory_lengths", "joint trajectory has accelerations without velocities")
    if not all(a is None or np.isfinite(a).all() for a in (positions, velocities, accelerations)):
        raise BadMessage("trajectory_non_finite", "joint trajectory has NaN or infinite values")
    times = np.array([seconds(p.time_from_start) for p in msg.points])
    if np.any(np.diff(times) <= 0):
        raise BadMessage("trajectory_times", f"joint trajectory time_from_start is not strictly increasing: "
                                             f"{times.tolist()}")
    start = seconds(msg.header.stamp) if (msg.header.stamp.sec or msg.header.stamp.nanosec) else None
    return PiecewiseTrajectory(times, positions, velocities, accelerations), start


def _point_arrays(points, field, columns, required):
    """``field`` of every point, its columns reordered by ``columns``: (N, n); None when optional and absent.

    Raises BadMessage unless every point gives all n values (or, for an optional field, every point none).
    """
    values = [as_float_array(getattr(p, field)) for p in points]
    n = len(columns)
    if not required and all(len(v) == 0 for v in values):
        return None
    if any(len(v) != n for v in values):
        lengths = sorted({len(v) for v in values})
        raise BadMessage("trajectory_lengths", f"joint trajectory {field} have lengths {lengths}; every point needs "
                                               f"{n}" + ("" if required else " (or every point none)"))
    return np.array(values)[:, columns]


def reference_from_msg(msg, joints_to_model):
    """A Reference ``(q_d, v_d, a_d)``, each (n,) in model order, from a JointTrajectoryPoint in ``joints`` order.

    Positions are required; velocities and accelerations may be empty (zero). ``joints_to_model[i]`` is the model
    index of the i-th controlled joint.
    """
    n = len(joints_to_model)
    arrays = [as_float_array(msg.positions), as_float_array(msg.velocities), as_float_array(msg.accelerations)]
    if len(arrays[0]) != n or any(len(a) not in (0, n) for a in arrays[1:]):
        raise BadMessage("reference_lengths", f"reference has {[len(a) for a in arrays]} positions, velocities and "
                                              f"accelerations; the controller has {n} joints (velocities and "
                                              f"accelerations may be empty)")
    if not all(np.isfinite(a).all() for a in arrays):
        raise BadMessage("reference_non_finite", "reference has NaN or infinite values")
    model = [np.zeros(n) for _ in arrays]
    for m, a in zip(model, arrays):
        if len(a):
            m[joints_to_model] = a
    return Reference(*model)


# --- the controllers -------------------------------------------------------------------------------------------

class ControllerNode(RobotNode):
    """What both controllers share: the reference, the tick on every joint state, the effort command, ``enabled``.

    Subclasses declare their gains in ``_declare_gains``, prepare their controller for the robot in
    ``_prepare(robot)`` (ValueError refuses the robot), apply gain changes in ``_set_gains`` and compute tau (nv,)
    in model order in ``_torque(q, v, reference, dt)``.

    Attributes
    ----------
    answered : int
        Joint states answered with an effort command.
    """

    GAINS = ()

    def __init__(self, node_name, **kwargs):
        super().__init__(node_name, **kwargs)
        command_topic = self.declare_parameter("command_topic", COMMAND_TOPIC, describe(
            "Topic of the effort commands (std_msgs/Float64MultiArray in the order of joints).", read_only=True)).value
        self._enabled = self.declare_parameter("enabled", True, describe(
            "false: publish zero effort once, then no command until it is true again.")).value
        self._declare_gains()
        self.answered = 0
        self._merger = None
        self._trajectory, self._point = None, None
        self._stamp, self._start = None, None     # the trajectory's header stamp (None: zero), its start time, s
        self._last_t = None                       # stamp of the last answered joint state, s
        self._commanding = False                  # a non-zero command is in force
        self._command = Float64MultiArray()
        self._command_pub = self.create_publisher(Float64MultiArray, command_topic, OUTPUT_QOS)
        self.diagnostics = Diagnostics(self, "effort commands for the joint states")
        self.add_on_set_parameters_callback(self._check_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        self._load_description()

    def _install(self, robot):
        """Prepare for ``robot``, then subscribe to the inputs: a sender that sees ``~/joint_trajectory`` matched
        knows the controller is ready to take it."""
        self._merger = JointStateMerger(robot.joint_names)
        self._command.layout = multiarray_layout((len(self.joints),))
        self._effort = array.array("d", bytes(8 * len(self.joints)))      # the command's data, joints order,
        self._effort_view = np.frombuffer(self._effort, dtype=np.float64)  # written through this view
        n = robot.nv
        self._reference = Reference(np.empty(n), np.empty(n), np.empty(n))   # a trajectory's point, each state
        q, z = robot.neutral(), np.zeros(robot.nv)          # load (or compile) the kernels before the first state
        robot.inverse_dynamics(q, z, z), robot.regressor(q, z, z, z), robot.mass_matrix(q)
        self._prepare(robot)
        self.create_subscription(JointState, "joint_states", self._on_joint_state, STATE_QOS,
                                 qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self._on_trajectory, OUTPUT_QOS)
        self.create_subscription(JointTrajectoryPoint, "~/joint_references", self._on_reference, STATE_QOS)

    # --- parameters ------------------------------------------------------------------------------------------

    def _check_parameters(self, params):
        for p in params:
            if p.name == "enabled" and p.type_ != Parameter.Type.BOOL:
                return SetParametersResult(successful=False, reason="enabled must be a bool")
            if p.name in self.GAINS:
                try:
                    self._check_gain(p.name, p.value)
                except (ValueError, TypeError) as err:
                    return SetParametersResult(successful=False, reason=str(err))
        return SetParametersResult(successful=True)

    def _check_gain(self, name, value):
        if self.robot is not None:
            self._per_joint(name, value)
        elif not np.all(np.asarray(value, dtype=float) > 0):
            raise ValueError(f"parameter {name} must be positive, got {value}")

    def _apply_parameters(self, params):
        names = {p.name for p in params}
        if "enabled" in names:
            self._enabled = self.get_parameter("enabled").value
            if self._enabled:
                self._last_t = None
            else:
                self.publish_zero()
        if names & set(self.GAINS) and self.robot is not None:
            self._set_gains()

    def _per_joint(self, name, value):
        """A gain parameter (one number, or one per joint in ``joints`` order) as (n,) in model order.

        Raises ValueError unless every value is finite and positive.
        """
        values = np.atleast_1d(np.asarray(value, dtype=float))
        n = len(self.joints)
        if values.ndim != 1 or len(values) not in (1, n) or not np.all(np.isfinite(values) & (values > 0)):
            raise ValueError(f"parameter {name} must be one positive number or {n} (one per joint), got {value}")
        model = np.empty(n)
        model[self.joint_index] = np.broadcast_to(values, (n,))
        return model

    # --- inputs ----------------------------------------------------------------------------------------------

    def _on_trajectory(self, msg):
        if self.robot is None:
            return
        try:
            self._trajectory, self._stamp = trajectory_from_msg(msg, self.robot.joint_names)
        except BadMessage as err:
            self._skip(err)
            return
        self._start, self._point = self._stamp, None

    def _on_reference(self, msg):
        if self.robot is None:
            return
        try:
            self._point = reference_from_msg(msg, self.joint_index)
        except BadMessage as err:
            self._skip(err)
            return
        self._trajectory = None

    def _reference_at(self, t):
        """The reference in force at joint-state time t; None before the first one."""
        if self._point is not None:
            return self._point
        if self._trajectory is None:
            return None
        if self._start is None:
            self._start = t
        return self._trajectory.evaluate(t - self._start, self._reference)

    def _on_joint_state(self, msg):
        if self.robot is None:
            return
        self.diagnostics.received()
        start = time.perf_counter()
        try:
            self._merger.merge(msg)
            if not self._merger.velocities_known:
                raise BadMessage("joint_state_velocities", "joint_states without velocities: cannot control")
        except BadMessage as err:
            self._skip(err)
            return
        stamp = msg.header.stamp
        t = seconds(stamp)
        if self._last_t is not None and t < self._last_t - CLOCK_RESET:
            self.get_logger().warning(f"the joint states' clock went back from {self._last_t:.3f} s to {t:.3f} s: "
                                      "taken as a reset; a trajectory stamped zero starts again")
            self._last_t, self._start = None, self._stamp
        if self._last_t is not None and t <= self._last_t:
            if t < self._last_t:
                self._skip(BadMessage("joint_state_stamp", f"joint state stamped {t:.9f} s, before the last one "
                                                           f"answered ({self._last_t:.9f} s)"))
            return
        if not self._enabled:
            return
        reference = self._reference_at(t)
        if reference is None:
            self.get_logger().info("waiting for a reference on ~/joint_trajectory or ~/joint_references",
                                   throttle_duration_sec=5.0)
            return
        dt = 0.0 if self._last_t is None else t - self._last_t
        q, v = self._merger.q, self._merger.v
        try:
            tau = self._torque(q, v, reference, dt)
        except (ValueError, np.linalg.LinAlgError) as err:
            self._skip(BadMessage("control", f"no effort for this state: {err}"))
            return
        self._last_t = t
        self._publish_command(tau)
        self._publish_diagnostics(stamp, t, q, v, reference)
        self.answered += 1
        self.diagnostics.answered(time.perf_counter() - start)

    # --- outputs ---------------------------------------------------------------------------------------------

    def _publish_command(self, tau):
        """Publish the efforts tau (nv,), model order, in the order of ``joints``."""
        np.take(tau, self.joint_index, out=self._effort_view)
        self._command.data = self._effort
        self._command_pub.publish(self._command)
        self._commanding = True

    def _publish_diagnostics(self, stamp, t, q, v, reference):
        """What a controller publishes besides the command, after each answered joint state stamped ``stamp``
        (``t`` s): nothing here."""

    def publish_zero(self):
        """Publish zero effort once (when the robot is known): what disabling and shutting down do."""
        if self.robot is not None:
            self._publish_command(np.zeros(len(self.joints)))
            self._commanding = False

    def destroy_node(self):
        """Let running callbacks return and run no more; publish zero effort if a command is in force (and wait for
        it to be acknowledged); then destroy."""
        self.quiesce()
        if self._commanding:
            self.publish_zero()
            self._command_pub.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT))
        super().destroy_node()


class ComputedTorqueNode(ControllerNode):
    """``computed_torque_node``: tau = M(q) (a_d + K_d edot + K_p e) + C(q, v) v + g(q) with the described model.

    Parameters ``kp`` [1/s^2] and ``kd`` [1/s]: one number for every joint or one per joint (``joints`` order);
    with the exact model each joint's error obeys edd + kd ed + kp e = 0.
    """

    GAINS = ("kp", "kd")

    def __init__(self, node_name="computed_torque_node", **kwargs):
        self.controller = None
        super().__init__(node_name, **kwargs)

    def _declare_gains(self):
        self.declare_parameter("kp", 100.0, describe(
            "Stiffness [1/s^2]: one number, or one per joint in the order of joints.", dynamic_typing=True))
        self.declare_parameter("kd", 20.0, describe(
            "Damping [1/s]: one number, or one per joint in the order of joints.", dynamic_typing=True))

    def _prepare(self, robot):
        self.controller = ComputedTorque(robot, 0.0, 0.0)
        self._set_gains()

    def _set_gains(self):
        c, nv = self.controller, self.controller.robot.nv
        c.K_p = gain_matrix(self._per_joint("kp", self.get_parameter("kp").value), nv)
        c.K_d = gain_matrix(self._per_joint("kd", self.get_parameter("kd").value), nv)

    def _torque(self, q, v, reference, dt):
        return self.controller.torque(q, v, *reference)


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
        self.declare_parameter("max_adaptation_step", 0.01, describe(
            "Longest time [s] one adaptation step integrates (a gap between joint states counts as this)."))
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
        self._estimate = Float64MultiArray(layout=multiarray_layout((robot.nbodies, 10)))
        self._error = JointState(name=list(self.joints))
        self._prediction = JointState(name=list(self.joints))

    def _settings(self, robot):
        """RelativeGains from the parameters: lambda and kd (n,) in model order or None, gamma (nbodies,)."""
        p = {name: self.get_parameter(name).value for name in self.GAINS + self.SETTINGS}
        return RelativeGains(Lambda=self._rate("lambda", p["lambda"]), kd=self._rate("kd", p["kd"]),
                             gamma=self._per_body(p["adaptation_gain"], robot.nbodies), bandwidth=p["bandwidth"],
                             payload=None if p["payload"] < 0 else p["payload"],
                             payload_body=p["payload_body"] or None,
                             prediction=None if p["prediction"] < 0 else p["prediction"], memory=p["memory"],
                             cutoff=p["cutoff"], barrier=p["barrier"], law=p["law"])

    def _set_gains(self):
        if self.controller is not None:
            settings = self._settings(self.robot)
            self.controller.set_gains(*settings.rates(), settings.gamma)

    def _torque(self, q, v, reference, dt):
        if self.controller is None:
            self.controller = self._settings(self.robot).slotine_li(self.robot, self._pi_hat0)
        dt = min(dt, self.get_parameter("max_adaptation_step").value)
        tau = self.controller.update(q, v, reference.q, reference.v, reference.a, dt)
        status = self.controller.status
        for kind in ("step_limited", "gains_capped"):
            if getattr(status, kind):
                self.flagged[kind] += 1
        return tau

    def _publish_diagnostics(self, stamp, t, q, v, reference):
        if self._state_reported is not None and 0.0 <= t - self._state_reported < self._state_period:
            return
        self._state_reported = t
        i = self.joint_index
        self._error.header.stamp = stamp
        self._error.position = (reference.q - q)[i].tolist()
        self._error.velocity = (reference.v - v)[i].tolist()
        self._error_pub.publish(self._error)
        set_multiarray_data(self._estimate, self.controller.pi_hat)
        self._estimate_pub.publish(self._estimate)
        self._prediction.header.stamp = stamp
        self._prediction.effort = self.controller.prediction_error[i].tolist()
        self._prediction_pub.publish(self._prediction)


def computed_torque_main(args=None):
    """Console entry point ``computed_torque_node --ros-args -p name:=value ...``."""
    return run(ComputedTorqueNode, args)


def adaptive_controller_main(args=None):
    """Console entry point ``adaptive_controller_node --ros-args -p name:=value ...``."""
    return run(AdaptiveControllerNode, args)


if __name__ == "__main__":
    MAINS = {"computed_torque": computed_torque_main, "adaptive": adaptive_controller_main}
    if len(sys.argv) < 2 or sys.argv[1] not in MAINS:
        sys.exit(f"usage: python -m robot_dynamics.ros.controller_nodes {{{'|'.join(MAINS)}}} --ros-args ...")
    sys.exit(MAINS[sys.argv[1]]([sys.argv[0]] + sys.argv[2:]))
