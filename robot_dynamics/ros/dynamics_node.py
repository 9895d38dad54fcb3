"""dynamics_node: robot_description in; M, C, C v, g, the CoM, its Jacobian and the Slotine-Li regressor out.

Run it as ``ros2 run robot_dynamics dynamics_node --ros-args -p urdf_path:=arm7.urdf`` (full ROS install),
``dynamics_node --ros-args -p ...`` (pip install) or ``python -m robot_dynamics.ros.dynamics_node --ros-args ...``.

Robot description, the MoveIt pattern: the string parameter ``robot_description``; if empty, the file named by
``urdf_path`` (a path, ``package://pkg/path`` through the ament index, ``file:///path`` or a bundled robot's name
such as ``arm7``; a ``.xacro`` file is expanded with ``xacro_args``); if both are empty, the ``robot_description``
topic (std_msgs/String, RELIABLE + TRANSIENT_LOCAL, depth 1), as robot_state_publisher publishes it, to which the
node is subscribed while it waits. A description given by parameter that cannot be found, read or parsed, or that
has no degree of freedom, stops the node at start-up with that message (exit code 2); later, every new
description rebuilds the model, and one that fails is refused (parameter) or logged (topic) and the last good
model stays. ``mimic:=true`` makes mimic joints follow their masters (they are then no coordinate of the outputs
and may be absent from joint_states, as for robot_state_publisher).

Topics (``~`` is the node's name; every name is relative, so ``-r __ns:=/robot1`` moves them all, and each can
be remapped)::

    in   joint_states            sensor_msgs/JointState           positions (and velocities) by joint name
    in   odom                    nav_msgs/Odometry                floating base: pose in the world, twist in the
                                                                  base frame (child_frame_id = frame_prefix +
                                                                  the URDF root link)
    in   robot_description       std_msgs/String                  only while no description parameter is set
    in   ~/reference             trajectory_msgs/JointTrajectoryPoint   velocities = v_r, accelerations = a_r (nv,)
    out  ~/mass_matrix           std_msgs/Float64MultiArray       M (nv, nv)
    out  ~/coriolis_matrix       std_msgs/Float64MultiArray       C (nv, nv), Mdot = C + C^T
    out  ~/coriolis_vector       std_msgs/Float64MultiArray       C v (nv,)
    out  ~/gravity               std_msgs/Float64MultiArray       g (nv,)
    out  ~/com_jacobian          std_msgs/Float64MultiArray       J_com (3, nv)
    out  ~/regressor             std_msgs/Float64MultiArray       Y (nv, 10 nb): Y pi = M a_r + C v_r + g
                                                                  (advertised only with publish_regressor)
    out  ~/mass_matrix_derivative   std_msgs/Float64MultiArray    dM/dt along q' = v (nv, nv)  (advertised only
    out  ~/gravity_derivative       std_msgs/Float64MultiArray    dg/dt along q' = v (nv,)      with
                                                                                                publish_derivatives)
    out  ~/com                   geometry_msgs/PointStamped       the CoM in the world frame: odom's frame_id
                                                                  (floating base), frame_prefix + the root link
                                                                  (fixed base); stamped with the joint state's stamp
    out  ~/state                 sensor_msgs/JointState           the stamped companion: published after the arrays
                                                                  of every answered joint state, with its stamp,
                                                                  the world frame, the coordinate names (v order)
                                                                  and the q, v used
    out  /diagnostics            diagnostic_msgs/DiagnosticArray  rate, compute time, skipped messages by reason

Self-describing arrays. std_msgs has no stamped matrix (and rosidl generation of a custom interface package is
not available to pip-installed ROS 2), so each Float64MultiArray's ``layout.dim[i].label`` names the coordinates
along that axis, comma-separated: the joints in v order (floating base: ``base_linear_x, ..., base_angular_z``
first), ``x,y,z`` for the rows of J_com, ``<body>.<parameter>`` for the columns of Y; the stamp of the joint
state that produced them comes in ``~/state`` (and ``~/com``), published after them. The read-only parameter
``joints`` gives the joint order too.

Every output is computed on the arrival of a joint state, in one ``robot.dynamics()`` pass; the mass matrix is
published first. A message that cannot be used is skipped with a warning throttled per kind of fault, and
counted in ``DynamicsNode.skipped`` and on /diagnostics. The subscriptions to joint_states and odom take QoS
overrides (``-p qos_overrides./robot1/joint_states.subscription.reliability:=reliable``).

Joint states are matched by name in any order (unknown names ignored) and merged into the last known state;
nothing is published until every joint has had a position (and, for a floating base, an odometry has arrived).
A joint state without velocities counts them as zero for M and g, but C, C v and the regressor wait for
velocities. The regressor needs ``publish_regressor:=true`` and a ``~/reference``; the time derivatives of M and g
(paper 002, Prop. 6) need ``publish_derivatives:=true`` and velocities. ``joints`` is read-only,
so a new description must keep the joints (masses, inertias and frames may change); one with other joints is
refused and the node must be restarted to serve another robot.
"""
import collections
import sys
import time

