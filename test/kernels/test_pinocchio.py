"""Every quantity against Pinocchio on real robots of example-robot-data, fixed and floating base, to 1e-9 relative.

C is not unique (paper 000): Pinocchio's and ours may differ, so C is checked through what is unique --
C v + g against rnea(q, v, 0) and C + C^T (= Mdot) against Pinocchio's C + C^T -- and the classic regressor
Y(q, v, v, a) against Pinocchio's joint torque regressor, which is unique because tau is linear in pi.
"""
import functools

import numpy as np
import pinocchio  # the oracle: a missing Pinocchio must fail the run, not skip it
import pytest

import robot_dynamics as rd
from oracle import PinocchioTwin, erd_path, relative_error

ROBOTS = [
    "panda.urdf",                       # 7 revolute + 2 prismatic fingers (one a mimic joint)
    "ur5_robot.urdf",
    "solo12.urdf",
    "talos_full_v2.urdf",               # 50 DoF with a floating base; mimic gripper joints
    "double_pendulum_continuous.urdf",  # continuous joints
    "tiago_pro.urdf",                   # continuous wheels, prismatic torso, mimic gripper
    "pr2.urdf",                         # continuous, prismatic, mimic
    "kinova.urdf",                      # continuous
]
TOL = 1e-9
ROUNDOFF = 1e-13        # the same algorithm compiled twice agrees to round-off (as test_identities.ROUNDOFF)
STATES = 3


@functools.lru_cache(maxsize=None)
def pair(name, floating_base, mimic=False):
    path = erd_path(name)
    robot = rd.load_urdf(path, floating_base=floating_base, mimic=mimic)
    return robot, PinocchioTwin(robot, path, floating_base=floating_base, mimic=mimic)


def states(robot, seed):
    rng = np.random.default_rng(seed)
    for _ in range(STATES):
        q, v = robot.random_state(rng)
        yield q, v, rng.normal(size=robot.nv)


CASES = [(name, fb) for name in ROBOTS for fb in (False, True)]
IDS = [f"{name[:-5]}-{'floating' if fb else 'fixed'}" for name, fb in CASES]


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    assert robot.nv == twin.model.nv
    worst = {}

    def check(what, ours, theirs):
        worst[what] = max(worst.get(what, 0.0), relative_error(ours, theirs))

    for q, v, a in states(robot, seed=len(name)):
        d = robot.dynamics(q, v, v_ref=v, a_ref=a)
        check("M", d.M, twin.mass_matrix(q))
        check("g", d.g, twin.gravity_vector(q))
        check("com", d.com, twin.com(q))
        check("J_com", d.J_com, twin.com_jacobian(q))
        check("C v + g", d.C @ v + d.g, twin.rnea(q, v, np.zeros(robot.nv)))
        C_pin = twin.coriolis_matrix(q, v)
        check("C + C^T", d.C + d.C.T, C_pin + C_pin.T)
        check("Y", d.Y, twin.regressor(q, v, a))
        Y_p, Y_h = robot.momentum_regressor(q, v)                     # C^T v is unique: Mdot v - C v
        check("Y_p pi = M v", Y_p @ robot.parameters, twin.mass_matrix(q) @ v)
        check("momentum p = M v", robot.momentum(q, v), twin.mass_matrix(q) @ v)
        check("Y_h pi = C^T v - g", Y_h @ robot.parameters, C_pin.T @ v - twin.gravity_vector(q))
        check("inverse dynamics", robot.inverse_dynamics(q, v, a), twin.rnea(q, v, a))
        check("forward dynamics", robot.forward_dynamics(q, v, a), twin.aba(q, v, a))
        for what, ours in (("M", robot.mass_matrix(q)), ("g", robot.gravity_vector(q)),
                           ("com", robot.com_position(q)), ("J_com", robot.com_jacobian(q)),
                           ("Y", robot.regressor(q, v, v, a))):
            # the same passes as dynamics(), in the same order, compiled apart: equal to round-off (with fused
            # multiply-adds, whether a shared callee is inlined -- it is not when numba loads it from its cache
            # -- may move the last bit, e.g. when test workers compile in parallel into one cache)
            assert relative_error(ours, getattr(d, what)) < ROUNDOFF, what + " (single method)"
    # The batched path (a parallel kernel) on the same states, against Pinocchio too.
    Q, V, A = (np.array(x) for x in zip(*states(robot, seed=len(name))))
    batch = robot.dynamics(Q, V, v_ref=V, a_ref=A)
    tau = robot.inverse_dynamics(Q, V, A)
    for i, (q, v, a) in enumerate(zip(Q, V, A)):
        check("M (batch)", batch.M[i], twin.mass_matrix(q))
        check("C v + g (batch)", batch.C[i] @ v + batch.g[i], twin.rnea(q, v, np.zeros(robot.nv)))
        check("J_com (batch)", batch.J_com[i], twin.com_jacobian(q))
        check("Y (batch)", batch.Y[i], twin.regressor(q, v, a))
        check("inverse dynamics (batch)", tau[i], twin.rnea(q, v, a))
    bad = {k: e for k, e in worst.items() if not e <= TOL}
    assert not bad, f"relative errors above {TOL}: {bad}"


