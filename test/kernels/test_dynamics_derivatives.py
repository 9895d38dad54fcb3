"""Derivatives of inverse and forward dynamics, and the linearization built on them.

Three independent routes: Pinocchio's computeRNEADerivatives and computeABADerivatives on the real robots of
test_pinocchio.py, fixed and floating base (1e-9 relative, single states and the batched path); central
differences of our own inverse_dynamics, forward_dynamics and integrate along tangent directions, on seeded random
trees with every joint type (h = 1e-5: truncation ~h^2, round-off ~1e-16/h, documented tolerance 1e-7 relative);
and identities (M^-1 M = E, the linearization's blocks).
"""
import numpy as np
import pinocchio as pin
import pytest

import robot_dynamics as rd
from oracle import erd_path, relative_error
from random_urdf import random_urdf
from test_identities import BALL_CASES, BALL_SEEDS, case_ids, make, massive_parameters
from test_pinocchio import CASES, IDS, TOL, pair

FD_TOL, H = 1e-7, 1e-5
EXACT = 1e-12
TREES = [(seed, fb) for seed in range(6) for fb in (False, True)] + BALL_CASES   # ball joints from MJCF
TREE_IDS = case_ids(TREES)


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    rng = np.random.default_rng(len(name))
    Q = np.array([robot.random_configuration(rng) for _ in range(2)])
    V, A = rng.normal(size=(2, 2, robot.nv))
    TAU = robot.inverse_dynamics(Q, V, A)
    single = [robot.inverse_dynamics_derivatives(Q[i], V[i], A[i]) for i in range(2)]
    batched = robot.inverse_dynamics_derivatives(Q, V, A)
    fd_single = [robot.forward_dynamics_derivatives(Q[i], V[i], TAU[i]) for i in range(2)]
    fd_batched = robot.forward_dynamics_derivatives(Q, V, TAU)
    for i in range(2):
        dq, dv, _ = pin.computeRNEADerivatives(twin.model, twin.data, twin.q(Q[i]), twin.v(V[i]), twin.v(A[i]))
        M = twin.mass_matrix(Q[i])
        pin.computeABADerivatives(twin.model, twin.data, twin.q(Q[i]), twin.v(V[i]), twin.v(TAU[i]))
        for ours in (single[i], [x[i] for x in batched]):
            for what, x, y in (("dtau_dq", ours[0], twin.mat(dq)), ("dtau_dv", ours[1], twin.mat(dv)),
                               ("M", ours[2], M)):
                assert relative_error(x, y) < TOL, what
        for ours in (fd_single[i], [x[i] for x in fd_batched]):
            for what, x, y in (("da_dq", ours[0], twin.mat(twin.data.ddq_dq)),
                               ("da_dv", ours[1], twin.mat(twin.data.ddq_dv)), ("M_inv", ours[2], np.linalg.inv(M))):
                assert relative_error(x, y) < TOL, what


def tree(seed, floating_base):
    robot = (make(seed, floating_base) if seed in BALL_SEEDS else
             rd.load_urdf(random_urdf(seed, n_links=8), floating_base=floating_base,
                          gravity=np.random.default_rng(seed).normal(size=3) * 5))
    rng = np.random.default_rng(500 + seed)
    return robot.with_parameters(massive_parameters(robot, rng)), rng


def central(f, x0, step, n):
    """Columns (f(step(x0, +H e_i)) - f(step(x0, -H e_i))) / 2H, i < n."""
    return np.stack([(f(step(x0, H * e)) - f(step(x0, -H * e))) / (2 * H) for e in np.eye(n)], axis=-1)


@pytest.mark.parametrize("seed, floating_base", TREES, ids=TREE_IDS)
def test_against_finite_differences(seed, floating_base):
    """Along the tangent directions of integrate (Pinocchio's convention for q), and along v and tau."""
    robot, rng = tree(seed, floating_base)
    q, v = robot.random_state(rng)
    a, tau = rng.normal(size=(2, robot.nv))
    dq, dv, M = robot.inverse_dynamics_derivatives(q, v, a)
    assert relative_error(dq, central(lambda x: robot.inverse_dynamics(x, v, a), q, robot.integrate, robot.nv)) < FD_TOL
    assert relative_error(dv, central(lambda x: robot.inverse_dynamics(q, x, a), v, np.add, robot.nv)) < FD_TOL
    assert relative_error(M, robot.mass_matrix(q)) < EXACT
    fq, fv, M_inv = robot.forward_dynamics_derivatives(q, v, tau)
    assert relative_error(fq, central(lambda x: robot.forward_dynamics(x, v, tau), q, robot.integrate,
                                      robot.nv)) < FD_TOL
    assert relative_error(fv, central(lambda x: robot.forward_dynamics(q, x, tau), v, np.add, robot.nv)) < FD_TOL
    assert relative_error(M_inv @ robot.mass_matrix(q), np.eye(robot.nv)) < EXACT
    # the derivatives of FD are those of ID at a = FD(q, v, tau), through M^-1 (the implicit function theorem)
    dq, dv, _ = robot.inverse_dynamics_derivatives(q, v, robot.forward_dynamics(q, v, tau))
    assert relative_error(fq, -M_inv @ dq) < EXACT and relative_error(fv, -M_inv @ dv) < EXACT


