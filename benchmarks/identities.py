"""Worst relative error per identity of the formulations of papers 000, 001 and 003, as figures.

    python benchmarks/identities.py [--trees 20]

The identities test/kernels/test_innovations.py, test_diagonalized.py, test_global_factorization.py and
test_christoffel.py assert, reported as the worst error over seeded random trees (every joint type, every body
massive, fixed and floating base, gravity in a random direction) and the real robots of test_pinocchio.py.
Relative error: max |x - y| / max |y|; for a quantity that must vanish, |x| over the scale of its terms.  Gamma is
compared with central differences of M (step 1e-6), so its figure is the differences' error, not Gamma's.
"""
import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test" / "kernels"))     # test_pinocchio, ...
import robot_dynamics as rd  # noqa: E402
from oracle import erd_path, relative_error  # noqa: E402
from random_urdf import random_urdf  # noqa: E402
from test_christoffel import central_dM, koszul, structure_constants  # noqa: E402
from test_identities import massive_parameters  # noqa: E402
from test_pinocchio import ROBOTS  # noqa: E402


def identities(robot, rng):
    """(name, error) of every identity at one random state of `robot`."""
    nv = robot.nv
    q, v = robot.random_state(rng)
    a, tau, w = rng.normal(size=(3, nv))
    M, C = robot.mass_matrix(q), robot.coriolis_matrix(q, v)
    f = robot.innovations(q)
    yield "M = L D L^T (003, 4.1b)", relative_error(f.L @ f.D @ f.L.T, M)
    yield "L L^-1 = I (003, 4.1c)", relative_error(f.L @ f.L_inv, np.eye(nv))
    yield "M^-1 (003, 4.1d) vs inv(M)", relative_error(robot.inverse_mass_matrix(q), np.linalg.inv(M))
    g = robot.gravity_vector(q)
    yield "solve_mass_matrix vs FD", relative_error(robot.solve_mass_matrix(q, tau - C @ v - g),
                                                    robot.forward_dynamics(q, v, tau))
    d = robot.diagonalized(q, v, tau)
    energy = 0.5 * v @ M @ v
    yield "1/2 nu^T nu = 1/2 qd^T M qd", abs(0.5 * d.nu @ d.nu - energy) / energy
    yield "nu^T C(theta, nu) = 0", abs(d.nu @ d.coriolis) / (np.linalg.norm(d.nu) * np.linalg.norm(d.coriolis))
    yield "from_diagonalized(nu) = qd", relative_error(robot.from_diagonalized(q, d.nu), v)
    p = robot.global_factorization(q, v)
    Cp, M_dot = p.coriolis_matrix(), robot.time_derivatives(q, v, a).M_dot
    yield "Ploen M (000, 36)", relative_error(p.mass_matrix(), M)
    yield "Ploen C + C^T = Mdot", relative_error(Cp + Cp.T, M_dot)
    yield "Ploen C v = our C v", relative_error(Cp @ v, C @ v)
    Gamma = robot.christoffel_symbols(q)
    Ck = robot.coriolis_matrix(q, v, kind="christoffel")
    yield "Christoffel C = Gamma v", relative_error(Ck, Gamma @ v)
    c = structure_constants(robot)                 # the directions' brackets: zero for 1-DoF joints alone
    if not c.any():                                # Gamma_ijk = Gamma_ikj only where the coordinates commute
        yield "Christoffel C(v) w = C(w) v", relative_error(
            Ck @ w, robot.coriolis_matrix(q, w, kind="christoffel") @ v)
    yield "Christoffel C + C^T = Mdot", relative_error(Ck + Ck.T, M_dot)
    yield "Christoffel C v = our C v", relative_error(Ck @ v, C @ v)
    yield "Gamma vs differences of M", relative_error(Gamma, koszul(central_dM(robot, q), M, c))   # (001, 52-57)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", type=int, default=20)
    args = parser.parse_args()
    warnings.simplefilter("ignore", rd.URDFWarning)
    worst = {}

    def tree(seed, floating_base):              # every body massive (M positive definite), as test_innovations
        robot = rd.load_urdf(random_urdf(seed, n_links=9), floating_base=floating_base,
                             gravity=np.random.default_rng(seed).normal(size=3) * 5)
        return robot.with_parameters(massive_parameters(robot, np.random.default_rng(700 + seed)))

    robots = [(f"random tree {seed}", lambda s=seed, fb=fb: tree(s, fb)) for seed in range(args.trees)
              for fb in (False, True)]
    robots += [(name + (" floating" if fb else ""), lambda n=name, fb=fb: rd.load_urdf(erd_path(n), floating_base=fb))
               for name in ROBOTS for fb in (False, True)]
    for label, make in robots:
        robot = make()
        for what, err in identities(robot, np.random.default_rng(len(worst) + robot.nv)):
            if err >= worst.get(what, (-1.0, ""))[0]:
                worst[what] = (err, label)
    print(f"worst relative error per identity over {args.trees} random trees x fixed/floating and "
          f"{len(ROBOTS)} real robots x fixed/floating:")
    for what, (err, where) in worst.items():
        print(f"  {what:<30}{err:10.2e}   ({where})")


if __name__ == "__main__":
    main()
