"""Drives in a sampled loop (issue 37): computed torque on MuJoCo's xArm7 with exactly its URDF's drives.

example-robot-data's xarm7.urdf declares <dynamics damping="2..10" friction="1"/> and no armature: joint 7's
M_77 = 1.4e-4 kg m^2 and damping 2 N m s/rad make D dt / M_77 = 14 at 1 kHz.  MuJoCo (RK4 at 1 ms, contacts and
limits off) carries exactly those drives (dof_damping, and friction as the constraint-based dof_frictionloss).
Compensating them from the measured velocity (the law of earlier releases) does worse than ignoring them; the
default (tau_f(v_d) + D Lambda e: computed_torque's docstring) must track at least 10x better than friction=False,
at 1 kHz and 250 Hz.  The table (gains, rates, the bounded measured law) is benchmarks/bench_sampled_drives.py's.
"""
import numpy as np
import pytest

from mujoco_twin import driven_arm, motion, rms, tracking_errors
from robot_dynamics.controllers import ComputedTorque
from robot_dynamics.friction import StribeckFriction

DURATION = 2.0


@pytest.fixture(scope="module")
def arm():
    return driven_arm()


def test_mujoco_has_our_model_and_the_urdf_drives(arm):
    """MuJoCo's M, bias forces and passive damping are ours (so the loops test the drive handling)."""
    rng = np.random.default_rng(0)
    robot, twin = arm.robot, arm.twin
    for _ in range(3):
        q, v = robot.random_state(rng)
        M = robot.mass_matrix(q)
        np.testing.assert_allclose(twin.mass_matrix(q), M, rtol=0, atol=1e-12 * np.abs(M).max())
        bias = robot.inverse_dynamics(q, v, np.zeros(robot.nv))
        np.testing.assert_allclose(twin.bias(q, v), bias, rtol=0, atol=1e-12 * np.abs(bias).max())
        np.testing.assert_allclose(twin.data.qfrc_passive[twin.dadr], -robot.damping * v, rtol=1e-12)
    np.testing.assert_array_equal(twin.model.dof_frictionloss[twin.dadr], robot.friction)
    assert robot.damping[6] * 1e-3 / robot.mass_matrix(arm.home)[6, 6] > 10


