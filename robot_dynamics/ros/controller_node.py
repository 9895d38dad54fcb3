"""ControllerNode: what computed_torque_node and adaptive_controller_node share: joint states and a desired
trajectory in, joint efforts out.

Run them as ``computed_torque_node --ros-args -p urdf_path:=arm7.urdf`` (pip install),
``ros2 run robot_dynamics adaptive_controller_node ...`` (full ROS install) or
``python -m robot_dynamics.ros.adaptive_controller_node --ros-args ...`` (computed_torque_node likewise).

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
``urdf_path``, else the ``robot_description`` topic (transient local); URDF or MJCF (robot_dynamics.ros.description).
The first description that loads is kept: a controller's model (and an adaptive estimate) does not change under
it; restart the node to change robots.

Parameters (read-only unless marked *)::

    robot_description, urdf_path, xacro_args, gravity   the model, as for dynamics_node
    joints              command order; every joint of the model once (default: the model's order)
    command_topic       default effort_controller/commands, relative: it follows the namespace, as
                        ros2_control's JointGroupEffortController named effort_controller does
    enabled *           false: zero effort once, then silence
    max_joint_state_names   a joint state with more names is skipped (joint_state_too_large), as dynamics_node's
    computed_torque_node:      kp * [1/s^2] (100), kd * [1/s] (20): one number or one per joint
    adaptive_controller_node:  bandwidth * [Hz] (2); lambda * [1/s], kd * [1/s] (0: 2 pi bandwidth): one number
                               or one per joint; adaptation_gain * (1): one or one per body; payload [kg]
                               (-1: a quarter of the moving mass), payload_body; prediction [s] (-1: 30), memory [s]
                               (1), cutoff [Hz] (2), barrier (0.003), law (least_squares); initial_parameters
                               (10 per body); max_adaptation_step * [s] (0.01); state_rate [Hz] (100: the
                               three outputs of its state after the joint state that follows 1 / state_rate s
                               after the last ones; 0: after every answered joint state); body_names (output)
"""
import time

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.duration import Duration
from rclpy.parameter import Parameter
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics.controllers import Reference
from robot_dynamics.ros.conversions import (BadMessage, float_field, multiarray_layout, reference_from_point,
                                            seconds, trajectory_from_msg)
from robot_dynamics.ros.description import describe
from robot_dynamics.ros.diagnostics import Diagnostics
from robot_dynamics.ros.dynamics_parameters import MAX_JOINT_STATE_NAMES
from robot_dynamics.ros.inputs import StateInputs
from robot_dynamics.ros.qos import OUTPUT_QOS, STATE_QOS
from robot_dynamics.ros.robot_node import COMMAND_TOPIC, RobotNode

ACK_TIMEOUT = 1.0                 # s, how long the last (zero) command may take to be acknowledged on shutdown
CLOCK_RESET = 1.0                 # s, a joint-state clock that jumps back further has been reset


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
        max_names = self.declare_parameter("max_joint_state_names", MAX_JOINT_STATE_NAMES, describe(
            "A joint state with more names is skipped (joint_state_too_large).", read_only=True)).value
        self.inputs = StateInputs(max_names, frame_prefix="")
        self._declare_gains()
        self.answered = 0
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
        self.inputs.adopt(robot, None)
        self._command.layout = multiarray_layout((len(self.joints),))
        self._effort = float_field(self._command, "data", len(self.joints))   # the efforts, joints order
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
            given = reference_from_point(msg, len(self.joints), required=("positions",),
                                         optional=("velocities", "accelerations"))
        except BadMessage as err:
            self._skip(err)
            return
        n = len(self.joints)
        point = Reference(np.zeros(n), np.zeros(n), np.zeros(n))     # model order; velocities, accelerations: 0
        for model, values in zip(point, given):
            if values is not None:
                model[self.joint_index] = values
        self._point, self._trajectory = point, None

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
            self.inputs.joint_state(msg)
            if not self.inputs.velocities:
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
        q, v = self.inputs.merger.q, self.inputs.merger.v
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
        tau.take(self.joint_index, out=self._effort)
        self._command_pub.publish(self._command)
        self._commanding = True

    def _publish_diagnostics(self, stamp, t, q, v, reference):
        """What a controller publishes besides the command, after each answered joint state stamped ``stamp``
        (``t`` s): nothing here."""

    def publish_zero(self):
        """Publish zero effort once (when the robot is known): what disabling and shutting down do."""
        if self.robot is not None:
            self._effort.fill(0.0)
            self._command_pub.publish(self._command)
            self._commanding = False

    def destroy_node(self):
        """Let running callbacks return and run no more; publish zero effort if a command is in force (and wait for
        it to be acknowledged); then destroy."""
        self.quiesce()
        if self._commanding:
            self.publish_zero()
            self._command_pub.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT))
        super().destroy_node()
