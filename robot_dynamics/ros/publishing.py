"""dynamics_node's outputs at work: the messages sized and labelled for a model, the publishers, and a joint
state's answer published in the order of the table (robot_dynamics.ros.outputs).

Self-describing arrays: std_msgs has no stamped matrix (and rosidl generation of a custom interface package is
not available to pip-installed ROS 2), so each Float64MultiArray's ``layout.dim[i].label`` names the entries
along that axis, comma-separated (:func:`axis_labels`), and the stamp of the joint state that produced them
comes in ``~/state`` (and ``~/com``), published after them.
"""
from collections import namedtuple

import array

import numpy as np
from geometry_msgs.msg import PointStamped, WrenchStamped
from sensor_msgs.msg import JointState
from rclpy.event_handler import PublisherEventCallbacks
from std_msgs.msg import Bool, Float64MultiArray

from robot_dynamics.ros.conversions import coordinate_names, multiarray_layout, set_multiarray_data
from robot_dynamics.ros.observing import Observing
from robot_dynamics.ros.outputs import (BOOL, FLOAT64_ARRAY, JOINT_STATE, OBSERVED, OUTPUTS, POINT, REFERENCE,
                                        THRESHOLDS, VELOCITIES, WRENCH)
from robot_dynamics.ros.qos import LATCHED_QOS, OUTPUT_QOS
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


def _array(output, robot, frame_id):
    symbols, numbers = output.shape_symbols(), sizes(robot)
    shape = tuple(numbers.get(s, s) for s in symbols)
    return Float64MultiArray(layout=multiarray_layout(shape, [axis_labels(s, robot) for s in symbols]))


def _fill_array(msg, value, stamp, frame_id):
    set_multiarray_data(msg, value)


def _fill_point(msg, value, stamp, frame_id):
    msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.point.x, msg.point.y, msg.point.z = (float(c) for c in value)


def _joint_efforts(output, robot, frame_id):
    return JointState(name=coordinate_names(robot))


def _fill_efforts(msg, value, stamp, frame_id):
    msg.header.stamp = stamp
    msg.effort = array.array("d", np.ascontiguousarray(value, dtype=np.float64).tobytes())


def _wrench(output, robot, frame_id):
    msg = WrenchStamped()
    msg.header.frame_id = frame_id
    return msg


def _fill_wrench(msg, value, stamp, frame_id):
    msg.header.stamp = stamp
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(c) for c in value)


def _fill_bool(msg, value, stamp, frame_id):
    msg.data = bool(value)


# How each message type of outputs.py is made for a model (make(output, robot, frame id): the frame id of a
# per-frame output is frame_prefix + its frame) and filled with a value (fill(msg, value, stamp, world frame)); an
# output of another type needs its entry here.
MessageType = namedtuple("MessageType", "cls make fill")
MESSAGES = {FLOAT64_ARRAY: MessageType(Float64MultiArray, _array, _fill_array),
            POINT: MessageType(PointStamped, lambda output, robot, frame_id: PointStamped(), _fill_point),
            JOINT_STATE: MessageType(JointState, _joint_efforts, _fill_efforts),
            WRENCH: MessageType(WrenchStamped, _wrench, _fill_wrench),
            BOOL: MessageType(Bool, lambda output, robot, frame_id: Bool(), _fill_bool)}


def output_topics(frames):
    """``(output, frame, topic)`` of every output of the table, a per-frame output once per frame of
    ``frames[output.frames]`` (``frames``: parameter -> list of frames; ``frame`` None for the others), in the
    table's order."""
    return [(output, frame, output.topic_of(frame)) for output in OUTPUTS
            for frame in (frames.get(output.frames, ()) if output.per_frame else (None,))]


