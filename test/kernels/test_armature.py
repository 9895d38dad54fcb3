"""The drives' armature wherever M is (drives.py): M + diag(armature), armature a in the inverse dynamics, and the
articulated-body, innovations, M^-1, derivative, contact, task-space and diagonalized forms built on them.

Against Pinocchio 4.1 (model.armature set to the same random armature) on an arm, a quadruped and a humanoid,
fixed and floating, armature on the joints, on a free base's six rows, or both: crba, rnea, aba, their derivatives,
computeMinverse, computeKineticEnergy and constraintDynamics, to TOL (measured: 3e-13 at worst, da/dq of solo12
with armature on its base rows; 1e-15 on the arm).  Against MuJoCo (its own URDF compiler, dof_armature and
dof_damping): mj_fullM and qacc under passive damping, to the issue's 1e-10 (measured: 2e-15).  On seeded random
trees (planar joints: armature on a block of several coordinates) against the numpy reference, which adds
model.drives.armature, a vector per coordinate, where the kernels read each body record's own.  What the armature
leaves alone (constant: C, Mdot, the Christoffel symbols, g, the regressors, the centroidal quantities) is bit for
bit that of the rigid robot, and the power balance holds.
"""
import numpy as np
import pinocchio as pin
import pytest

import robot_dynamics as rd
from mujoco_twin import MujocoTwin, prepared_urdf
from oracle import PinocchioTwin, erd_path, relative_error
from robot_dynamics import Contact
from robot_dynamics.algorithms import reference
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.controllers import Simulator
from test_contacts import FEET, pin_contacts
from test_identities import BALL_CASES, EXACT, FD_TOL, H, case_ids, make, massive_parameters
from test_pinocchio import ROUNDOFF

TOL = 1e-12
STATES = 2

# (file, floating base, where the armature is: "joints", "base" (a free base's six rows alone) or "all")
CASES = [("ur5_robot.urdf", False, "joints"), ("solo12.urdf", True, "joints"), ("solo12.urdf", True, "base"),
         ("talos_full_v2.urdf", True, "all")]
IDS = [f"{name.split('.')[0]}-{where}" for name, _, where in CASES]


def random_armature(robot, rng, where="all"):
    """Armature (nv,) in 0.05-0.5 on the coordinates `where` says, zero on the others."""
    armature = rng.uniform(0.05, 0.5, robot.nv)
    if robot.floating_base and where == "joints":
        armature[:6] = 0.0
    if where == "base":
        armature[6:] = 0.0
    return armature


def symmetric(X):
    """A matrix of which Pinocchio fills the upper triangle."""
    return np.triu(X) + np.triu(X, 1).T


def pair(name, floating_base, where, seed=0):
    """Our robot with a random armature and Pinocchio's model of the same URDF with that armature (a twin of its
    own: test_pinocchio's cached twins stay rigid)."""
    path = erd_path(name)
    rigid = rd.load_urdf(path, floating_base=floating_base)
    armature = random_armature(rigid, np.random.default_rng(seed), where)
    robot = rigid.with_drives(armature=armature)
    twin = PinocchioTwin(robot, path, floating_base=floating_base)
    twin.model.armature = twin.v(armature)
    return robot, twin


