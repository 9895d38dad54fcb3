"""Frames (every URDF link) and external wrenches: against Pinocchio on the real robots of test_pinocchio.py, and
by identities on the seeded random trees of test_identities.py.

Pinocchio (1e-9 relative): updateFramePlacements, getFrameJacobian in its three references, getFrameVelocity and
getFrameClassicalAcceleration after forwardKinematics(q, v, 0), rnea and aba with fext (a wrench given in any
reference is carried into its joint's frame by Pinocchio's own SE3 actions).  Identities: J v = frame velocity
(exact); central differences of frame placements along integrate give J, and of the "local_world_aligned" frame
velocity along q(t) = q (+) t v (v constant: zero joint accelerations) give the acceleration bias (h = 1e-5:
truncation ~h^2, round-off ~1e-16/h, the documented 1e-7 of test_identities).
"""
import numpy as np
import pinocchio as pin
import pytest

from oracle import relative_error
from test_identities import EXACT, FD_TOL, H, ROUNDOFF, make
from test_pinocchio import CASES, IDS, TOL, pair

REFERENCES = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


def pin_state(twin, q, v):
    """Pinocchio's data after forwardKinematics(q, v, 0), frame placements and joint Jacobians."""
    m, d = twin.model, twin.data
    qp = twin.q(q)
    pin.forwardKinematics(m, d, qp, twin.v(v), np.zeros(m.nv))
    pin.updateFramePlacements(m, d)
    pin.computeJointJacobians(m, d, qp)
    return m, d


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_frames_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    m = twin.model
    assert sorted(robot.frame_names) == sorted(f.name for f in m.frames if f.type == pin.BODY)
    worst, rng = {}, np.random.default_rng(len(name))

    def check(what, ours, theirs):
        worst[what] = max(worst.get(what, 0.0), relative_error(ours, theirs))

    for _ in range(2):
        q, v = robot.random_state(rng)
        m, d = pin_state(twin, q, v)
        # each quantity stacked over all frames, so that its error is relative to its size on this robot (an
        # entry that is zero in exact arithmetic -- the acceleration of a point on a joint axis -- is round-off)
        ours, theirs = {}, {}
        for frame in robot.frame_names:
            fid = m.getFrameId(frame, pin.BODY)
            pairs = [("placement", robot.frame_placement(q, frame), d.oMf[fid].homogeneous)]
            for reference, pin_reference in REFERENCES.items():
                pairs += [("J " + reference, robot.frame_jacobian(q, frame, reference),
                           twin.cols(pin.getFrameJacobian(m, d, fid, pin_reference))),
                          ("V " + reference, robot.frame_velocity(q, v, frame, reference),
                           pin.getFrameVelocity(m, d, fid, pin_reference).vector),
                          ("Jdot v " + reference, robot.frame_acceleration_bias(q, v, frame, reference),
                           pin.getFrameClassicalAcceleration(m, d, fid, pin_reference).vector)]
            for what, x, y in pairs:
                ours.setdefault(what, []).append(x)
                theirs.setdefault(what, []).append(y)
        for what in ours:
            check(what, np.array(ours[what]), np.array(theirs[what]))
    # A batch (the parallel loops) of one frame, the robot's last (a leaf), against Pinocchio state by state.
    frame = robot.frame_names[-1]
    fid = m.getFrameId(frame, pin.BODY)
    Q, V = (np.array(x) for x in zip(*(robot.random_state(rng) for _ in range(3))))
    T, J = robot.frame_placement(Q, frame), robot.frame_jacobian(Q, frame, "world")
    Vf, A = robot.frame_velocity(Q, V, frame, "local"), robot.frame_acceleration_bias(Q, V, frame, "local")
    for i in range(3):
        m, d = pin_state(twin, Q[i], V[i])
        check("placement (batch)", T[i], d.oMf[fid].homogeneous)
        check("J world (batch)", J[i], twin.cols(pin.getFrameJacobian(m, d, fid, pin.WORLD)))
        check("V local (batch)", Vf[i], pin.getFrameVelocity(m, d, fid, pin.LOCAL).vector)
        check("Jdot v local (batch)", A[i], pin.getFrameClassicalAcceleration(m, d, fid, pin.LOCAL).vector)
    bad = {k: x for k, x in worst.items() if not x < TOL}
    assert not bad, f"relative errors above {TOL}: {bad}"


