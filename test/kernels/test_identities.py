"""Physical identities on seeded random trees: branching, every joint type (ball joints from MJCF), fixed and floating
base.

Exact identities are held to 1e-12 relative (round-off: the worst seen is 2e-14); the two finite-difference checks (Mdot and the kinetic energy of
bodies from differentiated poses) use central differences with h = 1e-5, whose truncation error ~h^2 and
round-off ~1e-16/h set their documented tolerance of 1e-7 relative.
"""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.spatial import parameters_from_inertial, rpy_rotation
from oracle import relative_error
from random_mjcf import random_ball_tree
from random_urdf import random_urdf

EXACT = 1e-12
ROUNDOFF = 1e-13        # the same algorithm compiled twice (single state, parallel batch) agrees to round-off
FD_TOL, H = 1e-7, 1e-5
SEEDS = range(8)
BALL_SEEDS = (100, 101)  # random MJCF trees with ball joints (URDF has none): random_mjcf.random_ball_tree
BALL_CASES = [(100, False), (101, True)]


def case_ids(cases):
    """seed3-floating, ball100-fixed, ... for (seed, floating_base) pairs."""
    return [f"{'ball' if seed in BALL_SEEDS else 'seed'}{seed}-{'floating' if fb else 'fixed'}" for seed, fb in cases]


CASES = [(seed, fb) for seed in SEEDS for fb in (False, True)] + BALL_CASES
IDS = case_ids(CASES)


def make(seed, floating_base, **kw):
    """A random tree: random_urdf's (every URDF joint type), or for BALL_SEEDS random_ball_tree's from MJCF."""
    gravity = np.random.default_rng(seed).normal(size=3) * 5
    if seed in BALL_SEEDS:
        return rd.load_mjcf(random_ball_tree(seed, floating_base=floating_base), gravity=gravity)
    return rd.load_urdf(random_urdf(seed, n_links=9, **kw), floating_base=floating_base, gravity=gravity)


@pytest.fixture(params=CASES, ids=IDS)
def case(request):
    seed, fb = request.param
    robot = make(seed, fb)
    rng = np.random.default_rng(1000 + seed)
    q, v = robot.random_state(rng)
    return robot, rng, q, v


def test_mdot_is_c_plus_ct(case):
    """Paper 002, remark 5: C + C^T = Mdot, against central differences of M along q(t) = q (+) t v."""
    robot, _, q, v = case
    Mdot = (robot.mass_matrix(robot.integrate(q, v, H)) - robot.mass_matrix(robot.integrate(q, v, -H))) / (2 * H)
    C = robot.coriolis_matrix(q, v)
    assert relative_error(C + C.T, Mdot) < FD_TOL
    assert relative_error(C @ v, robot.inverse_dynamics(q, v, np.zeros(robot.nv)) - robot.gravity_vector(q)) \
        < EXACT


def test_slotine_li_regressor(case):
    """Y(q, v, v_r, a_r) pi = M a_r + C(q, v) v_r + g (paper 002, eq. (16)), for v_r != v."""
    robot, rng, q, v = case
    v_r, a_r = rng.normal(size=(2, robot.nv))
    d = robot.dynamics(q, v, v_ref=v_r, a_ref=a_r)
    assert relative_error(d.Y @ robot.parameters, d.M @ a_r + d.C @ v_r + d.g) < EXACT
    other = rng.uniform(0.5, 2.0, robot.parameters.size) * robot.parameters   # Y does not depend on pi
    d2 = robot.with_parameters(other).dynamics(q, v, v_ref=v_r, a_ref=a_r)
    assert relative_error(d.Y @ other, d2.M @ a_r + d2.C @ v_r + d2.g) < EXACT


def test_kinetic_energy_is_sum_of_bodies(case):
    """1/2 v^T M v equals sum_k 1/2 v_k^T Lambda_k v_k, with each body twist v_k differentiated from its pose."""
    robot, _, q, v = case
    T_plus = robot.body_placements(robot.integrate(q, v, H))
    T_minus = robot.body_placements(robot.integrate(q, v, -H))
    T = robot.body_placements(q)
    energy = 0.0
    for k in range(robot.nbodies):
        Tdot = (T_plus[k] - T_minus[k]) / (2 * H)
        body = np.linalg.inv(T[k]) @ Tdot                       # [[w~, v], [0, 0]], the body twist
        twist = np.array([*body[:3, 3], body[2, 1], body[0, 2], body[1, 0]])
        energy += 0.5 * twist @ robot.model.Lam[k] @ twist
    assert relative_error(robot.kinetic_energy(q, v), energy) < FD_TOL


def test_gravity_is_com_jacobian_transpose(case):
    """g = -m J_com^T gravity (paper 002, remark 3) and g = dV/dq for V = -m gravity . com."""
    robot, _, q, _ = case
    g = robot.gravity_vector(q)
    assert relative_error(g, -robot.total_mass * robot.com_jacobian(q).T @ robot.gravity) < EXACT
    grad = np.array([(robot.potential_energy(robot.integrate(q, e, H))
                      - robot.potential_energy(robot.integrate(q, e, -H))) / (2 * H) for e in np.eye(robot.nv)])
    assert relative_error(g, grad) < FD_TOL


