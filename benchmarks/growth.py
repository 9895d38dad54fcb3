"""Time against size: serial chains and branched trees of 2...128 bodies, every quantity, with fitted exponents.

    python benchmarks/growth.py [--out growth.png] [--sizes 2 4 8 16 32 64 128]

Fits t = a + b n^k (a: the constant per-call cost, which flattens small sizes) by least squares on the relative
error over all sizes, prints k per quantity and topology, and draws both on a log-log PNG.  Inverse and forward
dynamics are O(n); M, C and Y have n^2 entries (for a chain), so they grow at least quadratically there, and the
state derivatives n^3.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from random_urdf import random_urdf  # noqa: E402

QUANTITIES = {
    "dynamics (all)": lambda r, q, v, a: r.dynamics(q, v, v, a),
    "mass_matrix": lambda r, q, v, a: r.mass_matrix(q),
    "coriolis_matrix": lambda r, q, v, a: r.coriolis_matrix(q, v),
    "gravity_vector": lambda r, q, v, a: r.gravity_vector(q),
    "com_jacobian": lambda r, q, v, a: r.com_jacobian(q),
    "regressor": lambda r, q, v, a: r.regressor(q, v, v, a),
    "inverse_dynamics": lambda r, q, v, a: r.inverse_dynamics(q, v, a),
    "forward_dynamics": lambda r, q, v, a: r.forward_dynamics(q, v, a),
    "time_derivatives": lambda r, q, v, a: r.time_derivatives(q, v, a),
    "inverse_dynamics_derivatives": lambda r, q, v, a: r.inverse_dynamics_derivatives(q, v, a),
    "state_derivatives": lambda r, q, v, a: r.state_derivatives(q, v, out=_reused(r, q, v)),
    "inverse_mass_matrix": lambda r, q, v, a: r.inverse_mass_matrix(q),
    "solve_mass_matrix (one x)": lambda r, q, v, a: r.solve_mass_matrix(q, a),
    "np.linalg.solve(mass_matrix, x)": lambda r, q, v, a: np.linalg.solve(r.mass_matrix(q), a),
}
_buffers = {}


def _reused(robot, q, v):
    """The state derivatives' n^3 results of an earlier call, reused: fresh memory would be timed instead."""
    if id(robot) not in _buffers:
        _buffers[id(robot)] = (robot, robot.state_derivatives(q, v))
    return _buffers[id(robot)][1]


def seconds(fn, budget=0.05):
    """Median seconds per call over 5 rounds of about `budget` seconds each."""
    fn()
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < budget / 5:
        fn()
        n += 1
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - t0) / n)
    return float(np.median(rounds))


def measure(sizes):
    results = {}
    for topology, branching in (("chain", False), ("tree", True)):
        for n in sizes:
            urdf = random_urdf(n, n_links=n + 1, joint_types=("revolute",), branching=branching)
            robot = rd.load_urdf(urdf)
            rng = np.random.default_rng(n)
            q, v = robot.random_state(rng)
            a = rng.normal(size=robot.nv)
            for name, fn in QUANTITIES.items():
                results[(topology, name, n)] = seconds(lambda: fn(robot, q, v, a))
            print(f"{topology} n={n}: " + ", ".join(f"{name} {results[(topology, name, n)] * 1e6:.1f}us"
                                                   for name in QUANTITIES), flush=True)
    return results


def exponent(sizes, times):
    """k of t = a + b n^k, fitted to the relative error over all sizes."""
    from scipy.optimize import curve_fit
    k0 = np.polyfit(np.log(sizes[-3:]), np.log(times[-3:]), 1)[0]
    (a, b, k), _ = curve_fit(lambda n, a, b, k: a + b * n**k, sizes.astype(float), times,
                             p0=(times[0], times[-1] / sizes[-1] ** k0, k0), sigma=times, maxfev=20000)
    return float(k)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64, 128])
    parser.add_argument("--out", default="growth.png")
    args = parser.parse_args()
    sizes = np.array(args.sizes)
    results = measure(args.sizes)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    print(f"\nfitted exponents k of t = a + b n^k (sizes {args.sizes}):")
    print(f"  {'quantity':<30}{'chain':>8}{'tree':>8}")
    exps = {}
    for ax, topology in zip(axes, ("chain", "tree")):
        for name in QUANTITIES:
            t = np.array([results[(topology, name, n)] for n in args.sizes])
            exps[(topology, name)] = k = exponent(sizes, t)
            ax.loglog(sizes, t * 1e6, "o-", label=f"{name} (k = {k:.2f})")
        ax.set_title(f"random {'serial chains' if topology == 'chain' else 'branched trees'} (revolute)")
        ax.set_xlabel("bodies n")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("time per call [us]")
    for name in QUANTITIES:
        print(f"  {name:<30}{exps[('chain', name)]:8.2f}{exps[('tree', name)]:8.2f}")
    fig.suptitle("robot_dynamics: time against number of bodies")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"\nplot written to {args.out}")


if __name__ == "__main__":
    main()