def pin_wrenches(twin, d, f_ext, reference):
    """Pinocchio's fext (a Force per joint, in the joint's frame) of our {frame: wrench in reference}."""
    fext = [pin.Force.Zero() for _ in range(twin.model.njoints)]
    for frame, w in f_ext.items():
        fid = twin.model.getFrameId(frame, pin.BODY)
        f, oMf = pin.Force(np.asarray(w)), d.oMf[fid]
        if reference == "world":
            f = oMf.actInv(f)
        elif reference == "local_world_aligned":
            f = pin.SE3(oMf.rotation, np.zeros(3)).actInv(f)
        joint_frame = twin.model.frames[fid]
        fext[joint_frame.parentJoint] += joint_frame.placement.act(f)
    return fext


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_external_wrenches_against_pinocchio(name, floating_base):
    """rnea and aba with fext; wrenches on the last three frames (leaves: tool flanges, feet, fingers), two of them
    possibly on one body, and with a batch of wrenches."""
    robot, twin = pair(name, floating_base)
    rng = np.random.default_rng(len(name) + 1)
    frames = robot.frame_names[-3:]
    for reference in REFERENCES:
        q, v = robot.random_state(rng)
        a, tau = rng.normal(size=(2, robot.nv))
        f_ext = {frame: rng.normal(size=6) for frame in frames}
        m, d = pin_state(twin, q, v)
        fext = pin_wrenches(twin, d, f_ext, reference)
        qp, vp = twin.q(q), twin.v(v)
        ours = robot.inverse_dynamics(q, v, a, f_ext=f_ext, reference=reference)
        assert relative_error(ours, twin.vec(pin.rnea(m, d, qp, vp, twin.v(a), fext))) < TOL, reference
        ours = robot.forward_dynamics(q, v, tau, f_ext=f_ext, reference=reference)
        assert relative_error(ours, twin.vec(pin.aba(m, d, qp, vp, twin.v(tau), fext))) < TOL, reference
    # a batch of two states, the wrenches per state, into out=
    Q, V = (np.array(x) for x in zip(*(robot.random_state(rng) for _ in range(2))))
    A = rng.normal(size=(2, robot.nv))
    f_ext = {frames[-1]: rng.normal(size=(2, 6)), frames[0]: rng.normal(size=6)}
    out = np.empty((2, robot.nv))
    assert robot.inverse_dynamics(Q, V, A, out=out, f_ext=f_ext, reference="local_world_aligned") is out
    for i in range(2):
        m, d = pin_state(twin, Q[i], V[i])
        fext = pin_wrenches(twin, d, {k: np.broadcast_to(w, (2, 6))[i] for k, w in f_ext.items()},
                            "local_world_aligned")
        assert relative_error(out[i], twin.vec(pin.rnea(m, d, twin.q(Q[i]), twin.v(V[i]), twin.v(A[i]), fext))) < TOL


