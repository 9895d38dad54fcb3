"""dynamics_node on real rclpy over loopback DDS, in a ROS domain of its own.

The node runs in this process (spun by a SingleThreadedExecutor) or, as a user starts it, as
``python -m robot_dynamics.ros.dynamics_node --ros-args -p ...``. Every published array must equal the
library's result for the same state to 1e-12, with the canonical Float64MultiArray layout.
"""
import os
import re
import signal
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import yaml

import rclpy  # noqa: E402,F401  (without the ros extra these tests fail rather than skip: the test command installs it)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # ros_helpers, whatever pytest's import mode

from ros_helpers import (URDF_DIR, NodeProcess, claim_ros_domain, expected_outputs,  # noqa: E402
                         eventually, joint_state, odometry, random_state, reference, stamp)

pytest_plugins = ["ros_helpers"]      # its fixtures: context, executor, namespace, probe, start_node, processes

claim_ros_domain()                                          # before the first rclpy context

from rcl_interfaces.msg import ParameterType  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from std_msgs.msg import String  # noqa: E402

import robot_dynamics as rd  # noqa: E402

ARM = URDF_DIR / "arm7.urdf"
QUADRUPED = URDF_DIR / "quadruped.urdf"
# an exception in an executor's or a node's thread (InvalidHandle at teardown, ...) fails the test
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")


@lru_cache
def library_robot(xml, floating_base=False, gravity=(0.0, 0.0, -9.81)):
    return rd.load_urdf(xml, floating_base=floating_base, gravity=gravity)


def heavier(xml):
    """The same robot with every link mass doubled: same joints, another mass matrix."""
    return re.sub(r'<mass\s+value="([^"]+)"', lambda m: f'<mass value="{2 * float(m.group(1))!r}"', xml)


def stderr_says(capfd, text):
    """A predicate: ``text`` has appeared on this process's stderr (where rcutils logs) since the test began."""
    seen = []

    def says():
        seen.append(capfd.readouterr().err)
        return text in "".join(seen)
    return says


def test_arm7_outputs_equal_the_library(probe, start_node):
    xml = ARM.read_text()
    node = start_node(robot_description=xml, publish_regressor=True)
    robot = library_robot(xml)
    names = list(robot.joint_names)
    assert node.get_parameter("joints").value == names
    assert node.describe_parameter("joints").read_only
    rng = np.random.default_rng(0)
    probe.wait_matched(probe.joint_states)
    for k in range(3):
        q, v = random_state(robot, rng)
        ref = (rng.normal(size=robot.nv), rng.normal(size=robot.nv))
        assert probe.published(probe.reference, reference(*ref),
                               until=lambda: node.reference is not None and np.array_equal(node.reference[0], ref[0]))
        order = rng.permutation(len(names))                   # any order, plus a joint the model lacks
        msg = joint_state([names[i] for i in order] + ["gripper_finger"], np.append(q[order], 0.04),
                          np.append(v[order], 0.1), k=k)
        expected = expected_outputs(robot, q, v, k, frame_id=robot.root_link, ref=ref)
        assert probe.exchange(msg, until=probe.matches(expected))
        probe.assert_outputs(expected)
    assert set(expected) == {"mass_matrix", "coriolis_matrix", "coriolis_vector", "gravity", "com_jacobian",
                             "regressor", "com", "friction"}


def test_a_drives_file_puts_the_armature_in_m_and_the_friction_on_its_topic(probe, start_node, tmp_path):
    """drives_file (issue 27): ~/mass_matrix is M + diag(armature) and ~/friction tau_f(v), the library's for the
    same file, which differ from the rigid robot's."""
    xml = ARM.read_text()
    rigid = library_robot(xml)
    drives = {"joints": {name: {"armature": 0.1 * (i + 1), "damping": 0.5, "friction": 1.5}
                         for i, name in enumerate(rigid.joint_names)}}
    path = tmp_path / "drives.yaml"
    path.write_text(yaml.safe_dump(drives))
    start_node(robot_description=xml, drives_file=str(path))
    robot = rd.load_urdf(xml, drives=str(path))
    rng = np.random.default_rng(1)
    probe.wait_matched(probe.joint_states)
    q, v = random_state(robot, rng)
    expected = expected_outputs(robot, q, v, 0, frame_id=robot.root_link)
    assert probe.exchange(joint_state(list(robot.joint_names), q, v, k=0), until=probe.matches(expected))
    probe.assert_outputs(expected)
    assert np.allclose(np.diag(expected["mass_matrix"] - rigid.mass_matrix(q)), 0.1 * np.arange(1, 8), atol=1e-12)
    assert np.all(np.abs(expected["friction"]) > 0.5 * np.abs(v))


