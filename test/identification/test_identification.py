"""Identification (issue 15, items 1-3): base parameters, OLS/WLS/consistent least squares, derivatives of logged
positions, excitation trajectories -- each checked by a route independent of the code under test.

- The data: simulated logs of a robot whose parameters pi_true are NOT its URDF's (each body's pseudo-inertia
  J -> A J A^T with A = 1 + 0.2 N(0, 1): still physical, 20 % off), produced by the Simulator's forward dynamics
  (simulated.py); the identified base parameters are compared with K pi_true, and predictions with the true
  robot's inverse dynamics.
- Base parameters: the rank against numpy.linalg.matrix_rank (SVD) of regressors at other random states; Y pi =
  Y_b K pi for random pi; the names parsed back against K.
- Noise: the held-out torque prediction against the noise actually added (the noise floor).
- Consistent fits: eigenvalues of the pseudo-inertias, from an impossible URDF too.
- derivatives(): against the analytic derivatives of sinusoids; excitation: against dense sampling of the limits,
  finite differences and robot.difference for the floating base's q, v, a.
"""
import re
import warnings

import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_path
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.inertia import parameters_from_pseudo_inertia, pseudo_inertia
from robot_dynamics.identification import (FourierTrajectory, base_parameters, derivatives, excitation_trajectory,
                                           identify, simulate_log)
from robot_dynamics.identification.base import random_states
from robot_dynamics.identification.least_squares import friction_joints, normal_equations
from robot_dynamics.identification.signals import interior
from robot_dynamics.identification.simulated import Noise
from robot_dynamics.urdf import joint_limits

EXACT = 1e-8            # relative error of base parameters identified from noise-free data (the bound)
FLOOR_RATIO = 1.2       # held-out torque RMS over the noise floor (the bound)

ROBOTS = {"arm7": (bundled_urdf("arm7"), False), "panda": (erd_path("panda.urdf"), False),
          "quadruped": (bundled_urdf("quadruped"), True)}


@pytest.fixture(scope="module")
def robots():
    return {name: rd.load_urdf(path, floating_base=fb) for name, (path, fb) in ROBOTS.items()}


def perturbed(pi, rng):
    """Physical parameters 20 % away from pi: J_k -> A J_k A^T, A = 1 + 0.2 N(0, 1) (PSD stays PSD)."""
    J = pseudo_inertia(np.reshape(pi, (-1, 10)))
    A = np.eye(4) + 0.2 * rng.normal(size=J.shape)
    return parameters_from_pseudo_inertia(A @ J @ np.swapaxes(A, -1, -2)).reshape(-1)


def min_eigenvalues(pi):
    return np.linalg.eigvalsh(pseudo_inertia(np.reshape(pi, (-1, 10))))[:, 0]


@pytest.fixture(scope="module")
def truths(robots):
    rng = np.random.default_rng(1)
    out = {}
    for name, robot in robots.items():
        assert np.all(min_eigenvalues(robot.parameters) > 0), f"{name}'s URDF is the physical starting point"
        out[name] = perturbed(robot.parameters, rng)
        assert np.all(min_eigenvalues(out[name]) > 0)
    return out


@pytest.fixture(scope="module")
def clean_logs(robots, truths):
    """Noise-free simulated logs: 10 s along an excitation trajectory (2 L-BFGS-B iterations; the quadruped's base
    and legs on a random one), at 200 Hz (100 Hz for the quadruped)."""
    logs = {}
    for name, robot in robots.items():
        trajectory = excitation_trajectory(robot, rng=0, maxiter=0 if robot.floating_base else 2)
        logs[name] = simulate_log(robot, trajectory, 10.0, rate=100.0 if robot.floating_base else 200.0,
                                  pi=truths[name])
    return logs


# ---- base parameters ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ROBOTS)
def test_rank_is_the_stacked_regressors_rank_by_svd(robots, name):
    robot = robots[name]
    base = base_parameters(robot, rng=0)
    q, v, a = random_states(robot, 60, np.random.default_rng(7))
    W = robot.regressor(q, v, v, a).reshape(-1, 10 * robot.nbodies)
    assert base.rank == np.linalg.matrix_rank(W) == len(base.independent) == len(base.names)
    assert base.K.shape == (base.rank, 10 * robot.nbodies) and base.p == 10 * robot.nbodies
    with_friction = base_parameters(robot, rng=0, friction=True)
    n_f = len(friction_joints(robot))
    assert with_friction.rank == base.rank + 2 * n_f and with_friction.p == base.p + 2 * n_f


