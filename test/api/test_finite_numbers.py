"""Issue 13 (reliability), item 1: no silent non-finite number.  Numbers of a description beyond the bounds
are refused naming their element; a model at the bounds overflows nothing; a state whose results overflow
float64 is a ValueError, for one state and in a batch alike; quaternions of any scale are normalized; every
quantity at an edge state gives the same numbers or the same error alone and in a batch.

Each test reproduces a failure of the issue: a description or a state that used to give NaN.
"""
import re

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.configuration import ConfigurationSpace
from oracle import erd_path
from reliability_helpers import ROOT, ROWS, arguments, call, joint, link, robot_xml
from robot_dynamics.calls.compiling import SAFE_MAGNITUDE
from robot_dynamics.model import MAX_PARAMETER
from robot_dynamics.urdf import MAX_MAGNITUDE, URDFError


HUGE = {   # the descriptions that loaded and gave NaN, each refused naming its element
    "mass 1e308": (robot_xml(link("a"), link("b", mass="1e308"), joint("j", "a", "b")), "link 'b': <mass value"),
    "inertia 1e200": (robot_xml(link("a"), link("b", ixx="1e200"), joint("j", "a", "b")), "link 'b': <inertia ixx"),
    "joint origin 1e200": (robot_xml(link("a"), link("b"), joint("j", "a", "b", xyz="0 0 1e200")),
                           "joint 'j': <origin xyz"),
    "inertial origin 1e200": (robot_xml(link("a"), link("b", xyz="1e200 0 0"), joint("j", "a", "b")),
                              "link 'b': <origin xyz"),
    "mimic multiplier 1e300": (robot_xml(link("a"), link("b"), link("c"), joint("m", "a", "b"),
                                         joint("j", "b", "c", extra='<mimic joint="m" multiplier="1e300"/>')),
                               "joint 'j': <mimic multiplier"),
    "just beyond the bound": (robot_xml(link("a"), link("b", mass=repr(MAX_MAGNITUDE * 1.000001)),
                                        joint("j", "a", "b")), "link 'b': <mass"),
}


@pytest.mark.parametrize("case", HUGE, ids=str)
def test_huge_numbers_are_refused_naming_the_element(case):
    xml, culprit = HUGE[case]
    with pytest.raises(URDFError, match=re.escape(culprit) + r".* beyond \+-1e\+12"):
        rd.load_urdf(xml)


def test_real_urdf_with_one_huge_origin_is_refused():
    """The issue's human.urdf with one <origin xyz="0 0.25 1e308">: refused, naming the element."""
    text = erd_path("human.urdf").read_text()
    first = re.search(r'<origin xyz="[^"]*"', text)
    mutated = text[:first.start()] + '<origin xyz="0 0.25 1e308"' + text[first.end():]
    rd.load_urdf(text)
    with pytest.raises(URDFError, match=r'<origin xyz="0 0.25 1e308"> has a number beyond'):
        rd.load_urdf(mutated)


def test_numbers_at_the_bound_load():
    xml = robot_xml(link("a"), link("b", mass=repr(MAX_MAGNITUDE), xyz=f"{-MAX_MAGNITUDE!r} 0 0"),
                    joint("j", "a", "b", xyz=f"0 0 {MAX_MAGNITUDE!r}"))
    assert rd.load_urdf(xml).total_mass == MAX_MAGNITUDE


def test_gravity_and_parameters_beyond_their_bounds_are_refused():
    xml = robot_xml(link("a"), link("b"), joint("j", "a", "b"))
    with pytest.raises(ValueError, match="gravity must be 3 finite numbers of magnitude at most 1e\\+12"):
        rd.load_urdf(xml, gravity=(0, 0, -1e13))
    robot = rd.load_urdf(xml)
    with pytest.raises(ValueError, match="gravity must be"):
        robot.with_gravity([1e300, 0, 0])
    pi = robot.parameters.copy()
    pi[4] = 2 * MAX_PARAMETER
    with pytest.raises(ValueError, match=r"pi\[4\] = 2e\+60 \(body 'b'\) is not a finite number of magnitude"):
        robot.with_parameters(pi)


