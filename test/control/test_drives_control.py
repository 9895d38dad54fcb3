"""Drives in the closed loop (issue 27, item 4): the simulator's friction obeys the power balance and the smoothed
Coulomb law, and computed torque with the drives' model tracks a geared robot with friction that the rigid-body
model cannot.  The identified-drives version, with Slotine-Li, is benchmarks/bench_drives_control.py's.
"""
import numpy as np

from oracle import erd_path
import robot_dynamics as rd
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.controllers import ComputedTorque, InertiaMetric, Simulator, SlotineLi, SumOfSines
from robot_dynamics.drives import COULOMB_VELOCITY


def test_viscous_damping_removes_the_power_the_balance_says():
    """Without gravity or torque, dT/dt = -v^T tau_f(v) = -sum d_j v_j^2 (T the kinetic energy, Robot.kinetic_energy,
    which holds the armature's 1/2 armature v^2): the simulated energy's central difference matches it."""
    robot = rd.load_urdf(erd_path("ur5_robot.urdf")).with_gravity([0.0, 0.0, 0.0])
    robot = robot.with_drives(damping=[0.8, 0.6, 0.5, 0.2, 0.1, 0.05])
    dt = 1e-3
    rollout = Simulator(robot, dt).run(robot.neutral(), np.array([1.0, -0.8, 0.6, 1.5, -1.2, 2.0]),
                                       np.zeros(robot.nv), 0.2)
    energy = robot.kinetic_energy(rollout.q, rollout.v)
    rate = (energy[2:] - energy[:-2]) / (2 * dt)
    power = -np.sum(rollout.v * robot.friction_torque(rollout.v), axis=-1)[1:-1]
    assert np.all(power < 0)
    assert np.max(np.abs(rate - power)) < 2e-3 * np.max(np.abs(power))


def test_coulomb_friction_holds_a_loaded_joint_and_it_creeps_as_the_smoothed_law_says():
    """A double pendulum at rest under gravity, each joint's Coulomb friction above its gravity torque: it does not
    ring or fall; once settled, tau_f(v) = -g(q) (a ~ 0), i.e. each joint creeps at v_j = v_c atanh(-g_j / F_j),
    v_c = drives.COULOMB_VELOCITY -- the smoothed Coulomb law, not a chattering sign()."""
    robot = rd.load_urdf(bundled_urdf("planar_2link")).with_gravity([0.0, -9.81, 0.0])
    q0 = np.array([0.3, 0.4])
    g0 = robot.gravity_vector(q0)
    friction = 2.0 * np.abs(g0)
    robot = robot.with_drives(friction=friction, armature=[0.05, 0.02])
    rollout = Simulator(robot, 1e-3).run(q0, np.zeros(2), np.zeros(2), 1.0)
    assert np.all(np.isfinite(rollout.v)) and np.max(np.abs(rollout.v)) < COULOMB_VELOCITY
    q, v = rollout.q[-1], rollout.v[-1]
    creep = COULOMB_VELOCITY * np.arctanh(-robot.gravity_vector(q) / friction)
    assert np.allclose(v, creep, rtol=1e-3, atol=1e-9)
    assert np.max(np.abs(q - q0)) < 1e-2


def test_computed_torque_with_the_drives_model_tracks_what_the_rigid_model_cannot():
    """The 'real' arm: armature ~ a geared motor's, viscous and Coulomb friction.  Computed torque with its drives
    tracks at least 5x better over 2 s than with the rigid-body model alone (same gains)."""
    rigid, real, reference = geared_arm()
    errors = {}
    for name, model in (("rigid", rigid), ("drives", real)):
        controller = ComputedTorque(model, K_p=100.0, K_d=20.0)
        start = reference(0.0)

        def torque(t, q, v):
            r = reference(t)
            return controller.torque(q, v, r.q, r.v, r.a)

        rollout = Simulator(real, 1e-3).run(start.q, start.v, torque, 2.0, control_period=1e-3)
        errors[name] = np.sqrt(np.mean(np.sum((reference(rollout.t).q - rollout.q) ** 2, axis=1)))
    assert errors["drives"] * 5 < errors["rigid"], errors


def test_slotine_li_learns_the_drives_it_does_not_know():
    """Slotine-Li with the rigid model's exact inertias: without drive columns the friction and rotor inertia it
    cannot represent keep the error up; adapting theta_d = [armature; F_v; F_c] from zero, the error over the last
    2 s of 4 s is at least 5x smaller, and the estimates stay finite (the projection keeps them >= 0; 4 s excite too
    little to ask them to converge: benchmarks/bench_drives_control.py prints them)."""
    rigid, real, reference = geared_arm()
    errors, estimates = {}, None
    for name, drives in (("rigid", {}), ("adapted", dict(drives="coulomb", theta_hat=np.zeros(21),
                                                         Gamma_drives=30.0))):
        controller = SlotineLi(rigid, 5.0, 20.0, InertiaMetric(rigid.parameters).gain(1e-9), **drives)
        start = reference(0.0)

        def torque(t, q, v):
            r = reference(t)
            return controller.update(q, v, r.q, r.v, r.a, 1e-3 if t > 0 else 0.0)

        rollout = Simulator(real, 1e-3).run(start.q, start.v, torque, 4.0, control_period=1e-3)
        late = rollout.t >= 2.0
        errors[name] = np.sqrt(np.mean(np.sum((reference(rollout.t[late]).q - rollout.q[late]) ** 2, axis=1)))
        estimates = controller.theta_hat
    assert errors["adapted"] * 5 < errors["rigid"], errors
    assert np.all(np.isfinite(estimates)) and estimates.shape == (21,)


def geared_arm():
    """arm7 as its URDF says (rigid), the same with drives like a geared arm's (real), and a reference motion."""
    rigid = rd.load_urdf(bundled_urdf("arm7"))
    real = rigid.with_drives(armature=[0.6, 0.6, 0.4, 0.4, 0.1, 0.1, 0.1], damping=[2.0, 2.0, 1.5, 1.5, 0.5, 0.5, 0.5],
                             friction=[3.0, 3.0, 2.0, 2.0, 0.8, 0.8, 0.8])
    rng = np.random.default_rng(0)
    reference = SumOfSines(rigid.neutral(), rng.uniform(0.1, 0.3, (7, 3)), 2 * np.pi * np.array([0.3, 0.7, 1.1]),
                           rng.uniform(0, 2 * np.pi, (7, 3)))
    return rigid, real, reference
