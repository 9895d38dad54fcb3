"""The innovations factorization and M^-1 without M (paper 003, Identity 4.1): against np.linalg on our own M, and
against Pinocchio's computeMinverse on real robots, fixed and floating base."""
import numpy as np
import pinocchio as pin
import pytest

import robot_dynamics as rd
from oracle import erd_path, relative_error
from test_identities import CASES, EXACT, IDS, massive_parameters, make
from test_pinocchio import CASES as REAL, IDS as REAL_IDS, TOL, pair


@pytest.fixture(params=CASES, ids=IDS)
def case(request):
    """A seeded random tree with every joint type, every body massive (M positive definite), and a state."""
    seed, floating_base = request.param
    rng = np.random.default_rng(700 + seed)
    robot = make(seed, floating_base)
    robot = robot.with_parameters(massive_parameters(robot, rng))
    return robot, rng, robot.random_configuration(rng)


def test_factors_rebuild_the_mass_matrix(case):
    """M = L D L^T (4.1b), L L^-1 = I (4.1c), L unit upper triangular over the tree, D block diagonal per joint."""
    robot, _, q = case
    f = robot.innovations(q)
    M, E = robot.mass_matrix(q), np.eye(robot.nv)
    assert relative_error(f.L @ f.D @ f.L.T, M) < EXACT
    assert relative_error(f.L @ f.L_inv, E) < EXACT and relative_error(f.L_inv @ f.L, E) < EXACT
    np.testing.assert_array_equal(np.diag(f.L), 1.0)
    np.testing.assert_array_equal(np.tril(f.L, -1), 0.0)
    blocks = np.zeros((robot.nv, robot.nv), dtype=bool)
    for b in robot.model.bodies:
        blocks[b["iv"]:b["iv"] + b["nvj"], b["iv"]:b["iv"] + b["nvj"]] = True
    np.testing.assert_array_equal(f.D[~blocks], 0.0)
    parent_of = {b["iv"] + i: b for b in robot.model.bodies for i in range(b["nvj"])}
    for i, j in zip(*np.nonzero(np.triu(f.L, 1))):                 # L_ij != 0 only where i is above j in the tree
        k = int(np.flatnonzero(robot.model.bodies["iv"] == parent_of[j]["iv"])[0])
        ancestors = set()
        while k >= 0:
            b = robot.model.bodies[k]
            ancestors.update(range(b["iv"], b["iv"] + b["nvj"]))
            k = b["parent"]
        assert i in ancestors


def test_inverse_and_solve_against_linear_algebra(case):
    """M^-1 (4.1d) against np.linalg.inv(M); M^-1 x for one and several right-hand sides against np.linalg.solve;
    M^-1 (tau - C v - g) against forward dynamics (the articulated-body algorithm, a separate kernel)."""
    robot, rng, q = case
    M = robot.mass_matrix(q)
    assert relative_error(robot.inverse_mass_matrix(q), np.linalg.inv(M)) < EXACT
    x, X = rng.normal(size=robot.nv), rng.normal(size=(robot.nv, 3))
    assert relative_error(robot.solve_mass_matrix(q, x), np.linalg.solve(M, x)) < EXACT
    assert relative_error(robot.solve_mass_matrix(q, X), np.linalg.solve(M, X)) < EXACT
    v, tau = rng.normal(size=(2, robot.nv))
    d = robot.dynamics(q, v)
    assert relative_error(robot.solve_mass_matrix(q, tau - d.C @ v - d.g), robot.forward_dynamics(q, v, tau)) < EXACT


@pytest.mark.parametrize("name, floating_base", REAL, ids=REAL_IDS)
def test_inverse_mass_matrix_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    rng = np.random.default_rng(5)
    Q = np.array([robot.random_configuration(rng) for _ in range(3)])
    ours = robot.inverse_mass_matrix(Q)                                 # the batch, a parallel loop
    for i, q in enumerate(Q):
        theirs = pin.computeMinverse(twin.model, twin.data, twin.q(q))
        theirs = twin.mat(np.triu(theirs) + np.triu(theirs, 1).T)      # Pinocchio fills the upper triangle
        assert relative_error(ours[i], theirs) < TOL
        assert relative_error(robot.inverse_mass_matrix(q), theirs) < TOL
        f = robot.innovations(q)
        assert relative_error(f.L @ f.D @ f.L.T, twin.mass_matrix(q)) < TOL


def test_batches_and_out():
    """Leading batch dimensions and out= for the three methods, against the single states."""
    robot = make(3, True)
    robot = robot.with_parameters(massive_parameters(robot, np.random.default_rng(1)))
    rng = np.random.default_rng(2)
    Q = np.array([[robot.random_configuration(rng) for _ in range(3)] for _ in range(2)])     # (2, 3, nq)
    X = rng.normal(size=(2, 3, robot.nv, 4))
    got = robot.solve_mass_matrix(Q, X)
    vec = robot.solve_mass_matrix(Q, X[..., 0])
    f = robot.innovations(Q)
    out = rd.Innovations(*(np.full(f.L.shape, np.nan) for _ in range(3)))
    assert robot.innovations(Q, out=out) is out
    for i in range(2):
        for j in range(3):
            one = robot.solve_mass_matrix(Q[i, j], X[i, j])
            assert relative_error(got[i, j], one) < EXACT
            assert relative_error(vec[i, j], one[:, 0]) < EXACT
            assert relative_error(f.L[i, j], robot.innovations(Q[i, j]).L) < EXACT
            assert relative_error(out.D[i, j], f.D[i, j]) < EXACT
    into = np.full(X.shape, np.nan)
    assert robot.solve_mass_matrix(Q, X, out=into) is into
    np.testing.assert_array_equal(into, got)
    strided = np.full(X.shape[:-1] + (8,), np.nan)[..., ::2]           # a view that does not merge
    robot.solve_mass_matrix(Q, X, out=strided)
    np.testing.assert_array_equal(strided, got)


def test_bad_input_names_the_culprit():
    robot = make(3, False)
    q = robot.neutral()
    with pytest.raises(ValueError, match=r"x must have shape \(11,\) or"):
        robot.solve_mass_matrix(q, np.ones(3))
    with pytest.raises(ValueError, match="x contains non-finite"):
        robot.solve_mass_matrix(q, np.full(robot.nv, np.nan))
    with pytest.raises(ValueError, match="out must be a writeable float64 array of shape"):
        robot.solve_mass_matrix(q, np.ones(robot.nv), out=np.ones(3))
    with pytest.raises(ValueError, match="out must be an Innovations"):
        robot.innovations(q, out=(1, 2, 3))


def test_singular_and_coupled_robots():
    """A massless link carrying a free joint makes M singular (ERR_SINGULAR, as forward dynamics); joints coupled by
    mimics take a Cholesky factor of M for M^-1 and M^-1 x, and refuse the innovations factorization."""
    robot = make(1, True)                                  # body 6: a massless link on a floating joint
    with pytest.raises(ValueError, match="singular"):
        robot.inverse_mass_matrix(robot.random_configuration(1))
    coupled = rd.load_urdf(erd_path("panda.urdf"), mimic=True)        # the fingers coupled
    q = coupled.random_configuration(2)
    M = coupled.mass_matrix(q)
    assert relative_error(coupled.inverse_mass_matrix(q), np.linalg.inv(M)) < EXACT
    x = np.arange(coupled.nv, dtype=float)
    assert relative_error(coupled.solve_mass_matrix(q, x), np.linalg.solve(M, x)) < EXACT
    with pytest.raises(ValueError, match="mimic"):
        coupled.innovations(q)
