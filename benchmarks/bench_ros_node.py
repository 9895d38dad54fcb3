"""Latency and throughput of dynamics_node over real rclpy, next to a bare rclpy relay measured in the same run.

For each robot (the bundled 7-DoF arm, the ~30-DoF floating-base humanoid) and each rate (250, 500, 1000 Hz),
this script publishes joint states for a few seconds to

- ``relay_node`` (receive, publish: the cost of rclpy and DDS alone),
- ``dynamics_node`` (the same, plus merging the state, one ``robot.dynamics()`` pass and seven publications) and,
  for a fixed base,
- ``dynamics_node`` with the momentum observer (``publish_external_torque``, a wrench at the tool, collision
  thresholds): the joint states of a smooth motion with velocities, the efforts of its inverse dynamics and
  stamps ``period`` apart, as ros2_control's joint_state_broadcaster sends them; besides the dynamics outputs (C,
  C v and tau_f too, velocities being known) the node updates the observer and the detector and publishes
  ``~/external_torque`` and ``~/external_wrench/tcp``; the node computes and publishes only the outputs somebody
  subscribes to (the driver takes ``~/external_torque`` alone), so
- ``dynamics_node`` with the observer and a subscriber on every output (``observer_all``: M, C, C v, g, the CoM, its
  Jacobian, tau_f, ~/external_torque, ~/external_wrench/tcp, ~/state -- ten publications a joint state; a process
  of its own subscribes to all but ~/external_torque) is the heavy case, and the controllers (fixed base):
- ``computed_torque_node`` (``computed_torque``) and ``adaptive_controller_node`` (``adaptive``, its defaults: the
  composite Slotine-Li law, its state published at 100 Hz), following a JointTrajectory of sines (60 s, a quintic
  point every 0.1 s, stamped so that it starts at the first joint state): joint states a little off that motion,
  with velocities, stamps ``period`` apart; the answer is the effort command (counted: one per answered state),
  for computed torque matched to the joint state whose command, computed here by ComputedTorque with the node's
  gains, is nearest (among the states sent since the last matched one: the node answers in order); the adaptive
  node's commands depend on every state it answered, so its ~/tracking_error, stamped as the joint state and
  published right after the command, at 100 Hz, names the state that command answered: its latency is that
  command's arrival (a sample of its answers: those that also publish its state; timing the tracking error
  itself added ~0.2 ms, the command's delivery to the driver ahead of it).  A second row (``adaptive, each
  state``) times every joint state by the first command that arrived after it (the node answers in order): every
  answer counted, but one that answers an earlier state, the node being more than a period behind, counts for the
  later one (low in the tail; the median, under a period, unaffected: on computed_torque_node this reads its own
  median within ~0.02 ms).  Measured on the same runs, the 100 Hz sample's median was 0.1 ms above it: the ticks
  that also publish the state are the slow ones, and the same 0.1-0.15 ms showed with the controller's update
  replaced by zeros, so it is not the controller's (dropping two of the three state messages changed nothing),

each running as its own process as a user would start it, and reports the fraction of joint states answered
and the median and p99 latency from publishing a joint state to receiving its answer: the mass matrix, or, with
the observer, ``~/external_torque`` (published after every dynamics output). The nodes take turns in short
segments, so a change in the machine's load falls on all alike. An answer is matched to its joint state by
content (the relay echoes the positions; the node's M is compared with the library's M of every recently sent
state) or, for ``~/external_torque``, by the stamp it carries.

Run from the repository (ROS 2 wheels installed)::

    python benchmarks/bench_ros_node.py                  # both robots, 250/500/1000 Hz, 3 s per rate and node
    python benchmarks/bench_ros_node.py --robots arm7 --rates 500 --duration 5
    python benchmarks/bench_ros_node.py --robots arm7 --rates 1000 --cases relay observer
    python benchmarks/bench_ros_node.py --robots arm7 --rates 1000 --cases relay computed_torque adaptive --duration 10

Goals: at 500 Hz on the arm, >= 99 % answered and a median added latency <= 0.3 ms over the relay; with the
observer, at 1 kHz on the arm, >= 99 % answered (issue 28); the controllers at 1 kHz on the arm: as many answered
as the relay (within 1 point) and a median added latency <= 0.3 ms (issue 37).
"""
import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))

