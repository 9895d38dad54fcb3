"""Computed torque against the closed-form error dynamics; Slotine-Li against its Lyapunov function."""
import functools
import pathlib

import numpy as np
import pytest
from scipy.linalg import expm

import robot_dynamics as rd
from robot_dynamics.controllers import (ComputedTorque, InertiaMetric, Simulator, SlotineLi, SumOfSines,
                                        excitation_gain, gain_matrix, parameters_from_pseudo_inertia,
                                        pseudo_inertia)

URDF = pathlib.Path(__file__).resolve().parents[2] / "urdf"


def load(name, floating_base=False):
    return rd.load_urdf(str(URDF / name), floating_base=floating_base)


def exciting_trajectory(robot, rng, amplitude=0.3, period=1.0):
    """Three harmonics of a 1 s period per joint: the last second repeats the first one's reference."""
    n = robot.nv
    harmonics = np.array([1.0, 2.0, 3.0])
    return SumOfSines(0.3 * rng.uniform(-1, 1, n), amplitude * rng.uniform(0.5, 1.0, (n, 3)) / harmonics,
                      2 * np.pi / period * harmonics, rng.uniform(0, 2 * np.pi, (n, 3)))


# ---- computed torque -------------------------------------------------------------------------------------------

def closed_form_error(K_p, K_d, e0, e_dot0, t):
    """e(t) of edd + K_d ed + K_p e = 0 (diagonal gains): per joint, [e, ed](t) = expm(A t) [e0, ed0]."""
    e = np.empty((len(t), len(e0)))
    for j, (kp, kd) in enumerate(zip(K_p, K_d)):
        A = np.array([[0.0, 1.0], [-kp, -kd]])
        e[:, j] = (expm(A * t[:, None, None]) @ [e0[j], e_dot0[j]])[:, 0]
    return e


def decay_rate(kp, kd):
    """-max Re of the roots of r^2 + kd r + kp."""
    return -np.max(np.roots([1.0, kd, kp]).real)


def test_computed_torque_error_follows_the_linear_closed_loop():
    robot = load("arm7.urdf")
    rng = np.random.default_rng(11)
    trajectory = exciting_trajectory(robot, rng)
    # under-, critically and over-damped joints
    K_p = np.array([100.0, 144.0, 100.0, 400.0, 100.0, 225.0, 81.0])
    K_d = np.array([12.0, 24.0, 25.0, 30.0, 20.0, 30.0, 18.0])
    controller = ComputedTorque(robot, K_p, K_d)
    ref0 = trajectory(0.0)
    q0, v0 = ref0.q + rng.uniform(-0.1, 0.1, robot.nv), ref0.v + rng.uniform(-0.2, 0.2, robot.nv)

    def torque(t, q, v):
        ref = trajectory(t)
        return controller.torque(q, v, ref.q, ref.v, ref.a)

    rollout = Simulator(robot, 0.002).run(q0, v0, torque, 2.5)
    e = trajectory(rollout.t).q - rollout.q
    expected = closed_form_error(K_p, K_d, ref0.q - q0, ref0.v - v0, rollout.t)
    np.testing.assert_allclose(e, expected, atol=2e-8)               # RK4 at h = 2 ms
    assert np.max(np.abs(e[-1])) <= 1e-6


def test_computed_torque_error_decays_at_the_predicted_rate():
    """Critically damped gains: e(t) = (e0 + (ed0 + w e0) t) exp(-w t); fit log|e| / t on the simulated error."""
    robot = load("torso_two_arm.urdf")
    rng = np.random.default_rng(12)
    w = 8.0
    controller = ComputedTorque(robot, w**2, 2 * w)
    trajectory = exciting_trajectory(robot, rng)
    ref0 = trajectory(0.0)
    q0 = ref0.q + 0.05

    def torque(t, q, v):
        ref = trajectory(t)
        return controller.torque(q, v, ref.q, ref.v, ref.a)

    rollout = Simulator(robot, 0.002).run(q0, ref0.v, torque, 2.0)
    e = np.abs(trajectory(rollout.t).q - rollout.q)[:, 0]
    late = rollout.t >= 0.5
    # edot0 = 0: e(t) = e0 (1 + w t) exp(-w t), so log e - log(1 + w t) falls with slope -w
    slope = np.polyfit(rollout.t[late], np.log(e[late]) - np.log1p(w * rollout.t[late]), 1)[0]
    assert slope == pytest.approx(-w, rel=1e-4)


