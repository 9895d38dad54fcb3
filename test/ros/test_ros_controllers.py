"""sim_node, computed_torque_node and adaptive_controller_node on real rclpy over loopback DDS, in a private domain.

The closed loops run as a user starts them (node processes, one of them through launch_scripts/closed_loop.py),
their simulator in lockstep, so a loaded machine slows them down but does not change the loop: each must equal
the library's sampled loop (controller + Simulator in this process) at every tick the probe receives. The other
tests run the nodes in this process, spun by one executor, and drive them from a probe node.
"""
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS 2 is not installed (pip install '.[ros]')")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # ros_helpers, whatever pytest's import mode

from ros_helpers import URDF_DIR, Spinner, claim_ros_domain, joint_state, stamp  # noqa: E402

pytest_plugins = ["ros_helpers"]      # its fixtures context and namespace (the executor here is its own)

claim_ros_domain()                                          # before the first rclpy context

from builtin_interfaces.msg import Duration, Time  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.experimental import EventsExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.controllers import (ComputedTorque, PiecewiseTrajectory, RelativeGains, Simulator,  # noqa: E402
                                        SumOfSines)
from robot_dynamics.demo import PAYLOAD_BODY, PAYLOAD_COM, make_scenario, run_in_process  # noqa: E402
from robot_dynamics.ros.adaptive_controller_node import AdaptiveControllerNode  # noqa: E402
from robot_dynamics.ros.computed_torque_node import ComputedTorqueNode  # noqa: E402
from robot_dynamics.ros.processes import stop as stop_process  # noqa: E402
from robot_dynamics.ros.sim_node import SimNode  # noqa: E402

ARM = URDF_DIR / "arm7.urdf"
QUADRUPED = URDF_DIR / "quadruped.urdf"
LAUNCH = URDF_DIR.parent / "launch_scripts" / "closed_loop.py"
# an exception in an executor's or a node's thread (InvalidHandle at teardown, ...) fails the test
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")


def seconds(header):
    return header.stamp.sec + 1e-9 * header.stamp.nanosec


def as_list(values):
    return "[" + ",".join(repr(float(x)) for x in values) + "]"


def trajectory_msg(names, trajectory, order=None):
    """A JointTrajectory of the PiecewiseTrajectory's own points (positions, velocities, accelerations), stamped
    zero; ``order`` permutes the joint columns (the controller must match them by name)."""
    order = np.arange(len(names)) if order is None else np.asarray(order)
    ref = trajectory(trajectory.times)
    msg = JointTrajectory(joint_names=[names[i] for i in order])
    for t, q, v, a in zip(trajectory.times, ref.q[:, order], ref.v[:, order], ref.a[:, order]):
        msg.points.append(JointTrajectoryPoint(positions=q.tolist(), velocities=v.tolist(), accelerations=a.tolist(),
                                               time_from_start=Duration(sec=int(t), nanosec=int(round(t % 1 * 1e9)))))
    return msg


def smooth_trajectory(robot, duration, seed=0):
    """A sum of sines sampled every 10 ms into a quintic PiecewiseTrajectory (what a JointTrajectory carries)."""
    rng = np.random.default_rng(seed)
    n = robot.nv
    sines = SumOfSines(np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8]), 0.2 * rng.uniform(0.5, 1.0, (n, 2)),
                       np.pi * np.array([1.0, 2.0]), rng.uniform(0, 2 * np.pi, (n, 2)))
    times = np.arange(0.0, duration + 0.02, 0.01)
    ref = sines(times)
    return PiecewiseTrajectory(times, ref.q, ref.v, ref.a)


@pytest.fixture
def executor(context):
    """rclpy's C++ EventsExecutor (it keeps up with 1 kHz topics), spun in a thread of its own for each test; it
    stops before the test's nodes are destroyed (ros_helpers.Spinner)."""
    spinner = Spinner(context, events=True)
    yield spinner
    spinner.close()


