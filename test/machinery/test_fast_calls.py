"""The single-state calls in C (robot_dynamics/calls/_fastcall.c, native.fast_call): built, made at a quantity's first
use, the numbers of the route written in Python, and its errors.

Each check compares a robot's entry of a registry row (robot._calls[row], a Call: methods.Calls) with the row's
Quantity on the same robot (robot._calls.quantity(row)), the route in Python the Call hands over to: two routes
into one compiled entry (the kernel's C entry point, calls.generated.fast_kernel), whose arguments (pointers, shapes,
strides) are assembled independently -- by the Call in C, by the Quantity through a _fastcall.Entry -- so the two
give the same bits.

These tests check plumbing, not mathematics: the C calling path (which Call is made when, the layouts --
pointers, shapes, strides -- it passes for inputs and outs of any strides, an out that is also an input, the
errors handed to the Python route) and that the routes agree bit for bit.  Whether a kernel's numbers are right
is for the kernels' own tests (test/kernels: against Pinocchio and identities); a kernel wrong in both routes
alike passes here.
"""
import dataclasses
import gc
import os
import pickle
import subprocess
import sys
import weakref

import numpy as np
import pytest

import robot_dynamics as rd
from random_urdf import random_urdf
from robot_dynamics.calls import native
from robot_dynamics.algorithms.registry import QUANTITIES
from robot_dynamics.bundled import bundled_urdf

FRAME_METHODS = {"frame_placement": "q", "frame_jacobian": "q", "frame_velocity": "qv",
                 "frame_acceleration_bias": "qv"}


def test_the_extension_is_built_and_used():
    """pip install -e . compiles _fastcall.c (setup.py, optional=True): without it every method still works, in
    Python, ~0.6 us slower a call -- this test is what says so."""
    from robot_dynamics.calls import _fastcall
    assert native.FAST_CALLS and native.extension is _fastcall


def close(x, y, what):
    """x equals y bit for bit: the route written in Python computes with the row's C entry point too
    (calls.native.checked_entry), the one compiled entry of its quantity."""
    np.testing.assert_array_equal(x, y, err_msg=what)


def rows():
    """The registry rows whose entry is a Call: every row of state inputs only, without a matrix input."""
    return [row for row in QUANTITIES if not row.matrices and row.state == row.inputs]


def arrays(result):
    """A row's result as a tuple of arrays: a tuple, a dataclass's fields that are not None, or the one array."""
    if dataclasses.is_dataclass(result):
        values = (getattr(result, f.name) for f in dataclasses.fields(result))
        return tuple(x for x in values if x is not None)
    return result if isinstance(result, tuple) else (result,)


def arguments(robot, row, rng):
    q = robot.random_configuration(rng)
    return [q] + [rng.normal(size=robot.nv) for _ in row.inputs[1:]]


def strided(x, rng):
    both = np.stack([x, rng.normal(size=x.shape)], axis=-1)
    return both[..., 0]


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def robot(request):
    return rd.load_urdf(random_urdf(0, n_links=9), floating_base=request.param)


def test_every_row_is_called_in_c_with_the_python_numbers(robot):
    rng = np.random.default_rng(1)
    for row in rows():
        args = arguments(robot, row, rng)
        call = robot._calls[row.name]                              # made at its first use
        assert type(call).__name__ == "Call", row.name
        first, again = call(*args, None), call(*args, None)
        python = robot._calls.quantity(row.name)(*args, None)      # the route written in Python
        assert type(first) is type(python), row.name               # a numpy scalar for a scalar quantity
        if hasattr(rd.Robot, row.name):                            # the public method is this Call
            for a, b in zip(arrays(getattr(robot, row.name)(*args)), arrays(first)):
                np.testing.assert_array_equal(a, b, err_msg=row.name)
        for a, b, c in zip(arrays(first), arrays(again), arrays(python)):
            np.testing.assert_array_equal(b, a, err_msg=row.name)
            close(b, c, row.name)
            assert type(b) is type(c), row.name
        if not isinstance(python, (tuple, np.ndarray)) and not dataclasses.is_dataclass(python):
            continue                                               # a scalar: no out=
        expected = arrays(python)
        several = len(expected) > 1                                # views of any strides, in and out
        views = [strided(x, rng) for x in args]
        outs = tuple(strided(np.full(x.shape, np.nan), rng) for x in expected)
        if dataclasses.is_dataclass(python):
            given = type(python)(*outs, *([None] * (len(dataclasses.fields(python)) - len(outs))))
            assert call(*views, given) is given, row.name
        else:
            result = call(*views, outs if several else outs[0])
            assert all(r is o for r, o in zip(result, outs)) if several else result is outs[0], row.name
        for o, c in zip(outs, arrays(again)):                      # the same kernel: the same bits
            np.testing.assert_array_equal(o, c, err_msg=row.name + " into strided views")


