"""The ROS 2 half of `robot-dynamics demo`: sim_node and adaptive_controller_node (and optionally dynamics_node)
run as processes over loopback DDS, while this process sends the trajectory and records what they publish.

The demo hands over its scenario ``sc``: the description's file ``urdf`` and its model ``nominal``, the payload
(``payload_body``, ``payload_mass``, ``payload_com``), the initial estimate ``pi_hat0``, the ``reference``
(a PiecewiseTrajectory), ``duration`` (s) and ``rate`` (Hz).
"""
import os
import sys
import time

import numpy as np

from robot_dynamics.controllers import TrackingRecord
from robot_dynamics.ros.conversions import sec_nanosec, seconds
from robot_dynamics.ros.processes import stop


def run_over_ros(sc, progress, log_dir, dynamics_node=False):
    """The closed loop over loopback DDS between node processes; this process sends the trajectory and records.

    sim_node simulates the arm with the payload in lockstep (it steps when the controller's command for its last
    state has arrived), adaptive_controller_node controls it with the description, ``initial_parameters`` and its
    default gains (the library's RelativeGains(), as the demo's in-process loop).
    Returns the TrackingRecord and the number of mass matrices dynamics_node published (None without it).
    Raises RuntimeError when a node dies or the loop stalls.
    """
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"      # read by rclpy.init here and in the nodes
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.signals import SignalHandlerOptions

    namespace = f"/robot_dynamics_demo_{os.getpid()}"
    nodes = _start_nodes(sc, namespace, log_dir, dynamics_node)
    context = rclpy.Context()
    rclpy.init(args=[], context=context, signal_handler_options=SignalHandlerOptions.NO)
    try:
        node = rclpy.create_node("demo", namespace=namespace, context=context)
        recorder = _Recorder(node, sc, dynamics_node)
        executor = EventsExecutor(context=context)
        executor.add_node(node)

        def spin_until(done, timeout, what):
            deadline = time.monotonic() + timeout
            while not done():
                for name, process in nodes.items():
                    if process.poll() is not None:
                        raise RuntimeError(f"{name} exited with code {process.returncode}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
                executor.spin_once(timeout_sec=0.05)
                progress(recorder.t[-1] if recorder.t else 0.0)

        spin_until(recorder.controller_ready, 90.0, "adaptive_controller_node")
        for attempt in range(10):                         # a first message can beat discovery: resend until heard
            recorder.send_trajectory()
            try:
                spin_until(lambda: recorder.t, 3.0, "the first tracking error")
                break
            except RuntimeError:
                if attempt == 9:
                    raise
        spin_until(lambda: recorder.t[-1] >= sc.duration, 60.0 + 20.0 * sc.duration, "the end of the run")
        record = recorder.record()
        answered = recorder.mass_matrices if dynamics_node else None
        executor.remove_node(node)
        executor.shutdown()
        node.destroy_node()
    finally:
        for process in nodes.values():
            stop(process)
        rclpy.try_shutdown(context=context)
    return record, answered


def _start_nodes(sc, namespace, log_dir, dynamics_node):
    """The node processes, as a user starts them (``python -m ...``), their output in ``log_dir``."""
    import subprocess

    start = sc.reference(0.0)
    common = ["-r", f"__ns:={namespace}", "-p", f"urdf_path:={sc.urdf}",
              "-p", "command_topic:=effort_controller/commands"]          # relative: inside the demo's namespace
    commands = {
        "sim_node": ["robot_dynamics.ros.sim_node", "--ros-args", *common,
                     "-p", f"rate:={float(sc.rate)!r}", "-p", "lockstep:=true", "-p", "real_time_factor:=0.0",
                     "-p", f"payload_body:={sc.payload_body}", "-p", f"payload_mass:={float(sc.payload_mass)!r}",
                     "-p", f"payload_com:={_yaml(sc.payload_com)}",
                     "-p", f"initial_positions:={_yaml(start.q)}", "-p", f"initial_velocities:={_yaml(start.v)}"],
        "adaptive_controller_node": ["robot_dynamics.ros.adaptive_controller_node", "--ros-args", *common,
                                     "-p", f"initial_parameters:={_yaml(sc.pi_hat0)}",
                                     "-p", "state_rate:=0.0"],                  # its state at every tick: the record
    }
    if dynamics_node:
        commands["dynamics_node"] = ["robot_dynamics.ros.dynamics_node", "--ros-args", *common]
    package_root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))   # above robot_dynamics/
    env = dict(os.environ, PYTHONUNBUFFERED="1", RCUTILS_COLORIZED_OUTPUT="0",
               PYTHONPATH=os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p))
    processes = {}
    for name, command in commands.items():
        log = open(os.path.join(log_dir, name + ".log"), "w")
        processes[name] = subprocess.Popen([sys.executable, "-m", *command], stdout=log, stderr=subprocess.STDOUT,
                                           env=env, start_new_session=True)
        log.close()
    return processes


