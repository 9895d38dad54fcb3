"""Closing the loop over ROS 2 (issue 15, item 7): adaptive_controller_node started with the params file of
``robot-dynamics identify --ros-params`` starts from the identified parameters.

The node runs as a user starts it (``python -m robot_dynamics.ros.adaptive_controller_node --ros-args
--params-file FILE``), in a namespace, in this process's private ROS domain.
"""
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS 2 is not installed (pip install '.[ros]')")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # ros_helpers, whatever pytest's import mode

from ros_helpers import URDF_DIR, claim_ros_domain, joint_state  # noqa: E402

pytest_plugins = ["ros_helpers"]      # its fixtures context, executor and namespace

claim_ros_domain()                                          # before the first rclpy context

from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.cli import main as cli  # noqa: E402
from robot_dynamics.controllers import SumOfSines, with_payload  # noqa: E402
from robot_dynamics.identification.logs import Log, load_parameters, write_log  # noqa: E402
from robot_dynamics.ros.processes import stop  # noqa: E402

ARM = URDF_DIR / "arm7.urdf"
READY = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8])


def test_adaptive_controller_starts_from_the_identified_parameters(executor, namespace, tmp_path):
    """A log of arm7 carrying an unmodelled 2 kg payload (torques by inverse dynamics), identified by the command
    line; the node's first ~/parameter_estimate is the identified pi (the description's parameters, its default,
    are far from it)."""
    robot = rd.load_urdf(ARM)
    truth = with_payload(robot, "link7", 2.0, (0.0, 0.0, 0.1))
    rng = np.random.default_rng(0)
    harmonics = np.arange(1.0, 5.0)
    motion = SumOfSines(READY, 0.4 * rng.uniform(0.5, 1.0, (7, 4)) / harmonics, 2 * np.pi / 4.0 * harmonics,
                        rng.uniform(0, 2 * np.pi, (7, 4)))(np.arange(0.0, 4.0, 0.004))
    t = np.arange(0.0, 4.0, 0.004)
    write_log(tmp_path / "log.npz", Log(t, motion.q, motion.v, motion.a,
                                        truth.inverse_dynamics(motion.q, motion.v, motion.a), robot.joint_names))
    params, ros_params = tmp_path / "identified.yaml", tmp_path / "ros_params.yaml"
    assert cli(["identify", str(ARM), str(tmp_path / "log.npz"), "--out", str(params),
                "--ros-params", str(ros_params)]) == 0
    identified = load_parameters(params, robot)
    assert np.abs(identified - robot.parameters).max() > 0.1

    node = rclpy.create_node("probe", namespace=namespace, context=executor.context)
    estimates, received = [], threading.Event()

    def record(msg):
        estimates.append(np.array(msg.data))
        received.set()

    reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(Float64MultiArray, "adaptive_controller_node/parameter_estimate", record, reliable)
    states = node.create_publisher(JointState, "joint_states", reliable)
    references = node.create_publisher(JointTrajectoryPoint, "adaptive_controller_node/joint_references", reliable)
    executor.add_node(node)
    env = dict(os.environ, PYTHONUNBUFFERED="1", RCUTILS_COLORIZED_OUTPUT="0", PYTHONPATH=os.pathsep.join(
        p for p in (str(Path(rd.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")) if p))
    with open(tmp_path / "node.log", "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "robot_dynamics.ros.adaptive_controller_node", "--ros-args",
             "-r", f"__ns:={namespace}", "-p", f"urdf_path:={ARM}", "-p", "command_topic:=effort_controller/commands",
             "--params-file", str(ros_params)], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        reference = JointTrajectoryPoint(positions=READY.tolist())
        for k in range(600):                           # until the node has started and answered one state
            assert process.poll() is None, (tmp_path / "node.log").read_text()
            references.publish(reference)
            states.publish(joint_state(robot.joint_names, READY, np.zeros(7), k=k))
            if received.wait(0.1):
                break
        assert estimates, "no ~/parameter_estimate within 60 s:\n" + (tmp_path / "node.log").read_text()
    finally:
        assert stop(process) == 0, (tmp_path / "node.log").read_text()
    # the node's first step integrates nothing (dt = 0) and projects onto consistent parameters, where the
    # identified pi already is: what it publishes is pi to rounding
    np.testing.assert_allclose(estimates[0], identified, rtol=0, atol=1e-12 * np.abs(identified).max())