def test_an_equal_float64_dtype_takes_the_c_route(robot):
    """An array whose float64 dtype is an equal object but not numpy's singleton -- any array that went through
    pickle (multiprocessing, dask, a log), or numba's returned views -- is called in C too: no Python frame runs
    (was: the Python route, ~20x slower a call, silently)."""
    rng = np.random.default_rng(2)
    q, out = (pickle.loads(pickle.dumps(x)) for x in (robot.random_configuration(rng), np.empty((robot.nv,) * 2)))
    assert q.dtype is not np.dtype(np.float64) and out.dtype is not np.dtype(np.float64)
    robot.mass_matrix(q, out=out)
    frames = []
    sys.setprofile(lambda frame, event, arg: frames.append(frame.f_code.co_name) if event == "call" else None)
    try:
        robot._calls["mass_matrix"](q, out)
    finally:
        sys.setprofile(None)
    assert frames == []
    np.testing.assert_array_equal(out, robot.mass_matrix(np.array(q)))


def test_frames_the_bundle_and_the_diagonalized_dynamics_are_called_in_c(robot):
    rng = np.random.default_rng(2)
    q, v, v_r, a_r = robot.random_configuration(rng), *rng.normal(size=(3, robot.nv))
    frame = robot.frame_names[-1]
    for name, kinds in FRAME_METHODS.items():
        args = (q, v)[:len(kinds)]
        references = ("local", "world", "local_world_aligned") if name != "frame_placement" else (None,)
        for reference in references:
            extra = () if reference is None else (reference,)
            first = getattr(robot, name)(*args, frame, *extra)
            assert type(robot._calls["_" + name]).__name__ == "Call", name
            python = robot._calls.quantity("_" + name)(*args, frame, reference or "local", None)
            close(first, python, name)
            np.testing.assert_array_equal(getattr(robot, name)(*args, frame, *extra), first, err_msg=name)
            if reference is not None:
                out = np.empty_like(first)
                assert getattr(robot, name)(*args, frame, reference=reference, out=out) is out
                np.testing.assert_array_equal(out, first, err_msg=name)
    for with_y in (False, True):
        args = (q, v, v_r, a_r) if with_y else (q, v)
        name = "_dynamics_with_regressor" if with_y else "_dynamics"
        d = robot.dynamics(*args)
        assert type(robot._calls[name]).__name__ == "Call"
        python = robot._calls.quantity(name)(*args, None)
        assert type(d) is rd.Dynamics and (d.Y is None) != with_y
        for field in ("M", "C", "g", "com", "J_com") + (("Y",) if with_y else ()):
            close(getattr(d, field), getattr(python, field), field)
        assert robot.dynamics(*args, out=d) is d
    tau = rng.normal(size=robot.nv)
    python = robot._calls.quantity("_diagonalized")(q, v, tau, None)
    robot.diagonalized(q, v, tau)
    assert type(robot._calls["_diagonalized"]).__name__ == "Call"
    d = robot.diagonalized(q, v, tau)
    assert type(d) is rd.Diagonalized and robot.diagonalized(q, v, tau, out=d) is d
    for field in ("nu", "epsilon", "coriolis"):
        close(getattr(d, field), getattr(python, field), field)
    without = robot.diagonalized(q, v)                             # (q, v): tau = 0, epsilon dropped
    assert without.epsilon is None
    close(without.nu, python.nu, "nu")


