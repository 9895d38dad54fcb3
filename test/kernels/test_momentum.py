"""The momentum p = M v, its regressor (Y_p pi = M v, Y_h pi = C^T v - g) and its filtered form W pi = tau_f.

Independent routes: M and C from dynamics() (a different kernel), the momentum's rate by central differences
along a simulated motion (pdot = tau + C^T v - g is a physical law, not a definition of Y_h), the kinetic energy's
gradient for fixed bases (C^T v = dT/dq), Pinocchio (test_pinocchio.py) and MuJoCo's applied torques
(test_mujoco.py).
"""
import numpy as np
import pytest

import robot_dynamics as rd
from random_urdf import random_urdf
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.controllers import MomentumFilter, Simulator

IDENTITY = 1e-12          # exact identities, relative to the largest entry
DIFFERENCE = 1e-7         # central differences of step 1e-5 (error ~h^2 times the third derivative)

TREES = [(seed, floating) for seed in range(4) for floating in (False, True)]


@pytest.fixture(scope="module", params=TREES, ids=[f"tree{s}-{'floating' if f else 'fixed'}" for s, f in TREES])
def tree(request):
    seed, floating = request.param
    return rd.load_urdf(random_urdf(seed, n_links=7), floating_base=floating)


def relative(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


def test_the_momentum_is_m_v(tree):
    """momentum(q, v) (its own kernel, M never formed) against M v from dynamics(), for one state, a batch of any
    shape (each state its single call) and out=."""
    rng = np.random.default_rng(5)
    Q, V = (np.array(x) for x in zip(*(tree.random_state(rng) for _ in range(6))))
    for q, v in zip(Q, V):
        assert relative(tree.momentum(q, v), tree.dynamics(q, v).M @ v) < IDENTITY
    p = tree.momentum(Q.reshape(2, 3, -1), V.reshape(2, 3, -1))
    assert p.shape == (2, 3, tree.nv)
    np.testing.assert_array_equal(p.reshape(6, -1), [tree.momentum(q, v) for q, v in zip(Q, V)])
    out = np.empty((6, tree.nv))
    assert tree.momentum(Q, V, out=out) is out
    np.testing.assert_array_equal(out, p.reshape(6, -1))


def test_momentum_and_its_rate_are_linear_in_the_parameters(tree):
    rng = np.random.default_rng(0)
    pi = tree.parameters
    for _ in range(3):
        q, v = tree.random_state(rng)
        Y_p, Y_h = tree.momentum_regressor(q, v)
        d = tree.dynamics(q, v)
        assert relative(Y_p @ pi, d.M @ v) < IDENTITY
        assert relative(Y_h @ pi, d.C.T @ v - d.g) < IDENTITY
        other = rng.uniform(0.5, 2.0, pi.size) * pi                       # any parameters, the same map
        d = tree.with_parameters(other).dynamics(q, v)
        assert relative(Y_p @ other, d.M @ v) < IDENTITY
        assert relative(Y_h @ other, d.C.T @ v - d.g) < IDENTITY


def test_the_momentum_changes_as_torque_plus_y_h_pi(tree):
    """d/dt (Y_p pi) = tau + Y_h pi along the motion the torque causes: central differences of p(t)."""
    rng = np.random.default_rng(1)
    q, v = tree.random_state(rng)
    tau = rng.normal(size=tree.nv)
    a = tree.forward_dynamics(q, v, tau)
    pi, h = tree.parameters, 1e-5

    def momentum(t):                       # q(t), v(t) to second order: exp of the tangent path, v + a t
        return tree.momentum_regressor(tree.integrate(q, v * t + 0.5 * a * t * t), v + a * t)[0] @ pi

    rate = (momentum(h) - momentum(-h)) / (2 * h)
    assert relative(rate, tau + tree.momentum_regressor(q, v)[1] @ pi) < DIFFERENCE


def test_on_a_fixed_base_c_transpose_v_is_the_kinetic_energy_gradient():
    robot = rd.load_urdf(bundled_urdf("arm7"))
    rng = np.random.default_rng(2)
    q, v = robot.random_state(rng)
    h = 1e-6
    grad = np.array([(robot.kinetic_energy(q + h * e, v) - robot.kinetic_energy(q - h * e, v)) / (2 * h)
                     for e in np.eye(robot.nv)])
    Y_p, Y_h = robot.momentum_regressor(q, v)
    assert relative(Y_h @ robot.parameters + robot.gravity_vector(q), grad) < DIFFERENCE


def test_a_mass_on_the_last_joints_axis_is_the_same_mass_on_the_link_before():
    """Why a payload's mass cannot be learnt while every body adapts (Gautier & Khalil's regrouping): a point mass
    at the origin of the last joint, on its axis, moves with the link before whatever that joint does.  So the
    direction d = (+1 kg there on the last body, -1 kg at the same point on its parent) changes no regressor."""
    from robot_dynamics.controllers import payload_parameters

    robot = rd.load_urdf(bundled_urdf("arm7"))
    rng = np.random.default_rng(6)
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    T = robot.body_placements(q)
    joint_origin = (np.linalg.inv(T[-2]) @ T[-1])[:3, 3]                 # in the parent's frame
    d = np.zeros(robot.parameters.size)
    d[-10] = 1.0
    d[-20:-10] = -payload_parameters(1.0, joint_origin)
    Y_p, Y_h = robot.momentum_regressor(q, v)
    for Y in (Y_p, Y_h, robot.regressor(q, v, v, a)):
        assert np.max(np.abs(Y @ d)) < 1e-12 * np.max(np.abs(Y))
    assert np.max(np.abs(robot.regressor(q, v, a, a) @ d)) > 1e-3        # only C(q, v) v_r with v_r != v sees it


def test_mimic_joints_couple_the_momentum_as_the_mass_matrix():
    robot = rd.load_urdf(random_urdf(7, n_links=8, mimic=True), mimic=True)
    rng = np.random.default_rng(3)
    q, v = robot.random_state(rng)
    Y_p, Y_h = robot.momentum_regressor(q, v)
    d = robot.dynamics(q, v)
    assert relative(Y_p @ robot.parameters, d.M @ v) < IDENTITY
    assert relative(robot.momentum(q, v), d.M @ v) < IDENTITY
    assert relative(Y_h @ robot.parameters, d.C.T @ v - d.g) < IDENTITY


def test_a_batch_is_its_states():
    robot = rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)
    rng = np.random.default_rng(4)
    Q, V = (np.array(x) for x in zip(*(robot.random_state(rng) for _ in range(5))))
    Y_p, Y_h = robot.momentum_regressor(Q.reshape(5, 1, -1), V.reshape(5, 1, -1))
    assert Y_p.shape == Y_h.shape == (5, 1, robot.nv, 10 * robot.nbodies)
    for k in range(5):
        one = robot.momentum_regressor(Q[k], V[k])
        np.testing.assert_allclose(Y_p[k, 0], one[0], rtol=0, atol=1e-13)
        np.testing.assert_allclose(Y_h[k, 0], one[1], rtol=0, atol=1e-13)