def euler_step_differences(robot, q, v, tau, dt):
    """Central differences of one semi-implicit Euler step x+ = step(x, u) at (q, v, tau), with respect to the
    state deviation x = (dq, dv) and to u: what linearize(q, v, tau, dt) must return.  The next state's deviation
    is difference(q+, .) in the tangent space at the nominal q+."""
    nv = robot.nv

    def step(x, u):
        qx = robot.integrate(q, x[:nv])
        v_next = v + x[nv:] + dt * robot.forward_dynamics(qx, v + x[nv:], u)
        return robot.integrate(qx, v_next, dt), v_next

    q1, v1 = step(np.zeros(2 * nv), tau)

    def deviation(state):
        return np.concatenate([robot.difference(q1, state[0]), state[1] - v1])

    return (central(lambda x: deviation(step(x, tau)), np.zeros(2 * nv), np.add, 2 * nv),
            central(lambda u: deviation(step(np.zeros(2 * nv), u)), tau, np.add, nv))


@pytest.mark.parametrize("seed, floating_base", [(2, True), (5, False)], ids=["seed2-floating", "seed5-fixed"])
def test_discrete_linearization_is_one_euler_step(seed, floating_base):
    """A, B of x+ = step(x, u) (semi-implicit Euler) against central differences of step, with the next state's
    dq+ = difference(q+, .) in the tangent space at the nominal q+ (both trees have planar and free joints).
    The continuous pair's last rows are da/dq, da/dv and M^-1 -- the discrete ones' as dt -> 0."""
    robot, rng = tree(seed, floating_base)
    assert {"planar", "floating"} & {j.type for j in robot.model.joints}
    q, v = robot.random_state(rng)
    tau, dt, nv = rng.normal(size=robot.nv), 0.01, robot.nv
    A, B = robot.linearize(q, v, tau, dt)
    A_fd, B_fd = euler_step_differences(robot, q, v, tau, dt)
    assert relative_error(A, A_fd) < FD_TOL
    assert relative_error(B, B_fd) < FD_TOL
    Ac, Bc = robot.linearize(q, v, tau)
    fq, fv, M_inv = robot.forward_dynamics_derivatives(q, v, tau)
    np.testing.assert_array_equal(Ac, np.block([[np.zeros((nv, nv)), np.eye(nv)], [fq, fv]]))
    np.testing.assert_array_equal(Bc, np.vstack([np.zeros((nv, nv)), M_inv]))
    batched = robot.linearize(np.stack([q, q]), np.stack([v, v]), np.stack([tau, tau]), dt)
    for x, y in zip(batched, (A, B)):
        np.testing.assert_allclose(x, np.stack([y, y]), rtol=0, atol=1e-12 * np.abs(y).max())


def test_lqr_on_the_linearized_arm():
    """An LQR user's path: the discrete pair of the bundled arm, hanging at rest under gravity compensation,
    gives a stabilizing gain (closed-loop spectral radius below one)."""
    from scipy.linalg import solve_discrete_are
    from robot_dynamics.bundled import bundled_urdf
    robot = rd.load_urdf(bundled_urdf("arm7"))
    q, v = robot.neutral(), np.zeros(robot.nv)
    A, B = robot.linearize(q, v, robot.gravity_vector(q), dt=0.01)
    Qx, R = np.eye(2 * robot.nv), 0.1 * np.eye(robot.nv)
    P = solve_discrete_are(A, B, Qx, R)
    K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
    assert max(abs(np.linalg.eigvals(A - B @ K))) < 1.0


def test_errors_name_the_culprit():
    robot = rd.load_urdf(erd_path("panda.urdf"), mimic=True)
    q, v = robot.random_state(0)
    with pytest.raises(ValueError, match="mimic"):
        robot.inverse_dynamics_derivatives(q, v, v)
    robot = rd.load_urdf(erd_path("ur5_robot.urdf"))
    q, v = robot.random_state(0)
    with pytest.raises(ValueError, match="a contains non-finite"):
        robot.inverse_dynamics_derivatives(q, v, np.full(robot.nv, np.nan))
    with pytest.raises(ValueError, match=r"out must be a tuple of 3 arrays \(da_dq, da_dv, M_inv\)"):
        robot.forward_dynamics_derivatives(q, v, v, out=np.zeros((6, 6)))
    with pytest.raises(ValueError, match=r"out\[2\] must be a writeable float64 array of shape \(6, 6\)"):
        robot.forward_dynamics_derivatives(q, v, v, out=(np.zeros((6, 6)), np.zeros((6, 6)), np.zeros(6)))
