"""Simulator: invariants of torque-free motion (energy, CoM), their convergence order, holds and payloads."""
import pathlib

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.controllers import Simulator, payload_parameters, with_payload

URDF = pathlib.Path(__file__).resolve().parents[2] / "urdf"
CASES = [("arm7.urdf", False), ("torso_two_arm.urdf", False), ("quadruped.urdf", True)]


def free_robot(name, floating_base):
    """The robot with gravity switched off: torque-free motion keeps 1/2 v^T M v."""
    return rd.load_urdf(str(URDF / name), floating_base=floating_base).with_gravity((0.0, 0.0, 0.0))


def final_state(robot, q0, v0, h, duration, method="rk4"):
    rollout = Simulator(robot, h, method).run(q0, v0, np.zeros(robot.nv), duration)
    return rollout.q[-1], rollout.v[-1]


def random_start(robot, seed, speed=2.0):
    rng = np.random.default_rng(seed)
    return robot.random_configuration(rng), speed * rng.normal(size=robot.nv)


def convergence_ratios(errors):
    errors = np.asarray(errors)
    return errors[:-1] / errors[1:]


@pytest.mark.parametrize("name, floating_base", CASES)
def test_rk4_energy_error_shrinks_as_h4(name, floating_base):
    robot = free_robot(name, floating_base)
    q0, v0 = random_start(robot, 1, speed=1.0)
    E0 = robot.kinetic_energy(q0, v0)
    errors = [abs(robot.kinetic_energy(*final_state(robot, q0, v0, h, 0.4)) - E0) for h in (0.02, 0.01, 0.005)]
    ratios = convergence_ratios(errors)
    assert errors[-1] < 1e-8 * E0
    assert np.all((ratios > 12) & (ratios < 21)), (errors, ratios)          # 2^4 = 16


@pytest.mark.parametrize("name, floating_base", CASES)
def test_semi_implicit_euler_energy_error_shrinks_as_h(name, floating_base):
    robot = free_robot(name, floating_base)
    q0, v0 = random_start(robot, 2)
    E0 = robot.kinetic_energy(q0, v0)
    errors = [abs(robot.kinetic_energy(*final_state(robot, q0, v0, h, 0.2, "euler")) - E0)
              for h in (0.004, 0.002, 0.001)]
    ratios = convergence_ratios(errors)
    assert np.all((ratios > 1.6) & (ratios < 2.5)), (errors, ratios)        # 2^1 = 2


def test_floating_base_com_moves_uniformly_to_fourth_order():
    """Without gravity or torque the CoM moves on a straight line at constant speed. Kinetic energy does not
    depend on the base pose, so this is the check of the base's SE(3) integration (its commutator terms)."""
    robot = free_robot("quadruped.urdf", True)
    q0, v0 = random_start(robot, 3, speed=3.0)
    duration = 0.5
    c_exact = robot.com_position(q0) + duration * robot.com_jacobian(q0) @ v0
    errors = [np.linalg.norm(robot.com_position(final_state(robot, q0, v0, h, duration)[0]) - c_exact)
              for h in (0.02, 0.01, 0.005)]
    ratios = convergence_ratios(errors)
    assert np.all((ratios > 12) & (ratios < 21)), (errors, ratios)
    q1, v1 = final_state(robot, q0, v0, 0.005, duration)
    np.testing.assert_allclose(robot.com_jacobian(q0) @ v0, robot.com_jacobian(q1) @ v1, atol=1e-7)


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_quaternion_stays_unit(method):
    robot = free_robot("quadruped.urdf", True)
    q0, v0 = random_start(robot, 4, speed=5.0)
    rollout = Simulator(robot, 0.01, method).run(q0, v0, np.zeros(robot.nv), 1.0)
    np.testing.assert_allclose(np.linalg.norm(rollout.q[:, 3:7], axis=1), 1.0, atol=1e-12)


def test_falling_free_body_follows_the_parabola():
    """Under gravity alone every point of a floating robot accelerates with g: com(t) = com0 + t vcom0 + t^2 g/2."""
    robot = rd.load_urdf(str(URDF / "quadruped.urdf"), floating_base=True)
    q0, v0 = random_start(robot, 5)
    t = 0.3
    q, _ = final_state(robot, q0, v0, 0.005, t)
    expected = robot.com_position(q0) + t * robot.com_jacobian(q0) @ v0 + 0.5 * t**2 * np.array([0, 0, -9.81])
    np.testing.assert_allclose(robot.com_position(q), expected, atol=1e-8)


