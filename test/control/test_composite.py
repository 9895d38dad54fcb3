"""The default adaptive controller (CompositeSlotineLi) on the library's simulator: its Lyapunov function, its
sampled-time safeguards and its errors.  Closed loops on physics we did not write are test_adaptive_mujoco.py's."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.controllers import (CompositeSlotineLi, RelativeGains, Simulator, SumOfSines, pseudo_inertia,
                                        with_payload)
from robot_dynamics.controllers.composite import default_payload_body


@pytest.fixture(scope="module")
def arm():
    """arm7 (the controller's model) and the real arm: a 3 kg payload off the flange axis on link7."""
    nominal = rd.load_urdf(bundled_urdf("arm7"))
    return nominal, with_payload(nominal, "link7", 3.0, (0.03, -0.02, 0.12), 0.002 * np.eye(3))


def trajectory(robot, seed=0, amplitude=0.4, period=2.0):
    rng = np.random.default_rng(seed)
    n, harmonics = robot.nv, np.array([1.0, 2.0, 3.0])
    return SumOfSines(np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8])[:n],
                      amplitude * rng.uniform(0.5, 1.0, (n, 3)) / harmonics, 2 * np.pi / period * harmonics,
                      rng.uniform(0, 2 * np.pi, (n, 3)))


LYAPUNOV_DURATION = 1.5


LAWS = {"least_squares": RelativeGains(), "natural": RelativeGains(law="natural", gamma=0.1, prediction=0.0)}


@pytest.fixture(scope="module", params=list(LAWS))
def continuous_rollout(request, arm):
    """The continuous-time law integrated with the arm by RK4 (h = 2 ms): estimate, filters and Omega in z; the
    default law, and the natural law as published (no prediction term)."""
    nominal, truth = arm
    reference = trajectory(nominal)
    controller = LAWS[request.param].slotine_li(nominal, 0.7 * nominal.parameters)
    start = reference(0.0)
    z0 = controller.state_vector(start.q, start.v)

    def closed_loop(t, q, v, z):
        r = reference(t)
        return controller.law(q, v, r.q, r.v, r.a, z)

    rollout = Simulator(truth, 0.002).run_with_state(start.q, start.v, z0, closed_loop, LYAPUNOV_DURATION)
    return truth, controller, reference, rollout


def dissipation(controller, pi, q, v, r, z):
    """-Vdot at one sample (the module docstring): s^T K_D s + 1/2 eps^T R eps + 1/2 beta pi~^T (Omega - Omega_0)
    pi~ for the least-squares law; s^T K_D s + eps^T R eps for the natural law (Omega = 0, fixed)."""
    pi_hat, x_p, x_h, x_tau, Omega, _, _ = controller._unpack(z)
    s = controller.sliding(q, v, r.q, r.v, r.a).s
    M_ref = controller.reference.mass_matrix(q)
    root = np.sqrt(controller.kd)
    W = controller.filter.lam * (controller.robot.momentum_regressor(q, v)[0] - x_p) - x_h
    eps = W @ pi_hat - x_tau
    eps_R_eps = controller.prediction * eps @ np.linalg.solve(M_ref, eps)
    damping = s @ (root * (M_ref @ (root * s)))
    if controller.law_name == "natural":
        return damping + eps_R_eps
    pi_tilde = pi_hat - pi
    return damping + 0.5 * eps_R_eps + 0.5 * controller.beta * pi_tilde @ (Omega - controller.Omega_0) @ pi_tilde


def test_the_lyapunov_function_never_rises_and_falls_by_what_is_dissipated(continuous_rollout):
    truth, controller, reference, rollout = continuous_rollout
    pi = truth.parameters
    ref = reference(rollout.t)
    V = np.array([controller.lyapunov(q, v, r_q, r_v, pi, z)
                  for q, v, r_q, r_v, z in zip(rollout.q, rollout.v, ref.q, ref.v, rollout.z)])
    assert np.max(np.diff(V)) <= 1e-9 * V[0]                              # RK4's error at h = 2 ms
    assert V[-1] < 0.9 * V[0]                                             # it falls: the estimate learns
    power = np.array([dissipation(controller, pi, q, v, reference(t), z)
                      for t, q, v, z in zip(rollout.t, rollout.q, rollout.v, rollout.z)])
    dissipated = np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(rollout.t))
    assert V[0] - V[-1] == pytest.approx(dissipated, rel=2e-3)           # trapezoidal rule on 2 ms samples