MIMIC_ROBOTS = ["panda.urdf", "baxter.urdf", "tiago_pro.urdf", "pr2.urdf"]


@pytest.mark.filterwarnings("ignore::robot_dynamics.URDFWarning")
@pytest.mark.parametrize("name", MIMIC_ROBOTS, ids=[n[:-5] for n in MIMIC_ROBOTS])
def test_coupled_mimic_joints_against_pinocchio(name):
    """mimic=True against Pinocchio's mimic models: M, g, com, J_com and inverse dynamics to 1e-9.

    Pinocchio 4.1's computeCoriolisMatrix is not consistent on mimic models (its C v + g differs from its own
    rnea(q, v, 0) by up to 10 %, and C + C^T from Mdot), and its aba and regressor refuse mimic joints; so C is
    checked against Pinocchio's rnea (C v + g) and against central differences of M (C + C^T = Mdot, the
    finite-difference tolerance of test_identities), and the forward dynamics by inverting the inverse.
    """
    robot, twin = pair(name, False, mimic=True)
    assert robot.nv == twin.model.nv and robot.nv < rd.load_urdf(erd_path(name)).nv
    h = 1e-5
    for q, v, a in states(robot, seed=7):
        d = robot.dynamics(q, v)
        for what, ours, theirs in (("M", d.M, twin.mass_matrix(q)), ("g", d.g, twin.gravity_vector(q)),
                                   ("com", d.com, twin.com(q)), ("J_com", d.J_com, twin.com_jacobian(q)),
                                   ("C v + g", d.C @ v + d.g, twin.rnea(q, v, np.zeros(robot.nv))),
                                   ("inverse dynamics", robot.inverse_dynamics(q, v, a), twin.rnea(q, v, a))):
            assert relative_error(ours, theirs) < TOL, what
        Mdot = (robot.mass_matrix(robot.integrate(q, v, h)) - robot.mass_matrix(robot.integrate(q, v, -h))) / (2 * h)
        assert relative_error(d.C + d.C.T, Mdot) < 1e-7
        assert relative_error(robot.forward_dynamics(q, v, robot.inverse_dynamics(q, v, a)), a) < TOL


@pytest.mark.parametrize("name", ["solo12.urdf", "talos_full_v2.urdf"], ids=["solo12", "talos"])
def test_integrate_against_pinocchio(name):
    """q (+) v dt on a floating base (configuration.lie_integrate, compiled: the free flyer's SE(3) exponential)
    against Pinocchio's integrate, at random states and steps from a control tick to a large turn; a batch gives
    each row's single-state result bit for bit."""
    robot, twin = pair(name, True)
    rng = np.random.default_rng(4)
    states = [robot.random_state(rng) for _ in range(12)]
    steps = [1e-3, 0.5, 3.0, -2.0] * 3
    for (q, v), dt in zip(states, steps):
        expected = pinocchio.integrate(twin.model, twin.q(q), dt * twin.v(v))
        np.testing.assert_allclose(twin.q(robot.integrate(q, v, dt)), expected, rtol=0, atol=1e-12)
    Q, V = np.array([q for q, _ in states]), np.array([v for _, v in states])
    np.testing.assert_array_equal(robot.integrate(Q, V, 0.5), [robot.integrate(q, v, 0.5) for q, v in states])


@pytest.mark.parametrize("name", ["solo12.urdf", "talos_full_v2.urdf"], ids=["solo12", "talos"])
def test_difference_against_pinocchio(name):
    """q1 (-) q0 on a floating base: Robot.difference (configuration.difference_rows) and the controllers' compiled
    route (ConfigurationSpace.difference into a buffer) against Pinocchio's difference (the free flyer's log6), at
    random pairs of configurations; a batch gives each row's single-state result bit for bit."""
    from robot_dynamics.configuration import ConfigurationSpace

    robot, twin = pair(name, True)
    space, out = ConfigurationSpace(robot.model), np.empty(robot.nv)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q0, q1 = robot.random_state(rng)[0], robot.random_state(rng)[0]
        expected = twin.vec(pinocchio.difference(twin.model, twin.q(q0), twin.q(q1)))
        assert relative_error(robot.difference(q0, q1), expected) < TOL
        assert relative_error(space.difference(q0, q1, out=out), expected) < TOL
    Q0, Q1 = (np.array([robot.random_state(rng)[0] for _ in range(5)]) for _ in range(2))
    np.testing.assert_array_equal(robot.difference(Q0, Q1), [robot.difference(a, b) for a, b in zip(Q0, Q1)])
