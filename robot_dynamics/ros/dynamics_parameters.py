"""dynamics_node's own parameters, declared, checked and read (the description's are hotswap.DescriptionSwap's).

Frame Jacobians: ``frames:="[tcp, foot_fl]"`` (read-only; any URDF link, those merged by fixed joints included:
robot.frame_names) publishes J_f on ``~/frame_jacobians/<frame>`` for every joint state, in ``frame_reference``
(read-only): ``local_world_aligned`` (the default: the velocity of the frame's origin and the angular velocity,
in the world's axes -- what a Cartesian controller commands, MoveIt's getJacobian at the frame), ``local`` (the
frame's own axes) or ``world`` (the spatial twist at the world origin), as Robot.frame_jacobian. A name that is no
valid ROS topic token stops the node at start-up, as does a frame the first model lacks; a later description
without one of the frames is refused (kind ``"frames"``).
"""
import re

from rclpy.parameter import Parameter

from robot_dynamics.ros.description import describe
from robot_dynamics.ros.outputs import switch_help, switches

FRAME_REFERENCES = ("local_world_aligned", "local", "world")
TOPIC_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_JOINT_STATE_NAMES = 10_000            # default of max_joint_state_names


def check_frame_names(frames):
    """``frames`` if each is a valid ROS topic token (letters, digits, underscores; no leading digit, no double
    underscore) and none repeats, else a ValueError naming the first that is not."""
    seen = set()
    for frame in frames:
        if not TOPIC_TOKEN.fullmatch(frame) or "__" in frame:
            raise ValueError(f"parameter frames: {frame!r} cannot name the topic ~/frame_jacobians/{frame} (a ROS "
                             "name token: letters, digits and single underscores, not starting with a digit)")
        if frame in seen:
            raise ValueError(f"parameter frames: {frame!r} is listed twice")
        seen.add(frame)
    return list(frames)


class DynamicsParameters:
    """Declares dynamics_node's own parameters on ``node`` and holds their values.

    Attributes
    ----------
    frame_prefix, odom_topic : str
    max_joint_state_names : int
    frames : list of str
    frame_reference : str
        The read-only parameters, read once.
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

    def update(self, params):
        """Take the new values of the switches among ``params`` (rclpy Parameters); True when one changed."""
        changed = {p.name: p.value for p in params if p.name in self.switches}
        self.switches.update(changed)
        return bool(changed)
