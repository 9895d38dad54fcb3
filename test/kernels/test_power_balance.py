"""Power balance along a simulated motion (as RigidBodyDynamics.jl tests it): under a torque tau(t) the energy
E = T + V, T = 1/2 v^T M v and V = -m gravity . com, changes at the rate d/dt E = v^T tau, and
E(t_end) - E(0) = integral of v^T tau dt.  Public API only: forward_dynamics drives the simulation (Simulator, RK4
on the configuration manifold), kinetic_energy and potential_energy give E.  The kinetic energy is also summed
body by body, 1/2 sum_k V_k^T Lam_k V_k with V_k = J_k v from the reference Jacobians: an independent route to
1/2 v^T M v.

Tolerances, for the step H = 1e-3 s over 0.3 s:
- the rate: a five-point central difference of E, truncation H^4/30 |E^(5)|, plus RK4's local error O(H^5) per
  step, O(H^4) once divided by H: 1e-6 relative to max |v^T tau| (seen: 5e-8 on arm7, 4e-11 on the quadruped;
  the three-point difference, with its H^2/6 |E'''|, gives 7e-5 on arm7);
- the integral: the trapezoid rule's error ~ t_end H^2/12 max |P''|: 1e-4 relative to the integral of |v^T tau|
  (seen: 1.4e-5 and 1.6e-6).
"""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithms import reference
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.controllers import Simulator
from oracle import relative_error

H, DURATION = 1e-3, 0.3
RATE_TOL, WORK_TOL, EXACT = 1e-6, 1e-4, 1e-12
ROBOTS = [("arm7", False), ("quadruped", True)]


@pytest.fixture(scope="module", params=ROBOTS, ids=[name for name, _ in ROBOTS])
def robot(request):
    name, floating_base = request.param
    return rd.load_urdf(bundled_urdf(name), floating_base=floating_base)


@pytest.fixture(scope="module")
def motion(robot):
    """(E, P) sampled every H along a simulated motion: energy (K,) and power v^T tau (K,).  The torque is a sum
    of slow sines scaled by the diagonal of M, so that every coordinate moves visibly but none spins fast."""
    rng = np.random.default_rng(3)
    q0, v0 = robot.random_configuration(rng), 0.5 * rng.normal(size=robot.nv)
    amplitude = np.diag(robot.mass_matrix(q0)) * rng.normal(size=robot.nv)
    omega, phase = rng.uniform(1.0, 5.0, robot.nv), rng.uniform(0.0, 2.0 * np.pi, robot.nv)

    def torque(t, q, v):
        return amplitude * np.sin(omega * t + phase)

    rollout = Simulator(robot, H).run(q0, v0, torque, DURATION)
    energy = robot.kinetic_energy(rollout.q, rollout.v) + robot.potential_energy(rollout.q)
    power = np.array([v @ torque(t, q, v) for t, q, v in zip(rollout.t, rollout.q, rollout.v)])
    return energy, power


def test_energy_rate_is_power(motion):
    E, P = motion
    rate = (E[:-4] - 8.0 * E[1:-3] + 8.0 * E[3:-1] - E[4:]) / (12.0 * H)
    assert relative_error(rate, P[2:-2]) < RATE_TOL


def test_energy_change_is_work(motion):
    E, P = motion
    assert abs(E[-1] - E[0] - np.trapezoid(P, dx=H)) < WORK_TOL * np.trapezoid(np.abs(P), dx=H)


def test_kinetic_energy_is_sum_over_bodies(robot):
    q, v = robot.random_state(np.random.default_rng(4))
    J, _ = reference.jacobians(robot.model, q, v)
    V = J @ v                                                           # body twists (nb, 6)
    assert relative_error(robot.kinetic_energy(q, v), 0.5 * np.einsum("ki,kij,kj->", V, robot.model.Lam, V)) < EXACT
