"""dynamics_node: robot_description in; M, C, C v, g, the CoM, its Jacobian and the Slotine-Li regressor out.

Run it as ``ros2 run robot_dynamics dynamics_node --ros-args -p urdf_path:=arm7.urdf`` (full ROS install),
``dynamics_node --ros-args -p ...`` (pip install) or ``python -m robot_dynamics.ros.dynamics_node --ros-args ...``.

Robot description, the MoveIt pattern: the string parameter ``robot_description``; if empty, the file named by
``urdf_path`` (a path, ``package://pkg/path`` through the ament index, ``file:///path`` or a bundled robot's name
such as ``arm7``; a ``.xacro`` file is expanded with ``xacro_args``); if both are empty, the ``robot_description``
topic (std_msgs/String, RELIABLE + TRANSIENT_LOCAL, depth 1), as robot_state_publisher publishes it, to which the
node is subscribed while it waits. A description given by parameter that cannot be found, read or parsed, that
has no degree of freedom or whose quantities are not finite at the neutral configuration (a mass of 1e308)
stops the node at start-up with that message (exit code 2).

A new description while the node serves -- a changed model parameter, a new message on the topic -- is loaded
in the background (robot_dynamics.ros.loader: a child process, so neither the GIL nor the memory of the load is
the node's) while the current model keeps answering, and swapped in, between two joint states, once it has
passed every check of the start-up; the newest description wins (one still loading is abandoned). One that is
refused -- unreadable, not a URDF, no joints, other joints than the read-only ``joints``, non-finite, larger
than ``description_memory_limit_mb`` of address space or slower than ``description_timeout`` -- leaves the
current model serving and nothing in memory; it is logged and counted in ``DynamicsNode.refused`` and on
/diagnostics, and refused model parameters are set back to those of the model that serves (so ``ros2 param
get`` tells what serves). The node's own process runs with its start-up objects frozen out of the garbage
collector (runner.run), so no full collection pauses it for tens of milliseconds either.

``mimic:=true`` makes mimic joints follow their masters (they are then no coordinate of the outputs and may be
absent from joint_states, as for robot_state_publisher).

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
    out  ~/frame_jacobians/<frame>  std_msgs/Float64MultiArray    J_f (6, nv) of each frame of the parameter
                                                                  ``frames`` (URDF link names), in
                                                                  ``frame_reference``: [linear; angular] rows
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
first), ``x,y,z`` for the rows of J_com, ``linear_x, ..., angular_z`` for the rows of a frame Jacobian,
``<body>.<parameter>`` for the columns of Y; the stamp of the joint
state that produced them comes in ``~/state`` (and ``~/com``), published after them. The read-only parameter
``joints`` gives the joint order too.

Every output is computed on the arrival of a joint state, in one ``robot.dynamics()`` pass; the mass matrix is
published first. A message that cannot be used is skipped with a warning throttled per kind of fault, and
counted in ``DynamicsNode.skipped`` and on /diagnostics. A joint state with more than ``max_joint_state_names``
names (default 10,000) is skipped as ``joint_state_too_large``. Joint states are best effort by default (the
newest wins); over Fast DDS on one machine that carries them whole up to about 500 kB (measured: every one of
475 kB, about half of those of 1 MB), so for larger ones set the subscription reliable
(``-p qos_overrides./<ns>/joint_states.subscription.reliability:=reliable``, ``...depth:=10``): then every
1 MB joint state is answered, at 100 Hz too. No callback can end the node: an
exception (MemoryError included) is logged and counted in ``callback_errors`` and on /diagnostics
(robot_dynamics.ros.guard). The subscriptions to joint_states and odom take QoS
overrides (``-p qos_overrides./robot1/joint_states.subscription.reliability:=reliable``).

Joint states are matched by name in any order (unknown names ignored) and merged into the last known state;
nothing is published until every joint has had a position (and, for a floating base, an odometry has arrived).
A joint state without velocities counts them as zero for M and g, but C, C v and the regressor wait for
velocities. The regressor needs ``publish_regressor:=true`` and a ``~/reference``; the time derivatives of M and g
(paper 002, Prop. 6) need ``publish_derivatives:=true`` and velocities.

Frame Jacobians: ``frames:="[tcp, foot_fl]"`` (read-only; any URDF link, those merged by fixed joints included:
robot.frame_names) publishes J_f on ``~/frame_jacobians/<frame>`` for every joint state, in ``frame_reference``
(read-only): ``local_world_aligned`` (the default: the velocity of the frame's origin and the angular velocity,
in the world's axes -- what a Cartesian controller commands, MoveIt's getJacobian at the frame), ``local`` (the
frame's own axes) or ``world`` (the spatial twist at the world origin), as Robot.frame_jacobian.  A name that is
no valid ROS topic token, or no frame of the model, stops the node at start-up; a later description without one
of the frames is refused (kind ``"frames"``). ``joints`` is read-only,
so a new description must keep the joints (masses, inertias and frames may change); one with other joints is
refused and the node must be restarted to serve another robot.
"""
import collections
import difflib
import re
import sys
import threading
import time