def test_time_derivatives_are_published_on_request(probe, start_node):
    """publish_derivatives: dM/dt = C + C^T (remark 5, computed apart) and dg/dt = dg/dq v (the library's closed
    form against finite differences of g along the motion) for the joint state's (q, v)."""
    node = start_node(urdf_path=str(ARM), publish_derivatives=True)
    robot = library_robot(ARM.read_text())
    names = list(robot.joint_names)
    rng = np.random.default_rng(4)
    q, v = random_state(robot, rng)
    probe.wait_matched(probe.joint_states)
    assert probe.exchange(joint_state(names, q, v, k=1), until=lambda: probe.counts["gravity_derivative"] > 0)
    d = robot.dynamics(q, v)
    np.testing.assert_allclose(probe.array("mass_matrix_derivative"), d.C + d.C.T, rtol=0, atol=1e-10)
    h = 1e-6
    later, earlier = robot.integrate(q, v, h), robot.integrate(q, v, -h)
    g_rate = (robot.gravity_vector(later) - robot.gravity_vector(earlier)) / (2 * h)
    np.testing.assert_allclose(probe.array("gravity_derivative"), g_rate, rtol=0, atol=1e-6)
    assert node.answered >= 1


def test_frame_jacobians_are_published_for_the_frames_asked(probe, start_node):
    """frames: a foot and the IMU of the floating quadruped (links merged into their bodies by fixed joints), in
    the default local_world_aligned: each J_f, labelled, is the library's, and J_f v is the frame's velocity --
    central differences of its world placement along the motion (origin and rotation)."""
    frames = ["FL_foot", "imu"]
    node = start_node(urdf_path=str(QUADRUPED), floating_base=True, frames=frames)
    robot = library_robot(QUADRUPED.read_text(), floating_base=True)
    for frame in frames:
        probe.listen(f"frame_jacobians/{frame}")
    q, v = random_state(robot, np.random.default_rng(8))
    probe.wait_matched(probe.joint_states)
    assert probe.published(probe.odom, odometry(q[:7], v[:6], robot.root_link, frame_id="world"),
                           until=lambda: node.base_state is not None and np.allclose(node.base_state[0], q[:7]))
    assert probe.exchange(joint_state(robot.joint_names, q[7:], v[6:], k=0),
                          until=lambda: all(probe.counts[f"frame_jacobians/{frame}"] for frame in frames))
    h = 1e-6
    for frame in frames:
        J = probe.array(f"frame_jacobians/{frame}")
        np.testing.assert_allclose(J, robot.frame_jacobian(q, frame, "local_world_aligned"), rtol=0, atol=1e-12)
        (later, earlier) = (robot.frame_placement(robot.integrate(q, v, s * h), frame) for s in (1, -1))
        np.testing.assert_allclose(J[:3] @ v, (later[:3, 3] - earlier[:3, 3]) / (2 * h), rtol=0, atol=1e-7)
        omega = (later[:3, :3] - earlier[:3, :3]) / (2 * h) @ robot.frame_placement(q, frame)[:3, :3].T
        np.testing.assert_allclose(J[3:] @ v, [omega[2, 1], omega[0, 2], omega[1, 0]], rtol=0, atol=1e-7)
        dims = probe.latest[f"frame_jacobians/{frame}"].layout.dim
        assert dims[0].label == "linear_x,linear_y,linear_z,angular_x,angular_y,angular_z"
        assert dims[1].label.split(",")[:7] == ["base_linear_x", "base_linear_y", "base_linear_z", "base_angular_x",
                                                "base_angular_y", "base_angular_z", robot.joint_names[0]]


@pytest.mark.parametrize("frames, message", [
    (["FL_fot"], "no frame 'FL_fot' of the parameter frames (did you mean 'FL_foot'"),
    (["FL-foot"], "'FL-foot' cannot name the topic"),
    (["imu", "imu"], "'imu' is listed twice")], ids=["unknown", "not a topic name", "twice"])