@pytest.mark.filterwarnings("ignore::robot_dynamics.URDFWarning")
def test_coupled_mimic_joints_against_pinocchio():
    """mimic=True: a mimic joint's column adds into its master's (Pinocchio's mimic Jacobians); rnea with fext
    against Pinocchio's, forward dynamics (Cholesky, on coupled joints) by inverting the inverse."""
    robot, twin = pair("panda.urdf", False, mimic=True)
    rng = np.random.default_rng(5)
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    m, d = pin_state(twin, q, v)
    for frame in ("panda_leftfinger", "panda_rightfinger", "panda_hand"):
        fid = m.getFrameId(frame, pin.BODY)
        for reference, pin_reference in REFERENCES.items():
            assert relative_error(robot.frame_jacobian(q, frame, reference),
                                  twin.cols(pin.getFrameJacobian(m, d, fid, pin_reference))) < TOL
    f_ext = {"panda_leftfinger": rng.normal(size=6), "panda_rightfinger": rng.normal(size=6)}
    tau = robot.inverse_dynamics(q, v, a, f_ext=f_ext, reference="world")
    fext = pin_wrenches(twin, d, f_ext, "world")
    assert relative_error(tau, twin.vec(pin.rnea(m, d, twin.q(q), twin.v(v), twin.v(a), fext))) < TOL
    assert relative_error(robot.forward_dynamics(q, v, tau, f_ext=f_ext, reference="world"), a) < TOL


def vee(X):
    """[X_21 ... ] the 3-vector of a skew(-ish) 3x3 matrix (its skew part)."""
    return 0.5 * np.array([X[2, 1] - X[1, 2], X[0, 2] - X[2, 0], X[1, 0] - X[0, 1]])


@pytest.mark.parametrize("seed, floating_base", [(s, fb) for s in range(4) for fb in (False, True)],
                         ids=lambda x: str(x))
def test_identities_on_random_trees(seed, floating_base):
    """J v = V (exact); J from central differences of placements along integrate; the bias from central
    differences of the world-aligned velocity along q (+) t v; local = world-aligned rotated (exact)."""
    robot = make(seed, floating_base)
    rng = np.random.default_rng(2000 + seed)
    q, v = robot.random_state(rng)
    nv = robot.nv
    steps = np.vstack([np.eye(nv) * H, -np.eye(nv) * H])
    Q = robot.integrate(np.repeat(q[None], 2 * nv, axis=0), steps)     # q (+) h e_i, then q (+) -h e_i
    Qt = robot.integrate(np.array([q, q]), np.array([H * v, -H * v]))
    ours, theirs = {}, {}

    def check(what, x, y):            # stacked over the frames: errors relative to the quantity's size (as above)
        ours.setdefault(what, []).append(x)
        theirs.setdefault(what, []).append(y)

    for frame in robot.frame_names:
        T = robot.frame_placement(q, frame)
        R, p = T[:3, :3], T[:3, 3]
        Ts = robot.frame_placement(Q, frame)
        dT = (Ts[:nv] - Ts[nv:]) / (2 * H)                               # (nv, 4, 4): d/de_i T
        dR, dp = dT[:, :3, :3], dT[:, :3, 3]
        w_world = np.array([vee(x @ R.T) for x in dR]).T                  # (3, nv)
        J_fd = {"local": np.vstack([R.T @ dp.T, R.T @ w_world]),
                "world": np.vstack([dp.T - np.cross(w_world.T, p).T, w_world]),
                "local_world_aligned": np.vstack([dp.T, w_world])}
        for reference in REFERENCES:
            J = robot.frame_jacobian(q, frame, reference)
            check("J v = V", J @ v, robot.frame_velocity(q, v, frame, reference))
            check("J by differences", J, J_fd[reference])
        Vt = robot.frame_velocity(Qt, np.array([v, v]), frame, "local_world_aligned")
        bias = robot.frame_acceleration_bias(q, v, frame, "local_world_aligned")
        check("Jdot v by differences", bias, (Vt[0] - Vt[1]) / (2 * H))
        rotated = np.concatenate([R.T @ bias[:3], R.T @ bias[3:]])
        check("local = world-aligned rotated", robot.frame_acceleration_bias(q, v, frame, "local"), rotated)
    exact = ("J v = V", "local = world-aligned rotated")
    worst = {k: relative_error(np.array(x), np.array(theirs[k])) for k, x in ours.items()}
    bad = {k: x for k, x in worst.items() if not x < (EXACT if k in exact else FD_TOL)}
    assert not bad, f"errors above tolerance: {bad}"


