"""What dynamics_node answers from: joint states merged into the last known state, the floating base's pose and
twist from odometry, the Slotine-Li reference.

Joint states are matched by name in any order (unknown names ignored) and merged into the last known state
(conversions.JointStateMerger); nothing is answered until every joint has had a position (and, for a floating
base, an odometry has arrived). A joint state without velocities counts them as zero. Every method that reads a
message raises conversions.BadMessage, with its kind, for one that cannot be used, and changes nothing then.
"""
import numpy as np

from robot_dynamics.ros.conversions import BadMessage, JointStateMerger, base_state_from_odometry, reference_from_point


class StateInputs:
    """The state of the robot as the input messages tell it.

    Parameters
    ----------
    max_names : int
        A joint state with more names is refused (``joint_state_too_large``): the parameter
        ``max_joint_state_names``.
    frame_prefix : str
        Odometry's child_frame_id and a fixed base's world frame are ``frame_prefix`` + the URDF root link.

    Attributes
    ----------
    merger : conversions.JointStateMerger or None
        The joints' positions and velocities, for the joints of the first model (the node's read-only ``joints``).
    base_state : tuple or None
        ``(q_base (7,), v_base (6,), world frame id)`` from the last usable odometry (floating base only).
    reference : tuple or None
        ``(v_ref (nv,), a_ref (nv,))`` from the last usable ``~/reference``.
    """

    def __init__(self, max_names, frame_prefix):
        self.max_names = max_names
        self.frame_prefix = frame_prefix
        self.merger = None
        self.base_state = None
        self.reference = None

    def adopt(self, robot, old):
        """A new model ``robot`` replaces ``old`` (None at first): forget what no longer fits it."""
        if self.merger is None:
            self.merger = JointStateMerger(robot.joint_names)
        if old is None or old.nv != robot.nv:
            self.reference = None
        if old is None or old.floating_base != robot.floating_base or old.root_link != robot.root_link:
            self.base_state = None

    def forget(self):
        """Forget the base state and the reference (the joints' last state is kept: the joints stay)."""
        self.base_state = self.reference = None

    def joint_state(self, msg):
        """Merge a sensor_msgs/JointState."""
        if len(msg.name) > self.max_names:
            raise BadMessage("joint_state_too_large", f"joint_states has {len(msg.name)} names, more than "
                                                      f"max_joint_state_names = {self.max_names}")
        self.merger.merge(msg)

    def odometry(self, msg, robot):
        """Take the floating base's pose and twist from a nav_msgs/Odometry."""
        q_base, v_base = base_state_from_odometry(msg, self.frame_prefix + robot.root_link)
        self.base_state = (q_base, v_base, msg.header.frame_id or "odom")

    def set_reference(self, msg, nv):
        """Take ``(v_ref, a_ref)`` from a trajectory_msgs/JointTrajectoryPoint."""
        self.reference = reference_from_point(msg, nv)

    @property
    def velocities(self):
        """True when every joint's velocity is known."""
        return self.merger.velocities_known

    def reference_for(self, nv):
        """The reference when it has ``nv`` entries (one taken for a model since replaced may not), else None."""
        reference = self.reference
        return reference if reference is not None and len(reference[0]) == nv else None

    def state(self, robot):
        """``(q, v, world frame)`` for ``robot``; None while a floating base has had no odometry."""
        merger = self.merger
        if not robot.floating_base:
            return merger.q, merger.v, self.frame_prefix + robot.root_link
        base_state = self.base_state
        if base_state is None:
            return None
        q_base, v_base, frame_id = base_state
        return np.concatenate([q_base, merger.q]), np.concatenate([v_base, merger.v]), frame_id
