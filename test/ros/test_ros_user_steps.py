"""The steps of a ROS user that failed in issue 12, each reproduced with real rclpy, and the ROS conventions.

1. ``-p robot_description:="$(cat urdf/X.urdf)"`` for every bundled URDF (rcl parses the value as YAML);
2. launch files resolve every package before any node (checked through their own logic with a stand-in for
   ``launch``/``launch_ros``, which pip-installed ROS 2 does not have);
3. a ``.xacro`` urdf_path is expanded with xacro_args; a description without joints stops the node;
4. real ``*.launch.py`` files, installed in share/robot_dynamics/launch, apart from the plain scripts;
5. package.xml names no pip-only oracle (see test_packaging.py);
6. urdf_path takes a bundled name and package://pkg/path through the ament index; a waiting node is subscribed.
"""
import importlib.util
import os
import subprocess
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest

import rclpy  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ros_helpers import (URDF_DIR, Probe, claim_ros_domain, expected_outputs,  # noqa: E402
                         eventually, joint_state, odometry, random_state)

pytest_plugins = ["ros_helpers"]      # its fixtures: context, executor, namespace, probe, start_node, processes

claim_ros_domain()

from rclpy.parameter import Parameter  # noqa: E402
from rclpy.signals import SignalHandlerOptions  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.ros.computed_torque_node import ComputedTorqueNode  # noqa: E402
from robot_dynamics.ros.dynamics_node import DynamicsNode  # noqa: E402
from robot_dynamics.ros.sim_node import SimNode  # noqa: E402
from robot_dynamics.ros.launch_plan import LaunchError, closed_loop_plan  # noqa: E402

REPO = URDF_DIR.parent
BUNDLED = sorted(URDF_DIR.glob("*.urdf"))
# an exception in an executor's or a node's thread (InvalidHandle at teardown, ...) fails the test
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
XACRO = """<?xml version="1.0"?>
<robot name="two_link" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="prefix" default=""/>
  <xacro:arg name="mass" default="1.0"/>
  <xacro:property name="p" value="$(arg prefix)"/>
  <xacro:macro name="body" params="name">
    <link name="${p}${name}">
      <inertial><mass value="$(arg mass)"/>
        <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    </link>
  </xacro:macro>
  <link name="${p}base"/>
  <xacro:body name="l1"/>
  <xacro:body name="l2"/>
  <joint name="${p}j1" type="revolute"><parent link="${p}base"/><child link="${p}l1"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="1" lower="-1" upper="1"/></joint>
  <joint name="${p}j2" type="revolute"><parent link="${p}l1"/><child link="${p}l2"/><origin xyz="1 0 0"/>
    <axis xyz="0 1 0"/><limit effort="1" velocity="1" lower="-1" upper="1"/></joint>
</robot>
"""
MIMIC = """<robot name="gripper">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <link name="b"><inertial><mass value="0.5"/><inertia ixx="0.05" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <joint name="finger" type="prismatic"><parent link="base"/><child link="a"/><axis xyz="1 0 0"/>
    <limit effort="1" velocity="1" lower="0" upper="1"/></joint>
  <joint name="finger_mimic" type="prismatic"><parent link="base"/><child link="b"/><axis xyz="0 1 0"/>
    <mimic joint="finger" multiplier="-1.0" offset="0.01"/><limit effort="1" velocity="1" lower="-1" upper="0"/>
  </joint>
</robot>
"""


def ament_prefix(root, packages):
    """A minimal ament install prefix: the resource-index marker and share/<pkg>/ of each package in
    ``packages`` ({name: {relative path: text}})."""
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True, exist_ok=True)
    for name, files in packages.items():
        (index / name).write_text("")
        for relative, text in files.items():
            path = root / "share" / name / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return root


# --- 1. robot_description by parameter, every bundled URDF --------------------------------------------------

@pytest.mark.parametrize("urdf", BUNDLED, ids=lambda p: p.stem)
def test_every_bundled_urdf_passes_as_a_command_line_parameter(urdf):
    """``--ros-args -p robot_description:=<the file's text>``, as ``$(cat file)`` gives it: rcl parses the value
    as YAML, which ': ' in a comment broke; the node then loads the robot the library loads from the file."""
    xml = urdf.read_text()
    context = rclpy.Context()
    rclpy.init(args=["dynamics_node", "--ros-args", "-p", f"robot_description:={xml}"], context=context,
               signal_handler_options=SignalHandlerOptions.NO)
    try:
        node = DynamicsNode(context=context)
        robot = rd.load_urdf(str(urdf))
        assert list(node.get_parameter("joints").value) == list(robot.joint_names)
        np.testing.assert_array_equal(node.robot.parameters, robot.parameters)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


