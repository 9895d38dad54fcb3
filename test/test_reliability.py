"""Issue 13 (reliability), library side: no silent non-finite number, loading linear in the links, memory in
proportion to the model, no leak or reference cycle, overlapping out= refused, and the smaller items (text with a
byte-order mark or in UTF-16, xs:double numbers, one kernel set for every nv).

Each test reproduces a failure of the issue: a description or a state that used to give NaN, time or memory that
grew faster than the robot, an out= that silently corrupted its results.
"""
import gc
import os
import re
import subprocess
import sys
import time
import weakref
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_path
from random_urdf import tree_urdf
from robot_dynamics.algorithms.registry import CHECKED, PARALLEL, QUANTITIES
from robot_dynamics.compiled import SAFE_MAGNITUDE
from robot_dynamics.algorithms.workspace import workspace
from robot_dynamics.model import BODY, MAX_PARAMETER
from robot_dynamics.urdf import MAX_LINKS, MAX_MAGNITUDE, URDFError, parse_urdf

ROOT = Path(__file__).resolve().parent.parent
ROWS = {row.name: row for row in QUANTITIES}


def frame_reference(name):
    """The reference a frame row is called with (frame_placement takes none); on the last link of frame_names."""
    return {} if name == "_frame_placement" else {"reference": "local_world_aligned"}