@pytest.mark.parametrize("regressor_first", [False, True])
def test_the_bundle_compiles_the_regressor_kernel_only_when_asked(regressor_first):
    """dynamics(q, v) and dynamics(q, v, v_ref, a_ref) are two kernels: the first call of either makes its entry
    alone, the other's comes with its first call, and then both are in C."""
    robot = rd.load_urdf(random_urdf(1, n_links=5))
    q, v, v_r, a_r = robot.random_configuration(0), *np.random.default_rng(3).normal(size=(3, robot.nv))
    calls = [(q, v, v_r, a_r), (q, v)] if regressor_first else [(q, v), (q, v, v_r, a_r)]
    names = {2: "_dynamics", 4: "_dynamics_with_regressor"}
    robot.dynamics(*calls[0])
    assert set(robot._calls) == {names[len(calls[0])]}
    robot.dynamics(*calls[1])
    assert set(robot._calls) == set(names.values())
    for args in calls:
        call = robot._calls[names[len(args)]]
        assert type(call).__name__ == "Call"
        python, d = robot._calls.quantity(names[len(args)])(*args, None), robot.dynamics(*args)
        for field in ("M", "C", "g", "com", "J_com", "Y")[:5 + (len(args) == 4)]:
            close(getattr(d, field), getattr(python, field), field)


def test_constrained_dynamics_is_called_in_c_for_the_last_contact_set():
    """The Call computes the contact set last given in Python (remember), for a tuple or list of the very same
    elements; another set, baumgarte or damping goes through Python (which remembers the new set), and a redundant
    set still raises the method's error."""
    robot = rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)
    rng = np.random.default_rng(4)
    q, v, tau = robot.random_configuration(rng), *rng.normal(size=(2, robot.nv))
    feet = ["FL_foot", "HR_foot"]
    sets = [[rd.Contact(feet[0])], (rd.Contact(feet[0]), "FR_foot", rd.Contact(feet[1], "surface"))]
    route = robot._calls.quantity("_constrained_dynamics")
    for contacts in sets + sets[:1]:
        python = route.solve(q, v, tau, contacts, (0.0, 0.0), 0.0, None)
        robot.constrained_dynamics(q, v, tau, contacts)
        call = robot._calls["_constrained_dynamics"]
        assert type(call).__name__ == "Call" and call.remembered == tuple(contacts)
        a, f = robot.constrained_dynamics(q, v, tau, list(contacts))        # a list of the same elements: in C
        close(a, python[0], "a"), close(f, python[1], "forces")
        out = (np.empty(robot.nv), np.empty(f.shape))
        assert robot.constrained_dynamics(q, v, tau, contacts, out=out) is out
        np.testing.assert_array_equal(out[1], f)
    gains = robot.constrained_dynamics(q, v, tau, sets[0], baumgarte=(3.0, 1.0))   # Python: its own spec
    close(gains[1], route.solve(q, v, tau, sets[0], (3.0, 1.0), 0.0, None)[1], "gains")
    assert robot._calls["_constrained_dynamics"].remembered == tuple(sets[0])
    as_array = robot.constrained_dynamics(q, v, tau, sets[0], baumgarte=np.array([3.0, 1.0]))   # not a tuple
    np.testing.assert_array_equal(as_array[1], gains[1])
    twice = [rd.Contact(feet[1], "surface")] * 2                          # redundant: the Python route's error
    with pytest.raises(ValueError, match="redundant or singular"):
        robot.constrained_dynamics(q, v, tau, twice)
    with pytest.raises(ValueError, match="redundant or singular"):
        robot.constrained_dynamics(q, v, tau, twice)


