"""momentum_rate: p = M v and h = C^T v - g from one kernel call (algorithms/momentum_observer.py).

Independent routes: Pinocchio 4.1 (crba with model.armature times v, computeCoriolisMatrix transposed times v --
C^T v is unique, Mdot = C + C^T fixes it -- and computeGeneralizedGravity); our dynamics() (another kernel, M, C and
g formed); and the physical law pdot = tau + h, central differences of p along the motion tau causes.
"""
import functools

import numpy as np
import pinocchio  # noqa: F401  (the oracle: a missing Pinocchio must fail the run, not skip it)
import pytest

import robot_dynamics as rd
from oracle import PinocchioTwin, erd_path, relative_error
from random_urdf import random_urdf

IDENTITY = 1e-12          # the same quantity by two routes, relative to its largest entry
DIFFERENCE = 1e-7         # central differences of step 1e-5 (error ~h^2 times the third derivative)

# example-robot-data: an arm (panda, a mimic finger as an independent joint), a quadruped and a humanoid with
# mimic grippers, fixed and floating
ROBOTS = [("panda.urdf", False), ("ur5_robot.urdf", False), ("solo12.urdf", True), ("tiago_pro.urdf", True)]


@functools.lru_cache(maxsize=None)
def with_armature(name, floating_base):
    """Our robot and Pinocchio's, both with the same random armature on every coordinate."""
    path = erd_path(name)
    rigid = rd.load_urdf(path, floating_base=floating_base)
    armature = np.random.default_rng(len(name)).uniform(0.05, 0.5, rigid.nv)
    robot = rigid.with_drives(armature=armature)
    twin = PinocchioTwin(robot, path, floating_base=floating_base)
    twin.model.armature = twin.v(armature)
    return robot, twin


@pytest.mark.parametrize("name, floating_base", ROBOTS, ids=[n[:-5] for n, _ in ROBOTS])
def test_against_pinocchio(name, floating_base):
    robot, twin = with_armature(name, floating_base)
    rng = np.random.default_rng(1)
    Q, V = (np.array(x) for x in zip(*(robot.random_state(rng) for _ in range(3))))
    P, H = robot.momentum_rate(Q, V)                                       # a batch, and each state alone
    for q, v, p_batch, h_batch in zip(Q, V, P, H):
        p, h = robot.momentum_rate(q, v)
        M = twin.mass_matrix(q)
        assert np.max(np.abs(np.diag(M) - robot.mass_matrix(q).diagonal())) < IDENTITY * np.max(np.abs(M))
        assert relative_error(p, M @ v) < IDENTITY
        assert relative_error(h, twin.coriolis_matrix(q, v).T @ v - twin.gravity_vector(q)) < IDENTITY
        np.testing.assert_array_equal(p_batch, p)
        np.testing.assert_array_equal(h_batch, h)


TREES = [(seed, floating, mimic) for seed in range(3) for floating in (False, True) for mimic in (False, True)]


@pytest.mark.parametrize("seed, floating_base, mimic", TREES,
                         ids=[f"tree{s}-{'floating' if f else 'fixed'}{'-mimic' if m else ''}" for s, f, m in TREES])
def test_random_trees_against_dynamics(seed, floating_base, mimic):
    """Every joint type, branching and mimic couplings: p = (M + diag(armature)) v and h = C^T v - g with M, C and
    g from dynamics() (M, C formed), and p equal to momentum() (another kernel, O(n d))."""
    rigid = rd.load_urdf(random_urdf(seed, n_links=7, mimic=mimic), floating_base=floating_base, mimic=mimic)
    rng = np.random.default_rng(seed)
    robot = rigid.with_drives(armature=rng.uniform(0.05, 0.5, rigid.nv))
    for _ in range(3):
        q, v = robot.random_state(rng)
        p, h = robot.momentum_rate(q, v)
        d = robot.dynamics(q, v)
        assert relative_error(p, d.M @ v) < IDENTITY
        assert relative_error(p, robot.momentum(q, v)) < IDENTITY
        assert relative_error(h, d.C.T @ v - d.g) < IDENTITY
        assert relative_error(h, rigid.momentum_rate(q, v)[1]) < IDENTITY          # the armature is not in h


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_the_momentum_changes_at_tau_plus_h(floating_base):
    """pdot = tau + h along the motion tau causes (forward_dynamics, with the armature): central differences of
    p(t) -- a law of motion, not the definition of h."""
    rigid = rd.load_urdf(random_urdf(5, n_links=7), floating_base=floating_base)
    rng = np.random.default_rng(2)
    robot = rigid.with_drives(armature=rng.uniform(0.05, 0.5, rigid.nv))
    q, v = robot.random_state(rng)
    tau = rng.normal(size=robot.nv)
    a = robot.forward_dynamics(q, v, tau)
    step = 1e-5

    def momentum(t):                     # q(t), v(t) to second order: exp of the tangent path, v + a t
        return robot.momentum_rate(robot.integrate(q, v * t + 0.5 * a * t * t), v + a * t)[0]

    rate = (momentum(step) - momentum(-step)) / (2 * step)
    assert relative_error(rate, tau + robot.momentum_rate(q, v)[1]) < DIFFERENCE
    assert relative_error(rate, tau) > 1e-3                                # h matters here


def test_out_and_batch_shapes():
    robot = rd.load_urdf(random_urdf(1, n_links=6))
    rng = np.random.default_rng(3)
    Q, V = (np.array(x) for x in zip(*(robot.random_state(rng) for _ in range(6))))
    P, H = robot.momentum_rate(Q.reshape(2, 3, -1), V.reshape(2, 3, -1))
    assert P.shape == H.shape == (2, 3, robot.nv)
    out = (np.empty((6, robot.nv)), np.empty((6, robot.nv)))
    result = robot.momentum_rate(Q, V, out=out)
    assert result[0] is out[0] and result[1] is out[1]
    np.testing.assert_array_equal(out[0], P.reshape(6, -1))
    np.testing.assert_array_equal(out[1], H.reshape(6, -1))
    with pytest.raises(ValueError, match="v"):
        robot.momentum_rate(Q[0], np.full(robot.nv, np.nan))
