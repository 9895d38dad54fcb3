"""The operational-space controller (robot_dynamics.controllers.OperationalSpace) on panda (7 DoF and a finger
joint, redundant for its hand): the frame's acceleration under its torques, by forward dynamics, is the commanded
one; in the simulator it tracks a Cartesian circle, and holds the hand still while its null-space posture task
moves the elbow."""
import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_path
from robot_dynamics.controllers import OperationalSpace, Simulator

FRAME = "panda_hand_tcp"
READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02])      # panda's "ready" pose, fingers open


@pytest.fixture(scope="module")
def panda():
    return rd.load_urdf(erd_path("panda.urdf"), mimic=True)


def frame_acceleration(robot, q, v, tau, frame):
    """The frame's classical acceleration (local_world_aligned) under tau: J a + Jdot v with a = ABA(q, v, tau -
    tau_f(v)), the drives' friction (panda's URDF <dynamics damping>) taking its part of tau."""
    a = robot.forward_dynamics(q, v, tau - robot.friction_torque(v))
    return (robot.frame_jacobian(q, frame, "local_world_aligned") @ a
            + robot.frame_acceleration_bias(q, v, frame, "local_world_aligned"))


@pytest.mark.parametrize("position_only", [False, True], ids=["pose", "position"])
def test_the_frame_accelerates_as_commanded(panda, position_only):
    """J a + Jdot v = A_d + K_d (V_d - J v) + K_p e at random states and targets, with a posture task pulling
    elsewhere (its torques N^T tau_0 must not accelerate the frame): forward dynamics (ABA) and the frame's
    kinematics against the controller's Lambda, eta, J_bar route."""
    rng = np.random.default_rng(3)
    k = 3 if position_only else 6
    controller = OperationalSpace(panda, FRAME, K_p=rng.uniform(50, 150, k), K_d=20.0,
                                  q_posture=panda.random_configuration(rng), K_p0=7.0, position_only=position_only)
    for _ in range(3):
        q, v = panda.random_state(rng)
        T_d = panda.frame_placement(panda.random_configuration(rng), FRAME)
        V_d, A_d = rng.normal(size=k), rng.normal(size=k)
        tau = controller.torque(q, v, T_d[:3, 3] if position_only else T_d, V_d, A_d)
        J = panda.frame_jacobian(q, FRAME, "local_world_aligned")[:k]
        e = T_d[:3, 3] - panda.frame_placement(q, FRAME)[:3, 3]
        if not position_only:                  # log(R_d R^T) by its axis and angle, apart from the controller
            R = T_d[:3, :3] @ panda.frame_placement(q, FRAME)[:3, :3].T
            angle = np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))
            axis = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / (2 * np.sin(angle))
            e = np.concatenate([e, angle * axis])
        commanded = A_d + controller.K_d @ (V_d - J @ v) + controller.K_p @ e
        np.testing.assert_allclose(frame_acceleration(panda, q, v, tau, FRAME)[:k], commanded, rtol=0,
                                   atol=1e-10 * np.abs(commanded).max())


def circle(T0, radius=0.05, omega=np.pi):
    """A circle of the frame's origin in the world's y-z plane through T0's, its orientation held: T_d, V_d, A_d."""
    def desired(t):
        s, c = np.sin(omega * t), np.cos(omega * t)
        T = T0.copy()
        T[:3, 3] = T0[:3, 3] + radius * np.array([0.0, s, 1.0 - c])
        V = np.r_[radius * omega * np.array([0.0, c, s]), np.zeros(3)]
        A = np.r_[radius * omega ** 2 * np.array([0.0, -s, c]), np.zeros(3)]
        return T, V, A
    return desired


