"""dynamics_node: robot_description in; for every joint state M, C, C v, g, the CoM, its Jacobian and, on request,
the Slotine-Li regressor, the time derivatives of M and g, frame Jacobians and the momentum observer's external
torque, wrenches and collisions out.

Run it as ``ros2 run robot_dynamics dynamics_node --ros-args -p urdf_path:=arm7.urdf`` (full ROS install),
``dynamics_node --ros-args -p ...`` (pip install) or ``python -m robot_dynamics.ros.dynamics_node --ros-args ...``.
The README's "ROS 2" section tells it for users; the parts are:

- the robot description -- its parameters, the topic, loading a new one in the background while the current
  model serves, swapping it in, refusing it and setting its parameters back: robot_dynamics.ros.hotswap;
- the outputs, a row each (topic, message, shape, value, when): robot_dynamics.ros.outputs, which also makes the
  table below; their messages and publishers: robot_dynamics.ros.publishing;
- the joint states, odometry and reference merged into the state: robot_dynamics.ros.inputs;
- the node's own parameters (frames, frame_reference, the output switches, ...): robot_dynamics.ros.dynamics_parameters;
- the momentum observer (``publish_external_torque``: ~/external_torque, ~/external_wrench/<frame>, ~/collision
  and a collision status on /diagnostics), stateful from one stamped joint state to the next: its time, effort,
  restarts, thresholds and wrenches in robot_dynamics.ros.observing.

Every joint state is answered with at most one ``robot.dynamics()`` pass -- none when no output due reads it (the
observer's outputs alone, say) -- every value computed before the outputs are published in the table's order. A
message that cannot be used is skipped with a warning throttled per kind of fault and counted in
``DynamicsNode.skipped`` and on /diagnostics: a state the model rejects (a ValueError computing an output due) as
``"state_rejected"``, with nothing published for it. No callback can end the node (robot_dynamics.ros.guard).

Topics (``~`` is the node's name; every name is relative, so ``-r __ns:=/robot1`` moves them all, and each can
be remapped; joint_states and odom take QoS overrides)::

"""
import collections
import difflib
import sys
import time

from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos_overriding_options import QoSOverridingOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectoryPoint

from robot_dynamics.ros.conversions import BadMessage
from robot_dynamics.ros.description import WARN_PERIOD, describe
from robot_dynamics.ros.diagnostics import ERROR, OK, WARN, Diagnostics
from robot_dynamics.ros.dynamics_parameters import DynamicsParameters
from robot_dynamics.ros.guard import GuardedCallbacks, SkipsBadMessages
from robot_dynamics.ros.hotswap import Described, DescriptionSwap
from robot_dynamics.ros.inputs import StateInputs
from robot_dynamics.ros.loader import Refused, abbreviated
from robot_dynamics.ros.observing import stamp_nanoseconds
from robot_dynamics.ros.outputs import OBSERVED, REFERENCE, topics_table
from robot_dynamics.ros.publishing import Evaluation, OutputPublishers, Served
from robot_dynamics.ros.qos import OBSERVED_STATE_QOS, STATE_QOS
from robot_dynamics.ros.runner import run

if __doc__:                                   # (python -OO strips docstrings)
    __doc__ += topics_table()