import numpy as np
from geometry_msgs.msg import PointStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectoryPoint

from robot_dynamics.ros.conversions import (BadMessage, JointStateMerger, base_state_from_odometry,
                                            coordinate_names, multiarray_layout, reference_from_point,
                                            set_multiarray_data)
from robot_dynamics.ros.description import (SkipsBadMessages, describe, description_from_parameters, load_robot,
                                            valid_gravity)
from robot_dynamics.ros.diagnostics import Diagnostics
from robot_dynamics.ros.qos import DESCRIPTION_QOS, OUTPUT_QOS, STATE_QOS
from robot_dynamics.ros.runner import run
from robot_dynamics.spatial import PARAMETER_NAMES

MODEL_PARAMETERS = ("robot_description", "urdf_path", "xacro_args", "floating_base", "gravity", "mimic")
MATRIX_TOPICS = ("mass_matrix", "coriolis_matrix", "coriolis_vector", "gravity", "com_jacobian")
REGRESSOR_TOPICS = ("regressor",)
DERIVATIVE_TOPICS = ("mass_matrix_derivative", "gravity_derivative")


class DynamicsNode(SkipsBadMessages, Node):
    """The dynamics node.

    Parameters
    ----------
    node_name : str
        Default name, overridden by ``--ros-args -r __node:=...``.
    **kwargs
        Passed to :class:`rclpy.node.Node` (``context``, ``parameter_overrides``, ``cli_args``, ...).

    Attributes
    ----------
    robot : robot_dynamics model or None
        The current model; None until a description has been loaded.
    answered : int
        Joint states answered with published outputs.
    skipped : collections.Counter
        Messages skipped, per kind of fault (``"joint_state_lengths"``, ``"odom_zero_quaternion"``, ...).
    base_state : tuple or None
        ``(q_base (7,), v_base (6,), world frame id)`` from the last usable odometry (floating base only).
    reference : tuple or None
        ``(v_ref (nv,), a_ref (nv,))`` from the last usable ``~/reference``.
    """

    def __init__(self, node_name="dynamics_node", **kwargs):
        super().__init__(node_name, **kwargs)
        self.robot = None
        self.answered = 0
        self.skipped = collections.Counter()
        self._merger = None                       # JointStateMerger of the current joint names
        self.base_state = None
        self.reference = None
        self._topic_description = None            # the last XML received on the robot_description topic
        self._msgs = {}                           # topic -> Float64MultiArray with its layout, reused per state
        self._declare_parameters()
        self._frame_prefix = self.get_parameter("frame_prefix").value
        self._pubs = {}
        self._publish_regressor = self._publish_derivatives = False
        self._advertise(MATRIX_TOPICS)
        self._set_optional_outputs(self.get_parameter("publish_regressor").value,
                                   self.get_parameter("publish_derivatives").value)
        self._com_pub = self.create_publisher(PointStamped, "~/com", OUTPUT_QOS)
        self._com_msg = PointStamped()
        self._state_pub = self.create_publisher(JointState, "~/state", OUTPUT_QOS)
        self._state_msg = JointState()
        self.diagnostics = Diagnostics(self, "dynamics of the joint states")
        self.create_subscription(JointState, "joint_states", self._on_joint_state, STATE_QOS,
                                 qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.create_subscription(JointTrajectoryPoint, "~/reference", self._on_reference, STATE_QOS)
        self._odom_sub = None
        self._description_sub = None
        self._waiting_timer = None
        self._load_initial_description()
        self.add_on_set_parameters_callback(self._on_set_parameters)

    def _advertise(self, topics):
        for topic in topics:
            if topic not in self._pubs:
                self._pubs[topic] = self.create_publisher(Float64MultiArray, "~/" + topic, OUTPUT_QOS)

    def _set_optional_outputs(self, regressor, derivatives):
        """Advertise the regressor and the derivatives when asked for: nothing is advertised that is not published."""
        self._publish_regressor, self._publish_derivatives = regressor, derivatives
        self._advertise((REGRESSOR_TOPICS if regressor else ()) + (DERIVATIVE_TOPICS if derivatives else ()))

    # --- parameters --------------------------------------------------------------------------------------

    def _declare_parameters(self):
        self.declare_parameter("robot_description", "", describe(
            "URDF XML of the robot. If empty, urdf_path is used; if that is empty too, the robot_description "
            "topic (transient local). Setting it rebuilds the model."))
        self.declare_parameter("urdf_path", "", describe(
            "URDF file used when robot_description is empty: a path, package://pkg/path, file:///path or a bundled "
            "robot's name (arm7); a .xacro file is expanded with xacro_args. Setting it rebuilds the model."))
        self.declare_parameter("xacro_args", Parameter.Type.STRING_ARRAY, describe(
            "Arguments of a .xacro urdf_path, [\"name:=value\", ...]."))
        self.declare_parameter("mimic", False, describe(
            "True: a mimic joint follows its master (q = multiplier q_master + offset), is no coordinate of the "
            "outputs and may be missing from joint_states, as for robot_state_publisher."))
        self.declare_parameter("frame_prefix", "", describe(
            "Prefix of the robot's frames (robot_state_publisher's frame_prefix, e.g. 'robot1/'): odom's "
            "child_frame_id and the fixed-base ~/com frame are frame_prefix + the URDF root link.", read_only=True))
        self.declare_parameter("floating_base", False, describe(
            "True: the root link is a free body whose pose and twist come from odom_topic; q = [x, y, z, qx, qy, "
            "qz, qw, joints...] and v = [base linear, base angular (base frame), joints...]."))
        self.declare_parameter("gravity", [0.0, 0.0, -9.81], describe(
            "Gravity acceleration in the world frame [m/s^2], three doubles."))
        self.declare_parameter("odom_topic", "odom", describe(
            "nav_msgs/Odometry of the floating base; child_frame_id must be the URDF root link.", read_only=True))
        self.declare_parameter("publish_regressor", False, describe(
            "Publish the Slotine-Li regressor on ~/regressor once a ~/reference has arrived."))
        self.declare_parameter("publish_derivatives", False, describe(
            "Publish dM/dt and dg/dt along q' = v on ~/mass_matrix_derivative and ~/gravity_derivative."))
        gravity = self.get_parameter("gravity").value
        if not valid_gravity(gravity):
            raise ValueError(f"parameter gravity must be three finite doubles, got {gravity}")

    def _on_set_parameters(self, params):
        """Validate a parameter change and, when it touches the model, rebuild the model before accepting."""
        new = {p.name: p.value for p in params}
        if "gravity" in new and not valid_gravity(new["gravity"]):
            return SetParametersResult(successful=False, reason="gravity must be three finite doubles")
        if any(name in new for name in MODEL_PARAMETERS):
            config = {**self._model_config(), **{name: new[name] for name in MODEL_PARAMETERS if name in new}}
            try:
                xml, source = self._description_source(config)
                if xml is not None:
                    self._install(*self._build(xml, config, source), source)
            except (ValueError, OSError) as err:
                return SetParametersResult(successful=False, reason=str(err))
            if xml is None:
                self._subscribe_description()
        if "publish_regressor" in new or "publish_derivatives" in new:
            self._set_optional_outputs(new.get("publish_regressor", self._publish_regressor),
                                       new.get("publish_derivatives", self._publish_derivatives))
        return SetParametersResult(successful=True)

    def _model_config(self):
        """The parameters of the model; an unset ``xacro_args`` is None."""
        return {name: self.get_parameter_or(name).value for name in MODEL_PARAMETERS}

    # --- the robot description ---------------------------------------------------------------------------

    def _description_source(self, config):
        """``(xml, source)`` from the parameters in ``config``, else the last topic description, else None."""
        xml, source = description_from_parameters(config["robot_description"], config["urdf_path"],
                                                  config["xacro_args"])
        if xml is not None:
            return xml, source
        return self._topic_description, "topic robot_description"

    def _load_initial_description(self):
        """Load the description of the parameters (ValueError, naming the fault, stops the node), else subscribe to
        the robot_description topic and wait."""
        config = self._model_config()
        xml, source = self._description_source(config)
        if xml is None:
            self._subscribe_description()
            return
        self._install(*self._build(xml, config, source), source)

    def _subscribe_description(self):
        if self._description_sub is None:
            self._description_sub = self.create_subscription(
                String, "robot_description", self._on_description, DESCRIPTION_QOS)
        if self._waiting_timer is None and self.robot is None:
            self._waiting_timer = self.create_timer(5.0, self._log_waiting)
            self._log_waiting()

    def _on_description(self, msg):
        config = self._model_config()
        if config["robot_description"] or config["urdf_path"]:
            self.get_logger().info("ignoring the robot_description topic: a description parameter is set")
            return
        try:
            self._install(*self._build(msg.data, config, "topic robot_description"), "topic robot_description")
        except ValueError as err:
            kept = "; keeping the last good model" if self.robot is not None else ""
            self.get_logger().error(f"robot_description from the topic rejected: {err}{kept}")
            return
        self._topic_description = msg.data

    def _build(self, xml, config, source):
        """Parse ``xml`` into a model; run ``dynamics()`` once, so the first joint state finds it compiled.

        Returns the model and that first result, whose arrays give the shapes of the outputs. URDFWarnings
        (a description the library loads as given, such as an impossible inertia) go to the node's log.
        """
        robot = load_robot(self.get_logger(), xml, config["floating_base"], config["gravity"], config["mimic"], source)
        q, z = robot.neutral(), np.zeros(robot.nv)
        return robot, robot.dynamics(q, z, z, z)

    def _install(self, robot, sample, source):
        """Make ``robot`` the model; declare ``joints`` with the first one; size the outputs like ``sample``.

        ``joints`` is read-only: consumers read it once to interpret every array. A later description must
        therefore keep the joint names and their order (masses, inertias, frames may change); a description
        with other joints is refused (ValueError) and the node must be restarted to serve another robot.
        """
        if self.has_parameter("joints"):
            declared = list(self.get_parameter("joints").value)
            if list(robot.joint_names) != declared:
                raise ValueError(f"the new description's joints {list(robot.joint_names)} differ from the "
                                 f"read-only joints {declared}; restart the node to serve another robot")
        else:
            self.declare_parameter("joints", list(robot.joint_names), ParameterDescriptor(
                description="Read-only. The joints in the order of every published vector and matrix (after the "
                            "six base velocities when floating_base is true).", read_only=True))
            self._merger = JointStateMerger(robot.joint_names)
        old = self.robot
        if old is None or old.nv != robot.nv:
            self.reference = None
        if old is None or old.floating_base != robot.floating_base or old.root_link != robot.root_link:
            self.base_state = None
        arrays = {"mass_matrix": sample.M, "coriolis_matrix": sample.C, "coriolis_vector": sample.g,
                  "gravity": sample.g, "com_jacobian": sample.J_com, "regressor": sample.Y,
                  "mass_matrix_derivative": sample.M, "gravity_derivative": sample.g}
        coordinates = coordinate_names(robot)
        parameters = [f"{body}.{p}" for body in robot.body_names for p in PARAMETER_NAMES]
        labels = {"com_jacobian": (["x", "y", "z"], coordinates), "regressor": (coordinates, parameters)}
        self._msgs = {topic: Float64MultiArray(layout=multiarray_layout(
            a.shape, labels.get(topic, (coordinates,) * a.ndim))) for topic, a in arrays.items()}
        self._state_msg = JointState(name=coordinates)
        if robot.floating_base and self._odom_sub is None:
            self._odom_sub = self.create_subscription(
                Odometry, self.get_parameter("odom_topic").value, self._on_odom, STATE_QOS,
                qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self.robot = robot
        if self._waiting_timer is not None:
            self.destroy_timer(self._waiting_timer)
            self._waiting_timer = None
        self.get_logger().info(f"model from {source}: {len(robot.joint_names)} joints, nv = {robot.nv}, "
                               f"floating_base = {robot.floating_base}")

    def _log_waiting(self):
        if self.robot is None and self._description_sub is not None:
            self.get_logger().info(f"waiting for robot_description on '{self._description_sub.topic_name}'",
                                   throttle_duration_sec=5.0)

    # --- inputs ------------------------------------------------------------------------------------------

    def _on_odom(self, msg):
        if self.robot is None or not self.robot.floating_base:
            return
        try:
            q_base, v_base = base_state_from_odometry(msg, self._frame_prefix + self.robot.root_link)
        except BadMessage as err:
            self._skip(err)
            return
        self.base_state = (q_base, v_base, msg.header.frame_id or "odom")

    def _on_reference(self, msg):
        if self.robot is None:
            return
        try:
            self.reference = reference_from_point(msg, self.robot.nv)
        except BadMessage as err:
            self._skip(err)

    def _on_joint_state(self, msg):
        self.diagnostics.received()
        robot = self.robot
        if robot is None:
            self._log_waiting()
            return
        start = time.perf_counter()
        try:
            self._merger.merge(msg)
        except BadMessage as err:
            self._skip(err)
            return
        q, v, frame_id = self._state(robot)
        if q is None:
            return
        velocities = self._merger.velocities_known
        regressor = self._publish_regressor and velocities and self.reference is not None
        try:
            result = robot.dynamics(q, v, *self.reference) if regressor else robot.dynamics(q, v)
        except ValueError as err:
            self._skip(BadMessage("state_rejected", f"the model rejected the state: {err}"))
            return
        self._publish(result, v, velocities, regressor, msg.header.stamp, frame_id)
        if self._publish_derivatives and velocities:          # along q' = v: Mdot = C + C^T (paper 002,
            self._publish_array("mass_matrix_derivative", result.C + result.C.T)    # remark 5), gdot in O(n)
            self._publish_array("gravity_derivative", robot.gravity_derivative(q, v))
        self._publish_state(msg.header.stamp, frame_id, q, v, velocities)
        self.answered += 1
        self.diagnostics.answered(time.perf_counter() - start)

    def _state(self, robot):
        """``(q, v, world frame)`` of the merged joint state (and the last odom); Nones while odom is missing."""
        if not robot.floating_base:
            return self._merger.q, self._merger.v, self._frame_prefix + robot.root_link
        if self.base_state is None:
            self.get_logger().info(f"waiting for odometry on '{self._odom_sub.topic_name}'",
                                   throttle_duration_sec=5.0)
            return None, None, None
        q_base, v_base, frame_id = self.base_state
        return np.concatenate([q_base, self._merger.q]), np.concatenate([v_base, self._merger.v]), frame_id

    # --- outputs -----------------------------------------------------------------------------------------

    def _publish(self, result, v, velocities, regressor, stamp, frame_id):
        """Publish M first (what latency-sensitive consumers wait for), then the rest."""
        self._publish_array("mass_matrix", result.M)
        if velocities:
            self._publish_array("coriolis_matrix", result.C)
            self._publish_array("coriolis_vector", result.C @ v)
        self._publish_array("gravity", result.g)
        self._publish_array("com_jacobian", result.J_com)
        if regressor:
            self._publish_array("regressor", result.Y)
        com = self._com_msg
        com.header.stamp = stamp
        com.header.frame_id = frame_id
        com.point.x, com.point.y, com.point.z = (float(c) for c in result.com)
        self._com_pub.publish(com)

    def _publish_state(self, stamp, frame_id, q, v, velocities):
        """The stamped companion of the arrays just published: the joint state's stamp, the world frame, the
        coordinate names in v order, v (when known) and, for a fixed base, q (a floating base's q has 7 base
        entries for 6 names: the pose is odom's)."""
        msg = self._state_msg
        msg.header.stamp = stamp
        msg.header.frame_id = frame_id
        msg.position = [] if self.robot.floating_base else q.tolist()
        msg.velocity = v.tolist() if velocities else []
        self._state_pub.publish(msg)

    def _publish_array(self, topic, a):
        msg = self._msgs[topic]
        set_multiarray_data(msg, a)
        self._pubs[topic].publish(msg)


def main(args=None):
    """Console entry point: ``dynamics_node --ros-args -p name:=value ...``."""
    return run(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())