import rclpy  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.experimental import EventsExecutor  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from geometry_msgs.msg import PointStamped, WrenchStamped  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.controllers import ComputedTorque  # noqa: E402
from robot_dynamics.ros.conversions import trajectory_from_msg  # noqa: E402
from robot_dynamics.ros.qos import OUTPUT_QOS, STATE_QOS  # noqa: E402
from robot_dynamics.ros.processes import stop as stop_process  # noqa: E402

ROBOTS = {"arm7": False, "humanoid": True}      # name -> floating base
CASES = ("relay", "dynamics", "observer", "observer_all", "computed_torque", "adaptive")   # all but the first two:
CONTROLLERS = {"computed_torque": "computed_torque_node", "adaptive": "adaptive_controller_node"}   # fixed base only
OBSERVER = {"observer_gain": "100.0", "collision_thresholds": "[20.0]", "wrench_frames": "[tcp]"}
SEGMENTS = 4                                    # turns each node takes per rate
DRAIN = 0.2                                     # s to wait for the last answers of a segment
ALL_OUTPUTS = {**dict.fromkeys(("mass_matrix", "coriolis_matrix", "coriolis_vector", "gravity",
                                "com_jacobian", "friction"), Float64MultiArray),
               "com": PointStamped, "external_wrench/tcp": WrenchStamped, "state": JointState}   # observer_all's
SINK = """
import importlib, sys, rclpy
from rclpy.experimental import EventsExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
rclpy.init()
node = rclpy.create_node("bench_sink")
for arg in sys.argv[1:]:
    topic, cls = arg.rsplit(":", 1)
    module, name = cls.rsplit(".", 1)
    node.create_subscription(getattr(importlib.import_module(module), name), topic, lambda msg: None,
                             QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE), raw=True)
executor = EventsExecutor()
executor.add_node(node)
try:
    executor.spin()
except (KeyboardInterrupt, Exception):
    pass
"""
MATCH_WINDOW = 200                              # an answer is looked for among this many latest joint states


