"""Worst relative error against Pinocchio per quantity, over real robots, fixed and floating base.

    python benchmarks/accuracy.py [--states 20] [--every]

The same comparisons as test/kernels/test_pinocchio.py (which asserts 1e-9), reported as figures; relative error is
max |ours - Pinocchio| / max |Pinocchio| per evaluation.  Then the same robots with a random armature on every
coordinate (0.05-0.5, a floating base's six rows too; Pinocchio's model.armature, test/kernels/test_armature.py):
M, inverse and forward dynamics, their derivatives and M^-1 -- with ``--every``, on every example-robot-data URDF
that Pinocchio loads, fixed and floating (issue 27's criterion; a few states each).  Also counts the
example-robot-data URDFs that load.
"""
import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test" / "kernels"))     # test_pinocchio, ...
import robot_dynamics as rd  # noqa: E402
from oracle import PinocchioTwin, erd_path, erd_urdfs, relative_error  # noqa: E402
from test_pinocchio import ROBOTS  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=20)
    parser.add_argument("--every", action="store_true", help="the armature sweep on every example-robot-data URDF")
    args = parser.parse_args()
    warnings.simplefilter("ignore", rd.URDFWarning)
    worst = {}
    for name in ROBOTS:
        for floating_base in (False, True):
            robot = rd.load_urdf(erd_path(name), floating_base=floating_base)
            twin = PinocchioTwin(robot, erd_path(name), floating_base=floating_base)
            rng = np.random.default_rng(0)
            for _ in range(args.states):
                q, v = robot.random_state(rng)
                a = rng.normal(size=robot.nv)
                d = robot.dynamics(q, v, v, a)
                C_pin = twin.coriolis_matrix(q, v)
                Y_p, Y_h = robot.momentum_regressor(q, v)
                for what, ours, theirs in (
                        ("M", d.M, twin.mass_matrix(q)), ("g", d.g, twin.gravity_vector(q)),
                        ("com", d.com, twin.com(q)), ("J_com", d.J_com, twin.com_jacobian(q)),
                        ("C v + g vs rnea(q, v, 0)", d.C @ v + d.g, twin.rnea(q, v, np.zeros(robot.nv))),
                        ("C + C^T", d.C + d.C.T, C_pin + C_pin.T), ("Y(q, v, v, a)", d.Y, twin.regressor(q, v, a)),
                        ("inverse dynamics", robot.inverse_dynamics(q, v, a), twin.rnea(q, v, a)),
                        ("forward dynamics", robot.forward_dynamics(q, v, a), twin.aba(q, v, a)),
                        ("momentum p = M v", robot.momentum(q, v), twin.mass_matrix(q) @ v),
                        ("Y_p pi = M v", Y_p @ robot.parameters, twin.mass_matrix(q) @ v),
                        ("Y_h pi = C^T v - g", Y_h @ robot.parameters, C_pin.T @ v - twin.gravity_vector(q))):
                    err = relative_error(ours, theirs)
                    if err >= worst.get(what, (-1.0,))[0]:
                        worst[what] = (err, f"{name}{' floating' if floating_base else ''}")
    print(f"worst relative error against Pinocchio over {len(ROBOTS)} robots x fixed/floating x {args.states} "
          "random states:")
    for what, (err, where) in worst.items():
        print(f"  {what:<26}{err:10.2e}   ({where})")
    paths = erd_urdfs() if args.every else [erd_path(name) for name in ROBOTS]
    worst, skipped = armature_errors(paths, 3 if args.every else args.states)
    print(f"the same with a random armature on every coordinate, {len(paths) - len(skipped)} URDFs x fixed/floating"
          + (f" (Pinocchio or numpy refuses {len(skipped)}: {', '.join(skipped)})" if skipped else "") + ":")
    for what, (err, where) in worst.items():
        print(f"  {what:<26}{err:10.2e}   ({where})")
    loaded = 0
    for path in erd_urdfs():
        try:
            rd.load_urdf(path)
            loaded += 1
        except ValueError as exc:
            print(f"  does not load: {path.name}: {exc}")
    print(f"example-robot-data URDFs that load: {loaded} of {len(erd_urdfs())}")


def symmetric(X):
    """A matrix of which Pinocchio fills the upper triangle."""
    return np.triu(X) + np.triu(X, 1).T


FLOOR = 1e-9       # below it, a quantity's scale is round-off (a symmetric rotor's dtau/dv): the error is absolute


def armature_errors(paths, states):
    """({quantity: (worst relative error, robot)}, the URDFs skipped) with a random armature, against Pinocchio's
    model.armature, on the URDFs at paths (a robot without coordinates, or one Pinocchio refuses, is skipped);
    relative, or absolute where Pinocchio's value is all below FLOOR."""
    worst, skipped = {}, []
    for path in paths:
        name = path.name
        for floating_base in (False, True):
            rng = np.random.default_rng(1)
            rigid = rd.load_urdf(path, floating_base=floating_base)
            armature = rng.uniform(0.05, 0.5, rigid.nv)
            robot = rigid.with_drives(armature=armature)
            try:
                twin = PinocchioTwin(robot, path, floating_base=floating_base)
            except Exception:                                   # noqa: BLE001  (Pinocchio's own refusal)
                skipped.append(name)
                break
            if robot.nv == 0:
                skipped.append(name)
                break
            twin.model.armature = twin.v(armature)
            m, d = twin.model, twin.data
            for _ in range(states):
                q, v = robot.random_state(rng)
                a = rng.normal(size=robot.nv)
                qp, vp, ap = twin.q(q), twin.v(v), twin.v(a)
                dtau_dq, dtau_dv = (twin.mat(x) for x in pin.computeRNEADerivatives(m, d, qp, vp, ap)[:2])
                ours_id = robot.inverse_dynamics_derivatives(q, v, a)
                pin.computeABADerivatives(m, d, qp, vp, ap)
                da_dq, da_dv, da_dtau = (twin.mat(x) for x in (d.ddq_dq, d.ddq_dv, symmetric(d.Minv)))
                ours_fd = robot.forward_dynamics_derivatives(q, v, a)
                M_inv = np.array(pin.computeMinverse(m, d, qp))
                for what, ours, theirs in (
                        ("M", robot.mass_matrix(q), twin.mass_matrix(q)),
                        ("inverse dynamics", robot.inverse_dynamics(q, v, a), twin.rnea(q, v, a)),
                        ("forward dynamics", robot.forward_dynamics(q, v, a), twin.aba(q, v, a)),
                        ("dtau/dq", ours_id[0], dtau_dq), ("dtau/dv", ours_id[1], dtau_dv),
                        ("dtau/da = M", ours_id[2], twin.mass_matrix(q)),
                        ("da/dq", ours_fd[0], da_dq), ("da/dv", ours_fd[1], da_dv),
                        ("da/dtau = M^-1", ours_fd[2], da_dtau),
                        ("M^-1", robot.inverse_mass_matrix(q), twin.mat(symmetric(M_inv)))):
                    err = relative_error(ours, theirs) if np.max(np.abs(theirs)) > FLOOR else \
                        np.max(np.abs(ours - theirs))            # iris's rotors: dtau/dv ~ 1e-20, both agree
                    if err >= worst.get(what, (-1.0,))[0]:
                        worst[what] = (err, f"{name}{' floating' if floating_base else ''}")
    return worst, skipped


if __name__ == "__main__":
    main()