def test_the_estimate_stays_physical_in_continuous_time(continuous_rollout):
    _, controller, _, rollout = continuous_rollout
    pi_hat = rollout.z[:, :controller.pi_ref.size]
    J = pseudo_inertia(pi_hat.reshape(len(pi_hat), -1, 10))
    assert np.min(np.linalg.eigvalsh(J)) > 0


def test_on_the_reference_with_exact_parameters_the_torque_is_inverse_dynamics(arm):
    nominal, truth = arm
    rng = np.random.default_rng(1)
    q, v = truth.random_state(rng)
    a = rng.normal(size=truth.nv)
    controller = RelativeGains().slotine_li(truth, truth.parameters)
    np.testing.assert_allclose(controller.torque(q, v, q, v, a), truth.inverse_dynamics(q, v, a), rtol=1e-6,
                               atol=1e-6)   # the initial estimate is moved inside the physical set by <= 1e-6 J0


def test_the_torque_is_the_regressor_minus_damping_by_the_reference_inertia(arm):
    """tau = Y(q, v, v_r, a_r) pi_hat - D^1/2 M(q; pi_ref) D^1/2 s, pi_ref = pi_hat0 plus the payload prior."""
    nominal, _ = arm
    rng = np.random.default_rng(2)
    kd, Lambda = rng.uniform(5.0, 20.0, nominal.nv), rng.uniform(5.0, 20.0, nominal.nv)
    gains = RelativeGains(Lambda=Lambda, kd=kd, payload=2.0)
    controller = gains.slotine_li(nominal, nominal.parameters)
    q, v = nominal.random_state(rng)
    q_d, v_d, a_d = nominal.random_configuration(rng), rng.normal(size=nominal.nv), rng.normal(size=nominal.nv)
    e, e_dot = nominal.difference(q, q_d), v_d - v
    v_r, a_r = v_d + Lambda * e, a_d + Lambda * e_dot
    M_ref = nominal.with_parameters(gains.reference(nominal, nominal.parameters)).mass_matrix(q)
    K_D = np.sqrt(kd)[:, None] * M_ref * np.sqrt(kd)[None, :]
    expected = nominal.regressor(q, v, v_r, a_r) @ controller.pi_hat - K_D @ (v - v_r)
    np.testing.assert_allclose(controller.torque(q, v, q_d, v_d, a_d), expected, rtol=1e-10, atol=1e-10)


def test_sampled_updates_bound_the_step_and_cap_the_gains(arm):
    """Gains far beyond the rate: every estimate physical, every torque finite, and the status says why."""
    nominal, truth = arm
    reference = trajectory(nominal)
    controller = RelativeGains(Lambda=2000.0, kd=2000.0, gamma=1000.0).slotine_li(nominal, 0.7 * nominal.parameters)
    dt, statuses, eigenvalues = 4e-3, [], []

    def tick(t, q, v):
        r = reference(t)
        tau = controller.update(q, v, r.q, r.v, r.a, dt if statuses else 0.0)
        statuses.append(controller.status)
        eigenvalues.append(controller.min_eigenvalue())
        assert np.all(np.isfinite(tau))
        return tau

    start = reference(0.0)
    Simulator(truth, dt).run(start.q, start.v, tick, 0.4, control_period=dt)
    assert all(s.gains_capped for s in statuses[1:])
    assert any(s.step_limited for s in statuses)
    assert min(eigenvalues) > 0
    assert np.min(np.linalg.eigvalsh(pseudo_inertia(controller.pi_hat.reshape(-1, 10)))) > 0


