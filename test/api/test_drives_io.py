"""Issue 27, item 1: drives read from URDFs (<dynamics>, transmissions) and drives files, and written back.

Independent routes: Pinocchio 4.1's URDF parser (model.damping, model.friction, model.armature) on every
example-robot-data URDF that has a <dynamics>, and on the files written here; Pinocchio reads no transmissions, so
their armature is checked against I_m N^2 of the literal values written in each test URDF.
"""
import re
import warnings

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from oracle import PinocchioTwin, erd_path, erd_robots_dir, erd_urdfs
from robot_dynamics.drive_files import (drives_parameters, read_drives, write_drives, write_drives_parameters,
                                        write_urdf_dynamics)
from robot_dynamics.urdf import URDFError, URDFWarning

# {'<package>/<file>.urdf': path} of every example-robot-data URDF with a <dynamics>
WITH_DYNAMICS = {f"{p.relative_to(erd_robots_dir()).parts[0]}/{p.name}": p for p in erd_urdfs()
                 if "<dynamics" in p.read_text(errors="ignore")}
# files whose joints have non-zero <dynamics> values: the comparison is not one of zeros alone
NON_ZERO = {"panda_description/panda.urdf", "pr2_description/pr2.urdf", "tiago_description/tiago.urdf",
            "icub_description/icub.urdf", "baxter_description/baxter.urdf",
            "double_pendulum_description/double_pendulum_continuous.urdf"}


def load(source, **keywords):
    """load_urdf with the URDFWarnings of published files (placeholder inertias) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        return rd.load_urdf(source, **keywords)


def pinocchio_drives(robot, path, floating_base=False, mimic=False):
    """Pinocchio's (armature, damping, friction) of the URDF at path, in our coordinate order."""
    twin = PinocchioTwin(robot, path, floating_base=floating_base, mimic=mimic)
    return tuple(np.asarray(getattr(twin.model, name))[twin.pin_of_v] for name in ("armature", "damping", "friction"))


def ours(robot):
    return robot.armature, robot.damping, robot.friction


def assert_drives_equal(robot, expected):
    for name, a, b in zip(("armature", "damping", "friction"), ours(robot), expected):
        np.testing.assert_array_equal(a, b, err_msg=name)


# ---------------------------------------------------------------------------------------- published URDFs

def test_the_published_files_with_dynamics_are_found():
    assert len(WITH_DYNAMICS) >= 45 and NON_ZERO <= set(WITH_DYNAMICS)


@pytest.mark.parametrize("name", WITH_DYNAMICS, ids=str)
def test_damping_and_friction_equal_pinocchios(name):
    """Done when (issue 27): robot.damping/robot.friction equal Pinocchio's for every URDF that has <dynamics>,
    fixed and floating base; the transmissions these files hold give no motor inertia, so armature is zero as
    Pinocchio's.  Both read the same decimal text: equal to the last bit."""
    path = WITH_DYNAMICS[name]
    for floating_base in (False, True):
        robot = load(path, floating_base=floating_base)
        assert_drives_equal(robot, pinocchio_drives(robot, path, floating_base))
        if floating_base:
            assert not np.any(np.array(ours(robot))[:, :6])
        if name in NON_ZERO:
            assert robot.damping.any()


def test_a_mimic_joints_dynamics_is_dropped_with_a_warning_as_pinocchio_does():
    path = erd_path("panda.urdf")
    with pytest.warns(URDFWarning, match="joint 'panda_finger_joint2': damping 0.3 dropped: a mimic joint"):
        robot = rd.load_urdf(path, mimic=True)
    assert_drives_equal(robot, pinocchio_drives(robot, path, mimic=True))
    assert robot.damping[robot.coordinate_names.index("panda_finger_joint1")] == 0.3


# ---------------------------------------------------------------------------------------- URDFs written here

INERTIAL = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'