def test_held_torque_is_sampled_once_per_control_period():
    robot = rd.load_urdf(str(URDF / "arm7.urdf"))
    q0, v0 = random_start(robot, 6, speed=0.5)
    samples = []

    def torque(t, q, v):
        samples.append(t)
        return np.full(robot.nv, np.sin(20 * t)) - 0.01 * v

    rollout = Simulator(robot, 0.002).run(q0, v0, torque, 0.1, control_period=0.01)
    np.testing.assert_allclose(samples, 0.01 * np.arange(10), atol=1e-12)
    held = rollout.tau[:-1].reshape(10, 5, robot.nv)                      # 5 steps per period
    np.testing.assert_array_equal(held, np.repeat(held[:, :1], 5, axis=1))
    # a held array and a constant function give the same motion
    tau = np.linspace(-1.0, 1.0, robot.nv)
    a = Simulator(robot, 0.002).run(q0, v0, tau, 0.05)
    b = Simulator(robot, 0.002).run(q0, v0, lambda t, q, v: tau, 0.05, control_period=0.01)
    np.testing.assert_allclose(a.q, b.q, atol=1e-14)


def test_control_period_must_be_a_multiple_of_the_step():
    robot = rd.load_urdf(str(URDF / "arm7.urdf"))
    with pytest.raises(ValueError):
        Simulator(robot, 0.002).run(robot.neutral(), np.zeros(robot.nv), np.zeros(robot.nv), 0.1,
                                    control_period=0.003)


def test_run_with_state_integrates_the_extra_state():
    """z' = (1, t) integrates to (T, T^2 / 2), exactly for RK4; the extra state leaves the motion unchanged."""
    robot = free_robot("arm7.urdf", False)
    q0, v0 = random_start(robot, 7, speed=0.5)

    def closed_loop(t, q, v, z):
        return np.zeros(robot.nv), np.array([1.0, t])

    rollout = Simulator(robot, 0.01).run_with_state(q0, v0, np.zeros(2), closed_loop, 0.5)
    np.testing.assert_allclose(rollout.z[-1], [0.5, 0.125], atol=1e-12)
    plain = Simulator(robot, 0.01).run(q0, v0, np.zeros(robot.nv), 0.5)
    np.testing.assert_allclose(rollout.q, plain.q, atol=1e-14)


def payload_urdf(text, link, mass, com, inertia):
    """The URDF text with a payload link fixed to `link` at the origin (what with_payload models)."""
    (ixx, ixy, ixz), (_, iyy, iyz), (_, _, izz) = inertia
    payload = (f'<link name="payload"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="0 0 0"/>'
               f'<mass value="{mass}"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" '
               f'izz="{izz}"/></inertial></link>'
               f'<joint name="payload_joint" type="fixed"><parent link="{link}"/><child link="payload"/>'
               f'<origin xyz="0 0 0" rpy="0 0 0"/></joint>')
    return text.replace("</robot>", payload + "</robot>")


def test_with_payload_matches_a_payload_link_in_the_urdf():
    text = (URDF / "arm7.urdf").read_text()
    robot = rd.load_urdf(text)
    body = robot.body_names[-1]
    mass, com, inertia = 2.0, [0.03, -0.02, 0.1], [[0.01, 0.001, 0.0], [0.001, 0.02, 0.002], [0.0, 0.002, 0.015]]
    loaded = with_payload(robot, body, mass, com, inertia)
    reference = rd.load_urdf(payload_urdf(text, body, mass, com, inertia))
    np.testing.assert_allclose(loaded.parameters, reference.parameters, atol=1e-12)
    q = robot.random_configuration(np.random.default_rng(8))
    np.testing.assert_allclose(loaded.mass_matrix(q), reference.mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(loaded.gravity_vector(q), reference.gravity_vector(q), atol=1e-12)


def test_point_payload_parameters():
    """A point mass m at c: first moment m c and inertia about the origin m (|c|^2 1 - c c^T)."""
    pi = payload_parameters(3.0, [1.0, 2.0, 0.0])
    np.testing.assert_allclose(pi, [3.0, 3.0, 6.0, 0.0, 12.0, 3.0, 15.0, -6.0, 0.0, 0.0])
