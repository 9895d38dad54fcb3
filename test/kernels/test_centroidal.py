"""Centroidal dynamics (centroidal_momentum_matrix, centroidal_momentum_bias, centroidal_inertia) and task-space
dynamics (task_space_dynamics).

Against Pinocchio on the real robots of test_pinocchio.py, fixed and floating (1e-9 relative): computeCentroidalMap
(A_G), computeCentroidalMapTimeVariation (dAg @ v) and computeCentroidalMomentumTimeVariation at a = 0 (dhg), and
ccrba's data.Ig.  Identities: A_G v is the momentum summed body by body from the bodies' placements, world twists
(frame_velocity) and URDF inertias (paper 002, Prop. 1), moved to the CoM; d/dt h_G along q(t) = q (+) t v with
v' = a equals A_G a + Adot_G v (central differences, the documented 1e-7); I_G^-1 h_G of a rigid motion (a free
robot whose joints do not move) is its twist at the CoM.
Task space: Lambda J M^-1 J^T = E with M^-1 from paper 002's M; eta against Pinocchio's M, nle, frame Jacobian and
classical acceleration; Lambda xddot + eta = J_bar^T tau for any tau (paper 004, eq. (9.98)); J J_bar = E and
J M^-1 N^T = 0 on a redundant arm (panda, 7 DoF and fingers).
"""
import numpy as np
import pinocchio as pin
import pytest

from oracle import relative_error
from robot_dynamics.spatial import spatial_inertia
from test_identities import FD_TOL, H, make
from test_pinocchio import CASES, IDS, ROUNDOFF, TOL, pair

IDENTITY = 1e-10


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_centroidal_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    m, d = twin.model, twin.data
    rng = np.random.default_rng(len(name) + 11)
    worst = {}

    def check(what, ours, theirs):
        worst[what] = max(worst.get(what, 0.0), relative_error(ours, theirs))

    states = [robot.random_state(rng) for _ in range(2)]
    for q, v in states:
        qp, vp = twin.q(q), twin.v(v)
        check("A_G", robot.centroidal_momentum_matrix(q), twin.cols(pin.computeCentroidalMap(m, d, qp)))
        pin.ccrba(m, d, qp, vp)
        check("I_G", robot.centroidal_inertia(q), d.Ig.matrix())
        dAg = pin.computeCentroidalMapTimeVariation(m, m.createData(), qp, vp)    # (a fresh data: it adds into
        #                                                                           the dAg a previous call left)
        check("Adot_G v", robot.centroidal_momentum_bias(q, v), dAg @ vp)
        pin.computeCentroidalMomentumTimeVariation(m, d, qp, vp, np.zeros(m.nv))
        check("dh_G at a = 0", robot.centroidal_momentum_bias(q, v), d.dhg.vector)
    Q, V = (np.array(x) for x in zip(*states))
    A, bias = robot.centroidal_momentum_matrix(Q), robot.centroidal_momentum_bias(Q, V)
    for i in range(2):
        assert relative_error(A[i], robot.centroidal_momentum_matrix(Q[i])) < ROUNDOFF
        assert relative_error(bias[i], robot.centroidal_momentum_bias(Q[i], V[i])) < ROUNDOFF
    bad = {k: x for k, x in worst.items() if not x < TOL}
    assert not bad, f"relative errors above {TOL}: {bad}"


def momentum_from_bodies(robot, q, v):
    """h_G summed body by body: each body's world spatial inertia (its URDF parameters carried by its placement)
    times its world twist (frame_velocity of the body's own frame), moment moved from the origin to the CoM."""
    T = robot.body_placements(q)
    h, mass, first = np.zeros(6), 0.0, np.zeros(3)
    for k, body in enumerate(robot.body_names):
        pi = robot.parameters[10 * k:10 * k + 10]
        R, p = T[k, :3, :3], T[k, :3, 3]
        X = np.block([[R, np.zeros((3, 3))], [np.cross(p, R.T).T, R]])   # Ad_{0,k}^-T on wrenches
        V_local = robot.frame_velocity(q, v, body, "local")
        h += X @ (spatial_inertia(pi) @ V_local)
        mass += pi[0]
        first += pi[0] * p + R @ pi[1:4]
    c = first / mass
    return np.concatenate([h[:3], h[3:] - np.cross(c, h[:3])])


