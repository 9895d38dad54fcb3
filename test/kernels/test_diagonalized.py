"""The diagonalized equations nu_dot + C(theta, nu) = epsilon (paper 003): against the factors rebuilt in numpy,
energy, the no-work property, finite differences along the motion, and the reciprocal recursion."""
import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_path, relative_error
from test_identities import CASES, EXACT, FD_TOL, H, IDS, massive_parameters, make


@pytest.fixture(params=CASES, ids=IDS)
def case(request):
    """A seeded random tree with every joint type and massive bodies, a state and a torque."""
    seed, floating_base = request.param
    rng = np.random.default_rng(800 + seed)
    robot = make(seed, floating_base)
    robot = robot.with_parameters(massive_parameters(robot, rng))
    q, v = robot.random_state(rng)
    return robot, q, v, rng.normal(size=robot.nv)


def test_against_the_factors(case):
    """nu = m^T qdot and epsilon = m^-1 (tau - g) with m = L chol(D) formed in numpy from robot.innovations
    (eqs. (5.1)-(5.3)); 1/2 nu^T nu = 1/2 qdot^T M qdot; nu^T C(theta, nu) = 0 (eq. (7.5)); from_diagonalized
    inverts nu (Table 2)."""
    robot, q, v, tau = case
    d, f = robot.diagonalized(q, v, tau), robot.innovations(q)
    m = f.L @ np.linalg.cholesky(f.D)                  # D is block diagonal: its Cholesky factor is block by block
    assert relative_error(d.nu, m.T @ v) < EXACT
    assert relative_error(d.epsilon, np.linalg.solve(m, tau - robot.gravity_vector(q))) < EXACT
    M = robot.mass_matrix(q)
    assert relative_error(0.5 * d.nu @ d.nu, 0.5 * v @ M @ v) < EXACT
    assert abs(d.nu @ d.coriolis) < EXACT * np.linalg.norm(d.nu) * np.linalg.norm(d.coriolis)
    assert relative_error(robot.from_diagonalized(q, d.nu), v) < EXACT


def test_equations_of_motion_along_the_motion(case):
    """d nu/dt (central differences along q(t) = q (+) (t v + t^2/2 a), v(t) = v + t a, a the forward dynamics under
    tau) + C(theta, nu) = epsilon; and C does not depend on tau."""
    robot, q, v, tau = case
    a = robot.forward_dynamics(q, v, tau)

    def nu(h):
        return robot.diagonalized(robot.integrate(q, h * v + 0.5 * h * h * a), v + h * a).nu

    d = robot.diagonalized(q, v, tau)
    assert relative_error((nu(H) - nu(-H)) / (2 * H) + d.coriolis, d.epsilon) < FD_TOL
    without = robot.diagonalized(q, v)
    assert without.epsilon is None
    assert relative_error(without.coriolis, d.coriolis) < EXACT


def test_real_robot_batch_and_out():
    """solo12 (floating base): a batch against its single states, and out=."""
    robot = rd.load_urdf(erd_path("solo12.urdf"), floating_base=True)
    rng = np.random.default_rng(4)
    Q = np.array([robot.random_configuration(rng) for _ in range(3)])
    V, T = rng.normal(size=(2, 3, robot.nv))
    d = robot.diagonalized(Q, V, T)
    out = rd.Diagonalized(*(np.full(V.shape, np.nan) for _ in range(3)))
    assert robot.diagonalized(Q, V, T, out=out) is out
    for i in range(3):
        one = robot.diagonalized(Q[i], V[i], T[i])
        for name in ("nu", "epsilon", "coriolis"):
            assert relative_error(getattr(d, name)[i], getattr(one, name)) < EXACT, name
            assert relative_error(getattr(out, name)[i], getattr(one, name)) < EXACT, name
        assert relative_error(0.5 * one.nu @ one.nu, robot.kinetic_energy(Q[i], V[i])) < EXACT
    assert relative_error(robot.from_diagonalized(Q, d.nu), V) < EXACT
    with pytest.raises(ValueError, match="out.epsilon must be an array exactly when tau is given"):
        robot.diagonalized(Q, V, out=out)
    with pytest.raises(ValueError, match="out must be a Diagonalized"):
        robot.diagonalized(Q, V, T, out=(1, 2, 3))
    with pytest.raises(ValueError, match="tau contains non-finite"):
        robot.diagonalized(Q[0], V[0], np.full(robot.nv, np.inf))