@pytest.mark.parametrize("name, floating_base, where", CASES, ids=IDS)
def test_against_pinocchio(name, floating_base, where):
    robot, twin = pair(name, floating_base, where)
    m, d = twin.model, twin.data
    rng = np.random.default_rng(1)
    worst = {}

    def check(what, ours, theirs):
        worst[what] = max(worst.get(what, 0.0), relative_error(ours, theirs))

    Q, V, A = [], [], []
    for _ in range(STATES):
        q, v = robot.random_state(rng)
        a = rng.normal(size=robot.nv)
        Q.append(q), V.append(v), A.append(a)
        qp, vp, ap = twin.q(q), twin.v(v), twin.v(a)
        M = twin.mass_matrix(q)
        check("M", robot.mass_matrix(q), M)
        check("dynamics().M", robot.dynamics(q, v).M, M)
        assert relative_error(robot.dynamics(q, v).M, robot.mass_matrix(q)) < ROUNDOFF
        check("inverse dynamics", robot.inverse_dynamics(q, v, a), twin.rnea(q, v, a))
        check("forward dynamics", robot.forward_dynamics(q, v, a), twin.aba(q, v, a))
        dtau_dq, dtau_dv, dtau_da = pin.computeRNEADerivatives(m, d, qp, vp, ap)
        ours = robot.inverse_dynamics_derivatives(q, v, a)
        check("dtau/dq", ours[0], twin.mat(dtau_dq))
        check("dtau/dv", ours[1], twin.mat(dtau_dv))
        check("dtau/da", ours[2], twin.mat(symmetric(dtau_da)))
        pin.computeABADerivatives(m, d, qp, vp, ap)
        da_dq, da_dv = twin.mat(d.ddq_dq), twin.mat(d.ddq_dv)
        ours = robot.forward_dynamics_derivatives(q, v, a)
        check("da/dq", ours[0], da_dq)
        check("da/dv", ours[1], da_dv)
        check("da/dtau", ours[2], twin.mat(symmetric(d.Minv)))
        M_inv = twin.mat(symmetric(pin.computeMinverse(m, d, qp)))
        check("M^-1", robot.inverse_mass_matrix(q), M_inv)
        X = rng.normal(size=(robot.nv, 2))
        check("solve_mass_matrix", robot.solve_mass_matrix(q, X), M_inv @ X)
        f = robot.innovations(q)
        check("L D L^T", f.L @ f.D @ f.L.T, M)
        check("L^-1", f.L_inv @ f.L, np.eye(robot.nv))
        check("kinetic energy", robot.kinetic_energy(q, v), pin.computeKineticEnergy(m, d, qp, vp))
        check("momentum", robot.momentum(q, v), M @ v)
        A_lin, B_lin = robot.linearize(q, v, a)                       # composed.py, from the derivatives
        check("linearize", np.hstack([A_lin[robot.nv:], B_lin[robot.nv:]]), np.hstack([da_dq, da_dv, M_inv]))
    # the batched path (a parallel loop over per-thread workspaces) reads the same records
    Q, V, A = map(np.array, (Q, V, A))
    for i, (M, tau, acc) in enumerate(zip(robot.mass_matrix(Q), robot.inverse_dynamics(Q, V, A),
                                          robot.forward_dynamics(Q, V, A))):
        check("M (batch)", M, twin.mass_matrix(Q[i]))
        check("inverse dynamics (batch)", tau, twin.rnea(Q[i], V[i], A[i]))
        check("forward dynamics (batch)", acc, twin.aba(Q[i], V[i], A[i]))
    bad = {k: e for k, e in worst.items() if not e < TOL}
    assert not bad, f"relative errors above {TOL}: {bad}"


def test_constrained_and_task_space_dynamics_against_pinocchio():
    """solo12, armature on its base rows and joints, held by its four feet (point contacts): against Pinocchio's
    constraintDynamics; a foot's task-space inertia against (J M^-1 J^T)^-1 from Pinocchio's M."""
    robot, twin = pair("solo12.urdf", True, "all", seed=2)
    rng = np.random.default_rng(3)
    contacts = [Contact(f) for f in FEET]
    models, datas = pin_contacts(twin, contacts)
    for _ in range(STATES):
        q, v = robot.random_state(rng)
        tau = rng.normal(size=robot.nv)
        a, forces = robot.constrained_dynamics(q, v, tau, contacts)
        a_pin = pin.constraintDynamics(twin.model, twin.data, twin.q(q), twin.v(v), twin.v(tau), models, datas)
        assert relative_error(a, twin.vec(a_pin)) < TOL
        assert relative_error(forces, twin.data.lambda_c) < TOL
        task = robot.task_space_dynamics(q, v, FEET[0], position_only=True)
        M_inv = np.linalg.inv(twin.mass_matrix(q))
        Lam = np.linalg.inv(task.J @ M_inv @ task.J.T)
        assert relative_error(task.Lambda, Lam) < TOL
        assert relative_error(task.J_bar, M_inv @ task.J.T @ Lam) < TOL


TREES = [(seed, fb) for seed in range(3) for fb in (False, True)] + BALL_CASES   # ball joints from MJCF
TREE_IDS = case_ids(TREES)


def tree_pair(seed, floating_base, rng):
    """A seeded random tree (every joint type) with massive bodies, rigid and with armature on every coordinate."""
    rigid = make(seed, floating_base)
    rigid = rigid.with_parameters(massive_parameters(rigid, rng))
    return rigid, rigid.with_drives(armature=random_armature(rigid, rng))