@pytest.mark.parametrize("name", ROBOTS)
def test_base_regressor_reproduces_the_full_one(robots, name):
    """Y theta = Y_b theta_b at states the map was not made from, for random theta (and friction columns)."""
    robot = robots[name]
    base = base_parameters(robot, rng=0, friction=True)
    rng = np.random.default_rng(11)
    q, v, a = random_states(robot, 20, rng)
    from robot_dynamics.identification.least_squares import stacked_regressor
    Y = stacked_regressor(robot, q, v, a, friction=True)
    theta = rng.normal(size=base.p)
    full, reduced = Y @ theta, base.regressor(Y) @ base.values(theta)
    scale = np.abs(Y).max() * np.abs(theta).max()
    np.testing.assert_allclose(reduced, full, rtol=0, atol=1e-12 * scale * base.p)


def test_names_spell_the_rows_of_K(robots):
    """Each name, parsed back into coefficients, is K's row to its 4 printed digits; the first term is the
    independent column itself; coefficients of +-1 show as the bare name."""
    robot = robots["arm7"]
    base = base_parameters(robot, rng=0)
    columns = [f"{x}_{b}" for b in robot.body_names for x in rd.spatial.PARAMETER_NAMES]
    assert any(re.search(r"[+-] [A-Za-z]", n) for n in base.names), "some combination has a unit coefficient"
    for name, row, i in zip(base.names, base.K, base.independent):
        terms = re.findall(r"([+-]?) ?(\d[\d.e+-]*)? ?([A-Za-z][\w]*)", name)
        parsed = np.zeros(len(columns))
        for sign, coefficient, column in terms:
            parsed[columns.index(column)] = (-1 if sign == "-" else 1) * (float(coefficient) if coefficient else 1.0)
        assert terms[0][2] == columns[i] and row[i] == 1.0
        shown = np.abs(row) >= 1e-6
        np.testing.assert_allclose(parsed[shown], row[shown], rtol=5e-4)
        assert np.all(parsed[~shown] == 0)
    # the first link turns about a fixed axis through its origin: its mass never acts on the torques
    assert not any("m_link1" in re.findall(r"[A-Za-z]\w*", n) for n in base.names)


# ---- noise-free identification -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ROBOTS)
def test_noise_free_logs_give_the_base_parameters(robots, truths, clean_logs, name):
    """OLS, WLS and the consistent fit recover K pi_true to 1e-8 (relative, each parameter); a floating base's
    log carries the 6 rows of the base wrench.  The identified model predicts another motion's torques as the true
    robot's inverse dynamics does, plus its drives' friction (panda's URDF <dynamics damping>), known to both."""
    robot, pi, log = robots[name], truths[name], clean_logs[name]
    truth = robot.with_parameters(pi)
    q, v, a = random_states(robot, 30, np.random.default_rng(3))
    for method in ("ols", "wls", "consistent"):
        result = identify(robot, log.q, log.v, log.a, log.tau, method=method)
        expected = result.base.values(pi)
        np.testing.assert_allclose(result.base_values, expected, rtol=EXACT, atol=0, err_msg=method)
        tau = truth.inverse_dynamics(q, v, a) + truth.friction_torque(v)
        np.testing.assert_allclose(result.predict(robot, q, v, a), tau, rtol=0, atol=EXACT * np.abs(tau).max())
        assert result.n_samples == len(log.t) and result.method == method
        if method == "consistent":
            assert np.all(min_eigenvalues(result.parameters) >= -1e-12)


def test_least_change_keeps_a_prior_that_explains_the_data(robots, truths, clean_logs):
    """OLS/WLS's full pi is the prior corrected only where the data see: a prior equal to the truth comes back
    unchanged, and K pi equals the identified base parameters for any prior."""
    robot, pi, log = robots["arm7"], truths["arm7"], clean_logs["arm7"]
    result = identify(robot, log.q, log.v, log.a, log.tau, method="wls", prior=pi)
    np.testing.assert_allclose(result.parameters, pi, rtol=0, atol=EXACT * np.abs(pi).max())
    result = identify(robot, log.q, log.v, log.a, log.tau, method="ols")
    np.testing.assert_allclose(result.base.values(result.parameters), result.base_values, rtol=1e-10, atol=0)