def bounds_urdf(n, seed, mimic):
    """A tree of n links with every joint type whose every number is at urdf.MAX_MAGNITUDE: masses, inertias,
    joint and CoM origins, and (mimic) multipliers and offsets of some joints."""
    rng = np.random.default_rng(seed)
    big = repr(MAX_MAGNITUDE)
    kinds = ["revolute", "prismatic", "continuous", "planar", "floating", "fixed", "prismatic", "revolute"]
    parts, used = [], {}

    def numbers(values):
        return " ".join(repr(float(x)) for x in values)

    for k in range(n):
        parts.append(f'<link name="l{k}"><inertial><origin xyz="{numbers(rng.choice([-1, 1], 3) * MAX_MAGNITUDE)}" '
                     f'rpy="{numbers(rng.uniform(-3, 3, 3))}"/><mass value="{big}"/><inertia ixx="{big}" '
                     f'iyy="{big}" izz="{big}" ixy="0" ixz="0" iyz="0"/></inertial></link>')
        if k == 0:
            continue
        kind = kinds[k % len(kinds)]
        extra = ""
        masters = [m for m, t in used.items() if t == kind and kind in ("revolute", "prismatic")]
        if mimic and masters and k % 3 == 0:
            extra = f'<mimic joint="j{masters[-1]}" multiplier="{big}" offset="{big}"/>'
        else:
            used[k] = kind
        parent = k - 1 if k % 5 else int(rng.integers(0, k))
        parts.append(f'<joint name="j{k}" type="{kind}"><parent link="l{parent}"/><child link="l{k}"/>'
                     f'<origin xyz="{numbers(rng.choice([-1, 1], 3) * MAX_MAGNITUDE)}" '
                     f'rpy="{numbers(rng.uniform(-3, 3, 3))}"/><axis xyz="{numbers(rng.normal(size=3))}"/>{extra}'
                     f'</joint>')
    return robot_xml(*parts)


@pytest.mark.parametrize("mimic", [False, True], ids=["independent", "coupled"])
def test_a_model_at_the_bounds_overflows_nothing(mimic):
    """generated.checked_kernels checks the bounded outputs of the registry for overflow only when a state entry
    exceeds SAFE_MAGNITUDE.  That is sound: at the bounds of every URDF number (and of with_parameters' pi), with
    every state entry at +-SAFE_MAGNITUDE, every such output is finite -- with a margin of more than 1e100 below
    float64's 1.8e308 (the largest is ~1e51 here, ~1e140 with pi at MAX_PARAMETER and mimic multipliers of 1e12),
    which polynomial growth to MAX_LINKS bodies does not use up.  Unbounded outputs (M^-1, ...) are checked at
    every call: finite, or a ValueError (at these scales the ABA recursions may find M numerically singular)."""
    base = rd.load_urdf(bounds_urdf(26, 1, mimic), floating_base=True, mimic=mimic)
    rng = np.random.default_rng(2)
    for robot in (base, base.with_parameters(rng.uniform(-1, 1, 10 * base.nbodies) * MAX_PARAMETER)):
        q = rng.choice([-1.0, 1.0], robot.nq) * SAFE_MAGNITUDE
        v = rng.choice([-1.0, 1.0], robot.nv) * SAFE_MAGNITUDE
        largest = 0.0
        for name, row in ROWS.items():
            try:
                results = call(robot, name, arguments(robot, name, q, v))
            except ValueError as error:
                assert ("not cover" in str(error) or row.unbounded and re.search("singular|overflows", str(error))
                        ), (name, error)
                continue
            for (output, _), x in zip(row.outputs, results):
                assert np.all(np.isfinite(x)), (name, output)
                if output not in row.unbounded:
                    largest = max(largest, float(np.abs(x).max(initial=0.0)))
        assert 1e40 < largest < 1e200, largest


OVERFLOWING = {   # (quantity, q, v factor) whose result overflows float64
    "M at d = 1e200": ("mass_matrix", [0.3, 1e200], 1.0),                     # m d^2
    "T at v = 1e160": ("kinetic_energy", [0.3, 0.2], 1e160),                  # v^T M v / 2
    "C at d, v = 1e160": ("coriolis_matrix", [0.3, 1e160], 1e160),            # m d v
}


@pytest.mark.parametrize("case", OVERFLOWING, ids=str)
def test_a_state_that_overflows_is_a_value_error_single_and_batch(case):
    """A revolute joint carrying a prismatic one (q[1] the distance from the axis) at a finite state whose results
    overflow float64: the same ValueError, naming the quantity and the largest input, for one state and for a
    batch in which it is the second."""
    robot = rd.load_urdf(robot_xml(link("a"), link("b"), link("c"), joint("r", "a", "b"),
                                   joint("p", "b", "c", "prismatic")))
    name, q, factor = OVERFLOWING[case]
    q, v = np.array(q), np.array([0.5, -0.4]) * factor
    messages = []
    for args in ([q, v], [np.stack([np.zeros(2), q]), np.stack([v / factor, v])]):
        with pytest.raises(ValueError, match=f"{name} overflows float64 at this state") as error:
            getattr(robot, name)(*args[:len(ROWS[name].inputs)])
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert re.search(r"(q holds 1e\+200|v holds 5e\+159|q holds 1e\+160)$", messages[0]), messages[0]


