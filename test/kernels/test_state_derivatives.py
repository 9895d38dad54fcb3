"""Derivatives of M, C, g, J_com with respect to the state (paper 002, Prop. 5), the last index the direction.

Routes: central differences of our own M, C, g, J_com along the tangent directions of integrate and along v
(h = 1e-5, documented tolerance 1e-7 relative, as in test_identities) on seeded random trees with every joint
type, fixed and floating; the time derivatives of test_time_derivatives, computed by another closed form, are
their contractions with the motion: Mdot = dM/dq v, Cdot = dC/dq v + dC/dv a, gdot = dg/dq v (1e-12); C is linear
in v: C = dC/dv v (1e-12); dg/dq against Pinocchio's computeGeneralizedGravityDerivatives on the real robots
(1e-9).
"""
import numpy as np
import pinocchio as pin
import pytest

import robot_dynamics as rd
from oracle import erd_path, relative_error
from test_identities import BALL_CASES, case_ids, make
from test_pinocchio import CASES, IDS, TOL, pair

FD_TOL, H, EXACT = 1e-7, 1e-5, 1e-12
TREES = [(seed, fb) for seed in range(6) for fb in (False, True)] + BALL_CASES   # ball joints from MJCF
TREE_IDS = case_ids(TREES)


def central(f, step, x0, n):
    return np.stack([(f(step(x0, H * e)) - f(step(x0, -H * e))) / (2 * H) for e in np.eye(n)], axis=-1)


@pytest.mark.parametrize("seed, floating_base", TREES, ids=TREE_IDS)
def test_state_derivatives(seed, floating_base):
    robot = make(seed, floating_base)
    rng = np.random.default_rng(800 + seed)
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    d = robot.state_derivatives(q, v)
    for ours, name in ((d.dM_dq, "M"), (d.dC_dq, "C"), (d.dg_dq, "g"), (d.dJcom_dq, "J_com")):
        assert relative_error(ours, central(lambda x: getattr(robot.dynamics(x, v), name), robot.integrate, q,
                                            robot.nv)) < FD_TOL, name
    assert relative_error(d.dC_dv, central(lambda x: robot.coriolis_matrix(q, x), np.add, v, robot.nv)) < FD_TOL
    t = robot.time_derivatives(q, v, a)
    assert relative_error(t.M_dot, d.dM_dq @ v) < EXACT
    assert relative_error(t.C_dot, d.dC_dq @ v + d.dC_dv @ a) < EXACT
    assert relative_error(t.g_dot, d.dg_dq @ v) < EXACT
    assert relative_error(t.J_com_dot, d.dJcom_dq @ v) < EXACT
    assert relative_error(robot.coriolis_matrix(q, v), d.dC_dv @ v) < EXACT
    batch = robot.state_derivatives(np.stack([q, q]), np.stack([v, v]))
    np.testing.assert_allclose(batch.dC_dq[1], d.dC_dq, rtol=0, atol=1e-13 * np.abs(d.dC_dq).max())
    fields = rd.StateDerivatives.__slots__        # every entry is written (the kernel has no zeroing pass): an out
    out = rd.StateDerivatives(*(np.full(getattr(d, f).shape, np.nan) for f in fields))     # of NaNs keeps none
    robot.state_derivatives(q, v, out=out)
    for f in fields:
        np.testing.assert_allclose(getattr(out, f), getattr(d, f), rtol=0, atol=1e-13 * np.abs(getattr(d, f)).max())


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_gravity_derivative_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    q, v = robot.random_state(np.random.default_rng(len(name) + 11))
    expected = twin.mat(pin.computeGeneralizedGravityDerivatives(twin.model, twin.data, twin.q(q)))
    assert relative_error(robot.state_derivatives(q, v).dg_dq, expected) < TOL


def test_out_is_a_state_derivatives():
    robot, _ = pair("ur5_robot.urdf", False)
    q, v = robot.random_state(2)
    expected = robot.state_derivatives(q, v)
    out = rd.StateDerivatives(*(np.full(getattr(expected, f).shape, np.nan) for f in rd.StateDerivatives.__slots__))
    assert robot.state_derivatives(q, v, out=out) is out
    np.testing.assert_array_equal(out.dC_dq, expected.dC_dq)
    with pytest.raises(ValueError, match="out must be a StateDerivatives"):
        robot.state_derivatives(q, v, out=np.zeros(3))


def test_joints_coupled_by_mimics_are_refused():
    """A mimic coordinate moves several joints; state_derivatives says so rather than returning wrong numbers."""
    robot = rd.load_urdf(erd_path("panda.urdf"), mimic=True)
    q, v = robot.random_state(0)
    with pytest.raises(ValueError, match="mimic"):
        robot.state_derivatives(q, v)