class Served:
    """What the node answers with, swapped in whole: the model, the output messages sized and labelled for it and
    its momentum observer (no rclpy entity: any thread may build one).

    Parameters
    ----------
    robot : robot_dynamics.Robot
    frames : dict
        Parameter -> the frames of the per-frame outputs that it lists (``{"frames": [...], "wrench_frames":
        [...]}``).
    frame_prefix : str
        Of the per-frame messages' frame id (frame_prefix + the frame).
    observer : observing.ObserverSettings, optional
        The momentum observer's settings (None: no observer).

    Attributes
    ----------
    robot : robot_dynamics.Robot
    messages : dict
        topic -> the message of that output, reused for every joint state.
    state_msg : sensor_msgs.msg.JointState
        The stamped companion, its names the coordinates in v order.
    observing : observing.Observing or None
        The momentum observer of this model; None for a floating base (or without settings).
    """

    __slots__ = ("robot", "messages", "state_msg", "buffers", "observing")

    def __init__(self, robot, frames=None, frame_prefix="", observer=None):
        frames = frames or {}
        self.robot = robot
        self.messages = {topic: MESSAGES[output.message].make(output, robot, frame_prefix + (frame or ""))
                         for output, frame, topic in output_topics(frames)}
        self.state_msg = JointState(name=coordinate_names(robot))
        numbers = sizes(robot)                # a per-frame output is computed into its own array (out=)
        self.buffers = {topic: np.empty(tuple(numbers.get(s, s) for s in output.shape_symbols()))
                        for output, frame, topic in output_topics(frames) if frame is not None}
        self.observing = Observing(robot, observer) if observer is not None and not robot.floating_base else None


class Evaluation:
    """What the outputs of one joint state are computed from: the ``x`` of outputs.Output.value.

    Attributes
    ----------
    robot : robot_dynamics.Robot
    q, v : ndarray
        The state (a floating base's pose and twist from odometry first).
    reference : tuple or None
        ``(v_r, a_r)`` of ``~/reference`` for the regressor, or None.
    dynamics : robot_dynamics.Dynamics
        ``robot.dynamics(q, v[, v_r, a_r])``, computed when first read: a joint state none of whose outputs due
        reads it (the observer's alone, say) does without it. A ValueError when the model rejects the state.
    frame_reference : str
        The parameter ``frame_reference``.
    frame : str or None
        The frame of the per-frame output being published.
    out : ndarray or None
        The array a per-frame output is computed into (Served.buffers).
    observer : observing.Observing or None
        The momentum observer, when it observed this joint state.
    """

    __slots__ = ("robot", "q", "v", "reference", "_dynamics", "frame_reference", "frame", "out", "observer")

    def __init__(self, robot, q, v, reference, frame_reference, observer=None):
        self.robot, self.q, self.v, self.reference, self._dynamics = robot, q, v, reference, None
        self.frame_reference, self.frame, self.out = frame_reference, None, None
        self.observer = observer

    @property
    def dynamics(self):
        """``robot.dynamics(q, v[, v_r, a_r])``, computed when first read."""
        if self._dynamics is None:
            self._dynamics = self.robot.dynamics(self.q, self.v, *(self.reference or ()))
        return self._dynamics


