"""view_node: a robot_dynamics.viewer page following the robot over ROS 2 (issue 40).

It reads ``joint_states`` (and, for a floating base, ``odom``) through inputs.StateInputs, as dynamics_node reads
them, and redraws the robot at most ``rate`` times a second (Viewer.update); every WrenchStamped topic named
``.../external_wrench/<frame>`` -- dynamics_node's ``~/external_wrench/<frame>``, the momentum observer's wrench at
that frame in the frame's own axes about its origin (observing.py) -- is drawn as arrows at <frame>
(Viewer.show_wrench), its topics found as they appear (looked up every ``discovery_period`` seconds).  The
callbacks only keep the last message's numbers; the redraw timer draws them, so a 1 kHz topic costs a copy per
message, not a scene update.

Run: ``robot-dynamics view MODEL --ros`` (the page's URL is printed; Ctrl-C stops).
"""
import numpy as np
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState

from robot_dynamics.ros.conversions import BadMessage
from robot_dynamics.ros.dynamics_parameters import MAX_JOINT_STATE_NAMES
from robot_dynamics.ros.inputs import StateInputs
from robot_dynamics.ros.qos import STATE_QOS
from robot_dynamics.ros.runner import run

WRENCH_TYPE = "geometry_msgs/msg/WrenchStamped"


class ViewNode(Node):
    """Draw the robot of a robot_dynamics.viewer.Viewer at the joint states received, and the wrenches of the
    ``.../external_wrench/<frame>`` topics.

    Parameters
    ----------
    viewer : robot_dynamics.viewer.Viewer
        The page drawn; its robot's joints are matched by name.
    rate : float
        Redraws per second at most (a joint state arriving faster is merged, and drawn at the next redraw).
    discovery_period : float
        Seconds between two look-ups of the wrench topics.

    Attributes
    ----------
    wrench_topics : dict
        {topic: frame} of the wrench topics followed.
    skipped : int
        Messages that could not be used (a BadMessage, a wrench with NaN): skipped, the view unchanged.
    """

    def __init__(self, viewer, node_name="view_node", rate=30.0, discovery_period=1.0, **kwargs):
        super().__init__(node_name, **kwargs)
        self.viewer = viewer
        self.inputs = StateInputs(MAX_JOINT_STATE_NAMES, frame_prefix="")
        self.inputs.adopt(viewer.robot, None)
        self.wrench_topics = {}
        self.skipped = 0
        self._fresh = False
        self._pending = {}                      # {frame: the last wrench received, not drawn yet}
        self.create_subscription(JointState, "joint_states", self._on_joint_state, STATE_QOS)
        if viewer.robot.floating_base:
            self.create_subscription(Odometry, "odom", self._on_odometry, STATE_QOS)
        self.create_timer(1.0 / rate, self._redraw)
        self.create_timer(discovery_period, self._discover)
        self._discover()

    def _on_joint_state(self, msg):
        try:
            self.inputs.joint_state(msg)
            self._fresh = True
        except BadMessage:
            self.skipped += 1

    def _on_odometry(self, msg):
        try:
            self.inputs.odometry(msg, self.viewer.robot)
            self._fresh = True
        except BadMessage:
            self.skipped += 1

    def _redraw(self):
        """Viewer.update at the last known state, once every joint has had a position (and a base, odometry);
        then the wrenches received since the last redraw."""
        if self._fresh and self.inputs.merger.complete:
            state = self.inputs.state(self.viewer.robot)
            if state is not None:
                self._fresh = False
                self.viewer.update(state[0])
        while self._pending:
            frame, w = self._pending.popitem()
            self.viewer.show_wrench(frame, w, "local")

    def _discover(self):
        """Follow the WrenchStamped topics .../external_wrench/<frame> of a frame of the robot not yet followed."""
        frames = set(self.viewer.robot.frame_names)
        for topic, types in self.get_topic_names_and_types():
            head, _, frame = topic.rpartition("/")
            if (WRENCH_TYPE in types and head.endswith("/external_wrench") and frame in frames
                    and topic not in self.wrench_topics):
                self.wrench_topics[topic] = frame
                self.create_subscription(WrenchStamped, topic, lambda msg, f=frame: self._on_wrench(f, msg),
                                         STATE_QOS)

    def _on_wrench(self, frame, msg):
        f, t = msg.wrench.force, msg.wrench.torque
        w = np.array([f.x, f.y, f.z, t.x, t.y, t.z])
        if not np.isfinite(w).all():
            self.skipped += 1
            return
        self._pending[frame] = w


def follow(viewer, args=None):
    """Run a ViewNode of `viewer` until Ctrl-C or SIGTERM (runner.run); returns the exit code."""
    def view_node():
        return ViewNode(viewer)
    return run(view_node, args)