def test_computed_torque_floating_base_regulation():
    """A fully actuated floating base (base wrench included) converges to q_d on the manifold."""
    robot = load("quadruped.urdf", floating_base=True)
    rng = np.random.default_rng(13)
    q_d = robot.random_configuration(rng)
    q0 = robot.integrate(q_d, 0.2 * rng.normal(size=robot.nv))
    controller = ComputedTorque(robot, 100.0, 20.0)
    zero = np.zeros(robot.nv)
    rollout = Simulator(robot, 0.005).run(q0, zero, lambda t, q, v: controller.torque(q, v, q_d, zero, zero), 3.0)
    errors = np.linalg.norm(robot.difference(rollout.q, np.broadcast_to(q_d, rollout.q.shape)), axis=1)
    assert errors[-1] <= 1e-6 * errors[0]
    assert np.all(np.diff(errors[rollout.t > 0.5]) < 0)


def test_computed_torque_is_inverse_dynamics_on_the_reference():
    robot = load("arm7.urdf")
    rng = np.random.default_rng(14)
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    tau = ComputedTorque(robot, 50.0, 10.0).torque(q, v, q, v, a)
    d = robot.dynamics(q, v)
    np.testing.assert_allclose(tau, d.M @ a + d.C @ v + d.g, atol=1e-10)


@pytest.mark.parametrize("gain, expected", [
    (2.0, 2.0 * np.eye(3)),
    ([1.0, 2.0, 3.0], np.diag([1.0, 2.0, 3.0])),
    (np.arange(9.0).reshape(3, 3), np.arange(9.0).reshape(3, 3)),
])
def test_gain_matrix_shapes(gain, expected):
    np.testing.assert_array_equal(gain_matrix(gain, 3), expected)


@pytest.mark.parametrize("gain", [[1.0, 2.0], np.ones((2, 3)), np.nan])
def test_gain_matrix_rejects_bad_gains(gain):
    with pytest.raises(ValueError):
        gain_matrix(gain, 3)


def test_controller_rejects_bad_states():
    robot = load("arm7.urdf")
    controller = ComputedTorque(robot, 1.0, 1.0)
    zero = np.zeros(robot.nv)
    with pytest.raises(ValueError):
        controller.torque(zero[:-1], zero, zero, zero, zero)
    with pytest.raises(ValueError):
        controller.torque(zero, zero + np.nan, zero, zero, zero)


def test_computed_torque_refusals_name_the_culprit_and_write_nothing():
    """On a floating base (q_d (-) q in the compiled tick): a NaN in q or q_d, a zero base quaternion, an out that
    is an input -- each a ValueError naming it, out untouched; a strided or integer input gives the same torque as
    its float64 copy, and gains set between ticks act as a new controller's (M a_cmd + h by the robot's own
    inverse dynamics)."""
    robot = load("quadruped.urdf", floating_base=True)
    rng = np.random.default_rng(21)
    q, q_d = robot.random_configuration(rng), robot.random_configuration(rng)
    v, v_d, a_d = rng.normal(size=(3, robot.nv))
    controller = ComputedTorque(robot, 100.0, 20.0)
    out = np.full(robot.nv, 7.0)
    for i, name in ((0, "q"), (2, "q_d")):
        args = [q, v, q_d, v_d, a_d]
        args[i] = args[i].copy()
        args[i][0] = np.nan
        with pytest.raises(ValueError, match=f"^{name} is not finite"):
            controller.torque(*args, out=out)
        args[i][0] = 0.0
        args[i][3:7] = 0.0
        with pytest.raises(ValueError, match="zero or non-finite quaternion"):
            controller.torque(*args, out=out)
    with pytest.raises(ValueError, match="overlap"):
        controller.torque(q, v, q_d, v_d, a_d, out=v)
    assert np.all(out == 7.0)
    tau = controller.torque(q, v, q_d, v_d, a_d)
    strided = np.stack([v, v], axis=1)[:, 0]
    np.testing.assert_array_equal(controller.torque(q, strided, q_d, v_d, a_d), tau)
    controller.K_p, controller.K_d = np.linspace(10.0, 50.0, robot.nv), 5.0
    a_cmd = a_d + 5.0 * (v_d - v) + np.linspace(10.0, 50.0, robot.nv) * robot.difference(q, q_d)
    np.testing.assert_allclose(controller.torque(q, v, q_d, v_d, a_d), robot.inverse_dynamics(q, v, a_cmd),
                               rtol=1e-12, atol=1e-9)


