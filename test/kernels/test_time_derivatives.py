"""Time derivatives of M, C, g, J_com along a motion, and derivatives with respect to the inertial parameters.

Routes: central differences of our own dynamics() along q(t) = integrate(q, t v + t^2/2 a), v(t) = v + t a (h =
1e-5, documented tolerance 1e-7 relative as in test_identities), on seeded random trees with every joint type,
fixed and floating; Mdot = C + C^T (paper 002, remark 5), which the closed form does not use (1e-12); a single
free rigid body, whose M in body coordinates is constant (Mdot = 0); gdot against Pinocchio's
computeGeneralizedGravityDerivatives times v (1e-9); and the parameter derivatives against the linearity of M, C,
g in pi, evaluated by an independently built robot with other parameters (1e-12).
"""
import numpy as np
import pinocchio as pin
import pytest

import robot_dynamics as rd
from oracle import relative_error
from random_urdf import random_urdf
from test_identities import BALL_CASES, ROUNDOFF, case_ids, make
from test_pinocchio import CASES, IDS, TOL, pair

FD_TOL, H, EXACT = 1e-7, 1e-5, 1e-12
TREES = [(seed, fb) for seed in range(6) for fb in (False, True)] + BALL_CASES   # ball joints from MJCF
TREE_IDS = case_ids(TREES)

FREE_BODY = """<robot name="brick"><link name="brick"><inertial><origin xyz="0.1 -0.05 0.2" rpy="0.3 0.2 0.1"/>
<mass value="2.5"/><inertia ixx="0.3" ixy="0.01" ixz="0.02" iyy="0.2" iyz="0.03" izz="0.25"/></inertial></link>
</robot>"""


@pytest.mark.parametrize("seed, floating_base", TREES, ids=TREE_IDS)
def test_time_derivatives_along_a_motion(seed, floating_base):
    robot = make(seed, floating_base)
    rng = np.random.default_rng(700 + seed)
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    t = robot.time_derivatives(q, v, a)

    def at(h):
        return robot.dynamics(robot.integrate(q, h * v + 0.5 * h * h * a), v + h * a)

    later, earlier, now = at(H), at(-H), robot.dynamics(q, v)
    for ours, name in ((t.M_dot, "M"), (t.C_dot, "C"), (t.g_dot, "g"), (t.J_com_dot, "J_com")):
        rate = (getattr(later, name) - getattr(earlier, name)) / (2 * H)
        assert relative_error(ours, rate) < FD_TOL, name
    assert relative_error(t.M_dot, now.C + now.C.T) < EXACT
    assert relative_error(robot.gravity_derivative(q, v), t.g_dot) < EXACT     # its own O(n) entry point
    batch = robot.time_derivatives(np.stack([q, q]), np.stack([v, v]), np.stack([a, a]))
    for name in ("M_dot", "C_dot", "g_dot", "J_com_dot"):
        np.testing.assert_allclose(getattr(batch, name)[1], getattr(t, name), rtol=0,
                                   atol=1e-13 * max(1.0, np.abs(getattr(t, name)).max()), err_msg=name)


@pytest.mark.parametrize("seed, floating_base", [(0, False), (2, True), (3, True)], ids=["seed0-fixed",
                                                                                     "seed2-floating", "seed3-floating"])
def test_regressor_rate_along_a_reference(seed, floating_base):
    """Y_dot against central differences of Y along q(t), v(t) and v_r(t) = v_r + t a_r + t^2/2 j_r, a_r(t) =
    a_r + t j_r; and Y_dot pi = M_dot a_r + M j_r + C_dot v_r + C a_r + g_dot (exact)."""
    robot = make(seed, floating_base)
    rng = np.random.default_rng(900 + seed)
    q, v = robot.random_state(rng)
    a, vr, ar, jr = rng.normal(size=(4, robot.nv))
    t = robot.time_derivatives(q, v, a, vr, ar, jr)

    def Y(h):
        return robot.regressor(robot.integrate(q, h * v + 0.5 * h * h * a), v + h * a,
                               vr + h * ar + 0.5 * h * h * jr, ar + h * jr)

    assert relative_error(t.Y_dot, (Y(H) - Y(-H)) / (2 * H)) < FD_TOL
    d = robot.dynamics(q, v)
    assert relative_error(t.Y_dot @ robot.parameters,
                          t.M_dot @ ar + d.M @ jr + t.C_dot @ vr + d.C @ ar + t.g_dot) < EXACT
    plain = robot.time_derivatives(q, v, a)
    assert plain.Y_dot is None
    # two kernels that share the code of C_dot but are compiled apart: with fused multiply-adds, whether a shared
    # callee is inlined (it is not when loaded from numba's cache) may move the last bit (test_identities.ROUNDOFF)
    assert relative_error(plain.C_dot, t.C_dot) < ROUNDOFF
    with pytest.raises(ValueError, match="give v_ref, a_ref and j_ref"):
        robot.time_derivatives(q, v, a, vr, ar)