# --- 3. xacro, and descriptions that must stop the node ---------------------------------------------------

def test_xacro_urdf_path_is_expanded_with_its_arguments(tmp_path, start_node):
    pytest.importorskip("xacro", reason="xacro comes with the test and ros extras: pip install -e '.[test,ros]'")
    path = tmp_path / "two_link.urdf.xacro"
    path.write_text(XACRO)
    node = start_node(urdf_path=str(path), xacro_args=["prefix:=r1_", "mass:=2.5"])
    assert list(node.get_parameter("joints").value) == ["r1_j1", "r1_j2"]
    assert node.robot.body_names == ["r1_l1", "r1_l2"]
    assert node.robot.total_mass == pytest.approx(5.0, abs=1e-12)          # two bodies of the argument's mass
    # the same through the library and the CLI
    assert rd.load_urdf(path, xacro_args={"prefix": "r1_", "mass": "2.5"}).joint_names == ["r1_j1", "r1_j2"]
    with pytest.raises(rd.URDFError, match="not of the form"):
        rd.load_urdf(path, xacro_args=["prefix"])


def test_a_description_without_joints_or_file_stops_the_node_with_its_message(tmp_path, start_node):
    with pytest.raises(ValueError, match="no joints"):
        start_node(robot_description="<robot name='empty'><link name='a'/></robot>")
    with pytest.raises(ValueError, match="no such file"):
        start_node(urdf_path=str(tmp_path / "missing.urdf"))
    with pytest.raises(ValueError, match="not found in the ament index"):
        start_node(urdf_path="package://no_such_package_here/urdf/x.urdf")


