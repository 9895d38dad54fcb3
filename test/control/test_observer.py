"""The momentum observer, its wrenches and collision detection (observers.py) on physics we did not write.

MuJoCo (RK4 at 1 kHz, contacts and limits off) simulates panda (its URDF's joint damping) and ur5 (a random
armature and damping on every joint, in MuJoCo's dof_armature and dof_damping and in our drives) tracking three
sines per joint under computed torque; the observer runs online at every tick.  A force is stepped onto a point of
a link, 5 cm off its centre of mass, through xfrc_applied (which acts at the centre of mass: the force and its
moment about it); its joint torque J^T F comes from MuJoCo's own Jacobian of that point (mj_jac), its wrench at
the link's frame from MuJoCo's poses.  The detector is calibrated (margin 2, floor 1e-3 N m) on another motion,
contact-free.  The 60 s free-motion figures, more force directions and 30 N are benchmarks/bench_observer.py's.
"""
import numpy as np
import pytest

import robot_dynamics as rd
from mujoco_twin import motion, observed_arm, observed_run
from random_urdf import random_urdf
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.observers import CollisionDetector, MomentumObserver

GAIN = 100.0              # rad/s: the residual is within exp(-5) of a step of tau_ext after 5 / GAIN = 50 ms
SETTLE = 5 / GAIN
WITHIN = 0.05             # |tau_ext - J^T F| / |J^T F| and the same for wrenches, from SETTLE after a step on
LATENCY = 0.010           # s, for a 10 N step
STEP_ON, STEP_OFF, DURATION = 0.5, 1.0, 1.3
OFFSET = np.array([0.03, 0.04, 0.02])   # m: the contact point from the link's centre of mass, off its joints' axes


@pytest.fixture(scope="module", params=["panda", "ur5"])
def arm(request):
    """The arm, and its detector calibrated (the defaults) on 3 s of another motion without contact."""
    arm = observed_arm(request.param)
    log = observed_run(arm, motion(arm, seed=1), 3.0)
    return arm, MomentumObserver(arm.robot, GAIN).calibrate(log.t, log.q, log.v, log.tau)


def body_of(robot, link):
    return robot.body_names[robot.model.frames[link].body]


def test_free_motion_leaves_the_residual_at_rest(arm):
    """5 s of another motion: r stays below 1e-4 N m (what the trapezoidal rule leaves), replay gives the online
    residuals, and the detector raises no alarm."""
    arm, detector = arm
    log = observed_run(arm, motion(arm, seed=2), 5.0, MomentumObserver(arm.robot, GAIN))
    assert np.max(np.abs(log.r)) < 1e-4 and np.max(np.abs(log.tau)) > 10.0
    replayed = MomentumObserver(arm.robot, GAIN).replay(log.t, log.q, log.v, log.tau)
    np.testing.assert_allclose(replayed, log.r, rtol=0, atol=1e-12)
    assert not detector.replay(log.r)[0].any()


def test_a_joint_torque_step_is_low_passed_exactly(arm):
    """A joint torque tau_ext stepped on at a tick (qfrc_applied, not told to the observer): r = tau_ext (1 -
    exp(-k t)) at every tick after, to the free motion's 1e-4 N m -- an explicit Euler step would be 0.5 % of
    tau_ext off at k dt = 0.1."""
    arm, _ = arm
    n, dt = arm.robot.nv, arm.twin.dt
    tau_ext = np.linspace(1.0, 3.0, n) * (-1) ** np.arange(n)
    log = observed_run(arm, motion(arm, seed=3), 0.4, MomentumObserver(arm.robot, GAIN),
                       disturbance=lambda t: tau_ext if t >= 0.1 - 1e-9 else np.zeros(n))
    k0 = int(round(0.1 / dt))
    expected = -np.expm1(-GAIN * (log.t[k0:] - log.t[k0]))[:, None] * tau_ext     # on over each tick from k0's
    assert np.max(np.abs(log.r[k0:] - expected)) < 1e-4
    assert np.max(np.abs(log.r[:k0])) < 1e-4


