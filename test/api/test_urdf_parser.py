"""Tests of robot_dynamics.urdf: real files, bundled robots, random trees, every refusal, hostile XML, conventions.

Numbers are checked by an independent route: rotations against Rodrigues products, and the parsed kinematics and
inertias against Pinocchio (composite spatial inertia of the whole robot and every joint frame and axis at q = 0).
"""
import re
import warnings
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from oracle import erd_robots_dir, erd_urdfs
from random_urdf import ALL_JOINT_TYPES, random_urdf
from robot_dynamics.urdf import URDFError, URDFWarning, parse_urdf

REPO = Path(__file__).resolve().parents[2]


# {'<package>/<file>.urdf': path} for every URDF of example-robot-data
EXAMPLE_ROBOTS = {f"{p.relative_to(erd_robots_dir()).parts[0]}/{p.name}": p for p in erd_urdfs()}

# ur3.urdf is an empty <robot> (xacro output with everything stripped): it parses as a robot with no links.
EMPTY = {"ur_description/ur3.urdf"}
# Published files with a physically impossible inertia (first offending link): a URDFWarning by default, a
# URDFError with strict_inertia=True.
UNPHYSICAL = {
    "alex_description/alex_psyonic_hands.urdf": "LeftPsyonicAbilityBaseLink",
    "allegro_hand_description/allegro_left_hand.urdf": "link_11.0",
    "allegro_hand_description/allegro_right_hand.urdf": "link_3.0",
    "anymal_b_simple_description/anymal-kinova.urdf": "base",
    "anymal_b_simple_description/anymal.urdf": "base",
    "anymal_c_simple_description/anymal.urdf": "depth_camera_front_camera",
    "b1_description/b1-z1.urdf": "base",
    "b1_description/b1.urdf": "base",
    "go1_description/go1.urdf": "base",
    "hyq_description/hyq_no_sensors.urdf": "base_link",
    "pr2_description/pr2.urdf": "sensor_mount_link",
    "romeo_description/romeo_laas_small.urdf": "LShoulderYaw_link",
    "romeo_description/romeo_small.urdf": "RShoulderYawLink",
    "tiago_description/tiago.urdf": "base_antenna_left_link",
    "tiago_description/tiago_dual.urdf": "base_antenna_left_link",
    "tiago_description/tiago_no_hand.urdf": "base_antenna_left_link",
}

BUNDLED = {"planar_2link": 2, "arm7": 7, "quadruped": 12, "torso_two_arm": 13, "humanoid": 30}  # name: DoF
FLOATING_BASE = ("quadruped", "humanoid")


def robot(*elements: str, name: str = "r") -> str:
    return f'<robot name="{name}">' + "".join(elements) + "</robot>"


def link(name: str, inertial: str = "") -> str:
    return f'<link name="{name}">{inertial}</link>'


def joint(name: str, kind: str, parent: str, child: str, extra: str = "") -> str:
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


def inertial(mass="1", ixx="1", iyy="1", izz="1", ixy="0", ixz="0", iyz="0", origin="") -> str:
    return (f'<inertial>{origin}<mass value="{mass}"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" '
            f'iyz="{iyz}" izz="{izz}"/></inertial>')


