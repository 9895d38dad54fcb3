"""A node's robot description, loaded, checked, swapped in, refused and reverted one way: :class:`DescriptionSwap`.

Every node of the package that serves a robot holds one: dynamics_node and lifecycle_dynamics_node, and, through
robot_node.RobotNode, the controllers and the simulator. The description comes as in MoveIt
(robot_dynamics.ros.description): the parameter ``robot_description``, else the file ``urdf_path``, else the
``robot_description`` topic. The swap

- declares the description's parameters and refuses on the spot a ``robot_description`` whose XML alone is at
  fault (not XML, entity declarations, no ``<robot>``, over the size limits: urdf.check_xml): the parameter call
  fails and the value stays;
- loads a description given by parameter at start-up, in the node's own process (:meth:`load_initial`: a
  ValueError naming the fault when it cannot serve, which stops the node, exit code 2), else subscribes to the
  topic and says that it waits;
- loads every later description in the background (robot_dynamics.ros.loader: a child process, so neither the
  GIL nor the memory of the load is the node's), the newest winning (one still loading is abandoned), and swaps
  it in on the executor's thread, between two callbacks, once it has passed the checks of the start-up, the
  joints it must have and the node's own (``install``);
- refuses one that fails: logged, counted in :attr:`refused` per kind (loader.Refused), and model parameters set
  back to those of the model that serves, so ``ros2 param get`` tells what serves. The model that serves keeps
  serving; a refused one leaves nothing in memory.

A *hot* swap (dynamics_node) takes every new description: a changed model parameter, a new message on the topic.
One that is not (RobotNode: a controller's model, an adaptive estimate, must not change under it) has read-only
parameters and keeps the first description that loads.
"""
import collections
import threading

from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from std_msgs.msg import String

from robot_dynamics.loading import is_mjcf
from robot_dynamics.robot import Robot
from robot_dynamics.ros.description import (WARN_PERIOD, describe, description_from_parameters, load_robot,
                                            valid_gravity)
from robot_dynamics.ros.loader import LOADER_NICENESS, BackgroundLoader, Refused, check_joints
from robot_dynamics.ros.qos import DESCRIPTION_QOS
from robot_dynamics.urdf import URDFError, check_xml, is_xml_text

# The parameters a model is loaded from; a node that does not declare one gets its value from FIXED.
MODEL_PARAMETERS = ("robot_description", "urdf_path", "xacro_args", "floating_base", "gravity", "mimic",
                    "drives_file")
FIXED = {"floating_base": False, "mimic": False, "drives_file": ""}
TOPIC = "topic robot_description"         # the source of a description from the topic, as messages name it
LOADED_POLL_PERIOD = 0.02                 # s between two looks for a loaded description, while one loads
WAITING_LOG_PERIOD = 5.0                  # s between two "waiting for robot_description"
MEMORY_LIMIT_MB = 2048                    # default of description_memory_limit_mb
TIMEOUT = 120.0                           # default of description_timeout, s


class Described:
    """What a node with a DescriptionSwap (``self.description``) says of it: mixed into dynamics_node's
    DynamicsLogic and robot_node's RobotNode."""

    @property
    def robot(self):
        """The model that serves (robot_dynamics.Robot); None before the first description."""
        return self.description.robot

    @property
    def refused(self):
        """Descriptions refused, per kind (DescriptionSwap.refused)."""
        return self.description.refused

    @property
    def loading(self):
        """True while a description is loading in the background."""
        return self.description.loading