@pytest.mark.parametrize("where, newtons", [("mid", 10.0), ("last", 20.0)])
def test_a_force_step_on_a_link(arm, where, newtons):
    """A force stepped onto a link mid-motion, then off: r within 5 % of J^T F (MuJoCo's Jacobian) from 5 / k on,
    detected within 10 ms, the link's body isolated at every tick it is flagged, released after the force; on the
    last link the wrench at its frame within 5 % of MuJoCo's."""
    arm, detector = arm
    robot, twin = arm.robot, arm.twin
    link = getattr(arm, where)
    f = newtons * np.array([0.6, -0.64, 0.48])                                  # a unit direction
    log = observed_run(arm, motion(arm, seed=4), DURATION, MomentumObserver(robot, GAIN),
                       force=(link, f, OFFSET, STEP_ON, STEP_OFF))
    on = (log.t >= STEP_ON - 1e-9) & (log.t < STEP_OFF - 1e-9)
    settled = on & (log.t >= STEP_ON + SETTLE - 1e-9)
    expected, wrenches = np.zeros((len(log.t), robot.nv)), np.zeros((len(log.t), 6))
    for k in np.flatnonzero(on):
        twin.set_state(log.q[k], log.v[k])
        x, origin = twin.body_point(link, OFFSET), twin.data.body(link).xpos.copy()
        expected[k] = twin.jacobian(log.q[k], link, x)[:3].T @ f                 # J^T f at the point, mj_jac
        wrenches[k] = np.concatenate([f, np.cross(x - origin, f)])             # at the link frame's origin
    error = np.linalg.norm(log.r - expected, axis=1) / np.linalg.norm(expected, axis=1).clip(1e-300)
    assert np.max(error[settled]) < WITHIN

    detector.reset()
    flags, touched = detector.replay(log.r)
    detected = flags.any(axis=1)
    seen = np.r_[False, on[:-1]]                              # r at a tick holds the tick before: the force's from
    k_seen = int(np.argmax(seen))                             # the tick after it is put on
    assert not detected[:k_seen].any()
    assert (int(np.argmax(detected[k_seen:])) + 1) * twin.dt <= LATENCY         # from the force's onset
    assert {detector.isolate(x) for x in touched[seen]} == {(body_of(robot, link),)}
    assert not detected[-1]                                                        # released 0.3 s after

    frame_of = robot.model.frames[link]
    if where == "mid":                                        # fewer than 6 joints below: a direction no joint feels
        sv = arm_estimate(arm, log, link, settled).singular_values
        below = sum(1 for j in robot.model.joints if j.body == frame_of.body or j.body in ancestors(robot, frame_of))
        assert below < 6 and np.all(sv[:, below:] < 1e-12) and np.all(sv[:, below - 1] > 1e-3)
        return
    estimate = arm_estimate(arm, log, link, settled)
    wrenches = wrenches[settled]
    relative = np.linalg.norm(estimate.wrench - wrenches, axis=1) / np.linalg.norm(wrenches, axis=1)
    assert np.max(relative) < WITHIN
    assert np.all(estimate.singular_values[:, 5] > 1e-3)                          # full rank all along


def ancestors(robot, frame):
    chain, a = set(), robot.model.parent[frame.body]
    while a >= 0:
        chain.add(int(a))
        a = robot.model.parent[a]
    return chain


def arm_estimate(arm, log, link, rows):
    observer = MomentumObserver(arm.robot, GAIN)
    return observer.wrench(log.q[rows], link, "local_world_aligned", residual=log.r[rows])


# ---- without MuJoCo: the API's promises ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def arm7():
    return rd.load_urdf(bundled_urdf("arm7"))