def test_the_damping_cap_reads_the_estimates_own_inertia(arm):
    """kd beyond what the rate allows (250 Hz): each tick's kd_j is capped at 1 / (2 dt r_j), r_j = M_jj(q; pi_ref) /
    max(M_jj(q; pi_0), M_jj(q; pi_hat)) (the module docstring), pi_hat the estimate the tick starts from, armature
    included: against Robot.with_parameters(pi_hat).mass_matrix, and the estimate's inertia decides some caps."""
    nominal = arm[0].with_drives(armature=0.01)
    reference = trajectory(nominal)
    controller = RelativeGains(kd=125.0).slotine_li(nominal, 0.7 * nominal.parameters)
    kd_t = controller._kd_t                                                 # the last tick's kd (cs_views)
    dt, decided = 4e-3, 0
    for k in range(40):
        r = reference(k * dt)
        q, v = r.q + 0.05 * np.sin(k + np.arange(nominal.nv)), r.v + 0.3
        M_hat = nominal.with_parameters(controller.pi_hat).mass_matrix(q).diagonal()
        controller.update(q, v, r.q, r.v, r.a, dt if k else 0.0)
        M_ref, M_0 = controller.reference.mass_matrix(q).diagonal(), controller.initial.mass_matrix(q).diagonal()
        ratio = np.maximum(M_ref / np.maximum(M_0, M_hat), 1.0)
        capped = controller.kd > 0.5 / (dt * np.maximum(M_ref / M_0, 1.0))
        expected = np.where(capped & (k > 0), np.minimum(controller.kd, 0.5 / (dt * ratio)), controller.kd)
        np.testing.assert_allclose(kd_t, expected, rtol=1e-12)
        decided += k > 0 and np.any(capped & (M_hat > M_0) & (ratio > 1.0))
    assert controller.status.gains_capped and decided > 10


def test_results_are_new_arrays_of_numpys_own_float64(arm):
    """tau, pi_hat, Omega and prediction_error kept from every tick stay as they were (the state's two copies are
    reused), and their dtype is numpy's float64 itself, which the robot's fast calls take (numba's equal copy of
    it sent them down the slow route: 0.5 ms a forward dynamics in the demo)."""
    nominal, _ = arm
    controller = RelativeGains().slotine_li(nominal, 0.7 * nominal.parameters)
    reference, kept = trajectory(nominal), []
    for k in range(4):
        r = reference(k * 1e-3)
        tau = controller.update(r.q, r.v + 0.1, r.q, r.v, r.a, 1e-3 if k else 0.0)
        results = (tau, controller.pi_hat, controller.Omega, controller.prediction_error)
        assert all(x.dtype is np.dtype(np.float64) for x in results)
        kept.append((results, tuple(x.copy() for x in results)))
    assert np.any(kept[-1][1][1] != kept[0][1][1])                  # the estimate moved
    for results, copies in kept:
        for x, y in zip(results, copies):
            np.testing.assert_array_equal(x, y)


def test_a_refused_state_changes_nothing(arm):
    nominal, _ = arm
    controller = RelativeGains().slotine_li(nominal, 0.7 * nominal.parameters)
    q, zero = trajectory(nominal)(0.0).q, np.zeros(nominal.nv)
    controller.update(q, zero, q, zero, zero, 0.0)
    controller.update(q, 0.1 + zero, q, zero, zero, 1e-3)
    before = (controller.pi_hat.copy(), controller.Omega.copy(), controller.filter.x_p.copy())
    for bad in ({"v": np.full(nominal.nv, 1e200)}, {"v": np.full(nominal.nv, np.nan)}, {"dt": -1.0}):
        args = dict(q=q, v=zero, q_d=q, v_d=zero, a_d=zero, dt=1e-3) | bad
        with pytest.raises(ValueError):
            controller.update(**args)
        np.testing.assert_array_equal(controller.pi_hat, before[0])
        np.testing.assert_array_equal(controller.Omega, before[1])
        np.testing.assert_array_equal(controller.filter.x_p, before[2])


@pytest.mark.parametrize("settings, message", [
    ({"bandwidth": 0.0}, "bandwidth"), ({"payload": -1.0}, "payload"), ({"law": "bayes"}, "law"),
    ({"memory": 0.0}, "memory"), ({"prediction": np.nan}, "prediction"), ({"kd": -1.0}, "kd"),
    ({"gamma": 0.0}, "gamma"), ({"payload_body": "no_such_link"}, "no_such_link"), ({"adapt": "links"}, "adapt"),
])
def test_bad_settings_are_refused_by_name(arm, settings, message):
    nominal, _ = arm
    with pytest.raises(ValueError, match=message):
        RelativeGains(**settings).slotine_li(nominal, nominal.parameters)


def test_the_default_tool_body_is_the_wrist_past_the_fingers():
    from oracle import erd_path
    assert default_payload_body(rd.load_urdf(erd_path("panda.urdf"))) == "panda_link7"
    assert default_payload_body(rd.load_urdf(bundled_urdf("arm7"))) == "link7"


