"""Runtime ratios against Pinocchio of the quantities compile_phases.py times (issue 26): single calls, alternating
rounds (bench_dynamics.compare), on a small and a large robot; time_derivatives against our own dynamics() bundle.

    python benchmarks/runtime_quick.py [--rounds 15]
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    for name, floating in (("panda.urdf", False), ("talos_full_v2.urdf", True)):
        path = erd_path(name)
        robot = rd.load_urdf(path, floating_base=floating)
        twin = PinocchioTwin(robot, path, floating_base=floating)
        model, data = twin.model, twin.data
        rng = np.random.default_rng(0)
        q, v = robot.random_state(rng)
        v_r, a_r, a = rng.normal(size=(3, robot.nv))
        tau = robot.inverse_dynamics(q, v, a)
        qp, vp, vrp, arp, ap, taup = twin.q(q), twin.v(v), twin.v(v_r), twin.v(a_r), twin.v(a), twin.v(tau)

        def pin_five():
            pin.crba(model, data, qp)
            pin.computeCoriolisMatrix(model, data, qp, vp)
            pin.computeGeneralizedGravity(model, data, qp)
            pin.jacobianCenterOfMass(model, data, qp)
            pin.computeJointTorqueRegressor(model, data, qp, vrp, arp)
        rows = [("mass_matrix", lambda: robot.mass_matrix(q), lambda: pin.crba(model, data, qp)),
                ("inverse_dynamics", lambda: robot.inverse_dynamics(q, v, a), lambda: pin.rnea(model, data, qp, vp, ap)),
                ("forward_dynamics", lambda: robot.forward_dynamics(q, v, tau),
                 lambda: pin.aba(model, data, qp, vp, taup)),
                ("forward_dynamics_derivatives", lambda: robot.forward_dynamics_derivatives(q, v, tau),
                 lambda: pin.computeABADerivatives(model, data, qp, vp, taup)),
                ("dynamics (bundle)", lambda: robot.dynamics(q, v, v_r, a_r), pin_five),
                ("time_derivatives / our bundle", lambda: robot.time_derivatives(q, v, a),
                 lambda: robot.dynamics(q, v, v_r, a_r))]
        n = max(20, int(2000 / robot.nv))
        for label, ours, theirs in rows:
            t_ours, t_pin, ratio = compare(ours, theirs, args.rounds, n)
            print(f"{name:<20}{label:<32}{t_ours * 1e6:10.2f} us{ratio:8.3f}", flush=True)


if __name__ == "__main__":
    main()