def test_a_free_rigid_body_has_constant_mass_matrix():
    """M of a free body in its own coordinates is its spatial inertia Lambda: Mdot = 0 whatever the motion, and
    C v is the gyroscopic wrench -adj(v)^T Lambda v (paper 002, eq. (2))."""
    from robot_dynamics.spatial import adj
    robot = rd.load_urdf(FREE_BODY, floating_base=True)
    rng = np.random.default_rng(3)
    q, v = robot.random_state(rng)
    t = robot.time_derivatives(q, v, rng.normal(size=6))
    M = robot.mass_matrix(q)
    assert np.abs(t.M_dot).max() < 1e-14 * np.abs(M).max()
    assert relative_error(robot.coriolis_matrix(q, v) @ v, -adj(v).T @ M @ v) < EXACT


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_gravity_rate_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    rng = np.random.default_rng(len(name) + 7)
    q, v = robot.random_state(rng)
    dg_dq = pin.computeGeneralizedGravityDerivatives(twin.model, twin.data, twin.q(q))
    t = robot.time_derivatives(q, v, rng.normal(size=robot.nv))
    assert relative_error(t.g_dot, twin.mat(dg_dq) @ v) < TOL


def test_out_is_a_time_derivatives():
    robot, _ = pair("ur5_robot.urdf", False)
    q, v = robot.random_state(1)
    expected = robot.time_derivatives(q, v, v)
    out = rd.TimeDerivatives(*(np.full(x.shape, np.nan) for x in (expected.M_dot, expected.C_dot, expected.g_dot,
                                                                    expected.J_com_dot)))
    assert robot.time_derivatives(q, v, v, out=out) is out
    np.testing.assert_array_equal(out.C_dot, expected.C_dot)
    with pytest.raises(ValueError, match="out must be a TimeDerivatives"):
        robot.time_derivatives(q, v, v, out=(out.M_dot, out.C_dot, out.g_dot, out.J_com_dot))
    with pytest.raises(ValueError, match="out.Y_dot must be an array exactly when"):
        robot.time_derivatives(q, v, v, v, v, v, out=out)


@pytest.mark.parametrize("seed, floating_base", [(1, True), (4, False)], ids=["seed1-floating", "seed4-fixed"])
def test_parameter_derivatives_are_the_linear_maps(seed, floating_base):
    """M(pi) = dM_dpi pi, C and g likewise (paper 002, Prop. 2): at the robot's own pi, and at other parameters
    through a robot built with them."""
    robot = rd.load_urdf(random_urdf(seed, n_links=7), floating_base=floating_base)
    rng = np.random.default_rng(seed)
    q, v = robot.random_state(rng)
    d = robot.parameter_derivatives(q, v)
    other = robot.parameters * rng.uniform(0.5, 1.5, robot.parameters.size)
    for pi, r in ((robot.parameters, robot), (other, robot.with_parameters(other))):
        expected = r.dynamics(q, v)
        assert relative_error(d.dM_dpi @ pi, expected.M) < EXACT
        assert relative_error(d.dC_dpi @ pi, expected.C) < EXACT
        assert relative_error(d.dg_dpi @ pi, expected.g) < EXACT
    batch = robot.parameter_derivatives(np.stack([q, q]), np.stack([v, v]))
    assert batch.dC_dpi.shape == (2, robot.nv, robot.nv, robot.parameters.size)
    np.testing.assert_array_equal(batch.dC_dpi[1], batch.dC_dpi[0])
    out = rd.ParameterDerivatives(*(np.full(x.shape, np.nan) for x in (batch.dM_dpi, batch.dC_dpi, batch.dg_dpi)))
    assert robot.parameter_derivatives(np.stack([q, q]), np.stack([v, v]), out=out) is out
    for name in ("dM_dpi", "dC_dpi", "dg_dpi"):
        np.testing.assert_array_equal(getattr(out, name), getattr(batch, name), err_msg=name)
    with pytest.raises(ValueError, match=r"out.dg_dpi must be a writeable float64 array of shape"):
        robot.parameter_derivatives(q, v, out=rd.ParameterDerivatives(d.dM_dpi, d.dC_dpi, np.empty(3)))