def test_the_default_is_tau_f_at_the_desired_velocity_and_damping_at_the_reference_velocity(arm):
    """default - friction=False = tau_f(v_d) + D Lambda e (robot.friction_torque), Lambda = min(K_p / K_d, K_d) per
    joint, whatever the measured v."""
    robot = arm.robot
    rng = np.random.default_rng(1)
    K_p, K_d = rng.uniform(50, 400, 7), rng.uniform(10, 40, 7)
    default, ignored = ComputedTorque(robot, K_p, K_d), ComputedTorque(robot, K_p, K_d, friction=False)
    for _ in range(3):
        (q, v), (q_d, v_d), a_d = robot.random_state(rng), robot.random_state(rng), rng.normal(size=7)
        expected = robot.friction_torque(v_d) + robot.damping * np.minimum(K_p / K_d, K_d) * (q_d - q)
        drive = default.torque(q, v, q_d, v_d, a_d) - ignored.torque(q, v, q_d, v_d, a_d)
        np.testing.assert_allclose(drive, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("period", [1e-3, 4e-3])
def test_the_default_tracks_ten_times_better_than_ignoring_the_drives(arm, period):
    """K_p 100, K_d 20: RMS error over the last second of 2 s at least 10x below friction=False's, never diverging;
    at 1 kHz, the measured-velocity compensation of earlier releases does worse than ignoring the drives."""
    reference = motion(arm, 0)
    errors = {}
    laws = {"default": ComputedTorque(arm.robot, 100.0, 20.0),
            "ignored": ComputedTorque(arm.robot, 100.0, 20.0, friction=False)}
    for name, controller in laws.items():
        t, e = tracking_errors(arm.twin, reference,
                               lambda t, q, v, r, c=controller: c.torque(q, v, r.q, r.v, r.a), DURATION, period)
        assert np.all(np.isfinite(e)), name
        errors[name] = rms(t, e, DURATION - 1.0, DURATION)
    assert errors["default"] * 10 <= errors["ignored"], errors
    if period == 1e-3:
        ignored = laws["ignored"]
        t, e = tracking_errors(arm.twin, reference, lambda t, q, v, r: ignored.torque(q, v, r.q, r.v, r.a)
                               + arm.robot.friction_torque(v), DURATION, period)
        assert not rms(t, e, DURATION - 1.0, DURATION) < errors["ignored"], errors


def test_underdamped_gains_at_250_hz_do_no_worse_than_ignoring_the_drives(arm):
    """K_p 10^4, K_d 10 at 250 Hz: K_p dt / K_d = 4, where damping fed at v_d + K_p / K_d e would diverge; Lambda
    capped at K_d keeps the default finite and at least as good as friction=False."""
    reference, errors = motion(arm, 0), {}
    for name, options in (("default", {}), ("ignored", {"friction": False})):
        controller = ComputedTorque(arm.robot, 1e4, 10.0, **options)
        t, e = tracking_errors(arm.twin, reference, lambda t, q, v, r: controller.torque(q, v, r.q, r.v, r.a),
                               DURATION, 4e-3)
        errors[name] = rms(t, e, DURATION - 1.0, DURATION)
    assert np.isfinite(errors["default"]) and errors["default"] <= errors["ignored"], errors


def test_measured_compensation_is_bounded_by_the_rate_and_names_the_joints(arm):
    """friction="measured" needs dt, warns naming each joint it bounds (joint 7: D dt / M_77 = 14 at 1 kHz) and
    tracks without diverging; a friction model is fed forward only."""
    robot = arm.robot
    with pytest.raises(ValueError, match="dt"):
        ComputedTorque(robot, 100.0, 20.0, friction="measured")
    with pytest.raises(ValueError, match="friction"):
        ComputedTorque(robot, 100.0, 20.0, friction="always")
    stribeck = robot.with_drives(model=StribeckFriction(robot.damping, robot.friction, 1.5 * robot.friction,
                                                        np.full(7, 0.05)))
    with pytest.raises(ValueError, match="friction model"):
        ComputedTorque(stribeck, 100.0, 20.0, friction="measured", dt=1e-3)
    with pytest.warns(UserWarning, match=robot.coordinate_names[6]):
        controller = ComputedTorque(robot, 100.0, 20.0, friction="measured", dt=1e-3)
    t, e = tracking_errors(arm.twin, motion(arm, 0), lambda t, q, v, r: controller.torque(q, v, r.q, r.v, r.a),
                           DURATION, 1e-3)
    assert np.all(np.isfinite(e)) and rms(t, e, DURATION - 1.0, DURATION) < 0.1


def test_the_default_adaptive_controller_stays_finite_where_the_drives_model_is_wrong():
    """MuJoCo's soft frictionloss applies a fraction of the URDF's Coulomb level on xArm7's light wrist, so the default
    adaptive controller learns part of the friction as inertia (M_77(q; pi_hat) grew to 12x the arm's): with Lambda
    x10 at 250 Hz its velocity feedback Lambda M_hat then diverged after 4.2 s.  Lambda capped by the estimate's
    inertia (composite.py), every tick of 6 s gives a finite torque and MuJoCo never finds the state unstable."""
    import mujoco_twin
    from robot_dynamics.controllers import RelativeGains

    sc = mujoco_twin.scenario("xarm7")
    twin = sc.twin
    twin.model.dof_frictionloss[twin.dadr] = sc.truth.friction          # the URDF's drives, MuJoCo's default solver
    controller = RelativeGains(Lambda=10 * 2 * np.pi * 2.0).slotine_li(sc.nominal, 0.7 * sc.nominal.parameters)

    def torque(t, q, v, r):
        return controller.update(q, v, r.q, r.v, r.a, 4e-3 if t > 0 else 0.0)

    t, e = tracking_errors(twin, sc.reference, torque, 6.0, 4e-3)
    assert np.all(np.isfinite(e)) and rms(t, e, 4.0, 6.0) < 0.05
    assert controller.status.gains_capped