def test_errors_are_the_python_routes_errors(robot):
    """Every input the C path does not take goes to the route written in Python: the same result or error."""
    rng = np.random.default_rng(3)
    q, v = robot.random_state(rng)
    robot.mass_matrix(q), robot.coriolis_matrix(q, v), robot.frame_jacobian(q, robot.frame_names[0])
    route = robot._calls.quantity

    def message(fn, *args, **kwargs):
        with pytest.raises(ValueError) as error:
            fn(*args, **kwargs)
        return str(error.value)

    bad = q.copy()
    bad[-1] = np.nan
    frame = robot.frame_names[0]
    cases = [("mass_matrix", (bad,), "mass_matrix", (bad, None)),
             ("mass_matrix", (q[:-1],), "mass_matrix", (q[:-1], None)),
             ("mass_matrix", (q, np.empty((robot.nv, robot.nv + 1))), "mass_matrix",
              (q, np.empty((robot.nv, robot.nv + 1)))),
             ("mass_matrix", (q, np.empty((robot.nv, robot.nv), dtype=np.float32)), "mass_matrix",
              (q, np.empty((robot.nv, robot.nv), dtype=np.float32))),
             ("frame_jacobian", (q, frame + "x"), "_frame_jacobian", (q, frame + "x", "local", None)),
             ("frame_jacobian", (q, frame, "nowhere"), "_frame_jacobian", (q, frame, "nowhere", None))]
    for name, args, row, row_args in cases:
        assert message(getattr(robot, name), *args) == message(route(row), *row_args)
    with pytest.raises(ValueError, match="kind must be one of 'paper002', 'christoffel', got 'nonsense'"):
        robot.coriolis_matrix(q, v, kind="nonsense")
    a = rng.normal(size=robot.nv)                                # an out that is also an input
    assert message(robot.inverse_dynamics, q, v, a, out=a) == message(route("inverse_dynamics"), q, v, a, a)
    # what the C path hands on computes as in Python: a batch, a list, another dtype, keywords
    batch = np.stack([q, q])
    np.testing.assert_array_equal(robot.mass_matrix(batch), route("mass_matrix")(batch, None))
    np.testing.assert_array_equal(robot.mass_matrix(list(q)), route("mass_matrix")(q, None))
    np.testing.assert_array_equal(robot.coriolis_matrix(q, v, kind="christoffel"),
                                  route("_christoffel_coriolis_matrix")(q, v, None))
    np.testing.assert_array_equal(robot.mass_matrix(q=q), robot.mass_matrix(q))
    close(robot.mass_matrix(q), route("mass_matrix")(q, None), "mass_matrix")


def test_a_robot_with_calls_is_freed_at_once():
    """A Call holds its Quantity weakly and nothing holds the robot: no reference cycle, so the robot goes when its
    last reference does."""
    robot = rd.load_urdf(bundled_urdf("arm7"))
    q, v = robot.random_state(0)
    robot.mass_matrix(q), robot.dynamics(q, v), robot.frame_jacobian(q, robot.frame_names[-1])
    mass_matrix = robot._calls["mass_matrix"]
    calls = weakref.ref(robot._calls)
    gc.disable()
    try:
        alive = weakref.ref(robot)
        del robot
        assert alive() is None and calls() is None
    finally:
        gc.enable()
    with pytest.raises(ReferenceError):
        mass_matrix(q[:-1], None)                 # handed to the Python route, which is gone with the robot


def test_overridden_methods_stay_overridden():
    """A robot coupled by mimics replaces the articulated-body entries (Cholesky of M): never a Call for them."""
    for seed in range(100):                                       # the first tree with mimic joints
        urdf = random_urdf(seed, n_links=10, joint_types=("revolute", "prismatic", "continuous", "fixed"), mimic=True)
        robot = rd.load_urdf(urdf, mimic=True)
        if any(j.mimic is not None for j in robot.model.joints):
            break
    assert any(j.mimic is not None for j in robot.model.joints), "the generator made mimic joints"
    q, v = robot.random_state(0)
    for _ in range(2):
        robot.forward_dynamics(q, v, v), robot.inverse_mass_matrix(q), robot.mass_matrix(q)
    for name in ("forward_dynamics", "inverse_mass_matrix"):
        assert type(robot._calls[name]).__name__ == "method", name
    assert type(robot._calls["mass_matrix"]).__name__ == "Call"


