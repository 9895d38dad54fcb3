"""dynamics_node's own parameters, declared, checked and read (the description's are hotswap.DescriptionSwap's).

Frame Jacobians: ``frames:="[tcp, foot_fl]"`` (read-only; any URDF link, those merged by fixed joints included:
robot.frame_names) publishes J_f on ``~/frame_jacobians/<frame>`` for every joint state, in ``frame_reference``
(read-only): ``local_world_aligned`` (the default: the velocity of the frame's origin and the angular velocity,
in the world's axes -- what a Cartesian controller commands, MoveIt's getJacobian at the frame), ``local`` (the
frame's own axes) or ``world`` (the spatial twist at the world origin), as Robot.frame_jacobian. A name that is no
valid ROS topic token stops the node at start-up, as does a frame the first model lacks; a later description
without one of the frames is refused (kind ``"frames"``).

The momentum observer (robot_dynamics.ros.observing): ``publish_external_torque`` switches it on (like the other
switches, at any time); its parameters are read-only: ``observer_gain``, ``observer_max_gap``, ``effort_topic``,
``wrench_frames`` (checked as ``frames`` are), ``collision_thresholds``, ``collision_calibration_time``,
``collision_margin``, ``collision_release``. A value out of range stops the node at start-up, naming the
parameter; ``collision_thresholds`` of another length than the model's coordinates too (a later description:
refused).
"""
import math
import re

from rclpy.parameter import Parameter

from robot_dynamics.ros.description import describe
from robot_dynamics.ros.observing import ObserverSettings
from robot_dynamics.ros.outputs import OUTPUTS, switch_help, switches

FRAME_REFERENCES = ("local_world_aligned", "local", "world")
TOPIC_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_JOINT_STATE_NAMES = 10_000            # default of max_joint_state_names


def check_frame_names(frames, parameter="frames"):
    """``frames`` (the value of the string-array ``parameter``) if each is a valid ROS topic token (letters, digits,
    underscores; no leading digit, no double underscore) and none repeats, else a ValueError naming the first that
    is not."""
    topic = next(o.topic for o in OUTPUTS if o.per_frame and o.frames == parameter)
    seen = set()
    for frame in frames:
        if not TOPIC_TOKEN.fullmatch(frame) or "__" in frame:
            raise ValueError(f"parameter {parameter}: {frame!r} cannot name the topic ~/{topic.format(frame=frame)} "
                             "(a ROS name token: letters, digits and single underscores, not starting with a digit)")
        if frame in seen:
            raise ValueError(f"parameter {parameter}: {frame!r} is listed twice")
        seen.add(frame)
    return list(frames)


def _check(name, value, ok, what):
    if not ok(value):
        raise ValueError(f"parameter {name} must be {what}, got {value!r}")
    return value


def _positive(x):
    return math.isfinite(x) and x > 0