def test_the_user_step_with_a_bad_xacro_path_ends_the_node(tmp_path):
    """``dynamics_node --ros-args -p urdf_path:=x.urdf.xacro`` as a process: a bad path ends the node with exit
    code 2 and the message (it used to serve an empty robot, or log "waiting" for ever, unsubscribed)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    bad = subprocess.run([sys.executable, "-m", "robot_dynamics.ros.dynamics_node", "--ros-args", "-p",
                          f"urdf_path:={tmp_path / 'x.urdf.xacro'}"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and "x.urdf.xacro" in bad.stderr and "no such file" in bad.stderr, bad.stderr


# --- 6. urdf_path by bundled name and package://, and a waiting node that listens ----------------------------

def test_urdf_path_takes_a_bundled_name_and_a_package_url(tmp_path, start_node, monkeypatch):
    arm = (URDF_DIR / "arm7.urdf").read_text()
    names = list(rd.load_urdf(arm).joint_names)
    assert list(start_node(urdf_path="arm7").get_parameter("joints").value) == names
    prefix = ament_prefix(tmp_path / "install", {"my_description": {"urdf/robot.urdf": arm}})
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    node = start_node(urdf_path="package://my_description/urdf/robot.urdf")
    assert list(node.get_parameter("joints").value) == names
    with pytest.raises(ValueError, match="package://my_description/urdf/nope.urdf"):
        start_node(urdf_path="package://my_description/urdf/nope.urdf")


def test_a_node_waiting_for_its_description_is_subscribed_and_takes_a_late_one(executor, namespace, start_node):
    node = start_node()
    topic = f"{namespace}/robot_description"
    assert [i.node_name for i in node.get_subscriptions_info_by_topic(topic)] == ["dynamics_node"]
    probe = Probe(executor, namespace)
    try:
        xml = (URDF_DIR / "planar_2link.urdf").read_text()
        probe.description.publish(String(data=xml))                  # published after the node started
        assert probe.wait_until(lambda: node.robot is not None, timeout=15)
        assert node.robot.joint_names == rd.load_urdf(xml).joint_names
    finally:
        probe.close()


# --- 2 and 4. launch files -------------------------------------------------------------------------------

class FakeLaunch:
    """Stand-ins for the ``launch`` and ``launch_ros`` modules that record what a launch file builds.

    ``nodes`` lists every launch_ros Node constructed: constructing one is what would start a process.
    """

    def __init__(self, arguments):
        self.arguments, self.nodes = arguments, []
        fake = self

        class Entity:
            def __init__(self, *args, **kwargs):
                self.args, self.kwargs = args, kwargs

        class Node(Entity):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                fake.nodes.append(kwargs)

        class LaunchConfiguration:
            def __init__(self, name):
                self.name = name

            def perform(self, context):
                return fake.arguments.get(self.name, fake.defaults[self.name])

        class DeclareLaunchArgument(Entity):
            pass

        class OpaqueFunction(Entity):
            pass

        self.modules = {
            "launch": types.SimpleNamespace(LaunchDescription=lambda entities: list(entities)),
            "launch.actions": types.SimpleNamespace(DeclareLaunchArgument=DeclareLaunchArgument,
                                                    OpaqueFunction=OpaqueFunction),
            "launch.substitutions": types.SimpleNamespace(LaunchConfiguration=LaunchConfiguration),
            "launch_ros": types.SimpleNamespace(), "launch_ros.actions": types.SimpleNamespace(Node=Node)}
        self.classes = (DeclareLaunchArgument, OpaqueFunction)

    def run(self, launch_file, monkeypatch):
        """Load ``launch_file`` as ros2 launch does and execute its entities: the nodes it starts."""
        for name, module in self.modules.items():
            monkeypatch.setitem(sys.modules, name, module)
        spec = importlib.util.spec_from_file_location("launch_file", launch_file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        entities = module.generate_launch_description()
        assert all(isinstance(e, self.classes) for e in entities), "a launch file starts nodes only in its function"
        self.defaults = {e.args[0]: e.kwargs["default_value"] for e in entities if isinstance(e, self.classes[0])}
        for opaque in (e for e in entities if isinstance(e, self.classes[1])):
            opaque.kwargs["function"](None)
        return self.nodes


def installed_prefix(tmp_path, *packages):
    return ament_prefix(tmp_path / "install", {p: {"package.xml": "<package/>"} for p in packages})


def test_launch_without_robot_state_publisher_starts_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(installed_prefix(tmp_path, "robot_dynamics")))
    fake = FakeLaunch({"use_robot_state_publisher": "true"})
    with pytest.raises(LaunchError, match="'robot_state_publisher' not found") as err:
        fake.run(REPO / "launch_scripts" / "dynamics.launch.py", monkeypatch)
    assert fake.nodes == [] and "no node was started" in str(err.value)     # nothing to orphan


def test_launch_with_robot_state_publisher_namespace_and_frame_prefix(tmp_path, monkeypatch):
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(installed_prefix(tmp_path, "robot_dynamics", "robot_state_publisher")))
    nodes = FakeLaunch({"use_robot_state_publisher": "true", "urdf": "quadruped", "floating_base": "true",
                        "namespace": "robot1", "frame_prefix": "robot1/", "use_sim_time": "true"}).run(
        REPO / "launch_scripts" / "dynamics.launch.py", monkeypatch)
    assert [(n["package"], n["namespace"]) for n in nodes] == [("robot_dynamics", "robot1"),
                                                               ("robot_state_publisher", "robot1")]
    dynamics, rsp = (n["parameters"][0] for n in nodes)
    assert "robot_description" not in dynamics                      # it reads robot_state_publisher's topic
    assert rsp["robot_description"] == (URDF_DIR / "quadruped.urdf").read_text()
    assert dynamics["frame_prefix"] == rsp["frame_prefix"] == "robot1/"
    assert dynamics["use_sim_time"] is rsp["use_sim_time"] is True and dynamics["floating_base"] is True


def test_launch_runs_xacro_and_refuses_bad_arguments_before_any_node(tmp_path, monkeypatch):
    pytest.importorskip("xacro", reason="xacro comes with the test and ros extras: pip install -e '.[test,ros]'")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(installed_prefix(tmp_path, "robot_dynamics")))
    path = tmp_path / "two_link.urdf.xacro"
    path.write_text(XACRO)
    nodes = FakeLaunch({"urdf": str(path), "xacro_args": "prefix:=a_"}).run(
        REPO / "launch_scripts" / "dynamics.launch.py", monkeypatch)
    assert rd.load_urdf(nodes[0]["parameters"][0]["robot_description"]).joint_names == ["a_j1", "a_j2"]
    fake = FakeLaunch({"urdf": "nope", "floating_base": "maybe"})
    with pytest.raises(LaunchError) as err:
        fake.run(REPO / "launch_scripts" / "dynamics.launch.py", monkeypatch)
    assert fake.nodes == [] and "urdf:=nope" in str(err.value) and "floating_base:=maybe" in str(err.value)


def test_closed_loop_launch_file_starts_sim_dynamics_and_controller(tmp_path, monkeypatch):
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(installed_prefix(tmp_path, "robot_dynamics")))
    nodes = FakeLaunch({"namespace": "robot2", "controller": "computed_torque"}).run(
        REPO / "launch_scripts" / "closed_loop.launch.py", monkeypatch)
    assert [n["executable"] for n in nodes] == ["sim_node", "dynamics_node", "computed_torque_node"]
    assert {n["namespace"] for n in nodes} == {"robot2"}
    with pytest.raises(LaunchError, match="controller:=pid"):
        closed_loop_plan({"controller": "pid"}, packages=False)


def test_launch_files_are_installed_where_ros2_launch_finds_them_apart_from_the_scripts(monkeypatch):
    import setuptools
    captured = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: captured.update(kwargs))
    monkeypatch.chdir(REPO)
    spec = importlib.util.spec_from_file_location("setup_py", REPO / "setup.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    files = {directory: [Path(f).name for f in names] for directory, names in captured["data_files"]}
    assert sorted(files["share/robot_dynamics/launch"]) == ["closed_loop.launch.py", "dynamics.launch.py"]
    assert not [f for d, names in files.items() if d != "share/robot_dynamics/launch"
                for f in names if f.endswith(".launch.py")]
    assert sorted(files["share/robot_dynamics/scripts"]) == ["closed_loop.py", "dynamics.py"]


@pytest.mark.parametrize("script, launch_file", [("closed_loop.py", "closed_loop.launch.py"),
                                                 ("dynamics.py", "dynamics.launch.py")])
def test_ros2_launch_on_a_plain_script_names_the_launch_file(script, launch_file, tmp_path, monkeypatch):
    """``ros2 launch robot_dynamics closed_loop.py`` imports the file alone (it used to fail on ``import
    dynamics``) and calls generate_launch_description, which names the real launch file."""
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location("plain", REPO / "launch_scripts" / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(LaunchError, match=launch_file):
        module.generate_launch_description()


# --- conventions: mimic, frame_prefix, labels and the stamped companion, nothing advertised unpublished ------

def test_mimic_joints_are_filled_from_their_masters(executor, namespace, start_node):
    node = start_node(robot_description=MIMIC, mimic=True, publish_derivatives=True)
    robot = rd.load_urdf(MIMIC, mimic=True)
    assert list(node.get_parameter("joints").value) == ["finger"]
    probe = Probe(executor, namespace)
    try:
        probe.wait_matched(probe.joint_states)
        q, v = np.array([0.3]), np.array([0.7])
        expected = expected_outputs(robot, q, v, 0, "base")
        assert probe.exchange(joint_state(["finger"], q, v, k=0), until=probe.matches(expected))
        probe.assert_outputs(expected)
        # independent check: the mimic body b moves along y with -v, so M = m_a + m_b (multiplier^2 = 1)
        np.testing.assert_allclose(probe.array("mass_matrix"), [[1.5]], rtol=0, atol=1e-12)
    finally:
        probe.close()


def test_frame_prefix_labels_and_the_stamped_companion(executor, namespace, start_node):
    node = start_node(urdf_path="quadruped", floating_base=True, frame_prefix="robot1/")
    robot = rd.load_urdf(str(URDF_DIR / "quadruped.urdf"), floating_base=True)
    probe = Probe(executor, namespace)
    states = []
    probe.node.create_subscription(JointState, f"{namespace}/dynamics_node/state", states.append, 10)
    try:
        q, v = random_state(robot, np.random.default_rng(3))
        odom = (probe.odom, odometry(q[:7], v[:6], "robot1/" + robot.root_link, frame_id="world"))
        expected = expected_outputs(robot, q, v, 0, "world")
        probe.wait_matched(probe.joint_states)
        assert probe.exchange(joint_state(robot.joint_names, q[7:], v[6:], k=0), also=[odom],
                              until=lambda: probe.matches(expected)() and states)
        probe.assert_outputs(expected)
        coordinates = ["base_linear_x", "base_linear_y", "base_linear_z", "base_angular_x", "base_angular_y",
                       "base_angular_z"] + list(robot.joint_names)
        with probe._cond:
            m, j = probe.latest["mass_matrix"], probe.latest["com_jacobian"]
        assert [d.label.split(",") for d in m.layout.dim] == [coordinates, coordinates]
        assert [d.label.split(",") for d in j.layout.dim] == [["x", "y", "z"], coordinates]
        state = states[-1]
        assert (state.header.stamp.sec, state.header.frame_id) == (1000, "world")
        assert list(state.name) == coordinates and np.allclose(state.velocity, v, rtol=0, atol=0)
        topics = {name for name, _ in node.get_publisher_names_and_types_by_node("dynamics_node", namespace)}
        assert f"{namespace}/dynamics_node/mass_matrix" in topics
        assert not {f"{namespace}/dynamics_node/{t}" for t in ("regressor", "mass_matrix_derivative")} & topics
    finally:
        probe.close()


# --- multiple robots ---------------------------------------------------------------------------------------

def test_two_namespaced_robots_side_by_side_do_not_cross_talk(executor, namespace):
    """Two closed loops (sim_node + computed_torque_node, default topics) in /<ns>_r1 and /<ns>_r2, each sent its
    own target: each simulated robot reaches its own target, and each command topic has one publisher and one
    subscriber, in its namespace (the command topic used to be the absolute /effort_controller/commands)."""
    urdf = str(URDF_DIR / "planar_2link.urdf")
    targets = {"r1": np.array([0.4, -0.3]), "r2": np.array([-0.6, 0.8])}
    loops = {}
    pub = rclpy.create_node("targets", context=executor.context)
    executor.add_node(pub)
    for robot in targets:
        ns = f"{namespace}_{robot}"
        sim = SimNode(namespace=ns, context=executor.context, parameter_overrides=[
            Parameter("urdf_path", value=urdf), Parameter("lockstep", value=True),
            Parameter("real_time_factor", value=0.0), Parameter("rate", value=200.0)])
        controller = ComputedTorqueNode(namespace=ns, context=executor.context,
                                        parameter_overrides=[Parameter("urdf_path", value=urdf)])
        for node in (sim, controller):
            executor.add_node(node)             # the executor destroys them when it has stopped
        loops[robot] = (ns, sim, controller, pub.create_publisher(
            JointTrajectoryPoint, f"{ns}/computed_torque_node/joint_references", 10))
    for robot, (ns, sim, controller, references) in loops.items():
        topic = f"{ns}/effort_controller/commands"
        assert [i.node_name for i in pub.get_publishers_info_by_topic(topic)] == ["computed_torque_node"]
        assert [i.node_name for i in pub.get_subscriptions_info_by_topic(topic)] == ["sim_node"]
        deadline = threading.Event()
        while controller._point is None and not deadline.wait(0.05):
            references.publish(JointTrajectoryPoint(positions=targets[robot].tolist()))
    assert not pub.get_publishers_info_by_topic("/effort_controller/commands")

    def arrived():
        return all(sim.t > 2.0 and np.allclose(sim.q, targets[r], atol=1e-3) for r, (_, sim, _, _) in loops.items())
    done = threading.Event()
    for _ in range(600):
        if arrived() or done.wait(0.05):
            break
    assert arrived(), {r: (sim.t, sim.q) for r, (_, sim, _, _) in loops.items()}


def test_diagnostics_report_rate_and_skipped_messages_by_reason(executor, namespace, start_node):
    diagnostic_msgs = pytest.importorskip("diagnostic_msgs.msg", reason="ros-diagnostic-msgs comes with the ros "
                                          "extra: pip install -e '.[test,ros]'")
    node = start_node(urdf_path="planar_2link")
    probe = Probe(executor, namespace)
    reports = []
    probe.node.create_subscription(diagnostic_msgs.DiagnosticArray, "/diagnostics", reports.append, 10)
    try:
        names = list(node.robot.joint_names)
        probe.wait_matched(probe.joint_states)
        bad = joint_state(names, [0.1])                            # one position for two joints
        assert probe.published(probe.joint_states, bad, until=lambda: node.skipped["joint_state_lengths"] > 0)

        def first_with_skips():
            """The first report of ours that counts a skipped joint_state_lengths: its period saw the skip."""
            return next((s for r in reports for s in r.status if s.name.startswith(f"{namespace}/dynamics_node:")
                         and {kv.key: kv.value for kv in s.values}.get("skipped joint_state_lengths", "0") != "0"),
                        None)
        assert probe.wait_until(lambda: first_with_skips() is not None, timeout=10), reports
        status = first_with_skips()
        values = {kv.key: kv.value for kv in status.values}
        assert {"rate [Hz]", "mean compute time [ms]", "skipped", "answered"} <= set(values)
        reported = int(values["skipped joint_state_lengths"])      # bad messages may still arrive after the report
        assert 1 <= reported <= node.skipped["joint_state_lengths"]
        assert int(values["skipped"]) == reported                  # no other kind of fault
        assert status.level == diagnostic_msgs.DiagnosticStatus.WARN, (status.level, status.message)
    finally:
        probe.close()


# --- the lifecycle node ------------------------------------------------------------------------------------

def test_lifecycle_node_loads_on_configure_and_answers_only_while_active(executor, namespace):
    """lifecycle_dynamics_node driven through its ~/change_state service as ``ros2 lifecycle set`` does: nothing
    before configure; configure loads the description (a bad urdf_path fails the transition and the node stays
    unconfigured); inactive, it advertises its outputs but publishes nothing; active, it answers with the
    library's numbers; deactivated it stops; cleanup drops the model and the outputs."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState, GetState
    from robot_dynamics.ros.lifecycle_node import LifecycleDynamicsNode

    node = LifecycleDynamicsNode(namespace=namespace, context=executor.context,
                                 parameter_overrides=[Parameter("urdf_path", value="no_such_robot")])
    executor.add_node(node)
    probe = Probe(executor, namespace)
    change = probe.node.create_client(ChangeState, f"{namespace}/dynamics_node/change_state")
    get = probe.node.create_client(GetState, f"{namespace}/dynamics_node/get_state")
    assert change.wait_for_service(timeout_sec=10) and get.wait_for_service(timeout_sec=10)

    def transition(which):
        return probe.result(change.call_async(ChangeState.Request(transition=Transition(id=which)))).success

    def state():
        return probe.result(get.call_async(GetState.Request())).current_state.label

    def outputs():
        """The node's outputs that it advertises (not the lifecycle's own transition_event)."""
        return {name for name, _ in probe.node.get_topic_names_and_types()
                if name.startswith(f"{namespace}/dynamics_node/") and not name.endswith("/transition_event") and any(
                    i.node_name == "dynamics_node" for i in probe.node.get_publishers_info_by_topic(name))}

    robot = rd.load_urdf(str(URDF_DIR / "arm7.urdf"))
    names = list(robot.joint_names)
    q, v = random_state(robot, np.random.default_rng(11))
    assert state() == "unconfigured" and node.robot is None and not outputs()
    assert not transition(Transition.TRANSITION_CONFIGURE)             # urdf_path names no file
    assert state() == "unconfigured" and node.robot is None

    node.set_parameters([Parameter("urdf_path", value="arm7")])
    assert transition(Transition.TRANSITION_CONFIGURE) and state() == "inactive"
    assert list(node.get_parameter("joints").value) == names
    assert f"{namespace}/dynamics_node/mass_matrix" in outputs()
    probe.wait_matched(probe.joint_states)
    idle = joint_state(names, q, v, k=0)
    assert not probe.published(probe.joint_states, idle, until=lambda: probe.counts["mass_matrix"] > 0, timeout=1.0)
    assert node.answered == 0 and node.diagnostics.received_count > 0             # received, not answered

    assert transition(Transition.TRANSITION_ACTIVATE) and state() == "active"
    expected = expected_outputs(robot, q, v, 1, robot.root_link)
    assert probe.exchange(joint_state(names, q, v, k=1), until=probe.matches(expected))
    probe.assert_outputs(expected)

    assert transition(Transition.TRANSITION_DEACTIVATE) and state() == "inactive"
    answered = node.answered
    assert not probe.published(probe.joint_states, joint_state(names, q, v, k=2),
                               until=lambda: node.answered > answered, timeout=1.0)
    assert transition(Transition.TRANSITION_CLEANUP) and state() == "unconfigured"
    assert node.robot is None
    assert eventually(lambda: not outputs(), timeout=10), outputs()
