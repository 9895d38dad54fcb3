"""What dynamics_node answers from: joint states merged into the last known state, the floating base's pose and
twist from odometry, the Slotine-Li reference, and the momentum observer's applied torque (joint states' efforts
or the effort commands of ``effort_topic``).

Joint states are matched by name in any order (unknown names ignored) and merged into the last known state
(conversions.JointStateMerger); nothing is answered until every joint has had a position (and, for a floating
base, an odometry has arrived). A joint state without velocities counts them as zero. Every method that reads a
message raises conversions.BadMessage, with its kind, for one that cannot be used, and changes nothing then.
"""
import numpy as np

from robot_dynamics.ros.conversions import (BadMessage, JointStateMerger, as_float_array, base_state_from_odometry,
                                            reference_from_point)


class StateInputs:
    """The state of the robot as the input messages tell it.

    Parameters
    ----------
    max_names : int
        A joint state with more names is refused (``joint_state_too_large``): the parameter
        ``max_joint_state_names``.
    frame_prefix : str
        Odometry's child_frame_id and a fixed base's world frame are ``frame_prefix`` + the URDF root link.
    effort_topic : str
        The topic of the effort commands the observer takes as the applied torque; empty: joint states' efforts.

    Attributes
    ----------
    merger : conversions.JointStateMerger or None
        The joints' positions and velocities, for the joints of the first model (the node's read-only ``joints``).
    base_state : tuple or None
        ``(q_base (7,), v_base (6,), world frame id)`` from the last usable odometry (floating base only).
    reference : tuple or None
        ``(v_ref (nv,), a_ref (nv,))`` from the last usable ``~/reference``.
    effort_command : ndarray or None
        (nv,) the last usable effort command (with ``effort_topic``).
    """

    def __init__(self, max_names, frame_prefix, effort_topic=""):
        self.max_names = max_names
        self.frame_prefix = frame_prefix
        self.effort_topic = effort_topic
        self.merger = None
        self.base_state = None
        self.reference = None
        self.effort_command = None

    def adopt(self, robot, old):
        """A new model ``robot`` replaces ``old`` (None at first): forget what no longer fits it."""
        if self.merger is None:
            self.merger = JointStateMerger(robot.joint_names)
        if old is None or old.nv != robot.nv:
            self.reference = self.effort_command = None
        if old is None or old.floating_base != robot.floating_base or old.root_link != robot.root_link:
            self.base_state = None

    def forget(self):
        """Forget the base state, the reference and the effort command (the joints' last state is kept: the joints
        stay)."""
        self.base_state = self.reference = self.effort_command = None

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
        self.reference = reference_from_point(msg, nv, required=("velocities", "accelerations"))[1:]

    def set_effort_command(self, msg, nv):
        """Take the applied torque (nv,) from a std_msgs/Float64MultiArray of efforts in the order of joints (its
        layout is not read: an effort controller's commands leave it empty)."""
        tau = as_float_array(msg.data)
        if len(tau) != nv:
            raise BadMessage("effort_length", f"{self.effort_topic} has {len(tau)} efforts; the model has nv = {nv}")
        if not np.isfinite(tau).all():
            raise BadMessage("effort_non_finite", f"{self.effort_topic} has NaN or infinite efforts")
        self.effort_command = tau.copy()

    def efforts(self):
        """The applied torque tau (nv,) for the momentum observer: the last effort command (with effort_topic), else
        the joint states' efforts; BadMessage ``observer_efforts_missing`` or ``observer_efforts_non_finite`` when
        there is none to use (a fixed base only: nv joints)."""
        if self.effort_topic:
            if self.effort_command is None:
                raise BadMessage("observer_efforts_missing", f"no effort command on {self.effort_topic} yet")
            return self.effort_command
        merger = self.merger
        if not merger.efforts_known:
            missing = [name for name, known in zip(merger.joint_names, merger.effort_known) if not known]
            raise BadMessage("observer_efforts_missing", f"joint_states gave no effort for {missing}")
        if not np.isfinite(merger.effort).all():
            raise BadMessage("observer_efforts_non_finite", "joint_states has NaN or infinite efforts")
        return merger.effort

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
