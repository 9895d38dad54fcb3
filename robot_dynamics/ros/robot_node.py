"""RobotNode: the start-up every node serving one robot shares (the description, loaded once; the joints in the
order of the effort commands), and the effort command topic the controllers publish and sim_node reads.

dynamics_node, which reloads the description on every change, uses the functions of description.py directly.
"""
import collections

import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import String

from robot_dynamics.ros.description import (WARN_PERIOD, SkipsBadMessages, describe, description_from_parameters,
                                            load_robot, valid_gravity)
from robot_dynamics.ros.guard import GuardedCallbacks
from robot_dynamics.ros.qos import DESCRIPTION_QOS

# ros2_control's JointGroupEffortController named effort_controller listens on its ~/commands: relative, so
# it follows the namespace (-r __ns:=/robot1 -> /robot1/effort_controller/commands) and can be remapped.
COMMAND_TOPIC = "effort_controller/commands"


class RobotNode(GuardedCallbacks, SkipsBadMessages, Node):
    """A node serving one robot, loaded once: the ``robot_description`` parameter, else ``urdf_path``, else the
    ``robot_description`` topic (transient local), as dynamics_node reads it.

    Every callback is guarded (robot_dynamics.ros.guard: an exception is logged and counted, never fatal).
    Subclasses finish their ``__init__`` with ``self._load_description()`` and implement ``_install(robot)``,
    which prepares the node for ``robot`` or raises ValueError to refuse it. The first robot installed is kept.

    Attributes
    ----------
    robot : robot_dynamics.Robot or None
        The model; None until a description has been installed.
    joints : list of str
        The order of the command vector (parameter ``joints``; default the model's joint order).
    joint_index : (n,) int array
        ``joint_index[i]`` is the model's index of ``joints[i]``.
    skipped : collections.Counter
        Messages skipped, per kind of fault.
    """

    floating_base = False

    def __init__(self, node_name, **kwargs):
        super().__init__(node_name, **kwargs)
        self.robot = None
        self.joints, self.joint_index = [], np.zeros(0, dtype=np.intp)
        self.skipped = collections.Counter()
        self._description_sub = None
        self.declare_parameter("robot_description", "", describe(
            "URDF XML of the robot. If empty, urdf_path is used; if that is empty too, the robot_description "
            "topic (transient local). The first description that loads is kept.", read_only=True))
        self.declare_parameter("urdf_path", "", describe(
            "URDF file used when robot_description is empty: a path, package://pkg/path, file:///path or a bundled "
            "robot's name (arm7); a .xacro file is expanded with xacro_args.", read_only=True))
        self.declare_parameter("xacro_args", Parameter.Type.STRING_ARRAY, describe(
            "Arguments of a .xacro urdf_path, [\"name:=value\", ...].", read_only=True))
        gravity = self.declare_parameter("gravity", [0.0, 0.0, -9.81], describe(
            "Gravity acceleration in the world frame [m/s^2], three doubles.", read_only=True)).value
        if not valid_gravity(gravity):
            raise ValueError(f"parameter gravity must be three finite doubles, got {gravity}")

    def _load_description(self):
        """Install the description of the parameters now (ValueError, OSError if it fails), else wait for the topic."""
        xml, source = description_from_parameters(self.get_parameter("robot_description").value,
                                                  self.get_parameter("urdf_path").value,
                                                  self.get_parameter_or("xacro_args").value)
        if xml is not None:
            self._build(xml, source)
            return
        self._description_sub = self.create_subscription(
            String, "robot_description", self._on_description, DESCRIPTION_QOS)
        self.get_logger().info(f"waiting for robot_description on '{self._description_sub.topic_name}'")

    def _on_description(self, msg):
        if self.robot is not None:
            self.get_logger().info("ignoring a new robot_description: the model is kept; restart the node to change "
                                   "robots", throttle_duration_sec=WARN_PERIOD)
            return
        try:
            self._build(msg.data, "topic robot_description")
        except ValueError as err:
            self.get_logger().error(f"robot_description from the topic rejected: {err}")

    def _build(self, xml, source):
        robot = load_robot(self.get_logger(), xml, self.floating_base, self.get_parameter("gravity").value,
                           source=source)
        nj = len(robot.joint_names)
        if robot.nv - (6 if self.floating_base else 0) != nj:
            raise ValueError(f"every joint must have one degree of freedom; {nj} joints have "
                             f"{robot.nv - (6 if self.floating_base else 0)}")
        if not self.has_parameter("joints"):
            self.declare_parameter("joints", list(robot.joint_names), describe(
                "The joints in the order of the effort commands (ros2_control's forward_command_controller "
                "'joints'); every joint of the model once. Default: the model's joint order.", read_only=True))
        joints = list(self.get_parameter("joints").value)
        if sorted(joints) != sorted(robot.joint_names):
            raise ValueError(f"parameter joints {joints} must name every joint of the model once: "
                             f"{list(robot.joint_names)}")
        self.joints = joints
        self.joint_index = np.array([robot.joint_names.index(j) for j in joints], dtype=np.intp)
        self._install(robot)
        self.robot = robot
        self.get_logger().info(f"model from {source}: {nj} joints, {robot.nbodies} bodies")

    def _install(self, robot):
        raise NotImplementedError