class Probe:
    """The test's node: feeds joint states, trajectories and references; records commands, states and the
    adaptive controller's outputs, each topic's messages in a list guarded by one condition.

    It joins ``executor`` (a ros_helpers.Spinner, which destroys it when it closes), or with ``spin_here`` an
    executor of its own that its waits spin in the test's thread: the way to keep up with a 1 kHz closed loop.
    """

    TOPICS = ("commands", "joint_states", "tracking_error", "estimate", "prediction_error", "odom", "clock",
              "mass_matrix")

    def __init__(self, executor, namespace, controller="computed_torque_node", topics=TOPICS, spin_here=False):
        self.spin_here = spin_here
        self.executor = EventsExecutor(context=executor.context) if spin_here else executor
        self.node = rclpy.create_node("probe", namespace=namespace, context=executor.context)
        self._cond = threading.Condition()
        self.received = {name: [] for name in self.TOPICS}
        reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        for name, msg_type, topic in (
                ("commands", Float64MultiArray, "effort_controller/commands"),
                ("joint_states", JointState, "joint_states"),
                ("tracking_error", JointState, f"{controller}/tracking_error"),
                ("estimate", Float64MultiArray, f"{controller}/parameter_estimate"),
                ("prediction_error", JointState, f"{controller}/prediction_error"),
                ("odom", Odometry, "odom"),
                ("clock", Clock, "/clock"),
                ("mass_matrix", Float64MultiArray, "dynamics_node/mass_matrix")):
            if name in topics:                             # records only what the test reads: 1 kHz streams cost
                self.node.create_subscription(msg_type, topic, self._recorder(name), reliable)
        self.joint_states = self.node.create_publisher(JointState, "joint_states", reliable)
        self.commands = self.node.create_publisher(Float64MultiArray, "effort_controller/commands", reliable)
        self.trajectory = self.node.create_publisher(JointTrajectory, f"{controller}/joint_trajectory", reliable)
        self.reference = self.node.create_publisher(JointTrajectoryPoint, f"{controller}/joint_references", reliable)
        self.executor.add_node(self.node)

    def _recorder(self, name):
        def record(msg):
            with self._cond:
                self.received[name].append(msg)
                self._cond.notify_all()
        return record

    def count(self, name):
        with self._cond:
            return len(self.received[name])

    def last(self, name):
        with self._cond:
            return self.received[name][-1] if self.received[name] else None

    def latest_stamp(self, name):
        """The stamp (s) of the last message received on ``name``; -inf before the first."""
        last = self.last(name)
        return -np.inf if last is None else seconds(last.header)

    def wait_until(self, predicate, timeout=10.0):
        """Wait until ``predicate()`` holds (checked on every message and every 20 ms); False after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                if self.spin_here:
                    self._cond.release()
                    try:
                        self.executor.spin_once(timeout_sec=min(remaining, 0.02))
                    finally:
                        self._cond.acquire()
                else:
                    self._cond.wait(min(remaining, 0.02))
            return True

    def wait_matched(self, publisher, timeout=30.0, alive=lambda: True):
        """Wait until ``publisher`` has a subscriber; fail after ``timeout`` or as soon as ``alive()`` is false."""
        deadline = time.monotonic() + timeout
        while publisher.get_subscription_count() == 0:
            assert time.monotonic() < deadline, f"nobody subscribed to {publisher.topic_name}"
            assert alive(), f"what should subscribe to {publisher.topic_name} has exited"
            self.wait_until(lambda: False, timeout=0.01)

    def published(self, publisher, msg, until, timeout=10.0, every=0.5):
        """Publish ``msg`` (again every ``every`` s) until ``until()`` holds; whether it did within ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            publisher.publish(msg)
            if self.wait_until(until, timeout=min(every, max(0.0, deadline - time.monotonic()))):
                return True
        return False

    def hold_reference(self, node, q_d):
        """Give the controller ``node`` the reference point ``q_d`` (in the order of its joints) and wait until it
        listens to the joint states."""
        self.wait_matched(self.reference)
        assert self.published(self.reference, JointTrajectoryPoint(positions=[float(x) for x in q_d]),
                              until=lambda: node._point is not None)
        self.wait_matched(self.joint_states)

    def answered(self, names, q, v, k, topic="commands"):
        """Publish the joint state (q, v) stamped ``stamp(k)`` until a new message arrives on ``topic``."""
        count = self.count(topic)
        assert self.published(self.joint_states, joint_state(names, q, v, k=k),
                              until=lambda: self.count(topic) > count)

    def close(self):
        self.executor.remove_node(self.node)
        if self.spin_here:                 # spun by this thread alone, which is here: nothing runs its callbacks
            self.executor.shutdown()
            self.node.destroy_node()


@pytest.fixture
def probe(executor, namespace):
    return Probe(executor, namespace)


@pytest.fixture
def start_node(executor, namespace):
    """Start one of the nodes in this process with the given parameters (destroyed when the executor closes)."""
    def start(node_class, **params):
        params.setdefault("command_topic", "effort_controller/commands")     # inside the test's namespace
        node = node_class(namespace=namespace, context=executor.context,
                          parameter_overrides=[Parameter(name, value=value) for name, value in params.items()])
        executor.add_node(node)
        return node
    return start