class OutputPublishers:
    """The publishers of the outputs the node advertises, and the publication of each joint state's answer.

    An output whose switch (a parameter, outputs.Output.switch) is off is neither advertised nor published; once
    switched on it stays advertised until :meth:`close`. A latched output (outputs.Output.latched) is published
    when its value differs from the last it published (qos.LATCHED_QOS), the others with qos.OUTPUT_QOS.

    Lazily: an output that is not latched (and ``~/state``) is computed and published only while its topic has a
    subscriber, as its publisher's *matched* events tell (rmw's publication-matched status, kept in
    :attr:`listened`). A message published before the publisher matched a subscriber reaches nobody (a volatile
    topic keeps none for late subscribers), so a subscriber receives what it did before; a node whose consumers
    take the mass matrix alone no longer spends time on the wrench nobody reads (each publication costs ~10 us,
    a wrench ~30 us), and one whose consumers take the observer's outputs alone not on robot.dynamics (M, C, g,
    J_com: Evaluation.dynamics is computed when an output due first reads it). A latched output is published
    whether or not anyone listens: it is kept for late subscribers.

    Parameters
    ----------
    create : callable
        ``create(msg_type, topic, qos, event_callbacks=...) -> publisher``: the node's (a lifecycle node makes
        lifecycle publishers).
    destroy : callable
        ``destroy(publisher)``.
    frames : dict
        Parameter -> the frames of the per-frame outputs it lists (Served's).
    """

    def __init__(self, create, destroy, frames):
        self._create, self._destroy = create, destroy
        self.frames = dict(frames)
        self._topics = output_topics(self.frames)
        self.switches = {}
        self._live = []                       # (output, frame, topic, fill) of the outputs switched on
        self._wanted = dict.fromkeys((VELOCITIES, REFERENCE, OBSERVED, THRESHOLDS), False)
        self.publishers = {}                  # topic -> publisher, while open
        self.latched = {}                     # topic -> the value a latched output last published
        self.listened = {}                    # topic (STATE_TOPIC for ~/state) -> True while it has a subscriber
        self.state_publisher = None

    @property
    def open(self):
        """True between :meth:`advertise` and :meth:`close`."""
        return self.state_publisher is not None

    def advertise(self, switches):
        """Advertise every output that is switched on (``switches``: parameter -> bool) and ``~/state``."""
        self.state_publisher = self._publisher(JointState, STATE_TOPIC, OUTPUT_QOS)
        self.switch(switches)

    def _publisher(self, msg_type, topic, qos):
        """A publisher of ``topic`` whose matched events keep ``listened[topic]`` (as it starts: its count)."""
        def matched(info):
            self.listened[topic] = info.current_count > 0
        publisher = self._create(msg_type, topic if topic.startswith("~/") else "~/" + topic, qos,
                                 event_callbacks=PublisherEventCallbacks(matched=matched))
        self.listened[topic] = publisher.get_subscription_count() > 0
        return publisher

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
                self.publishers[topic] = self._publisher(MESSAGES[output.message].cls, topic,
                                                         LATCHED_QOS if output.latched else OUTPUT_QOS)

    def wants(self, need):
        """True when an output that is switched on needs ``need`` (outputs.VELOCITIES, REFERENCE, OBSERVED, ...)."""
        return self._wanted[need]

    def answer(self, served, x, velocities):
        """The values of one joint state's outputs due: each switched on whose needs are met and that somebody
        listens to (or latched, and changed), in the table's order, as ``[(output, topic, fill, value)]``.

        Computing them is the state's check: a ValueError (robot.dynamics', another quantity's: the model rejects
        the state) comes before anything is published. ``x.dynamics`` is computed only when an output due reads it.

        Parameters
        ----------
        served : Served
        x : Evaluation
        velocities : bool
            True when the joint state brought velocities (else v is zero).
        """
        observed = x.observer is not None
        have = {VELOCITIES: velocities, REFERENCE: x.reference is not None, OBSERVED: observed,
                THRESHOLDS: observed and x.observer.collision is not None}
        listened, values = self.listened, []
        for output, frame, topic, fill in self._live:
            if (output.latched or listened[topic]) and all(have[need] for need in output.needs):
                x.frame, x.out = frame, served.buffers.get(topic)
                value = output.value(x)
                if not (output.latched and topic in self.latched and self.latched[topic] == value):
                    values.append((output, topic, fill, value))
        return values

    def publish(self, served, x, answer, stamp, frame_id, velocities):
        """Publish the answer of one joint state (:meth:`answer`), then ``~/state`` if somebody listens.

        Parameters
        ----------
        served : Served
        x : Evaluation
        answer : list
            :meth:`answer`'s.
        stamp : builtin_interfaces.msg.Time
            The joint state's stamp.
        frame_id : str
            The world frame.
        velocities : bool
            True when the joint state brought velocities (else v is zero).
        """
        for output, topic, fill, value in answer:
            if output.latched:
                self.latched[topic] = value
            msg = served.messages[topic]
            fill(msg, value, stamp, frame_id)
            self.publishers[topic].publish(msg)
        if self.listened[STATE_TOPIC]:
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
        self.publishers, self.state_publisher, self.latched, self.listened = {}, None, {}, {}

    def _on(self, output):
        return output.switch is None or bool(self.switches.get(output.switch))
