"""dynamics_node while a new robot description loads: the answer gap, and the node's memory after refusals.

The node runs as a user starts it (``python -m robot_dynamics.ros.dynamics_node``), serving arm7 from the
robot_description topic, while this script streams joint states to it at ``--rate`` Hz (best effort, as a
robot's driver does). For each size it then publishes arm7 with that many more links hung by fixed joints (the
same joints: the node accepts it) from a process of its own, as robot_state_publisher would (rclpy keeps the
GIL while DDS takes a large message: published from this process, it would stall the stream and count as the
node's gap; ros_helpers.DescriptionPublisher), and measures, from the publication to the first answer of the new
model:

- the load time (the node loads in a child process: robot_dynamics.ros.loader),
- the fraction of the stream answered meanwhile, and the longest and 99th-percentile gap between two answers,

beside the same figures over a quiet stretch of the same length before it. It then publishes descriptions the
node refuses -- an N-link star (other joints), arm7 with masses of 1e308 (non-finite) -- and reports the node's
resident memory before and after.

Run from the repository (ROS 2 wheels installed)::

    python benchmarks/bench_ros_description_swap.py                       # 500 and 1500 more links, 100 Hz
    python benchmarks/bench_ros_description_swap.py --links 1500 --rate 500

Goal (issue 13, item 6): during the load the answers go on as before it -- no gap longer than one stream period
beyond the quiet stretch's -- and a refused description leaves the node's memory within 10 MB of where it was.
"""
import argparse
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "test"))          # random_urdf
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.ros.processes import stop as stop_process  # noqa: E402
from robot_dynamics.ros.qos import DESCRIPTION_QOS, STATE_QOS  # noqa: E402
from random_urdf import star, with_fixed_links  # noqa: E402
from ros_helpers import DescriptionPublisher  # noqa: E402

ARM = REPO / "urdf" / "arm7.urdf"


def rss_mb(pid):
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024


class Bench:
    """The node process, the stream of joint states to it and the answers (arrival time, M[0, 0])."""

    def __init__(self, driver, rate):
        self.namespace = f"/bench_swap_{os.getpid()}"
        self.period = 1.0 / rate
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
        self.log = open(f"/tmp/bench_ros_description_swap_{os.getpid()}.log", "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "robot_dynamics.ros.dynamics_node", "--ros-args", "-r", f"__ns:={self.namespace}"],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.description = driver.create_publisher(String, f"{self.namespace}/robot_description", DESCRIPTION_QOS)
        self.joints = driver.create_publisher(JointState, f"{self.namespace}/joint_states", STATE_QOS)
        self.lock = threading.Lock()
        self.times, self.m00 = [], []
        driver.create_subscription(Float64MultiArray, f"{self.namespace}/dynamics_node/mass_matrix", self._on_answer,
                                   QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
        self._stop = threading.Event()
        self._stream = None

    def _on_answer(self, msg):
        with self.lock:
            self.times.append(time.monotonic())
            self.m00.append(msg.data[0])

    def start_stream(self, names, q):
        msg = JointState(name=list(names), position=q.tolist())

        def stream():
            tick = time.monotonic()
            while not self._stop.is_set():
                self.joints.publish(msg)
                tick += self.period
                self._stop.wait(max(0.0, tick - time.monotonic()))
        self._stream = threading.Thread(target=stream, daemon=True)
        self._stream.start()

    def answers(self):
        with self.lock:
            return np.array(self.times), np.array(self.m00)

    def wait_for(self, m00, timeout=300.0):
        """Wait until an answer carries M[0, 0] = ``m00``; its arrival time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            times, values = self.answers()
            hit = np.flatnonzero(np.isclose(values, m00, rtol=1e-12))
            if hit.size:
                return times[hit[0]]
            time.sleep(0.01)
        raise RuntimeError(f"the node never answered with M[0, 0] = {m00}; see {self.log.name}")

    def window(self, start, stop):
        """(fraction of the stream answered, longest gap, p99 gap) of the answers in [start, stop)."""
        times, _ = self.answers()
        inside = times[(times >= start) & (times < stop)]
        gaps = np.diff(np.r_[start, inside, stop])
        return len(inside) * self.period / (stop - start), gaps.max(), np.percentile(gaps, 99)

    def close(self):
        self._stop.set()
        if self._stream is not None:
            self._stream.join()
        stop_process(self.process)
        self.log.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--links", nargs="+", type=int, default=[500, 1500], help="fixed links added to arm7")
    parser.add_argument("--rate", type=float, default=100.0, help="joint states per second")
    parser.add_argument("--star", type=int, default=4000, help="links of the refused star")
    args = parser.parse_args(argv)

    rclpy.init(args=[])
    driver = rclpy.create_node(f"bench_swap_driver_{os.getpid()}")
    executor = SingleThreadedExecutor()
    executor.add_node(driver)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    bench = Bench(driver, args.rate)
    xml = ARM.read_text()
    robot = rd.load_urdf(xml)
    q = robot.neutral() + 0.3
    publisher = None
    try:
        bench.description.publish(String(data=xml))
        bench.start_stream(robot.joint_names, q)
        bench.wait_for(robot.mass_matrix(q)[0, 0])
        time.sleep(2.0)
        print(f"dynamics_node (arm7) fed joint states at {args.rate:g} Hz; a description of arm7 + N fixed links "
              "published on robot_description:")
        print(f"{'N':>6} {'load [s]':>9} {'answered':>9} {'max gap [ms]':>13} {'p99 gap [ms]':>13}   "
              f"quiet before: {'answered':>9} {'max gap [ms]':>13}")
        for n in args.links:
            large = with_fixed_links(xml, n, chain=True)
            target = rd.load_urdf(large).mass_matrix(q)[0, 0]
            path = Path(bench.log.name).with_suffix(f".{n}.urdf")
            path.write_text(large)
            previous, publisher = publisher, DescriptionPublisher(f"{bench.namespace}/robot_description", path)
            time.sleep(2.0)                                 # the quiet stretch: after the publisher's start-up
            sent = publisher.publish()
            swapped = bench.wait_for(target)
            if previous is not None:
                previous.stop()
            load = swapped - sent
            answered, gap, p99 = bench.window(sent, swapped)
            quiet = bench.window(sent - min(load, 5.0), sent)
            print(f"{n:>6} {load:>9.2f} {answered:>9.1%} {1e3 * gap:>13.0f} {1e3 * p99:>13.0f}   "
                  f"{'':14}{quiet[0]:>9.1%} {1e3 * quiet[1]:>13.0f}")
            time.sleep(2.0)
        before = rss_mb(bench.process.pid)
        huge_mass = re.sub(r'<mass value="[^"]+"', '<mass value="1e308"', xml, count=3)
        log_path = Path(bench.log.name)
        for description in (star(args.star), huge_mass):
            refusals = log_path.read_text().count("refused (")
            bench.description.publish(String(data=description))
            deadline = time.monotonic() + 300
            while log_path.read_text().count("refused (") == refusals and time.monotonic() < deadline:
                time.sleep(0.05)
        time.sleep(1.0)
        print(f"node RSS before refusing a {args.star}-link star and arm7 with masses of 1e308: {before:.0f} MB; "
              f"after: {rss_mb(bench.process.pid):.0f} MB; still answering: "
              f"{bench.window(time.monotonic() - 1.0, time.monotonic())[0]:.0%} of the last second")
    finally:
        if publisher is not None:
            publisher.stop()
        bench.close()
        executor.shutdown()
        spinner.join()
        driver.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