class DynamicsLogic(Described):
    """The dynamics node's behaviour, shared by :class:`DynamicsNode` and the lifecycle node
    (robot_dynamics.ros.lifecycle_node): mixed in before GuardedCallbacks, SkipsBadMessages and an rclpy node.

    Attributes
    ----------
    settings : robot_dynamics.ros.dynamics_parameters.DynamicsParameters
    description : robot_dynamics.ros.hotswap.DescriptionSwap
        The robot description; ``description.served`` is the :class:`~robot_dynamics.ros.publishing.Served`.
    inputs : robot_dynamics.ros.inputs.StateInputs
    outputs : robot_dynamics.ros.publishing.OutputPublishers
    answered : int
        Joint states answered with published outputs.
    skipped : collections.Counter
        Messages skipped, per kind of fault (``"joint_state_lengths"``, ``"odom_zero_quaternion"``, ...; joint
        states the observer could not use count as ``"observer_..."``, their other outputs published).
    flagged : collections.Counter
        Restarts of the momentum observer, per reason (``"observer_restart_gap"``,
        ``"observer_restart_stamp_not_after"``).
    callback_errors : collections.Counter
        Exceptions raised by callbacks (see robot_dynamics.ros.guard).
    """

    def _setup(self, loading=True):
        """Parameters, the description (``loading``: taking descriptions already) and the state; no publisher or
        subscription yet (see :meth:`_open`). A parameter the node cannot use raises a ValueError naming it (the
        constructor then destroys the node)."""
        self.description = None                 # until the parameters are read
        self.answered = 0
        self.skipped = collections.Counter()
        self.flagged = collections.Counter()
        self.settings = DynamicsParameters(self)
        self.description = DescriptionSwap(self, self._install, prepare=self._serve, hot=True, enabled=loading,
                                           regressor=lambda: self.settings.switches["publish_regressor"])
        self.inputs = StateInputs(self.settings.max_joint_state_names, self.settings.frame_prefix,
                                  self.settings.effort_topic)
        self.outputs = OutputPublishers(self._create_output, self._destroy_output, self.settings.frame_lists)
        self._subs = []
        self._odom_sub = None
        self._told = None                       # the Served whose unobservable outputs the log has told of
        self.diagnostics = Diagnostics(self, "dynamics of the joint states", reports=self._observer_reports)
        self.add_post_set_parameters_callback(self._after_set_parameters)

    @property
    def base_state(self):
        """``(q_base (7,), v_base (6,), world frame id)`` from the last usable odometry (floating base only)."""
        return self.inputs.base_state

    @property
    def reference(self):
        """``(v_ref (nv,), a_ref (nv,))`` from the last usable ``~/reference``."""
        return self.inputs.reference

    @property
    def _active(self):
        """True when joint states are answered (the lifecycle node: only while active)."""
        return True

    def _create_output(self, msg_type, topic, qos, **options):
        return self.create_publisher(msg_type, topic, qos, **options)

    def _destroy_output(self, publisher):
        self.destroy_publisher(publisher)

    def _open(self):
        """Advertise the outputs and subscribe to the inputs."""
        self.outputs.advertise(self.settings.switches)
        observed = self.outputs.wants(OBSERVED)           # the observer on at start-up: every joint state queued
        self._subs.append(self.create_subscription(
            JointState, "joint_states", self._on_joint_state, OBSERVED_STATE_QOS if observed else STATE_QOS,
            qos_overriding_options=QoSOverridingOptions.with_default_policies()))
        self._subs.append(self.create_subscription(JointTrajectoryPoint, "~/reference", self._on_reference,
                                                   STATE_QOS))
        if self.settings.effort_topic:
            self._subs.append(self.create_subscription(Float64MultiArray, self.settings.effort_topic,
                                                       self._on_effort, STATE_QOS))
        if self.robot is not None:
            self._subscribe_odometry(self.robot)

    def _close(self):
        """Undo :meth:`_open`: no output, no input but the robot_description topic."""
        for subscription in self._subs + ([self._odom_sub] if self._odom_sub is not None else []):
            self.destroy_subscription(subscription)
        self._subs, self._odom_sub = [], None
        self.outputs.close()

    def _subscribe_odometry(self, robot):
        if robot.floating_base and self._odom_sub is None:
            self._odom_sub = self.create_subscription(
                Odometry, self.settings.odom_topic, self._on_odom, STATE_QOS,
                qos_overriding_options=QoSOverridingOptions.with_default_policies())

    def _teardown(self):
        """Abandon a load in progress and end the loader's thread (before the node is destroyed)."""
        if self.description is not None:
            self.description.close()

    def _after_set_parameters(self, params):
        if self.settings.update(params):
            self.outputs.switch(self.settings.switches)
            served = self.description.served
            if not self.outputs.wants(OBSERVED) and served is not None and served.observing is not None:
                served.observing.stop()                       # switched off: switched on, it starts afresh

    # --- the model: made on the loader's thread, installed by the description swap ---------------------------

    def _serve(self, robot):
        settings = self.settings
        return Served(robot, settings.frame_lists, settings.frame_prefix, settings.observer)

    def _install(self, served, source):
        """Prepare the node for ``served`` (hotswap.DescriptionSwap swaps it in next); declare ``joints`` with the
        first model.

        ``joints`` is read-only: consumers read it once to interpret every array. A later description must
        therefore keep the joint names and their order (masses, inertias, frames may change); the description
        swap refuses one with other joints, and the node must be restarted to serve another robot.
        """
        robot = served.robot
        for parameter, frames in self.settings.frame_lists.items():
            missing = [frame for frame in frames if frame not in robot.model.frames]
            if missing:
                names = list(robot.frame_names)
                close = difflib.get_close_matches(missing[0], names, n=5, cutoff=0.6)
                hint = (f" (did you mean {', '.join(map(repr, close))}?)" if close else
                        f"; its frames: {abbreviated(names)}")
                raise Refused("frames", f"the description from {source} has no frame {missing[0]!r} of the "
                                        f"parameter {parameter}{hint}")
        if not self.has_parameter("joints"):
            self.declare_parameter("joints", list(robot.joint_names), describe(
                "Read-only. The joints in the order of every published vector and matrix (after the six base "
                "velocities when floating_base is true).", read_only=True))
            self.description.required_joints = list(robot.joint_names)
        old = self.description.served
        if served.observing is not None and old is not None and old.observing is not None:
            served.observing.carry_calibration(old.observing)
        self.inputs.adopt(robot, self.robot)
        if self._subs:
            self._subscribe_odometry(robot)

    # --- inputs ------------------------------------------------------------------------------------------

    def _on_odom(self, msg):
        self._take(lambda robot: robot.floating_base and self.inputs.odometry(msg, robot))

    def _on_reference(self, msg):
        self._take(lambda robot: self.inputs.set_reference(msg, robot.nv))

    def _on_effort(self, msg):
        self._take(lambda robot: self.inputs.set_effort_command(msg, robot.nv))

    def _take(self, take):
        """take(robot) for an input message while a model serves; a BadMessage is skipped and counted."""
        robot = self.robot
        if robot is None:
            return
        try:
            take(robot)
        except BadMessage as err:
            self._skip(err)

    def _on_joint_state(self, msg):
        """Answer a joint state: merge it, observe it, compute every output that is due, then publish them."""
        self.diagnostics.received()
        served = self.description.served
        if served is None or not self._active:
            self.description.log_waiting()
            return
        robot = served.robot
        start = time.perf_counter()
        try:
            self.inputs.joint_state(msg)
        except BadMessage as err:
            self._skip(err)
            return
        state = self.inputs.state(robot)
        if state is None:
            self.get_logger().info(f"waiting for odometry on '{self._odom_sub.topic_name}'", throttle_duration_sec=5.0)
            return
        q, v, frame_id = state
        velocities = self.inputs.velocities
        reference = self.inputs.reference_for(robot.nv) if velocities and self.outputs.wants(REFERENCE) else None
        observer = self._observe(served, msg.header.stamp, q, v, velocities) if self.outputs.wants(OBSERVED) else None
        x = Evaluation(robot, q, v, reference, self.settings.frame_reference, observer)
        try:
            answer = self.outputs.answer(served, x, velocities)       # robot.dynamics only if an output due reads it
        except ValueError as err:
            self._skip(BadMessage("state_rejected", f"the model rejected the state: {err}"))
            return
        self.outputs.publish(served, x, answer, msg.header.stamp, frame_id, velocities)
        self.answered += 1
        self.diagnostics.answered(time.perf_counter() - start)

    # --- the momentum observer ------------------------------------------------------------------------------

    def _observe(self, served, stamp, q, v, velocities):
        """Advance the observer of ``served`` to the joint state; the observing.Observing, or None when it could
        not (a floating base: said once per model; a joint state it cannot use: skipped and counted)."""
        observing = served.observing
        if observing is None:
            if self._told is not served:
                self._told = served
                self.get_logger().warning("the momentum observer takes fixed-base robots only (a floating base's "
                                          "residual holds every contact wrench): ~/external_torque, "
                                          "~/external_wrench/* and ~/collision are not published for this model")
            return None
        try:
            if not velocities:
                raise BadMessage("observer_velocities_missing", "the momentum observer needs every joint's velocity")
            tau = self.inputs.efforts()
            restarted = observing.observe(q, v, tau, stamp_nanoseconds(stamp))
        except BadMessage as err:
            self._skip(err)
            return None
        except ValueError as err:
            self._skip(BadMessage("observer_rejected", f"the momentum observer rejected the joint state: {err}"))
            return None
        if restarted:
            self.flagged[f"observer_restart_{restarted}"] += 1
            self.get_logger().warning(
                "momentum observer restarted: " + ("a joint state not stamped after the last observed one"
                                                   if restarted == "stamp_not_after" else
                                                   f"more than observer_max_gap = {observing.settings.max_gap} s "
                                                   "since the last observed joint state"),
                throttle_duration_sec=WARN_PERIOD)
        if observing.changed:
            self._collision_changed(observing.collision)
        return observing

    def _collision_changed(self, collision):
        """Log a collision's start (and its bodies) and end; report it on /diagnostics at once."""
        if collision.detected:
            self.get_logger().error(f"collision: {', '.join(collision.bodies)}")
        else:
            self.get_logger().info("no collision")
        self.diagnostics.publish_reports()

    def _observer_reports(self):
        """The collision status of /diagnostics (diagnostics.Diagnostics' reports), while the observer is on."""
        served = self.description.served
        if served is None or not self.outputs.wants(OBSERVED):
            return []
        observing = served.observing
        if observing is None:
            return [("collision", WARN, "not observed: the momentum observer takes fixed-base robots only", {})]
        if observing.calibrating:
            return [("collision", OK, f"calibrating the thresholds: {observing.calibrated:.3f} of "
                                      f"{observing.settings.calibration_time:g} s contact-free", {})]
        if observing.detector is None:
            return [("collision", WARN, "no collision detection: set collision_thresholds or "
                                        "collision_calibration_time", {})]
        names = served.state_msg.name
        values = {f"threshold {name}": f"{x:.6g}" for name, x in zip(names, observing.detector.thresholds)}
        collision = observing.collision
        if collision is None or not collision.detected:
            return [("collision", OK, "no collision", values)]
        values["bodies"] = ",".join(collision.bodies)
        values["coordinates"] = ",".join(name for name, flag in zip(names, collision.touched) if flag)
        return [("collision", ERROR, f"collision: {', '.join(collision.bodies)}", values)]


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
        try:
            self._setup()
            self._open()
            self.description.load_initial()
        except Exception:                       # not left in the context for its shutdown to destroy half-made
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