def test_the_payload_prior_is_a_sphere_on_the_tool_body(arm):
    nominal, _ = arm
    pi_ref = RelativeGains(payload=2.0).reference(nominal, nominal.parameters)
    k = nominal.body_names.index("link7")
    delta = (pi_ref - nominal.parameters).reshape(-1, 10)
    assert np.all(delta[np.arange(nominal.nbodies) != k] == 0)
    np.testing.assert_allclose(delta[k], [2.0, 0, 0, 0, 0.008, 0.008, 0.008, 0, 0, 0], atol=1e-15)
    assert isinstance(RelativeGains().slotine_li(nominal, nominal.parameters), CompositeSlotineLi)


def numpy_tick(controller, filter_before, Omega, pi_hat, tau_held, q, v, r, dt):
    """One sampled tick of the default law written out in numpy (module docstring of composite.py), from a given
    state: the filters' exact step, R = rho M_ref^-1, Omega's update, H from einsum, the solve, the step bound by
    eigvalsh, the torque.  Gains below the caps."""
    robot, lam = controller.robot, controller.filter.lam
    Y_p0, Y_h0, x_p, x_h, x_tau = filter_before
    e, e_dot = robot.difference(q, r.q), r.v - v
    v_r, a_r = r.v + controller.Lambda @ e, r.a + controller.Lambda @ e_dot
    s = v - v_r
    Y = robot.regressor(q, v, v_r, a_r)
    M_ref = controller.reference.mass_matrix(q)
    Y_p, Y_h = robot.momentum_regressor(q, v)
    a = np.exp(-lam * dt)
    c = 1 - (1 - a) / (lam * dt)
    x_p = a * x_p + (1 - a) * Y_p0 + c * (Y_p - Y_p0)
    x_h = a * x_h + (1 - a) * Y_h0 + c * (Y_h - Y_h0)
    x_tau = a * x_tau + (1 - a) * tau_held
    W = lam * (Y_p - x_p) - x_h
    R = controller.prediction * np.linalg.inv(M_ref)
    Omega = controller.Omega_0 + np.exp(-controller.beta * dt) * (Omega - controller.Omega_0) + dt * W.T @ R @ W
    J = pseudo_inertia(pi_hat.reshape(-1, 10))
    basis = pseudo_inertia(np.eye(10))
    X = np.einsum("kab,jbc->kjac", np.linalg.inv(J), basis)
    H = np.einsum("kiab,kjba->kij", X, X) * controller.mu[:, None, None]
    A = Omega.copy()
    for k in range(len(H)):
        A[10 * k:10 * k + 10, 10 * k:10 * k + 10] += H[k]
    step = -dt * np.linalg.solve(A, Y.T @ s + W.T @ R @ (W @ pi_hat - x_tau))
    L_inv = np.linalg.inv(np.linalg.cholesky(J))
    w = np.linalg.eigvalsh(L_inv @ pseudo_inertia(step.reshape(-1, 10)) @ np.swapaxes(L_inv, -1, -2))
    scale = 0.1 / np.maximum(np.abs(w).max(axis=1), 0.1)
    pi_new = (pi_hat.reshape(-1, 10) + step.reshape(-1, 10) * scale[:, None]).ravel()
    root = np.sqrt(controller.kd)
    return Y @ pi_new - root * (M_ref @ (root * s)), pi_new, Omega, W @ pi_new - x_tau


