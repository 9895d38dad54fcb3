"""Time the Christoffel symbols and the Christoffel C against what they would otherwise cost, in one process
(median of alternating rounds):

    python benchmarks/bench_christoffel.py [--rounds 9]

Per robot:
- coriolis_matrix(q, v, kind="christoffel") against the default, paper 002's coriolis_matrix(q, v) (both O(n d)),
  and against Pinocchio's computeCoriolisMatrix, which is the same matrix (test_christoffel);
- christoffel_symbols(q) (into out=), which Pinocchio has no counterpart of, against central differences of M:
  2 nv mass_matrix calls at integrate(q, +-h e_k) (not timed) and the textbook combination 1/2 (dM_ij/dq_k +
  dM_ik/dq_j - dM_jk/dq_i) -- without the brackets a floating base needs, so a lower bound of that route's cost;
- the Christoffel C by those differences, contracted with v, against coriolis_matrix(kind="christoffel").
The first two columns are time ratios ours / other (below 1: ours is faster), the last two speed-ups.
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import robot_dynamics as rd  # noqa: E402
from bench_dynamics import ROBOTS, compare  # noqa: E402
from oracle import PinocchioTwin, erd_path  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print(f"{'robot':<24}{'nv':>4}{'C christoffel / default C':>30}{'/ Pinocchio C':>26}"
          f"{'Gamma: differences / ours':>34}{'C: differences / ours':>30}")
    for name, floating_base in ROBOTS:
        path = erd_path(name)
        robot = rd.load_urdf(path, floating_base=floating_base)
        twin = PinocchioTwin(robot, path, floating_base=floating_base)
        q, v = robot.random_state(np.random.default_rng(0))
        qp, vp = twin.q(q), twin.v(v)
        nv, h = robot.nv, 1e-6
        n = max(20, int(2000 / nv))
        C = robot.coriolis_matrix(q, v)

        def christoffel_c():
            return robot.coriolis_matrix(q, v, out=C, kind="christoffel")

        t_chr, t_c, ratio_c = compare(christoffel_c, lambda: robot.coriolis_matrix(q, v, out=C), args.rounds, n)
        _, t_pin, ratio_pin = compare(christoffel_c, lambda: pin.computeCoriolisMatrix(twin.model, twin.data, qp, vp),
                                      args.rounds, n)
        shifted = [(robot.integrate(q, h * e), robot.integrate(q, -h * e)) for e in np.eye(nv)]
        dM = np.empty((nv, nv, nv))

        def differences():
            for k, (plus, minus) in enumerate(shifted):
                dM[:, :, k] = (robot.mass_matrix(plus) - robot.mass_matrix(minus)) / (2 * h)
            return 0.5 * (dM + dM.transpose(0, 2, 1) - dM.transpose(2, 0, 1))

        Gamma = robot.christoffel_symbols(q)
        m = max(2, n // 20)
        t_gamma, t_fd, ratio_g = compare(lambda: robot.christoffel_symbols(q, out=Gamma), differences, args.rounds, m)
        _, _, ratio_fc = compare(christoffel_c, lambda: differences() @ v, args.rounds, m)
        print(f"{name:<24}{nv:4d}{ratio_c:14.2f} ({t_chr * 1e6:5.1f} vs {t_c * 1e6:5.1f} us)"
              f"{ratio_pin:12.2f} ({t_pin * 1e6:5.1f} us)"
              f"{1 / ratio_g:12.1f}x ({t_fd * 1e6:6.0f} vs {t_gamma * 1e6:6.1f} us)"
              f"{1 / ratio_fc:18.0f}x", flush=True)


if __name__ == "__main__":
    main()