def test_friction_is_recovered(robots, truths):
    """tau = ID_true(q, v, a) + F_v v + F_c sign(v), written out here, gives back F_v, F_c and the base
    parameters to 1e-8."""
    robot, pi = robots["arm7"], truths["arm7"]
    trajectory = excitation_trajectory(robot, rng=0, maxiter=0)
    q, v, a = trajectory.sample(np.arange(2000) * 0.005)
    rng = np.random.default_rng(5)
    F_v, F_c = rng.uniform(0.1, 2.0, robot.nv), rng.uniform(0.5, 5.0, robot.nv)
    tau = robot.with_parameters(pi).inverse_dynamics(q, v, a) + F_v * v + F_c * np.sign(v)
    for method in ("ols", "wls", "consistent"):
        result = identify(robot, q, v, a, tau, method=method, friction=True)
        np.testing.assert_allclose(result.friction, np.column_stack([F_v, F_c]), rtol=EXACT, err_msg=method)
        np.testing.assert_allclose(result.base_values, result.base.values(np.concatenate([pi, F_v, F_c])),
                                   rtol=EXACT, err_msg=method)


# ---- noisy identification -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def noisy(robots, truths):
    """arm7: a 10 s training log at 1 kHz with a 16-bit encoder and 1 % torque noise; a held-out log along
    another trajectory (4 s), noisy and clean.  Only t, q and tau of the noisy logs are used."""
    robot, pi = robots["arm7"], truths["arm7"]
    train = simulate_log(robot, excitation_trajectory(robot, rng=0, maxiter=2), 10.0, pi=pi, noise=Noise(), rng=2)
    other = excitation_trajectory(robot, rng=1, maxiter=0)
    held, clean = (simulate_log(robot, other, 4.0, pi=pi, noise=n, rng=3) for n in (Noise(), None))
    return train, held, clean


def test_simulated_noise_is_the_documented_one(noisy):
    _, held, clean = noisy
    resolution = Noise().resolution
    assert np.all(np.abs(held.q - clean.q) <= resolution / 2 + 1e-12)
    np.testing.assert_allclose(held.q / resolution, np.round(held.q / resolution), atol=1e-6)
    std = np.std(held.tau - clean.tau, axis=0)
    np.testing.assert_allclose(std, 0.01 * np.ptp(clean.tau, axis=0), rtol=0.05)   # 4000 samples: 1 % sampling error


@pytest.mark.parametrize("method", ["wls", "consistent"])
def test_noisy_prediction_is_within_the_noise_floor(robots, truths, noisy, method):
    """From measured positions only (v, a by derivatives()), the held-out torques are predicted to within 1.2 times
    the noise actually added, joint by joint; the standard deviations are honest (the base parameters' errors
    over their std have an RMS near 1)."""
    robot, pi = robots["arm7"], truths["arm7"]
    train, held, clean = noisy
    result = identify(robot, train.q, tau=train.tau, t=train.t, method=method)
    assert result.n_samples == np.count_nonzero(interior(train.t))
    ratio = prediction_over_floor(robot, result, held, clean)
    assert np.all(ratio <= FLOOR_RATIO), ratio
    z = (result.base_values - result.base.values(pi)) / result.base_std
    assert 0.5 < np.sqrt(np.mean(z**2)) < 2.0
    assert 1 < result.condition < 1e3
    if method == "consistent":
        assert np.all(min_eigenvalues(result.parameters) >= -1e-12)


