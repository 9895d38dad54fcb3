"""The identification core on simulated logs: recovery errors, noise floor and timings.

    python benchmarks/bench_identification_core.py [--maxiter 10]

For arm7, panda (example-robot-data) and the bundled quadruped on a floating base: rank of the base parameters,
condition number of the excitation trajectory (initial guess -> optimized; the quadruped's is random), the largest
relative error of the base parameters identified by OLS, WLS and the consistent fit from a noise-free simulated
log of parameters 20 % off the URDF's, and each step's time.  Then arm7 with a 16-bit encoder and 1 % torque
noise, identified from positions and torques only: held-out torque RMS over the noise floor, per joint.  The
machine is shared: times move by a factor of two from run to run (NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
steadies them on a busy machine).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from oracle import erd_path  # noqa: E402
from robot_dynamics.bundled import bundled_urdf  # noqa: E402
from robot_dynamics.inertia import parameters_from_pseudo_inertia, pseudo_inertia  # noqa: E402
from robot_dynamics.identification import derivatives, excitation_trajectory, identify, simulate_log  # noqa: E402
from robot_dynamics.identification.signals import interior  # noqa: E402
from robot_dynamics.identification.simulated import Noise  # noqa: E402

ROBOTS = [("arm7", bundled_urdf("arm7"), False, 200.0), ("panda", erd_path("panda.urdf"), False, 200.0),
          ("quadruped", bundled_urdf("quadruped"), True, 100.0)]


def perturbed(pi, rng):
    """Physical parameters 20 % off pi: J_k -> A J_k A^T, A = 1 + 0.2 N(0, 1)."""
    J = pseudo_inertia(np.reshape(pi, (-1, 10)))
    A = np.eye(4) + 0.2 * rng.normal(size=J.shape)
    return parameters_from_pseudo_inertia(A @ J @ np.swapaxes(A, -1, -2)).reshape(-1)


def timed(f, *args, **kwargs):
    start = time.perf_counter()
    result = f(*args, **kwargs)
    return result, time.perf_counter() - start


def noise_free(maxiter):
    print(f"{'robot':10s} {'rank':>5s} {'cond (initial -> optimized)':>28s} {'excite s':>9s} {'simulate s':>10s}  "
          "max relative error of the base parameters (time s): ols, wls, consistent")
    rng = np.random.default_rng(1)
    for name, path, floating, rate in ROBOTS:
        robot = rd.load_urdf(path, floating_base=floating)
        pi = perturbed(robot.parameters, rng)
        trajectory, t_excite = timed(excitation_trajectory, robot, rng=0, maxiter=0 if floating else maxiter)
        log, t_simulate = timed(simulate_log, robot, trajectory, 10.0, rate=rate, pi=pi)
        errors = []
        for method in ("ols", "wls", "consistent"):
            result, t = timed(identify, robot, log.q, log.v, log.a, log.tau, method=method)
            truth = result.base.values(pi)
            errors.append(f"{np.max(np.abs(result.base_values - truth) / np.abs(truth)):.1e} ({t:.2f})")
        print(f"{name:10s} {result.base.rank:5d} {trajectory.initial_condition:13.1f} -> "
              f"{trajectory.condition:10.1f} {t_excite:9.2f} {t_simulate:10.2f}  {', '.join(errors)}")


def noisy(maxiter):
    robot = rd.load_urdf(bundled_urdf("arm7"))
    pi = perturbed(robot.parameters, np.random.default_rng(1))
    train = simulate_log(robot, excitation_trajectory(robot, rng=0, maxiter=maxiter), 10.0, pi=pi, noise=Noise(),
                         rng=2)
    other = excitation_trajectory(robot, rng=1, maxiter=0)
    held, clean = (simulate_log(robot, other, 5.0, pi=pi, noise=n, rng=3) for n in (Noise(), None))
    q, v, a = derivatives(held.t, held.q)
    inside = interior(held.t)
    floor = np.sqrt(np.mean((held.tau - clean.tau)[inside] ** 2, axis=0))
    print("\narm7, 16-bit encoder, 1 % torque noise, 10 s at 1 kHz from q and tau only; held-out 5 s:")
    for method in ("ols", "wls", "consistent"):
        result, t = timed(identify, robot, train.q, tau=train.tau, t=train.t, method=method)
        rms = np.sqrt(np.mean((result.predict(robot, q, v, a) - held.tau)[inside] ** 2, axis=0))
        z = (result.base_values - result.base.values(pi)) / result.base_std
        print(f"  {method:10s} RMS / noise floor per joint {np.array2string(rms / floor, precision=3)}, "
              f"RMS of (error / std) {np.sqrt(np.mean(z**2)):.2f}, cond {result.condition:.1f}, {t:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maxiter", type=int, default=10, help="L-BFGS-B iterations of the excitation (default 10)")
    args = parser.parse_args()
    noise_free(args.maxiter)
    noisy(args.maxiter)
