"""Time the Christoffel symbols and the Christoffel C against what they would otherwise cost, in one process
(median of alternating rounds; no Pinocchio counterpart exists):

    python benchmarks/bench_christoffel.py [--rounds 9]

Per robot:
- coriolis_matrix(q, v, kind="christoffel") against the default, paper 002's coriolis_matrix(q, v) (both O(n d));
- christoffel_symbols(q) (into out=) against central differences of M: 2 nv mass_matrix calls at integrate(q,
  +-h e_k) (not timed) and the textbook combination 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) -- without the
  brackets a floating base needs, so a lower bound of that route's cost;
- the Christoffel C by those differences, contracted with v, against coriolis_matrix(kind="christoffel").
Ratios above 1 mean ours is faster, except the first column (Christoffel C / default C: below ~1.2 is the goal).
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
    print(f"{'robot':<24}{'nv':>4}{'C christoffel / default':>26}{'Gamma: differences / ours':>38}"
          f"{'C: differences / ours':>30}")
    for name, floating_base in ROBOTS:
        robot = rd.load_urdf(erd_path(name), floating_base=floating_base)
        q, v = robot.random_state(np.random.default_rng(0))
        nv, h = robot.nv, 1e-6
        n = max(20, int(2000 / nv))
        C = robot.coriolis_matrix(q, v)
        t_chr, t_c, ratio_c = compare(lambda: robot.coriolis_matrix(q, v, out=C, kind="christoffel"),
                                      lambda: robot.coriolis_matrix(q, v, out=C), args.rounds, n)
        shifted = [(robot.integrate(q, h * e), robot.integrate(q, -h * e)) for e in np.eye(nv)]
        dM = np.empty((nv, nv, nv))

        def differences():
            for k, (plus, minus) in enumerate(shifted):
                dM[:, :, k] = (robot.mass_matrix(plus) - robot.mass_matrix(minus)) / (2 * h)
            return 0.5 * (dM + dM.transpose(0, 2, 1) - dM.transpose(2, 0, 1))

        Gamma = robot.christoffel_symbols(q)
        m = max(2, n // 20)
        t_gamma, t_fd, ratio_g = compare(lambda: robot.christoffel_symbols(q, out=Gamma), differences, args.rounds, m)
        t_c2, t_fd_c, ratio_fc = compare(lambda: robot.coriolis_matrix(q, v, out=C, kind="christoffel"),
                                         lambda: differences() @ v, args.rounds, m)
        print(f"{name:<24}{nv:4d}{ratio_c:12.2f} ({t_chr * 1e6:5.1f} vs {t_c * 1e6:5.1f} us)"
              f"{1 / ratio_g:14.1f}x ({t_fd * 1e6:7.0f} vs {t_gamma * 1e6:6.1f} us)"
              f"{1 / ratio_fc:10.0f}x ({t_fd_c * 1e6:7.0f} vs {t_c2 * 1e6:5.1f} us)", flush=True)


if __name__ == "__main__":
    main()