def test_regularized_wls_minimizes_the_documented_objective(robots, noisy):
    """WLS with lambda > 0 is the minimizer of chi^2 + lambda |pi - pi_0|_H^2 (estimate.py's docstring), solved
    here as one stacked least-squares problem: rows sqrt(w_j) Y_j / sigma (weights from the OLS residuals,
    sigma^2 from the WLS fit's, both read off the results) and sqrt(lambda) vec(S_k J(pi_k - pi_0k) S_k)
    (InertiaMetric at the URDF's pi, physical here); lambda -> 0 tends to the least change."""
    from robot_dynamics.inertia import InertiaMetric
    from robot_dynamics.identification.least_squares import stacked_regressor
    robot = robots["arm7"]
    train, _, _ = noisy
    q, v, a = derivatives(train.t, train.q)
    inside = interior(train.t)
    q, v, a, tau = q[inside], v[inside], a[inside], train.tau[inside]
    n, nv = len(q), robot.nv
    ols = identify(robot, q, v, a, tau, method="ols")
    wls = identify(robot, q, v, a, tau, method="wls")
    r = wls.base.rank
    w = (n - r / nv) / (n * ols.residual_rms**2)                     # 1 / sigma_j^2 of the OLS residuals
    sigma2 = w @ (n * wls.residual_rms**2) / (n * nv - r)
    Y = stacked_regressor(robot, q, v, a) * np.sqrt(w / sigma2)[:, None]
    pi0 = np.array(robot.parameters)
    S = InertiaMetric(pi0).S
    basis = (S[:, None] @ pseudo_inertia(np.eye(10)) @ S[:, None]).reshape(robot.nbodies, 10, 16)
    for lam in (1e-3, 10.0):
        B = np.zeros((16 * robot.nbodies, 10 * robot.nbodies))
        for k in range(robot.nbodies):
            B[16 * k:16 * k + 16, 10 * k:10 * k + 10] = np.sqrt(lam) * basis[k].T
        rows = np.vstack([Y.reshape(-1, 10 * robot.nbodies), B])
        rhs = np.concatenate([(tau * np.sqrt(w / sigma2)).reshape(-1), B @ pi0])
        expected = np.linalg.lstsq(rows, rhs, rcond=None)[0]
        got = identify(robot, q, v, a, tau, method="wls", regularization=lam).parameters
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-8 * np.abs(expected).max())
    tiny = identify(robot, q, v, a, tau, method="wls", regularization=1e-9)
    np.testing.assert_allclose(tiny.parameters, wls.parameters, rtol=0, atol=1e-6 * np.abs(wls.parameters).max())


def prediction_over_floor(robot, result, held, clean):
    """RMS of the held-out prediction error over the RMS of the noise added, per joint, on the samples beyond
    2 / cutoff of the ends (signals.interior: the derivatives of the first and last ones carry the filter's
    start-up and the extrapolated quantization, as for identify()'s own samples)."""
    q, v, a = derivatives(held.t, held.q)
    inside = interior(held.t)
    rms = np.sqrt(np.mean((result.predict(robot, q, v, a) - held.tau)[inside] ** 2, axis=0))
    return rms / np.sqrt(np.mean((held.tau - clean.tau)[inside] ** 2, axis=0))


def impossible_arm7():
    """arm7 with link3's inertia breaking the triangle inequality (I_xx > I_yy + I_zz)."""
    text = bundled_urdf("arm7").read_text()
    old = '<inertia ixx="0.01828091972" ixy="0" ixz="-0.003229754948" iyy="0.01928" iyz="0" izz="0.008839080283"/>'
    assert text.count(old) == 1
    return text.replace(old, '<inertia ixx="0.2" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>')


