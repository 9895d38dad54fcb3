"""Contact-constrained dynamics (Robot.constrained_dynamics) and the simulator with contacts.

Against Pinocchio on the real robots of test_pinocchio.py, fixed and floating (1e-9 relative): point contacts
against constraintDynamics (CONTACT_3D, LOCAL and LOCAL_WORLD_ALIGNED, Baumgarte gains pulling towards targets),
at random states; surface contacts against forwardDynamics with Pinocchio's own frame Jacobians and classical
accelerations as J and gamma (at a random v, where Pinocchio's CONTACT_6D constrains the spatial, not the
classical, acceleration), and against constraintDynamics (CONTACT_6D) at a velocity that keeps the contacts at
rest, where the two agree.  Identities on the seeded random trees of test_identities.py: M a + C v + g = tau +
J^T f (M, C, g from paper 002's closed forms) and J a + Jdot v = -(Kp e + Kd J v) (-damping f with a damping),
with e from frame_placement and the targets.  A quadruped standing still: its forces carry its weight, and the
simulator keeps it standing (base height within 1e-6 m over 2 s); Baumgarte gains keep its feet in place while
it sways.
"""
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

import robot_dynamics as rd
from oracle import erd_path, relative_error
from robot_dynamics import Contact
from robot_dynamics.controllers import Simulator
from test_identities import massive_parameters, make
from test_pinocchio import CASES, IDS, ROUNDOFF, TOL, pair