@pytest.fixture(scope="module")
def panda():
    return pair("panda.urdf", True)[0]


def test_batches_and_out(panda):
    """Leading batch dimensions and out= (strided too) give the single-state numbers, to round-off (a parallel
    loop compiles the same kernel apart)."""
    robot, rng = panda, np.random.default_rng(9)
    Q, V = (np.array(x).reshape((2, 2, -1)) for x in zip(*(robot.random_state(rng) for _ in range(4))))
    frame = "panda_hand"
    for method, args, shape, ref in ((robot.frame_placement, (Q,), (4, 4), ()),
                                     (robot.frame_jacobian, (Q,), (6, robot.nv), ("world",)),
                                     (robot.frame_velocity, (Q, V), (6,), ("world",)),
                                     (robot.frame_acceleration_bias, (Q, V), (6,), ("local_world_aligned",))):
        batch = method(*args, frame, *ref)
        assert batch.shape == (2, 2) + shape
        single = np.array([[method(*(x[i, j] for x in args), frame, *ref) for j in range(2)] for i in range(2)])
        assert relative_error(batch, single) < ROUNDOFF, method.__name__
        out = np.full(shape, np.nan)
        assert method(*(x[0, 1] for x in args), frame, *ref, out=out) is out
        np.testing.assert_array_equal(out, single[0, 1])
        strided = np.full((2, 2) + shape + (2,), np.nan)[..., 0]
        assert method(*args, frame, *ref, out=strided) is strided
        np.testing.assert_array_equal(strided, batch)
        lists = method(*([x.tolist() for x in args]), robot.frame_names.index(frame), *ref)
        np.testing.assert_array_equal(lists, batch)


def test_bad_input(panda):
    robot = panda
    q, v = robot.random_state(0)
    with pytest.raises(ValueError, match="'panda_link8'"):
        robot.frame_jacobian(q, "panda_link_8")
    with pytest.raises(ValueError, match="frame_names"):
        robot.frame_jacobian(q, "no such thing anywhere")
    with pytest.raises(ValueError, match="reference must be one of 'local', 'world', 'local_world_aligned'"):
        robot.frame_velocity(q, v, "panda_hand", "global")
    with pytest.raises(ValueError, match="out of range"):
        robot.frame_placement(q, len(robot.frame_names))
    np.testing.assert_array_equal(robot.frame_placement(q, -1), robot.frame_placement(q, robot.frame_names[-1]))
    with pytest.raises(ValueError, match="frame must be a frame name"):
        robot.frame_placement(q, 1.5)
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="q contains non-finite"):
        robot.frame_jacobian(bad, "panda_hand")
    with pytest.raises(ValueError, match="v contains non-finite"):
        robot.frame_acceleration_bias(q, np.full(robot.nv, np.inf), "panda_hand")
    with pytest.raises(ValueError, match="out must be a writeable float64 array of shape"):
        robot.frame_jacobian(q, "panda_hand", out=np.empty((6, robot.nv + 1)))
    a = np.zeros(robot.nv)
    with pytest.raises(ValueError, match=r"f_ext\['panda_hand'\] must be a finite wrench"):
        robot.inverse_dynamics(q, v, a, f_ext={"panda_hand": np.zeros(3)})
    with pytest.raises(ValueError, match="non-finite"):
        robot.forward_dynamics(q, v, a, f_ext={"panda_hand": np.full(6, np.nan)})
    with pytest.raises(ValueError, match="unknown frame 'hand'"):
        robot.inverse_dynamics(q, v, a, f_ext={"hand": np.zeros(6)})
    with pytest.raises(ValueError, match="f_ext must map frame names"):
        robot.inverse_dynamics(q, v, a, f_ext=np.zeros(6))
