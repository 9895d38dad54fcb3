"""view_node on real rclpy over loopback DDS (issue 40): a JointState published in the node's namespace moves the
viewer's robot to its positions (matched by name, in any order), and a WrenchStamped on a dynamics node's
~/external_wrench/<frame> is drawn at that frame in the frame's own axes: the force arrow starts at the frame's
origin and ends at origin + scale R f, R and the origin from the library's frame_placement at the state drawn."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import rclpy  # noqa: F401  (without the ros extra these tests fail rather than skip: the test command installs it)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # ros_helpers, whatever pytest's import mode

from ros_helpers import URDF_DIR, claim_ros_domain, eventually, joint_state  # noqa: E402

pytest_plugins = ["ros_helpers"]      # its fixtures: context, executor, namespace, probe, start_node

claim_ros_domain()                                          # before the first rclpy context

from geometry_msgs.msg import WrenchStamped  # noqa: E402

import robot_dynamics as rd  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning"),
              pytest.mark.skipif(importlib.util.find_spec("viser") is None,
                                 reason="the view extra is not installed: pip install -e '.[view]'")]


def test_view_node_follows_joint_states_and_draws_wrenches(executor, namespace, probe):
    from robot_dynamics.ros.view_node import ViewNode
    viewer = rd.view(URDF_DIR / "arm7.urdf", port=8140)
    try:
        node = ViewNode(viewer, namespace=namespace, context=executor.context, discovery_period=0.05)
        executor.add_node(node)
        robot = viewer.robot
        q = np.linspace(-0.6, 0.9, robot.nq)
        order = np.arange(robot.nq)[::-1]                        # the message's joints in another order
        names = [robot.joint_names[i] for i in order]
        assert eventually(lambda: probe.joint_states.publish(joint_state(names, q[order])) or
                          np.array_equal(viewer.q, q), timeout=20.0), "the view did not move to the joint state"
        publisher = probe.node.create_publisher(WrenchStamped, f"{namespace}/dynamics_node/external_wrench/link7", 10)
        w = np.array([1.0, -2.0, 30.0, 0.1, 0.2, -0.3])
        msg = WrenchStamped()
        msg.header.frame_id = "link7"
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = w[:3]
        msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = w[3:]
        assert eventually(lambda: publisher.publish(msg) or "link7" in viewer.wrenches, timeout=20.0), \
            "the wrench was not drawn"
        drawn, reference = viewer.wrenches["link7"]
        assert reference == "local" and np.array_equal(drawn, w)
        T = robot.frame_placement(q, "link7")
        scale = 0.5 / (robot.total_mass * np.linalg.norm(robot.gravity))   # show_wrench's: the weight is 0.5 m
        arrows = viewer.arrows["link7"].points
        np.testing.assert_allclose(arrows[0], [T[:3, 3], T[:3, 3] + scale * T[:3, :3] @ w[:3]], atol=1e-12)
        assert node.wrench_topics == {f"{namespace}/dynamics_node/external_wrench/link7": "link7"}
    finally:
        viewer.close()