# ---- Slotine-Li ------------------------------------------------------------------------------------------------

def mismatched(robot, rng, spread=0.3):
    """The true parameters scaled per body by random factors in [1 - spread, 1 + spread]."""
    return robot.parameters * np.repeat(rng.uniform(1 - spread, 1 + spread, robot.nbodies), 10)


ADAPTIVE_DURATION = 5.0


@pytest.fixture(scope="module", params=["arm7.urdf", "torso_two_arm.urdf"])
def adaptive_rollout(request):
    """Slotine-Li with every body's parameters off by up to 30 %, the estimate integrated with the state (RK4)."""
    robot = load(request.param)
    rng = np.random.default_rng(0)
    pi_hat0 = mismatched(robot, rng)
    model = robot.with_parameters(pi_hat0)
    period = 0.5
    trajectory = exciting_trajectory(robot, rng, amplitude=0.3, period=period)
    K_D = 10.0 * np.diag(model.mass_matrix(trajectory(0.0).q))                   # 10 / s on every joint
    controller = SlotineLi(model, 5.0, K_D, excitation_gain(model, trajectory, np.diag(K_D), period, 100.0),
                           pi_hat=pi_hat0)

    def closed_loop(t, q, v, pi_hat):
        ref = trajectory(t)
        return controller.law(q, v, ref.q, ref.v, ref.a, pi_hat)

    ref0 = trajectory(0.0)
    rollout = Simulator(robot, 0.002).run_with_state(ref0.q, ref0.v, pi_hat0, closed_loop, ADAPTIVE_DURATION)
    return robot, controller, trajectory, rollout


def rms_error(trajectory, rollout, start, stop):
    window = (rollout.t >= start) & (rollout.t <= stop)
    e = trajectory(rollout.t[window]).q - rollout.q[window]
    return np.sqrt(np.mean(np.sum(e**2, axis=1)))


def test_slotine_li_reduces_the_tracking_error_tenfold(adaptive_rollout):
    _, _, trajectory, rollout = adaptive_rollout
    first = rms_error(trajectory, rollout, 0.0, 1.0)
    last = rms_error(trajectory, rollout, ADAPTIVE_DURATION - 1.0, ADAPTIVE_DURATION)
    assert first / last >= 10.0, (first, last)


def test_slotine_li_lyapunov_function_never_increases(adaptive_rollout):
    """V(t) is non-increasing, and V(0) - V(T) equals the dissipated integral of s^T K_D s."""
    robot, controller, trajectory, rollout = adaptive_rollout
    ref = trajectory(rollout.t)
    V = np.array([controller.lyapunov(q, v, q_d, v_d, robot.parameters, pi_hat)
                  for q, v, q_d, v_d, pi_hat in zip(rollout.q, rollout.v, ref.q, ref.v, rollout.z)])
    assert np.max(np.diff(V)) <= 1e-9 * V[0]                              # RK4's error at h = 2 ms
    s = np.array([controller.sliding(q, v, q_d, v_d, a_d).s
                  for q, v, q_d, v_d, a_d in zip(rollout.q, rollout.v, ref.q, ref.v, ref.a)])
    power = np.einsum("ti,ij,tj->t", s, controller.K_D, s)
    dissipated = np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(rollout.t))
    assert V[0] - V[-1] == pytest.approx(dissipated, rel=1e-3)           # trapezoidal rule on 2 ms samples


def test_slotine_li_estimate_stays_finite(adaptive_rollout):
    robot, _, _, rollout = adaptive_rollout
    assert np.all(np.isfinite(rollout.z))
    assert np.max(np.abs(rollout.z)) < 10 * np.max(np.abs(robot.parameters))


