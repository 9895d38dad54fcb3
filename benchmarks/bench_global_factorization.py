"""Time Ploen's global matrix form against the dynamics() bundle, in one process (median of alternating rounds):

    python benchmarks/bench_global_factorization.py [--rounds 9] [--batch 256]

Per robot, the ratio global_factorization / dynamics (M, C, g, com, J_com) for
- one state, allocating; one state into out= (no allocation on either side);
- M and C multiplied out of the operators (GlobalFactorization.mass_matrix() and .coriolis_matrix(), dense numpy
  products of (6 nb)-square matrices, on top of the factorization) -- what getting M and C by eqs. (36)-(37) costs;
- a batch of states into out= (both through their compiled parallel loops; out= because fresh memory for a batch's
  (6 nb)-square outputs, ~60 MB for 256 states of solo12, costs more in page faults than computing them).
The operators are O(nb^2) dense arrays (Ploen's block-triangular G), the bundle O(n d) sums: the ratios grow with
the number of bodies.  The factorization is for study, checks and controllers that want the operators themselves.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import robot_dynamics as rd  # noqa: E402
from bench_dynamics import compare  # noqa: E402
from oracle import erd_path  # noqa: E402

ROBOTS = [("ur5_robot.urdf", False), ("panda.urdf", False), ("solo12.urdf", True)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    print(f"{'robot':<22}{'nb':>4}{'single':>18}{'out=':>18}{'+ M, C products':>22}{f'batch {args.batch}, out=':>20}")
    for name, floating_base in ROBOTS:
        robot = rd.load_urdf(erd_path(name), floating_base=floating_base)
        rng = np.random.default_rng(0)
        q, v = robot.random_state(rng)
        Q = np.array([robot.random_configuration(rng) for _ in range(args.batch)])
        V = rng.normal(size=(args.batch, robot.nv))
        n = max(20, int(2000 / robot.nv))
        f, d = robot.global_factorization(q, v), robot.dynamics(q, v)
        F, Dy = robot.global_factorization(Q, V), robot.dynamics(Q, V)

        def products():
            g = robot.global_factorization(q, v, out=f)
            g.mass_matrix()
            g.coriolis_matrix()

        rows = [compare(lambda: robot.global_factorization(q, v), lambda: robot.dynamics(q, v), args.rounds, n),
                compare(lambda: robot.global_factorization(q, v, out=f), lambda: robot.dynamics(q, v, out=d),
                        args.rounds, n),
                compare(products, lambda: robot.dynamics(q, v, out=d), args.rounds, n),
                compare(lambda: robot.global_factorization(Q, V, out=F), lambda: robot.dynamics(Q, V, out=Dy),
                        args.rounds, max(2, n // 50))]
        cells = "".join(f"{ratio:7.2f} ({ours * 1e6:5.0f} us)" if i < 3 else f"{ratio:8.2f} ({ours * 1e3:4.1f} ms)"
                        for i, (ours, _, ratio) in enumerate(rows))
        print(f"{name:<22}{robot.nbodies:>4}  {cells}", flush=True)


if __name__ == "__main__":
    main()