class NodeProcesses:
    """Node processes started as a user does (``python -m module --ros-args ...``), each its own process group."""

    def __init__(self):
        self.started = []

    def start(self, module_args, ros_args, log_path):
        env = dict(os.environ, PYTHONUNBUFFERED="1", RCUTILS_LOGGING_BUFFERED_STREAM="0",
                   RCUTILS_COLORIZED_OUTPUT="0",
                   PYTHONPATH=os.pathsep.join(p for p in (str(Path(rd.__file__).resolve().parents[1]),
                                                          os.environ.get("PYTHONPATH")) if p))
        with open(log_path, "w") as log:
            process = subprocess.Popen([sys.executable, "-m", *module_args, "--ros-args", *ros_args], stdout=log,
                                       stderr=subprocess.STDOUT, env=env, start_new_session=True)
        process.log = log_path.read_text
        self.started.append(process)
        return process

    def alive(self):
        return all(p.poll() is None for p in self.started)

    def stop_all(self):
        """SIGINT each (the last started first), SIGKILL its group after 10 s; the exit codes, in start order."""
        for process in reversed(self.started):
            stop_process(process)
        return [p.returncode for p in self.started]


@pytest.fixture
def processes():
    started = NodeProcesses()
    yield started
    started.stop_all()
    for process in started.started:
        assert not _kill_group(process.pid), "a node process left a child running"


def rms(t, e, start, stop):
    window = (t >= start) & (t < stop)
    return float(np.sqrt(np.mean(np.sum(e[window] ** 2, axis=1))))


# --- the closed loop -------------------------------------------------------------------------------------------

def test_launched_adaptive_loop_tracks_better_and_learns_the_payload(executor, namespace, tmp_path):
    """closed_loop.py: sim_node (arm7 + 2 kg payload, lockstep) + dynamics_node + adaptive_controller_node, its
    estimates off by 20-50 %, for 4 s of simulated time: the library's sampled loop, and its error shrinks."""
    duration = 4.0
    sc = make_scenario(duration, 1000.0)
    probe = Probe(executor, namespace, controller="adaptive_controller_node",
                  topics=("tracking_error", "estimate", "mass_matrix"), spin_here=True)
    start = sc.reference(0.0)
    log = open(tmp_path / "launch.log", "w")
    launcher = subprocess.Popen(
        [sys.executable, str(LAUNCH), "--urdf", "arm7", "--namespace", namespace, "--lockstep",
         "--real-time-factor", "0", "--payload-body", PAYLOAD_BODY, "--payload-mass", repr(sc.payload_mass),
         "--payload-com", *map(repr, PAYLOAD_COM), "--initial-positions", *(repr(float(x)) for x in start.q),
         "--sim-param", f"initial_velocities:={as_list(start.v)}",
         "--controller-param", f"initial_parameters:={as_list(sc.pi_hat0)}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", RCUTILS_LOGGING_BUFFERED_STREAM="0"))
    try:
        probe.wait_matched(probe.trajectory, timeout=120, alive=lambda: launcher.poll() is None)
        msg = trajectory_msg(sc.nominal.joint_names, sc.reference)    # resent only if it was lost in discovery:
        assert probe.published(probe.trajectory, msg, until=lambda: probe.received["tracking_error"], timeout=30,
                               every=3.0), (tmp_path / "launch.log").read_text()     # a resend would restart it
        assert probe.wait_until(lambda: probe.latest_stamp("tracking_error") >= duration or launcher.poll() is not None,
                                timeout=120), (tmp_path / "launch.log").read_text()
        with probe._cond:
            errors = list(probe.received["tracking_error"])
            estimate = np.array(probe.received["estimate"][-1].data)
        assert probe.count("mass_matrix") > 100                                   # dynamics_node ran alongside
        launcher.send_signal(signal.SIGINT)
        assert launcher.wait(timeout=30) == 0, (tmp_path / "launch.log").read_text()
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
        survivors = _kill_group(launcher.pid)
        log.close()
        probe.close()
    assert not survivors, "the launcher left a node running"

    # the same sampled loop run in this process by the library's SlotineLi and simulator: the same errors at every
    # tick received (a 1 kHz stream may lose a few to a busy probe), so the library's record tells the whole run
    record = run_in_process(sc, progress=lambda t: None)
    t = np.array([seconds(m.header) for m in errors])
    steps = np.round(t / 0.001).astype(int)
    ran = steps < len(record.t)
    assert ran.sum() > 100 and steps.max() >= len(record.t) - 1
    np.testing.assert_allclose(np.array([m.position for m in errors])[ran], record.e[steps[ran]], rtol=0, atol=1e-9)
    assert rms(record.t, record.e, duration - 1.0, duration) < 0.4 * rms(record.t, record.e, 0.0, 1.0)   # 0.13 -> 0.03
    k = 10 * sc.nominal.body_names.index(PAYLOAD_BODY)
    mass = sc.truth.parameters[k]
    assert abs(estimate[k] - mass) < 0.5 * abs(sc.pi_hat0[k] - mass)          # the payload body's mass, learnt


