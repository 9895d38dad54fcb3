"""Simulated identification logs: a robot of known parameters driven along a trajectory, with sensor noise.

The robot with parameters pi (the "real" one) is simulated by controllers.simulator.Simulator (RK4, step 1 /
rate) under computed-torque tracking of the trajectory with a zero-order hold at the same rate, as a drive applies
it: tau_i = ID(q_i, v_i, a_d + K_d (v_d - v_i) + K_p (q_d (-) q_i)) + tau_f(v_i) held over [t_i, t_i + 1 / rate).
The log holds the simulator's q_i, v_i, the held tau_i, and a_i = FD(q_i, v_i, tau_i - tau_f(v_i)), the
acceleration at the start of the step: (q_i, v_i, a_i, tau_i) satisfy (M + diag(armature)) a + C v + g + tau_f(v) =
tau to rounding (the robot's drives, drives.py), whatever the integration error, so a noise-free log identifies the
parameters exactly.  The tracking gains matter only for how closely the motion
follows the trajectory (10 Hz bandwidth, critically damped).

A floating base is driven by the wrench in tau's first 6 rows, as a robot held by a moving force-sensing mount.

Noise (optional): joint positions quantized to an encoder resolution (a floating base's pose is kept exact), and
Gaussian torque noise of standard deviation a fraction of each torque's range (max - min over the log).  v and a
stay the simulator's exact values: to treat the log as measured, give identify() only t, q and tau (then v and a
come from signals.derivatives).
"""
from typing import NamedTuple

import numpy as np

from ..controllers.simulator import Simulator
from .logs import Log

BANDWIDTH = 10.0            # Hz, of the computed-torque tracking loop


class Noise(NamedTuple):
    """Sensor noise of a simulated log: resolution (rad or m per encoder count, 2 pi / 2^16 by default: a 16-bit
    encoder), torque (standard deviation as a fraction of each torque's range, 1 % by default)."""

    resolution: float = 2 * np.pi / 2**16
    torque: float = 0.01


def simulate_log(robot, trajectory, duration, rate=1000.0, pi=None, noise=None, rng=None):
    """A log of the robot with parameters pi tracking the trajectory (module docstring).

    robot: the model (its parameters are used when pi is None); trajectory: anything with sample(t) -> (q (N, nq),
    v (N, nv), a (N, nv)), e.g. a FourierTrajectory; duration: s; rate: Hz, of the simulation, the control and the
    log; pi: (10 nb,) the simulated robot's parameters; noise: None, Noise, a dict of Noise's fields, or a number
    (Noise(torque=that number): a 16-bit encoder and torque noise of that fraction of the range); rng: seed
    or Generator of the noise.  ->  logs.Log (t, q, v, a, tau, joint_names), duration * rate + 1 samples.
    """
    if not (np.isfinite(duration) and duration > 0):
        raise ValueError(f"duration must be positive, got {duration!r}")
    if not (np.isfinite(rate) and rate > 0):
        raise ValueError(f"rate must be positive, got {rate!r}")
    if isinstance(noise, (int, float)) and not isinstance(noise, bool):
        noise = Noise(torque=float(noise))
    elif isinstance(noise, dict):
        unknown = set(noise) - {"resolution", "torque"}
        if unknown:
            raise ValueError(f"noise: unknown fields {sorted(unknown)}; known: resolution, torque")
        noise = Noise(**noise)
    if noise is not None and not isinstance(noise, Noise):
        raise ValueError(f"noise must be None, a Noise, a dict or a number, got {noise!r}")
    if noise is not None and not (noise.resolution >= 0 and noise.torque >= 0):
        raise ValueError(f"noise: resolution and torque must be >= 0, got {noise}")
    real = robot if pi is None else robot.with_parameters(pi)
    dt = 1.0 / rate
    w = 2 * np.pi * BANDWIDTH
    K_p, K_d = w**2, 2 * w

    def reference(t):
        q_d, v_d, a_d = trajectory.sample(np.array([t]))
        return q_d[0], v_d[0], a_d[0]

    def computed_torque(t, q, v):
        q_d, v_d, a_d = reference(t)
        return (real.inverse_dynamics(q, v, a_d + K_d * (v_d - v) + K_p * real.difference(q, q_d))
                + real.friction_torque(v))

    q0, v0, _ = reference(0.0)
    rollout = Simulator(real, dt).run(q0, v0, computed_torque, duration, control_period=dt)
    q, v, tau = rollout.q, rollout.v, rollout.tau
    a = real.forward_dynamics(q, v, tau - real.friction_torque(v))
    if noise is not None:
        rng = np.random.default_rng(rng)
        joints = slice(7, None) if robot.floating_base else slice(None)
        q = q.copy()
        if noise.resolution > 0:
            q[:, joints] = np.round(q[:, joints] / noise.resolution) * noise.resolution
        tau = tau + rng.normal(size=tau.shape) * noise.torque * np.ptp(tau, axis=0)
    return Log(t=rollout.t, q=q, v=v, a=a, tau=tau, joint_names=list(robot.joint_names))