def test_slotine_li_with_exact_parameters_on_the_reference_is_inverse_dynamics():
    robot = load("torso_two_arm.urdf")
    rng = np.random.default_rng(15)
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    controller = SlotineLi(robot, 3.0, 5.0, 1.0)
    np.testing.assert_allclose(controller.torque(q, v, q, v, a), robot.inverse_dynamics(q, v, a), atol=1e-10)


def test_slotine_li_sliding_variables():
    robot = load("arm7.urdf")
    rng = np.random.default_rng(16)
    q, v = robot.random_state(rng)
    q_d, v_d, a_d = rng.normal(size=(3, robot.nv))
    Lambda = rng.uniform(1.0, 5.0, robot.nv)
    sl = SlotineLi(robot, Lambda, 1.0, 1.0).sliding(q, v, q_d, v_d, a_d)
    np.testing.assert_allclose(sl.v_r, v_d + Lambda * (q_d - q), atol=1e-14)
    np.testing.assert_allclose(sl.a_r, a_d + Lambda * (v_d - v), atol=1e-14)
    np.testing.assert_allclose(sl.s, v - sl.v_r, atol=1e-14)


def test_slotine_li_update_is_adapt_then_torque():
    robot = load("arm7.urdf")
    rng = np.random.default_rng(17)
    q, v = robot.random_state(rng)
    q_d, v_d, a_d = rng.normal(size=(3, robot.nv))
    pi_hat0 = mismatched(robot, rng)
    one, two = (SlotineLi(robot, 2.0, 4.0, 0.5, pi_hat=pi_hat0) for _ in range(2))
    tau = one.update(q, v, q_d, v_d, a_d, 0.01)
    two.adapt(q, v, q_d, v_d, a_d, 0.01)
    np.testing.assert_allclose(one.pi_hat, two.pi_hat, atol=1e-14)
    np.testing.assert_allclose(tau, two.torque(q, v, q_d, v_d, a_d), atol=1e-12)
    _, pi_hat_dot = SlotineLi(robot, 2.0, 4.0, 0.5, pi_hat=pi_hat0).law(q, v, q_d, v_d, a_d)
    np.testing.assert_allclose(one.pi_hat, pi_hat0 + 0.01 * pi_hat_dot, atol=1e-14)


def test_slotine_li_runs_on_a_floating_base():
    robot = load("quadruped.urdf", floating_base=True)
    rng = np.random.default_rng(18)
    q, v = robot.random_state(rng)
    q_d = robot.random_configuration(rng)
    controller = SlotineLi(robot, 2.0, 4.0, 0.1, pi_hat=mismatched(robot, rng))
    tau = controller.update(q, v, q_d, np.zeros(robot.nv), np.zeros(robot.nv), 0.001)
    assert tau.shape == (robot.nv,) and np.all(np.isfinite(tau)) and np.all(np.isfinite(controller.pi_hat))