@pytest.mark.parametrize("seed, floating_base", [(s, fb) for s in range(3) for fb in (False, True)], ids=str)
def test_centroidal_identities_on_random_trees(seed, floating_base):
    robot = make(seed, floating_base)
    rng = np.random.default_rng(500 + seed)
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    A = robot.centroidal_momentum_matrix(q)
    assert relative_error(A @ v, momentum_from_bodies(robot, q, v)) < IDENTITY
    # d/dt h_G along q(t) = q (+) t v + t^2/2 a (in the tangent space at q), v(t) = v + t a
    hs = [robot.centroidal_momentum_matrix(robot.integrate(q, t * v + t * t / 2 * a)) @ (v + t * a) for t in (H, -H)]
    expected = robot.centroidal_momentum_matrix(q) @ a + robot.centroidal_momentum_bias(q, v)
    assert relative_error((hs[0] - hs[1]) / (2 * H), expected) < FD_TOL
    if floating_base:               # a rigid motion (joints still): I_G^-1 h_G is the base's twist seen at the CoM
        rigid = np.zeros(robot.nv)
        rigid[:6] = rng.normal(size=6)
        T = robot.body_placements(q)[0]
        R, p, c = T[:3, :3], T[:3, 3], robot.com_position(q)
        w = R @ rigid[3:6]
        twist_at_com = np.concatenate([R @ rigid[:3] + np.cross(w, c - p), w])      # CoM velocity, omega
        h = robot.centroidal_momentum_matrix(q) @ rigid
        assert relative_error(np.linalg.solve(robot.centroidal_inertia(q), h), twist_at_com) < IDENTITY


@pytest.fixture(scope="module")
def panda():
    return pair("panda.urdf", False)


@pytest.mark.parametrize("reference, position_only", [("local_world_aligned", False), ("local", False),
                                                      ("local_world_aligned", True)])
def test_task_space_on_a_redundant_arm(panda, reference, position_only):
    robot, twin = panda
    rng = np.random.default_rng(21)
    q, v = robot.random_state(rng)
    tau = rng.normal(size=robot.nv)
    frame, k = "panda_hand_tcp", 3 if position_only else 6
    ts = robot.task_space_dynamics(q, v, frame, reference, position_only)
    assert ts.Lambda.shape == (k, k) and ts.J_bar.shape == (robot.nv, k) and ts.N.shape == (robot.nv, robot.nv)
    M = robot.mass_matrix(q)
    M_inv_Jt = np.linalg.solve(M, ts.J.T)
    assert relative_error(ts.Lambda @ ts.J @ M_inv_Jt, np.eye(k)) < IDENTITY
    assert relative_error(ts.J @ ts.J_bar, np.eye(k)) < IDENTITY
    assert np.abs(ts.J @ np.linalg.solve(M, ts.N.T)).max() < IDENTITY * np.abs(M_inv_Jt).max()
    # eq. (9.98) for any torque: Lambda xddot + eta = J_bar^T tau, xddot the classical acceleration
    a = robot.forward_dynamics(q, v, tau)
    xddot = ts.J @ a + robot.frame_acceleration_bias(q, v, frame, reference)[:k]
    assert relative_error(ts.Lambda @ xddot + ts.eta, ts.J_bar.T @ tau) < IDENTITY
    # against Pinocchio: eta = Lambda (J M^-1 h - Jdot v) from its crba, nle, frame Jacobian and acceleration
    m, d = twin.model, twin.data
    qp, vp = twin.q(q), twin.v(v)
    M_pin = pin.crba(m, d, qp)
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    h = pin.nonLinearEffects(m, d, qp, vp)
    pin.forwardKinematics(m, d, qp, vp, np.zeros(m.nv))
    pin.computeJointJacobians(m, d, qp)
    pin.updateFramePlacements(m, d)
    fid = m.getFrameId(frame, pin.BODY)
    pin_reference = {"local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}[reference]
    J = pin.getFrameJacobian(m, d, fid, pin_reference)[:k]
    Jdot_v = pin.getFrameClassicalAcceleration(m, d, fid, pin_reference).vector[:k]
    Lam = np.linalg.inv(J @ np.linalg.solve(M_pin, J.T))
    assert relative_error(ts.Lambda, Lam) < TOL
    assert relative_error(ts.eta, Lam @ (J @ np.linalg.solve(M_pin, h) - Jdot_v)) < TOL
    # a batch, and out=
    Q, V = np.array([q, q]), np.array([v, -v])
    batch = robot.task_space_dynamics(Q, V, frame, reference, position_only)
    assert relative_error(batch.eta[0], ts.eta) < ROUNDOFF and relative_error(batch.N[1], ts.N) < ROUNDOFF
    out = robot.task_space_dynamics(q, -v, frame, reference, position_only)
    assert robot.task_space_dynamics(q, v, frame, reference, position_only, out=out) is out
    np.testing.assert_array_equal(out.eta, ts.eta)


def test_task_space_singular_configuration():
    """ur5 at q = 0 (the arm stretched out: an elbow singularity, its tool's Jacobian of rank 5) is refused for the
    full pose; with damping > 0, Lambda = (J M^-1 J^T + damping E)^-1; the position alone is not singular there."""
    robot, _ = pair("ur5_robot.urdf", False)
    q, v = robot.neutral(), np.zeros(robot.nv)
    with pytest.raises(ValueError, match="singular.*damping"):
        robot.task_space_dynamics(q, v, "tool0")
    ts = robot.task_space_dynamics(q, v, "tool0", damping=1e-3)
    M_inv_Jt = np.linalg.solve(robot.mass_matrix(q), ts.J.T)
    assert relative_error(ts.Lambda @ (ts.J @ M_inv_Jt + 1e-3 * np.eye(6)), np.eye(6)) < IDENTITY
    assert robot.task_space_dynamics(q, v, "tool0", position_only=True).Lambda.shape == (3, 3)