def test_frames_the_node_cannot_publish_stop_it_at_start_up(start_node, frames, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        start_node(urdf_path=str(QUADRUPED), floating_base=True, frames=frames)


def test_a_new_description_without_a_frame_asked_is_refused(start_node):
    """While serving, a description (the same joints) whose tool frame was renamed: refused as "frames", the
    parameter set back, the old model serving on."""
    xml = ARM.read_text()
    node = start_node(robot_description=xml, frames=["tcp"])
    served = node.robot
    renamed = xml.replace('"tcp"', '"tool_center_point"')
    assert renamed != xml
    assert node.set_parameters([Parameter("robot_description", value=renamed)])[0].successful
    assert eventually(lambda: node.refused["frames"] == 1 and not node.loading, timeout=60), node.refused
    assert node.robot is served and node.get_parameter("robot_description").value == xml


def test_floating_quadruped_outputs_equal_the_library(probe, start_node):
    node = start_node(urdf_path=str(QUADRUPED), floating_base=True, publish_regressor=True)
    robot = library_robot(QUADRUPED.read_text(), floating_base=True)
    assert robot.nq == robot.nv + 1 == len(robot.joint_names) + 7
    rng = np.random.default_rng(1)
    probe.wait_matched(probe.joint_states)
    for k in range(3):
        q, v = random_state(robot, rng)
        ref = (rng.normal(size=robot.nv), rng.normal(size=robot.nv))
        assert probe.published(probe.odom, odometry(q[:7], v[:6], robot.root_link, frame_id="world"),
                               until=lambda: node.base_state is not None and np.allclose(node.base_state[0], q[:7]))
        assert probe.published(probe.reference, reference(*ref),
                               until=lambda: node.reference is not None and np.array_equal(node.reference[1], ref[1]))
        expected = expected_outputs(robot, q, v, k, frame_id="world", ref=ref)
        assert probe.exchange(joint_state(robot.joint_names, q[7:], v[6:], k=k), until=probe.matches(expected))
        probe.assert_outputs(expected)


def test_partial_joint_states_merge_and_missing_velocities_hold_back_c(probe, start_node):
    node = start_node(urdf_path=str(ARM), publish_regressor=True)
    robot = library_robot(ARM.read_text())
    names = list(robot.joint_names)
    rng = np.random.default_rng(2)
    q, v = random_state(robot, rng)
    ref = (rng.normal(size=robot.nv), rng.normal(size=robot.nv))
    probe.wait_matched(probe.joint_states)
    assert probe.published(probe.reference, reference(*ref), until=lambda: node.reference is not None)

    expected = expected_outputs(robot, q, v, 0, robot.root_link, ref=ref)
    assert probe.exchange(joint_state(names, q, v, k=0), until=probe.matches(expected))

    q[2:4] += 0.3                                             # a partial message, without velocities
    expected = expected_outputs(robot, q, v, 1, robot.root_link, velocities=False)
    assert probe.exchange(joint_state(names[2:4], q[2:4], k=1), until=probe.matches(expected))
    probe.assert_outputs(expected)

    v[2:4] = 0.5                                              # their velocities arrive: C and Y come back
    expected = expected_outputs(robot, q, v, 2, robot.root_link, ref=ref)
    assert probe.exchange(joint_state(names[2:4], q[2:4], v[2:4], k=2), until=probe.matches(expected))
    probe.assert_outputs(expected)

    def with_velocities():                                    # answers to stamps 0 and 2, not to 1
        return sum(s != (stamp(1).sec, stamp(1).nanosec) for s in probe.com_stamps)
    for topic in ("coriolis_matrix", "coriolis_vector", "regressor"):
        assert probe.wait_until(lambda: probe.counts[topic] == with_velocities(), timeout=2.0), topic
    assert (stamp(1).sec, stamp(1).nanosec) in probe.com_stamps
    assert not node.skipped


def test_bad_joint_states_and_references_are_skipped_one_by_one(probe, start_node):
    node = start_node(urdf_path=str(ARM), publish_regressor=True)
    robot = library_robot(ARM.read_text())
    names = list(robot.joint_names)
    rng = np.random.default_rng(8)
    q, v = random_state(robot, rng)
    ref = (rng.normal(size=robot.nv), rng.normal(size=robot.nv))
    probe.wait_matched(probe.joint_states)
    bad = [                                                   # the first lacks joints: nothing is known yet
        ("joint_state_missing_joints", probe.joint_states, joint_state(names[:3], q[:3], v[:3], k=100)),
        ("joint_state_lengths", probe.joint_states, joint_state(names, q[:-1], k=101)),
        ("joint_state_lengths", probe.joint_states, joint_state(names, q, v[:-2], k=102)),
        ("joint_state_lengths", probe.joint_states, joint_state(names + ["extra"], q, v, k=103)),
        ("joint_state_non_finite", probe.joint_states, joint_state(names, np.r_[q[:-1], np.nan], k=104)),
        ("joint_state_non_finite", probe.joint_states, joint_state(names, q, np.r_[np.inf, v[1:]], k=105)),
        ("state_rejected", probe.joint_states, joint_state(names, q, np.full(robot.nv, 1e200), k=106)),  # C v: inf
        ("reference_length", probe.reference, reference(ref[0][:-1], ref[1])),
        ("reference_length", probe.reference, reference(ref[0], [])),
        ("reference_non_finite", probe.reference, reference(np.r_[np.nan, ref[0][1:]], ref[1])),
    ]
    for k, (kind, publisher, msg) in enumerate(bad):
        before = node.skipped[kind]
        assert probe.published(publisher, msg, until=lambda: node.skipped[kind] > before), kind
        assert probe.published(probe.reference, reference(*ref),
                               until=lambda: node.reference is not None and np.array_equal(node.reference[0], ref[0]))
        expected = expected_outputs(robot, q, v, k, robot.root_link, ref=ref)
        assert probe.exchange(joint_state(names, q, v, k=k), until=probe.matches(expected)), kind
        probe.assert_outputs(expected)
    assert not set(probe.com_stamps) & {(m.header.stamp.sec, m.header.stamp.nanosec) for _, _, m in bad[:7]}
    assert set(node.skipped) == {kind for kind, _, _ in bad}


def test_bad_odometry_is_skipped_and_the_node_keeps_serving(probe, start_node, capfd):
    node = start_node(urdf_path=str(QUADRUPED), floating_base=True)
    robot = library_robot(QUADRUPED.read_text(), floating_base=True)
    rng = np.random.default_rng(3)
    q, v = random_state(robot, rng)
    probe.wait_matched(probe.joint_states)
    good = odometry(q[:7], v[:6], robot.root_link)
    bad = {
        "odom_zero_quaternion": odometry(np.r_[q[:3], 0.0, 0.0, 0.0, 0.0], v[:6], robot.root_link),
        "odom_frame": odometry(q[:7], v[:6], "base_footprint"),
        "odom_non_finite": odometry(np.r_[np.nan, q[1:7]], v[:6], robot.root_link),
    }
    k = 0
    for kind, msg in bad.items():
        assert probe.published(probe.odom, msg, until=lambda: node.skipped[kind] > 0), kind
        assert probe.published(probe.odom, good, until=lambda: node.base_state is not None)
        expected = expected_outputs(robot, q, v, k, "odom")
        assert probe.exchange(joint_state(robot.joint_names, q[7:], v[6:], k=k), until=probe.matches(expected))
        probe.assert_outputs(expected)
        k += 1
    log = capfd.readouterr().err                             # each warned when skipped, before the next answer
    for kind in bad:
        assert f"dynamics_node.{kind}]: skipped" in log, kind


def test_nothing_is_published_until_a_description_arrives(probe, start_node, capfd):
    node = start_node()                                       # no parameter: the robot_description topic
    xml = ARM.read_text()
    robot = library_robot(xml)
    q, v = random_state(robot, np.random.default_rng(9))
    assert probe.published(probe.joint_states, joint_state(robot.joint_names, q, v, k=0),
                           until=stderr_says(capfd, "waiting for robot_description"))
    assert node.robot is None and node.answered == 0
    probe.description.publish(String(data=xml))
    expected = expected_outputs(robot, q, v, 1, robot.root_link)
    assert probe.exchange(joint_state(robot.joint_names, q, v, k=1), until=probe.matches(expected))
    probe.assert_outputs(expected)
    assert (stamp(0).sec, stamp(0).nanosec) not in probe.com_stamps


def test_the_first_description_loads_at_the_nodes_priority_on_a_busy_machine(probe, start_node):
    """With no model serving, the description that arrives first is loaded at the node's own CPU priority: at the
    background loader's nice 19 beside busy processes on every core it starved (a fresh-clone run of the suite
    beside other work timed out waiting for it).  Here every core runs a busy loop at the node's priority while
    the first description arrives; the node answers within 30 s (a few seconds at its priority; minutes at
    nice 19, where it gets about 1 % of a core)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        start_node()
        xml = ARM.read_text()
        robot = library_robot(xml)
        q, v = random_state(robot, np.random.default_rng(10))
        probe.description.publish(String(data=xml))
        expected = expected_outputs(robot, q, v, 1, robot.root_link)
        assert probe.exchange(joint_state(robot.joint_names, q, v, k=1), until=probe.matches(expected), timeout=30.0)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_parameters_rebuild_the_model_and_joints_is_read_only(probe, start_node):
    xml = ARM.read_text()
    node = start_node(robot_description=xml)
    names = list(library_robot(xml).joint_names)
    q, v = random_state(library_robot(xml), np.random.default_rng(4))
    probe.wait_matched(probe.joint_states)

    assert node.set_parameters([Parameter("gravity", value=[0.0, -9.81, 0.0])])[0].successful
    robot = library_robot(xml, gravity=(0.0, -9.81, 0.0))
    expected = expected_outputs(robot, q, v, 0, robot.root_link)
    assert probe.exchange(joint_state(names, q, v, k=0), until=probe.matches(expected))

    # a model parameter is accepted and loaded in the background: refused there, it is set back
    assert node.set_parameters([Parameter("robot_description", value="<robot name='broken'><link/></robot>")])[0] \
        .successful
    assert eventually(lambda: node.refused["invalid"] == 1 and node.get_parameter("robot_description").value == xml)
    assert probe.exchange(joint_state(names, q, v, k=2), until=probe.matches(   # the last good model serves
        expected_outputs(robot, q, v, 2, robot.root_link)))
    assert not node.set_parameters([Parameter("gravity", value=[0.0, 0.0])])[0].successful
    assert not node.set_parameters([Parameter("joints", value=["a"] * len(names))])[0].successful
    assert node.get_parameter("joints").value == names

    assert node.set_parameters([Parameter("robot_description", value=heavier(xml))])[0].successful
    robot = library_robot(heavier(xml), gravity=(0.0, -9.81, 0.0))
    expected = expected_outputs(robot, q, v, 1, robot.root_link)
    assert probe.exchange(joint_state(names, q, v, k=1), until=probe.matches(expected))
    probe.assert_outputs(expected)


@pytest.mark.parametrize("description, reason", [
    ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x "y">]><robot name="r"><link name="&x;"/></robot>',
     "entity declarations are not allowed"),
    ("urdf/arm7.urdf", "is not XML (it must start with '<'; the path of a file goes in urdf_path)"),
    ("<robot name='r'><link name='a'>", "malformed XML"),
    ("<urdf><link name='a'/></urdf>", "the root element is <urdf>, not <robot>"),
])
def test_what_the_xml_alone_refuses_is_refused_on_the_spot(start_node, description, reason):
    """A robot_description refused by its XML is refused by set_parameters itself (the value never changes),
    not accepted and set back later by the background load (issue 26)."""
    xml = ARM.read_text()
    node = start_node(robot_description=xml)
    result = node.set_parameters([Parameter("robot_description", value=description)])[0]
    assert not result.successful and reason in result.reason and result.reason.startswith("robot_description")
    assert node.get_parameter("robot_description").value == xml and not node.refused


def test_node_process_started_as_a_user_does_logs_bad_messages(probe, namespace, processes, tmp_path):
    node = NodeProcess(["-r", f"__ns:={namespace}", "-p", f"urdf_path:={ARM}", "-p", "publish_regressor:=true"],
                       tmp_path / "node.log")
    processes.append(node)
    robot = library_robot(ARM.read_text())
    names = list(robot.joint_names)
    rng = np.random.default_rng(5)
    q, v = random_state(robot, rng)
    ref = (rng.normal(size=robot.nv), rng.normal(size=robot.nv))
    assert node.wait_log("model from urdf_path", timeout=120), node.log()

    client = AsyncParameterClient(probe.node, f"{namespace}/dynamics_node")
    assert client.wait_for_services(timeout_sec=10)
    values = probe.result(client.get_parameters(["joints"])).values
    assert values[0].type == ParameterType.PARAMETER_STRING_ARRAY and list(values[0].string_array_value) == names
    assert probe.result(client.describe_parameters(["joints"])).descriptors[0].read_only

    probe.wait_matched(probe.joint_states)
    bad = [                                                   # the first lacks joints: nothing is known yet
        ("joint_state_missing_joints", probe.joint_states, joint_state(names[:3], q[:3], v[:3], k=100)),
        ("joint_state_lengths", probe.joint_states, joint_state(names, q[:-1], k=101)),
        ("joint_state_non_finite", probe.joint_states, joint_state(names, np.r_[q[:-1], np.nan], k=102)),
        ("reference_length", probe.reference, reference(ref[0][:-1], ref[1])),
        ("reference_non_finite", probe.reference, reference(np.r_[np.nan, ref[0][1:]], ref[1])),
    ]
    for k, (kind, publisher, msg) in enumerate(bad):
        assert probe.published(publisher, msg, until=lambda: f"dynamics_node.{kind}]: skipped" in node.log()), \
            node.log()
        expected = expected_outputs(robot, q, v, k, robot.root_link, ref=ref)
        assert probe.exchange(joint_state(names, q, v, k=k), until=probe.matches(expected),
                              also=[(probe.reference, reference(*ref))])
        probe.assert_outputs(expected)
    assert not set(probe.com_stamps) & {(m.header.stamp.sec, m.header.stamp.nanosec) for _, _, m in bad[:3]}
    assert node.process.poll() is None
    assert node.stop() == 0, node.log()                       # Ctrl-C ends it cleanly


def test_description_topic_before_start_rebuilds_and_keeps_the_last_good_model(
        probe, namespace, processes, tmp_path):
    xml = QUADRUPED.read_text()
    probe.description.publish(String(data=xml))               # transient local, before the node exists
    node = NodeProcess(["-r", f"__ns:={namespace}", "-p", "floating_base:=true"], tmp_path / "node.log")
    processes.append(node)
    robot = library_robot(xml, floating_base=True)
    q, v = random_state(robot, np.random.default_rng(6))
    odom = (probe.odom, odometry(q[:7], v[:6], robot.root_link))
    expected = expected_outputs(robot, q, v, 0, "odom")
    assert probe.exchange(joint_state(robot.joint_names, q[7:], v[6:], k=0), until=probe.matches(expected),
                          also=[odom], timeout=120), node.log()
    probe.assert_outputs(expected)
    assert "model from topic robot_description" in node.log()

    probe.description.publish(String(data=heavier(xml)))     # a changed description rebuilds the model
    robot = library_robot(heavier(xml), floating_base=True)
    expected = expected_outputs(robot, q, v, 1, "odom")
    assert probe.exchange(joint_state(robot.joint_names, q[7:], v[6:], k=1), until=probe.matches(expected),
                          also=[odom]), node.log()
    probe.assert_outputs(expected)

    broken = "<robot name='broken'><joint name='j' type='revolute'/></robot>"
    with pytest.raises(rd.URDFError) as parse_error:
        rd.load_urdf(broken)
    for k, (bad_xml, says) in enumerate([(broken, str(parse_error.value)),
                                         (ARM.read_text(), "read-only joints")], start=2):
        probe.description.publish(String(data=bad_xml))
        assert node.wait_log(says), node.log()
        expected = expected_outputs(robot, q, v, k, "odom")   # still the last good model
        assert probe.exchange(joint_state(robot.joint_names, q[7:], v[6:], k=k), until=probe.matches(expected),
                              also=[odom]), node.log()
        probe.assert_outputs(expected)
    assert node.process.poll() is None


def test_launch_script_publishes_the_description_and_starts_the_node(probe, namespace, tmp_path):
    """Started as a shell script's background job is (SIGINT ignored from the start: Python then installs no
    handler of its own), the launcher still stops on SIGINT, with its node."""
    log = open(tmp_path / "launch.log", "w")
    launcher = subprocess.Popen(
        [sys.executable, str(URDF_DIR.parent / "launch_scripts" / "dynamics.py"), "--urdf", "arm7",
         "--publish-description", "--namespace", namespace],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        env=dict(os.environ, PYTHONUNBUFFERED="1", RCUTILS_LOGGING_BUFFERED_STREAM="0"))
    try:
        robot = library_robot(ARM.read_text())
        q, v = random_state(robot, np.random.default_rng(7))
        expected = expected_outputs(robot, q, v, 0, robot.root_link)
        assert probe.exchange(joint_state(robot.joint_names, q, v, k=0), until=probe.matches(expected),
                              timeout=120), (tmp_path / "launch.log").read_text()
        probe.assert_outputs(expected)
        launcher.send_signal(signal.SIGINT)
        assert launcher.wait(timeout=20) == 0
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
        _kill_group(launcher.pid)
        log.close()
    assert "model from topic robot_description" in (tmp_path / "launch.log").read_text()


def _kill_group(pgid):
    """Fail if a process of the group ``pgid`` outlived its launcher (and kill it, so none is left)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return
    os.killpg(pgid, signal.SIGKILL)
    pytest.fail("the launcher left the node running")
