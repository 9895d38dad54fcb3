"""Time the contact, centroidal and task-space methods against Pinocchio in one process, on identical states,
alternating rounds of both.

    python benchmarks/bench_contacts.py [--rounds 15] [--robots solo12.urdf ...]

centroidal_momentum_matrix against pin.computeCentroidalMap (the issue's goal: <= 1.0x), centroidal_momentum_bias
against pin.computeCentroidalMapTimeVariation (which forms dAg, the bias's matrix, as well), and
constrained_dynamics against pin.constraintDynamics (goal <= 1.0x): four point contacts on solo12's feet, two
surface contacts on talos's and g1's soles, in the local_world_aligned reference (Pinocchio's contact models
and datas made, and initConstraintDynamics run, once, outside the timing).  task_space_dynamics (numpy on top of
the kernels) is timed alone.  Columns: our median time, Pinocchio's, and the median of the per-round ratios
ours/Pinocchio (below 1: faster).  The machine is shared: the ratios move by ~10% from run to run.
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import robot_dynamics as rd  # noqa: E402
from bench_dynamics import compare, per_call  # noqa: E402
from oracle import PinocchioTwin, erd_path  # noqa: E402

ROBOTS = [("ur5_robot.urdf", False, [], "point", "tool0"), ("panda.urdf", False, [], "point", "panda_hand_tcp"),
          ("solo12.urdf", True, ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"], "point", "FR_FOOT"),
          ("g1_29dof_rev_1_0.urdf", True, ["left_ankle_roll_link", "right_ankle_roll_link"], "surface",
           "left_rubber_hand"),
          ("talos_full_v2.urdf", True, ["left_sole_link", "right_sole_link"], "surface", "gripper_left_base_link")]


def bench_robot(name, floating_base, feet, kind, tool, rounds):
    path = erd_path(name)
    robot = rd.load_urdf(path, floating_base=floating_base)
    twin = PinocchioTwin(robot, path, floating_base=floating_base)
    model, data = twin.model, twin.data
    rng = np.random.default_rng(0)
    q, v = robot.random_state(rng)
    tau = rng.normal(size=robot.nv)
    qp, vp, taup = twin.q(q), twin.v(v), twin.v(tau)
    n = max(200, int(20000 / robot.nv))
    rows = [("centroidal_momentum_matrix", lambda: robot.centroidal_momentum_matrix(q),
             lambda: pin.computeCentroidalMap(model, data, qp)),
            ("centroidal_momentum_bias", lambda: robot.centroidal_momentum_bias(q, v),
             lambda: pin.computeCentroidalMapTimeVariation(model, data, qp, vp))]
    if feet:
        contacts = [rd.Contact(f, kind) for f in feet]
        models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
        for f in feet:
            frame = model.frames[model.getFrameId(f, pin.BODY)]
            models.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D if kind == "point" else
                                                   pin.ContactType.CONTACT_6D, model, frame.parentJoint,
                                                   frame.placement, pin.LOCAL_WORLD_ALIGNED))
        for cm in models:
            datas.append(cm.createData())
        pin.initConstraintDynamics(model, data, models, datas)
        out = robot.constrained_dynamics(q, v, tau, contacts)
        label = f"constrained_dynamics {len(feet)} {kind}s"
        rows.append((label, lambda: robot.constrained_dynamics(q, v, tau, contacts),
                     lambda: pin.constraintDynamics(model, data, qp, vp, taup, models, datas)))
        rows.append((label + ", out=", lambda: robot.constrained_dynamics(q, v, tau, contacts, out=out),
                     lambda: pin.constraintDynamics(model, data, qp, vp, taup, models, datas)))
    results = [(label, *compare(ours, theirs, rounds, n)) for label, ours, theirs in rows]
    task = lambda: robot.task_space_dynamics(q, v, tool)  # noqa: E731
    task()
    results.append(("task_space_dynamics (alone)", float(np.median([per_call(task, n // 4) for _ in range(5)])),
                    np.nan, np.nan))
    return robot, results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--robots", nargs="*", help="file names from example-robot-data (default: the five)")
    args = parser.parse_args()
    for name, floating_base, feet, kind, tool in [r for r in ROBOTS if not args.robots or r[0] in args.robots]:
        robot, results = bench_robot(name, floating_base, feet, kind, tool, args.rounds)
        print(f"\n{name[:-5]} ({'floating' if floating_base else 'fixed'}, nv={robot.nv})")
        print(f"  {'':36s} {'ours us':>9s} {'pin us':>9s} {'ours/pin':>9s}")
        for label, t_ours, t_pin, ratio in results:
            print(f"  {label:36s} {t_ours * 1e6:9.2f} {t_pin * 1e6:9.2f} {ratio:9.2f}")


if __name__ == "__main__":
    main()