class Target:
    """A node process under test, the driver's link to it, and how to recognise its answers.

    Parameters
    ----------
    kind : str
        ``"relay"``, ``"dynamics"``, ``"observer"`` or ``"observer_all"``.
    robot : robot_dynamics model
    urdf : pathlib.Path
    driver : rclpy node that publishes the joint states and receives the answers
    """

    def __init__(self, kind, robot, urdf, driver):
        self.kind, self.robot = kind, robot
        self.namespace = f"/bench_{os.getpid()}_{urdf.stem}_{kind}"
        node = "relay_node" if kind == "relay" else CONTROLLERS.get(kind, "dynamics_node")
        self.controller = CONTROLLERS.get(kind)
        if self.controller is not None:
            params = ["-p", f"urdf_path:={urdf}"]
        elif kind == "relay":
            params = ["-p", f"rows:={robot.nv}"]
        else:
            params = ["-p", f"urdf_path:={urdf}", "-p", f"floating_base:={str(robot.floating_base).lower()}"]
        self.observed = kind.startswith("observer")
        if self.observed:
            params += ["-p", "publish_external_torque:=true"]
            params += [arg for name, value in OBSERVER.items() for arg in ("-p", f"{name}:={value}")]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
        self.sink = None
        if kind == "observer_all":              # a process of its own takes every other output (raw, dropped)
            topics = [f"{self.namespace}/{node}/{topic}:{cls.__module__}.{cls.__name__}"
                      for topic, cls in ALL_OUTPUTS.items()]
            self.sink = subprocess.Popen([sys.executable, "-c", SINK, *topics], env=env, start_new_session=True)
        module = [f"robot_dynamics.ros.{node}"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", *module, "--ros-args", "-r", f"__ns:={self.namespace}",
             "--log-level", "warn", *params], env=env, start_new_session=True)
        self.joints = driver.create_publisher(JointState, f"{self.namespace}/joint_states", STATE_QOS)
        self.odom = driver.create_publisher(Odometry, f"{self.namespace}/odom", STATE_QOS)
        self.received = []                      # (t_received, data or stamp, joint states sent by then)
        self.sent = self.commands = 0           # joint states sent, a controller's commands received
        self.command_times = []                 # arrival (s) of each command
        self.each_state = []                    # latency (s) of each state by its first command after it (run)
        self.last_command = None                # the adaptive node's: arrival (s) of the last command since the last
        self.pending = None                     # tracking error, or the stamp of a tracking error ahead of its command
        self.stamp = 0                          # ns, the stamps of the observer's joint states go on from here
        answers = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        if self.controller is not None:
            self.trajectory = driver.create_publisher(JointTrajectory, f"{self.namespace}/{node}/joint_trajectory",
                                                      OUTPUT_QOS)
            self.motion = Motion(robot)
            self.stamp = self.motion.start      # ns, the warm-up's joint state; the others go on from here
            driver.create_subscription(Float64MultiArray, f"{self.namespace}/effort_controller/commands",
                                       self._on_command, answers)
            if kind == "adaptive":
                driver.create_subscription(JointState, f"{self.namespace}/{node}/tracking_error", self._on_torque,
                                           answers)
        elif self.observed:
            driver.create_subscription(JointState, f"{self.namespace}/{node}/external_torque", self._on_torque,
                                       answers)
        else:
            driver.create_subscription(Float64MultiArray, f"{self.namespace}/{node}/mass_matrix", self._on_answer,
                                       answers)

    def _on_answer(self, msg):
        self.received.append((time.perf_counter(), np.frombuffer(msg.data, dtype=np.float64).copy(), self.sent))

    def _on_command(self, msg):
        self.commands += 1
        self.command_times.append(time.perf_counter())
        if self.kind == "computed_torque":
            self._on_answer(msg)
        elif self.pending is not None:          # the adaptive node's command of the state its tracking error named
            self.received.append((time.perf_counter(), self.pending, self.sent))
            self.pending = None
        else:
            self.last_command = time.perf_counter()

    def _on_torque(self, msg):
        stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
        if self.kind != "adaptive":
            self.received.append((time.perf_counter(), stamp, self.sent))
        elif self.last_command is None:         # its command is still on its way
            self.pending = stamp
        else:                                   # the command published just before this tracking error
            self.received.append((self.last_command, stamp, self.sent))
            self.last_command = None

    def expected(self, q):
        """What the answer to the joint positions of ``q`` holds, flattened: M, or the echoed positions."""
        if self.kind == "relay":
            return q[self.robot.nq - len(self.robot.joint_names):]
        return self.robot.dynamics(q, np.zeros(self.robot.nv)).M.ravel()

    def matches(self, data, expected):
        if self.kind == "relay":
            return np.array_equal(data[:expected.size], expected)
        return np.allclose(data, expected, rtol=1e-9, atol=1e-12)

    def warm_up(self, q, timeout=120.0):
        """Publish ``q`` until the node answers: discovery done, model built, kernels compiled (a controller: its
        trajectory too, and one joint state of its motion, stamped at the trajectory's start)."""
        nj = len(self.robot.joint_names)
        msg = JointState(name=list(self.robot.joint_names), position=q[self.robot.nq - nj:].tolist())
        if self.observed:
            msg.velocity = msg.effort = [0.0] * nj
        if self.controller is not None:
            msg = self.motion.states([self.motion.start])[0]
        self.received, self.commands = [], 0
        deadline = time.monotonic() + timeout
        while not (self.received or self.commands):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"the {self.kind} node in {self.namespace} never answered")
            if self.robot.floating_base:
                self.odom.publish(_odometry(q, self.robot.root_link))
            if self.controller is not None:
                self.trajectory.publish(self.motion.message)
            self.joints.publish(msg)
            time.sleep(0.05)

    def run(self, states, rate):
        """Publish ``states`` at ``rate`` Hz; returns (number sent, number answered, [latency of each answered state
        matched] in s)."""
        nj = len(self.robot.joint_names)
        msgs = [JointState(name=list(self.robot.joint_names), position=q[self.robot.nq - nj:].tolist()) for q in states]
        if self.controller is not None:
            self.stamp += 10**9                 # a gap (the adaptation steps at most MAX_ADAPTATION_STEP over it)
            stamps = self.stamp + np.arange(len(msgs)) * int(round(1e9 / rate))
            self.stamp = int(stamps[-1])
            msgs = self.motion.states(stamps)
            expected = list(stamps) if self.kind == "adaptive" else self.motion.commands
        elif self.observed:
            expected = self._observed(msgs, rate)
        else:
            expected = [self.expected(q) for q in states]
        self.received, self.sent, self.commands, self.command_times = [], 0, 0, []
        self.last_command = self.pending = None
        t_pub = np.zeros(len(msgs))
        period, t_next = 1.0 / rate, time.perf_counter()
        for i, msg in enumerate(msgs):
            t_next += period
            delay = t_next - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self.sent = i + 1
            t_pub[i] = time.perf_counter()
            self.joints.publish(msg)
        time.sleep(DRAIN)
        self.each_state = self._first_commands(t_pub)
        latencies = self._latencies(expected, t_pub)
        return len(msgs), (self.commands if self.controller else len(latencies)), latencies

    def _observed(self, msgs, rate):
        """Give the messages a smooth motion through their positions, its velocities, the efforts of its inverse
        dynamics and stamps a period apart (after a gap that restarts the observer); returns their stamps."""
        period = int(round(1e9 / rate))
        self.stamp += 10**9
        t = np.arange(len(msgs)) / rate
        amplitude = np.linspace(0.2, 0.5, self.robot.nv)
        q = self.robot.neutral() + amplitude * np.sin(2 * np.pi * 0.5 * t[:, None])
        v = 2 * np.pi * 0.5 * amplitude * np.cos(2 * np.pi * 0.5 * t[:, None])
        a = -(2 * np.pi * 0.5) ** 2 * (q - self.robot.neutral())
        stamps = []
        for k, msg in enumerate(msgs):
            msg.position, msg.velocity = q[k].tolist(), v[k].tolist()
            msg.effort = self.robot.inverse_dynamics(q[k], v[k], a[k]).tolist()
            stamps.append(self.stamp + k * period)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamps[-1], 10**9)
        self.stamp = stamps[-1]
        return stamps

    def _latencies(self, expected, t_pub):
        """Latency of each answered joint state: the answer is matched among the states sent before it (by its
        stamp, for the observer's)."""
        if self.kind == "computed_torque":
            return self._nearest(expected, t_pub)
        if self.observed or self.controller:
            index = {stamp: i for i, stamp in enumerate(expected)}
            return list({index[stamp]: t_recv - t_pub[index[stamp]] for t_recv, stamp, _ in self.received
                         if stamp in index}.values())
        latency = {}
        for t_recv, data, sent in self.received:
            for i in range(sent - 1, max(sent - 1 - MATCH_WINDOW, -1), -1):
                if i not in latency and self.matches(data, expected[i]):
                    latency[i] = t_recv - t_pub[i]
                    break
        return list(latency.values())

    def _first_commands(self, t_pub):
        """Each joint state's latency by the first command that arrived after it (the module docstring)."""
        times = np.array(self.command_times)
        after = np.searchsorted(times, t_pub)
        return list(times[after[after < len(times)]] - t_pub[after < len(times)])

    def _nearest(self, expected, t_pub):
        """Latency of each answered joint state, a controller's: each command matched to the state, among those sent
        after the last matched one and before it arrived, whose expected command is nearest."""
        latencies, last = [], -1
        for t_recv, data, sent in self.received:
            if sent <= last + 1:
                continue
            candidates = expected[last + 1:sent]
            i = last + 1 + int(np.argmin(np.abs(candidates - data).max(axis=1)))
            latencies.append(t_recv - t_pub[i])
            last = i
        return latencies

    def stop(self):
        stop_process(self.process)
        if self.sink is not None:
            stop_process(self.sink)


