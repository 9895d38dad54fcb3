"""`out=` buffers and strided inputs: the same numbers as the allocating path, written where the caller asked.

The single-state kernels are resolved for arrays of any strides; these tests feed them views whose strides matter
(a column of a 2-column array, interleaved with a different state), so a kernel that ignored the strides would
read the wrong numbers and fail the exact comparisons.
"""
import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_path
from robot_dynamics.algorithms.registry import QUANTITIES


@pytest.fixture(scope="module")
def robot(quadruped):
    """conftest.py's quadruped (floating base), loaded for this module."""
    return quadruped


def methods(robot):
    """(name, positional state arguments' kinds, result shape) of every method that takes out=: the registry's
    quantities (algorithms/registry.py) with one array result; the scalar ones are test_scalar_out's, those with
    several results test_tuple_out's."""
    sizes = {"nq": robot.nq, "nv": robot.nv, "nb": robot.nbodies, "ny": 10 * robot.nbodies}
    return [(row.name, "".join(name[0] if name[0] == "q" else "v" for name in row.inputs),
             tuple(sizes.get(n, n) for n in row.shapes[0]))
            for row in QUANTITIES if not row.name.startswith("_") and len(row.shapes) == 1 and row.shapes[0] != ()]


def states(robot, kinds, rng, batch=()):
    """Random arguments for `kinds` ('q' then 'v's), with leading batch shape."""
    n = int(np.prod(batch))
    q = np.array([robot.random_configuration(rng) for _ in range(n)]).reshape(batch + (robot.nq,))
    return [q] + [rng.normal(size=batch + (robot.nv,)) for _ in kinds[1:]]


def strided_copy(x, rng):
    """x as a non-contiguous view: column 0 of an array whose other column holds different numbers."""
    both = np.stack([x, rng.normal(size=x.shape)], axis=-1)
    view = both[..., 0]
    assert not view.flags.c_contiguous and np.array_equal(view, x, equal_nan=True)
    return view


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)], ids=["single", "batch3", "batch2x2"])
def test_out_receives_the_same_numbers(robot, batch):
    rng = np.random.default_rng(0)
    for name, kinds, shape in methods(robot):
        method = getattr(robot, name)
        args = states(robot, kinds, rng, batch)
        expected = method(*args)
        out = np.full(batch + shape, np.nan)
        assert method(*args, out=out) is out, name
        np.testing.assert_array_equal(out, expected, err_msg=name)
        strided_out = strided_copy(np.full(batch + shape, np.nan), rng)
        assert method(*args, out=strided_out) is strided_out, name
        np.testing.assert_array_equal(strided_out, expected, err_msg=name + " into a strided out")


def test_strided_inputs_are_read_by_their_strides(robot):
    rng = np.random.default_rng(1)
    for name, kinds, _ in methods(robot):
        method = getattr(robot, name)
        args = states(robot, kinds, rng)
        views = [strided_copy(x, rng) for x in args]
        np.testing.assert_array_equal(method(*views), method(*args), err_msg=name)
    q, v, vr, ar = states(robot, "qvvv", rng)
    expected = robot.dynamics(q, v, vr, ar)
    got = robot.dynamics(*(strided_copy(x, rng) for x in (q, v, vr, ar)))
    for field in ("M", "C", "g", "com", "J_com", "Y"):
        np.testing.assert_array_equal(getattr(got, field), getattr(expected, field), err_msg=field)


def empty_dynamics(robot, batch, with_y, strided=False, rng=None):
    nv = robot.nv
    shapes = [(nv, nv), (nv, nv), (nv,), (3,), (3, nv)] + ([(nv, 10 * robot.nbodies)] if with_y else [])
    arrays = [np.full(batch + s, np.nan) for s in shapes]
    if strided:
        arrays = [strided_copy(x, rng) for x in arrays]
    return rd.Dynamics(*arrays, *([] if with_y else [None]))


@pytest.mark.parametrize("batch", [(), (4,), (2, 3)], ids=["single", "batch4", "batch2x3"])
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
@pytest.mark.parametrize("with_y", [False, True], ids=["without_Y", "with_Y"])
def test_dynamics_out(robot, batch, strided, with_y):
    rng = np.random.default_rng(2)
    q, v, vr, ar = states(robot, "qvvv", rng, batch)
    refs = (vr, ar) if with_y else ()
    expected = robot.dynamics(q, v, *refs)
    out = empty_dynamics(robot, batch, with_y, strided, rng)
    assert robot.dynamics(q, v, *refs, out=out) is out
    for field in ("M", "C", "g", "com", "J_com") + (("Y",) if with_y else ()):
        # the batch runs a separately compiled parallel kernel: equal to round-off (test_identities.ROUNDOFF)
        np.testing.assert_allclose(getattr(out, field), getattr(expected, field), rtol=0, atol=1e-13,
                                   err_msg=field)


def test_dynamics_out_whose_batch_dimensions_do_not_merge(robot):
    """Transposed batch dimensions cannot be viewed as one: the results are computed apart and copied in."""
    rng = np.random.default_rng(8)
    q, v, vr, ar = states(robot, "qvvv", rng, (2, 3))
    expected = robot.dynamics(q, v, vr, ar)
    transposed = empty_dynamics(robot, (3, 2), True)
    out = rd.Dynamics(*(x.swapaxes(0, 1) for x in (transposed.M, transposed.C, transposed.g, transposed.com,
                                                   transposed.J_com, transposed.Y)))
    assert robot.dynamics(q, v, vr, ar, out=out) is out
    for field in ("M", "C", "g", "com", "J_com", "Y"):
        np.testing.assert_array_equal(getattr(out, field), getattr(expected, field), err_msg=field)


