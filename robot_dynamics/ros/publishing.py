"""dynamics_node's outputs at work: the messages sized and labelled for a model, the publishers, and a joint
state's answer published in the order of the table (robot_dynamics.ros.outputs).

Self-describing arrays: std_msgs has no stamped matrix (and rosidl generation of a custom interface package is
not available to pip-installed ROS 2), so each Float64MultiArray's ``layout.dim[i].label`` names the entries
along that axis, comma-separated (:func:`axis_labels`), and the stamp of the joint state that produced them
comes in ``~/state`` (and ``~/com``), published after them.
"""
from collections import namedtuple

import numpy as np
from geometry_msgs.msg import PointStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics.ros.conversions import coordinate_names, multiarray_layout, set_multiarray_data
from robot_dynamics.ros.outputs import FLOAT64_ARRAY, OUTPUTS, POINT, REFERENCE, VELOCITIES
from robot_dynamics.spatial import PARAMETER_NAMES

STATE_TOPIC = "~/state"
TWIST_ROWS = ["linear_x", "linear_y", "linear_z", "angular_x", "angular_y", "angular_z"]


def axis_labels(size, robot):
    """The names of the entries along an axis whose size the registry names ``size`` (a name or a number)."""
    if size == "nv":
        return coordinate_names(robot)
    if size == "ny":
        return [f"{body}.{p}" for body in robot.body_names for p in PARAMETER_NAMES]
    if size == "nb":
        return list(robot.body_names)
    if size == 3:
        return ["x", "y", "z"]
    if size == 6:
        return TWIST_ROWS
    raise LookupError(f"no labels for an axis of size {size!r}: name its entries in publishing.axis_labels")


def sizes(robot):
    """The numbers of the registry's names of sizes for ``robot``."""
    return {"nq": robot.nq, "nv": robot.nv, "nb": robot.nbodies, "ny": 10 * robot.nbodies}


def _array(output, robot):
    symbols, numbers = output.shape_symbols(), sizes(robot)
    shape = tuple(numbers.get(s, s) for s in symbols)
    return Float64MultiArray(layout=multiarray_layout(shape, [axis_labels(s, robot) for s in symbols]))


def _fill_array(msg, value, stamp, frame_id):
    set_multiarray_data(msg, value)


def _fill_point(msg, value, stamp, frame_id):
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.point.x, msg.point.y, msg.point.z = (float(c) for c in value)


# How each message type of outputs.py is made for a model (make(output, robot)) and filled with a value
# (fill(msg, value, stamp, world frame)); an output of another type needs its entry here.
MessageType = namedtuple("MessageType", "cls make fill")
MESSAGES = {FLOAT64_ARRAY: MessageType(Float64MultiArray, _array, _fill_array),
            POINT: MessageType(PointStamped, lambda output, robot: PointStamped(), _fill_point)}


def output_topics(frames):
    """``(output, frame, topic)`` of every output of the table, a per-frame output once per frame of ``frames``
    (``frame`` None for the others), in the table's order."""
    return [(output, frame, output.topic_of(frame)) for output in OUTPUTS
            for frame in (frames if output.per_frame else (None,))]


class Served:
    """What the node answers with, swapped in whole: the model and the output messages sized and labelled for it
    (no rclpy entity: any thread may build one).

    Attributes
    ----------
    robot : robot_dynamics.Robot
    messages : dict
        topic -> the message of that output, reused for every joint state.
    state_msg : sensor_msgs.msg.JointState
        The stamped companion, its names the coordinates in v order.
    """

    __slots__ = ("robot", "messages", "state_msg", "buffers")

    def __init__(self, robot, frames=()):
        self.robot = robot
        self.messages = {topic: MESSAGES[output.message].make(output, robot)
                         for output, _, topic in output_topics(frames)}
        self.state_msg = JointState(name=coordinate_names(robot))
        numbers = sizes(robot)                # a per-frame output is computed into its own array (out=)
        self.buffers = {topic: np.empty(tuple(numbers.get(s, s) for s in output.shape_symbols()))
                        for output, frame, topic in output_topics(frames) if frame is not None}


