"""Issue 13 (reliability), item 5: an out= that overlaps an input, or another out, is refused on every method
(the registry's, the hand-written and those computed in Python), for one state and for a batch; views
whose extents overlap but that share no element are accepted.  The quadruped is conftest.py's.

Each test reproduces a failure of the issue: an out= that silently corrupted its results.
"""
import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_path
from reliability_helpers import ROWS, public


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
    constant = [robot.frame_names[-1:]] if "contacts" in row.inputs else \
        [robot.frame_names[-1]] if "frame" in row.inputs else []  # a point contact at the last link: 3 force rows
    return public(robot, name, [*args, *constant], outs)


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
