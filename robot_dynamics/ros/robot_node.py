"""RobotNode: the start-up every node serving one robot shares (the description, loaded once; the joints in the
order of the effort commands), and the effort command topic the controllers publish and sim_node reads.

The description is loaded, checked, refused and swapped in by the same hotswap.DescriptionSwap as
dynamics_node's, with read-only parameters: the first description that loads is kept.
"""
import collections

import numpy as np
from rclpy.node import Node

from robot_dynamics.ros.description import describe
from robot_dynamics.ros.guard import GuardedCallbacks, SkipsBadMessages
from robot_dynamics.ros.hotswap import Described, DescriptionSwap

# ros2_control's JointGroupEffortController named effort_controller listens on its ~/commands: relative, so
# it follows the namespace (-r __ns:=/robot1 -> /robot1/effort_controller/commands) and can be remapped.
COMMAND_TOPIC = "effort_controller/commands"


class RobotNode(Described, GuardedCallbacks, SkipsBadMessages, Node):
    """A node serving one robot, loaded once: the ``robot_description`` parameter, else ``urdf_path``, else the
    ``robot_description`` topic (transient local), as dynamics_node reads it (hotswap.DescriptionSwap).

    Every callback is guarded (robot_dynamics.ros.guard: an exception is logged and counted, never fatal).
    Subclasses finish their ``__init__`` with ``self._load_description()`` and implement ``_install(robot)``,
    which prepares the node for ``robot`` or raises ValueError to refuse it. The first robot installed is kept.

    Attributes
    ----------
    description : robot_dynamics.ros.hotswap.DescriptionSwap
        The robot description, not hot: the first model that loads serves.
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
        self.joints, self.joint_index = [], np.zeros(0, dtype=np.intp)
        self.skipped = collections.Counter()
        self.description = DescriptionSwap(self, self._adopt, hot=False)

    def _load_description(self):
        """Install the description of the parameters now (ValueError, OSError if it fails), else wait for the topic."""
        self.description.load_initial()

    def _adopt(self, robot, source):
        """Check ``robot`` against the node's joints, then let the subclass install it (DescriptionSwap's install)."""
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

    def _install(self, robot):
        raise NotImplementedError

    def destroy_node(self):
        """Let running callbacks return, end a description load in progress, then destroy."""
        self.quiesce()
        self.description.close()
        return super().destroy_node()