def test_the_compiled_tick_is_the_law_transcribed_in_numpy():
    """SlotineLi.update (compiled) against the law written here with numpy for five ticks on arm7 with drives
    (module docstring; paper 002, eq. (16)): e = q_d - q, v_r = v_d + Lambda e, a_r = a_d + Lambda edot, s = v - v_r,
    pi <- P(pi - dt Gamma Y^T s) with P numpy's eigh of the whitened pseudo-inertia, clipped at the floor, and
    tau = Y pi + armature a_r + damping v_r + friction tanh(v_r / 0.01) - K_D s; the projection acts on some tick.
    Then a non-finite input, or a step that overflows, is refused by name and leaves pi_hat as it was."""
    robot = load("arm7.urdf").with_drives(armature=0.05, damping=0.3, friction=0.4)
    rng = np.random.default_rng(37)
    metric, floor, dt = InertiaMetric(robot.parameters), 0.2, 1e-3
    Lambda, K_D = np.diag(rng.uniform(2, 6, robot.nv)), np.diag(rng.uniform(10, 30, robot.nv))
    Gamma = metric.gain(3000.0)
    controller = SlotineLi(robot, Lambda, K_D, Gamma, pi_hat=mismatched(robot, rng),
                           projection=functools.partial(metric.project, floor=floor))
    pi = controller.pi_hat.copy()

    def project(pi):
        w, U = np.linalg.eigh(metric.S @ pseudo_inertia(pi.reshape(-1, 10)) @ metric.S)
        J = metric.S_inv @ (U * np.maximum(w, floor)[:, None, :]) @ np.swapaxes(U, -1, -2) @ metric.S_inv
        return parameters_from_pseudo_inertia(J).reshape(-1), w.min() < floor

    clipped = []
    for _ in range(5):
        q_d, v_d = robot.random_state(rng)
        q, v, a_d = q_d + 0.1 * rng.normal(size=robot.nv), v_d + rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        e, e_dot = q_d - q, v_d - v
        v_r, a_r = v_d + Lambda @ e, a_d + Lambda @ e_dot
        s = v - v_r
        Y = robot.regressor(q, v, v_r, a_r)
        pi, acted = project(pi - dt * Gamma @ (Y.T @ s))
        clipped.append(acted)
        tau = Y @ pi + 0.05 * a_r + 0.3 * v_r + 0.4 * np.tanh(v_r / 0.01) - K_D @ s
        np.testing.assert_allclose(controller.update(q, v, q_d, v_d, a_d, dt), tau, rtol=1e-12,
                                   atol=1e-12 * np.abs(tau).max())
        np.testing.assert_allclose(controller.pi_hat, pi, rtol=1e-12, atol=1e-12 * np.abs(pi).max())
    assert any(clipped)
    kept = controller.pi_hat
    bad = q.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="q is not finite"):
        controller.update(bad, v, q_d, v_d, a_d, dt)
    with pytest.raises(ValueError, match="pi_hat \\+ dt pi_hat_dot is not finite"):
        controller.update(q, v, q_d, v_d, a_d, 1e308)
    assert np.array_equal(controller.pi_hat, kept)


def test_slotine_li_sampled_with_projection_keeps_the_estimate_physical():
    """The ROS-node use: update() once per 1 ms tick, torque held, the projection after every step. The start,
    50 % off, drives some estimates out of the physical set, so the projection acts."""
    robot = load("arm7.urdf")
    rng = np.random.default_rng(19)
    pi_hat0 = mismatched(robot, rng, spread=0.5)
    metric = InertiaMetric(pi_hat0)
    trajectory = exciting_trajectory(robot, rng, amplitude=0.3, period=0.5)
    model = robot.with_parameters(pi_hat0)
    K_D = 10.0 * np.diag(model.mass_matrix(trajectory(0.0).q))
    projected = []

    def projection(pi):
        physical = metric.project(pi)
        projected.append(not np.array_equal(physical, pi) and np.max(np.abs(physical - pi)) > 1e-12)
        return physical

    controller = SlotineLi(model, 5.0, K_D, metric.gain(30.0), pi_hat=pi_hat0, projection=projection)
    dt = 0.001
    estimates = []

    def tick(t, q, v):
        ref = trajectory(t)
        tau = controller.update(q, v, ref.q, ref.v, ref.a, dt)
        estimates.append(controller.pi_hat)
        return tau

    ref0 = trajectory(0.0)
    rollout = Simulator(robot, dt).run(ref0.q, ref0.v, tick, 3.0, control_period=dt)
    estimates = np.array(estimates)
    assert np.any(projected)
    assert np.all(np.isfinite(estimates))
    J = pseudo_inertia(estimates.reshape(len(estimates), robot.nbodies, 10))
    assert np.min(np.linalg.eigvalsh(J)) >= -1e-12
    # sampling at 1 kHz limits the gain (and the final accuracy) well below the continuous-time run's
    assert rms_error(trajectory, rollout, 2.0, 3.0) < 0.8 * rms_error(trajectory, rollout, 0.0, 1.0)


# ---- the physical-consistency projection ---------------------------------------------------------------------

def test_pseudo_inertia_of_a_point_mass():
    """A point mass m at p has J = m [p; 1][p; 1]^T (second moments), and the map inverts."""
    m, p = 2.0, np.array([0.1, -0.2, 0.3])
    pi = np.concatenate([[m], m * p, [m * (p[1]**2 + p[2]**2), m * (p[0]**2 + p[2]**2), m * (p[0]**2 + p[1]**2),
                                      -m * p[0] * p[1], -m * p[0] * p[2], -m * p[1] * p[2]]])
    np.testing.assert_allclose(pseudo_inertia(pi), m * np.outer([*p, 1], [*p, 1]), atol=1e-15)
    random = np.random.default_rng(20).normal(size=(5, 10))
    np.testing.assert_allclose(parameters_from_pseudo_inertia(pseudo_inertia(random)), random, atol=1e-14)