def test_simulated_panda_tracks_a_cartesian_circle(panda):
    """From rest at the ready pose, a 5 cm circle at 0.5 Hz (its start velocity 0.16 m/s: an initial error) with
    K_p = 400, K_d = 40 (critically damped at 20 rad/s), 1 kHz zero-order hold, RK4: after the transient the
    hand follows the circle to 1e-5 m and 1e-4 rad."""
    desired = circle(panda.frame_placement(READY, FRAME))
    controller = OperationalSpace(panda, FRAME, K_p=400.0, K_d=40.0, q_posture=READY, K_p0=25.0)
    rollout = Simulator(panda, 1e-3).run(READY, np.zeros(panda.nv), lambda t, q, v: controller.torque(
        q, v, *desired(t)), 2.0, control_period=1e-3)
    errors = np.array([controller.pose_error(q, desired(t)[0]) for t, q in zip(rollout.t, rollout.q)])
    transient = np.linalg.norm(errors[rollout.t < 0.3, :3], axis=1).max()
    settled = rollout.t > 1.0
    assert transient > 1e-3                                          # the start was off the trajectory's velocity
    assert np.linalg.norm(errors[settled, :3], axis=1).max() < 1e-5
    assert np.linalg.norm(errors[settled, 3:], axis=1).max() < 1e-4