def test_the_compiled_tick_is_the_law_written_out_in_numpy(arm):
    """Each tick from the controller's own state, against numpy_tick: tau and the prediction error to 1e-10, the
    estimate to 1e-9 of its size (the solve's condition number, ~3e7 on arm7, amplifies rounding that much)."""
    nominal, _ = arm
    reference = trajectory(nominal)
    controller = RelativeGains().slotine_li(nominal, 0.7 * nominal.parameters)
    dt, limited = 1e-3, []
    for k in range(8):
        r = reference(k * dt)
        q, v = r.q + 0.02 * np.sin(k + np.arange(nominal.nv)), r.v + 0.1
        f = controller.filter
        before = None if k == 0 else ((f.Y_p.copy(), f.Y_h.copy(), f.x_p.copy(), f.x_h.copy(), f.x_tau.copy()),
                                      controller.Omega.copy(), controller.pi_hat.copy(), controller._tau.copy())
        tau = controller.update(q, v, r.q, r.v, r.a, dt if k else 0.0)
        if k == 0:
            continue
        expected, pi_new, Omega, eps = numpy_tick(controller, *before, q, v, r, dt)
        limited.append(controller.status.step_limited)
        np.testing.assert_allclose(tau, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
        np.testing.assert_allclose(controller.pi_hat, pi_new, rtol=0, atol=1e-9 * np.abs(pi_new).max())
        np.testing.assert_allclose(controller.Omega, Omega, rtol=0, atol=1e-13 * np.abs(Omega).max())
        np.testing.assert_allclose(controller.prediction_error, eps, rtol=0, atol=1e-10 * np.abs(eps).max())
    assert any(limited)                                 # the step bound was exercised


def test_a_torque_that_is_not_finite_changes_nothing(arm):
    """A tick whose torque overflows (prediction = inf: R, Omega and the estimate not finite) raises and leaves the
    estimate, Omega, the filters and the held torque as they were: the next tick is the one it would have been."""
    nominal, _ = arm
    reference = trajectory(nominal)
    controllers = [RelativeGains().slotine_li(nominal, 0.7 * nominal.parameters) for _ in range(2)]
    dt = 1e-3
    for k in range(3):
        r = reference(k * dt)
        for controller in controllers:
            controller.update(r.q, r.v + 0.1, r.q, r.v, r.a, dt if k else 0.0)
    bad = controllers[0]
    state = (bad.pi_hat.copy(), bad.Omega.copy(), bad.filter.state.copy(), bad.prediction_error.copy())
    bad.prediction = np.inf
    r = reference(3 * dt)
    with pytest.raises(ValueError):
        bad.update(r.q, r.v + 0.1, r.q, r.v, r.a, dt)
    for before, after in zip(state, (bad.pi_hat, bad.Omega, bad.filter.state, bad.prediction_error)):
        np.testing.assert_array_equal(before, after)
    bad.prediction = controllers[1].prediction
    np.testing.assert_array_equal(bad.update(r.q, r.v + 0.1, r.q, r.v, r.a, dt),
                                  controllers[1].update(r.q, r.v + 0.1, r.q, r.v, r.a, dt))


def test_the_lu_fallback_solves_as_lapack_and_reports_a_singular_system():
    """rate_into's fallback where rounding left Omega + mu H not numerically positive definite: Gaussian
    elimination with partial pivoting, within the C-called tick (an exception there would pass unseen), against
    numpy's LAPACK solve; a singular system is a False, not an exception."""
    from robot_dynamics.controllers._composite_tick import lu_solve_into
    rng = np.random.default_rng(3)
    for m in (1, 7, 70):
        A, b = rng.normal(size=(m, m)), rng.normal(size=m)
        x, F = b.copy(), A.copy()
        assert lu_solve_into(F, x)
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-12)
    A = rng.normal(size=(5, 5))
    A[3] = 2.0 * A[1]                                   # rank 4, exactly: elimination meets a zero pivot
    A[:, 4] = 0.0
    assert not lu_solve_into(A, rng.normal(size=5))


def random_parameters(rng, count, floor):
    """count bodies' parameters (10 count,) with J(pi_k) = A A^T + floor 1, A (4, 4) normal."""
    A = rng.normal(size=(count, 4, 4))
    J = A @ np.swapaxes(A, 1, 2) + floor * np.eye(4)
    trace = np.trace(J[:, :3, :3], axis1=1, axis2=2)
    return np.stack([J[:, 3, 3], J[:, 0, 3], J[:, 1, 3], J[:, 2, 3], trace - J[:, 0, 0], trace - J[:, 1, 1],
                     trace - J[:, 2, 2], -J[:, 0, 1], -J[:, 0, 2], -J[:, 1, 2]], axis=1).ravel()