def test_metric_is_the_affine_invariant_one():
    """dpi^T G dpi = tr(J0^-1 J(dpi) J0^-1 J(dpi)) per body, and gain(gamma) = gamma G^-1."""
    robot = load("arm7.urdf")
    metric = InertiaMetric(robot.parameters, regularization=0.0)
    dpi = np.random.default_rng(21).normal(size=robot.parameters.size)
    J0_inv = np.linalg.inv(pseudo_inertia(robot.parameters.reshape(-1, 10)))
    J = pseudo_inertia(dpi.reshape(-1, 10))
    expected = np.sum(np.trace(J0_inv @ J @ J0_inv @ J, axis1=1, axis2=2))
    assert dpi @ metric.matrix() @ dpi == pytest.approx(expected, rel=1e-6)   # J0 condition number ~1e4
    np.testing.assert_allclose(metric.gain(3.0) @ metric.matrix(), 3.0 * np.eye(dpi.size), atol=1e-8)


def test_projection_makes_every_body_physical_and_keeps_physical_ones():
    robot = load("torso_two_arm.urdf")
    rng = np.random.default_rng(22)
    metric = InertiaMetric(robot.parameters)
    unphysical = robot.parameters + rng.normal(size=robot.parameters.size)
    projected = metric.project(unphysical)
    assert np.min(np.linalg.eigvalsh(pseudo_inertia(projected.reshape(-1, 10)))) >= -1e-12
    np.testing.assert_allclose(metric.project(projected), projected, atol=1e-10)
    physical = mismatched(robot, rng)
    np.testing.assert_allclose(metric.project(physical), physical, atol=1e-10)
    floor = metric.project(unphysical, floor=0.1)
    assert np.all(floor[::10] > 0)                                          # masses strictly positive


def test_projection_never_moves_the_estimate_away_from_the_true_parameters():
    """A metric projection onto a convex set is non-expansive towards its members: why V keeps decreasing."""
    robot = load("arm7.urdf")
    rng = np.random.default_rng(23)
    metric = InertiaMetric(mismatched(robot, rng))
    G = metric.matrix()
    pi = robot.parameters
    for _ in range(20):
        estimate = pi + rng.normal(scale=0.5, size=pi.size)
        projected = metric.project(estimate)
        assert (projected - pi) @ G @ (projected - pi) <= (estimate - pi) @ G @ (estimate - pi) * (1 + 1e-12)



@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-6, 1e-4, 0.0099, 0.0101, 0.5, 2.0, 3.1])
def test_the_ticks_floating_base_error_is_pinocchios_twist(angle):
    """e = q_d (-) q of a floating base as the compiled ticks take it (configuration.lie_difference, on scalars, V(w)^-1
    in closed form and its series below |w| = 1e-2), against Pinocchio: q_d = q exp6(v) for a twist v of rotation
    angle `angle` (on both sides of the series' switch, from rest to near pi) gives e = v, seen through
    ComputedTorque's tick at rest with K_p = 1: tau = ID(q, 0, e)."""
    import pinocchio

    robot = load("quadruped.urdf", floating_base=True)
    controller, zero = ComputedTorque(robot, 1.0, 1.0, friction=False), np.zeros(robot.nv)
    rng = np.random.default_rng(7)
    for _ in range(10):
        q, v, axis = robot.random_configuration(rng), np.zeros(robot.nv), rng.normal(size=3)
        v[:3], v[3:6] = rng.normal(size=3), angle * axis / np.linalg.norm(axis)
        q_d = q.copy()
        q_d[:7] = pinocchio.SE3ToXYZQUAT(pinocchio.XYZQUATToSE3(q[:7]) * pinocchio.exp6(pinocchio.Motion(v[:6])))
        np.testing.assert_allclose(robot.difference(q, q_d), v, rtol=0, atol=1e-12 * np.abs(v).max())
        expected = robot.inverse_dynamics(q, zero, v)
        np.testing.assert_allclose(controller.torque(q, zero, q_d, zero, zero), expected, rtol=0,
                                   atol=1e-11 * np.abs(expected).max())