class Motion:
    """A controller's reference, a JointTrajectory of sines per joint stamped ``start`` (it starts there), the joint
    states sent along it (a little off it, with velocities) and the commands ComputedTorque with computed_torque_node's
    default gains gives them."""

    def __init__(self, robot, duration=60.0, spacing=0.1):
        self.robot, self.start = robot, 10**9      # ns
        n = robot.nv
        self.amplitude, self.omega = np.linspace(0.3, 0.1, n), np.linspace(1.0, 2.0, n)
        times = np.arange(0.0, duration + spacing / 2, spacing)
        q, v, a = self._sines(times)
        msg = JointTrajectory(joint_names=list(robot.joint_names))
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(self.start, 10**9)
        for k, t in enumerate(times):
            point = JointTrajectoryPoint(positions=q[k].tolist(), velocities=v[k].tolist(),
                                         accelerations=a[k].tolist())
            point.time_from_start.sec, point.time_from_start.nanosec = divmod(int(round(t * 1e9)), 10**9)
            msg.points.append(point)
        self.message = msg
        self.reference = trajectory_from_msg(msg, robot.joint_names)[0]
        self.commands = None
        self._computed_torque = ComputedTorque(robot, 100.0, 20.0)

    def _sines(self, t):
        phase = self.omega * np.asarray(t)[:, None]
        q = self.robot.neutral() + self.amplitude * np.sin(phase)
        return q, self.amplitude * self.omega * np.cos(phase), -self.amplitude * self.omega ** 2 * np.sin(phase)

    def states(self, stamps):
        """JointStates stamped ``stamps`` (ns) along the motion, a little off it; self.commands: theirs."""
        t = (np.asarray(stamps, dtype=np.int64) - self.start) * 1e-9
        q, v, _ = self._sines(t)
        q, v = q + 0.01 * np.sin(3.0 * t)[:, None], v + 0.03 * np.cos(3.0 * t)[:, None]
        msgs, commands = [], []
        for k, stamp in enumerate(stamps):
            msg = JointState(name=list(self.robot.joint_names), position=q[k].tolist(), velocity=v[k].tolist())
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp), 10**9)
            msgs.append(msg)
            commands.append(self._computed_torque.torque(q[k], v[k], *self.reference(t[k])))
        self.commands = np.array(commands)
        return msgs