@pytest.mark.parametrize("regularization", [0.0, 1.0])
def test_consistent_fit_from_an_impossible_urdf_is_physical(robots, truths, noisy, regularization):
    """Starting from (and, with lambda > 0, pulled towards) a URDF whose link3 is impossible, the consistent fit's
    pseudo-inertias are PSD and its held-out prediction stays within the noise floor."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load_urdf(impossible_arm7())
    assert min_eigenvalues(robot.parameters)[2] < 0 and np.all(np.delete(min_eigenvalues(robot.parameters), 2) > 0)
    train, held, clean = noisy
    result = identify(robot, train.q, tau=train.tau, t=train.t, method="consistent", regularization=regularization)
    assert np.all(min_eigenvalues(result.parameters) >= -1e-12)
    ratio = prediction_over_floor(robot, result, held, clean)
    assert np.all(ratio <= FLOOR_RATIO), ratio


def test_log_cholesky_parametrization():
    """Rucker & Wensing's map: J(pi(x)) = U U^T with U built here from the paper's formula, its inverse, and its
    Jacobian against central differences (h = 1e-6: tolerance 1e-8 of the scale); projecting keeps a physical pi
    and makes an impossible one physical."""
    from robot_dynamics.identification.consistent import log_cholesky, log_cholesky_coordinates, project_consistent
    x = np.random.default_rng(8).normal(size=(5, 10))
    pi, dpi = log_cholesky(x)
    for k in range(5):
        alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = x[k]
        U = np.exp(alpha) * np.array([[np.exp(d1), s12, s13, t1], [0, np.exp(d2), s23, t2], [0, 0, np.exp(d3), t3],
                                      [0, 0, 0, 1]])
        np.testing.assert_allclose(pseudo_inertia(pi[k]), U @ U.T, rtol=1e-12, atol=1e-12 * np.abs(U @ U.T).max())
    np.testing.assert_allclose(log_cholesky_coordinates(pi), x, rtol=0, atol=1e-10)
    h = 1e-6
    for i in range(10):
        e = np.zeros(10)
        e[i] = h
        fd = (log_cholesky(x + e)[0] - log_cholesky(x - e)[0]) / (2 * h)
        np.testing.assert_allclose(dpi[:, i], fd, rtol=0, atol=1e-8 * np.abs(fd).max())
    physical = pi.reshape(-1)
    np.testing.assert_allclose(project_consistent(physical), physical, rtol=1e-10, atol=1e-12)
    impossible = physical.copy()
    impossible[4] = 10 * (impossible[5] + impossible[6])                     # I_xx > I_yy + I_zz
    assert min_eigenvalues(impossible)[0] < 0 and np.all(min_eigenvalues(project_consistent(impossible)) > 0)


def test_solvers_work_from_the_normal_equations_alone(robots, clean_logs):
    """identify() on the samples equals the solver on NormalEquations summed from two halves (as Dask sums chunks)."""
    from robot_dynamics.identification.estimate import solve_normal_equations
    robot, log = robots["arm7"], clean_logs["arm7"]
    h = len(log.t) // 2
    halves = [normal_equations(robot, log.q[s], log.v[s], log.a[s], log.tau[s])
              for s in (slice(None, h), slice(h, None))]
    for method in ("ols", "wls"):
        whole = identify(robot, log.q, log.v, log.a, log.tau, method=method)
        parts = solve_normal_equations(robot, halves[0] + halves[1], method=method)
        np.testing.assert_allclose(parts.base_values, whole.base_values, rtol=1e-10)
        np.testing.assert_allclose(parts.parameters, whole.parameters, rtol=1e-10, atol=1e-12)


# ---- signals ----------------------------------------------------------------------------------------------------

def test_derivatives_of_sinusoids():
    """Two sinusoids at 1 kHz against their analytic derivatives times the zero-phase Butterworth's gain |H(f)|^2 =
    1 / (1 + (f / cutoff)^8) (order 4, run twice): 1e-9 (relative) beyond 10 / cutoff of the ends, 1e-3 at the
    ends (the documented start-up of the filter); an unevenly sampled log (jitter +-20 % of the interval): v to
    (w h)^2 / 2 inside (its documented linear resampling), a to 1e-4."""
    t = np.arange(10000) * 1e-3
    f = np.array([0.5, 1.3])
    w = 2 * np.pi * f
    phase = np.array([0.3, -1.0])
    gain = 1 / (1 + (f / 10.0) ** 8)
    q = gain * np.sin(w * t[:, None] + phase)
    v = gain * w * np.cos(w * t[:, None] + phase)
    a = -gain * w**2 * np.sin(w * t[:, None] + phase)
    results = derivatives(t, q / gain)
    inside = slice(1000, -1000)                                      # 10 / cutoff at the default 10 Hz
    for got, want in zip(results, (q, v, a)):
        scale = np.abs(want).max(axis=0)
        assert np.all(np.abs(got - want)[inside].max(axis=0) <= 1e-9 * scale)
        assert np.all(np.abs(got - want).max(axis=0) <= 1e-3 * scale)
    one = derivatives(t, q[:, 0] / gain[0])                         # one column: the same, shaped (N,)
    assert one[2].shape == (len(t),)
    np.testing.assert_allclose(one[2], results[2][:, 0], rtol=0, atol=1e-9 * np.abs(a[:, 0]).max())
    jittered = t + np.random.default_rng(0).uniform(-2e-4, 2e-4, len(t))
    jittered[0] = 0.0
    qj = gain * np.sin(w * jittered[:, None] + phase)
    _, vj, aj = derivatives(jittered, qj / gain)
    vw = gain * w * np.cos(w * jittered[:, None] + phase)
    aw = -gain * w**2 * np.sin(w * jittered[:, None] + phase)
    resampling = (w * 1e-3) ** 2 / 2                                # linear interpolation there and back
    assert np.all(np.abs(vj - vw)[inside].max(axis=0) <= resampling * np.abs(vw).max(axis=0))
    assert np.all(np.abs(aj - aw)[inside].max(axis=0) <= 1e-4 * np.abs(aw).max(axis=0))    # the resampling's
    # error (w h)^2 / 8 varies with the jitter from sample to sample: noise, which the second derivative amplifies


# ---- excitation -------------------------------------------------------------------------------------------------

def test_excitation_respects_the_urdf_limits_and_improves_the_condition(robots):
    robot = robots["arm7"]
    limits = joint_limits(bundled_urdf("arm7"), robot)
    trajectory = excitation_trajectory(robot, limits=limits, rng=4, maxiter=2)
    t = np.linspace(0, trajectory.period, 20001)
    q, v, a = trajectory.sample(t)
    assert np.all(q >= limits.lower) and np.all(q <= limits.upper)
    assert np.all(np.abs(v) <= limits.velocity)
    assert trajectory.condition < trajectory.initial_condition
    # the condition number is that of the base regressor stacked at the documented instants, by SVD here
    n = max(50, -(-3 * base_parameters(robot).rank // robot.nv))
    qs, vs, as_ = trajectory.sample(np.arange(n) * trajectory.period / n)
    Y_b = base_parameters(robot).regressor(robot.regressor(qs, vs, vs, as_)).reshape(n * robot.nv, -1)
    np.testing.assert_allclose(trajectory.condition, np.linalg.cond(Y_b), rtol=1e-9)
    again = excitation_trajectory(robot, limits=limits, rng=4, maxiter=2)
    np.testing.assert_array_equal(again.a, trajectory.a)


def test_floating_base_excitation_moves_base_and_legs_within_limits_and_improves_the_condition(robots):
    """The quadruped with a free base: the optimized series keeps the legs within the URDF's limits and the base
    within its documented ranges (+-0.05 m, 0.1 m/s, +-0.2 rad, 0.5 rad/s: read here from the base's pose by
    rotation angles, not from the series), and the stacked base regressor -- base wrench rows included, by SVD
    here -- is better conditioned than at the random start."""
    robot = robots["quadruped"]
    limits = joint_limits(bundled_urdf("quadruped"), robot)
    trajectory = excitation_trajectory(robot, limits=limits, rng=4, maxiter=2)
    q, v, _ = trajectory.sample(np.linspace(0, trajectory.period, 4001))
    assert np.all(q[:, 7:] >= limits.lower) and np.all(q[:, 7:] <= limits.upper)
    assert np.all(np.abs(v[:, 6:]) <= limits.velocity)
    assert np.abs(q[:, :3]).max() <= 0.05 and np.linalg.norm(q[:, 3:7], axis=1) == pytest.approx(1.0)
    from scipy.spatial.transform import Rotation
    yaw_pitch_roll = Rotation.from_quat(q[:, 3:7]).as_euler("ZYX")         # R = Rz(yaw) Ry(pitch) Rx(roll)
    assert np.abs(yaw_pitch_roll).max() <= 0.2 + 1e-9
    R = np.stack([robot.body_placements(x)[0, :3, :3] for x in q[::100]])
    pdot = np.einsum("nij,nj->ni", R, v[::100, :3])                         # world velocity of the base origin
    assert np.abs(pdot).max() <= 0.1 + 1e-9
    assert trajectory.condition < trajectory.initial_condition
    n = max(50, -(-3 * base_parameters(robot).rank // robot.nv))
    qs, vs, as_ = trajectory.sample(np.arange(n) * trajectory.period / n)
    Y_b = base_parameters(robot).regressor(robot.regressor(qs, vs, vs, as_)).reshape(n * robot.nv, -1)
    np.testing.assert_allclose(trajectory.condition, np.linalg.cond(Y_b), rtol=1e-9)


def test_excitation_defaults_and_round_trip(robots, tmp_path):
    robot = robots["arm7"]
    trajectory = excitation_trajectory(robot, rng=0, maxiter=0, duration=8.0, harmonics=3)
    _, v, _ = trajectory.sample(np.linspace(0, 8.0, 4001))
    q = trajectory.sample(np.linspace(0, 8.0, 4001))[0]
    assert np.all(np.abs(q) <= np.pi / 2) and np.all(np.abs(v) <= 2.0)
    assert trajectory.period == pytest.approx(8.0) and trajectory.a.shape == (robot.nv, 3)
    trajectory.save(tmp_path / "t.npz")
    loaded = FourierTrajectory.load(tmp_path / "t.npz")
    t = np.linspace(0, 3, 50)
    for x, y in zip(loaded.sample(t), trajectory.sample(t)):
        np.testing.assert_array_equal(x, y)
    assert loaded.condition == trajectory.condition and loaded.duration == trajectory.duration


@pytest.mark.parametrize("name", ["arm7", "quadruped"])
def test_trajectory_samples_are_consistent(robots, name):
    """v is the derivative of q on the configuration manifold (robot.difference, the SE(3) log for the floating
    base) and a the derivative of v, by central differences (h = 1e-4, tolerance 1e-6 of their scale)."""
    robot = robots[name]
    trajectory = excitation_trajectory(robot, rng=2, maxiter=0)
    t = np.linspace(0.3, 7.0, 9)
    h = 1e-4
    q, v, a = trajectory.sample(t)
    q_minus, v_minus, _ = trajectory.sample(t - h)
    q_plus, v_plus, _ = trajectory.sample(t + h)
    v_fd = robot.difference(q_minus, q_plus) / (2 * h)
    np.testing.assert_allclose(v_fd, v, rtol=0, atol=1e-6 * np.abs(v).max())
    np.testing.assert_allclose((v_plus - v_minus) / (2 * h), a, rtol=0, atol=1e-6 * np.abs(a).max())
    if robot.floating_base:
        np.testing.assert_allclose(np.linalg.norm(q[:, 3:7], axis=1), 1.0, atol=1e-14)


# ---- bad input ----------------------------------------------------------------------------------------------------

def test_bad_input_names_the_culprit(robots, clean_logs):
    robot, log = robots["arm7"], clean_logs["arm7"]
    q, v, a, tau = log.q, log.v, log.a, log.tau
    cases = [
        (lambda: identify(robot, q, v, a, tau, method="ml"), "method"),
        (lambda: identify(robot, q, v, a, tau[:, :3]), "tau"),
        (lambda: identify(robot, q[:, :3], v, a, tau), "q"),
        (lambda: identify(robot, q, v[:-1], a, tau), "v"),
        (lambda: identify(robot, q, v, None, tau), "a is missing"),
        (lambda: identify(robot, q, v, a, None), "tau is required"),
        (lambda: identify(robot, q, tau=tau), "t is required"),
        (lambda: identify(robot, q, v, a, tau, regularization=-1), "regularization"),
        (lambda: identify(robot, q, v, a, tau, prior=np.zeros(3)), "prior"),
        (lambda: identify(robot, q[:1].repeat(100, 0), np.zeros((100, 7)), np.zeros((100, 7)), tau[:100]),
         "do not"),
        (lambda: identify(robots["quadruped"], np.zeros((10, 19)), tau=np.zeros((10, 18)), t=np.arange(10.0)),
         "floating base"),
        (lambda: derivatives(np.arange(10.0)[::-1], np.zeros(10)), "increasing"),
        (lambda: derivatives(np.arange(10.0), np.zeros(10), cutoff=0.6), "cutoff"),
        (lambda: derivatives(np.arange(10.0), np.zeros(9)), "q must be"),
        (lambda: excitation_trajectory(robot, harmonics=0), "harmonics"),
        (lambda: excitation_trajectory(robot, limits=joint_limits(bundled_urdf("arm7"), robot)._replace(
            lower=np.zeros(3)), maxiter=0), "limits.lower"),
        (lambda: base_parameters(robot, n_states=0), "n_states"),
        (lambda: simulate_log(robot, None, 1.0, noise={"jitter": 1}), "noise"),
    ]
    for call, culprit in cases:
        with pytest.raises(ValueError, match=culprit):
            call()
    bad = v.copy()
    bad[17, 2] = np.nan
    with pytest.raises(ValueError, match="v has non-finite entries .* sample 17"):
        identify(robot, q, bad, a, tau)
    with pytest.raises(ValueError, match="q has non-finite"):
        derivatives(np.arange(10.0), np.full(10, np.nan))