import numpy as np
from geometry_msgs.msg import PointStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectoryPoint

from robot_dynamics.robot import Robot
from robot_dynamics.ros.conversions import (BadMessage, JointStateMerger, base_state_from_odometry,
                                            coordinate_names, multiarray_layout, reference_from_point,
                                            set_multiarray_data)
from robot_dynamics.ros.description import (SkipsBadMessages, describe, description_from_parameters, load_robot,
                                            valid_gravity)
from robot_dynamics.ros.diagnostics import Diagnostics
from robot_dynamics.ros.guard import GuardedCallbacks
from robot_dynamics.ros.loader import LOADER_NICENESS, BackgroundLoader, Refused, abbreviated, check_joints
from robot_dynamics.ros.qos import DESCRIPTION_QOS, OUTPUT_QOS, STATE_QOS
from robot_dynamics.ros.runner import run
from robot_dynamics.spatial import PARAMETER_NAMES
from robot_dynamics.urdf import URDFError, check_xml, is_xml_text

FRAME_REFERENCES = ("local_world_aligned", "local", "world")
TOPIC_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FRAME_ROWS = ["linear_x", "linear_y", "linear_z", "angular_x", "angular_y", "angular_z"]
MODEL_PARAMETERS = ("robot_description", "urdf_path", "xacro_args", "floating_base", "gravity", "mimic")
MATRIX_TOPICS = ("mass_matrix", "coriolis_matrix", "coriolis_vector", "gravity", "com_jacobian")
REGRESSOR_TOPICS = ("regressor",)
DERIVATIVE_TOPICS = ("mass_matrix_derivative", "gravity_derivative")
MAX_JOINT_STATE_NAMES = 10_000            # default of max_joint_state_names
LOADED_POLL_PERIOD = 0.02                 # s between two looks for a loaded description, while one loads


class Served:
    """What the node answers with, swapped in whole: the model and the output messages sized and labelled for it.

    Attributes
    ----------
    robot : robot_dynamics.Robot
    msgs : dict
        topic -> Float64MultiArray with its layout, reused for every joint state.
    state_msg : sensor_msgs.msg.JointState
        The stamped companion, its names the coordinates in v order.
    """

    __slots__ = ("robot", "msgs", "state_msg", "frame_jacobians")

    def __init__(self, robot, frames=()):
        """Size and label the outputs for ``robot`` and its ``frames`` (no rclpy entity: any thread may build
        one); ``frame_jacobians`` holds an (6, nv) array per frame, computed into for every joint state."""
        self.robot = robot
        nv, nb = robot.nv, robot.nbodies
        shapes = {"mass_matrix": (nv, nv), "coriolis_matrix": (nv, nv), "coriolis_vector": (nv,), "gravity": (nv,),
                  "com_jacobian": (3, nv), "regressor": (nv, 10 * nb), "mass_matrix_derivative": (nv, nv),
                  "gravity_derivative": (nv,)}
        coordinates = coordinate_names(robot)
        parameters = [f"{body}.{p}" for body in robot.body_names for p in PARAMETER_NAMES]
        labels = {"com_jacobian": (["x", "y", "z"], coordinates), "regressor": (coordinates, parameters)}
        self.msgs = {topic: Float64MultiArray(layout=multiarray_layout(shape, labels.get(topic, (coordinates,) * 2)))
                     for topic, shape in shapes.items()}
        for frame in frames:
            self.msgs[frame_topic(frame)] = Float64MultiArray(layout=multiarray_layout((6, nv),
                                                                                       (FRAME_ROWS, coordinates)))
        self.frame_jacobians = {frame: np.empty((6, nv)) for frame in frames}
        self.state_msg = JointState(name=coordinates)