def test_the_inverse_factors_are_numpys():
    """_body_steps.inverse_factors (each body's J(pi_k) = L L^T and L^-1 on scalars) against numpy's Cholesky factor
    inverted, on random bodies (J near singular too); a body whose J is not positive definite (a negative mass, or a
    NaN) refused."""
    from robot_dynamics.controllers._body_steps import inverse_factors
    rng = np.random.default_rng(9)
    for floor in (0.05, 1e-6):
        pi = random_parameters(rng, 13, floor)
        L_inv = inverse_factors(pi)
        for k in range(13):
            expected = np.linalg.inv(np.linalg.cholesky(pseudo_inertia(pi[10 * k:10 * k + 10])))
            np.testing.assert_allclose(L_inv[k], expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    for entry, value in ((10, -1.0), (11, np.nan)):             # the second body: m < 0 (J_33 < 0), a NaN in h
        pi = random_parameters(rng, 2, 0.1)
        pi[entry] = value
        with pytest.raises(np.linalg.LinAlgError):
            inverse_factors(pi)


def test_the_step_bounds_eigenvalues_are_lapacks():
    """The step bound's largest |eigenvalue| of L^-1 J(step_k) L^-T by parallel-ordered Jacobi rotations
    (_body_steps.step_scales), against numpy's eigvalsh on random bodies (J near singular too) and steps of 1e-4 to
    10; the rotations alone on repeated, opposite and 1e-100 to 1e100 eigenvalues, to rounding of the norm."""
    from robot_dynamics.controllers._body_steps import (STEP_BOUND, diagonalize, inverse_factors, pseudo_inertia,
                                                        step_scales)
    rng = np.random.default_rng(7)
    for nb, floor in [(1, 0.05), (7, 0.05), (13, 1e-6)]:
        pi = random_parameters(rng, nb, floor)
        L_inv = inverse_factors(pi)
        for size in (1e-4, 1e-2, 1.0, 10.0):
            step, E = size * rng.normal(size=10 * nb), np.empty((11, nb))
            step_scales(step, L_inv, E)
            X = [L_inv[k] @ pseudo_inertia(step[10 * k:10 * k + 10]) @ L_inv[k].T for k in range(nb)]
            top = np.abs(np.linalg.eigvalsh(X)).max(axis=1)
            bounded = np.linalg.norm(X, axis=(1, 2)) <= STEP_BOUND * (1 - 1e-9)
            np.testing.assert_allclose(E[10], np.where(bounded, 1.0, STEP_BOUND / np.maximum(top, STEP_BOUND)),
                                       rtol=1e-14, atol=0)
    Q = np.linalg.qr(rng.normal(size=(60, 4, 4)))[0]
    w = np.concatenate([rng.choice([-1.0, 1.0, 2.0, 1e-8], (30, 4)), rng.normal(size=(30, 4))
                        * 10.0 ** rng.uniform(-100, 100, (30, 1))])
    A = Q * w[:, None, :] @ np.swapaxes(Q, 1, 2)
    A = np.concatenate([A, [np.eye(4), np.diag([1.0, -1.0, 1.0, -1.0]), np.zeros((4, 4)), np.ones((4, 4))]])
    E = np.stack([A[:, a, b] for a, b in [(0, 0), (1, 1), (2, 2), (3, 3), (0, 1), (0, 2), (0, 3), (1, 2), (1, 3),
                                          (2, 3)]])
    for k in range(E.shape[1]):
        diagonalize(E, k)
    exact = np.linalg.eigvalsh(A)
    error = np.abs(np.sort(E[:4].T, axis=1) - exact).max(axis=1)
    assert np.all(error <= 4e-15 * np.abs(exact).max(axis=1))


def test_the_log_det_block_is_the_hessian_of_minus_log_det():
    """The barrier's block written in closed form (_composite_tick.add_log_det_block: lower triangle, times mu)
    against central second differences of -log det J(pi_k) (h = 1e-4 on bodies with J >= 0.5: truncation and
    rounding below 1e-6 of the block)."""
    from robot_dynamics.controllers._body_steps import inverse_factors
    from robot_dynamics.controllers._composite_tick import LOG_DET_WORK, add_log_det_block

    def F(x):
        return -np.linalg.slogdet(pseudo_inertia(x))[1]

    rng, h = np.random.default_rng(8), 1e-4
    for pi in random_parameters(rng, 3, 0.5).reshape(3, 10):
        A = np.zeros((12, 12))
        add_log_det_block(inverse_factors(pi)[0], 3.0, np.empty(LOG_DET_WORK), A, 2)
        H = np.tril(A[2:, 2:]) + np.tril(A[2:, 2:], -1).T
        assert not A[:2].any() and not np.triu(A[2:, 2:], 1).any()
        E = h * np.eye(10)
        expected = np.array([[F(pi + a + b) - F(pi + a - b) - F(pi - a + b) + F(pi - a - b) for b in E] for a in E])
        np.testing.assert_allclose(H, 3.0 * expected / (4 * h * h), rtol=0, atol=1e-6 * np.abs(H).max())


def test_the_gradient_laws_projection_clips_the_whitened_eigenvalues_as_numpy(arm):
    """_body_steps.projected (the gradient law's step, allocation-free) against the projection written in numpy:
    per body S J S = U diag(w) U^T by eigvalsh/eigh, J = S^-1 U max(w, 0) U^T S^-1, S = J(pi_ref)^-1/2; bodies both
    inside (kept as they are) and outside (the law in closed loop: test_adaptive_mujoco.py)."""
    from robot_dynamics.controllers import InertiaMetric, _body_steps
    from robot_dynamics.inertia import parameters_from_pseudo_inertia
    nominal = arm[0]
    metric = InertiaMetric(nominal.parameters)
    rng = np.random.default_rng(3)
    pi = nominal.parameters.copy()
    step = rng.normal(size=pi.size) * np.abs(pi) * np.repeat(rng.uniform(0.0, 3.0, nominal.nbodies), 10)
    out = np.empty_like(pi)
    _body_steps.projected(pi, step, metric.S, metric.S_inv, np.zeros((_body_steps.PROJECTED_WORK, 4)), out)
    clipped = 0
    for k in range(nominal.nbodies):
        S, S_inv, x = metric.S[k], metric.S_inv[k], (pi + step)[10 * k:10 * k + 10]
        w, U = np.linalg.eigh(S @ pseudo_inertia(x) @ S)
        expected = parameters_from_pseudo_inertia(S_inv @ (U * np.maximum(w, 0.0)) @ U.T @ S_inv)
        np.testing.assert_allclose(out[10 * k:10 * k + 10], expected, rtol=0, atol=1e-12 * np.abs(expected).max())
        clipped += w.min() < 0
    assert 0 < clipped < nominal.nbodies


def test_a_body_below_the_floor_is_found_by_its_eigenvalues():
    """_body_steps.below_floor where its Cholesky test (shift 2 FLOOR) fails: the smallest eigenvalue of S J S by
    the Jacobi rotations, against eigvalsh, on either side of FLOOR."""
    from robot_dynamics.controllers._body_steps import FLOOR, below_floor, pseudo_inertia as compiled_pseudo_inertia
    from robot_dynamics.inertia import parameters_from_pseudo_inertia
    rng = np.random.default_rng(4)
    S = np.linalg.qr(rng.normal(size=(4, 4)))[0] @ np.diag([1.0, 2.0, 0.5, 1.5])
    S = S @ S.T                                                     # symmetric positive definite
    for smallest in (0.5 * FLOOR, 1.5 * FLOOR, -FLOOR):
        Q = np.linalg.qr(rng.normal(size=(4, 4)))[0]
        Jw = Q @ np.diag([smallest, 0.3, 1.0, 2.0]) @ Q.T              # S J S
        S_inv = np.linalg.inv(S)
        pi_k = parameters_from_pseudo_inertia(S_inv @ Jw @ S_inv)
        w = np.linalg.eigvalsh(S @ compiled_pseudo_inertia(pi_k) @ S)
        assert below_floor(S[None], 0, pi_k, 0, np.empty((11, 1))) == (w.min() < FLOOR)
        assert (w.min() < FLOOR) == (smallest < FLOOR)


def test_the_ticks_views_and_pseudo_inertia_are_numpys():
    """The tick's buffers as the compiled tick views them (shaped: no reshape checks) hold what numpy's reshape of
    the same buffer holds, in its memory; the pseudo-inertia written out is inertia.pseudo_inertia's product."""
    from robot_dynamics.controllers import _body_steps, _composite_call as fused, _composite_tick as kernel
    nv, nq, nb, m = 7, 8, 3, 20
    data = np.arange(float(fused.cs_size(nv, nq, nb, m)))
    for compiled, reshaped in zip(fused.cs_views(data, nv, nq, nb, m), fused.cs_views.py_func(data, nv, nq, nb, m)):
        np.testing.assert_array_equal(compiled, reshaped)                     # shapes too
        assert np.shares_memory(compiled, data)
    work, p = np.arange(float(kernel.work_size(nv, 10 * nb, m))), 10 * nb
    for compiled, reshaped in zip(kernel.work_views(work, nv, p, m), kernel.work_views.py_func(work, nv, p, m)):
        np.testing.assert_array_equal(compiled, reshaped)
    for pi_k in np.random.default_rng(5).normal(size=(20, 10)):
        np.testing.assert_allclose(_body_steps.pseudo_inertia(pi_k), pseudo_inertia(pi_k), rtol=0, atol=1e-15 * 4)
