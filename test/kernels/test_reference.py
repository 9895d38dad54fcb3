"""The plain numpy reference (algorithms/reference.py) against the compiled kernels, and its Jacobians against
finite differences.

The reference and the kernels share only the frozen model and spatial.py: the kernels form M, C, g, J_com and Y
from world-frame axes and composite inertias, the reference from body Jacobians summed per body (paper 002,
eqs. (6), (7), (16)), so agreement to 1e-12 relative (round-off; the worst seen is 1.2e-15) checks both.  The
finite-difference checks use central differences with h = 1e-5: truncation ~h^2 and round-off ~1e-16/h set their
tolerance of 1e-7 relative (the worst seen is 3e-10).
"""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithms import reference
from robot_dynamics.bundled import bundled_urdf
from oracle import relative_error
from random_urdf import random_urdf
from test_identities import massive_parameters

EXACT = 1e-12
FD_TOL, H = 1e-7, 1e-5

BUNDLED = [("arm7", False), ("quadruped", True), ("humanoid", True), ("planar_2link", False)]
RANDOM = [(seed, fb) for seed in range(4) for fb in (False, True)]
MIMIC = [4, 5]
CASES = ([("bundled", name, fb) for name, fb in BUNDLED] + [("random", seed, fb) for seed, fb in RANDOM]
         + [("mimic", seed, False) for seed in MIMIC])
IDS = [f"{kind}-{what}-{'floating' if fb else 'fixed'}" for kind, what, fb in CASES]


MIMIC_TYPES = ("revolute", "prismatic", "continuous", "fixed")      # those Pinocchio lets mimic (random_urdf)


def load(kind, what, floating_base):
    """A bundled robot, a random tree of every joint type, or one whose mimic joints follow their masters
    (q = mult q_master + offset); random trees under a random gravity."""
    if kind == "bundled":
        return rd.load_urdf(bundled_urdf(what), floating_base=floating_base)
    gravity = np.random.default_rng(what).normal(size=3) * 5
    if kind == "random":
        return rd.load_urdf(random_urdf(what, n_links=9), floating_base=floating_base, gravity=gravity)
    robot = rd.load_urdf(random_urdf(what, n_links=9, joint_types=MIMIC_TYPES, mimic=True),
                         floating_base=floating_base, gravity=gravity, mimic=True)
    assert any(j.mimic is not None for j in robot.model.joints), "the generator made mimic joints"
    return robot


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def robot(request):
    return load(*request.param)


@pytest.fixture
def state(robot):
    """(rng, q, v): a random state of the robot, and the generator for more."""
    rng = np.random.default_rng(7)
    return (rng, *robot.random_state(rng))


def test_poses(robot, state):
    """T_{0,k} = T_{0,p} T_{p,k} from reference.joint_placement equals the kernels' body placements."""
    _, q, _ = state
    R_0k, p_0k = reference.body_poses(robot.model, q)
    T = robot.body_placements(q)
    assert relative_error(R_0k, T[:, :3, :3]) < EXACT
    assert relative_error(p_0k, T[:, :3, 3]) < EXACT


def test_matrices(robot, state):
    """M, C, g, com, J_com (paper 002, eqs. (6a)-(6c), (7)) and the Slotine-Li Y (eq. (16)) with v_ref != v."""
    rng, q, v = state
    m = robot.model
    v_r, a_r = rng.normal(size=(2, robot.nv))
    pairs = {"M": (reference.mass_matrix(m, q), robot.mass_matrix(q)),
             "C": (reference.coriolis_matrix(m, q, v), robot.coriolis_matrix(q, v)),
             "g": (reference.gravity_vector(m, q), robot.gravity_vector(q)),
             "com": (reference.com_position(m, q), robot.com_position(q)),
             "J_com": (reference.com_jacobian(m, q), robot.com_jacobian(q)),
             "Y": (reference.regressor(m, q, v, v_r, a_r), robot.regressor(q, v, v_r, a_r))}
    for name, (ours, compiled) in pairs.items():
        assert relative_error(ours, compiled) < EXACT, name


def test_inverse_dynamics(robot, state):
    rng, q, v = state
    a = rng.normal(size=robot.nv)
    assert relative_error(reference.inverse_dynamics(robot.model, q, v, a), robot.inverse_dynamics(q, v, a)) < EXACT


def test_forward_dynamics(robot, state):
    """ABA against ABA; random trees get massive bodies everywhere, so that M is positive definite."""
    rng, q, v = state
    if robot.model.name.startswith("random"):
        robot = robot.with_parameters(massive_parameters(robot, rng))
    tau = rng.normal(size=robot.nv)
    if any(j.mimic is not None for j in robot.model.joints):
        with pytest.raises(ValueError, match="mimic"):
            reference.forward_dynamics(robot.model, q, v, tau)
        return
    assert relative_error(reference.forward_dynamics(robot.model, q, v, tau), robot.forward_dynamics(q, v, tau)) \
        < EXACT


def test_jacobians_differentiate_poses(robot, state):
    """J_k v is the body twist T_{0,k}^-1 dT_{0,k}/dt, and Jdot_k = dJ_k/dt (paper 002, eqs. (26)-(28)), both
    along q(t) = q (+) t v."""
    _, q, v = state
    q_plus, q_minus = robot.integrate(q, v, H), robot.integrate(q, v, -H)
    J, Jdot = reference.jacobians(robot.model, q, v)
    Tdot = (robot.body_placements(q_plus) - robot.body_placements(q_minus)) / (2 * H)
    twist_hat = np.linalg.inv(robot.body_placements(q)) @ Tdot            # [[w~, v], [0, 0]] per body
    twists = np.concatenate([twist_hat[:, :3, 3], twist_hat[:, [2, 0, 1], [1, 2, 0]]], axis=1)
    assert relative_error(J @ v, twists) < FD_TOL
    dJ = (reference.jacobians(robot.model, q_plus, v)[0] - reference.jacobians(robot.model, q_minus, v)[0]) / (2 * H)
    assert relative_error(Jdot, dJ) < FD_TOL