def _yaml(values):
    """A ROS parameter array on the command line: [1.0,-2.5e-05,...] (doubles, never integers)."""
    return "[" + ",".join(repr(float(x)) for x in values) + "]"


class _Recorder:
    """The demo's node-side half: sends the trajectory, records the controller's tracking error and estimate."""

    def __init__(self, node, sc, dynamics_node):
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        self.sc, self.joint_names = sc, list(sc.nominal.joint_names)
        self.t, self._e, self._e_dot, self._estimates = [], [], [], []
        self.mass_matrices = 0
        record = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        controller = "adaptive_controller_node/"
        node.create_subscription(JointState, controller + "tracking_error", self._on_error, record)
        node.create_subscription(Float64MultiArray, controller + "parameter_estimate", self._on_estimate, record)
        if dynamics_node:
            node.create_subscription(Float64MultiArray, "dynamics_node/mass_matrix", self._on_mass_matrix, record)
        self._trajectory_pub = node.create_publisher(JointTrajectory, controller + "joint_trajectory", record)
        self._trajectory = self._trajectory_msg()

    def _trajectory_msg(self):
        """The reference's points (positions, velocities, accelerations), stamped 0: start now."""
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        ref = self.sc.reference
        msg = JointTrajectory(joint_names=self.joint_names)
        for t, q, v, a in zip(ref.times, *ref(ref.times)):
            sec, nanosec = sec_nanosec(t)
            msg.points.append(JointTrajectoryPoint(
                positions=q.tolist(), velocities=v.tolist(), accelerations=a.tolist(),
                time_from_start=Duration(sec=sec, nanosec=nanosec)))
        return msg

    def controller_ready(self):
        return self._trajectory_pub.get_subscription_count() > 0

    def send_trajectory(self):
        self._trajectory_pub.publish(self._trajectory)

    def _on_error(self, msg):
        columns = [list(msg.name).index(name) for name in self.joint_names]
        self.t.append(seconds(msg.header.stamp))
        self._e.append(np.asarray(msg.position)[columns])
        self._e_dot.append(np.asarray(msg.velocity)[columns])

    def _on_estimate(self, msg):
        self._estimates.append((len(self.t) - 1, np.array(msg.data)))   # after its tick's tracking error

    def _on_mass_matrix(self, msg):
        self.mass_matrices += 1

    def record(self):
        """The ticks before the simulated ``duration`` (as in process), each with the estimate published after it."""
        pi_hat = np.tile(self.sc.pi_hat0, (len(self.t), 1))
        for k, estimate in self._estimates:
            if k >= 0:
                pi_hat[k:] = estimate
        keep = np.array(self.t) < self.sc.duration - 0.5 / self.sc.rate
        return TrackingRecord(np.array(self.t)[keep], np.array(self._e)[keep], np.array(self._e_dot)[keep],
                              pi_hat[keep])
