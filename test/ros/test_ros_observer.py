"""dynamics_node's momentum observer on real rclpy over loopback DDS (issue 28, item 4): ~/external_torque,
~/external_wrench/<frame>, ~/collision and its status on /diagnostics.

The node answers a sequence of stamped joint states (q, v, effort); the test runs robot_dynamics.observers on the
same sequence, dt from the same stamps, and the node must publish the library's r and wrenches (to 1e-12, as
every output of the node), with the input's stamp and the joint names.  Physics checks the rest: a robot held
still against gravity while a known wrench w pushes its tool (effort = g(q) - J^T w: M a + C v + g = tau + tau_ext
at rest) must see r = J^T w (1 - exp(-k t)) -- the observer's low-pass, exact for a step held over whole ticks --
the wrench at the tool w (1 - exp(-k t)) to the damping's (damping / s_min)^2, and a collision on the tool's body.
"""
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import yaml

import rclpy  # noqa: F401  (without the ros extra these tests fail rather than skip: the test command installs it)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # ros_helpers, whatever pytest's import mode

from ros_helpers import (ATOL, RTOL, URDF_DIR, claim_ros_domain, eventually, joint_state, odometry,  # noqa: E402
                         random_state)

pytest_plugins = ["ros_helpers"]      # its fixtures: context, executor, namespace, probe, start_node

claim_ros_domain()                                          # before the first rclpy context

from builtin_interfaces.msg import Time  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import PointStamped, WrenchStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Bool, Float64MultiArray  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.observers import MomentumObserver  # noqa: E402
from robot_dynamics.ros.dynamics_node import DynamicsNode  # noqa: E402
from robot_dynamics.ros.qos import LATCHED_QOS  # noqa: E402

ARM = URDF_DIR / "arm7.urdf"
QUADRUPED = URDF_DIR / "quadruped.urdf"
GAIN = 100.0                   # rad/s
DT = 5_000_000                 # ns between two joint states: k dt = 0.5
T0 = 2000 * 10**9              # ns, the first stamp of a sequence
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")


@lru_cache
def library_robot(xml, drives=None):
    return rd.load_urdf(xml, drives=drives)