def test_fast_calls_can_be_switched_off():
    code = ("import numpy as np, robot_dynamics as rd; from robot_dynamics.bundled import bundled_urdf;"
            "r = rd.load_urdf(bundled_urdf('arm7')); q = np.zeros(r.nq); r.mass_matrix(q); r.mass_matrix(q);"
            "print(type(r._calls['mass_matrix']).__name__)")
    env = dict(os.environ, ROBOT_DYNAMICS_FAST_CALLS="0")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert result.stdout.strip() == "function", result.stderr          # quantity.lean_entry, not a C Call


LEAN = """
import numpy as np, robot_dynamics as rd
from robot_dynamics.bundled import bundled_urdf
robot = rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)
rng = np.random.default_rng(5)
q, (v, a, tau) = robot.random_configuration(rng), rng.normal(size=(3, robot.nv))
wide = lambda x: np.repeat(x, 2)[::2]             # the same numbers in a strided view: the Quantity's route
route = robot._calls.quantity
frame = "FL_foot"
cases = [("mass_matrix", (q,), ()), ("inverse_dynamics", (q, v, a), ()), ("kinetic_energy", (q, v), ()),
         ("frame_jacobian", (q,), (frame, "local")), ("frame_velocity", (q, v), (frame, "world"))]
for name, state, keys in cases:
    row = getattr(type(robot), name).forwards[0]                            # its registry row
    lean = getattr(robot, name)(*state, *keys)
    assert type(robot._calls[row]).__name__ == "function", name           # quantity.lean_entry
    python = route(row)(*map(wide, state), *keys)
    assert np.array_equal(lean, python), name
    if np.ndim(lean):
        out = np.empty(np.shape(lean))
        strided = np.empty(np.shape(lean) + (2,))[..., 0]               # an out that is not C-contiguous
        assert getattr(robot, name)(*state, *keys, out=strided) is strided and np.array_equal(strided, lean), name
        assert getattr(robot, name)(*state, *keys, out=out) is out and np.array_equal(out, lean), name
for name, state in (("dynamics", (q, v)), ("inverse_dynamics_derivatives", (q, v, a))):
    lean = getattr(robot, name)(*state)                                 # a result type; a tuple
    arrays = list(lean) if type(lean) is tuple else [lean.M, lean.C, lean.g, lean.com, lean.J_com]
    outs = [np.empty(x.shape) for x in arrays]
    out = tuple(outs) if type(lean) is tuple else rd.Dynamics(*outs)
    assert getattr(robot, name)(*state, out=out) is out, name
    assert all(np.array_equal(x, y) for x, y in zip(outs, arrays)), name
    outs[-1] = np.empty(outs[-1].shape[::-1]).T                           # one of them not C-contiguous
    out = tuple(outs) if type(lean) is tuple else rd.Dynamics(*outs)
    assert getattr(robot, name)(*state, out=out) is out, name
    assert all(np.array_equal(x, y) for x, y in zip(outs, arrays)), name
sets = [["FL_foot", "HR_foot"], [rd.Contact("FR_foot", "surface")]]
for contacts in sets + sets[:1]:
    solved = route("_constrained_dynamics").solve(q, v, tau, contacts, (0.0, 0.0), 0.0, None)
    for given in (contacts, tuple(contacts), contacts):                  # the remembered set: straight in
        lean = robot.constrained_dynamics(q, v, tau, given)
        assert all(np.array_equal(x, y) for x, y in zip(lean, solved)), contacts
        out = (np.empty(robot.nv), np.empty(len(solved[1])))
        assert robot.constrained_dynamics(q, v, tau, given, out=out) is out
        assert all(np.array_equal(x, y) for x, y in zip(out, solved)), contacts
        strided = (np.empty((robot.nv, 2))[:, 0], np.empty(len(solved[1])))
        assert robot.constrained_dynamics(q, v, tau, given, out=strided) is strided
        assert all(np.array_equal(x, y) for x, y in zip(strided, solved)), contacts
    strided = robot.constrained_dynamics(wide(q), v, tau, contacts)    # the route of its own
    assert all(np.array_equal(x, y) for x, y in zip(strided, solved)), contacts
gains = robot.constrained_dynamics(q, v, tau, sets[0], baumgarte=(3.0, 1.0))
assert not np.array_equal(gains[1], solved[1])
assert type(robot._calls["_constrained_dynamics"]).__name__ == "function"
try:
    robot.constrained_dynamics(q, v, tau, [rd.Contact("FL_foot", "surface")] * 2)
except ValueError as error:
    assert "redundant or singular" in str(error)
else:
    raise AssertionError("a redundant set was not refused")
q_bad = q.copy(); q_bad[0] = np.nan
try:
    robot.mass_matrix(q_bad)
except ValueError as error:
    assert "q" in str(error)
else:
    raise AssertionError("a NaN in q was not refused")
print("ok")
"""


