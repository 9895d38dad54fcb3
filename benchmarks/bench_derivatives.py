"""Time the closed-form derivatives against what they replace, in one process (median of alternating rounds):

    python benchmarks/bench_derivatives.py [--rounds 9]

- time_derivatives(q, v, a) against the dynamics() bundle of the same robot (goal: at most 2x);
- state_derivatives(q, v) (into out=, its n^3 results reused) against central differences of our own dynamics():
  2 nv calls at integrate(q, +-h e_i) (goal: at least 5x faster; the integrate calls are not timed).
Against Pinocchio, inverse_dynamics_derivatives and forward_dynamics_derivatives are in bench_dynamics.py.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import robot_dynamics as rd  # noqa: E402
from bench_dynamics import ROBOTS, compare  # noqa: E402
from oracle import erd_path  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print(f"{'robot':<26}{'time_derivatives / bundle':>28}{'central differences / state_derivatives':>42}")
    for name, floating_base in ROBOTS:
        robot = rd.load_urdf(erd_path(name), floating_base=floating_base)
        rng = np.random.default_rng(0)
        q, v = robot.random_state(rng)
        a, v_r, a_r = rng.normal(size=(3, robot.nv))
        n = max(10, int(1000 / robot.nv))
        _, _, ratio_t = compare(lambda: robot.time_derivatives(q, v, a), lambda: robot.dynamics(q, v, v_r, a_r),
                                args.rounds, n)
        out = robot.state_derivatives(q, v)
        shifted = [robot.integrate(q, s * 1e-6 * e) for e in np.eye(robot.nv) for s in (1.0, -1.0)]

        def differences():
            for x in shifted:
                robot.dynamics(x, v)

        t_ours, t_fd, ratio_s = compare(lambda: robot.state_derivatives(q, v, out=out), differences, args.rounds,
                                        max(2, n // 20))
        print(f"{name:<26}{ratio_t:28.2f}{1 / ratio_s:34.1f}x ({t_ours * 1e6:.0f} vs {t_fd * 1e6:.0f} us)",
              flush=True)


if __name__ == "__main__":
    main()