def link(name, mass="1", xyz="0 0 0", ixx="0.1"):
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def joint(name, parent, child, kind="revolute", xyz="0 0 0.1", extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="0 1 0"/>{extra}</joint>')


def robot_xml(*parts):
    return '<robot name="r">' + "".join(parts) + "</robot>"


def call(robot, name, args):
    """The quantity of registry row `name` at one state or a batch (args in the row's input order), as a list of
    arrays, through the public method that computes it."""
    row = ROWS[name]
    if name.startswith("_dynamics"):
        d = robot.dynamics(*args)
        return [d.M, d.C, d.g, d.com, d.J_com] + ([d.Y] if d.Y is not None else [])
    if row.matrices:
        return [robot.solve_mass_matrix(*args)]
    if "contacts" in row.inputs:                      # constrained_dynamics(q, v, tau, contacts) -> (a, forces)
        return [np.asarray(x) for x in robot.constrained_dynamics(*args)]
    if "frame" in row.inputs:                         # frame_placement(q, frame, reference), frame_velocity, ...
        return [np.asarray(getattr(robot, name[1:])(*args, **frame_reference(name)))]
    result = getattr(robot, name)(*args)
    return [np.asarray(x) for x in result] if isinstance(result, tuple) else [np.asarray(result)]


def arguments(robot, name, q, v):
    """q for the row's q inputs, v for the others (a (nv, 2) matrix for solve_mass_matrix's x), the last link's
    name for a frame, a point contact there for contacts."""
    row = ROWS[name]
    return [robot.frame_names[-1] if x == "frame" else robot.frame_names[-1:] if x == "contacts" else
            q if x.startswith("q") else
            np.stack([v, -v], axis=-1) if x in row.matrices else v for x in row.inputs]


# ---- 1. no silent non-finite number ---------------------------------------------------------------------------
HUGE = {   # the issue's descriptions that loaded and gave NaN, each refused naming its element
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
    """compiled.checked_kernels checks the bounded outputs of the registry for overflow only when a state entry
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
    quaternion' for a batch, NaN from integrate); every path now scales by the largest entry first."""
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


# ---- 2. loading linear in the links ------------------------------------------------------------------------
def load_seconds(text, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        rd.load_urdf(text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("shape", ["chain", "star"])
def test_loading_time_is_linear_in_the_links(shape):
    """4 times the links, at most 8 times the time (the issue's parser was cubic in the depth: 64 times).  The
    absolute figures (10,000 links in well under a second) are benchmarks/bench_loading.py's."""
    small, large = load_seconds(tree_urdf(1000, shape)), load_seconds(tree_urdf(4000, shape))
    assert large < 8 * small, (small, large)


# ---- 3. memory in proportion to the model ------------------------------------------------------------------
def test_more_links_than_the_limit_are_refused_before_reading_them():
    text = '<robot name="r">' + "".join(f'<link name="l{k}"/>' for k in range(MAX_LINKS + 1)) + "</robot>"
    start = time.perf_counter()
    with pytest.raises(URDFError, match=f"the <robot> has {MAX_LINKS + 1} <link> elements; robot_dynamics loads "
                                        f"at most {MAX_LINKS}"):
        parse_urdf(text)
    assert time.perf_counter() - start < 5.0


def test_building_a_robot_allocates_memory_linear_in_its_bodies():
    """Robot(model) used to run every kernel on example arrays of nv x 10 nb (2.3 GB for 2,000 links once any
    kernel had run): its peak allocation now grows with the bodies, not their square."""
    import tracemalloc
    from robot_dynamics.model import build_model
    warm = rd.load_urdf(ROOT / "urdf" / "arm7.urdf")
    warm.dynamics(*warm.random_state(0))
    peaks = []
    for n in (500, 2000):
        model = build_model(parse_urdf(tree_urdf(n, "star")))
        tracemalloc.start()
        rd.Robot(model)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 5 * peaks[0], peaks
    assert peaks[1] < 2000 * 40_000, peaks          # ~16 kB of workspace per body, and small change


def test_out_of_memory_is_a_urdf_error():
    """Under an address-space limit a large description cannot be loaded: load_urdf says so with a URDFError,
    never a raw MemoryError (a child process, so that the limit binds nothing else)."""
    script = f"""
import resource, sys
sys.path.insert(0, {str(ROOT / 'test')!r})
import robot_dynamics as rd
from random_urdf import tree_urdf
text = tree_urdf(20000, "star")
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + 150 * 2**20, resource.RLIM_INFINITY))
try:
    rd.load_urdf(text)
except rd.URDFError as error:
    print("URDFError:", error)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.match(r"URDFError: (URDF text: )?out of memory while (loading the URDF|parsing the XML)",
                    result.stdout), result.stdout


# ---- 4. no leak, no cycle ------------------------------------------------------------------------------------
def resident_mb():
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_loading_leaves_no_memory_behind():
    """Each load used to leave 10-19 kB behind (kernel set-up in compiled.py): 2,000 loads would keep 20-38 MB.
    benchmarks/bench_loading.py measures 10,000."""
    xml = robot_xml(link("a"), link("b"), link("c"), joint("j1", "a", "b"), joint("j2", "b", "c", "prismatic"))
    for _ in range(300):
        rd.load_urdf(xml)
    gc.collect()
    before = resident_mb()
    for _ in range(2000):
        rd.load_urdf(xml)
    gc.collect()
    assert resident_mb() - before < 2.0


@pytest.mark.parametrize("options", [{}, {"mimic": True}, {"floating_base": True}], ids=str)
def test_a_discarded_robot_is_freed_by_reference_counting(options):
    """No reference cycle: with the garbage collector off, the last reference going frees the robot -- after its
    kernels ran for one state and for a batch (per-thread workspaces), after parameter_derivatives (a robot
    without gravity inside), and for a robot with coupled mimic joints (which used to store bound methods)."""
    path = erd_path("panda.urdf")
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        robot = rd.load_urdf(path, **options)
        q, v = robot.random_state(0)
        robot.dynamics(q, v, v, v)
        robot.mass_matrix(np.stack([q, q]))
        robot.forward_dynamics(q, v, v)
        robot.parameter_derivatives(q, v)
        other = robot.with_parameters(robot.parameters)
        refs = [weakref.ref(robot), weakref.ref(other)]
        del robot, other
        assert [r() for r in refs] == [None, None]
    finally:
        if was_enabled:
            gc.enable()


# ---- 5. an out= that overlaps an input is refused ------------------------------------------------------------
@pytest.fixture(scope="module")
def quadruped():
    return rd.load_urdf(ROOT / "urdf" / "quadruped.urdf", floating_base=True)


def test_the_issues_overlaps_are_refused(quadruped):
    """dynamics(q, v, v, d.g, out=d) gave Y errors of 0.5-45, regressor(q, v, v, Y[:, 0], out=Y) of 0.1-2."""
    q, v = quadruped.random_state(3)
    d = quadruped.dynamics(q, v, v, v)
    with pytest.raises(ValueError, match="out.g shares memory with a_ref"):
        quadruped.dynamics(q, v, v, d.g, out=d)
    Y = d.Y.copy()
    with pytest.raises(ValueError, match="out shares memory with a_ref"):
        quadruped.regressor(q, v, v, Y[:, 0], out=Y)
    with pytest.raises(ValueError, match="out shares memory with a_ref"):
        quadruped.regressor(q[None], v[None], v[None], Y[None, :, 0], out=Y[None])


def overlapping_arguments(robot, name, batch, position):
    """Arguments of registry row `name` (one state, or a batch of 2) and outs of the right shapes, with input
    `position` a view into the memory of the first out (holding the input's values)."""
    row, rng = ROWS[name], np.random.default_rng(4)
    sizes = {"nq": robot.nq, "nv": robot.nv, "nb": robot.nbodies, "ny": 10 * robot.nbodies, "k": 2, "m": 3}
    states = [[robot.random_configuration(rng) if x.startswith("q") else
               rng.normal(size=(robot.nv, 2)) if x in row.matrices else rng.normal(size=robot.nv)
               for x in row.inputs if x not in ("frame", "contacts")] for _ in range(batch or 1)]
    args = [np.array(x) if batch else x[0] for x in zip(*states)]
    outs = [np.zeros(((batch,) if batch else ()) + tuple(sizes.get(n, n) for n in shape)) for shape in row.shapes]
    flat = outs[0].reshape(-1)
    need = args[position].size
    if flat.size < need:                               # a small out: the input overlaps it from its start
        backing = np.zeros(need)
        backing[:flat.size] = flat
        outs[0] = backing[:flat.size].reshape(outs[0].shape)
        flat = backing
    view = flat[:need].reshape(args[position].shape)
    view[...] = args[position]
    args[position] = view
    return args, outs


def dispatch(robot, name, args, outs):
    """The public method of row `name` with out= in the form it takes (an array, a tuple, a dataclass)."""
    row = ROWS[name]
    if name.startswith("_dynamics"):
        return robot.dynamics(*args, out=rd.Dynamics(*outs, *([None] if len(outs) == 5 else [])))
    if row.matrices:
        return robot.solve_mass_matrix(*args, out=outs[0])
    if "contacts" in row.inputs:                      # a point contact at the last link: 3 force rows
        return robot.constrained_dynamics(*args, robot.frame_names[-1:], out=tuple(outs))
    if "frame" in row.inputs:
        return getattr(robot, name[1:])(*args, robot.frame_names[-1], **frame_reference(name), out=outs[0])
    return getattr(robot, name)(*args, out=outs[0] if len(outs) == 1 else tuple(outs))


@pytest.mark.parametrize("batch", [0, 2], ids=["single", "batch"])
def test_an_out_overlapping_any_input_is_refused_on_every_method(quadruped, batch):
    for name, row in ROWS.items():
        for position, input_name in enumerate(x for x in row.inputs if x not in ("frame", "contacts")):   # names
            args, outs = overlapping_arguments(quadruped, name, batch, position)
            with pytest.raises(ValueError, match=f"shares memory with {input_name}"):
                dispatch(quadruped, name, args, outs)


def test_outs_sharing_memory_with_each_other_are_refused(quadruped):
    q, v = quadruped.random_state(5)
    M = np.zeros((quadruped.nv, quadruped.nv))
    with pytest.raises(ValueError, match=r"out\[0\] shares memory with out\[1\]"):
        quadruped.inverse_dynamics_derivatives(q, v, v, out=(M, M, np.zeros_like(M)))
    d = quadruped.dynamics(q, v)
    with pytest.raises(ValueError, match="out.M shares memory with out.C"):
        quadruped.dynamics(q, v, out=rd.Dynamics(d.M, d.M.T, d.g, d.com, d.J_com))


@pytest.mark.parametrize("batch", [(), (3,)], ids=["single", "batch"])
def test_interleaved_views_that_share_no_element_are_accepted(quadruped, batch):
    """Columns of one array: their extents overlap but no element is shared -- computed apart and copied in."""
    rng = np.random.default_rng(6)
    q = np.array([quadruped.random_configuration(rng) for _ in range(int(np.prod(batch)))]).reshape(
        batch + (quadruped.nq,))
    both = np.zeros(batch + (quadruped.nq, 2))
    both[..., 0] = q
    g = quadruped.gravity_vector(both[..., 0], out=both[..., :quadruped.nv, 1])
    np.testing.assert_array_equal(g, quadruped.gravity_vector(q))
    np.testing.assert_array_equal(both[..., 0], q)


def test_the_batch_extent_check_is_numpys_bounds():
    """compiled.overlapping (C, _fastcall) and its stand-in without the extension against np.may_share_memory's
    bounds test on views of one buffer -- forward, reversed, strided, interleaved, empty -- and separate arrays."""
    from robot_dynamics.compiled import _fastcall, extents_overlap
    base = np.arange(60.0).reshape(6, 10)
    views = [base, base[:2], base[3:], base[::-1], base[:, ::2], base[:, 1::2], base[2, :], base[:, 3], base[4:, ::-3],
             base[:0], base[5:, 9:], np.zeros(3), np.zeros((2, 0))]
    checks = [extents_overlap] + ([_fastcall.overlapping] if _fastcall is not None else [])
    cases = 0
    for i, x in enumerate(views):
        for j, y in enumerate(views):
            for z in views[j + 1:]:
                expected = (np.may_share_memory(y, x) or np.may_share_memory(z, x)
                            or np.may_share_memory(z, y))
                for check in checks:
                    assert check((x,), (y, z)) == expected, (check, i, j)
                cases += 1
            for check in checks:
                assert check((x,), (y,)) == np.may_share_memory(y, x), (check, i, j)
                assert check((x, y), ()) is False                   # inputs may overlap each other
    assert cases > 500 and _fastcall is not None                    # the extension is built (test_fast_calls)


def test_the_batch_layout_in_c_is_the_python_one():
    """compiled.layout (C, _fastcall) and its stand-in batch_layout write the same addresses, strides and dims;
    and batch_loop, given that layout, hands a kernel state i's rows, thread t's copies and the constants."""
    from robot_dynamics.compiled import _fastcall, batch_layout, batch_loop, thread_count
    rng = np.random.default_rng(7)
    threads = thread_count()
    per_thread = (rng.normal(size=(threads, 3, 2)), rng.normal(size=(threads, 5)))
    constants = (rng.normal(size=3),)
    per_state = (rng.normal(size=(6, 4)), rng.normal(size=(6, 2, 3))[::1], np.zeros((6, 4, 4)))
    expected = batch_layout(9, per_thread, constants, per_state)
    n = 6
    assert expected[0] == n
    assert list(expected[1:1 + n]) == [x.__array_interface__["data"][0] for x in per_thread + constants + per_state]
    assert list(expected[1 + n:1 + 2 * n]) == [0, 0, 0, 32, 48, 128]             # strides per state
    assert list(expected[1 + 2 * n:1 + 3 * n]) == [48, 40, 0, 0, 0, 0]           # strides per thread
    assert list(expected[1 + 3 * n:]) == [9, 3, 2, 5, 3, 4, 2, 3, 4, 4]          # nb, then one state's shapes
    assert _fastcall is not None                                   # the extension is built (test_fast_calls)
    np.testing.assert_array_equal(_fastcall.layout(9, per_thread, constants, per_state), expected)
    with pytest.raises(TypeError):
        _fastcall.layout(9, per_thread, constants, (np.float64(1.0),))           # a state row of 0 dimensions

    import ctypes

    from numba import carray, cfunc
    from numba import types as nt

    @cfunc(nt.int64(nt.voidptr, nt.voidptr, nt.CPointer(nt.voidptr), nt.CPointer(nt.int64)))
    def kernel(bodies, work, p, d):           # out = [x0 + c, 2 x1 + w[t]], status 5 when x0 < 0
        w, c = carray(p[0], (d[1],), dtype=np.float64), carray(p[1], (d[2],), dtype=np.float64)
        x, out = carray(p[2], (d[3],), dtype=np.float64), carray(p[3], (d[4],), dtype=np.float64)
        out[0], out[1] = x[0] + c[0], 2.0 * x[1] + w[0]
        return 5 if x[0] < 0.0 else 0

    entry = ctypes.CFUNCTYPE(ctypes.c_int64, *[ctypes.c_void_p] * 4)(kernel.address)
    w = 100.0 * np.arange(1, threads + 1)[:, None]           # thread t's copy holds 100 (t + 1)
    c, x = np.array([1000.0]), rng.normal(size=(64, 2))
    x[5, 0] = -abs(x[5, 0])
    out, status = np.zeros((64, 2)), np.zeros(64, dtype=np.int64)
    plan = _fastcall.layout(1, (w,), (c,), (x, out))
    bodies, works = np.zeros(1, dtype=BODY), workspace(1)[None].repeat(threads, axis=0)
    batch_loop(entry, bodies, works, plan, np.zeros((threads, plan[0]), dtype=np.int64), status)
    np.testing.assert_array_equal(status, np.where(x[:, 0] < 0, 5, 0))
    np.testing.assert_array_equal(out[:, 0], x[:, 0] + 1000.0)
    thread_part = out[:, 1] - 2.0 * x[:, 1]                  # 100 (t + 1) of the thread that ran each state
    assert np.all(np.isin(np.round(thread_part), w[:, 0])), thread_part


def test_hand_written_methods_refuse_overlaps_too(quadruped):
    """diagonalized and solve_mass_matrix take their own fast paths."""
    q, v = quadruped.random_state(8)
    d = quadruped.diagonalized(q, v, v)
    with pytest.raises(ValueError, match="out.nu shares memory with tau"):
        quadruped.diagonalized(q, v, d.nu, out=d)
    x = np.zeros(quadruped.nv)
    with pytest.raises(ValueError, match="out shares memory with x"):
        quadruped.solve_mass_matrix(q, x, out=x)


def test_python_methods_refuse_overlaps_too():
    """The methods computed in Python: parameter_derivatives, and a coupled robot's forward dynamics and M^-1."""
    robot = rd.load_urdf(erd_path("panda.urdf"), mimic=True)
    q, v = robot.random_state(7)
    out = np.zeros(robot.nv)
    with pytest.raises(ValueError, match="out shares memory with tau"):
        robot.forward_dynamics(q, v, out, out=out)
    M_inv = np.zeros((robot.nv, robot.nv))
    with pytest.raises(ValueError, match="out shares memory with q"):
        robot.inverse_mass_matrix(M_inv[0, :robot.nq], out=M_inv)
    p = robot.parameter_derivatives(q, v)
    with pytest.raises(ValueError, match="out.dg_dpi shares memory with v"):
        robot.parameter_derivatives(q, p.dg_dpi[:, 0], out=p)


# ---- 6. the smaller items -----------------------------------------------------------------------------------
SMALL = robot_xml(link("a"), link("b"), joint("j", "a", "b"))


@pytest.mark.parametrize("encode", [
    lambda s: "\ufeff" + s,
    lambda s: ("\ufeff" + s).encode("utf-8"),
    lambda s: s.encode("utf-16"),
    lambda s: s.encode("utf-16-le"),
    lambda s: s.encode("utf-16-be"),
    lambda s: s.encode("utf-32"),
    lambda s: '<?xml version="1.0" encoding="UTF-16"?>\n' + s,
    lambda s: ('<?xml version="1.0" encoding="UTF-16"?>\n' + s).encode("utf-16"),
    lambda s: ("\n  " + s).encode("utf-16-le"),
    lambda s: ("\n  " + s).encode("utf-32-be"),
], ids=["str BOM", "UTF-8 BOM", "UTF-16 BOM", "UTF-16-LE", "UTF-16-BE", "UTF-32", "str declared UTF-16",
        "UTF-16 declared", "UTF-16-LE blank first", "UTF-32-BE blank first"])
def test_text_with_a_byte_order_mark_or_in_utf16_is_xml(encode, tmp_path):
    """Such text used to be taken for a file path (the error quoted the whole document); a file of it loads too."""
    text = encode(SMALL)
    path = tmp_path / "robot.urdf"
    path.write_bytes(text if isinstance(text, bytes) else b"")
    for source in (text, path) if isinstance(text, bytes) else (text,):
        description = parse_urdf(source)
        assert (description.root, [j.name for j in description.joints]) == ("a", ["j"])


def test_text_that_is_neither_xml_nor_a_path_is_not_quoted_whole():
    text = "robot " * 2000
    with pytest.raises(URDFError, match=r"cannot read URDF file '.{0,80}\.\.\.': .*must start with '<'") as error:
        parse_urdf(text)
    assert len(str(error.value)) < 300


@pytest.mark.parametrize("number, accepted", [
    ("1_0", False), ("\u0661\u0660", False), ("\uff11", False), ("0x10", False), ("1e", False), ("1.2.3", False),
    ("infinity", False), ("1,5", False), ("1.5\u00a0", False),
    ("10", True), ("+1.", True), ("-.5", True), ("1E+05", True), ("1e-3", True), ("  2.5", True), ("007", True),
], ids=repr)
def test_urdf_numbers_are_xs_double(number, accepted):
    """float() accepts '1_0' and Arabic-Indic or full-width digits; a URDF number is an xs:double."""
    xml = robot_xml(link("a", xyz=f"{number} 0 0"))
    if accepted:
        assert parse_urdf(xml).links["a"].inertial.com[0] == float(number)
    else:
        with pytest.raises(URDFError, match="link 'a': <origin xyz=.* (is not a list of numbers|non-finite)"):
            parse_urdf(xml)


def test_one_kernel_set_for_every_nv():
    """Robots with nv <= 1 used to compile a second set of kernels (~4 s even with a warm cache): every kernel,
    its checks for the methods written in Python (which strided views reach) and the batch loop hold one compiled
    signature whatever the robot (nv = 0, 1, 6, 7)."""
    robots = [rd.load_urdf(robot_xml(link("a"))), rd.load_urdf(SMALL), rd.load_urdf(robot_xml(link("a")),
                                                                                      floating_base=True),
              rd.load_urdf(ROOT / "urdf" / "arm7.urdf")]
    assert [r.nv for r in robots] == [0, 1, 6, 7]
    for robot in robots:
        q, v = robot.random_state(0)
        for name in ("mass_matrix", "gravity_derivative", "_dynamics_with_regressor", "_solve_mass_matrix"):
            call(robot, name, arguments(robot, name, q, v))
            call(robot, name, [np.stack([x, x]) for x in arguments(robot, name, q, v)])
            call(robot, name, [np.stack([x, x], axis=-1)[..., 0] for x in arguments(robot, name, q, v)])
    for name in ("mass_matrix", "gravity_derivative", "_dynamics_with_regressor", "_solve_mass_matrix"):
        for dispatcher in (ROWS[name].kernel, CHECKED[name], PARALLEL[name]):
            assert len(dispatcher.signatures) == 1, (name, dispatcher.signatures)


def test_threads_sharing_a_robot_get_their_own_batches():
    """A batch runs outside the GIL in the Robot's per-thread workspaces: threads that share one Robot used to get
    each other's sums (a regressor off by up to 44, found by the Dask route's threads).  Four threads each run
    their own batches on one arm; every result equals the same batch computed alone."""
    import threading
    robot = rd.load_urdf(ROOT / "urdf" / "arm7.urdf")
    rng = np.random.default_rng(0)
    data = [rng.normal(size=(4, 20000, robot.nv)) for _ in range(4)]
    alone = [(robot.regressor(*d), robot.mass_matrix(d[0])) for d in data]
    shared = [[] for _ in data]

    def work(i):
        for _ in range(3):
            shared[i].append((robot.regressor(*data[i]), robot.mass_matrix(data[i][0])))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(data))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for expected, results in zip(alone, shared):
        assert len(results) == 3
        for Y, M in results:
            np.testing.assert_array_equal(Y, expected[0])
            np.testing.assert_array_equal(M, expected[1])
