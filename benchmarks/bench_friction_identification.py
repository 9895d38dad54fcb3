"""Which friction model explains a 7-DoF arm's torques (issue 27, item 3): held-out RMS per friction model on
simulated logs of panda.

    python benchmarks/bench_friction_identification.py [--duration 20] [--rate 200] [--noise 0.01] [--measured]

Panda from example-robot-data with its fingers fixed (the URDF's two prismatic finger joints made fixed: nv = 7).
The simulated drives carry an armature per joint (ARMATURE, of the order of a harmonic drive's reflected rotor
inertia) and one of two true friction laws, neither of them exactly one of the models fitted:

- "gaz+viscous": Gaz et al.'s sigmoid with the values they identified on a real Panda (RA-L 4(4), 2019, the
  friction parameters of their published model) plus a viscous term F_v = 0.05..0.2 N m s/rad;
- "stribeck+asymmetric": a Stribeck law whose Coulomb level differs by direction (F_c+ = 1.2 F_c-), with a
  viscous term: tau_f = F_v v + (F_c(sign v) + (F_s - F_c) e^(-(v / v_s)^2)) sign(v).

Logs: the torques are panda's rigid inverse dynamics at its URDF parameters plus armature a plus tau_f(v), along
an excitation trajectory within the URDF's limits (training, `--duration` s; excitation_trajectory's random start)
and another one (held out, half as long), sampled at `--rate` Hz, with Gaussian torque noise of `--noise` times
each joint's torque range.  v and a are the trajectory's own; with --measured, q is quantized by a 16-bit encoder
and v, a come from signals.derivatives (10 Hz filter) as for a real log.  Each model is identified (WLS, with the
armatures) on the training log and judged on the held-out one (compare_friction_models); the table gives drive
parameters per joint, training and held-out RMS torque (N m), the held-out RMS per joint, and the noise floor (the
RMS of the noise added to the held-out log).
"""
import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from oracle import erd_path  # noqa: E402
from robot_dynamics.identification import compare_friction_models, excitation_trajectory  # noqa: E402
from robot_dynamics.identification.signals import derivatives, interior  # noqa: E402
from robot_dynamics.urdf import joint_limits  # noqa: E402

# Gaz et al. 2019, their identified Panda friction: phi1 (N m), phi2 (s/rad), phi3 (rad/s) per joint
GAZ = {"phi1": np.array([0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489]),
       "phi2": np.array([5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336]),
       "phi3": np.array([0.039533, 0.025882, -0.04607, 0.036194, 0.026226, -0.021047, 0.0035526])}
VISCOUS = np.array([0.2, 0.2, 0.15, 0.15, 0.1, 0.05, 0.05])              # N m s/rad
ARMATURE = np.array([0.3, 0.3, 0.3, 0.3, 0.1, 0.1, 0.1])                # kg m^2, reflected rotor inertia
COULOMB_DOWN = np.array([0.6, 0.8, 0.6, 0.9, 0.5, 0.3, 0.4])            # N m, the level for v < 0
STATIC_RATIO, STRIBECK_VELOCITY = 1.8, np.array([0.08, 0.08, 0.1, 0.1, 0.12, 0.15, 0.15])


def true_friction(name, v):
    """tau_f(v) of the simulated drives (module docstring), the sign exact."""
    if name == "gaz+viscous":
        phi1, phi2, phi3 = GAZ["phi1"], GAZ["phi2"], GAZ["phi3"]
        return VISCOUS * v + phi1 / (1 + np.exp(-phi2 * (v + phi3))) - phi1 / (1 + np.exp(-phi2 * phi3))
    level = np.where(v > 0, 1.2 * COULOMB_DOWN, COULOMB_DOWN)
    return VISCOUS * v + (level + (STATIC_RATIO - 1) * level * np.exp(-(v / STRIBECK_VELOCITY) ** 2)) * np.sign(v)


def panda_arm():
    """Panda with its finger joints fixed: 7 coordinates; and its URDF's joint limits."""
    text = erd_path("panda.urdf").read_text()
    text = re.sub(r'(<joint name="panda_finger_joint\d" type=")prismatic', r"\1fixed", text)
    robot = rd.load_urdf(text)
    return robot, joint_limits(text, robot)


def simulated_log(robot, trajectory, duration, rate, friction, noise, measured, rng):
    """(q, v, a, tau, noise added) of the robot with the drives above along the trajectory (module docstring)."""
    t = np.arange(int(duration * rate) + 1) / rate
    q, v, a = trajectory.sample(t)
    tau = robot.inverse_dynamics(q, v, a) + ARMATURE * a + true_friction(friction, v)
    added = rng.normal(size=tau.shape) * noise * np.ptp(tau, axis=0)
    tau = tau + added
    if measured:
        resolution = 2 * np.pi / 2**16
        q, v, a = derivatives(t, np.round(q / resolution) * resolution)
        keep = interior(t)
        q, v, a, tau, added = q[keep], v[keep], a[keep], tau[keep], added[keep]
    return q, v, a, tau, added


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=20.0, help="training log, s (default 20)")
    parser.add_argument("--rate", type=float, default=200.0, help="samples per second (default 200)")
    parser.add_argument("--noise", type=float, default=0.01, help="torque noise, fraction of each range (0.01)")
    parser.add_argument("--measured", action="store_true", help="v, a from encoder-quantized q (signals.derivatives)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    robot, limits = panda_arm()
    assert robot.nv == 7, robot
    train_trajectory = excitation_trajectory(robot, limits, args.duration, rng=args.seed, maxiter=0)
    held_trajectory = excitation_trajectory(robot, limits, args.duration / 2, rng=args.seed + 1, maxiter=0)
    rng = np.random.default_rng(args.seed)
    print(f"panda (fingers fixed, nv = 7): training {args.duration:g} s, held out {args.duration / 2:g} s, "
          f"{args.rate:g} Hz, torque noise {100 * args.noise:g} % of each range, "
          f"{'v, a from 16-bit q' if args.measured else 'exact v, a'}\n")
    for friction in ("gaz+viscous", "stribeck+asymmetric"):
        train = simulated_log(robot, train_trajectory, args.duration, args.rate, friction, args.noise, args.measured,
                              rng)
        held = simulated_log(robot, held_trajectory, args.duration / 2, args.rate, friction, args.noise,
                             args.measured, rng)
        comparison = compare_friction_models(robot, *train[:4], held_out=held[:4], armature=True)
        floor = np.sqrt(np.mean(held[4] ** 2, axis=0))
        print(f"true friction: {friction}")
        print(comparison.table(), end="")
        print(f"{'noise floor':<16}{'':>7}{'':>12}{comparison.overall(floor):>14.5g}   "
              + "  ".join(f"{x:>{max(9, *(len(n) for n in robot.coordinate_names))}.4g}" for x in floor) + "\n")


if __name__ == "__main__":
    main()