@pytest.fixture(scope="module")
def humanoid():
    return rd.load_urdf(ROOT / "urdf" / "humanoid.urdf", floating_base=True)


@pytest.mark.parametrize("scale", [1e155, 1e300, 1e-10], ids=str)
def test_quaternions_of_any_scale_are_normalized_without_overflow(humanoid, scale):
    """A floating-base quaternion scaled by 1e155 used to overflow its squared norm (NaN for one state, 'zero
    quaternion' for a batch, NaN from integrate, a wrong q1 (-) q0 in the controllers' compiled difference); every
    path now scales by the largest entry first."""
    q, v = humanoid.random_state(0)
    scaled = q.copy()
    scaled[3:7] *= scale
    M = humanoid.mass_matrix(q)
    np.testing.assert_allclose(humanoid.mass_matrix(scaled), M, rtol=0, atol=1e-12 * np.abs(M).max())
    np.testing.assert_allclose(humanoid.mass_matrix(np.stack([q, scaled]))[1], M, rtol=0, atol=1e-12 * np.abs(M).max())
    np.testing.assert_allclose(humanoid.integrate(scaled, v), humanoid.integrate(q, v), rtol=0, atol=1e-14)
    np.testing.assert_allclose(humanoid.integrate(np.stack([scaled]), np.stack([v]))[0], humanoid.integrate(q, v),
                               rtol=0, atol=1e-14)
    np.testing.assert_allclose(humanoid.difference(scaled, q), np.zeros(humanoid.nv), rtol=0, atol=1e-12)
    space = ConfigurationSpace(humanoid.model)           # the controllers' compiled route (2.1 rad off at x1e155)
    np.testing.assert_allclose(space.difference(scaled, q, out=np.empty(humanoid.nv)), np.zeros(humanoid.nv),
                               rtol=0, atol=1e-12)


EDGES = {   # (how to spoil one state, the error every quantity gives, or None: no error; "maybe": some may fail)
    "quaternion x1e155": (lambda q: np.r_[q[:3], q[3:7] * 1e155, q[7:]], None),
    "zero quaternion": (lambda q: np.r_[q[:3], 0.0, 0.0, 0.0, 0.0, q[7:]], "is a zero quaternion"),
    "quaternion of norm 1e-13": (lambda q: np.r_[q[:3], 1e-13, 0.0, 0.0, 0.0, q[7:]], "is a zero quaternion"),
    "subnormal quaternion": (lambda q: np.r_[q[:3], 1e-310, 0.0, 0.0, 0.0, q[7:]], "is a zero quaternion"),
    "NaN": (lambda q: np.r_[q[:8], np.nan, q[9:]], "q contains non-finite values"),
    "base position 1e300": (lambda q: np.r_[1e300, q[1:]], "maybe"),
}


@pytest.mark.parametrize("edge", EDGES, ids=str)
def test_single_state_and_batch_give_the_same_answer_or_error(humanoid, edge):
    """Every quantity of the registry at an edge state, alone and as the second state of a batch of two: the same
    numbers, or the same ValueError (a base 1e300 m away overflows some quantities, not all)."""
    spoil, expected = EDGES[edge]
    q, v = humanoid.random_state(1)
    bad = spoil(q)
    for name in ROWS:
        outcomes = []
        for args in (arguments(humanoid, name, bad, v), arguments(humanoid, name, np.stack([q, bad]),
                                                                  np.stack([v, v]))):
            try:
                outcomes.append([x[-1] if args[0].ndim > 1 else x for x in call(humanoid, name, args)])
            except ValueError as error:
                outcomes.append(str(error))
        failed = [isinstance(x, str) for x in outcomes]
        if expected is None:
            assert failed == [False, False], (name, outcomes)
        elif expected != "maybe":
            assert failed == [True, True] and expected in outcomes[0], (name, outcomes)
        if any(failed):
            assert outcomes[0] == outcomes[1], (name, outcomes)
            continue
        for x, y in zip(*outcomes):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(x).max()), err_msg=name)