def _kill_group(pgid):
    """Kill whatever is left of the process group ``pgid``; whether anything was."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def test_computed_torque_with_the_exact_model_converges(executor, namespace, processes, tmp_path):
    """sim_node (lockstep) + computed_torque_node with the exact model, as processes, started 0.1 rad off a
    trajectory whose joints arrive in another order: the library's sampled loop, whose error decays as
    edd + kd ed + kp e = 0 predicts down to the floor of holding each torque for 1 ms."""
    robot = rd.load_urdf(str(ARM))
    trajectory = smooth_trajectory(robot, 3.0)
    start = trajectory(0.0)
    offset = 0.1 * np.ones(robot.nv)
    joints = list(reversed(robot.joint_names))              # commands in another order than the model's
    order = [robot.joint_names.index(j) for j in joints]
    common = ["-r", f"__ns:={namespace}", "-p", f"urdf_path:={ARM}", "-p", "command_topic:=effort_controller/commands",
              "-p", "joints:=[" + ",".join(joints) + "]"]
    sim = processes.start(["robot_dynamics.ros.sim_node"], common + [
        "-p", "lockstep:=true", "-p", "real_time_factor:=0.0",
        "-p", f"initial_positions:={as_list((start.q - offset)[order])}",
        "-p", f"initial_velocities:={as_list(start.v[order])}"], tmp_path / "sim.log")
    controller = processes.start(["robot_dynamics.ros.computed_torque_node"],
                                 common + ["-p", "kp:=100.0", "-p", "kd:=20.0"], tmp_path / "controller.log")
    probe = Probe(executor, namespace, topics=("joint_states",), spin_here=True)
    try:
        probe.wait_matched(probe.trajectory, timeout=60, alive=processes.alive)
        # The sim repeats its initial state until the first command: once the probe hears it, it will hear every
        # state after the clock starts (else discovery could finish after the fast, lockstep run).
        assert probe.wait_until(lambda: probe.count("joint_states") > 0 or not processes.alive(), timeout=60), \
            sim.log()
        msg = trajectory_msg(robot.joint_names, trajectory, order=np.random.default_rng(1).permutation(robot.nv))
        assert probe.published(probe.trajectory, msg, until=lambda: probe.latest_stamp("joint_states") > 0.0,
                               every=3.0), controller.log()   # the clock runs once the first command arrived
        assert probe.wait_until(lambda: probe.latest_stamp("joint_states") >= 2.0 or not processes.alive(),
                                timeout=60), sim.log()
        with probe._cond:
            states = list(probe.received["joint_states"])
        assert processes.stop_all() == [0, 0], sim.log() + controller.log()
        assert probe.wait_until(lambda: not np.any(probe.received["joint_states"][-1].effort), timeout=5)
    finally:                                                 # (the controller stops first: its zero reaches the sim)
        probe.close()
    assert list(states[0].name) == joints
    t = np.array([seconds(m.header) for m in states])
    q = np.array([m.position for m in states])[:, np.argsort(order)]        # back to model order

    law = ComputedTorque(robot, 100.0, 20.0)                 # the library's loop: torque held over each 1 ms step
    rollout = Simulator(robot, 0.001).run(start.q - offset, start.v, lambda t, q, v: law.torque(q, v, *trajectory(t)),
                                          2.0, control_period=0.001)
    steps = np.round(t / 0.001).astype(int)
    received = steps <= 2000
    assert received.sum() > 100 and steps.max() >= 2000
    np.testing.assert_allclose(q[received], rollout.q[steps[received]], rtol=0, atol=1e-9)
    e = trajectory(rollout.t).q - rollout.q
    at = np.searchsorted(rollout.t, 0.3)                     # critically damped at 10 rad/s
    np.testing.assert_allclose(e[at], offset * (1 + 10 * rollout.t[at]) * np.exp(-10 * rollout.t[at]), rtol=0.05)
    assert np.max(np.abs(e[rollout.t >= 1.2])) < 0.02 * np.max(offset)


# --- the controllers' contract ---------------------------------------------------------------------------------

def test_disabling_publishes_zero_once_and_enabling_resumes(executor, namespace, start_node):
    probe = Probe(executor, namespace, controller="adaptive_controller_node")
    robot = rd.load_urdf(str(ARM))
    node = start_node(AdaptiveControllerNode, urdf_path=str(ARM))
    names = list(robot.joint_names)
    q, v = robot.neutral() + 0.1, np.zeros(robot.nv)
    probe.wait_matched(probe.reference)
    assert probe.published(probe.reference, JointTrajectoryPoint(positions=(q + 0.05).tolist()),
                           until=lambda: node._point is not None)
    k = itertools.count()
    probe.wait_matched(probe.joint_states)
    assert probe.published(probe.joint_states, joint_state(names, q, v, k=next(k)),
                           until=lambda: probe.count("commands") > 0)
    assert np.any(probe.last("commands").data)

    assert node.set_parameters([Parameter("enabled", value=False)])[0].successful
    assert probe.wait_until(lambda: not np.any(probe.received["commands"][-1].data))
    zeros, answered = probe.count("commands"), node.answered
    moved = q + 0.01                                        # joint states keep coming: none is answered
    assert probe.published(probe.joint_states, joint_state(names, moved, v, k=next(k)),
                           until=lambda: np.allclose(node.inputs.merger.q, moved))
    assert not probe.wait_until(lambda: probe.count("commands") > zeros, timeout=0.5)
    assert node.answered == answered

    assert node.set_parameters([Parameter("enabled", value=True)])[0].successful
    assert probe.published(probe.joint_states, joint_state(names, q, v, k=next(k)),
                           until=lambda: probe.count("commands") > zeros)
    assert np.any(probe.last("commands").data)
    assert not node.set_parameters([Parameter("enabled", value="no")])[0].successful
    assert not node.set_parameters([Parameter("kd", value=-1.0)])[0].successful
    assert not node.set_parameters([Parameter("adaptation_gain", value=[1.0, 2.0])])[0].successful
    probe.close()


def test_adaptive_node_runs_the_library_controller_and_publishes_its_state(executor, namespace, start_node):
    """Joint states 1 s apart (each adaptation step max_adaptation_step = 10 ms long): the node's commands,
    estimates and prediction errors are the library's CompositeSlotineLi's, fed the same states, to round-off;
    damping far beyond what 100 Hz can take is capped, and /diagnostics counts the flagged ticks."""
    probe = Probe(executor, namespace, controller="adaptive_controller_node",
                  topics=("commands", "estimate", "prediction_error"))
    robot = rd.load_urdf(str(ARM))
    node = start_node(AdaptiveControllerNode, urdf_path=str(ARM), payload=3.0, kd=500.0, prediction=10.0)
    library = RelativeGains(kd=500.0, payload=3.0, prediction=10.0).slotine_li(robot, robot.parameters)
    names = list(robot.joint_names)
    rng = np.random.default_rng(5)
    q_d = robot.neutral() + 0.2
    probe.hold_reference(node, q_d)
    zero = np.zeros(robot.nv)
    for k in range(6):
        q, v = q_d + 0.1 * rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        probe.answered(names, q, v, k, topic="prediction_error")
        tau = library.update(q, v, q_d, zero, zero, 0.01 if k else 0.0)
        np.testing.assert_allclose(probe.last("commands").data, tau, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(probe.last("estimate").data, library.pi_hat, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(probe.last("prediction_error").effort, library.prediction_error, rtol=1e-12,
                                   atol=1e-12)
    assert np.any(library.prediction_error) and library.status.gains_capped
    assert node.flagged["gains_capped"] == 5
    status = node.diagnostics.status()
    assert status.level == status.WARN and "gains_capped" in status.message
    probe.close()


def test_adaptive_node_publishes_its_state_at_state_rate(executor, namespace, start_node):
    """Joint states 4 ms apart, each answered with a command: ~/tracking_error (and the estimate) after those 10 ms
    or more after the last published, by their stamps, at state_rate = 100 Hz: states 0, 3, 6, 9 of 10; every
    command is answered still, and the published errors are those of their states."""
    probe = Probe(executor, namespace, controller="adaptive_controller_node",
                  topics=("commands", "tracking_error", "estimate"))
    robot = rd.load_urdf(str(ARM))
    node = start_node(AdaptiveControllerNode, urdf_path=str(ARM))
    names, q_d = list(robot.joint_names), robot.neutral() + 0.2
    probe.wait_matched(probe.reference)
    assert probe.published(probe.reference, JointTrajectoryPoint(positions=q_d.tolist()),
                           until=lambda: node._point is not None)
    probe.wait_matched(probe.joint_states)
    rng = np.random.default_rng(2)
    states = [q_d + 0.1 * rng.normal(size=robot.nv) for _ in range(10)]
    for k, q in enumerate(states):
        answered = node.answered
        at = Time(sec=1000 + (4 * k) // 1000, nanosec=4_000_000 * k % 10**9)
        assert probe.published(probe.joint_states, joint_state(names, q, np.zeros(robot.nv), at=at),
                               until=lambda: node.answered > answered)
    assert probe.wait_until(lambda: probe.count("tracking_error") >= 4 and probe.count("commands") >= 10)
    time.sleep(0.2)
    errors = list(probe.received["tracking_error"])
    assert [m.header.stamp.nanosec // 4_000_000 for m in errors] == [0, 3, 6, 9]
    assert probe.count("estimate") == 4
    for m in errors:
        np.testing.assert_allclose(m.position, q_d - states[m.header.stamp.nanosec // 4_000_000], rtol=0, atol=1e-15)
    probe.close()


def test_adaptive_node_refuses_bad_settings_by_name(executor, namespace):
    for name, value in (("law", "bayes"), ("payload_body", "no_such_link"), ("memory", 0.0)):
        with pytest.raises(ValueError, match=name if name != "payload_body" else value):
            AdaptiveControllerNode(namespace=namespace, context=executor.context,
                                   parameter_overrides=[Parameter("urdf_path", value=str(ARM)),
                                                        Parameter(name, value=value)])


def test_bad_messages_are_skipped_and_the_last_good_reference_stays(probe, start_node):
    """Each bad input is counted under its kind and changes nothing: the next joint state is answered with the
    library's computed torque for the last good reference (to 1e-12)."""
    robot = rd.load_urdf(str(ARM))
    node = start_node(ComputedTorqueNode, urdf_path=str(ARM), kp=[100.0] * 6 + [50.0], kd=20.0)
    names = list(robot.joint_names)
    rng = np.random.default_rng(3)
    q, v = robot.neutral() + rng.uniform(-0.5, 0.5, robot.nv), rng.normal(size=robot.nv)
    trajectory = smooth_trajectory(robot, 1.0)
    law = ComputedTorque(robot, [100.0] * 6 + [50.0], 20.0)
    good = trajectory_msg(names, trajectory)
    probe.wait_matched(probe.trajectory)
    probe.wait_matched(probe.joint_states)
    assert probe.published(probe.trajectory, good, until=lambda: node._trajectory is not None)

    def with_points(points, names=names):
        return JointTrajectory(joint_names=names, points=points)

    p = good.points
    not_increasing = [p[0], p[2], p[1]]
    short = [p[0], JointTrajectoryPoint(positions=list(p[1].positions)[:-1], velocities=p[1].velocities,
                                        accelerations=p[1].accelerations, time_from_start=p[1].time_from_start)]
    nan = [p[0], JointTrajectoryPoint(positions=p[1].positions, velocities=[float("nan")] * 7,
                                      accelerations=p[1].accelerations, time_from_start=p[1].time_from_start)]
    ref = JointTrajectoryPoint(positions=q.tolist(), velocities=v.tolist(), accelerations=v.tolist())
    bad = [
        ("joint_state_missing_joints", probe.joint_states, joint_state(names[:3], q[:3], v[:3], k=0)),
        ("joint_state_lengths", probe.joint_states, joint_state(names, q[:-1], k=0)),
        ("joint_state_non_finite", probe.joint_states, joint_state(names, np.r_[q[:-1], np.nan], v, k=0)),
        ("joint_state_velocities", probe.joint_states, joint_state(names, q, k=0)),
        ("trajectory_joints", probe.trajectory, with_points(p, names[:-1] + ["gripper_joint"])),
        ("trajectory_joints", probe.trajectory, with_points(p, names[:-1] + [names[0]])),
        ("trajectory_empty", probe.trajectory, with_points([])),
        ("trajectory_times", probe.trajectory, with_points(not_increasing)),
        ("trajectory_lengths", probe.trajectory, with_points(short)),
        ("trajectory_non_finite", probe.trajectory, with_points(nan)),
        ("reference_length", probe.reference, JointTrajectoryPoint(positions=q[:-1].tolist())),
        ("reference_length", probe.reference, JointTrajectoryPoint(positions=q.tolist(), velocities=[0.0])),
        ("reference_non_finite", probe.reference, JointTrajectoryPoint(positions=[float("nan")] * 7)),
    ]
    k = 1
    for kind, publisher, msg in bad:
        before = node.skipped[kind]
        assert probe.published(publisher, msg, until=lambda: node.skipped[kind] > before), kind
        commands = probe.count("commands")
        assert probe.published(probe.joint_states, joint_state(names, q, v, k=k),
                               until=lambda: probe.count("commands") > commands), kind
        t = float(stamp(k).sec - stamp(1).sec)                         # the trajectory started at the first state
        expected = law.torque(q, v, *trajectory(t))
        np.testing.assert_allclose(probe.last("commands").data, expected, rtol=1e-12, atol=1e-12, err_msg=kind)
        k += 1
    assert set(node.skipped) == {kind for kind, _, _ in bad}

    def answer(msg):
        """The command that answers the joint state ``msg``."""
        commands = probe.count("commands")
        assert probe.published(probe.joint_states, msg, until=lambda: probe.count("commands") > commands)
        return probe.last("commands").data

    stale = joint_state(names, q, v, k=k - 1)
    stale.header.stamp.nanosec += 500_000_000
    stale.header.stamp.sec -= 1                              # 0.5 s before the last answered stamp: skipped
    assert probe.published(probe.joint_states, stale, until=lambda: node.skipped["joint_state_stamp"] > 0)
    reset = joint_state(names, q, v, k=-990)                # stamped 10 s, 1000 s back: a reset restarts the trajectory
    np.testing.assert_allclose(answer(reset), law.torque(q, v, *trajectory(0.0)), rtol=1e-12, atol=1e-12)
    assert probe.published(probe.reference, ref, until=lambda: node._point is not None)
    np.testing.assert_allclose(answer(joint_state(names, q, v, k=-989)), law.torque(q, v, q, v, v),
                               rtol=1e-12, atol=1e-12)