def chain(*joints, extra="", header=""):
    """A URDF of links l0..ln joined in a chain by joints (name, type, inner XML), then `extra`."""
    links = "".join(f'<link name="l{k}">{INERTIAL}</link>' for k in range(len(joints) + 1))
    body = "".join(f'<joint name="{name}" type="{kind}"><parent link="l{k}"/><child link="l{k + 1}"/>'
                   f'<axis xyz="0 0 1"/>{inner}</joint>' for k, (name, kind, inner) in enumerate(joints))
    return f'<robot name="r"{header}>{links}{body}{extra}</robot>'


ARM = [("a", "revolute", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
       ("b", "prismatic", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'),
       ("c", "continuous", "")]
DRAKE = ' xmlns:drake="http://drake.mit.edu"'

# (name, transmission XML on joint 'a', motor inertia I_m, reduction N): each gives a's armature I_m N^2
TRANSMISSIONS = [
    ("ROS 1", "<transmission name='t'><type>transmission_interface/SimpleTransmission</type><joint name='a'>"
     "<hardwareInterface>EffortJointInterface</hardwareInterface></joint><actuator name='m'><motorInertia>2.5e-4"
     "</motorInertia><mechanicalReduction>50</mechanicalReduction></actuator></transmission>", 2.5e-4, 50.0),
    ("ROS 1 without reduction", "<transmission name='t'><type>transmission_interface/SimpleTransmission</type>"
     "<joint name='a'/><actuator name='m'><motorInertia>0.75</motorInertia></actuator></transmission>", 0.75, 1.0),
    ("pre-Hydro", "<transmission name='t' type='pr2_mechanism_model/SimpleTransmission'><actuator name='m'>"
     "<motorInertia>1e-3</motorInertia></actuator><joint name='a'/><mechanicalReduction>-20</mechanicalReduction>"
     "</transmission>", 1e-3, -20.0),
    ("ros2_control", "<ros2_control name='hw' type='system'><hardware><plugin>mock_components/GenericSystem"
     "</plugin></hardware><transmission name='t'><plugin>transmission_interface/SimpleTransmission</plugin>"
     "<actuator name='m' role='actuator1'/><joint name='a' role='joint1'><mechanical_reduction>120"
     "</mechanical_reduction></joint><param name='motor_inertia'>3e-5</param></transmission></ros2_control>",
     3e-5, 120.0),
    ("ros2_control under robot", "<transmission name='t'><plugin>transmission_interface/SimpleTransmission"
     "</plugin><actuator name='m' role='actuator1'/><joint name='a' role='joint1'><mechanical_reduction>9"
     "</mechanical_reduction></joint><param name='motor_inertia'>4.5e-6</param></transmission>", 4.5e-6, 9.0),
    ("Drake", "<transmission name='t'><type>SimpleTransmission</type><joint name='a'/><actuator name='m'>"
     "<drake:rotor_inertia value='1.2e-4'/><drake:gear_ratio value='160'/><mechanicalReduction>1"
     "</mechanicalReduction></actuator></transmission>", 1.2e-4, 160.0),
    ("Drake without gear ratio", "<transmission name='t'><type>SimpleTransmission</type><joint name='a'/>"
     "<actuator name='m'><drake:rotor_inertia value='0.5'/><mechanicalReduction>10</mechanicalReduction>"
     "</actuator></transmission>", 0.5, 1.0),
]


@pytest.mark.parametrize("form, xml, inertia, reduction", TRANSMISSIONS, ids=[t[0] for t in TRANSMISSIONS])
def test_transmission_motor_inertia_gives_armature(form, xml, inertia, reduction, tmp_path):
    urdf = chain(*ARM, extra=xml, header=DRAKE if "drake:" in xml else "")
    robot = rd.load_urdf(urdf)
    np.testing.assert_array_equal(robot.armature, [inertia * reduction**2, 0.0, 0.0])
    path = tmp_path / "r.urdf"
    path.write_text(urdf)
    assert not pinocchio_drives(robot, path)[0].any()       # Pinocchio reads no transmission


def test_transmissions_without_motor_inertia_are_not_read():
    """As the published files: reductions, coupled transmissions, even joints the URDF lacks."""
    xml = ("<transmission name='d'><type>transmission_interface/DifferentialTransmission</type>"
           "<joint name='gone1'><mechanicalReduction>2</mechanicalReduction></joint><joint name='gone2'/>"
           "<actuator name='m1'><mechanicalReduction>x</mechanicalReduction></actuator></transmission>"
           "<transmission name='s'><type>transmission_interface/SimpleTransmission</type><joint name='a'/>"
           "<actuator name='m'><mechanicalReduction>50</mechanicalReduction></actuator></transmission>")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = rd.load_urdf(chain(*ARM, extra=xml))
    assert not robot.armature.any()


@pytest.mark.parametrize("xml, message", [
    ("<transmission name='d'><type>transmission_interface/DifferentialTransmission</type><joint name='a'/>"
     "<joint name='b'/><actuator name='m1'><motorInertia>1</motorInertia></actuator><actuator name='m2'/>"
     "</transmission>", r"transmission 'd' \(type 'transmission_interface/DifferentialTransmission', joints 'a', "
                        r"'b'\) gives a motor inertia, but only a SimpleTransmission"),
    ("<transmission name='h'><type>hey5_transmissions/Hey5Reducer</type><joint name='a'/><actuator name='m'>"
     "<motorInertia>1</motorInertia></actuator></transmission>", "transmission 'h' .type 'hey5_transmissions"),
    ("<transmission name='f'><type>SimpleTransmission</type><joint name='fx'/><actuator name='m'>"
     "<motorInertia>1</motorInertia></actuator></transmission>", "transmission 'f' gives a motor inertia to the "
                                                                 "fixed joint 'fx': dropped"),
], ids=["differential", "custom type", "fixed joint"])
def test_a_motor_inertia_that_cannot_be_read_warns_by_name(xml, message):
    joints = [*ARM, ("fx", "fixed", "")]
    with pytest.warns(URDFWarning, match=message):
        robot = rd.load_urdf(chain(*joints, extra=xml))
    assert not robot.armature.any()


def test_a_mimic_joints_motor_inertia_is_dropped_with_a_warning():
    joints = [ARM[0], ("m", "revolute", '<mimic joint="a" multiplier="2"/><dynamics friction="0.5"/>')]
    xml = ("<transmission name='t'><type>SimpleTransmission</type><joint name='m'/><actuator name='x'>"
           "<motorInertia>1</motorInertia><mechanicalReduction>3</mechanicalReduction></actuator></transmission>")
    assert load(chain(*joints, extra=xml)).armature.tolist() == [0.0, 9.0]      # without mimic: m's coordinate
    with pytest.warns(URDFWarning, match=r"joint 'm': armature 9, friction 0.5 dropped: a mimic joint .*"
                                         r"master 'a' would take multiplier\^2"):
        robot = rd.load_urdf(chain(*joints, extra=xml), mimic=True)
    assert robot.armature.tolist() == robot.friction.tolist() == [0.0]


@pytest.mark.parametrize("joints, extra, message", [
    ([("a", "revolute", '<dynamics damping="-0.1"/>')], "", r"joint 'a': <dynamics damping=\"-0.1\"> is negative"),
    ([("a", "revolute", '<dynamics friction="1,5"/>')], "", r"joint 'a': <dynamics friction=\"1,5\"> is not a"),
    ([("a", "revolute", '<dynamics damping="1e13"/>')], "", r"joint 'a': .* beyond"),
    (ARM, "<transmission name='t'><type>SimpleTransmission</type><joint name='z'/><actuator name='m'>"
          "<motorInertia>1</motorInertia></actuator></transmission>",
     "transmission 't' gives a motor inertia to joint 'z', which the URDF does not have"),
    (ARM, "<transmission name='t'><type>SimpleTransmission</type><joint name='a'/><actuator name='m'>"
          "<motorInertia>-1</motorInertia></actuator></transmission>", "transmission 't': the motor inertia "
                                                                       "<motorInertia> -1 is negative"),
    (ARM, "<transmission name='t'><type>SimpleTransmission</type><joint name='a'/><actuator name='m'>"
          "<motorInertia>1 kg</motorInertia></actuator></transmission>", "transmission 't': <motorInertia>1 kg"),
    (ARM, "<transmission name='t'><type>SimpleTransmission</type><joint name='a'/><actuator name='m'>"
          "<motorInertia>1</motorInertia><drake:rotor_inertia value='1'/></actuator></transmission>",
     r"transmission 't' gives 2 motor inertias \(<motorInertia>, <drake:rotor_inertia>\)"),
    (ARM, "<transmission name='t'><type>SimpleTransmission</type><joint name='a'/><actuator name='m'>"
          "<drake:rotor_inertia/></actuator></transmission>", "transmission 't': <drake:rotor_inertia> has no value"),
    (ARM, "".join(f"<transmission name='{t}'><type>SimpleTransmission</type><joint name='a'/><actuator name='m'>"
                  f"<motorInertia>1</motorInertia></actuator></transmission>" for t in "tu"),
     "joint 'a' has motor inertias in two transmissions, 't' and 'u'"),
], ids=["negative damping", "bad friction", "huge damping", "unknown joint", "negative inertia", "bad inertia",
        "two inertias", "no value", "two transmissions"])
def test_bad_drives_in_a_urdf_are_refused_by_name(joints, extra, message):
    with pytest.raises(URDFError, match=message):
        rd.load_urdf(chain(*joints, extra=extra, header=DRAKE))


def test_planar_and_floating_joints_take_no_urdf_drives_as_in_pinocchio(tmp_path):
    joints = [("p", "planar", '<dynamics damping="0.5" friction="0.25"/>'),
              ("f", "floating", '<dynamics damping="2"/>'), ("c", "continuous", '<dynamics damping="0.125"/>')]
    path = tmp_path / "r.urdf"
    path.write_text(chain(*joints))
    with pytest.warns(URDFWarning) as caught:
        robot = rd.load_urdf(path)
    assert [str(w.message) for w in caught] == [
        "joint 'p': damping 0.5, friction 0.25 dropped: a planar joint takes no drives from a URDF (Pinocchio reads "
        "none either)", "joint 'f': damping 2 dropped: a floating joint takes no drives from a URDF (Pinocchio reads "
                        "none either)"]
    assert_drives_equal(robot, pinocchio_drives(robot, path))
    assert robot.damping[-1] == 0.125


# ---------------------------------------------------------------------------------------- drives files

@pytest.fixture(scope="module")
def panda():
    return load(erd_path("panda.urdf"))


def test_a_drives_file_overrides_the_urdf_field_by_field(panda, tmp_path):
    path = tmp_path / "drives.yaml"
    path.write_text("# drives\njoints:\n  panda_joint1: {friction: 0.8}\n"
                    "  panda_joint2: {motor_inertia: 1.2e-4, reduction: 100, damping: '1e-3'}\n"
                    "  panda_finger_joint2: {armature: 0}\n")
    robot = load(erd_path("panda.urdf"), drives=path)
    names = robot.coordinate_names
    expected = {name: [panda.armature[i], panda.damping[i], panda.friction[i]] for i, name in enumerate(names)}
    expected["panda_joint1"][2] = 0.8
    expected["panda_joint2"][:2] = [1.2e-4 * 100**2, 0.001]
    assert {name: [a, d, f] for name, a, d, f in zip(names, *ours(robot))} == expected
    assert panda.damping.any() and robot.damping[0] == panda.damping[0]          # the URDF's, kept
    values = read_drives({"joints": {"panda_joint1": {"friction": 0.8}}}, panda)    # a mapping reads the same
    assert values["friction"][0] == 0.8 and values["damping"].tolist() == panda.damping.tolist()


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_a_drives_file_round_trips_exactly(floating_base, tmp_path, rng):
    robot = load(erd_path("tiago_no_hand.urdf"), floating_base=floating_base)
    fields = {name: rng.random(robot.nv) * 10.0 ** rng.integers(-8, 3, robot.nv)     # numbers of every size
              for name in ("armature", "damping", "friction")}
    varied = robot.with_drives(**fields)
    path = tmp_path / "drives.yaml"
    write_drives(varied, path)
    assert path.read_text().startswith("# robot_dynamics drives")
    back = read_drives(path, robot)
    for name, value in fields.items():
        np.testing.assert_array_equal(back[name], value, err_msg=name)
    assert_drives_equal(load(erd_path("tiago_no_hand.urdf"), floating_base=floating_base, drives=path),
                        ours(varied))


def test_a_planar_joints_coordinates_have_rows_of_their_own(tmp_path):
    robot = load(chain(("p", "planar", ""), ARM[0]))
    drives = {"joints": {"p[2]": {"damping": 0.5}, "a": {"armature": 1}}}
    assert load(chain(("p", "planar", ""), ARM[0]), drives=drives).damping.tolist() == [0, 0, 0.5, 0]
    with pytest.raises(ValueError, match=r"joint 'p': a planar joint has 3 coordinates: name them 'p\[0\]'"):
        read_drives({"joints": {"p": {"damping": 0.5}}}, robot)


@pytest.mark.parametrize("text, message", [
    ("joints:\n  nope: {damping: 1}\n", "joint 'nope': robot 'panda' has no such coordinate"),
    ("joints:\n  panda_hand_joint: {damping: 1}\n", "joint 'panda_hand_joint': .* a fixed joint has none"),
    ("joints:\n  panda_joint1: {dampnig: 1}\n", "joint 'panda_joint1': unknown key 'dampnig'"),
    ("joints:\n  panda_joint1: {damping: -1}\n", "joint 'panda_joint1', key 'damping': -1.0 is negative"),
    ("joints:\n  panda_joint1: {friction: .nan}\n", "joint 'panda_joint1', key 'friction': expected a finite"),
    ("joints:\n  panda_joint1: {friction: yes}\n", "key 'friction': expected a finite number, got True"),
    ("joints:\n  panda_joint1: {armature: 1 kg}\n", "key 'armature': expected a finite number, got '1 kg'"),
    ("joints:\n  panda_joint1: {damping: 1e61}\n", "key 'damping': 1e.61 is beyond 1e.60"),
    ("joints:\n  panda_joint1: {motor_inertia: 1}\n", "joint 'panda_joint1': key 'motor_inertia' needs "
                                                      "'reduction'"),
    ("joints:\n  panda_joint1: {reduction: 3}\n", "key 'reduction' needs 'motor_inertia'"),
    ("joints:\n  panda_joint1: {motor_inertia: 1, reduction: 0}\n", "key 'reduction': 0 is no reduction"),
    ("joints:\n  panda_joint1: {motor_inertia: 1, reduction: 2, armature: 1}\n", "key 'armature' and keys"),
    ("joints:\n  panda_joint1: {damping: 1}\n  panda_joint1: {friction: 1}\n", "key 'panda_joint1' given twice"),
    ("joints:\n  panda_joint1: 3\n", "joint 'panda_joint1': expected a mapping"),
    ("joint:\n  panda_joint1: {damping: 1}\n", "expected one top-level key 'joints'.* got 'joint'"),
    ("joints: [1, 2]\n", "'joints' must map joint names"),
    ("joints: {a: [}\n", "is not valid YAML"),
], ids=["unknown joint", "fixed joint", "unknown key", "negative", "nan", "bool", "text", "huge", "no reduction",
        "no inertia", "zero reduction", "two armatures", "duplicate joint", "not a mapping", "top-level key",
        "joints a list", "bad YAML"])
def test_a_bad_drives_file_is_refused_naming_file_joint_and_key(text, message, panda, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"(?s)drives file '{re.escape(str(path))}'.*{message}"):
        read_drives(path, panda)


def test_a_mimic_joint_has_no_row_when_it_has_no_coordinate():
    with pytest.raises(ValueError, match="joint 'panda_finger_joint2': a mimic joint .* give its master "
                                         "'panda_finger_joint1'"):
        load(erd_path("panda.urdf"), mimic=True, drives={"joints": {"panda_finger_joint2": {"damping": 1}}})


# ---------------------------------------------------------------------------------------- URDF and ROS out

@pytest.mark.parametrize("name", ["icub.urdf", "tiago_no_hand.urdf"])
def test_written_urdf_dynamics_load_back_and_pinocchio_reads_them(name, tmp_path, rng):
    """icub: every joint has <dynamics damping friction>, replaced in place; tiago_no_hand: some joints have none
    (one is inserted) or lack an attribute (added).  Outside the <dynamics> tags, not a character changes."""
    source = erd_path(name)
    robot = load(source)
    varied = robot.with_drives(damping=rng.random(robot.nv), friction=rng.random(robot.nv) / 3)
    out = tmp_path / name
    write_urdf_dynamics(source, out, varied)
    back = load(out)
    np.testing.assert_array_equal(back.damping, varied.damping)
    np.testing.assert_array_equal(back.friction, varied.friction)
    assert_drives_equal(back, pinocchio_drives(back, out))
    tags = re.compile(r"[ \t]*<dynamics\b[^>]*>\r?\n?")
    assert tags.sub("", out.read_text()) == tags.sub("", source.read_text())


def test_write_urdf_dynamics_keeps_other_attributes_and_indents_new_elements(tmp_path):
    text = ('<robot name="r">\r\n  <link name="l0"/>\r\n  <link name="l1"/>\r\n  <link name="l2"/>\r\n'
            '  <joint name="a" type="revolute">\r\n    <parent link="l0"/>\r\n    <child link="l1"/>\r\n'
            '    <limit lower="-1" upper="1" effort="1" velocity="1"/>\r\n  </joint>\r\n'
            '  <joint name="b" type="continuous">\r\n    <parent link="l1"/>\r\n    <child link="l2"/>\r\n'
            "    <dynamics K='3' damping = '1'  />\r\n  </joint>\r\n</robot>\r\n")
    source = tmp_path / "r.urdf"
    source.write_bytes(text.encode())
    robot = rd.load_urdf(source).with_drives(damping=[0.25, 0.5], friction=[0.0, 1e-7])
    out = tmp_path / "out.urdf"
    write_urdf_dynamics(source, out, robot)
    assert out.read_bytes().decode() == text.replace(
        "    <limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>\r\n",
        "    <limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>\r\n"
        "    <dynamics damping=\"0.25\" friction=\"0.0\"/>\r\n").replace(
        "<dynamics K='3' damping = '1'  />", "<dynamics K='3' damping = '0.5' friction=\"1e-07\"  />")


def test_drives_the_files_cannot_hold_are_refused(tmp_path):
    robot = load(chain(("p", "planar", ""), ARM[0]))
    source = tmp_path / "r.urdf"
    source.write_text(chain(("p", "planar", ""), ARM[0]))
    with pytest.raises(ValueError, match=r"joint 'p' \(planar\) has damping or friction, which a URDF's"):
        write_urdf_dynamics(source, tmp_path / "out.urdf", robot.with_drives(damping=[0, 1, 0, 0]))
    with pytest.raises(ValueError, match="joint 'a': damping .* bound of URDF numbers"):
        write_urdf_dynamics(source, tmp_path / "out.urdf", robot.with_drives(damping=[0, 0, 0, 1e13]))

    class Model:
        def torque(self, v):
            return v

    with pytest.raises(ValueError, match="robot 'r' has a friction model .Model., which .* cannot hold"):
        write_drives(robot.with_drives(model=Model()), tmp_path / "d.yaml")


def test_ros_parameters_list_the_drives_in_coordinate_order(panda, tmp_path):
    parameters = drives_parameters(panda)
    assert parameters == {"drives.joints": panda.coordinate_names, "drives.armature": panda.armature.tolist(),
                          "drives.damping": panda.damping.tolist(), "drives.friction": panda.friction.tolist()}
    path = tmp_path / "params.yaml"
    write_drives_parameters(panda, path)
    section = yaml.safe_load(path.read_text())["/**"]["ros__parameters"]["drives"]
    assert {f"drives.{key}": value for key, value in section.items()} == parameters