def _odometry(q, root_link):
    msg = Odometry(child_frame_id=root_link)
    msg.header.frame_id = "odom"
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = (float(x) for x in q[:7])
    return msg


def random_states(robot, count, rng):
    """``count`` configurations with random joints in [-1, 1] rad (the base, if any, at its neutral pose)."""
    nj = len(robot.joint_names)
    states = np.tile(robot.neutral(), (count, 1))
    states[:, robot.nq - nj:] = rng.uniform(-1.0, 1.0, (count, nj))
    return states


def measure(targets, robot, rate, duration, rng):
    """The targets in alternating segments at ``rate``; returns {kind: {answered, median, p99}}."""
    sent = dict.fromkeys((t.kind for t in targets), 0)
    answered = dict(sent)
    latencies = {t.kind: [] for t in targets}
    count = max(1, int(rate * duration / SEGMENTS))
    for segment in range(SEGMENTS):
        for target in targets if segment % 2 == 0 else targets[::-1]:
            n, k, lat = target.run(random_states(robot, count, rng), rate)
            kinds = (target.kind, f"{target.kind}, each state") if target.kind == "adaptive" else (target.kind,)
            for kind, each in zip(kinds, (lat, target.each_state)):
                sent[kind], answered[kind] = sent.get(kind, 0) + n, answered.get(kind, 0) + k
                latencies.setdefault(kind, []).extend(each)
    return {kind: summary(sent[kind], answered[kind], latencies[kind]) for kind in sent}