def at(t):
    """The builtin_interfaces Time of ``t`` ns."""
    return Time(sec=t // 10**9, nanosec=t % 10**9)


def key(stamp):
    return stamp.sec * 10**9 + stamp.nanosec


def library_residuals(robot, states):
    """MomentumObserver.update over ``states`` [(t ns, q, v, tau)], dt from the stamps: r at each (nv,)."""
    observer, last, out = MomentumObserver(robot, GAIN), None, []
    for t, q, v, tau in states:
        out.append(observer.update(q, v, tau, None if last is None else (t - last) / 1e9).copy())
        last = t
    return out


def listen_to_observer(probe, frames=(), collision=False):
    probe.listen("external_torque", JointState, keep=True)
    for frame in frames:
        probe.listen(f"external_wrench/{frame}", WrenchStamped, keep=True)
    if collision:
        probe.listen("collision", Bool, qos=LATCHED_QOS, keep=True)


def warm_up(probe, robot, q, topics):
    """Publish a joint state stamped well before T0 until every topic of ``topics`` has a message: discovery done
    both ways. Its restarts (the same stamp again) and the gap to T0 restart the observer before the sequence."""
    probe.wait_matched(probe.joint_states)
    msg = joint_state(robot.joint_names, q, np.zeros(robot.nv), effort=np.zeros(robot.nv), at=at(T0 - 10**9))
    assert probe.published(probe.joint_states, msg, until=lambda: all(probe.counts[t] for t in topics))
    for topic in probe.history:
        probe.history[topic].clear()


def answered(probe, topic, t, timeout=10.0):
    """The message of ``topic`` stamped ``t`` (ns), once it has come."""
    def find():
        return next((m for m in probe.history[topic] if key(m.header.stamp) == t), None)
    assert probe.wait_until(lambda: find() is not None, timeout), f"no ~/{topic} stamped {t}"
    with probe._cond:
        return find()


def send(probe, msg, topic="external_torque"):
    """Publish one joint state once and wait for its ~/external_torque (each stamp is sent once: the same stamp
    again would restart the observer)."""
    probe.joint_states.publish(msg)
    return answered(probe, topic, key(msg.header.stamp))


def wrench_array(msg):
    f, m = msg.wrench.force, msg.wrench.torque
    return np.array([f.x, f.y, f.z, m.x, m.y, m.z])


def test_external_torque_and_wrenches_equal_the_library(probe, start_node, tmp_path):
    """25 joint states along a motion (names in any order, an unknown joint among them), on an arm with drives
    (armature, damping, Coulomb friction from a drives file): every ~/external_torque equals MomentumObserver.update
    for the same sequence, stamped as its joint state and named by joint; every ~/external_wrench/<frame> equals
    MomentumObserver.wrench at the frame (reference local), its frame_id frame_prefix + the frame.  The gap before
    the sequence restarted the observer once (r = 0); a stamp before the last restarts it again."""
    xml = ARM.read_text()
    drives = {"joints": {name: {"armature": 0.05 * (i + 1), "damping": 0.3, "friction": 0.8}
                         for i, name in enumerate(library_robot(xml).joint_names)}}
    path = tmp_path / "drives.yaml"
    path.write_text(yaml.safe_dump(drives))
    frames = ["tcp", "link4"]
    node = start_node(robot_description=xml, drives_file=str(path), publish_external_torque=True,
                      observer_gain=GAIN, wrench_frames=frames, frame_prefix="r1/")
    robot = library_robot(xml, str(path))
    names = list(robot.joint_names)
    listen_to_observer(probe, frames)
    rng = np.random.default_rng(0)
    q0, _ = random_state(robot, rng)
    warm_up(probe, robot, q0, ["external_torque"] + [f"external_wrench/{f}" for f in frames])
    gaps = node.flagged["observer_restart_gap"]

    amplitude, phase = rng.uniform(0.2, 0.5, robot.nv), rng.uniform(0, np.pi, robot.nv)
    states = []
    for k in range(25):
        t = T0 + k * DT
        w = 2 * np.pi * 1.5 * (t - T0) / 1e9
        q, v = q0 + amplitude * np.sin(w + phase), 2 * np.pi * 1.5 * amplitude * np.cos(w + phase)
        states.append((t, q, v, robot.gravity_vector(q) + rng.normal(scale=2.0, size=robot.nv)))
    received = []
    for t, q, v, tau in states:
        order = rng.permutation(robot.nv)
        msg = joint_state([names[i] for i in order] + ["gripper_finger"], np.append(q[order], 0.04),
                          np.append(v[order], 0.1), effort=np.append(tau[order], 5.0), at=at(t))
        received.append(send(probe, msg))
    expected = library_residuals(robot, states)
    assert node.flagged["observer_restart_gap"] == gaps + 1
    assert np.all(expected[0] == 0) and np.max(np.abs(expected[-1])) > 1.0
    for msg, r, (t, q, _, _) in zip(received, expected, states):
        assert list(msg.name) == names and key(msg.header.stamp) == t
        np.testing.assert_allclose(msg.effort, r, rtol=RTOL, atol=ATOL)
        for frame in frames:
            wrench = answered(probe, f"external_wrench/{frame}", t)
            assert wrench.header.frame_id == "r1/" + frame
            library = MomentumObserver(robot, GAIN).wrench(q, frame, "local", residual=r).wrench
            np.testing.assert_allclose(wrench_array(wrench), library, rtol=RTOL, atol=ATOL)

    t, q, v, tau = states[10]                                  # stamped before the last: a restart, r = 0
    msg = send(probe, joint_state(names, q, v, effort=tau, at=at(t + 1)))
    assert np.all(np.asarray(msg.effort) == 0) and node.flagged["observer_restart_stamp_not_after"] >= 1
    assert not node.skipped


def test_an_output_nobody_listens_to_is_neither_computed_nor_published(probe, start_node):
    """Lazy outputs (publishing.OutputPublishers): ~/external_wrench/tcp, switched on but with no subscriber, is
    not computed for the joint states answered meanwhile (Observing.wrench is not called; ~/external_torque, which
    the probe takes, is); a subscriber that comes later receives it, equal to the library's wrench for the residual
    published with the same stamp; once that subscriber leaves, the wrench is not computed again."""
    xml = ARM.read_text()
    node = start_node(robot_description=xml, publish_external_torque=True, observer_gain=GAIN,
                      wrench_frames=["tcp"])
    robot = library_robot(xml)
    names = list(robot.joint_names)
    listen_to_observer(probe)                                   # ~/external_torque alone
    q, _ = random_state(robot, np.random.default_rng(4))
    warm_up(probe, robot, q, ["external_torque"])
    observing = node.description.served.observing
    wrenches = []
    real = observing.wrench
    observing.wrench = lambda q, frame: wrenches.append(frame) or real(q, frame)
    topic = "external_wrench/tcp"
    tau = robot.gravity_vector(q) + np.linspace(-3.0, 3.0, robot.nv)  # an external torque: r grows

    def answer(k):
        return send(probe, joint_state(names, q, np.zeros(robot.nv), effort=tau, at=at(T0 + k * DT)))
    assert not node.outputs.listened[topic] and node.outputs.listened["external_torque"]
    for k in range(5):
        answer(k)
    assert wrenches == []

    probe.listen(topic, WrenchStamped, keep=True)
    assert eventually(lambda: node.outputs.listened[topic])
    k = 5
    while not probe.history[topic]:                             # the first answers after the subscriber matched
        torque = answer(k)
        k += 1
        assert k < 200, "the new subscriber received no wrench"
    # the wrench of the last joint state may arrive after its ~/external_torque, which send() waited for
    assert probe.wait_until(lambda: key(probe.history[topic][-1].header.stamp) == key(torque.header.stamp))
    wrench = probe.history[topic][-1]
    assert key(wrench.header.stamp) == key(torque.header.stamp) and wrenches
    library = MomentumObserver(robot, GAIN).wrench(q, "tcp", "local", residual=np.asarray(torque.effort)).wrench
    assert np.max(np.abs(library)) > 1.0
    np.testing.assert_allclose(wrench_array(wrench), library, rtol=RTOL, atol=ATOL)

    probe.node.destroy_subscription(probe._subscriptions.pop(topic))
    assert eventually(lambda: not node.outputs.listened[topic])
    wrenches.clear()
    for j in range(3):
        answer(k + j)
    assert wrenches == []


def test_the_observer_alone_does_without_robot_dynamics(probe, start_node):
    """Only ~/external_torque listened to: joint states are answered without robot.dynamics (M, C, g, J_com: none
    of it is published), and bad states are refused and counted all the same -- a NaN position before the model,
    v = 1e250 by the observer (its momentum rate overflows) -- nothing published for them.  Once ~/com has a
    subscriber the bundle is computed again, once per joint state: the library's CoM, and a state the bundle
    rejects (v = 1e308) is counted as state_rejected, nothing published for it."""
    xml = ARM.read_text()
    node = start_node(robot_description=xml, publish_external_torque=True, observer_gain=GAIN)
    robot = library_robot(xml)
    names = list(robot.joint_names)
    probe.stop_recording()                                      # the probe takes the model's outputs by default
    listen_to_observer(probe)
    q, _ = random_state(robot, np.random.default_rng(7))
    warm_up(probe, robot, q, ["external_torque"])
    assert eventually(lambda: [t for t, on in node.outputs.listened.items() if on] == ["external_torque"])
    served = node.description.served
    calls, real = [], served.robot.dynamics
    served.robot.dynamics = lambda *args: calls.append(args) or real(*args)
    tau, still = robot.gravity_vector(q) + np.linspace(-2.0, 2.0, robot.nv), np.zeros(robot.nv)

    def state(k, q=q, v=still):
        return joint_state(names, q, v, effort=tau, at=at(T0 + k * DT))

    def com_stamp(k):
        t = at(T0 + k * DT)
        return t.sec, t.nanosec

    def refused(kind, msg):
        before = node.skipped[kind]
        assert probe.published(probe.joint_states, msg, until=lambda: node.skipped[kind] > before), kind

    for k in range(3):
        send(probe, state(k))
    refused("joint_state_non_finite", state(3, q=np.r_[q[:-1], np.nan]))
    refused("observer_rejected", state(4, v=np.full(robot.nv, 1e250)))
    assert np.all(np.isfinite(send(probe, state(5)).effort))
    assert calls == [] and node.skipped["state_rejected"] == 0
    assert [key(m.header.stamp) for m in probe.history["external_torque"]] == [T0 + k * DT for k in (0, 1, 2, 5)]

    probe.listen("com", PointStamped)
    assert eventually(lambda: node.outputs.listened["com"])
    k = 6
    while not probe.com_stamps:                                 # the first answers after the subscriber matched
        send(probe, state(k))
        k += 1
        assert k < 200, "the new subscriber received no CoM"
    assert len(calls) == k - 6
    com = probe.latest["com"].point
    np.testing.assert_allclose([com.x, com.y, com.z], robot.com_position(q), rtol=RTOL, atol=ATOL)
    refused("state_rejected", state(k, v=np.full(robot.nv, 1e308)))
    send(probe, state(k + 1))
    assert probe.wait_until(lambda: com_stamp(k + 1) in probe.com_stamps)
    assert com_stamp(k) not in probe.com_stamps


def test_with_the_observer_a_burst_of_joint_states_is_queued_and_each_answered(probe, start_node):
    """A node started with the observer on keeps the last ten joint states (qos.OBSERVED_STATE_QOS), one without it
    the newest alone (STATE_QOS): ten joint states published back to back, faster than the node takes them, are
    all observed and answered on ~/external_torque, in order, each with the library's residual."""
    xml = ARM.read_text()
    plain = DynamicsNode("plain", namespace=probe.node.get_namespace(), context=probe.executor.context,
                         parameter_overrides=[Parameter("robot_description", value=xml)])
    try:
        assert [s.qos_profile.depth for s in plain._subs if s.topic_name.endswith("/joint_states")] == [1]
    finally:
        plain.destroy_node()
    node = start_node(robot_description=xml, publish_external_torque=True, observer_gain=GAIN)
    assert [s.qos_profile.depth for s in node._subs if s.topic_name.endswith("/joint_states")] == [10]
    robot = library_robot(xml)
    names = list(robot.joint_names)
    listen_to_observer(probe)
    q, _ = random_state(robot, np.random.default_rng(5))
    warm_up(probe, robot, q, ["external_torque"])
    tau = robot.gravity_vector(q) + np.linspace(-2.0, 2.0, robot.nv)
    states = [(T0 + k * DT, q, np.zeros(robot.nv), tau) for k in range(10)]
    for t, q_k, v_k, tau_k in states:
        probe.joint_states.publish(joint_state(names, q_k, v_k, effort=tau_k, at=at(t)))
    received = [answered(probe, "external_torque", t) for t, *_ in states]
    for msg, r in zip(received, library_residuals(robot, states)):
        np.testing.assert_allclose(msg.effort, r, rtol=RTOL, atol=ATOL)
    assert [key(m.header.stamp) for m in probe.history["external_torque"]] == [t for t, *_ in states]


def test_a_push_on_the_tool_is_a_collision_on_its_body(probe, start_node):
    """The arm held still against gravity: 0.25 s of efforts g(q), a ripple on the first 0.05 s, declared
    contact-free (collision_calibration_time), calibrate the thresholds as MomentumObserver.calibrate does on the
    same log; then a wrench w on the tool (effort g - J^T w) for 0.1 s, and none for 0.25 s.  r = J^T w (1 -
    exp(-k t)) (to rounding: 1e-10 N m),
    the wrench at the tool w (1 - exp(-k t)); ~/collision publishes false (calibrated), true at the first tick of
    the push, false once released -- a late subscriber gets the present value -- and while true /diagnostics has
    an ERROR naming the tool's body."""
    xml = ARM.read_text()
    node = start_node(robot_description=xml, publish_external_torque=True, observer_gain=GAIN,
                      wrench_frames=["tcp"], collision_calibration_time=0.25)
    robot = library_robot(xml)
    names = list(robot.joint_names)
    listen_to_observer(probe, ["tcp"], collision=True)
    probe.listen("/diagnostics", DiagnosticArray, keep=True)
    q, _ = random_state(robot, np.random.default_rng(1))
    v, g = np.zeros(robot.nv), robot.gravity_vector(q)
    J = robot.frame_jacobian(q, "tcp", "local")
    w = np.array([12.0, -9.0, 15.0, 0.5, -0.4, 2.0])          # [force; torque] in the tool's axes
    tau_ext = J.T @ w
    assert abs(tau_ext[-1]) > 1.0                              # the last joint feels it: its body is touched
    warm_up(probe, robot, q, ["external_torque", "external_wrench/tcp"])

    ripple = np.zeros((51, robot.nv))                         # 0.25 s of ticks after T0: a ripple, then none
    ripple[1:11] = np.random.default_rng(2).normal(scale=0.05, size=(10, robot.nv))
    log_t = T0 + DT * np.arange(51)
    for t, e in zip(log_t, ripple):
        send(probe, joint_state(names, q, v, effort=g + e, at=at(int(t))))
    assert node.description.served.observing.detector is not None
    detector = MomentumObserver(robot, GAIN).calibrate(log_t / 1e9, np.tile(q, (51, 1)), np.zeros((51, robot.nv)),
                                                       g + np.r_[ripple[1:], ripple[:1]])   # tau from each on
    np.testing.assert_allclose(node.description.served.observing.detector.thresholds, detector.thresholds,
                               rtol=0, atol=1e-11)    # replay rounds otherwise than update: r to ~1e-12 N m, times 2
    assert np.all(detector.thresholds < 0.2 * np.abs(tau_ext).max())
    assert probe.wait_until(lambda: [m.data for m in probe.history["collision"]] == [False])

    t_on = int(log_t[-1])
    r_on = np.asarray(answered(probe, "external_torque", t_on).effort)      # what is left of the ripple's
    body = robot.body_names[robot.model.frames["tcp"].body]
    status_name = f"{probe.node.get_namespace()}/dynamics_node: collision"
    bias = np.linalg.norm(w) * (1e-3 / np.linalg.svd(J, compute_uv=False).min()) ** 2   # damping 1e-3's
    for n in range(1, 21):                                     # the push, over the ticks that end at t_on + n dt
        t = t_on + n * DT
        msg = send(probe, joint_state(names, q, v, effort=g - tau_ext, at=at(t)))
        low_pass = -np.expm1(-GAIN * (t - t_on) / 1e9)
        np.testing.assert_allclose(msg.effort, (1 - low_pass) * r_on + low_pass * tau_ext, rtol=0, atol=1e-10)
        np.testing.assert_allclose(wrench_array(answered(probe, "external_wrench/tcp", t)), low_pass * w, rtol=0,
                                   atol=1.01 * bias + 1e-6)
        if n == 1:
            assert probe.wait_until(lambda: [m.data for m in probe.history["collision"]] == [False, True])
            late = []
            probe.node.create_subscription(Bool, f"{probe.node.get_namespace()}/dynamics_node/collision",
                                           late.append, LATCHED_QOS)
            assert eventually(lambda: late == [Bool(data=True)], timeout=10)

    def last_error():
        errors = [s for m in probe.history["/diagnostics"] for s in m.status
                  if s.name == status_name and s.level == DiagnosticStatus.ERROR]
        return errors[-1].message if errors else None
    assert probe.wait_until(lambda: last_error() == f"collision: {body}"), last_error()

    t_off = t_on + 20 * DT
    for n in range(1, 51):
        send(probe, joint_state(names, q, v, effort=g, at=at(t_off + n * DT)))
    assert probe.wait_until(lambda: [m.data for m in probe.history["collision"]] == [False, True, False])
    assert probe.wait_until(lambda: any(s.name == status_name and s.level == DiagnosticStatus.OK
                                        for s in probe.history["/diagnostics"][-1].status))
    assert not node.skipped


def test_joint_states_the_observer_cannot_use_are_skipped_and_counted(probe, start_node):
    """Efforts missing, NaN, of the wrong length, velocities missing: each skipped by the observer and counted (the
    dynamics outputs of the first two still published; a wrong length refuses the message whole); the next good
    joint state's r is the library's over the good ones, dt spanning the skipped."""
    xml = ARM.read_text()
    node = start_node(robot_description=xml, publish_external_torque=True, observer_gain=GAIN)
    robot = library_robot(xml)
    names = list(robot.joint_names)
    listen_to_observer(probe)
    rng = np.random.default_rng(3)
    q, v = random_state(robot, rng)
    warm_up(probe, robot, q, ["external_torque"])
    flagged = dict(node.flagged)
    good = [(T0 + k * DT, q + 0.01 * k, v, rng.normal(size=robot.nv)) for k in (0, 1, 6)]
    for t, qk, vk, tau in good[:2]:
        send(probe, joint_state(names, qk, vk, effort=tau, at=at(t)))
    bad = [("observer_efforts_missing", joint_state(names, q, v, at=at(T0 + 2 * DT))),
           ("observer_efforts_non_finite", joint_state(names, q, v, effort=np.r_[np.nan, v[1:]], at=at(T0 + 3 * DT))),
           ("joint_state_lengths", joint_state(names, q, v, effort=v[:-1], at=at(T0 + 4 * DT))),
           ("observer_velocities_missing", joint_state(names, q, effort=v, at=at(T0 + 5 * DT)))]
    for kind, msg in bad:
        before = node.skipped[kind]
        assert probe.published(probe.joint_states, msg, until=lambda: node.skipped[kind] > before), kind
    t, qk, vk, tau = good[2]
    msg = send(probe, joint_state(names, qk, vk, effort=tau, at=at(t)))
    np.testing.assert_allclose(msg.effort, library_residuals(robot, good)[-1], rtol=RTOL, atol=ATOL)
    assert set(node.skipped) == {kind for kind, _ in bad}
    stamps = {key(m.header.stamp) for m in probe.history["external_torque"]}
    assert not stamps & {key(m.header.stamp) for _, m in bad}
    assert {(s.sec, s.nanosec) for s in (at(T0 + 2 * DT), at(T0 + 3 * DT))} <= set(probe.com_stamps)
    flagged["observer_restart_gap"] = flagged.get("observer_restart_gap", 0) + 1       # at the first good one
    assert dict(node.flagged) == flagged


def test_efforts_from_an_effort_topic(probe, start_node):
    """effort_topic: the last command (Float64MultiArray in the order of joints, as an effort controller's) is the
    applied torque of the next joint state; commands of the wrong length or NaN are skipped and counted."""
    xml = ARM.read_text()
    node = start_node(robot_description=xml, publish_external_torque=True, observer_gain=GAIN,
                      effort_topic="effort_controller/commands")
    robot = library_robot(xml)
    names = list(robot.joint_names)
    listen_to_observer(probe)
    commands = probe.node.create_publisher(Float64MultiArray, f"{probe.node.get_namespace()}/effort_controller/"
                                           "commands", QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
    rng = np.random.default_rng(4)
    q, v = random_state(robot, rng)
    probe.wait_matched(commands)
    for kind, data in (("effort_length", np.ones(robot.nv - 1)), ("effort_non_finite", np.r_[np.inf, v[1:]])):
        assert probe.published(commands, Float64MultiArray(data=data.tolist()), until=lambda: node.skipped[kind])
    tau = [rng.normal(size=robot.nv) for _ in range(3)]
    states = [(T0 + k * DT, q + 0.02 * k, v, tau[k]) for k in range(3)]
    for k, (t, qk, vk, tau_k) in enumerate(states):
        assert probe.published(commands, Float64MultiArray(data=tau_k.tolist()),
                               until=lambda: np.array_equal(node.inputs.effort_command, tau_k))
        if k == 0:
            warm_up(probe, robot, q, ["external_torque"])
        msg = send(probe, joint_state(names, qk, vk, at=at(t)))         # no effort in the joint state
        np.testing.assert_allclose(msg.effort, library_residuals(robot, states[:k + 1])[-1], rtol=RTOL, atol=ATOL)
    assert set(node.skipped) == {"effort_length", "effort_non_finite"}


def heavier(xml):
    import re
    return re.sub(r'<mass\s+value="([^"]+)"', lambda m: f'<mass value="{2 * float(m.group(1))!r}"', xml)


def test_switched_on_at_run_time_and_restarted_by_a_new_description(probe, start_node):
    """publish_external_torque set while serving advertises the outputs; 10 ms held still calibrate the thresholds,
    then a push is a collision.  A hot-swapped description (every mass doubled) restarts the observer at the next
    joint state (r = 0 and no collision, though the push goes on), which then follows the new model's observer --
    without counting a restart of its own -- with the calibrated thresholds carried over."""
    xml = ARM.read_text()
    node = start_node(robot_description=xml, observer_gain=GAIN, collision_calibration_time=0.01)
    assert node.set_parameters([Parameter("publish_external_torque", value=True)])[0].successful
    robot = library_robot(xml)
    names = list(robot.joint_names)
    listen_to_observer(probe, collision=True)
    q, _ = random_state(robot, np.random.default_rng(5))
    v, tau_ext = np.zeros(robot.nv), np.linspace(-2.0, 2.0, robot.nv)
    warm_up(probe, robot, q, ["external_torque"])
    for k in range(7):                                         # still for 2 dt = 10 ms, then pushed
        push = tau_ext if k >= 3 else 0.0
        msg = send(probe, joint_state(names, q, v, effort=robot.gravity_vector(q) - push, at=at(T0 + k * DT)))
    assert np.max(np.abs(np.asarray(msg.effort) - tau_ext)) < 0.5 * np.max(np.abs(tau_ext))
    assert probe.wait_until(lambda: [m.data for m in probe.history["collision"]] == [False, True])
    flagged, calibrated = dict(node.flagged), node.description.served.observing.detector.thresholds

    served = node.description.served
    assert node.set_parameters([Parameter("robot_description", value=heavier(xml))])[0].successful
    assert eventually(lambda: node.description.served is not served, timeout=60)
    assert np.array_equal(node.description.served.observing.detector.thresholds, calibrated)
    heavy = library_robot(heavier(xml))
    states = [(T0 + k * DT, q, v, heavy.gravity_vector(q) - tau_ext) for k in range(7, 10)]
    for k, (t, qk, vk, tau) in enumerate(states):
        msg = send(probe, joint_state(names, qk, vk, effort=tau, at=at(t)))
        np.testing.assert_allclose(msg.effort, library_residuals(heavy, states[:k + 1])[-1], rtol=RTOL, atol=ATOL)
        if k == 0:
            assert np.all(np.asarray(msg.effort) == 0)
            assert probe.wait_until(lambda: [m.data for m in probe.history["collision"]] == [False, True, False])
    assert dict(node.flagged) == flagged


def test_a_floating_base_is_said_once_and_not_observed(probe, start_node, capfd):
    """The quadruped with a floating base: the node says once that the observer takes fixed-base robots only,
    publishes none of its outputs, and answers the joint states with the others."""
    node = start_node(urdf_path=str(QUADRUPED), floating_base=True, publish_external_torque=True)
    robot = rd.load_urdf(str(QUADRUPED), floating_base=True)
    listen_to_observer(probe)
    q, v = random_state(robot, np.random.default_rng(6))
    probe.wait_matched(probe.joint_states)
    assert probe.published(probe.odom, odometry(q[:7], v[:6], robot.root_link),
                           until=lambda: node.base_state is not None)
    for k in range(3):
        msg = joint_state(robot.joint_names, q[7:], v[6:], effort=np.zeros(robot.nv - 6), k=k)
        assert probe.exchange(msg, until=lambda: (msg.header.stamp.sec, msg.header.stamp.nanosec) in probe.com_stamps)
    assert capfd.readouterr().err.count("takes fixed-base robots only") == 1
    assert probe.counts["external_torque"] == 0 and not node.skipped


@pytest.mark.parametrize("params, message", [
    (dict(observer_gain=-1.0), "observer_gain must be finite and positive"),
    (dict(collision_thresholds=[1.0, 2.0]), "collision_thresholds has 2 values"),
    (dict(collision_release=1.5), "collision_release must be in [0, 1]"),
    (dict(wrench_frames=["tool0"]), "no frame 'tool0' of the parameter wrench_frames"),
    (dict(wrench_frames=["tcp-1"]), "'tcp-1' cannot name the topic ~/external_wrench/tcp-1"),
], ids=["gain", "thresholds", "release", "unknown frame", "not a topic name"])
def test_observer_parameters_the_node_cannot_use_stop_it_at_start_up(start_node, params, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        start_node(urdf_path=str(ARM), **params)