@pytest.mark.parametrize("seed, floating_base", TREES, ids=TREE_IDS)
def test_random_trees_against_the_reference(seed, floating_base):
    """M, inverse and forward dynamics against reference.py (model.drives.armature, (nv,)), and everything built on
    the articulated-body and innovations recursions against that M; the diagonalized form: M = m m^T with
    m = L chol(D), nu = m^T v, 1/2 nu^T nu the kinetic energy with the rotors', and nu_dot + C(theta, nu) = epsilon
    along the motion (central differences, test_identities' tolerance)."""
    rng = np.random.default_rng(40 + seed)
    _, robot = tree_pair(seed, floating_base, rng)
    model = robot.model
    q, v = robot.random_state(rng)
    a, tau = rng.normal(size=(2, robot.nv))
    M = reference.mass_matrix(model, q)
    assert relative_error(robot.mass_matrix(q), M) < EXACT
    assert relative_error(robot.inverse_dynamics(q, v, a), reference.inverse_dynamics(model, q, v, a)) < EXACT
    acc = robot.forward_dynamics(q, v, tau)
    assert relative_error(acc, reference.forward_dynamics(model, q, v, tau)) < EXACT
    h = reference.inverse_dynamics(model, q, v, np.zeros(robot.nv))
    assert relative_error(acc, np.linalg.solve(M, tau - h)) < EXACT
    assert relative_error(robot.inverse_mass_matrix(q), np.linalg.inv(M)) < EXACT
    assert relative_error(robot.solve_mass_matrix(q, tau), np.linalg.solve(M, tau)) < EXACT
    assert relative_error(robot.inverse_dynamics_derivatives(q, v, a)[2], M) < EXACT
    assert relative_error(robot.forward_dynamics_derivatives(q, v, tau)[2], np.linalg.inv(M)) < EXACT
    f = robot.innovations(q)
    m = f.L @ np.linalg.cholesky(f.D)
    assert relative_error(m @ m.T, M) < EXACT
    d = robot.diagonalized(q, v, tau)
    assert relative_error(d.nu, m.T @ v) < EXACT
    assert relative_error(d.epsilon, np.linalg.solve(m, tau - robot.gravity_vector(q))) < EXACT
    assert relative_error(0.5 * d.nu @ d.nu, 0.5 * v @ M @ v) < EXACT
    assert relative_error(robot.kinetic_energy(q, v), 0.5 * v @ M @ v) < EXACT
    assert abs(d.nu @ d.coriolis) < EXACT * np.linalg.norm(d.nu) * np.linalg.norm(d.coriolis)
    assert relative_error(robot.from_diagonalized(q, d.nu), v) < EXACT

    def nu(t):
        return robot.diagonalized(robot.integrate(q, t * v + 0.5 * t * t * acc), v + t * acc).nu

    assert relative_error((nu(H) - nu(-H)) / (2 * H) + d.coriolis, d.epsilon) < FD_TOL


def arrays(x):
    """The arrays of a result (a dataclass of arrays, a tuple, or one array)."""
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, tuple):
        return list(x)
    return [getattr(x, name) for name in x.__dataclass_fields__ if getattr(x, name) is not None]


@pytest.mark.parametrize("seed, floating_base", [(1, True), (2, False)], ids=["seed1-floating", "seed2-fixed"])
def test_what_the_armature_leaves_alone(seed, floating_base):
    """A constant armature changes M's diagonal and nothing else: M's other entries, C (both kinds), g, the CoM
    Jacobian, the regressors, the Christoffel symbols, the time and state derivatives (Mdot among them), the
    centroidal quantities and Ploen's operators are the rigid robot's bit for bit; the inverse dynamics is the
    rigid one plus armature a; and Mdot = C + C^T holds for M + diag(armature) (central differences)."""
    rng = np.random.default_rng(60 + seed)
    rigid, robot = tree_pair(seed, floating_base, rng)
    armature = robot.armature
    q, v = robot.random_state(rng)
    a, v_r, a_r = rng.normal(size=(3, robot.nv))
    M, M_rigid = robot.mass_matrix(q), rigid.mass_matrix(q)
    off = ~np.eye(robot.nv, dtype=bool)
    assert np.array_equal(M[off], M_rigid[off])
    assert np.max(np.abs(np.diag(M - M_rigid) - armature)) < EXACT * np.max(np.abs(M))
    same = [lambda r: r.coriolis_matrix(q, v), lambda r: r.coriolis_matrix(q, v, kind="christoffel"),
            lambda r: r.gravity_vector(q), lambda r: r.com_jacobian(q), lambda r: r.regressor(q, v, v_r, a_r),
            lambda r: r.momentum_regressor(q, v), lambda r: r.christoffel_symbols(q),
            lambda r: r.time_derivatives(q, v, a, v_r, a_r, a), lambda r: r.state_derivatives(q, v),
            lambda r: r.centroidal_momentum_matrix(q), lambda r: r.centroidal_momentum_bias(q, v),
            lambda r: r.centroidal_inertia(q), lambda r: r.global_factorization(q, v),
            lambda r: (r.dynamics(q, v, v_r, a_r).C, r.dynamics(q, v, v_r, a_r).g, r.dynamics(q, v, v_r, a_r).Y),
            lambda r: r.inverse_dynamics_derivatives(q, v, a)[:2]]
    for i, quantity in enumerate(same):
        for ours, theirs in zip(arrays(quantity(robot)), arrays(quantity(rigid)), strict=True):
            assert np.array_equal(ours, theirs), f"quantity {i}"
    tau = robot.inverse_dynamics(q, v, a)
    assert relative_error(tau, rigid.inverse_dynamics(q, v, a) + armature * a) < EXACT
    Mdot = (robot.mass_matrix(robot.integrate(q, v, H)) - robot.mass_matrix(robot.integrate(q, v, -H))) / (2 * H)
    C = robot.coriolis_matrix(q, v)
    assert relative_error(C + C.T, Mdot) < FD_TOL