def test_controller_waits_for_its_description_and_refuses_bad_joints(probe, start_node, executor, namespace):
    from std_msgs.msg import String
    from robot_dynamics.ros.qos import DESCRIPTION_QOS

    with pytest.raises(ValueError, match="every joint of the model"):
        ComputedTorqueNode(namespace=namespace, context=executor.context,
                           parameter_overrides=[Parameter("urdf_path", value=str(ARM)),
                                                Parameter("joints", value=["joint1", "joint2"])])
    node = start_node(AdaptiveControllerNode)
    assert node.robot is None
    description = probe.node.create_publisher(String, "robot_description", DESCRIPTION_QOS)
    description.publish(String(data=ARM.read_text()))
    assert probe.wait_until(lambda: node.robot is not None)
    assert node.get_parameter("body_names").value == node.robot.body_names
    assert node.get_parameter("joints").value == list(node.robot.joint_names)


# --- the simulator ---------------------------------------------------------------------------------------------

def test_sim_applies_good_commands_and_skips_bad_ones(probe, start_node):
    sim = start_node(SimNode, urdf_path=str(ARM), real_time_factor=1.0, rate=200.0)
    assert probe.wait_until(lambda: probe.count("joint_states") > 2)           # repeated while it waits
    assert {seconds(m.header) for m in probe.received["joint_states"]} == {0.0}
    tau = np.linspace(1.0, 7.0, 7)
    probe.wait_matched(probe.commands)
    assert probe.published(probe.commands, Float64MultiArray(data=tau.tolist()),
                           until=lambda: list(probe.received["joint_states"][-1].effort) == tau.tolist())
    for kind, data in (("command_length", tau[:-1]), ("command_non_finite", np.r_[tau[:-1], np.inf])):
        assert probe.published(probe.commands, Float64MultiArray(data=data.tolist()),
                               until=lambda: sim.skipped[kind] > 0), kind
    n = probe.count("joint_states")
    assert probe.wait_until(lambda: probe.count("joint_states") > n + 5)
    assert list(probe.last("joint_states").effort) == tau.tolist()
    stamps = sorted(seconds(m.header) for m in probe.received["joint_states"])
    assert stamps[-1] > 0.0 and len(set(stamps[-5:])) == 5           # the clock runs once commanded


