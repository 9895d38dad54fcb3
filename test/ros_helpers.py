"""Helpers for tests that run real rclpy over loopback DDS: a private ROS domain, a probe node, a node process.

Import this module before ``rclpy.init()``: :func:`claim_ros_domain` must run before the first context exists.
"""
import atexit
import fcntl
import itertools
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.experimental import EventsExecutor
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectoryPoint

import robot_dynamics
from robot_dynamics.ros.conversions import from_multiarray
from robot_dynamics.ros.outputs import matrix_topics
from robot_dynamics.ros.processes import stop as stop_process
from robot_dynamics.ros.qos import DESCRIPTION_QOS

REPO = Path(__file__).resolve().parents[1]
URDF_DIR = REPO / "urdf"
RTOL = ATOL = 1e-12        # the node must publish the library's result for the same state
MATRIX_TOPICS = matrix_topics()      # the node's Float64MultiArray outputs but the per-frame ones (outputs.py)
_held_locks = []


def claim_ros_domain():
    """Give this process a ROS_DOMAIN_ID (1..101) that no other process on the machine has claimed.

    The claim is an exclusive ``flock`` on a file in the temp directory, held until the process exits, so
    concurrent test sessions (and pytest-xdist workers) never share a domain. Discovery stays on loopback.
    """
    if not _held_locks:
        start = os.getpid() % 101
        for k in range(101):
            domain = 1 + (start + k) % 101
            lock = open(Path(tempfile.gettempdir()) / f"robot_dynamics_ros_domain_{domain}.lock", "w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.close()
                continue
            _held_locks.append(lock)
            atexit.register(lock.close)          # held until the process ends; closed then, not collected
            os.environ["ROS_DOMAIN_ID"] = str(domain)
            break
        else:
            raise RuntimeError("every ROS domain 1..101 is claimed by another process")
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    return int(os.environ["ROS_DOMAIN_ID"])


def init_context():
    """A fresh rclpy context, initialised without signal handlers (pytest keeps Ctrl-C)."""
    context = rclpy.Context()
    rclpy.init(args=[], context=context, signal_handler_options=SignalHandlerOptions.NO)
    return context


class Spinner:
    """An executor spun by a thread of its own, and the nodes added to it, destroyed only after it has stopped.

    A node must not be destroyed while an executor may still run one of its callbacks or put its entities in a
    wait set: rclpy then raises InvalidHandle in the executor's thread (a callback publishing on a destroyed
    publisher, ``add_to_wait_set`` of a destroyed event handler). :meth:`close` therefore stops the executor
    first -- every running callback returned, its threads joined -- and then destroys the nodes, newest first.
    No sleep, no race.

    Parameters
    ----------
    context : rclpy.Context
    events : bool
        True: rclpy's C++ EventsExecutor, spun in 50 ms slices (its ``spin()`` would keep the other threads
        from creating entities or publishing meanwhile); False: a SingleThreadedExecutor. Not rclpy's
        MultiThreadedExecutor: its loop keeps waking while a worker runs a callback, and so holds the GIL
        that the test's own threads need -- a test's 50 Hz joint-state thread stood still for up to 2.4 s
        under it, and the ROS tests took 209 s instead of 126 s.
    """

    def __init__(self, context, events=False):
        self.context = context
        self.events = events
        self.executor = EventsExecutor(context=context) if events else SingleThreadedExecutor(context=context)
        self.nodes = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        if not self.events:
            self.executor.spin()
            return
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def add_node(self, node):
        """Spin ``node``; it is destroyed by :meth:`close`."""
        self.executor.add_node(node)
        self.nodes.append(node)

    def remove_node(self, node):
        """Stop spinning ``node`` (it is still destroyed by :meth:`close`)."""
        self.executor.remove_node(node)

    def close(self):
        self._stop.set()
        if self.events:
            self._thread.join(timeout=10)
            self.executor.shutdown(timeout_sec=10)
        else:
            self.executor.shutdown(timeout_sec=10)          # waits for every running callback
            self._thread.join(timeout=10)
        assert not self._thread.is_alive(), "the executor did not stop"
        for node in reversed(self.nodes):
            node.destroy_node()
        self.nodes.clear()


def eventually(predicate, timeout=30.0, every=0.01):
    """Poll ``predicate()`` until it holds; False when ``timeout`` s pass first."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


def stamp(k):
    """A distinct header stamp for the k-th message a test sends."""
    return Time(sec=1000 + k, nanosec=123)


def joint_state(names, q, v=None, k=0, effort=None, at=None):
    """A JointState of positions ``q`` (and velocities ``v``, efforts ``effort``), stamped ``stamp(k)`` or ``at``
    (a builtin_interfaces Time)."""
    msg = JointState(name=list(names), position=[float(x) for x in q])
    if v is not None:
        msg.velocity = [float(x) for x in v]
    if effort is not None:
        msg.effort = [float(x) for x in effort]
    msg.header.stamp = stamp(k) if at is None else at
    return msg


def odometry(q_base, v_base, child_frame_id, frame_id="odom"):
    """Odometry of pose ``q_base = [x, y, z, qx, qy, qz, qw]`` and base-frame twist ``v_base`` (6,)."""
    msg = Odometry(child_frame_id=child_frame_id)
    msg.header.frame_id = frame_id
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = (float(x) for x in q_base)
    t = msg.twist.twist
    t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = (float(x) for x in v_base)
    return msg


def reference(v_ref, a_ref):
    return JointTrajectoryPoint(velocities=[float(x) for x in v_ref], accelerations=[float(x) for x in a_ref])


def random_state(robot, rng):
    """A random ``(q, v)``: joints in [-1, 1] rad, a random unit base quaternion for a floating base."""
    q = robot.neutral().copy()
    nj = len(robot.joint_names)
    q[robot.nq - nj:] = rng.uniform(-1.0, 1.0, nj)
    if robot.floating_base:
        quat = rng.normal(size=4)
        q[:7] = np.concatenate([rng.uniform(-1.0, 1.0, 3), quat / np.linalg.norm(quat)])
    return q, rng.normal(size=robot.nv)


class Probe:
    """A test-side node that feeds the node under test and records everything it publishes.

    Parameters
    ----------
    executor : Spinner
        A spinning executor to which the probe adds itself (and which destroys its node when it closes).
    namespace : str
        Namespace of the node under test (each test uses its own, so no test sees another's messages).
    node_name : str
        Name of the node under test; its outputs are ``<namespace>/<node_name>/<topic>``.
    """

    def __init__(self, executor, namespace, node_name="dynamics_node"):
        self.executor = executor
        self.node = rclpy.create_node("probe", namespace=namespace, context=executor.context)
        self._cond = threading.Condition()
        self.latest = {}                         # topic -> last message
        self.history = {}                        # topic -> every message, for the topics listened to with keep
        self.counts = dict.fromkeys(MATRIX_TOPICS + ("com",), 0)
        self.com_stamps = []                     # (sec, nanosec) of every ~/com received, in order
        out = self._out = f"{namespace}/{node_name}/"
        self._subscriptions = {topic: self.node.create_subscription(Float64MultiArray, out + topic,
                                                                    self._recorder(topic), 10)
                               for topic in MATRIX_TOPICS}
        self._subscriptions["com"] = self.node.create_subscription(PointStamped, out + "com", self._recorder("com"),
                                                                   10)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.joint_states = self.node.create_publisher(JointState, f"{namespace}/joint_states", reliable)
        self.odom = self.node.create_publisher(Odometry, f"{namespace}/odom", reliable)
        self.reference = self.node.create_publisher(JointTrajectoryPoint, out + "reference", reliable)
        self.description = self.node.create_publisher(String, f"{namespace}/robot_description", DESCRIPTION_QOS)
        executor.add_node(self.node)

    def _recorder(self, topic):
        def record(msg):
            with self._cond:
                self.latest[topic] = msg
                self.counts[topic] += 1
                if topic in self.history:
                    self.history[topic].append(msg)
                if topic == "com":
                    self.com_stamps.append((msg.header.stamp.sec, msg.header.stamp.nanosec))
                self._cond.notify_all()
        return record

    def listen(self, topic, msg_type=Float64MultiArray, qos=10, keep=False):
        """Record the node's output ``topic`` too (one the probe does not take by default: ~/frame_jacobians/...):
        its last message in ``latest``, its count in ``counts`` and, with ``keep``, every message in ``history``.
        A topic starting with ``/`` is taken as it stands (``/diagnostics``)."""
        self.counts[topic] = 0
        if keep:
            self.history[topic] = []
        name = topic if topic.startswith("/") else self._out + topic
        self._subscriptions[topic] = self.node.create_subscription(msg_type, name, self._recorder(topic), qos)

    def stop_recording(self):
        """Unsubscribe from the node's outputs: a test that measures the node's rate with a recorder of its own
        keeps the probe's process free to keep pace (taking eight outputs at 50 Hz costs it about half a core)."""
        for subscription in self._subscriptions.values():
            self.node.destroy_subscription(subscription)
        self._subscriptions.clear()

    def close(self):
        """Stop spinning the probe (its node is destroyed with the Spinner's)."""
        self.executor.remove_node(self.node)

    def wait_until(self, predicate, timeout=10.0):
        """Wait until ``predicate()`` (called under the probe's lock) is true; False when ``timeout`` passes."""
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def result(self, future, timeout=10.0):
        """The result of an rclpy future (a service call of the probe's node) once the executor completed it."""
        def notify(_):
            with self._cond:
                self._cond.notify_all()
        future.add_done_callback(notify)
        assert self.wait_until(future.done, timeout), "no answer from the service"
        return future.result()

    def wait_matched(self, publisher, timeout=10.0):
        """Wait until ``publisher`` has a subscriber (so a best-effort message is not sent into the void)."""
        deadline = time.monotonic() + timeout
        while publisher.get_subscription_count() == 0:
            assert time.monotonic() < deadline, f"nobody subscribed to {publisher.topic_name}"
            time.sleep(0.01)

    def array(self, topic):
        with self._cond:
            return from_multiarray(self.latest[topic])

    def exchange(self, msg, until=None, also=(), timeout=15.0):
        """Publish the JointState ``msg`` (again every 0.5 s, each time after the ``(publisher, message)``
        pairs in ``also``) until ``until()`` holds; by default until ``msg`` is answered (a new mass matrix and
        a ``~/com`` carrying the message's stamp). Returns whether that happened before ``timeout``.
        """
        key = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        with self._cond:
            before = self.counts["mass_matrix"]
        if until is None:
            def until():
                return key in self.com_stamps and self.counts["mass_matrix"] > before
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for publisher, other in also:
                publisher.publish(other)
            self.joint_states.publish(msg)
            if self.wait_until(until, timeout=min(0.5, max(0.0, deadline - time.monotonic()))):
                return True
        return False

    def published(self, publisher, msg, until, timeout=10.0):
        """Publish ``msg`` (again every 0.5 s) until ``until()`` holds; returns whether it did within ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            publisher.publish(msg)
            t_end = min(time.monotonic() + 0.5, deadline)
            while time.monotonic() < t_end:
                if until():
                    return True
                time.sleep(0.005)
        return until()

    def matches(self, expected):
        """A predicate: the last message of every topic in ``expected`` (see :func:`expected_outputs`) holds it."""
        def holds():
            for topic, value in expected.items():
                msg = self.latest.get(topic)
                if msg is None:
                    return False
                if topic == "com":
                    point, key, frame_id = value
                    got = np.array([msg.point.x, msg.point.y, msg.point.z])
                    if ((msg.header.stamp.sec, msg.header.stamp.nanosec) != key or msg.header.frame_id != frame_id
                            or not np.allclose(got, point, rtol=RTOL, atol=ATOL)):
                        return False
                elif len(msg.data) != value.size or not np.allclose(
                        np.asarray(msg.data).reshape(value.shape), value, rtol=RTOL, atol=ATOL):
                    return False
            return True
        return holds

    def assert_outputs(self, expected):
        """Assert that the last message of every topic in ``expected`` holds it, with the canonical layout."""
        with self._cond:
            latest = {topic: self.latest.get(topic) for topic in expected}
        for topic, value in expected.items():
            msg = latest[topic]
            assert msg is not None, f"nothing received on ~/{topic}"
            if topic == "com":
                point, key, frame_id = value
                assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == key
                assert msg.header.frame_id == frame_id
                np.testing.assert_allclose([msg.point.x, msg.point.y, msg.point.z], point, rtol=RTOL, atol=ATOL)
                continue
            dims = [(d.size, d.stride) for d in msg.layout.dim]
            if value.ndim == 2:
                rows, cols = value.shape
                assert dims == [(rows, rows * cols), (cols, cols)], f"~/{topic} layout {dims}"
            else:
                assert dims == [(value.size, value.size)], f"~/{topic} layout {dims}"
            for d in msg.layout.dim:                          # each label names the entries along its axis
                assert len(d.label.split(",")) == d.size, f"~/{topic} label {d.label!r} for {d.size} entries"
            assert msg.layout.data_offset == 0
            np.testing.assert_allclose(from_multiarray(msg), value, rtol=RTOL, atol=ATOL, err_msg=f"~/{topic}")


def expected_outputs(robot, q, v, k, frame_id, ref=None, velocities=True):
    """What the node must publish for the state ``(q, v)`` sent with stamp ``stamp(k)``: the library's result.

    ``ref`` is ``(v_ref, a_ref)`` when a regressor is expected; ``velocities=False`` when the joint state had
    none (then C, C v and Y are not published and v is zero).
    """
    if not velocities:
        v = np.zeros_like(v)
    d = robot.dynamics(q, v, *ref) if ref is not None else robot.dynamics(q, v)
    out = {"mass_matrix": d.M, "gravity": d.g, "com_jacobian": d.J_com,
           "com": (d.com, (stamp(k).sec, stamp(k).nanosec), frame_id)}
    if velocities:
        out.update(coriolis_matrix=d.C, coriolis_vector=d.C @ v, friction=robot.friction_torque(v))
        if ref is not None:
            out["regressor"] = d.Y
    return out


def child_environment(**extra):
    """The environment of a Python process a test starts: this one's, unbuffered, with this robot_dynamics first
    on the path (the package the test imported, installed or not), plus ``extra``."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", **extra)
    package_root = str(Path(robot_dynamics.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


class NodeProcess:
    """``python -m robot_dynamics.ros.dynamics_node --ros-args ...`` as a user starts it, its output in a file.

    Parameters
    ----------
    ros_args : list of str
        What follows ``--ros-args``.
    log_path : pathlib.Path
        Where stdout and stderr go.
    address_space_mb : int, optional
        An address-space limit (RLIMIT_AS) for the node, MB, as ``ulimit -v`` would set it.
    """

    def __init__(self, ros_args, log_path, address_space_mb=None):
        env = child_environment(RCUTILS_LOGGING_BUFFERED_STREAM="0", RCUTILS_COLORIZED_OUTPUT="0")
        self.log_path = log_path
        self._log = open(log_path, "w")
        command = [sys.executable, "-m", "robot_dynamics.ros.dynamics_node", "--ros-args", *ros_args]
        if address_space_mb is not None:          # set in the child, then exec'd: the limit holds in the node
            command = [sys.executable, "-c", "import os, resource, sys; resource.setrlimit(resource.RLIMIT_AS, "
                       f"({address_space_mb << 20}, {address_space_mb << 20})); os.execv(sys.executable, "
                       "sys.argv[1:])", *command]
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True)

    def rss_mb(self):
        """The node's resident memory now, MB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024

    def log(self):
        return self.log_path.read_text()

    def wait_log(self, text, timeout=30.0):
        """Wait until ``text`` appears in the node's output; False when ``timeout`` passes or the node died."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return True
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        return text in self.log()

    def stop(self):
        """SIGINT as Ctrl-C would; SIGKILL the process group if it has not exited within 10 s."""
        code = stop_process(self.process)
        self._log.close()
        return code


_PUBLISHER_SCRIPT = """
import sys, time
import rclpy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String
from robot_dynamics.ros.qos import DESCRIPTION_QOS
topic, path = sys.argv[1:3]
xml = open(path).read()
rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
node = rclpy.create_node("description_publisher")
publisher = node.create_publisher(String, topic, DESCRIPTION_QOS)
message = String(data=xml)
print("ready", time.monotonic(), flush=True)
sys.stdin.readline()
print("publishing", time.monotonic(), flush=True)
publisher.publish(message)
print("published", time.monotonic(), flush=True)
while True:
    time.sleep(1.0)
"""


class DescriptionPublisher:
    """A process of its own that publishes the text of ``path`` once on ``topic`` when told to (:meth:`publish`;
    transient local, as robot_state_publisher does), and stays alive to hold it.

    The publication is in another process than the test's on purpose: rclpy's ``publish`` keeps the GIL while
    DDS takes a large message (0.6 s for 1.3 MB here, now and then), which would stall every other thread of
    the publishing process -- a test's joint-state stream among them. The process starts (Python, rclpy, its
    DDS participant: about a second of CPU) before :meth:`publish`, so a measurement may begin at the
    publication without the start-up in it.
    """

    def __init__(self, topic, path, timeout=60.0):
        env = child_environment()
        self.process = subprocess.Popen([sys.executable, "-c", _PUBLISHER_SCRIPT, topic, str(path)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, env=env, start_new_session=True)
        self.timeout = timeout
        self._wait_for("ready")

    def publish(self):
        """Publish now; returns ``time.monotonic()`` (the machine's clock, shared by processes) just before the
        ``publish`` call."""
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        return self._wait_for("publishing")

    def _wait_for(self, word):
        deadline = time.monotonic() + self.timeout
        lines = []
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:                                  # the process ended
                break
            lines.append(line)
            if line.startswith(word + " "):
                return float(line.split()[1])
        self.stop()
        raise RuntimeError(f"the description publisher did not say {word!r}: {''.join(lines)[-2000:]}")

    def stop(self):
        """End the process (SIGINT, then SIGKILL)."""
        code = stop_process(self.process)
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()
        return code


# ---- fixtures the ROS test modules share (imported by name into each: pytest finds them there) ------------------
_namespaces = itertools.count()


@pytest.fixture(scope="module")
def context():
    """A private rclpy context for the module (init_context), shut down after its last test."""
    context = init_context()
    yield context
    rclpy.shutdown(context=context)


@pytest.fixture
def executor(context):
    """A spinning executor per test; it stops before the nodes of the test are destroyed (Spinner)."""
    spinner = Spinner(context)
    yield spinner
    spinner.close()


@pytest.fixture
def namespace(request):
    """A namespace of the test's own: its module's name, this process and a counter."""
    return f"/{request.module.__name__}_{os.getpid()}_{next(_namespaces)}"


@pytest.fixture
def probe(executor, namespace):
    """A Probe in the test's namespace."""
    return Probe(executor, namespace)


@pytest.fixture
def start_node(executor, namespace):
    """Start a DynamicsNode in this process with the given parameters (destroyed when the executor closes)."""
    from robot_dynamics.ros.dynamics_node import DynamicsNode

    def start(**params):
        node = DynamicsNode(namespace=namespace, context=executor.context,
                            parameter_overrides=[Parameter(name, value=value) for name, value in params.items()])
        executor.add_node(node)
        return node
    return start


@pytest.fixture
def processes():
    """Node processes started by a test; each is stopped (SIGINT, then SIGKILL) afterwards."""
    started = []
    yield started
    for process in started:
        process.stop()