class DescriptionSwap:
    """The robot description of ``node`` (see the module docstring).

    Parameters
    ----------
    node : rclpy.node.Node
        With guarded callbacks (robot_dynamics.ros.guard). The swap declares the description's parameters on it
        and creates its subscription and timers.
    install : callable
        ``install(served, source)``, on the executor's thread: prepare the node for ``served``; raise ValueError
        (a loader.Refused names its kind, anything else is ``"invalid"``) to refuse the description. The swap
        makes ``served`` :attr:`served` once it has returned.
    prepare : callable, optional
        ``prepare(robot) -> served``: what the node serves of a loaded model (default: the model itself), made
        where the model was loaded -- for a background load on the loader's thread, so the executor only swaps.
    hot : bool
        True: every new description is loaded and swapped in, the model parameters may change (dynamics_node).
        False: the parameters are read-only and the first description that loads is kept.
    regressor : callable, optional
        ``regressor()`` -> True when a model must also give a finite Slotine-Li regressor at the neutral
        configuration (description.check_finite).
    enabled : bool
        See :attr:`enabled`.

    Attributes
    ----------
    served, robot : object, robot_dynamics.Robot
        What serves and its model, swapped together on the executor's thread; None before the first description.
    refused : collections.Counter
        Descriptions refused, per kind (``"invalid"``, ``"joints"``, ``"frames"``, ``"memory"``, ``"timeout"``,
        ``"loader_failed"``).
    required_joints : list of str or None
        The joints, in order, that a new description must have (None: any); the node sets them.
    enabled : bool
        False while the node takes no description (an unconfigured lifecycle node): a message on the topic is
        kept for :meth:`load_initial`, a changed parameter waits for it.
    loader : robot_dynamics.ros.loader.BackgroundLoader or None
        Made with the first background load.
    """

    def __init__(self, node, install, prepare=None, hot=True, regressor=lambda: False, enabled=True):
        self.node = node
        self.hot = hot
        self.served = self.robot = None
        self.refused = collections.Counter()
        self.required_joints = None
        self.enabled = enabled
        self.loader = None
        self._install = install
        self._prepare = prepare or (lambda robot: robot)
        self._regressor = regressor
        self._subscription = None
        self._waiting_timer = None
        self._loaded_timer = None             # polls _loaded while loading (EventsExecutor: no guard conditions)
        self._generation = 0                  # of the newest load requested (or cancelled)
        self._loaded = None                   # (request, (robot, served) or Refused, warnings), for _on_loaded
        self._loaded_lock = threading.Lock()
        self._topic_xml = None                # the topic's description that serves (or last served, or waits)
        self._good = None                     # the model parameters of the model that serves
        self._reverting = False
        self._declare_parameters()
        if hot:                               # after declaring: rclpy calls these for declarations too
            node.add_on_set_parameters_callback(self._check_parameters)
            node.add_post_set_parameters_callback(self._parameters_set)

    @property
    def loading(self):
        """True while a description is loading in the background."""
        return self.loader is not None and self.loader.busy

    def config(self):
        """The model parameters: those the node declares (an unset ``xacro_args`` is None; sim_node declares its
        own floating_base), FIXED for the others."""
        return {name: self.node.get_parameter_or(name).value if self.node.has_parameter(name) else FIXED[name]
                for name in MODEL_PARAMETERS}

    # --- what the node calls ---------------------------------------------------------------------------------

    def load_initial(self):
        """Load the description of the parameters now, in this process, else the topic's last one (kept while not
        :attr:`enabled`), else subscribe to the topic and wait. ValueError, naming the fault, when the description
        cannot serve."""
        config = self.config()
        xml, source = description_from_parameters(config["robot_description"], config["urdf_path"],
                                                  config["xacro_args"])
        if xml is None and self._topic_xml is not None:
            xml, source = self._topic_xml, TOPIC
        if xml is None:
            self._wait()
            return
        robot = load_robot(self.node.get_logger(), xml, config["floating_base"], config["gravity"], config["mimic"],
                           source, regressor=self._regressor(), drives=config["drives_file"])
        self._swap_in(robot, self._prepare(robot), source, config)

    def listen(self):
        """Subscribe to the robot_description topic (once)."""
        if self._subscription is None:
            self._subscription = self.node.create_subscription(String, "robot_description", self._on_description,
                                                               DESCRIPTION_QOS)

    def log_waiting(self):
        """Say, at most every WAITING_LOG_PERIOD, that the node waits for the topic (when it does)."""
        if self.served is None and self._subscription is not None:
            self.node.get_logger().info(f"waiting for robot_description on '{self._subscription.topic_name}'",
                                        throttle_duration_sec=WAITING_LOG_PERIOD)

    def drop(self):
        """Serve nothing and take no description (:attr:`enabled` False): abandon a load, forget the model."""
        self.enabled = False
        self._cancel()
        self.served = self.robot = None
        self._stop_waiting()

    def close(self):
        """Abandon a load in progress and end the loader's thread (before the node is destroyed)."""
        if self.loader is not None:
            self.loader.close()
            self.loader = None

    # --- parameters ------------------------------------------------------------------------------------------

    def _declare_parameters(self):
        declare, read_only = self.node.declare_parameter, not self.hot
        then = ("Setting it loads the model in the background." if self.hot else
                "The first description that loads is kept.")
        declare("robot_description", "", describe(
            "URDF XML of the robot (or MJCF: a <mujoco> root). If empty, urdf_path is used; if that is empty too, "
            f"the robot_description topic (transient local). {then}", read_only=read_only))
        declare("urdf_path", "", describe(
            "URDF, xacro or MJCF (.xml, .mjcf) file used when robot_description is empty: a path, package://pkg/path, "
            "file:///path or a bundled robot's name (arm7); a .xacro file is expanded with xacro_args."
            + (" " + then if self.hot else ""),
            read_only=read_only))
        declare("xacro_args", Parameter.Type.STRING_ARRAY, describe(
            "Arguments of a .xacro urdf_path, [\"name:=value\", ...].", read_only=read_only))
        declare("drives_file", "", describe(
            "A drives YAML file (robot_dynamics.drive_files: armature, damping, friction per joint) applied over the "
            "description's <dynamics> and transmissions; empty: the description's alone.", read_only=read_only))
        gravity = declare("gravity", [0.0, 0.0, -9.81], describe(
            "Gravity acceleration in the world frame [m/s^2], three doubles.", read_only=read_only)).value
        if not valid_gravity(gravity):
            raise ValueError(f"parameter gravity must be three finite doubles, got {gravity}")
        if not self.hot:
            return
        declare("floating_base", False, describe(
            "True: the root link is a free body whose pose and twist come from odom_topic; q = [x, y, z, qx, qy, "
            "qz, qw, joints...] and v = [base linear, base angular (base frame), joints...]."))
        declare("mimic", False, describe(
            "True: a mimic joint follows its master (q = multiplier q_master + offset), is no coordinate of the "
            "outputs and may be missing from joint_states, as for robot_state_publisher."))
        declare("description_memory_limit_mb", MEMORY_LIMIT_MB, describe(
            "Address space [MB] of the process that loads a new description while the node serves (0: no limit); "
            "a description that needs more is refused.", read_only=True))
        declare("description_timeout", TIMEOUT, describe(
            "Seconds a new description may take to load while the node serves; a slower one is refused.",
            read_only=True))

    def _check_parameters(self, params):
        """Refuse what a parameter's value alone refuses: a gravity that is not three finite doubles, a
        robot_description whose XML is at fault (urdf.check_xml); the rest is refused while loading."""
        new = {p.name: p.value for p in params}
        if "gravity" in new and not valid_gravity(new["gravity"]):
            return SetParametersResult(successful=False, reason="gravity must be three finite doubles")
        if new.get("robot_description") and not self._reverting:       # a revert's value has served
            if not is_xml_text(new["robot_description"]):
                return SetParametersResult(successful=False, reason="robot_description is not XML (it must start "
                                                                    "with '<'; the path of a file goes in urdf_path)")
            try:
                if not is_mjcf(new["robot_description"]):             # MJCF: MuJoCo's compiler checks it
                    check_xml(new["robot_description"])
            except URDFError as err:
                return SetParametersResult(successful=False, reason=f"robot_description: {err}")
        return SetParametersResult(successful=True)

    def _parameters_set(self, params):
        if self._reverting or not self.enabled or not {p.name for p in params} & set(MODEL_PARAMETERS):
            return
        config = self.config()
        if config["robot_description"] or config["urdf_path"]:
            self._request(None, None, config, "parameters")
        elif self._topic_xml is not None:
            self._request(self._topic_xml, TOPIC, config, "parameters")
        else:
            self._cancel()
            self._wait()

    def _revert(self):
        """Set the model parameters back to those of the model that serves."""
        config = self.config()
        changed = [Parameter(name, Parameter.Type.STRING_ARRAY, []) if value is None else Parameter(name, value=value)
                   for name, value in self._good.items() if config[name] != value]
        self._reverting = True
        try:
            self.node.set_parameters(changed)
        finally:
            self._reverting = False

    # --- the topic -------------------------------------------------------------------------------------------

    def _wait(self):
        self.listen()
        if self._waiting_timer is None and self.served is None:
            self._waiting_timer = self.node.create_timer(WAITING_LOG_PERIOD, self.log_waiting)
            self.log_waiting()

    def _stop_waiting(self):
        if self._waiting_timer is not None:
            self.node.destroy_timer(self._waiting_timer)
            self._waiting_timer = None

    def _on_description(self, msg):
        config = self.config()
        if config["robot_description"] or config["urdf_path"]:
            self.node.get_logger().info("ignoring the robot_description topic: a description parameter is set",
                                        throttle_duration_sec=WARN_PERIOD)
        elif not self.enabled:
            self._topic_xml = msg.data                   # for load_initial (a lifecycle node's configure)
        elif not self.hot and self.served is not None:
            self.node.get_logger().info("ignoring a new robot_description: the model is kept; restart the node to "
                                        "change robots", throttle_duration_sec=WARN_PERIOD)
        else:
            self._request(msg.data, TOPIC, config, "topic")

    # --- loading in the background ---------------------------------------------------------------------------

    def _request(self, xml, source, config, origin):
        """Load a description in the background (robot_dynamics.ros.loader); the newest request wins."""
        if self.loader is None:
            self.loader = BackgroundLoader(self._on_load_done,
                                           self._limit("description_memory_limit_mb", MEMORY_LIMIT_MB),
                                           self._limit("description_timeout", TIMEOUT))
        if self._loaded_timer is None:
            self._loaded_timer = self.node.create_timer(LOADED_POLL_PERIOD, self._on_loaded)
        self._loaded_timer.reset()
        self._generation += 1
        self.loader.request(dict(config, xml=xml, source=source, origin=origin, regressor=self._regressor(),
                                 joints=self.required_joints, generation=self._generation,
                                 niceness=LOADER_NICENESS if self.served is not None else 0))

    def _limit(self, name, default):
        """A limit of the loader: the parameter of a hot swap, else the default."""
        return self.node.get_parameter(name).value if self.node.has_parameter(name) else default

    def _cancel(self):
        self._generation += 1
        if self.loader is not None:
            self.loader.cancel()

    def _on_load_done(self, request, outcome):
        """On the loader's thread: make what serves of the loaded model, then hand it to the executor (_on_loaded)."""
        warnings = ()
        if not isinstance(outcome, Refused):
            model, warnings, request["source"] = outcome
            try:
                robot = Robot(model)
                outcome = (robot, self._prepare(robot))
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
            if not self.loader.busy:
                self._loaded_timer.cancel()
            return
        request, outcome, warnings = loaded
        if request["generation"] != self._generation:
            return                                          # superseded while it was handed over
        for warning in warnings:
            self.node.get_logger().warning(warning)
        if not isinstance(outcome, Refused):
            try:
                self._swap_in(*outcome, request["source"], request)
            except ValueError as err:
                outcome = err if isinstance(err, Refused) else Refused("invalid", str(err))
            else:
                if request["origin"] == "topic":
                    self._topic_xml = request["xml"]
                return
        self._refuse(request, outcome)

    # --- swapping in, refusing -------------------------------------------------------------------------------

    def _swap_in(self, robot, served, source, config):
        """Make ``served`` what serves, once it has the required joints and the node has installed it."""
        check_joints(robot, self.required_joints, source)
        self._install(served, source)
        self.served, self.robot = served, robot             # the swap: callbacks read `served` once
        self._good = {name: config[name] for name in MODEL_PARAMETERS if self.node.has_parameter(name)}
        self._stop_waiting()
        self.node.get_logger().info(f"model from {source}: {len(robot.joint_names)} joints, nv = {robot.nv}, "
                                    f"{robot.nbodies} bodies, floating_base = {robot.floating_base}")

    def _refuse(self, request, err):
        """Log the refusal, set the parameters back, then count it: who sees the count sees the parameters back."""
        kept = "; the last good model keeps serving" if self.served is not None else ""
        self.node.get_logger().error(f"robot description from {request['source'] or 'the parameters'} refused "
                                     f"({err.kind}): {err}{kept}")
        if request["origin"] == "parameters" and self._good is not None:
            self._revert()
        self.refused[err.kind] += 1