def test_the_posture_task_moves_the_elbow_not_the_hand(panda):
    """The hand held at its ready pose, the posture q_0 elsewhere: the arm's self-motion takes the dynamically
    consistent null-space part of the posture error, N^T M (q_0 - q), from 2.8e-2 towards zero, the hand within
    1e-5 of its pose all along."""
    T0 = panda.frame_placement(READY, FRAME)
    posture = READY + np.array([0.3, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    controller = OperationalSpace(panda, FRAME, K_p=400.0, K_d=40.0, q_posture=posture, K_p0=25.0)
    rollout = Simulator(panda, 1e-3).run(READY, np.zeros(panda.nv), lambda t, q, v: controller.torque(
        q, v, T0, np.zeros(6), np.zeros(6)), 2.0, control_period=1e-3)

    def null_space_error(q):
        N = panda.task_space_dynamics(q, np.zeros(panda.nv), FRAME).N
        return np.linalg.norm(N.T @ panda.mass_matrix(q) @ panda.difference(q, posture))

    assert max(np.abs(controller.pose_error(q, T0)).max() for q in rollout.q) < 1e-5
    assert np.linalg.norm(panda.difference(READY, rollout.q[-1])) > 0.1          # the elbow moved
    assert null_space_error(rollout.q[-1]) < 1e-3 * null_space_error(READY)


def test_bad_input(panda):
    with pytest.raises(ValueError, match="unknown frame 'panda_hnd'"):
        OperationalSpace(panda, "panda_hnd", 1.0, 1.0)
    controller = OperationalSpace(panda, FRAME, 1.0, 1.0)
    q, v = panda.random_state(0)
    with pytest.raises(ValueError, match=r"T_d must be a finite pose \(4, 4\)"):
        controller.torque(q, v, np.zeros(3), np.zeros(6), np.zeros(6))
    with pytest.raises(ValueError, match="V_d has shape"):
        controller.torque(q, v, np.eye(4), np.zeros(3), np.zeros(6))
    with pytest.raises(ValueError, match="K_p must be"):
        OperationalSpace(panda, FRAME, np.ones(5), 1.0)


def test_on_mujocos_geared_panda_the_drives_model_tracks_the_circle_the_rigid_model_cannot():
    """Physics we did not write: MuJoCo's panda (fingers fixed) with rotor inertia and viscous damping on every joint
    (dof_armature, dof_damping, RK4 at 1 kHz).  OperationalSpace with the model's drives (M with the armature,
    tau_f added) tracks the 5 cm circle, once settled, to 1e-4 m; with the rigid-body model alone (same gains) the
    error is at least 10x larger."""
    from mujoco_twin import MujocoTwin, prepared_urdf

    text = prepared_urdf(erd_path("panda.urdf"), ("panda_finger_joint1", "panda_finger_joint2"))
    real = rd.load_urdf(text).with_drives(armature=[0.4, 0.4, 0.3, 0.3, 0.1, 0.1, 0.1],
                                          damping=[3.0, 3.0, 2.0, 2.0, 1.0, 1.0, 1.0])
    rigid = real.with_drives(armature=0.0, damping=0.0, friction=0.0)
    twin = MujocoTwin(text, real, armature=real.armature, damping=real.damping)
    start = READY[:7]
    desired = circle(real.frame_placement(start, FRAME))
    errors = {}
    for name, model in (("drives", real), ("rigid", rigid)):
        controller = OperationalSpace(model, FRAME, K_p=400.0, K_d=40.0, q_posture=start, K_p0=25.0)
        t, q, _, _ = twin.run(start, np.zeros(7), lambda t, q, v: controller.torque(q, v, *desired(t)), 2.0)
        assert len(t) == 2000, f"MuJoCo stopped early with the {name} model"
        settled = t > 1.0
        errors[name] = max(np.linalg.norm(controller.pose_error(qk, desired(tk)[0])[:3])
                           for tk, qk in zip(t[settled], q[settled]))
    assert errors["drives"] < 1e-4 and errors["drives"] * 10 < errors["rigid"], errors


def test_out_and_refused_inputs(panda):
    """torque(..., out=) writes the fresh result into out and returns it; a non-finite or misshapen input is a
    ValueError naming it, after which the controller gives the same torque as before (no state kept)."""
    rng = np.random.default_rng(5)
    controller = OperationalSpace(panda, FRAME, K_p=100.0, K_d=20.0, q_posture=READY)
    q, v = panda.random_state(rng)
    args = [q, v, panda.frame_placement(READY, FRAME), rng.normal(size=6), rng.normal(size=6)]
    tau = controller.torque(*args)
    out = np.empty(panda.nv)
    assert controller.torque(*args, out=out) is out and np.array_equal(out, tau)
    for i, name in enumerate(("q", "v", "T_d", "V_d", "A_d")):
        for bad in (np.full_like(args[i], np.nan), args[i][:-1]):
            with pytest.raises(ValueError, match=name):
                controller.torque(*args[:i], bad, *args[i + 1:])
    with pytest.raises(ValueError, match="out"):
        controller.torque(*args, out=np.empty(panda.nv + 1))
    with pytest.raises(ValueError, match="K_p"):
        controller.K_p = np.ones(5)
    assert np.array_equal(controller.torque(*args), tau)


def test_floating_base_refusals_and_gains_between_ticks():
    """On a floating base (the posture's q_0 (-) q in the compiled tick): a NaN in q and a zero base quaternion are
    ValueErrors naming it, an out that is an input is refused, none writes out; gains and damping set between ticks
    act as a new controller's; a negative damping is refused."""
    import pathlib
    robot = rd.load_urdf(str(pathlib.Path(__file__).resolve().parents[2] / "urdf" / "quadruped.urdf"),
                         floating_base=True)
    frame = robot.frame_names[-1]
    rng = np.random.default_rng(8)
    q, v = robot.random_configuration(rng), rng.normal(size=robot.nv)
    args = [q, v, robot.frame_placement(robot.random_configuration(rng), frame)[:3, 3].copy(), rng.normal(size=3),
            rng.normal(size=3)]
    controller = OperationalSpace(robot, frame, K_p=100.0, K_d=20.0, position_only=True, damping=1e-3)
    out = np.full(robot.nv, 7.0)
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="^q is not finite"):
        controller.torque(bad, *args[1:], out=out)
    bad[0], bad[3:7] = 0.0, 0.0
    with pytest.raises(ValueError, match=r"\[3:7\] is a zero or non-finite quaternion"):
        controller.torque(bad, *args[1:], out=out)
    with pytest.raises(ValueError, match="overlap"):
        controller.torque(*args, out=v)
    assert np.all(out == 7.0)
    with pytest.raises(ValueError, match="damping"):
        controller.damping = -1.0
    controller.K_p, controller.K_d0, controller.damping = [50.0, 60.0, 70.0], 3.0, 0.1
    fresh = OperationalSpace(robot, frame, K_p=[50.0, 60.0, 70.0], K_d=20.0, K_d0=3.0, position_only=True,
                             damping=0.1)
    np.testing.assert_array_equal(controller.torque(*args), fresh.torque(*args))