def test_sim_floating_base_publishes_odometry_and_its_clock(probe, start_node):
    """A quadruped at rest without gravity stays at its initial pose; /clock carries the stamps of the states."""
    start_node(SimNode, urdf_path=str(QUADRUPED), floating_base=True, gravity=[0.0, 0.0, 0.0], publish_clock=True,
               rate=500.0, real_time_factor=1.0, initial_base_pose=[0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0])
    probe.wait_matched(probe.commands)
    assert probe.published(probe.commands, Float64MultiArray(data=[0.0] * 12),
                           until=lambda: probe.count("odom") > 10 and probe.latest_stamp("odom") > 0.0)
    odom = probe.last("odom")
    assert odom.child_frame_id == "trunk" and odom.header.frame_id == "odom"
    assert odom.pose.pose.position.z == pytest.approx(0.5) and odom.pose.pose.orientation.w == pytest.approx(1.0)
    clock = probe.last("clock").clock
    assert clock.sec + 1e-9 * clock.nanosec > 0.0
    assert probe.wait_until(lambda: (clock.sec, clock.nanosec) in
                            {(m.header.stamp.sec, m.header.stamp.nanosec) for m in probe.received["odom"]})


# --- MJCF (issue 38) -------------------------------------------------------------------------------------------
MJCF_DEFAULTS = """<mujoco>
  <default>
    <default class="arm"><joint damping="0.3" armature="0.05"/><geom density="800"/></default>
  </default>
</mujoco>
"""
# degrees, a default class from an included file, fromto capsules, a joint ref, a site: written for this test
MJCF_ARM = """<mujoco model="mjcf_arm">
  <compiler angle="degree"/>
  {defaults}
  <worldbody>
    <body name="link1" pos="0 0 0.1" childclass="arm">
      <joint name="j1" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.04"/>
      <body name="link2" pos="0 0 0.3" euler="30 0 0">
        <joint name="j2" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.035"/>
        <body name="link3" pos="0.3 0 0">
          <joint name="j3" axis="0 1 0" ref="10"/>
          <geom type="box" size="0.05 0.03 0.02" pos="0.1 0 0"/>
          <site name="tool" pos="0.2 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def mjcf_inline():
    """MJCF_ARM as one text, its defaults written in."""
    return MJCF_ARM.format(defaults=MJCF_DEFAULTS.replace("<mujoco>", "").replace("</mujoco>", ""))


@pytest.mark.parametrize("given", ["urdf_path", "robot_description"])
def test_computed_torque_node_on_an_mjcf_model_commands_the_library_torque(executor, namespace, start_node,
                                                                           tmp_path, given):
    """An MJCF file (its <include> found beside it) as urdf_path, or MJCF text as robot_description: the node loads
    it as rd.load_mjcf does and commands what the library's ComputedTorque computes on that model."""
    pytest.importorskip("mujoco")
    (tmp_path / "arm_defaults.xml").write_text(MJCF_DEFAULTS)
    path = tmp_path / "arm.xml"
    path.write_text(MJCF_ARM.format(defaults='<include file="arm_defaults.xml"/>'))
    text = mjcf_inline()
    robot = rd.load_mjcf(path)
    assert robot.nv == 3 and np.any(robot.damping)                 # the included class's drives are read
    node = start_node(ComputedTorqueNode, **({"urdf_path": str(path)} if given == "urdf_path" else
                                             {"robot_description": text}))
    assert node.robot.joint_names == robot.joint_names
    library = ComputedTorque(robot, 100.0, 20.0)
    probe = Probe(executor, namespace)
    names, rng = list(robot.joint_names), np.random.default_rng(3)
    q_d = robot.neutral() + 0.3
    probe.hold_reference(node, q_d)
    zero = np.zeros(robot.nv)
    for k in range(3):
        q, v = q_d + 0.1 * rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        probe.answered(names, q, v, k)
        np.testing.assert_allclose(probe.last("commands").data, library.torque(q, v, q_d, zero, zero), rtol=1e-12,
                                   atol=1e-12)
    probe.close()


def test_an_mjcf_free_joint_must_match_floating_base():
    """An MJCF's free joint is its floating base: a node told otherwise refuses the description by name."""
    pytest.importorskip("mujoco")
    from robot_dynamics.ros.description import load_robot
    fixed = mjcf_inline()
    free = fixed.replace('<joint name="j1" axis="0 0 1"/>', '<freejoint name="root"/>')
    with pytest.raises(ValueError, match="has a free joint .* floating_base:=true"):
        load_robot(None, free, False, (0.0, 0.0, -9.81), source="test")
    assert load_robot(None, free, True, (0.0, 0.0, -9.81), source="test").floating_base
    with pytest.raises(ValueError, match="has no free joint .* floating_base:=false"):
        load_robot(None, fixed, True, (0.0, 0.0, -9.81), source="test")
