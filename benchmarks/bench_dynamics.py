"""Time robot_dynamics against Pinocchio in one process, on identical states, alternating rounds of both.

    python benchmarks/bench_dynamics.py [--rounds 15] [--batch 1024] [--robots ur5_robot.urdf ...]

Per robot it prints, for the bundle (M, C, g, J_com and the Slotine-Li Y in one call against Pinocchio's five
calls), each single method against its Pinocchio counterpart, and a batch of states (ours: one batched call
using all cores; Pinocchio: a Python loop over its five calls), and the batch of each of mass_matrix, regressor,
inverse_dynamics and forward_dynamics against a Python loop of its Pinocchio counterpart: our median time,
Pinocchio's, and the median of the per-round ratios ours/Pinocchio (below 1 means we are faster).  The "out="
rows write into the results of an earlier call, as a control loop or an identification run would (Pinocchio
writes into its Data too); the allocating batch rows get the memory of the results the previous call returned and
the loop dropped (robot_dynamics/memory.py), so past the warm-up neither pays the page faults of ~100 MB of fresh
memory per call.
(*) The row "solve_mass_matrix vs numpy" times np.linalg.solve(robot.mass_matrix(q), x) in Pinocchio's column, and
"diagonalized vs our FD" our forward_dynamics (its target: at most twice that).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from oracle import PinocchioTwin, erd_path  # noqa: E402

ROBOTS = [("ur5_robot.urdf", False), ("panda.urdf", False), ("solo12.urdf", True),
          ("g1_29dof_rev_1_0.urdf", True), ("talos_full_v2.urdf", True)]


def per_call(fn, n):
    """Seconds per call of fn() over n calls."""
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def compare(ours, theirs, rounds, n):
    """Median times and median per-round ratio of two callables, timed in alternating rounds."""
    ours(), theirs()                                       # warm up (compilation, caches)
    a, b = [], []
    for _ in range(rounds):
        a.append(per_call(ours, n))
        b.append(per_call(theirs, n))
    a, b = np.array(a), np.array(b)
    return np.median(a), np.median(b), np.median(a / b)


def bench_robot(name, floating_base, rounds, batch):
    path = erd_path(name)
    robot = rd.load_urdf(path, floating_base=floating_base)
    twin = PinocchioTwin(robot, path, floating_base=floating_base)
    model, data = twin.model, twin.data
    rng = np.random.default_rng(0)
    q, v = robot.random_state(rng)
    v_r, a_r = rng.normal(size=(2, robot.nv))
    a = rng.normal(size=robot.nv)
    qp, vp, vrp, arp, ap = twin.q(q), twin.v(v), twin.v(v_r), twin.v(a_r), twin.v(a)
    tau = robot.inverse_dynamics(q, v, a)
    taup = twin.v(tau)

    def pin_five():
        pin.crba(model, data, qp)
        pin.computeCoriolisMatrix(model, data, qp, vp)
        pin.computeGeneralizedGravity(model, data, qp)
        pin.jacobianCenterOfMass(model, data, qp)
        pin.computeJointTorqueRegressor(model, data, qp, vrp, arp)

    n = max(20, int(2000 / robot.nv))
    buffers = robot.dynamics(q, v, v_r, a_r)
    rows = [("bundle", lambda: robot.dynamics(q, v, v_r, a_r), pin_five),
            ("bundle, out=", lambda: robot.dynamics(q, v, v_r, a_r, out=buffers), pin_five),
            ("mass_matrix", lambda: robot.mass_matrix(q), lambda: pin.crba(model, data, qp)),
            ("coriolis_matrix", lambda: robot.coriolis_matrix(q, v),
             lambda: pin.computeCoriolisMatrix(model, data, qp, vp)),
            ("gravity_vector", lambda: robot.gravity_vector(q), lambda: pin.computeGeneralizedGravity(model, data, qp)),
            ("com_jacobian", lambda: robot.com_jacobian(q), lambda: pin.jacobianCenterOfMass(model, data, qp)),
            ("regressor", lambda: robot.regressor(q, v, v_r, a_r),
             lambda: pin.computeJointTorqueRegressor(model, data, qp, vrp, arp)),
            ("inverse_dynamics", lambda: robot.inverse_dynamics(q, v, a), lambda: pin.rnea(model, data, qp, vp, ap)),
            ("forward_dynamics", lambda: robot.forward_dynamics(q, v, tau),
             lambda: pin.aba(model, data, qp, vp, taup)),
            ("inverse_dynamics_derivatives", lambda: robot.inverse_dynamics_derivatives(q, v, a),
             lambda: pin.computeRNEADerivatives(model, data, qp, vp, ap)),
            ("forward_dynamics_derivatives", lambda: robot.forward_dynamics_derivatives(q, v, tau),
             lambda: pin.computeABADerivatives(model, data, qp, vp, taup)),
            ("inverse_mass_matrix", lambda: robot.inverse_mass_matrix(q), lambda: pin.computeMinverse(model, data, qp)),
            ("solve_mass_matrix vs numpy (*)", lambda: robot.solve_mass_matrix(q, tau),
             lambda: np.linalg.solve(robot.mass_matrix(q), tau)),
            ("diagonalized vs our FD (*)", lambda: robot.diagonalized(q, v, tau),
             lambda: robot.forward_dynamics(q, v, tau))]
    results = [(label, *compare(ours, theirs, rounds, n)) for label, ours, theirs in rows]

    Q = np.array([robot.random_configuration(rng) for _ in range(batch)])
    V, VR, AR = rng.normal(size=(3, batch, robot.nv))
    QP, VP, VRP, ARP = ([f(x) for x in X] for f, X in ((twin.q, Q), (twin.v, V), (twin.v, VR), (twin.v, AR)))

    def pin_batch():
        for i in range(batch):
            pin.crba(model, data, QP[i])
            pin.computeCoriolisMatrix(model, data, QP[i], VP[i])
            pin.computeGeneralizedGravity(model, data, QP[i])
            pin.jacobianCenterOfMass(model, data, QP[i])
            pin.computeJointTorqueRegressor(model, data, QP[i], VRP[i], ARP[i])

    t_ours, t_pin, ratio = compare(lambda: robot.dynamics(Q, V, VR, AR), pin_batch, max(3, rounds // 3), 1)
    results.append((f"batch of {batch} (per state)", t_ours / batch, t_pin / batch, ratio))
    batch_buffers = robot.dynamics(Q, V, VR, AR)         # results reused: no fresh memory to fault in
    t_ours, t_pin, ratio = compare(lambda: robot.dynamics(Q, V, VR, AR, out=batch_buffers), pin_batch,
                                   max(3, rounds // 3), 1)
    results.append((f"batch of {batch}, out= (per state)", t_ours / batch, t_pin / batch, ratio))

    A = rng.normal(size=(batch, robot.nv))
    TAU = robot.inverse_dynamics(Q, V, A)
    AP, TAUP = [twin.v(x) for x in A], [twin.v(x) for x in TAU]
    singles = [  # each method's batch (one call, all cores) against a Python loop of Pinocchio's counterpart
        ("mass_matrix", lambda out=None: robot.mass_matrix(Q, out=out), lambda i: pin.crba(model, data, QP[i])),
        ("regressor", lambda out=None: robot.regressor(Q, V, VR, AR, out=out),
         lambda i: pin.computeJointTorqueRegressor(model, data, QP[i], VRP[i], ARP[i])),
        ("inverse_dynamics", lambda out=None: robot.inverse_dynamics(Q, V, A, out=out),
         lambda i: pin.rnea(model, data, QP[i], VP[i], AP[i])),
        ("forward_dynamics", lambda out=None: robot.forward_dynamics(Q, V, TAU, out=out),
         lambda i: pin.aba(model, data, QP[i], VP[i], TAUP[i]))]
    for label, ours, theirs in singles:
        def pin_loop(theirs=theirs):
            for i in range(batch):
                theirs(i)
        buffer = ours()
        for suffix, call in (("", ours), (", out=", lambda ours=ours, buffer=buffer: ours(buffer))):
            t_ours, t_pin, ratio = compare(call, pin_loop, rounds, 1)
            results.append((f"{label} batch{suffix}", t_ours / batch, t_pin / batch, ratio))
    return robot, results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--robots", nargs="*", help="file names from example-robot-data (default: the five)")
    args = parser.parse_args()
    robots = [(n, f) for n, f in ROBOTS if not args.robots or n in args.robots]
    print(f"pinocchio {pin.__version__}, robot_dynamics {rd.__version__}; median of {args.rounds} alternating rounds")
    for name, floating_base in robots:
        robot, results = bench_robot(name, floating_base, args.rounds, args.batch)
        print(f"\n{name}{', floating' if floating_base else ''} (nv = {robot.nv})")
        print(f"  {'quantity':<34}{'ours [us]':>12}{'pinocchio [us]':>16}{'ratio':>8}")
        for label, t_ours, t_pin, ratio in results:
            print(f"  {label:<34}{t_ours * 1e6:12.2f}{t_pin * 1e6:16.2f}{ratio:8.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