def test_update_is_replay_tick_by_tick_with_friction_and_uneven_ticks(arm7):
    """Random states and torques at uneven ticks, a robot with viscous and Coulomb friction: update and replay give
    the same residuals, and replay leaves the observer where update would."""
    robot = arm7.with_drives(damping=0.5, friction=0.3)
    rng = np.random.default_rng(0)
    K = 40
    t = np.cumsum(rng.uniform(0.5e-3, 2e-3, K))
    q = np.array([robot.random_configuration(rng) for _ in range(K)])
    v, tau = rng.normal(size=(K, robot.nv)), rng.normal(size=(K, robot.nv))
    gain = np.linspace(20.0, 200.0, robot.nv)
    replayed = MomentumObserver(robot, gain).replay(t, q, v, tau)
    stepped = MomentumObserver(robot, gain)
    rows = [stepped.update(q[0], v[0], tau[0], 1.0).copy()]
    for k in range(1, K):
        rows.append(stepped.update(q[k], v[k], tau[k - 1], t[k] - t[k - 1]).copy())
    np.testing.assert_allclose(replayed, rows, rtol=0, atol=1e-12 * np.max(np.abs(replayed)))
    assert np.max(np.abs(replayed)) > 1.0                                         # random states: r is large
    without = MomentumObserver(robot, gain, friction=False).replay(t, q, v, tau)
    assert np.max(np.abs(without - replayed)) > 0.1                               # the friction is in it
    again = MomentumObserver(robot, gain)
    again.replay(t[:-1], q[:-1], v[:-1], tau[:-1])
    np.testing.assert_allclose(again.update(q[-1], v[-1], tau[-2], t[-1] - t[-2]), replayed[-1], rtol=0,
                               atol=1e-12 * np.max(np.abs(replayed)))


def test_refusals_name_the_culprit_and_change_nothing(arm7):
    with pytest.raises(ValueError, match="floating base"):
        MomentumObserver(rd.load_urdf(bundled_urdf("arm7"), floating_base=True), GAIN)
    for gain in (0.0, -1.0, np.nan, np.ones(3)):
        with pytest.raises(ValueError, match="gain"):
            MomentumObserver(arm7, gain)
    observer = MomentumObserver(arm7, GAIN)
    rng = np.random.default_rng(1)
    q, v = arm7.random_state(rng)
    observer.update(q, v, np.zeros(7), 1e-3)
    observer.update(q, 1.1 * v, np.ones(7), 1e-3)
    before = observer.residual.copy()
    for args, culprit in (((q, v, np.full(7, np.nan), 1e-3), "tau"), ((q, v, np.ones(6), 1e-3), "tau"),
                          ((q, v, np.ones(7), 0.0), "dt"), ((q, v, np.ones(7), np.inf), "dt"),
                          ((np.stack([q, q]), v, np.ones(7), 1e-3), "q"), ((q, np.full(7, np.inf), np.ones(7), 1e-3),
                                                                           "v")):
        with pytest.raises(ValueError, match=culprit):
            observer.update(*args)
        np.testing.assert_array_equal(observer.residual, before)
    with pytest.raises(ValueError, match="increasing"):
        observer.replay(np.zeros(3), np.stack([q] * 3), np.stack([v] * 3), np.zeros((3, 7)))
    with pytest.raises(ValueError, match="tau"):
        observer.replay(np.arange(3.0), np.stack([q] * 3), np.stack([v] * 3), np.zeros((3, 6)))
    with pytest.raises(ValueError, match="release"):
        CollisionDetector(arm7, np.ones(7), release=1.5)


def test_update_returns_a_new_array_or_writes_out(arm7):
    """Estimates a user keeps stay as they were computed: each update returns a new array, equal to the observer's
    residual at the time, or writes into out= and returns it (the library's convention)."""
    rng = np.random.default_rng(2)
    observer, kept = MomentumObserver(arm7, GAIN), []
    for k in range(3):
        q, v = arm7.random_state(rng)
        kept.append(observer.update(q, v, rng.normal(size=7), 1e-3))
        np.testing.assert_array_equal(kept[-1], observer.residual)
    assert kept[0] is not kept[1] and not np.array_equal(kept[1], kept[2])
    snapshot = [r.copy() for r in kept]
    out = np.empty(7)
    assert observer.update(*arm7.random_state(rng), np.ones(7), 1e-3, out=out) is out
    np.testing.assert_array_equal(out, observer.residual)
    for r, s in zip(kept, snapshot):
        np.testing.assert_array_equal(r, s)
    with pytest.raises(ValueError, match="out"):
        observer.update(*arm7.random_state(rng), np.ones(7), 1e-3, out=np.empty(6))