def test_power_balance():
    """arm7 with armature under sinusoidal torques, simulated with its forward dynamics: the energy E = T + U, T
    with the rotors' 1/2 armature v^2, changes at the rate v^T tau (test_power_balance.py's five-point difference
    and tolerance); the rigid bodies' energy alone does not (by far)."""
    from test_power_balance import DURATION, RATE_TOL
    rigid = rd.load_urdf(bundled_urdf("arm7"))
    rng = np.random.default_rng(5)
    armature = random_armature(rigid, rng)
    robot = rigid.with_drives(armature=armature)
    q0, v0 = robot.random_configuration(rng), 0.5 * rng.normal(size=robot.nv)
    amplitude = np.diag(robot.mass_matrix(q0)) * rng.normal(size=robot.nv)
    omega, phase = rng.uniform(1.0, 5.0, robot.nv), rng.uniform(0.0, 2.0 * np.pi, robot.nv)

    def torque(t, q, v):
        return amplitude * np.sin(omega * t + phase)

    dt = 1e-3
    run = Simulator(robot, dt).run(q0, v0, torque, DURATION)
    power = np.array([v @ torque(t, q, v) for t, q, v in zip(run.t, run.q, run.v)])
    U = robot.potential_energy(run.q)

    def rate(E):
        return (E[:-4] - 8.0 * E[1:-3] + 8.0 * E[3:-1] - E[4:]) / (12.0 * dt)

    assert relative_error(rate(robot.kinetic_energy(run.q, run.v) + U), power[2:-2]) < RATE_TOL
    assert relative_error(rate(rigid.kinetic_energy(run.q, run.v) + U), power[2:-2]) > 1e3 * RATE_TOL


MUJOCO_TOL = 1e-10                      # the criterion
MUJOCO_ARMS = {"ur5": ("ur5_robot.urdf", ()), "panda": ("panda.urdf", ("panda_finger_joint1", "panda_finger_joint2"))}


@pytest.mark.parametrize("arm", list(MUJOCO_ARMS))
def test_against_mujoco(arm):
    """The same URDF compiled by MuJoCo with each joint's armature and damping: mj_fullM = M + diag(armature), and
    MuJoCo's qacc under its passive damping = our forward dynamics of tau - friction_torque(v) (= damping v)."""
    filename, fixed = MUJOCO_ARMS[arm]
    text = prepared_urdf(erd_path(filename), fixed)
    rigid = rd.load_urdf(text)
    rng = np.random.default_rng(6)
    armature, damping = rng.uniform(0.05, 0.5, rigid.nv), rng.uniform(0.1, 2.0, rigid.nv)
    robot = rigid.with_drives(armature=armature, damping=damping)
    twin = MujocoTwin(text, robot, armature=armature, damping=damping)
    for _ in range(STATES):
        q, v = robot.random_state(rng)
        tau = rng.normal(size=robot.nv)
        assert relative_error(robot.mass_matrix(q), twin.mass_matrix(q)) < MUJOCO_TOL
        a = robot.forward_dynamics(q, v, tau - robot.friction_torque(v))
        assert relative_error(a, twin.forward_dynamics(q, v, tau)) < MUJOCO_TOL


@pytest.mark.filterwarnings("ignore::robot_dynamics.URDFWarning")
def test_coupled_mimic_joints_against_pinocchio():
    """panda loaded with mimic=True (the second finger follows the first, no coordinate of its own): the armature
    once, on the master's coordinate -- M and the inverse dynamics against Pinocchio's mimic model with the same
    armature, and the forward dynamics (mimic.py's Cholesky route) inverting the inverse."""
    path = erd_path("panda.urdf")
    rigid = rd.load_urdf(path, mimic=True)
    rng = np.random.default_rng(7)
    armature = random_armature(rigid, rng)
    robot = rigid.with_drives(armature=armature)
    twin = PinocchioTwin(robot, path, mimic=True)
    twin.model.armature = twin.v(armature)
    for _ in range(STATES):
        q, v = robot.random_state(rng)
        a = rng.normal(size=robot.nv)
        assert relative_error(robot.mass_matrix(q), twin.mass_matrix(q)) < TOL
        tau = robot.inverse_dynamics(q, v, a)
        assert relative_error(tau, twin.rnea(q, v, a)) < TOL
        assert relative_error(robot.forward_dynamics(q, v, tau), a) < TOL
        assert relative_error(robot.inverse_mass_matrix(q), np.linalg.inv(twin.mass_matrix(q))) < TOL