PIN_REFERENCES = {"local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
IDENTITY = 1e-10            # exact identities, relative to the largest term
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


def pin_contacts(twin, contacts, targets=None, gains=(0.0, 0.0)):
    """Pinocchio's RigidConstraintModels (and datas) of our Contacts, anchored at targets (world) when given."""
    m = twin.model
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for i, c in enumerate(contacts):
        frame = m.frames[m.getFrameId(c.frame, pin.BODY)]
        kind = pin.ContactType.CONTACT_3D if c.kind == "point" else pin.ContactType.CONTACT_6D
        anchor = pin.SE3.Identity() if targets is None else targets[i]
        cm = pin.RigidConstraintModel(kind, m, frame.parentJoint, frame.placement, 0, anchor,
                                      PIN_REFERENCES[c.reference])
        cm.m_baumgarte_parameters.Kp, cm.m_baumgarte_parameters.Kd = gains
        models.append(cm)
    for cm in models:
        datas.append(cm.createData())
    pin.initConstraintDynamics(m, twin.data, models, datas)
    return models, datas


def pin_frame_terms(twin, q, v, frames, rows, reference):
    """Pinocchio's stacked frame Jacobians and classical acceleration biases (the first `rows` of each)."""
    m, d = twin.model, twin.data
    pin.forwardKinematics(m, d, twin.q(q), twin.v(v), np.zeros(m.nv))
    pin.updateFramePlacements(m, d)
    pin.computeJointJacobians(m, d, twin.q(q))
    ids = [m.getFrameId(f, pin.BODY) for f in frames]
    J = np.vstack([pin.getFrameJacobian(m, d, i, PIN_REFERENCES[reference])[:rows] for i in ids])
    gamma = np.concatenate([pin.getFrameClassicalAcceleration(m, d, i, PIN_REFERENCES[reference]).vector[:rows]
                            for i in ids])
    return J, gamma


def independent_points(robot, twin, states, most=4):
    """Leaf frames (from the end of frame_names), on distinct bodies, whose point rows keep Pinocchio's Delassus
    matrix J M^-1 J^T well conditioned (below 1e6) at every one of `states`: a non-redundant set of point contacts,
    up to `most`, on which both computations are accurate to ~1e-10."""
    chosen, bodies = [], set()
    for frame in reversed(robot.frame_names):
        body = robot.model.frames[frame].body
        if body < 0 or body in bodies or 3 * (len(chosen) + 1) > robot.nv:
            continue
        for q, v in states:
            J, _ = pin_frame_terms(twin, q, v, chosen + [frame], 3, "local_world_aligned")
            M = pin.crba(twin.model, twin.data, twin.q(q))
            M = np.triu(M) + np.triu(M, 1).T
            if not np.linalg.cond(J @ np.linalg.solve(M, J.T)) < 1e6:
                break
        else:
            chosen.append(frame)
            bodies.add(body)
        if len(chosen) == most:
            break
    return chosen


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    rng = np.random.default_rng(len(name) + 7)
    worst = {}

    def check(what, ours, theirs):
        worst[what] = max(worst.get(what, 0.0), relative_error(ours, theirs))

    states = [robot.random_state(rng) for _ in range(5)]
    frames = independent_points(robot, twin, states)
    q, v = states[0]
    if robot.nv < 3:                          # no point contact fits: the set is refused (damping: test_damping)
        with pytest.raises(ValueError, match="redundant or singular"):
            robot.constrained_dynamics(q, v, np.zeros(robot.nv), robot.frame_names[-1:])
        return
    assert frames, "a non-redundant point contact on every robot with 3 DoF or more"
    for reference, (q, v) in zip(PIN_REFERENCES, states):     # points, Baumgarte towards targets near the frames
        tau = rng.normal(size=robot.nv)
        targets = [robot.frame_placement(q, f)[:3, 3] + 0.01 * rng.normal(size=3) for f in frames]
        contacts = [Contact(f, "point", reference, t) for f, t in zip(frames, targets)]
        gains = (30.0, 7.0)
        models, datas = pin_contacts(twin, contacts, [pin.SE3(np.eye(3), t) for t in targets], gains)
        a_pin = twin.vec(pin.constraintDynamics(twin.model, twin.data, twin.q(q), twin.v(v), twin.v(tau), models,
                                                datas))
        a, f = robot.constrained_dynamics(q, v, tau, contacts, baumgarte=gains)
        check("a, points " + reference, a, a_pin)
        check("forces, points " + reference, f, twin.data.lambda_c)
    if floating_base:                         # a surface contact on the last leaf, and the points as before
        q, v = states[2]
        tau = rng.normal(size=robot.nv)
        for reference in PIN_REFERENCES:
            contacts = [Contact(frames[0], "surface", reference)]
            J, gamma = pin_frame_terms(twin, q, v, frames[:1], 6, reference)
            a_pin = twin.vec(pin.forwardDynamics(twin.model, twin.data, twin.q(q), twin.v(v), twin.v(tau),
                                                 J, gamma, 0.0))
            a, f = robot.constrained_dynamics(q, v, tau, contacts)
            check("a, surface " + reference + " (J, gamma)", a, a_pin)
            check("forces, surface " + reference + " (J, gamma)", f, twin.data.lambda_c)
            # at a velocity that keeps the surface at rest, Pinocchio's CONTACT_6D is the same constraint
            Jo = robot.frame_jacobian(q, frames[0], reference)
            v_rest = v - np.linalg.pinv(Jo) @ (Jo @ v)
            models, datas = pin_contacts(twin, contacts)
            a_pin = twin.vec(pin.constraintDynamics(twin.model, twin.data, twin.q(q), twin.v(v_rest), twin.v(tau),
                                                    models, datas))
            a, f = robot.constrained_dynamics(q, v_rest, tau, contacts)
            check("a, surface at rest " + reference, a, a_pin)
            check("forces, surface at rest " + reference, f, twin.data.lambda_c)
    # a batch of two states (the parallel loop) into out=, against Pinocchio state by state
    Q, V = (np.array(x) for x in zip(*states[3:]))
    T = rng.normal(size=(2, robot.nv))
    out = (np.empty((2, robot.nv)), np.empty((2, 3 * len(frames))))
    assert robot.constrained_dynamics(Q, V, T, frames, out=out) is out
    models, datas = pin_contacts(twin, [Contact(f) for f in frames])
    for i in range(2):
        a_pin = pin.constraintDynamics(twin.model, twin.data, twin.q(Q[i]), twin.v(V[i]), twin.v(T[i]), models, datas)
        check("a (batch)", out[0][i], twin.vec(a_pin))
        check("forces (batch)", out[1][i], twin.data.lambda_c)
        single = robot.constrained_dynamics(Q[i], V[i], T[i], frames)
        assert relative_error(out[0][i], single[0]) < ROUNDOFF and relative_error(out[1][i], single[1]) < ROUNDOFF
    bad = {k: x for k, x in worst.items() if not x < TOL}
    assert not bad, f"relative errors above {TOL}: {bad}"


def tree(seed, floating_base=True):
    """A seeded random tree (every joint type, branching) with every body massive: M positive definite."""
    robot = make(seed, floating_base)
    return robot.with_parameters(massive_parameters(robot, np.random.default_rng(seed)))


def errors(robot, q, contacts):
    """e of every contact: p - p_target and, for a surface, log(R R_target^T), in the contact's reference."""
    out = []
    for c in contacts:
        T = robot.frame_placement(q, c.frame)
        R, target = T[:3, :3], np.array(c.target)
        if c.kind == "point":
            e = T[:3, 3] - target
        else:
            target = target.reshape(4, 4)
            e = np.concatenate([T[:3, 3] - target[:3, 3],
                                Rotation.from_matrix(R @ target[:3, :3].T).as_rotvec()])
        if c.reference == "local":
            e = np.concatenate([R.T @ e[:3], R.T @ e[3:]]) if c.kind == "surface" else R.T @ e
        out.append(e)
    return np.concatenate(out)


def stacked(robot, q, v, contacts):
    """J (m, nv) and Jdot v (m,) of the contacts, from the frame methods."""
    rows = [3 if c.kind == "point" else 6 for c in contacts]
    J = np.vstack([robot.frame_jacobian(q, c.frame, c.reference)[:r] for c, r in zip(contacts, rows)])
    bias = np.concatenate([robot.frame_acceleration_bias(q, v, c.frame, c.reference)[:r]
                           for c, r in zip(contacts, rows)])
    return J, bias


@pytest.mark.parametrize("seed", range(4))
def test_identities_on_random_trees(seed):
    """Points and surfaces in both references with Baumgarte targets, on a floating random tree: the equations of
    motion with paper 002's M, C, g, and the Baumgarte law J a + Jdot v = -(Kp e + Kd J v)."""
    robot = tree(seed)
    rng = np.random.default_rng(300 + seed)
    q, v = robot.random_state(rng)
    tau = rng.normal(size=robot.nv)
    leaves = [f for f in reversed(robot.frame_names) if robot.model.frames[f].body >= 0]
    kinds = ["surface", "point", "point"]
    contacts = []
    for i, (frame, kind) in enumerate(zip(leaves, kinds)):
        T = robot.frame_placement(q, frame)
        if kind == "point":
            target = T[:3, 3] + 0.02 * rng.normal(size=3)
        else:
            target = np.eye(4)
            target[:3, :3] = T[:3, :3] @ Rotation.from_rotvec(0.3 * rng.normal(size=3)).as_matrix()
            target[:3, 3] = T[:3, 3] + 0.02 * rng.normal(size=3)
        contacts.append(Contact(frame, kind, ("local", "local_world_aligned")[i % 2], target))
    J, bias = stacked(robot, q, v, contacts)
    if np.linalg.matrix_rank(J, tol=1e-8 * np.abs(J).max()) < J.shape[0]:
        contacts = contacts[:1]                                   # a tree whose leaves share a short branch
        J, bias = stacked(robot, q, v, contacts)
    Kp, Kd = 25.0, 4.0
    a, f = robot.constrained_dynamics(q, v, tau, contacts, baumgarte=(Kp, Kd))
    d = robot.dynamics(q, v)
    lhs, rhs = d.M @ a + d.C @ v + d.g, tau + J.T @ f
    assert relative_error(lhs, rhs) < IDENTITY
    law = -(Kp * errors(robot, q, contacts) + Kd * J @ v)
    assert relative_error(J @ a + bias, law) < IDENTITY


def test_damping_and_redundant_sets():
    """Two contacts on one frame are redundant: refused without a damping; with one, (J M^-1 J^T + mu E) f = -r,
    so J a + Jdot v = -mu f (no Baumgarte terms) and the equations of motion still hold."""
    robot = tree(1)
    rng = np.random.default_rng(4)
    q, v = robot.random_state(rng)
    tau = rng.normal(size=robot.nv)
    frame = robot.frame_names[-1]
    contacts = [Contact(frame, "surface"), Contact(frame, "point", "local")]
    with pytest.raises(ValueError, match="redundant or singular.*damping"):
        robot.constrained_dynamics(q, v, tau, contacts)
    mu = 1e-3
    a, f = robot.constrained_dynamics(q, v, tau, contacts, damping=mu)
    J, bias = stacked(robot, q, v, contacts)
    d = robot.dynamics(q, v)
    assert relative_error(d.M @ a + d.C @ v + d.g, tau + J.T @ f) < IDENTITY
    assert relative_error(J @ a + bias, -mu * f) < IDENTITY
    pendulum, _ = pair("double_pendulum_continuous.urdf", False)     # 2 DoF: a point contact is a redundant set
    q, v = pendulum.random_state(rng)
    a, f = pendulum.constrained_dynamics(q, v, np.zeros(2), pendulum.frame_names[-1:], damping=mu)
    J, bias = stacked(pendulum, q, v, [Contact(pendulum.frame_names[-1])])
    assert relative_error(J @ a + bias, -mu * f) < IDENTITY


@pytest.mark.filterwarnings("ignore::robot_dynamics.URDFWarning")
def test_coupled_mimic_joints_against_pinocchio():
    """mimic=True (a Cholesky factor of M, not the innovations; Pinocchio's forwardDynamics refuses mimics): the KKT
    system solved here from Pinocchio's crba, nle, frame Jacobian and classical acceleration."""
    robot, twin = pair("panda.urdf", False, mimic=True)
    rng = np.random.default_rng(8)
    q, v = robot.random_state(rng)
    tau = rng.normal(size=robot.nv)
    m, d = twin.model, twin.data
    M = pin.crba(m, d, twin.q(q))
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.nonLinearEffects(m, d, twin.q(q), twin.v(v))
    for reference, rows in (("local", 6), ("local_world_aligned", 3)):
        contacts = [Contact("panda_hand", "surface" if rows == 6 else "point", reference)]
        J, gamma = pin_frame_terms(twin, q, v, ["panda_hand"], rows, reference)
        kkt = np.block([[M, J.T], [J, np.zeros((rows, rows))]])
        x = np.linalg.solve(kkt, np.concatenate([twin.v(tau) - h, -gamma]))
        a, f = robot.constrained_dynamics(q, v, tau, contacts)
        assert relative_error(a, twin.vec(x[:m.nv])) < TOL
        assert relative_error(f, -x[m.nv:]) < TOL


def standing_solo():
    """solo12 standing on its four feet at z = 0, and the joint torques that hold it still: the minimum-norm feet
    forces f with J_base^T f = g_base (the floating base is not actuated), tau = g - J^T f on the joints."""
    robot = rd.load_urdf(erd_path("solo12.urdf"), floating_base=True)
    q = robot.neutral()
    q[7:] = [0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6]
    q[2] -= np.mean([robot.frame_placement(q, f)[2, 3] for f in FEET])
    J = np.vstack([robot.frame_jacobian(q, f, "local_world_aligned")[:3] for f in FEET])
    g = robot.gravity_vector(q)
    tau = g - J.T @ (np.linalg.pinv(J[:, :6].T) @ g[:6])
    tau[:6] = 0.0
    return robot, q, tau


@pytest.fixture(scope="module")
def solo():
    return standing_solo()


def test_forces_balance_gravity_standing_still(solo):
    """Standing still (v = 0) under its joint torques: a = 0, and the feet forces balance the weight -- their sum is
    -m gravity and their moment about the centre of mass is zero (m from the URDF's masses, the CoM from
    com_position)."""
    robot, q, tau = solo
    a, f = robot.constrained_dynamics(q, np.zeros(robot.nv), tau, FEET)
    assert np.abs(a).max() < 1e-9
    forces = f.reshape(4, 3)
    weight = robot.total_mass * robot.gravity
    assert relative_error(forces.sum(axis=0), -weight) < IDENTITY
    com = robot.com_position(q)
    moment = sum(np.cross(robot.frame_placement(q, foot)[:3, 3] - com, x) for foot, x in zip(FEET, forces))
    assert np.abs(moment).max() < IDENTITY * np.abs(weight).max()
    assert (forces[:, 2] > 0).all(), "the ground pushes up"


def test_simulator_keeps_a_standing_quadruped_standing(solo):
    """Two seconds standing still (RK4, 2 ms, Baumgarte gains): the base height stays within 1e-6 m."""
    robot, q, tau = solo
    sim = Simulator(robot, 2e-3, contacts=FEET, baumgarte=(100.0, 20.0))
    rollout = sim.run(q, np.zeros(robot.nv), tau, 2.0)
    assert rollout.t[-1] == pytest.approx(2.0)
    assert np.abs(rollout.q[:, 2] - q[2]).max() < 1e-6
    assert np.abs(rollout.q[:, :7] - q[:7]).max() < 1e-6


def test_baumgarte_gains_hold_the_feet_of_a_swaying_quadruped(solo):
    """Pushed into a sway (a velocity that keeps the feet at rest) under a joint PD, integrated by semi-implicit
    Euler (1 ms): without Baumgarte gains the feet drift (integration error, beyond 1e-5 m in 2 s); with them they
    stay within 1e-6 m and end where they touched down."""
    robot, q, tau = solo
    J = np.vstack([robot.frame_jacobian(q, f, "local_world_aligned")[:3] for f in FEET])
    v0 = 0.3 * (np.eye(robot.nv) - np.linalg.pinv(J) @ J) @ np.random.default_rng(0).normal(size=robot.nv)
    posture = q[7:].copy()

    def standing_pd(t, q, v):
        return tau + np.concatenate([np.zeros(6), 20.0 * (posture - q[7:]) - 0.5 * v[6:]])

    drift = {}
    for gains in ((0.0, 0.0), (400.0, 40.0)):
        rollout = Simulator(robot, 1e-3, "euler", contacts=FEET, baumgarte=gains).run(q, v0, standing_pd, 2.0)
        feet = np.array([[robot.frame_placement(x, f)[:3, 3] for f in FEET] for x in rollout.q[::20]])
        drift[gains] = np.abs(feet - feet[0]).max(), np.abs(feet[-1] - feet[0]).max()
    assert np.ptp(rollout.q[:, 2]) > 1e-6, "the base sways"
    assert drift[0.0, 0.0][0] > 1e-5
    assert drift[400.0, 40.0][0] < 1e-6 and drift[400.0, 40.0][1] < 1e-9


def test_bad_input():
    robot = tree(2)
    q, v = robot.random_state(0)
    tau = np.zeros(robot.nv)
    leaf = robot.frame_names[-1]
    with pytest.raises(ValueError, match="unknown frame"):
        robot.constrained_dynamics(q, v, tau, [leaf + "x"])
    with pytest.raises(ValueError, match="list of frame names or Contacts"):
        robot.constrained_dynamics(q, v, tau, leaf)
    with pytest.raises(ValueError, match="kind must be 'point' or 'surface'"):
        Contact(leaf, "line")
    with pytest.raises(ValueError, match="reference must be"):
        Contact(leaf, reference="world")
    with pytest.raises(ValueError, match=r"target of a surface must be a finite array of shape \(4, 4\)"):
        Contact(leaf, "surface", target=np.zeros(3))
    with pytest.raises(ValueError, match="baumgarte"):
        robot.constrained_dynamics(q, v, tau, [leaf], baumgarte=(1.0, -1.0))
    with pytest.raises(ValueError, match="damping"):
        robot.constrained_dynamics(q, v, tau, [leaf], damping=np.nan)
    with pytest.raises(ValueError, match="tau contains non-finite"):
        robot.constrained_dynamics(q, v, np.full(robot.nv, np.nan), [leaf])
    with pytest.raises(ValueError, match=r"out\[1\] must be a writeable float64 array of shape \(3,\)"):
        robot.constrained_dynamics(q, v, tau, [leaf], out=(np.empty(robot.nv), np.empty(6)))
    fixed = make(2, False)
    world = [f for f in fixed.frame_names if fixed.model.frames[f].body < 0]
    with pytest.raises(ValueError, match="fixed to the world"):
        fixed.constrained_dynamics(fixed.random_configuration(0), np.zeros(fixed.nv), np.zeros(fixed.nv), world)


def test_a_mapping_gives_each_frame_its_kind_and_is_never_read_as_its_keys(solo):
    """{frame: "point" | "surface"} is those Contacts, even right after the same frames as point contacts (the set
    of the last call is remembered); {frame: 6} is refused naming the frame (issue 26: it was two point contacts)."""
    robot, q, tau = solo
    v = np.zeros(robot.nv)
    points = robot.constrained_dynamics(q, v, tau, FEET[:2])
    surfaces = robot.constrained_dynamics(q, v, tau, {FEET[0]: "surface", FEET[1]: "surface"})
    expected = robot.constrained_dynamics(q, v, tau, [Contact(FEET[0], "surface"), Contact(FEET[1], "surface")])
    assert surfaces[1].shape == (12,) and points[1].shape == (6,)
    np.testing.assert_array_equal(surfaces[0], expected[0])
    np.testing.assert_array_equal(surfaces[1], expected[1])
    mixed = robot.constrained_dynamics(q, v, tau, {FEET[0]: "point", FEET[1]: "surface"})
    assert mixed[1].shape == (9,)
    with pytest.raises(ValueError, match=rf"contacts\['{FEET[0]}'\] must be 'point' or 'surface'.*got 6"):
        robot.constrained_dynamics(q, v, tau, {FEET[0]: 6, FEET[1]: 6})
    with pytest.raises(ValueError, match="must be 'point' or 'surface'"):
        Simulator(robot, 1e-3, contacts={FEET[0]: 3})
    assert Simulator(robot, 1e-3, contacts={FEET[0]: "surface"}).contacts == (Contact(FEET[0], "surface"),)