def test_without_the_extension_the_lean_entries_give_the_routes_numbers():
    """ROBOT_DYNAMICS_FAST_CALLS=0: each entry (quantity.lean_entry, ContactDynamics.lean) calls the row's checked
    kernel itself for one state of C-contiguous float64 vectors -- and the set last solved without gains -- and
    hands everything else (strided views and outs, other sets, gains, errors) to the Quantity: the same kernel, so
    the same bits as the Quantity's route for a strided view of the same numbers."""
    env = dict(os.environ, ROBOT_DYNAMICS_FAST_CALLS="0")
    result = subprocess.run([sys.executable, "-c", LEAN], env=env, capture_output=True, text=True, timeout=600)
    assert result.stdout.strip() == "ok", result.stderr[-3000:]


def test_the_python_routes_entry_takes_only_what_its_kernel_was_compiled_for(robot):
    """_fastcall.Entry, the C entry point as the routes written in Python call it (kernels.AnyStrides): the
    checked kernel's arguments, C-contiguous arrays of the kernel's dimensions, float64 inputs and outputs; anything
    else a TypeError (never a guess at a layout); an out overlapping the input: ERR_OVERLAP, nothing written."""
    from robot_dynamics.algorithms.kinematics import ERR_OVERLAP
    q = robot.random_configuration(np.random.default_rng(6))
    robot.mass_matrix(strided(q, np.random.default_rng(7)))        # the route written in Python: its Entry made
    quantity = robot._calls.quantity("mass_matrix")
    entry = quantity.kernel.kernel                                   # the Contiguous front's kernel
    assert type(entry).__name__ == "Entry"
    M = np.empty((robot.nv, robot.nv))
    assert entry(*quantity.fixed, q, M) == 0
    np.testing.assert_array_equal(M, robot.mass_matrix(q))
    for bad in ([q[None], M], [q, M.T], [q.astype(np.float32), M], [q, M[None]]):
        with pytest.raises(TypeError, match="argument"):
            entry(*quantity.fixed, *bad)
    with pytest.raises(TypeError, match="positional"):
        entry(*quantity.fixed, q)
    shared = np.zeros(robot.nq + robot.nv * robot.nv)               # M's bytes begin within q's
    view_q, view_M = shared[:robot.nq], shared[robot.nq - 1:robot.nq - 1 + robot.nv ** 2].reshape(M.shape)
    view_q[:] = q
    assert entry(*quantity.fixed, view_q, view_M) == ERR_OVERLAP
    np.testing.assert_array_equal(view_q, q)


TWIN_ROWS = ("mass_matrix", "kinetic_energy", "inverse_dynamics_derivatives", "_dynamics", "_frame_jacobian")