def frame_topic(frame):
    """The output topic (relative to the node's name) of a frame's Jacobian."""
    return "frame_jacobians/" + frame


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


class DynamicsLogic:
    """The dynamics node's behaviour, shared by :class:`DynamicsNode` and the lifecycle node
    (robot_dynamics.ros.lifecycle_node): mixed in before GuardedCallbacks, SkipsBadMessages and an rclpy node.

    Attributes
    ----------
    robot : robot_dynamics model or None
        The model that serves; None until a description has been loaded.
    answered : int
        Joint states answered with published outputs.
    skipped : collections.Counter
        Messages skipped, per kind of fault (``"joint_state_lengths"``, ``"odom_zero_quaternion"``, ...).
    refused : collections.Counter
        Descriptions refused while serving, per kind (``"invalid"``, ``"joints"``, ``"frames"``, ``"memory"``,
        ``"timeout"``,
        ``"loader_failed"``).
    callback_errors : collections.Counter
        Exceptions raised by callbacks (see robot_dynamics.ros.guard).
    base_state : tuple or None
        ``(q_base (7,), v_base (6,), world frame id)`` from the last usable odometry (floating base only).
    reference : tuple or None
        ``(v_ref (nv,), a_ref (nv,))`` from the last usable ``~/reference``.
    """

    def _setup(self):
        """State and parameters; no publisher or subscription yet (see :meth:`_open`)."""
        self.answered = 0
        self.skipped = collections.Counter()
        self.refused = collections.Counter()
        self._served = None                       # Served, swapped whole
        self._merger = None                       # JointStateMerger of the read-only joints
        self.base_state = None
        self.reference = None
        self._topic_description = None            # the XML of the topic that serves (or last served)
        self._good_parameters = None              # the model parameters of the model that serves
        self._pubs = {}
        self._subs = []
        self._com_pub = self._state_pub = self._odom_sub = self._description_sub = self._waiting_timer = None
        self._loader = None                       # BackgroundLoader, made at the first load while serving
        self._load_generation = 0                 # of the newest load requested (or cancelled)
        self._loaded = None                       # (request, Served or Refused, warnings), for _on_loaded
        self._loaded_lock = threading.Lock()
        self._reverting = False
        self._declare_parameters()
        self._frame_prefix = self.get_parameter("frame_prefix").value
        self._publish_regressor = self.get_parameter("publish_regressor").value
        self._publish_derivatives = self.get_parameter("publish_derivatives").value
        self._max_names = self.get_parameter("max_joint_state_names").value
        self._frames = check_frame_names(self.get_parameter_or("frames").value or [])   # unset: None
        self._frame_reference = self.get_parameter("frame_reference").value
        self.diagnostics = Diagnostics(self, "dynamics of the joint states")
        self._loaded_timer = None                 # polls _loaded while loading (EventsExecutor: no guard conditions)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)

    @property
    def robot(self):
        """The model that serves (None before the first description)."""
        served = self._served
        return None if served is None else served.robot

    @property
    def loading(self):
        """True while a new description is loading in the background."""
        return self._loader is not None and self._loader.busy

    def _open(self):
        """Advertise the outputs and subscribe to the inputs."""
        self._advertise(MATRIX_TOPICS + tuple(frame_topic(frame) for frame in self._frames))
        self._set_optional_outputs(self._publish_regressor, self._publish_derivatives)
        self._com_pub = self._create_output(PointStamped, "~/com")
        self._state_pub = self._create_output(JointState, "~/state")
        self._subs.append(self.create_subscription(
            JointState, "joint_states", self._on_joint_state, STATE_QOS,
            qos_overriding_options=QoSOverridingOptions.with_default_policies()))
        self._subs.append(self.create_subscription(JointTrajectoryPoint, "~/reference", self._on_reference,
                                                   STATE_QOS))
        if self.robot is not None:
            self._subscribe_odometry(self.robot)

    def _close(self):
        """Undo :meth:`_open`: no output, no input but the robot_description topic."""
        for entity in self._subs + ([self._odom_sub] if self._odom_sub is not None else []):
            self.destroy_subscription(entity)
        for publisher in list(self._pubs.values()) + [self._com_pub, self._state_pub]:
            if publisher is not None:
                self._destroy_output(publisher)
        self._pubs, self._subs = {}, []
        self._com_pub = self._state_pub = self._odom_sub = None

    def _create_output(self, msg_type, topic):
        return self.create_publisher(msg_type, topic, OUTPUT_QOS)

    def _destroy_output(self, publisher):
        self.destroy_publisher(publisher)

    @property
    def _active(self):
        """True when joint states are answered (the lifecycle node: only while active)."""
        return True

    def _advertise(self, topics):
        for topic in topics:
            if topic not in self._pubs:
                self._pubs[topic] = self._create_output(Float64MultiArray, "~/" + topic)

    def _set_optional_outputs(self, regressor, derivatives):
        """Advertise the regressor and the derivatives when asked for: nothing is advertised that is not published."""
        self._publish_regressor, self._publish_derivatives = regressor, derivatives
        self._advertise((REGRESSOR_TOPICS if regressor else ()) + (DERIVATIVE_TOPICS if derivatives else ()))

    def _teardown(self):
        """Abandon a load in progress and end the loader's thread (before the node is destroyed)."""
        if self._loader is not None:
            self._loader.close()
            self._loader = None

    # --- parameters --------------------------------------------------------------------------------------

    def _declare_parameters(self):
        self.declare_parameter("robot_description", "", describe(
            "URDF XML of the robot. If empty, urdf_path is used; if that is empty too, the robot_description "
            "topic (transient local). Setting it loads the model in the background."))
        self.declare_parameter("urdf_path", "", describe(
            "URDF file used when robot_description is empty: a path, package://pkg/path, file:///path or a bundled "
            "robot's name (arm7); a .xacro file is expanded with xacro_args. Setting it loads the model in the "
            "background."))
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
        self.declare_parameter("max_joint_state_names", MAX_JOINT_STATE_NAMES, describe(
            "A joint state with more names is skipped (joint_state_too_large).", read_only=True))
        self.declare_parameter("description_memory_limit_mb", 2048, describe(
            "Address space [MB] of the process that loads a new description while the node serves (0: no limit); "
            "a description that needs more is refused.", read_only=True))
        self.declare_parameter("description_timeout", 120.0, describe(
            "Seconds a new description may take to load while the node serves; a slower one is refused.",
            read_only=True))
        self.declare_parameter("frames", Parameter.Type.STRING_ARRAY, describe(
            "Frames (URDF link names, robot.frame_names) whose Jacobian J_f (6 x nv) is published on "
            "~/frame_jacobians/<frame> for every joint state.", read_only=True))
        self.declare_parameter("frame_reference", FRAME_REFERENCES[0], describe(
            "Reference of the frame Jacobians: local_world_aligned (velocity of the frame's origin and angular "
            "velocity, world axes), local (the frame's axes) or world (spatial twist at the world origin).",
            read_only=True))
        if self.get_parameter("frame_reference").value not in FRAME_REFERENCES:
            raise ValueError(f"parameter frame_reference must be one of {', '.join(FRAME_REFERENCES)}, got "
                             f"{self.get_parameter('frame_reference').value!r}")
        gravity = self.get_parameter("gravity").value
        if not valid_gravity(gravity):
            raise ValueError(f"parameter gravity must be three finite doubles, got {gravity}")

    def _on_set_parameters(self, params):
        """Validate a parameter change: gravity, and a robot_description's XML (not XML, entity declarations, no
        <robot>, over the size limits: urdf.check_xml); the model loads after it is accepted
        (_after_set_parameters), and what only loading can find is refused then."""
        new = {p.name: p.value for p in params}
        if "gravity" in new and not valid_gravity(new["gravity"]):
            return SetParametersResult(successful=False, reason="gravity must be three finite doubles")
        # what the XML alone refuses, refused now (the rest while loading); a revert's value is known good
        if new.get("robot_description") and not self._reverting:
            if not is_xml_text(new["robot_description"]):
                return SetParametersResult(successful=False, reason="robot_description is not XML (it must start "
                                                                    "with '<'; the path of a file goes in urdf_path)")
            try:
                check_xml(new["robot_description"])
            except URDFError as err:
                return SetParametersResult(successful=False, reason=f"robot_description: {err}")
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, params):
        names = {p.name for p in params}
        if names & {"publish_regressor", "publish_derivatives"}:
            self._set_optional_outputs(self.get_parameter("publish_regressor").value,
                                       self.get_parameter("publish_derivatives").value)
        if names & set(MODEL_PARAMETERS) and not self._reverting and self._configured:
            self._load_from_parameters()

    @property
    def _configured(self):
        """True when descriptions are loaded (the lifecycle node: from configure to cleanup)."""
        return True

    def _model_config(self):
        """The parameters of the model; an unset ``xacro_args`` is None."""
        return {name: self.get_parameter_or(name).value for name in MODEL_PARAMETERS}

    # --- the robot description ---------------------------------------------------------------------------

    def _load_initial_description(self):
        """Load the description of the parameters now (ValueError, naming the fault, when it cannot serve), else
        the last description of the topic, else subscribe to the topic and wait."""
        config = self._model_config()
        xml, source = description_from_parameters(config["robot_description"], config["urdf_path"],
                                                  config["xacro_args"])
        if xml is None and self._topic_description is not None:
            xml, source = self._topic_description, "topic robot_description"
        if xml is None:
            self._subscribe_description()
            return
        robot = load_robot(self.get_logger(), xml, config["floating_base"], config["gravity"], config["mimic"],
                           source, regressor=self._publish_regressor)
        self._install(Served(robot, self._frames), source, config)

    def _load_from_parameters(self):
        """The model parameters changed: load their description in the background (or the topic's)."""
        config = self._model_config()
        if config["robot_description"] or config["urdf_path"]:
            self._request_load(None, None, config, "parameters")
        elif self._topic_description is not None:
            self._request_load(self._topic_description, "topic robot_description", config, "parameters")
        else:
            self._cancel_load()
            self._subscribe_description()

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
        if not self._configured:
            self._topic_description = msg.data          # the lifecycle node loads it on configure
            return
        self._request_load(msg.data, "topic robot_description", config, "topic")

    def _request_load(self, xml, source, config, origin):
        """Load a description in the background (see robot_dynamics.ros.loader); the newest request wins."""
        if self._loader is None:
            self._loader = BackgroundLoader(self._on_load_done,
                                            self.get_parameter("description_memory_limit_mb").value,
                                            self.get_parameter("description_timeout").value)
        if self._loaded_timer is None:
            self._loaded_timer = self.create_timer(LOADED_POLL_PERIOD, self._on_loaded)
        self._loaded_timer.reset()
        self._load_generation += 1
        joints = list(self.get_parameter("joints").value) if self.has_parameter("joints") else None
        self._loader.request(dict(config, xml=xml, source=source, origin=origin, regressor=self._publish_regressor,
                                  joints=joints, generation=self._load_generation,
                                  niceness=LOADER_NICENESS if self.robot is not None else 0))

    def _cancel_load(self):
        self._load_generation += 1
        if self._loader is not None:
            self._loader.cancel()

    def _on_load_done(self, request, outcome):
        """On the loader's thread: wrap the loaded model for serving, then hand it to the executor (_on_loaded)."""
        warnings = ()
        if not isinstance(outcome, Refused):
            model, warnings, request["source"] = outcome
            try:
                outcome = Served(Robot(model), self._frames)
            except MemoryError:
                outcome = Refused("memory", f"the model from {request['source']} does not fit in memory")
            except Exception as err:                        # any failure to build the model refuses it
                outcome = Refused("invalid", f"the model from {request['source']}: {type(err).__name__}: {err}")
        with self._loaded_lock:
            self._loaded = (request, outcome, warnings)

    def _on_loaded(self):
        """In the executor, every LOADED_POLL_PERIOD while loading: swap in the model that has loaded, or refuse it."""
        with self._loaded_lock:
            loaded, self._loaded = self._loaded, None
        if loaded is None:
            if not self._loader.busy:
                self._loaded_timer.cancel()
            return
        request, outcome, warnings = loaded
        if request["generation"] != self._load_generation:
            return                                          # superseded while it was handed over
        for warning in warnings:
            self.get_logger().warning(warning)
        if not isinstance(outcome, Refused):
            try:
                self._install(outcome, request["source"], request)
            except Refused as err:
                outcome = err
            else:
                if request["origin"] == "topic":
                    self._topic_description = request["xml"]
                return
        self._refuse(request, outcome)

    def _refuse(self, request, err):
        """Log the refusal, set the parameters back, then count it: who sees the count sees the parameters back."""
        kept = "; the last good model keeps serving" if self.robot is not None else ""
        self.get_logger().error(f"robot description from {request['source'] or 'the parameters'} refused "
                                f"({err.kind}): {err}{kept}")
        if request["origin"] == "parameters" and self._good_parameters is not None:
            self._revert_parameters()
        self.refused[err.kind] += 1

    def _revert_parameters(self):
        """Set the model parameters back to those of the model that serves."""
        changed = [Parameter(name, Parameter.Type.STRING_ARRAY, []) if value is None else Parameter(name, value=value)
                   for name, value in self._good_parameters.items() if self._model_config()[name] != value]
        self._reverting = True
        try:
            self.set_parameters(changed)
        finally:
            self._reverting = False

    def _install(self, served, source, config):
        """Make ``served`` the model; declare ``joints`` with the first one.

        ``joints`` is read-only: consumers read it once to interpret every array. A later description must
        therefore keep the joint names and their order (masses, inertias, frames may change); a description
        with other joints is refused (loader.Refused, a ValueError) and the node must be restarted to serve
        another robot.
        """
        robot = served.robot
        missing = [frame for frame in self._frames if frame not in robot.model.frames]
        if missing:
            names = list(robot.frame_names)
            close = difflib.get_close_matches(missing[0], names, n=5, cutoff=0.6)
            raise Refused("frames", f"the description from {source} has no frame {missing[0]!r} of the parameter "
                                    "frames" + (f" (did you mean {', '.join(map(repr, close))}?)" if close else
                                                f"; its frames: {abbreviated(names)}"))
        if self.has_parameter("joints"):
            check_joints(robot, self.get_parameter("joints").value, source)
        else:
            self.declare_parameter("joints", list(robot.joint_names), describe(
                "Read-only. The joints in the order of every published vector and matrix (after the six base "
                "velocities when floating_base is true).", read_only=True))
            self._merger = JointStateMerger(robot.joint_names)
        old = self.robot
        if old is None or old.nv != robot.nv:
            self.reference = None
        if old is None or old.floating_base != robot.floating_base or old.root_link != robot.root_link:
            self.base_state = None
        if self._pubs:
            self._subscribe_odometry(robot)
        self._served = served                               # the swap: callbacks read _served once
        self._good_parameters = {name: config[name] for name in MODEL_PARAMETERS}
        if self._waiting_timer is not None:
            self.destroy_timer(self._waiting_timer)
            self._waiting_timer = None
        self.get_logger().info(f"model from {source}: {len(robot.joint_names)} joints, nv = {robot.nv}, "
                               f"floating_base = {robot.floating_base}")

    def _subscribe_odometry(self, robot):
        if robot.floating_base and self._odom_sub is None:
            self._odom_sub = self.create_subscription(
                Odometry, self.get_parameter("odom_topic").value, self._on_odom, STATE_QOS,
                qos_overriding_options=QoSOverridingOptions.with_default_policies())

    def _log_waiting(self):
        if self.robot is None and self._description_sub is not None:
            self.get_logger().info(f"waiting for robot_description on '{self._description_sub.topic_name}'",
                                   throttle_duration_sec=5.0)

    # --- inputs ------------------------------------------------------------------------------------------

    def _on_odom(self, msg):
        robot = self.robot
        if robot is None or not robot.floating_base:
            return
        try:
            q_base, v_base = base_state_from_odometry(msg, self._frame_prefix + robot.root_link)
        except BadMessage as err:
            self._skip(err)
            return
        self.base_state = (q_base, v_base, msg.header.frame_id or "odom")

    def _on_reference(self, msg):
        robot = self.robot
        if robot is None:
            return
        try:
            self.reference = reference_from_point(msg, robot.nv)
        except BadMessage as err:
            self._skip(err)

    def _on_joint_state(self, msg):
        self.diagnostics.received()
        served = self._served
        if served is None or not self._active:
            self._log_waiting()
            return
        robot = served.robot
        start = time.perf_counter()
        try:
            if len(msg.name) > self._max_names:
                raise BadMessage("joint_state_too_large", f"joint_states has {len(msg.name)} names, more than "
                                                          f"max_joint_state_names = {self._max_names}")
            self._merger.merge(msg)
        except BadMessage as err:
            self._skip(err)
            return
        q, v, frame_id = self._state(robot)
        if q is None:
            return
        velocities = self._merger.velocities_known
        reference = self.reference
        regressor = self._publish_regressor and velocities and reference is not None and len(reference[0]) == robot.nv
        try:
            result = robot.dynamics(q, v, *reference) if regressor else robot.dynamics(q, v)
        except ValueError as err:
            self._skip(BadMessage("state_rejected", f"the model rejected the state: {err}"))
            return
        self._publish(served, result, v, velocities, regressor, msg.header.stamp, frame_id)
        if self._publish_derivatives and velocities:          # along q' = v: Mdot = C + C^T (paper 002,
            self._publish_array(served, "mass_matrix_derivative", result.C + result.C.T)   # remark 5), gdot in O(n)
            self._publish_array(served, "gravity_derivative", robot.gravity_derivative(q, v))
        for frame, J in served.frame_jacobians.items():
            robot.frame_jacobian(q, frame, self._frame_reference, out=J)
            self._publish_array(served, frame_topic(frame), J)
        self._publish_state(served, msg.header.stamp, frame_id, q, v, velocities)
        self.answered += 1
        self.diagnostics.answered(time.perf_counter() - start)

    def _state(self, robot):
        """``(q, v, world frame)`` of the merged joint state (and the last odom); Nones while odom is missing."""
        if not robot.floating_base:
            return self._merger.q, self._merger.v, self._frame_prefix + robot.root_link
        base_state = self.base_state
        if base_state is None:
            self.get_logger().info(f"waiting for odometry on '{self._odom_sub.topic_name}'",
                                   throttle_duration_sec=5.0)
            return None, None, None
        q_base, v_base, frame_id = base_state
        return np.concatenate([q_base, self._merger.q]), np.concatenate([v_base, self._merger.v]), frame_id

    # --- outputs -----------------------------------------------------------------------------------------

    def _publish(self, served, result, v, velocities, regressor, stamp, frame_id):
        """Publish M first (what latency-sensitive consumers wait for), then the rest."""
        self._publish_array(served, "mass_matrix", result.M)
        if velocities:
            self._publish_array(served, "coriolis_matrix", result.C)
            self._publish_array(served, "coriolis_vector", result.C @ v)
        self._publish_array(served, "gravity", result.g)
        self._publish_array(served, "com_jacobian", result.J_com)
        if regressor:
            self._publish_array(served, "regressor", result.Y)
        com = PointStamped()
        com.header.stamp = stamp
        com.header.frame_id = frame_id
        com.point.x, com.point.y, com.point.z = (float(c) for c in result.com)
        self._com_pub.publish(com)

    def _publish_state(self, served, stamp, frame_id, q, v, velocities):
        """The stamped companion of the arrays just published: the joint state's stamp, the world frame, the
        coordinate names in v order, v (when known) and, for a fixed base, q (a floating base's q has 7 base
        entries for 6 names: the pose is odom's)."""
        msg = served.state_msg
        msg.header.stamp = stamp
        msg.header.frame_id = frame_id
        msg.position = [] if served.robot.floating_base else q.tolist()
        msg.velocity = v.tolist() if velocities else []
        self._state_pub.publish(msg)

    def _publish_array(self, served, topic, a):
        msg = served.msgs[topic]
        set_multiarray_data(msg, a)
        self._pubs[topic].publish(msg)


class DynamicsNode(DynamicsLogic, GuardedCallbacks, SkipsBadMessages, Node):
    """The dynamics node (see the module docstring).

    Parameters
    ----------
    node_name : str
        Default name, overridden by ``--ros-args -r __node:=...``.
    **kwargs
        Passed to :class:`rclpy.node.Node` (``context``, ``parameter_overrides``, ``cli_args``, ...).
    """

    def __init__(self, node_name="dynamics_node", **kwargs):
        super().__init__(node_name, **kwargs)
        self._setup()
        self._open()
        try:
            self._load_initial_description()
        except Exception:
            self.destroy_node()
            raise

    def destroy_node(self):
        """Let running callbacks return, abandon a load in progress, then destroy."""
        self.quiesce()
        self._teardown()
        return super().destroy_node()


def main(args=None):
    """Console entry point: ``dynamics_node --ros-args -p name:=value ...``."""
    return run(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())