class Evaluation:
    """What the outputs of one joint state are computed from: the ``x`` of outputs.Output.value.

    Attributes
    ----------
    robot : robot_dynamics.Robot
    q, v : ndarray
        The state (a floating base's pose and twist from odometry first).
    dynamics : robot_dynamics.Dynamics
        ``robot.dynamics(q, v[, v_r, a_r])``.
    frame_reference : str
        The parameter ``frame_reference``.
    frame : str or None
        The frame of the per-frame output being published.
    out : ndarray or None
        The array a per-frame output is computed into (Served.buffers).
    """

    __slots__ = ("robot", "q", "v", "dynamics", "frame_reference", "frame", "out")

    def __init__(self, robot, q, v, dynamics, frame_reference):
        self.robot, self.q, self.v, self.dynamics = robot, q, v, dynamics
        self.frame_reference, self.frame, self.out = frame_reference, None, None


class OutputPublishers:
    """The publishers of the outputs the node advertises, and the publication of each joint state's answer.

    An output whose switch (a parameter, outputs.Output.switch) is off is neither advertised nor published; once
    switched on it stays advertised until :meth:`close`.

    Parameters
    ----------
    create : callable
        ``create(msg_type, topic) -> publisher``: the node's (a lifecycle node makes lifecycle publishers).
    destroy : callable
        ``destroy(publisher)``.
    frames : list of str
        The frames of the per-frame outputs.
    """

    def __init__(self, create, destroy, frames):
        self._create, self._destroy = create, destroy
        self.frames = list(frames)
        self._topics = output_topics(self.frames)
        self.switches = {}
        self._live = []                       # (output, frame, topic, fill) of the outputs switched on
        self._wanted = {VELOCITIES: False, REFERENCE: False}
        self.publishers = {}                  # topic -> publisher, while open
        self.state_publisher = None

    @property
    def open(self):
        """True between :meth:`advertise` and :meth:`close`."""
        return self.state_publisher is not None

    def advertise(self, switches):
        """Advertise every output that is switched on (``switches``: parameter -> bool) and ``~/state``."""
        self.state_publisher = self._create(JointState, STATE_TOPIC)
        self.switch(switches)

    def switch(self, switches):
        """Publish the outputs that ``switches`` turns on (advertising them when open) and no others."""
        self.switches = dict(switches)
        self._live = [(output, frame, topic, MESSAGES[output.message].fill) for output, frame, topic in self._topics
                      if self._on(output)]
        self._wanted = {need: any(need in output.needs for output, *_ in self._live) for need in self._wanted}
        if not self.open:
            return
        for output, _, topic, _ in self._live:
            if topic not in self.publishers:
                self.publishers[topic] = self._create(MESSAGES[output.message].cls, "~/" + topic)

    def wants(self, need):
        """True when an output that is switched on needs ``need`` (outputs.VELOCITIES, outputs.REFERENCE)."""
        return self._wanted[need]

    def publish(self, served, x, stamp, frame_id, velocities):
        """Publish the answer of one joint state: every output switched on whose needs are met, in the table's
        order, then ``~/state``.

        Parameters
        ----------
        served : Served
        x : Evaluation
        stamp : builtin_interfaces.msg.Time
            The joint state's stamp.
        frame_id : str
            The world frame.
        velocities : bool
            True when the joint state brought velocities (else v is zero).
        """
        have = {VELOCITIES: velocities, REFERENCE: x.dynamics.Y is not None}
        for output, frame, topic, fill in self._live:
            if all(have[need] for need in output.needs):
                x.frame, x.out = frame, served.buffers.get(topic)
                msg = served.messages[topic]
                fill(msg, output.value(x), stamp, frame_id)
                self.publishers[topic].publish(msg)
        self._publish_state(served, x, stamp, frame_id, velocities)

    def _publish_state(self, served, x, stamp, frame_id, velocities):
        """The stamped companion of the outputs just published: the joint state's stamp, the world frame, the
        coordinate names in v order, v (when known) and, for a fixed base, q (a floating base's q has 7 base
        entries for 6 names: the pose is odom's)."""
        msg = served.state_msg
        msg.header.stamp = stamp
        msg.header.frame_id = frame_id
        msg.position = [] if x.robot.floating_base else x.q.tolist()
        msg.velocity = x.v.tolist() if velocities else []
        self.state_publisher.publish(msg)

    def close(self):
        """Destroy every publisher."""
        for publisher in list(self.publishers.values()) + [self.state_publisher]:
            if publisher is not None:
                self._destroy(publisher)
        self.publishers, self.state_publisher = {}, None

    def _on(self, output):
        return output.switch is None or bool(self.switches.get(output.switch))