def twin_cases(robot, quantity, rng):
    """(label, build) of calls that a row's entry takes: build() -> (args, keywords, out), new arrays each time
    (the same numbers), out the `out` it hands in.  One state, as the Robot methods hand it over or otherwise."""
    row, nq = quantity.row, robot.nq
    state = [robot.random_configuration(rng)] + [rng.normal(size=robot.nv) for _ in row.state[1:]]
    keys = [robot.frame_names[-1], "local"] if quantity.framed else []
    scalar = quantity.shapes[0] == ()

    def out(make=np.empty, extra=None):
        arrays = [make(s) for s in quantity.shapes]
        if quantity.result_type is not None:
            free = len(quantity.fields) - len(arrays)
            return quantity.result_type(*arrays, *([extra] * free))
        return tuple(arrays) if len(arrays) > 1 else arrays[0]

    def read_only(shape):
        x = np.empty(shape)
        x.flags.writeable = False
        return x

    def sharing():                                                  # q lies within the out's first array
        o = out()
        q = arrays(o)[0].reshape(-1)[:nq]
        q[:] = state[0]
        return [q, *map(np.copy, state[1:]), *keys, o], {}, o

    def other_kind():                                               # a list for a tuple, a tuple for an array
        o = out()
        return list(o) if isinstance(o, tuple) else (o,)

    def copies(*extra, keywords=None, change=lambda x: x):          # extra, keywords: values or makers of them
        def build():
            args = [change(np.copy(x)) for x in state] + list(keys) + [x() if callable(x) else x for x in extra]
            named = {k: x() if callable(x) else x for k, x in (keywords or {}).items()}
            return args, named, args[-1] if extra else named.get("out")
        return build

    nan = state[0].copy()
    nan[-1] = np.nan
    cases = [("no out", copies()), ("out None", copies(None)), ("a batch", copies(None, change=lambda x: x[None])),
             ("a list", copies(None, change=list)), ("float32", copies(None, change=lambda x: x.astype(np.float32))),
             ("strided", copies(None, change=lambda x: strided(x, rng))),
             ("NaN", lambda: ([nan.copy(), *map(np.copy, state[1:]), *keys, None], {}, None)),
             ("another keyword", copies(keywords={"outs": None})), ("too many", copies(None, None))]
    if quantity.framed:
        cases += [("unknown frame", lambda: ([*map(np.copy, state), "nowhere", "local", None], {}, None)),
                  ("a list as frame", lambda: ([*map(np.copy, state), [0], "local", None], {}, None))]
    if not scalar:
        cases += [("out", copies(out)), ("out=", copies(keywords={"out": out})), ("sharing", sharing),
                  ("strided out", copies(lambda: out(lambda s: strided(np.empty(s), rng)))),
                  ("read-only out", copies(lambda: out(read_only))),
                  ("misshapen out", copies(lambda: out(lambda s: np.empty(s + (1,))))),
                  ("out of another kind", copies(other_kind))]
    if quantity.result_type is not None:
        cases.append(("a field that must be None", copies(lambda: out(extra=np.zeros(3)))))
    return cases


def twin_outcome(entry, quantity, build):
    """What entry(*args, **keywords) did: ('value', arrays, is the out returned) or ('error', type, message), and
    how often it handed over to the Quantity."""
    args, keywords, given = build()
    before = quantity.handed
    try:
        result = entry(*args, **keywords)
    except (ValueError, TypeError) as error:
        outcome = ("error", type(error), str(error))
    else:
        outcome = ("value", [np.asarray(x) for x in arrays(result)], given is not None and result is given)
    return outcome, quantity.handed - before


def test_the_lean_entry_and_the_c_call_agree_case_by_case(robot):
    """quantity.lean_entry, the Call's twin in Python for a process without the extension, against the Call of the
    same row on one table of cases (new results or an out, by position or name; batches, lists, other dtypes,
    strided views, an out sharing memory with q, NaN, unknown keys and keywords): the same values, the same
    errors, and the same cases handed over to the Quantity (the kernel's C entry point is their one kernel)."""
    from robot_dynamics.calls.kernels import ROWS
    from robot_dynamics.calls.quantity import Quantity, lean_entry

    class Counting(Quantity):
        handed = 0

        def __call__(self, *args, out=None):
            self.handed += 1
            return super().__call__(*args, out=out)

    rng = np.random.default_rng(11)
    for name in TWIN_ROWS:
        quantity = Counting(robot._engine, ROWS[name])
        call, lean = quantity.c_call(), lean_entry(quantity)
        assert type(call).__name__ == "Call" and type(lean).__name__ == "function", name
        straight = 0
        for label, build in twin_cases(robot, quantity, rng):
            (c, c_handed), (p, p_handed) = twin_outcome(call, quantity, build), twin_outcome(lean, quantity, build)
            assert c_handed == p_handed, (name, label, c_handed, p_handed)
            assert c[0] == p[0] and c[2] == p[2] if c[0] == "value" or p[0] == "value" else c == p, (name, label)
            if c[0] == "value":
                assert len(c[1]) == len(p[1]), (name, label)
                for x, y in zip(c[1], p[1]):
                    np.testing.assert_array_equal(x, y, err_msg=f"{name}: {label}")
            straight += c_handed == 0
        assert straight >= 2, name                                    # some cases go straight into the kernel