def test_coupled_mimic_forward_dynamics_out():
    """The Cholesky route of forward dynamics (coupled mimic joints) writes into out as well."""
    robot = rd.load_urdf(erd_path("panda.urdf"), mimic=True)
    rng = np.random.default_rng(3)
    q, v, tau = states(robot, "qvv", rng, (2,))
    out = np.full((2, robot.nv), np.nan)
    assert robot.forward_dynamics(q, v, tau, out=out) is out
    np.testing.assert_array_equal(out, robot.forward_dynamics(q, v, tau))
    np.testing.assert_allclose(robot.inverse_dynamics(q, v, out), tau, rtol=0, atol=1e-11)


@pytest.mark.parametrize("out, culprit", [
    (np.zeros(17), r"out must be a writeable float64 array of shape \(18,\), got a float64 array of shape \(17,\)"),
    (np.zeros(18, dtype=np.float32), r"out must be .* got a float32 array"),
    (np.zeros(18, dtype=int), r"out must be .* got a int64 array"),
    (np.zeros((1, 18)), r"got a float64 array of shape \(1, 18\)"),
    ([0.0] * 18, r"out must be .* got list"),
])
def test_bad_out_names_the_culprit_and_loses_nothing(robot, out, culprit):
    q = robot.random_configuration(5)
    keep = q.copy()
    with pytest.raises(ValueError, match=culprit):
        robot.gravity_vector(q, out=out)
    np.testing.assert_array_equal(q, keep)
    read_only = np.zeros(18)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="got a read-only float64 array"):
        robot.gravity_vector(q, out=read_only)
    assert not read_only.any()


def test_bad_dynamics_out_names_the_culprit(robot):
    q, v = robot.random_state(6)
    with pytest.raises(ValueError, match="out must be a Dynamics"):
        robot.dynamics(q, v, out=np.zeros(3))
    with pytest.raises(ValueError, match=r"out.Y must be an array exactly when v_ref and a_ref are given"):
        robot.dynamics(q, v, v, v, out=empty_dynamics(robot, (), with_y=False))
    with pytest.raises(ValueError, match=r"out.Y must be an array exactly"):
        robot.dynamics(q, v, out=empty_dynamics(robot, (), with_y=True))
    wrong = empty_dynamics(robot, (2,), with_y=False)
    with pytest.raises(ValueError, match=r"out.M must be a writeable float64 array of shape \(18, 18\)"):
        robot.dynamics(q, v, out=wrong)


def test_other_dtypes_and_containers_are_converted_not_misread(robot):
    """Only float64 arrays go to the kernels as they are; float32, integers, lists and big-endian arrays are
    converted first (the compiled entry points read raw memory as float64)."""
    rng = np.random.default_rng(9)
    q = robot.neutral()
    q[7:] = rng.integers(-2, 3, size=robot.nq - 7)          # integer joint angles: exact in every dtype below
    v = rng.integers(-3, 4, size=robot.nv).astype(float)
    expected = robot.coriolis_matrix(q, v)
    for convert in (lambda x: x.astype(np.float32), lambda x: x.astype(np.int64), lambda x: x.tolist(),
                    lambda x: x.astype(">f8")):
        np.testing.assert_array_equal(robot.coriolis_matrix(convert(q), convert(v)), expected)
        np.testing.assert_array_equal(robot.gravity_vector(convert(q)), robot.gravity_vector(q))


@pytest.mark.parametrize("name, kinds", [("kinetic_energy", "qv"), ("potential_energy", "q")])
def test_scalar_out(robot, name, kinds):
    """A scalar per state: a 0-d out for one state (a float is returned without it), a strided (B,) out for a
    batch -- the same numbers as without out (and the batch's, from the parallel loop, those of single calls to
    round-off, as in test_identities)."""
    rng = np.random.default_rng(12)
    method = getattr(robot, name)
    args = states(robot, kinds, rng)
    expected = method(*args)
    assert np.ndim(expected) == 0 and not isinstance(expected, np.ndarray)
    out = np.full((), np.nan)
    assert method(*args, out=out) is out and out == expected
    batch = states(robot, kinds, rng, (3,))
    expected = method(*batch)
    assert expected.shape == (3,)
    np.testing.assert_allclose(expected, [method(*(x[i] for x in batch)) for i in range(3)], rtol=1e-13, atol=0)
    out = strided_copy(np.full(3, np.nan), rng)
    assert method(*batch, out=out) is out
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("batch", [(), (3,)], ids=["single", "batch3"])
def test_tuple_out(robot, batch):
    """Several results per state (the dynamics derivatives): out is a tuple of arrays, strided ones included."""
    rng = np.random.default_rng(13)
    for row in QUANTITIES:
        if row.name.startswith("_") or len(row.shapes) == 1:
            continue
        method = getattr(robot, row.name)
        args = states(robot, "".join(n[0] if n[0] == "q" else "v" for n in row.inputs), rng, batch)
        expected = method(*args)
        assert isinstance(expected, tuple) and len(expected) == len(row.shapes)
        out = tuple(strided_copy(np.full(x.shape, np.nan), rng) for x in expected)
        got = method(*args, out=out)
        assert all(x is y for x, y in zip(got, out)), row.name
        for x, y in zip(out, expected):
            np.testing.assert_array_equal(x, y, err_msg=row.name)