def rodrigues(axis, angle) -> np.ndarray:
    """exp(angle * skew(axis)) for a unit axis."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


# ---------------------------------------------------------------------------------------------------- real files

@pytest.mark.parametrize("key", EXAMPLE_ROBOTS, ids=str)
def test_example_robot_data_parses(key):
    path = EXAMPLE_ROBOTS[key]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        description = parse_urdf(path)
    if key in EMPTY:
        assert (description.links, description.joints, description.root) == ({}, [], "")
        return
    assert description.root in description.links
    assert len(description.joints) == len(description.links) - 1
    if key in UNPHYSICAL:
        assert any(f"link '{UNPHYSICAL[key]}': inertia" in str(w.message) for w in caught
                   if issubclass(w.category, URDFWarning))
        with pytest.raises(URDFError, match=f"link '{re.escape(UNPHYSICAL[key])}': inertia"):
            parse_urdf(path, strict_inertia=True)
    else:
        assert not [w for w in caught if issubclass(w.category, URDFWarning)]
        parse_urdf(path, strict_inertia=True)


@pytest.mark.parametrize("key", ["panda_description/panda.urdf", "pr2_description/pr2.urdf",
                                 "talos_data/talos_reduced.urdf", "icub_description/icub.urdf",
                                 "kinova_description/kinova.urdf", "romeo_description/romeo.urdf"])
def test_example_robot_matches_pinocchio(key):
    path = EXAMPLE_ROBOTS[key]
    description = parse_urdf(path)
    assert_matches_pinocchio(description, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()))


def test_real_file_details():
    panda = parse_urdf(EXAMPLE_ROBOTS["panda_description/panda.urdf"])
    finger = next(j for j in panda.joints if j.name == "panda_finger_joint2")
    assert (finger.type, finger.mimic.joint, finger.mimic.multiplier, finger.mimic.offset) == (
        "prismatic", "panda_finger_joint1", 1.0, 0.0)
    ur3 = parse_urdf(EXAMPLE_ROBOTS["ur_description/ur3_robot.urdf"])
    assert ur3.name == "ur3"
    talos = parse_urdf(EXAMPLE_ROBOTS["talos_data/talos_reduced.urdf"])
    gripper = next(j for j in talos.joints if j.name == "gripper_left_inner_double_joint")
    assert gripper.type == "fixed" and gripper.mimic is None  # a fixed joint's <mimic> is vacuous


# -------------------------------------------------------------------------------------------------- bad input

ONE = link("a", inertial())
TWO = ONE + link("b", inertial())
BAD = {
    "no links": (robot(joint("j", "revolute", "a", "b")), "has no <link>, but joints \\('j'"),
    "duplicate link": (robot(ONE, ONE), "duplicate link name 'a'"),
    "link without name": (robot("<link/>"), "<link> on line 1 has no name"),
    "duplicate joint": (robot(TWO, link("c"), joint("j", "fixed", "a", "b"), joint("j", "fixed", "a", "c")),
                        "duplicate joint name 'j'"),
    "joint without name": (robot(TWO, '<joint type="fixed"><parent link="a"/><child link="b"/></joint>'),
                           "<joint> on line 1 has no name"),
    "joint without type": (robot(TWO, '<joint name="j"><parent link="a"/><child link="b"/></joint>'),
                           "joint 'j' has no type"),
    "joint without parent": (robot(TWO, '<joint name="j" type="fixed"><child link="b"/></joint>'),
                             "joint 'j' has no <parent"),
    "joint without child": (robot(TWO, '<joint name="j" type="fixed"><parent link="a"/></joint>'),
                            "joint 'j' has no <child"),
    "unknown parent": (robot(TWO, joint("j", "fixed", "x", "b")), "joint 'j': parent link 'x' does not exist"),
    "unknown child": (robot(TWO, joint("j", "fixed", "a", "x")), "joint 'j': child link 'x' does not exist"),
    "two parents": (robot(TWO, link("c"), joint("j1", "fixed", "a", "c"), joint("j2", "fixed", "b", "c")),
                    "link 'c' has two parents: joints 'j1' and 'j2'"),
    "cycle": (robot(TWO, link("c"), joint("j2", "fixed", "b", "c"), joint("j3", "fixed", "c", "b")),
              "kinematic loop through joints 'j3', 'j2'"),
    "self loop": (robot(ONE, joint("j", "fixed", "a", "a")), "kinematic loop through joints 'j'"),
    "several roots": (robot(TWO, link("c"), joint("j", "fixed", "a", "b")), "several root links .*'a', 'c'"),
    "unknown type": (robot(TWO, joint("j", "spherical", "a", "b")), "joint 'j' has unknown type 'spherical'"),
    "zero axis": (robot(TWO, joint("j", "revolute", "a", "b", '<axis xyz="0 0 0"/>')),
                  "joint 'j': <axis xyz> is the zero vector"),
    "zero planar axis": (robot(TWO, joint("j", "planar", "a", "b", '<axis xyz="0 0 0"/>')), "joint 'j'"),
    "negative mass": (robot(link("a", inertial(mass="-0.1"))), "link 'a': negative mass"),
    "not PSD": (robot(link("a", inertial(ixx="1", iyy="1", izz="1", ixy="2"))),
                "link 'a': inertia is not positive semi-definite"),
    "triangle": (robot(link("a", inertial(ixx="1", iyy="1", izz="2.1"))),
                 r"link 'a': inertia violates the triangle inequality"),
    "triangle, rotated": (robot(link("a", inertial(ixx="1.5", iyy="1.5", izz="0.5", ixy="1.0"))),
                          "link 'a': inertia violates"),
    "nan xyz": (robot(TWO, joint("j", "fixed", "a", "b", '<origin xyz="0 nan 0"/>')),
                "joint 'j': <origin xyz=\"0 nan 0\"> has a non-finite"),
    "inf rpy": (robot(TWO, joint("j", "fixed", "a", "b", '<origin rpy="0 0 inf"/>')),
                "joint 'j': <origin rpy=\"0 0 inf\"> has a non-finite"),
    "overflow rpy": (robot(TWO, joint("j", "fixed", "a", "b", '<origin rpy="0 0 1e999"/>')),
                     "joint 'j': <origin rpy=.*non-finite"),
    "text xyz": (robot(TWO, joint("j", "fixed", "a", "b", '<origin xyz="0 zero 0"/>')),
                 "joint 'j': <origin xyz=\"0 zero 0\"> is not a list of numbers"),
    "short xyz": (robot(TWO, joint("j", "fixed", "a", "b", '<origin xyz="0 0"/>')),
                  "joint 'j': <origin xyz=\"0 0\"> has 2 numbers, expected 3"),
    "nan axis": (robot(TWO, joint("j", "prismatic", "a", "b", '<axis xyz="1 nan 0"/>')),
                 "joint 'j': <axis xyz="),
    "nan mass": (robot(link("a", inertial(mass="nan"))), "link 'a': <mass value=\"nan\"> has a non-finite"),
    "bad mass": (robot(link("a", inertial(mass="1kg"))), "link 'a': <mass value=\"1kg\"> is not"),
    "inf inertia": (robot(link("a", inertial(iyz="-inf"))), "link 'a': <inertia iyz=\"-inf\"> has a non-finite"),
    "nan inertial origin": (robot(link("a", inertial(origin='<origin xyz="nan 0 0"/>'))),
                            "link 'a': <origin xyz=\"nan 0 0\">"),
    "nan multiplier": (robot(TWO, link("c"), joint("m", "revolute", "a", "b"),
                             joint("j", "revolute", "b", "c", '<mimic joint="m" multiplier="nan"/>')),
                       "joint 'j': <mimic multiplier=\"nan\"> has a non-finite"),
    "bad offset": (robot(TWO, link("c"), joint("m", "revolute", "a", "b"),
                         joint("j", "revolute", "b", "c", '<mimic joint="m" offset="x"/>')),
                   "joint 'j': <mimic offset=\"x\"> is not"),
    "mimic without joint": (robot(TWO, joint("j", "revolute", "a", "b", "<mimic/>")),
                            "joint 'j': <mimic> has no joint"),
    "mimic fixed master": (robot(TWO, link("c"), joint("m", "fixed", "a", "b"),
                                 joint("j", "revolute", "b", "c", '<mimic joint="m"/>')),
                           "joint 'j' mimics joint 'm' of type 'fixed'"),
    "mimic planar master": (robot(TWO, link("c"), joint("m", "planar", "a", "b"),
                                  joint("j", "prismatic", "b", "c", '<mimic joint="m"/>')),
                            "joint 'j' mimics joint 'm' of type 'planar'"),
    "floating mimic": (robot(TWO, link("c"), joint("m", "revolute", "a", "b"),
                             joint("j", "floating", "b", "c", '<mimic joint="m"/>')),
                       "joint 'j' of type 'floating' has a <mimic>"),
    "mimic chain": (robot(TWO, link("c"), link("d"), joint("m", "revolute", "a", "b"),
                          joint("j1", "revolute", "b", "c", '<mimic joint="m"/>'),
                          joint("j2", "revolute", "c", "d", '<mimic joint="j1"/>')),
                    "joint 'j2' mimics joint 'j1', which itself mimics 'm'"),
    "self mimic": (robot(TWO, joint("j", "revolute", "a", "b", '<mimic joint="j"/>')),
                   "joint 'j' mimics joint 'j', which itself mimics 'j'"),
    "malformed XML": ('<robot name="r"><link name="a"></robot>', "malformed XML: .*mismatch"),
    "root not robot": ('<model name="r"><link name="a"/></model>', "the root element is <model>"),
}


@pytest.mark.parametrize("case", BAD, ids=str)
def test_bad_urdf_is_refused_naming_the_culprit(case):
    xml, culprit = BAD[case]
    inertia_case = "PSD" in case or "triangle" in case       # refused when strict, a URDFWarning otherwise
    with pytest.raises(URDFError, match=culprit) as refusal:
        parse_urdf(xml, strict_inertia=inertia_case)
    assert isinstance(refusal.value, ValueError)


def test_missing_file_names_the_path(tmp_path):
    missing = tmp_path / "nowhere.urdf"
    with pytest.raises(URDFError, match=re.escape(str(missing))):
        parse_urdf(missing)


def test_unphysical_inertia_warns_or_is_refused_when_strict():
    bad = robot(link("a", inertial(ixx="1", iyy="1", izz="3")))
    with pytest.warns(URDFWarning, match="link 'a': inertia violates the triangle inequality"):
        description = parse_urdf(bad)
    np.testing.assert_array_equal(description.links["a"].inertial.inertia, np.diag([1.0, 1.0, 3.0]))
    with pytest.raises(URDFError, match="link 'a': inertia violates the triangle inequality"):
        parse_urdf(bad, strict_inertia=True)
    with pytest.raises(URDFError, match="link 'a': inertia is not positive semi-definite"):
        parse_urdf(robot(link("a", inertial(ixx="1", iyy="-0.5", izz="1"))), strict_inertia=True)
    with pytest.raises(URDFError, match="negative mass"):
        parse_urdf(robot(link("a", inertial(mass="-1"))))


def test_inertia_tolerance_is_relative_to_scale():
    """Rounding in the 6th digit passes; a violation of 1e-4 of the trace does not; numerical-zero noise passes."""
    assert parse_urdf(robot(link("a", inertial(ixx="0.0833333", iyy="0.0833334", izz="0.166667"))),
                      strict_inertia=True)
    with pytest.raises(URDFError, match="triangle"):
        parse_urdf(robot(link("a", inertial(ixx="1e-3", iyy="1e-3", izz="2.0004e-3"))), strict_inertia=True)
    assert parse_urdf(robot(link("a", inertial(mass="1.264", ixx="1.10961e-18", ixy="5.42101e-20",
                                               ixz="-5.42101e-20", iyy="0", iyz="8.47033e-22", izz="0"))),
                      strict_inertia=True)


# ------------------------------------------------------------------------------------------------ hostile XML

BILLION_LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE robot [\n  <!ENTITY lol0 "lol">\n'
                  + "".join(f'  <!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">\n' for i in range(1, 10))
                  + ']>\n<robot name="r"><link name="&lol9;">&lol9;</link></robot>')
HOSTILE = {
    "billion laughs": BILLION_LAUGHS,
    "external file entity": ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                             '<robot name="&x;"><link name="a">&x;</link></robot>'),
    "external http entity": ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "http://192.0.2.1/x">]>'
                             '<robot name="r"><link name="a">&x;</link></robot>'),
    "parameter entity": ('<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY % p SYSTEM "http://192.0.2.1/p.dtd"> %p;]>'
                         '<robot name="r"><link name="a"/></robot>'),
}


@pytest.mark.parametrize("case", HOSTILE, ids=str)
def test_entity_declarations_are_refused_fast(case):
    start = time.perf_counter()
    with pytest.raises(URDFError, match="entity declarations are not allowed"):
        parse_urdf(HOSTILE[case])
    assert time.perf_counter() - start < 1.0


def test_entity_declaration_in_utf16_is_refused(tmp_path):
    """The byte scan cannot see UTF-16; the check of the parsed DTD does."""
    path = tmp_path / "utf16.urdf"
    path.write_bytes('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE robot [<!ENTITY x "y">]>'
                     '<robot><link name="a"/></robot>'.encode("utf-16"))
    with pytest.raises(URDFError, match="entity declarations are not allowed"):
        parse_urdf(path)


def test_external_dtd_is_not_fetched():
    xml = '<!DOCTYPE robot SYSTEM "http://192.0.2.1/robot.dtd"><robot name="r"><link name="a"/></robot>'
    start = time.perf_counter()
    assert parse_urdf(xml).root == "a"
    assert time.perf_counter() - start < 1.0


def test_an_attribute_of_a_million_numbers_is_refused_by_its_count_before_it_is_split():
    """1.2 M numbers where 3 belong: refused naming the element, Python allocating no more than the attribute's own
    text on the way, which reading it as a str takes (issue 26: the value was split and converted first: ~1 GB for
    this 4.8 MB and 2 s)."""
    import tracemalloc

    numbers = " ".join(["1.0"] * 1_200_000)
    xml = (f'<robot name="r"><link name="a"><inertial><origin xyz="{numbers}"/><mass value="1"/>'
           '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')
    tracemalloc.start()
    try:
        with pytest.raises(URDFError, match=r"link 'a': <origin xyz=\"1.0 1.0 .*\.\.\.\"> has more than 3 numbers"):
            parse_urdf(xml)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * len(numbers), peak


# ---------------------------------------------------------------------------------------------------- numbers

def test_rpy_is_fixed_axis_x_then_y_then_z():
    r, p, y = 0.3, -1.1, 2.5
    xml = robot(TWO, joint("j", "fixed", "a", "b", f'<origin xyz="1 -2 3.5" rpy="{r} {p} {y}"/>'))
    j = parse_urdf(xml).joints[0]
    ex, ey, ez = np.eye(3)
    np.testing.assert_allclose(j.rotation, rodrigues(ez, y) @ rodrigues(ey, p) @ rodrigues(ex, r), atol=1e-15)
    np.testing.assert_array_equal(j.translation, [1.0, -2.0, 3.5])


def test_inertial_origin_rotates_inertia_into_link_frame():
    rpy = (0.4, 0.2, -0.7)
    I = np.diag([0.1, 0.2, 0.25])
    xml = robot(link("a", inertial(mass="2.5", ixx="0.1", iyy="0.2", izz="0.25",
                                   origin=f'<origin xyz="0.1 0.2 -0.3" rpy="{" ".join(map(str, rpy))}"/>')))
    body = parse_urdf(xml).links["a"].inertial
    ex, ey, ez = np.eye(3)
    R = rodrigues(ez, rpy[2]) @ rodrigues(ey, rpy[1]) @ rodrigues(ex, rpy[0])
    np.testing.assert_allclose(body.inertia, R @ I @ R.T, atol=1e-15)
    np.testing.assert_array_equal(body.com, [0.1, 0.2, -0.3])
    assert body.mass == 2.5


@pytest.mark.parametrize("kind", ["revolute", "continuous", "prismatic", "planar"])
def test_axis_is_normalized(kind):
    xml = robot(TWO, joint("j", kind, "a", "b", '<axis xyz="0 3 -4"/>'))
    np.testing.assert_allclose(parse_urdf(xml).joints[0].axis, [0, 0.6, -0.8], atol=1e-16)


def test_defaults():
    xml = robot(link("a", "<inertial/>"), link("b", '<inertial><mass value="2"/><inertia ixx="1" iyy="1"/></inertial>'),
                link("c"), link("d"),
                joint("j1", "revolute", "a", "b"),
                joint("j2", "continuous", "a", "c", '<axis/><mimic joint="j1"/>'),
                joint("j3", "fixed", "c", "d", '<axis xyz="0 0 0"/><mimic joint="j1"/>'), name="")
    xml = xml.replace('<robot name="">', "<robot>")
    d = parse_urdf(xml)
    assert d.name == "" and d.root == "a" and list(d.links) == ["a", "b", "c", "d"]
    assert d.links["a"].inertial.mass == 0 and not d.links["a"].inertial.inertia.any()
    assert d.links["b"].inertial.mass == 2
    np.testing.assert_array_equal(d.links["b"].inertial.inertia, np.diag([1.0, 1.0, 0]))
    assert d.links["c"].inertial is None
    j1, j2, j3 = d.joints
    np.testing.assert_array_equal(j1.rotation, np.eye(3))
    np.testing.assert_array_equal(j1.translation, np.zeros(3))
    np.testing.assert_array_equal(j1.axis, [1.0, 0, 0])
    np.testing.assert_array_equal(j2.axis, [1.0, 0, 0])
    assert (j2.mimic.joint, j2.mimic.multiplier, j2.mimic.offset) == ("j1", 1.0, 0.0)
    assert j3.mimic is None  # the zero axis and the mimic of a fixed joint are not read
    assert [j.name for j in d.children("a")] == ["j1", "j2"] and d.children("d") == []


def test_unused_elements_are_ignored():
    xml = robot('<material name="m"><color rgba="1 0 0 1"/></material>',
                link("a", inertial() + '<visual><geometry><mesh filename="package://x.dae"/></geometry></visual>'),
                '<gazebo reference="a"><sensor/></gazebo><transmission name="t"/>',
                '<link name="b" unknown="1"><collision><geometry><box size="1 1 1"/></geometry></collision></link>',
                joint("j", "revolute", "a", "b", '<limit lower="-1" upper="1" effort="1" velocity="1"/>'))
    assert list(parse_urdf(xml).links) == ["a", "b"]


def test_source_forms(tmp_path):
    xml = "\n  " + robot(TWO, joint("j", "fixed", "a", "b"), name="forms")
    path = tmp_path / "forms.urdf"
    path.write_text(xml)
    for source in (xml, xml.encode(), str(path), path, bytes(path)):
        assert parse_urdf(source).name == "forms"


def test_arrays_are_read_only():
    d = parse_urdf(robot(TWO, joint("j", "revolute", "a", "b")))
    for array in (d.joints[0].rotation, d.joints[0].axis, d.links["a"].inertial.inertia):
        with pytest.raises(ValueError):
            array[0] = 1.0


# ---------------------------------------------------------------------------------------------- bundled robots

@pytest.mark.parametrize("name", BUNDLED, ids=str)
def test_bundled_robot_parses_and_matches_pinocchio(name):
    path = REPO / "urdf" / f"{name}.urdf"
    description = parse_urdf(path)
    assert description.name == name
    assert sum(j.type != "fixed" for j in description.joints) == BUNDLED[name]
    assert pin.buildModelFromUrdf(str(path)).nv == BUNDLED[name]
    floating = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert floating.nv == BUNDLED[name] + 6
    assert_matches_pinocchio(description, floating)


def test_bundled_robot_masses():
    mass = {name: sum(body.inertial.mass for body in parse_urdf(REPO / "urdf" / f"{name}.urdf").links.values()
                      if body.inertial is not None) for name in BUNDLED}
    assert 40 <= mass["humanoid"] <= 70
    assert 15 <= mass["arm7"] <= 25
    assert mass["planar_2link"] == pytest.approx(4.0)  # base 2 kg + two 1 kg links


# ------------------------------------------------------------------------------------------------ random trees

CONFIGS = {
    "all types": dict(),
    "chain": dict(branching=False),
    "mimic": dict(n_links=12, mimic=True),
    "1-DoF and fixed with mimic": dict(n_links=15, joint_types=("revolute", "continuous", "prismatic", "fixed"),
                                       mimic=True),
}


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_random_urdf_is_deterministic_and_parses(config):
    kwargs = CONFIGS[config]
    texts = [random_urdf(seed, **kwargs) for seed in range(60)]
    assert texts == [random_urdf(seed, **kwargs) for seed in range(60)]
    assert len(set(texts)) == len(texts)
    descriptions = [parse_urdf(text) for text in texts]
    n_links = kwargs.get("n_links", 8)
    assert all(len(d.links) == n_links and d.links[d.root].inertial is not None for d in descriptions)
    if kwargs.get("mimic"):
        assert sum(j.mimic is not None for d in descriptions for j in d.joints) > 60


def test_random_urdf_covers_every_feature():
    descriptions = [parse_urdf(random_urdf(seed, mimic=True)) for seed in range(40)]
    joints = [j for d in descriptions for j in d.joints]
    assert {j.type for j in joints} == set(ALL_JOINT_TYPES)
    assert any(body.inertial is None for d in descriptions for body in d.links.values())
    assert any(j.mimic is not None and j.mimic.offset != 0 for j in joints)
    fixed_children = {(id(d), j.child) for d in descriptions for j in d.joints if j.type == "fixed"}
    assert any(j.type == "fixed" and (id(d), j.parent) in fixed_children for d in descriptions for j in d.joints)
    leaves = [body for d in descriptions for body in d.links.values() if not d.children(body.name)]
    assert all(body.inertial is not None and body.inertial.mass >= 0.2 for body in leaves)
    axes = [j.axis for j in joints if j.type in ("revolute", "continuous", "prismatic")]
    np.testing.assert_allclose(np.linalg.norm(axes, axis=1), 1.0, atol=1e-15)


@pytest.mark.parametrize("seed", range(12))
def test_random_urdf_matches_pinocchio(seed):
    xml = random_urdf(seed, n_links=10, mimic=True)
    pin.buildModelFromXML(xml, mimic=True)
    assert_matches_pinocchio(parse_urdf(xml), pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()))


# --------------------------------------------------------------------------------------- Pinocchio cross-check

def assert_matches_pinocchio(description, model):
    """At q = 0 (Pinocchio's neutral), the placement and axis of every moving joint, and the composite spatial
    inertia of the whole robot (the free-flyer block of the mass matrix), agree with `description`.

    `model` is built with a free-flyer root joint, so that M[:6, :6] is the robot's composite inertia in the root
    link frame: [[m 1, -m [c]x], [m [c]x, I_O]] with c the CoM and I_O the rotational inertia about the origin.
    """
    pose = {description.root: (np.eye(3), np.zeros(3))}  # link frame in the root frame at q = 0
    stack = [description.root]
    while stack:
        R, p = pose[stack[-1]]
        for j in description.children(stack.pop()):
            pose[j.child] = (R @ j.rotation, p + R @ j.translation)
            stack.append(j.child)

    data = model.createData()
    q = pin.neutral(model)
    M = np.triu(pin.crba(model, data, q))  # crba fills the upper triangle
    pin.forwardKinematics(model, data, q)
    pin.computeJointJacobians(model, data, q)
    for j in description.joints:
        if j.type == "fixed":
            continue
        jid = model.getJointId(j.name)
        R, p = pose[j.child]
        np.testing.assert_allclose(data.oMi[jid].rotation, R, atol=1e-12)
        np.testing.assert_allclose(data.oMi[jid].translation, p, atol=1e-12)
        if j.type in ("revolute", "continuous", "prismatic"):
            S = pin.getJointJacobian(model, data, jid, pin.LOCAL)[:, model.joints[jid].idx_v]
            expected = np.r_[j.axis, 0, 0, 0] if j.type == "prismatic" else np.r_[0, 0, 0, j.axis]
            np.testing.assert_allclose(S, expected, atol=1e-12)

    mass, first_moment, I_O = 0.0, np.zeros(3), np.zeros((3, 3))
    for name, body in description.links.items():
        if body.inertial is None:
            continue
        R, p = pose[name]
        m, c = body.inertial.mass, p + R @ body.inertial.com
        mass, first_moment = mass + m, first_moment + m * c
        I_O += R @ body.inertial.inertia @ R.T + m * (c @ c * np.eye(3) - np.outer(c, c))
    np.testing.assert_allclose(M[0, 0], mass, rtol=1e-12)
    np.testing.assert_allclose(M[:3, 3:6], -pin.skew(first_moment), atol=1e-12 * max(1.0, mass))
    np.testing.assert_allclose(M[3:6, 3:6] + np.triu(M[3:6, 3:6], 1).T, I_O, atol=1e-12 * max(1.0, np.trace(I_O)))