def test_the_two_generated_wrappers_agree(robot):
    """The kernel's C entry point (generated.fast_source, as a _fastcall.Entry) and its checked kernel
    (generated.checked_source, the route without the extension) on the cases each check exists for: a state,
    a state whose results overflow float64, a non-finite input, a zero quaternion, an out overlapping an input or
    another out (nothing computed) -- the same status, and the same bits."""
    from robot_dynamics.algorithms.kinematics import ERR_OVERLAP
    from robot_dynamics.algorithms.registry import CHECKED
    from robot_dynamics.calls.compiling import compiled
    from robot_dynamics.calls.kernels import kernel_types
    rng = np.random.default_rng(12)
    statuses = set()
    for name in ("forward_dynamics", "inverse_dynamics_derivatives"):
        quantity = robot._calls.quantity(name)
        types = kernel_types(name)
        twins = (native.checked_entry(name, types), compiled(CHECKED[name], types, name))
        q = robot.random_configuration(rng)
        v, a = rng.normal(size=(2, robot.nv))
        zero = q.copy()
        zero[3:7] = 0.0                                               # a zero quaternion when the base floats
        states = [(q, v, a), (q, 1e160 * v, a), (q, v, np.full(robot.nv, np.inf)), (zero, v, a)]
        for state in states:
            results = []
            for twin in twins:
                outs = [np.full(s, np.nan) for s in quantity.shapes]
                status = twin(*quantity.fixed, *map(np.copy, state), *outs)
                results.append((status, outs))
            (s1, o1), (s2, o2) = results
            assert s1 == s2, (name, s1, s2)
            statuses.add(int(s1))
            for x, y in zip(o1, o2):
                np.testing.assert_array_equal(x, y, err_msg=name)
        for twin in twins:                                           # an out overlapping q, or another out
            shared = np.zeros(robot.nq + robot.nv)
            given = [shared[:robot.nq], v, a]
            given[0][:] = q
            outs = [np.full(s, np.nan) for s in quantity.shapes]
            if len(outs) > 1:
                outs[1] = outs[0]
            else:
                outs[0] = shared[robot.nq - 1:robot.nq - 1 + robot.nv]    # its first entry is q's last
                outs[0][1:] = np.nan
            assert twin(*quantity.fixed, *given, *outs) == ERR_OVERLAP, name
            np.testing.assert_array_equal(given[0], q)                # nothing computed
            assert np.isnan(outs[-1][1:]).all(), name
    assert len(statuses) >= 3, statuses                               # success and at least two errors


def test_each_method_hands_over_to_a_row_named_after_it():
    """A reader finds a Robot method's registry row by the method's name (calls/__init__): every key robot.py
    hands to self._calls -- in a def's body or its forwards decorator -- is a row, named as the method or holding
    its name after "_" (Robot.dynamics: "_dynamics", "_dynamics_with_regressor")."""
    import ast
    import inspect

    from robot_dynamics import robot as module
    from robot_dynamics.calls.kernels import ROWS
    tree = ast.parse(inspect.getsource(module))
    found = 0
    for method in (n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body
                   if isinstance(n, ast.FunctionDef)):
        keys = [ast.literal_eval(n.slice) for n in ast.walk(method) if isinstance(n, ast.Subscript)
                and isinstance(n.value, ast.Attribute) and n.value.attr == "_calls"]     # a name written out
        keys += [d.args[0].value for d in method.decorator_list
                 if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "forwards"]
        for key in keys:
            assert key in ROWS, (method.name, key)
            assert key == method.name or (key.startswith("_") and method.name in key), (method.name, key)
            found += 1
    assert found > 40, found