# ---- the filtered form ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def log():
    """arm7 driven by a sampled torque (held over each 1 ms tick), simulated by RK4 at 0.25 ms."""
    robot = rd.load_urdf(bundled_urdf("arm7"))
    rng = np.random.default_rng(5)
    q0 = robot.neutral() + 0.3 * rng.uniform(-1, 1, robot.nv)
    phases = rng.uniform(0, 2 * np.pi, robot.nv)
    gravity = robot.gravity_vector(q0)

    def torque(t, q, v):
        return gravity + 2.0 * np.sin(3.0 * t + phases) - 5.0 * v

    rollout = Simulator(robot, 2.5e-4).run(q0, np.zeros(robot.nv), torque, 1.0, control_period=1e-3)
    every = slice(None, None, 4)                                          # the 1 ms ticks
    return robot, rollout.t[every], rollout.q[every], rollout.v[every], rollout.tau[every]


def test_the_filtered_regressor_predicts_the_filtered_torque(log):
    """W pi = tau_f: exact for the filters' linear part, the regressors linear between 1 ms samples."""
    robot, t, q, v, tau = log
    W, tau_f = MomentumFilter(robot, cutoff=2.0).replay(t, q, v, tau)
    error = W @ robot.parameters - tau_f
    assert np.max(np.abs(error[100:])) < 1e-5 * np.max(np.abs(tau_f[100:]))
    # not a test that cannot fail: another robot's parameters do not predict it
    other = W @ (1.2 * robot.parameters) - tau_f
    assert np.max(np.abs(other[100:])) > 0.1 * np.max(np.abs(tau_f[100:]))


def test_replay_is_the_filter_stepped_by_hand(log):
    robot, t, q, v, tau = log
    W, tau_f = MomentumFilter(robot, cutoff=5.0).replay(t[:50], q[:50], v[:50], tau[:50])
    one = MomentumFilter(robot, cutoff=5.0)
    W0, f0 = one.start(q[0], v[0])
    assert np.all(W0 == 0) and np.all(f0 == 0)
    for k in range(1, 50):
        Wk, fk = one.step(q[k], v[k], tau[k - 1], t[k] - t[k - 1])
        np.testing.assert_allclose(Wk, W[k], rtol=0, atol=1e-12)
        np.testing.assert_allclose(fk, tau_f[k], rtol=0, atol=1e-12)


def test_the_filter_refuses_a_bad_cutoff_and_a_log_out_of_order(log):
    robot, t, q, v, tau = log
    for cutoff in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="cutoff"):
            MomentumFilter(robot, cutoff)
    with pytest.raises(ValueError, match="increasing"):
        MomentumFilter(robot, 2.0).replay(t[::-1], q, v, tau)