def test_a_wrench_at_a_frame_is_recovered_and_what_it_cannot_explain_is_reported(arm7):
    """r = J^T F exactly: F back to round-off where J has full rank, for one frame, two and a batch; a torque on a
    joint below no frame is left unexplained."""
    observer = MomentumObserver(arm7, GAIN)
    rng = np.random.default_rng(2)
    Q = np.array([arm7.random_configuration(rng) for _ in range(4)])
    frame = arm7.frame_names[-1]
    F = rng.normal(size=(4, 6))
    r = np.einsum("kij,ki->kj", arm7.frame_jacobian(Q, frame, "local_world_aligned"), F)
    estimate = observer.wrench(Q, frame, residual=r, damping=0.0)
    np.testing.assert_allclose(estimate.wrench, F, rtol=0, atol=1e-10 * np.max(np.abs(F)))
    assert np.max(np.abs(estimate.unexplained)) < 1e-10 * np.max(np.abs(r))
    damped = observer.wrench(Q, frame, residual=r)                                # the default damping: close
    assert np.max(np.abs(damped.wrench - F)) < 1e-3 * np.max(np.abs(F))
    one = observer.wrench(Q[0], [frame, arm7.frame_names[3]], residual=r[0] + [1.0, 0, 0, 0, 0, 0, 0])
    assert one.wrench.shape == (2, 6) and one.unexplained.shape == (7,)
    force = observer.wrench(Q[0], frame, residual=r[0], force_only=True)
    assert force.wrench.shape == (3,) and force.singular_values.shape == (3,)


def test_hysteresis_and_isolation_on_a_tree():
    """A branching tree: replay's flags and touched coordinates are update's sample by sample (on above the
    threshold, off below release times it; touched since the collision began), from a fresh detector and from one
    in the middle of a collision, and the isolated bodies are the deepest touched ones of each branch."""
    robot = rd.load_urdf(random_urdf(3, n_links=8, joint_types=("revolute",)))
    detector = CollisionDetector(robot, np.ones(robot.nv), release=0.5)
    rng = np.random.default_rng(3)
    active = (rng.uniform(size=(300, 1)) < 0.8) & (np.arange(300) % 60 < 40)[:, None]   # 20 quiet of every 60
    R = rng.uniform(-1.3, 1.3, (300, robot.nv)) * active
    for split in (0, 125):                                       # 125: replayed from inside a collision
        detector.reset()
        for r in R[:split]:
            detector.update(r)
        flags, touched = detector.replay(R[split:])
        detector.reset()
        stepped = [detector.update(r) for r in R]
        np.testing.assert_array_equal(flags, [c.coordinates for c in stepped[split:]])
        np.testing.assert_array_equal(touched, [c.touched for c in stepped[split:]])
    assert (flags & (np.abs(R[split:]) <= 1.0)).any()                             # held between 0.5 and 1
    assert (touched & ~flags).any() and not flags.any(axis=1).all()               # touched is more than flags
    parent = robot.model.parent
    body = {j.idx_v: j.body for j in robot.model.joints}
    for collision in stepped:
        chosen = {robot.body_names.index(b) for b in collision.bodies}
        flagged = {body[i] for i in np.flatnonzero(collision.touched)}
        assert chosen <= flagged
        for b in flagged:                                     # each touched body is chosen or above a chosen one
            below = set()
            for c in chosen:
                a = c
                while a >= 0:
                    below.add(a)
                    a = parent[a]
            assert b in below