class DynamicsParameters:
    """Declares dynamics_node's own parameters on ``node`` and holds their values.

    Attributes
    ----------
    frame_prefix, odom_topic : str
    max_joint_state_names : int
    frames : list of str
    frame_reference : str
    wrench_frames : list of str
    effort_topic : str
        The read-only parameters, read once.
    observer : robot_dynamics.ros.observing.ObserverSettings
        The momentum observer's read-only parameters.
    switches : dict
        ``{parameter: bool}`` of the parameters that switch outputs on (outputs.Output.switch), kept current by
        :meth:`update`.
    """

    def __init__(self, node):
        declare = node.declare_parameter
        self.frame_prefix = declare("frame_prefix", "", describe(
            "Prefix of the robot's frames (robot_state_publisher's frame_prefix, e.g. 'robot1/'): odom's "
            "child_frame_id and the fixed-base ~/com frame are frame_prefix + the URDF root link.",
            read_only=True)).value
        self.odom_topic = declare("odom_topic", "odom", describe(
            "nav_msgs/Odometry of the floating base; child_frame_id must be the URDF root link.", read_only=True)).value
        self.switches = {}
        for name in switches():                                     # publish_regressor, publish_derivatives
            text = switch_help(name)
            self.switches[name] = declare(name, False, describe(text[0].upper() + text[1:] + ".")).value
        self.max_joint_state_names = declare("max_joint_state_names", MAX_JOINT_STATE_NAMES, describe(
            "A joint state with more names is skipped (joint_state_too_large).", read_only=True)).value
        frames = declare("frames", Parameter.Type.STRING_ARRAY, describe(
            "Frames (URDF link names, robot.frame_names) whose Jacobian J_f (6 x nv) is published on "
            "~/frame_jacobians/<frame> for every joint state.", read_only=True)).value
        self.frames = check_frame_names(frames or [])               # unset: None
        self.frame_reference = declare("frame_reference", FRAME_REFERENCES[0], describe(
            "Reference of the frame Jacobians: local_world_aligned (velocity of the frame's origin and angular "
            "velocity, world axes), local (the frame's axes) or world (spatial twist at the world origin).",
            read_only=True)).value
        if self.frame_reference not in FRAME_REFERENCES:
            raise ValueError(f"parameter frame_reference must be one of {', '.join(FRAME_REFERENCES)}, got "
                             f"{self.frame_reference!r}")
        self._declare_observer(declare)

    def _declare_observer(self, declare):
        """The momentum observer's parameters (robot_dynamics.ros.observing), each checked."""
        default = ObserverSettings()
        gain = declare("observer_gain", default.gain, describe(
            "Bandwidth k of the momentum observer [rad/s]: after a step of the external torque, ~/external_torque "
            "is within exp(-k t) of it.", read_only=True)).value
        max_gap = declare("observer_max_gap", default.max_gap, describe(
            "A joint state stamped more than this after the last observed one [s] restarts the observer (as does "
            "one not stamped after it).", read_only=True)).value
        self.effort_topic = declare("effort_topic", "", describe(
            "Empty: the observer's applied torque is joint_states' effort (the effort applied over the last step). "
            "Else a std_msgs/Float64MultiArray topic of efforts in the order of joints (an effort controller's "
            "commands), each held until the next.", read_only=True)).value
        frames = declare("wrench_frames", Parameter.Type.STRING_ARRAY, describe(
            "Frames (URDF link names, robot.frame_names) of ~/external_wrench/<frame>: the wrench at each, alone, "
            "that best explains the external torque, in the frame's axes about its origin.", read_only=True)).value
        self.wrench_frames = check_frame_names(frames or [], "wrench_frames")
        thresholds = declare("collision_thresholds", Parameter.Type.DOUBLE_ARRAY, describe(
            "Collision thresholds on |external torque| [N m or N], one per coordinate in the order of joints or one "
            "for all; with collision_calibration_time, the least calibrated threshold.", read_only=True)).value
        if thresholds is not None:
            for i, x in enumerate(thresholds):
                _check(f"collision_thresholds[{i}]", x, _positive, "finite and positive")
        calibration = declare("collision_calibration_time", 0.0, describe(
            "Seconds of observed joint states after the model starts that are declared contact-free: the "
            "thresholds become collision_margin times the largest |external torque| seen then (0: "
            "collision_thresholds as given).", read_only=True)).value
        margin = declare("collision_margin", default.margin, describe(
            "Calibrated thresholds are this times the largest |external torque| of the calibration.",
            read_only=True)).value
        release = declare("collision_release", default.release, describe(
            "Hysteresis: a coordinate stays in collision until its |external torque| falls below this times its "
            "threshold.", read_only=True)).value
        self.observer = ObserverSettings(
            gain=_check("observer_gain", gain, _positive, "finite and positive (rad/s)"),
            max_gap=_check("observer_max_gap", max_gap, _positive, "finite and positive (s)"),
            thresholds=None if not thresholds else list(thresholds),
            calibration_time=_check("collision_calibration_time", calibration,
                                    lambda x: math.isfinite(x) and x >= 0, "finite and non-negative (s)"),
            margin=_check("collision_margin", margin, _positive, "finite and positive"),
            release=_check("collision_release", release, lambda x: 0.0 <= x <= 1.0, "in [0, 1]"))

    @property
    def frame_lists(self):
        """``{parameter: frames}`` of the per-frame outputs (publishing.output_topics)."""
        return {"frames": self.frames, "wrench_frames": self.wrench_frames}

    def update(self, params):
        """Take the new values of the switches among ``params`` (rclpy Parameters); True when one changed."""
        changed = {p.name: p.value for p in params if p.name in self.switches}
        self.switches.update(changed)
        return bool(changed)
