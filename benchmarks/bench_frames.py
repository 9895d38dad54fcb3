"""Time the frame methods against Pinocchio in one process, on identical states, alternating rounds of both.

    python benchmarks/bench_frames.py [--rounds 15] [--robots ur5_robot.urdf ...]

Per robot and frame (a tool flange, a hand, a foot or a sole: a leaf, the longest support): frame_jacobian in each
reference against pin.computeFrameJacobian (the issue's goal: <= 1.5x on ur5 and panda, <= 1.0x on solo12, g1 and
talos), also into out=; frame_placement against framesForwardKinematics... no: against
updateFramePlacement after forwardKinematics (Pinocchio's cheapest route to one frame's pose from q);
frame_acceleration_bias against forwardKinematics(q, v, 0) + getFrameClassicalAcceleration; and inverse_dynamics
with two external wrenches against rnea with fext (and without any, the row's fast path behind the f_ext wrapper).
Columns: our median time, Pinocchio's, and the median of the per-round ratios ours/Pinocchio (below 1: faster).
"""
import argparse
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import robot_dynamics as rd  # noqa: E402
from bench_dynamics import compare  # noqa: E402
from oracle import PinocchioTwin, erd_path  # noqa: E402

ROBOTS = [("ur5_robot.urdf", False, "tool0"), ("panda.urdf", False, "panda_hand_tcp"), ("solo12.urdf", True, "FR_FOOT"),
          ("g1_29dof_rev_1_0.urdf", True, "left_ankle_roll_link"), ("talos_full_v2.urdf", True, "left_sole_link")]
REFERENCES = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


def bench_robot(name, floating_base, frame, rounds):
    path = erd_path(name)
    robot = rd.load_urdf(path, floating_base=floating_base)
    twin = PinocchioTwin(robot, path, floating_base=floating_base)
    model, data = twin.model, twin.data
    fid = model.getFrameId(frame, pin.BODY)
    rng = np.random.default_rng(0)
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    qp, vp, ap, zero = twin.q(q), twin.v(v), twin.v(a), np.zeros(robot.nv)
    n = max(200, int(20000 / robot.nv))
    rows = []
    for reference, pin_reference in REFERENCES.items():
        rows.append((f"frame_jacobian {reference}", lambda r=reference: robot.frame_jacobian(q, frame, r),
                     lambda r=pin_reference: pin.computeFrameJacobian(model, data, qp, fid, r)))
    J = robot.frame_jacobian(q, frame)
    rows.append(("frame_jacobian local, out=", lambda: robot.frame_jacobian(q, frame, out=J),
                 lambda: pin.computeFrameJacobian(model, data, qp, fid, pin.LOCAL)))

    def pin_placement():
        pin.forwardKinematics(model, data, qp)
        return pin.updateFramePlacement(model, data, fid)

    def pin_bias():
        pin.forwardKinematics(model, data, qp, vp, zero)
        return pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED)

    rows.append(("frame_placement", lambda: robot.frame_placement(q, frame), pin_placement))
    rows.append(("frame_acceleration_bias lwa", lambda: robot.frame_acceleration_bias(q, v, frame,
                                                                                       "local_world_aligned"),
                 pin_bias))
    leaves = robot.frame_names[-2:]
    f_ext = {f: rng.normal(size=6) for f in leaves}
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    for f, w in f_ext.items():
        pf = model.frames[model.getFrameId(f, pin.BODY)]
        fext[pf.parentJoint] += pf.placement.act(pin.Force(w))
    rows.append(("inverse_dynamics (no f_ext)", lambda: robot.inverse_dynamics(q, v, a),
                 lambda: pin.rnea(model, data, qp, vp, ap)))
    rows.append(("inverse_dynamics, 2 wrenches", lambda: robot.inverse_dynamics(q, v, a, f_ext=f_ext),
                 lambda: pin.rnea(model, data, qp, vp, ap, fext)))
    return robot, [(label, *compare(ours, theirs, rounds, n)) for label, ours, theirs in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--robots", nargs="*", help="file names from example-robot-data (default: the five)")
    args = parser.parse_args()
    robots = [r for r in ROBOTS if not args.robots or r[0] in args.robots]
    for name, floating_base, frame in robots:
        robot, results = bench_robot(name, floating_base, frame, args.rounds)
        print(f"\n{name[:-5]} ({'floating' if floating_base else 'fixed'}, nv={robot.nv}), frame {frame!r}")
        print(f"  {'':34s} {'ours us':>9s} {'pin us':>9s} {'ours/pin':>9s}")
        for label, t_ours, t_pin, ratio in results:
            print(f"  {label:34s} {t_ours * 1e6:9.2f} {t_pin * 1e6:9.2f} {ratio:9.2f}")


if __name__ == "__main__":
    main()