def summary(sent, answered, latencies):
    ms = np.array(latencies) * 1e3
    return {"answered": answered / sent, "median": float(np.median(ms)) if len(ms) else float("nan"),
            "p99": float(np.percentile(ms, 99)) if len(ms) else float("nan")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    parser.add_argument("--rates", nargs="+", type=float, default=[250.0, 500.0, 1000.0], help="Hz")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds of joint states per rate and node")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES,
                        help="the nodes to measure (the observer only on fixed-base robots)")
    args = parser.parse_args(argv)

    rclpy.init(args=[])
    driver = rclpy.create_node(f"bench_driver_{os.getpid()}")
    executor = EventsExecutor()         # not a Python executor: its ~0.1 ms a callback under the GIL made the driver's
    executor.add_node(driver)           # own stream bursty (the relay answered 95.6 % at 1 kHz, 98.5 % with this)
    stop = threading.Event()

    def spin():                         # in slices, as test/ros_helpers.Spinner does
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)
    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    rng = np.random.default_rng(0)
    rows = []
    try:
        for name in args.robots:
            urdf = REPO / "urdf" / f"{name}.urdf"
            robot = rd.load_urdf(str(urdf), floating_base=ROBOTS[name])
            targets = []
            try:
                kinds = [kind for kind in args.cases if kind in ("relay", "dynamics") or not robot.floating_base]
                targets += [Target(kind, robot, urdf, driver) for kind in kinds]
                for target in targets:
                    target.warm_up(robot.neutral())
                for rate in args.rates:
                    rows.append((name, robot.nv, rate, measure(targets, robot, rate, args.duration, rng)))
                    print_row(*rows[-1])
            finally:
                for target in targets:
                    target.stop()
    finally:
        stop.set()
        spinner.join(timeout=5)
        executor.shutdown()
        driver.destroy_node()
        rclpy.try_shutdown()
    print_table(rows, args.duration)
    return 0


def print_row(name, nv, rate, result):
    cells = [f"{kind} {100 * r['answered']:.1f} % {r['median']:.3f}/{r['p99']:.3f} ms" for kind, r in result.items()]
    print(f"{name} (nv={nv}) {rate:g} Hz: " + ", ".join(cells), file=sys.stderr, flush=True)


def print_table(rows, duration):
    print(f"\nLatency from publishing a joint state to receiving its answer (the mass matrix; with the observer, "
          f"~/external_torque; a controller's effort command), median / p99 in ms ({duration:g} s per rate and node, "
          f"in {SEGMENTS} alternating segments); added: the median over the relay's\n")
    print("| robot | rate | node | answered | median | p99 | added median |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for name, nv, rate, result in rows:
        relay = result.get("relay")
        for kind, r in result.items():
            added = f"{r['median'] - relay['median']:+.3f}" if relay is not None and kind != "relay" else ""
            print(f"| {name} (nv={nv}) | {rate:g} Hz | {kind} | {100 * r['answered']:.1f} % | {r['median']:.3f} | "
                  f"{r['p99']:.3f} | {added} |")


if __name__ == "__main__":
    sys.exit(main())