def test_com_jacobian_differentiates_com(case):
    """J_com v = d/dt com(q (+) t v)."""
    robot, _, q, v = case
    rate = (robot.com_position(robot.integrate(q, v, H)) - robot.com_position(robot.integrate(q, v, -H))) / (2 * H)
    assert relative_error(robot.com_jacobian(q) @ v, rate) < FD_TOL


def massive_parameters(robot, rng):
    """Random physically valid pi with every body massive, so that M is positive definite (a random tree may
    carry a multi-DoF joint on a massless link, which makes M singular and the forward dynamics undefined)."""
    pi = []
    for _ in range(robot.nbodies):
        a, b = rng.uniform(0.1, 1.0, 2)
        principal = np.array([a, b, rng.uniform(abs(a - b), a + b)])       # triangle inequality
        R = rpy_rotation(rng.uniform(-np.pi, np.pi, 3))
        pi.append(parameters_from_inertial(rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.2,
                                           R @ np.diag(principal) @ R.T))
    return np.concatenate(pi)


def test_forward_inverts_inverse(case):
    robot, rng, q, v = case
    robot = robot.with_parameters(massive_parameters(robot, rng))
    a = rng.normal(size=robot.nv)
    tau = robot.inverse_dynamics(q, v, a)
    assert relative_error(robot.forward_dynamics(q, v, tau), a) < EXACT
    d = robot.dynamics(q, v)
    assert relative_error(d.M @ a + d.C @ v + d.g, tau) < EXACT


def test_batch_equals_loop(case):
    """Leading batch dimensions give the same numbers as one state at a time."""
    robot, rng, _, _ = case
    robot = robot.with_parameters(massive_parameters(robot, rng))            # so that forward dynamics exists
    q = np.array([[robot.random_configuration(rng) for _ in range(3)] for _ in range(2)])
    v, v_r, a_r = rng.normal(size=(3, 2, 3, robot.nv))
    d = robot.dynamics(q, v, v_ref=v_r, a_ref=a_r)
    assert d.M.shape == (2, 3, robot.nv, robot.nv) and d.Y.shape == (2, 3, robot.nv, 10 * robot.nbodies)
    batched = {name: getattr(robot, name)(q) for name in ("mass_matrix", "gravity_vector", "com_position",
                                                          "com_jacobian")}
    for i in range(2):
        for j in range(3):
            one = robot.dynamics(q[i, j], v[i, j], v_ref=v_r[i, j], a_ref=a_r[i, j])
            for name in ("M", "C", "g", "com", "J_com", "Y"):       # the batch kernel is compiled separately
                assert relative_error(getattr(d, name)[i, j], getattr(one, name)) < ROUNDOFF, name
            for name, values in batched.items():
                assert relative_error(values[i, j], getattr(robot, name)(q[i, j])) < ROUNDOFF, name
    assert relative_error(robot.coriolis_matrix(q, v)[1, 2], d.C[1, 2]) < ROUNDOFF
    assert relative_error(robot.regressor(q, v, v_r, a_r)[0, 1], d.Y[0, 1]) < ROUNDOFF
    tau = robot.inverse_dynamics(q, v, a_r)
    assert relative_error(tau[1, 2], robot.inverse_dynamics(q[1, 2], v[1, 2], a_r[1, 2])) < ROUNDOFF
    one = robot.forward_dynamics(q[1, 2], v[1, 2], tau[1, 2])
    assert relative_error(robot.forward_dynamics(q, v, tau)[1, 2], one) < ROUNDOFF


@pytest.mark.parametrize("seed", range(4))
def test_mimic_is_projection(seed):
    """With mimic=True, q_full = G q + offset, so M = G^T M_full G, C = G^T C_full G, g = G^T g_full, Y = G^T Y_full."""
    for s in range(100 * seed, 100 * seed + 100):          # the first tree of this seed block with mimics
        urdf = random_urdf(s, n_links=10, joint_types=("revolute", "prismatic", "continuous", "fixed"), mimic=True)
        full, reduced = rd.load_urdf(urdf), rd.load_urdf(urdf, mimic=True)
        if reduced.nv < full.nv:
            break
    assert reduced.nv < full.nv, "the generator made mimic joints"
    G = np.zeros((full.nv, reduced.nv))
    offset = np.zeros(full.nv)
    full_index = {j.name: j.idx_v for j in full.model.joints}
    for j in reduced.model.joints:
        k = j.body
        G[full_index[j.name], j.idx_v] = reduced.model.bodies["mult"][k]
        offset[full_index[j.name]] = reduced.model.bodies["offset"][k]
    rng = np.random.default_rng(seed)
    q, v = reduced.random_state(rng)
    v_r, a_r = rng.normal(size=(2, reduced.nv))
    d = reduced.dynamics(q, v, v_ref=v_r, a_ref=a_r)
    f = full.dynamics(G @ q + offset, G @ v, v_ref=G @ v_r, a_ref=G @ a_r)
    for name, expected in (("M", G.T @ f.M @ G), ("C", G.T @ f.C @ G), ("g", G.T @ f.g), ("Y", G.T @ f.Y),
                           ("J_com", f.J_com @ G), ("com", f.com)):
        assert relative_error(getattr(d, name), expected) < EXACT, name
