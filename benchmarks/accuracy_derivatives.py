"""Worst relative error of every derivative (paper 002, Props. 2, 5, 6; ID and FD derivatives), per route, as figures.

    python benchmarks/accuracy_derivatives.py [--states 3] [--trees 12]

The routes of test/kernels/test_dynamics_derivatives.py, test_state_derivatives.py and test_time_derivatives.py (which
assert them), reported as the worst error: Pinocchio on the real robots of test_pinocchio.py, fixed and floating
base; identities between separately computed results; central differences (h = 1e-5) of our own M, C, g, J_com,
Y, inverse and forward dynamics along integrate, on seeded random trees with every joint type (test_identities'
make), fixed and floating.  Relative error: max |x - y| / max |y|.
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
from oracle import relative_error  # noqa: E402
from test_dynamics_derivatives import euler_step_differences  # noqa: E402
from test_identities import make, massive_parameters  # noqa: E402
from test_pinocchio import CASES, pair  # noqa: E402
from test_state_derivatives import H, central  # noqa: E402
from test_time_derivatives import FREE_BODY  # noqa: E402


def against_pinocchio(robot, twin, rng):
    q, v = robot.random_state(rng)
    a = rng.normal(size=robot.nv)
    tau = robot.inverse_dynamics(q, v, a)
    dq, dv, _ = pin.computeRNEADerivatives(twin.model, twin.data, twin.q(q), twin.v(v), twin.v(a))
    ours = robot.inverse_dynamics_derivatives(q, v, a)
    yield "dtau/dq vs computeRNEADerivatives", relative_error(ours[0], twin.mat(dq))
    yield "dtau/dv vs computeRNEADerivatives", relative_error(ours[1], twin.mat(dv))
    M = twin.mass_matrix(q)
    pin.computeABADerivatives(twin.model, twin.data, twin.q(q), twin.v(v), twin.v(tau))
    ours = robot.forward_dynamics_derivatives(q, v, tau)
    yield "da/dq vs computeABADerivatives", relative_error(ours[0], twin.mat(twin.data.ddq_dq))
    yield "da/dv vs computeABADerivatives", relative_error(ours[1], twin.mat(twin.data.ddq_dv))
    yield "M_inv vs inv(Pinocchio's M)", relative_error(ours[2], np.linalg.inv(M))
    dg = twin.mat(pin.computeGeneralizedGravityDerivatives(twin.model, twin.data, twin.q(q)))
    yield "dg/dq vs computeGeneralizedGravityDerivatives", relative_error(robot.state_derivatives(q, v).dg_dq, dg)
    yield "g_dot vs Pinocchio's dg/dq v", relative_error(robot.time_derivatives(q, v, a).g_dot, dg @ v)


def on_a_tree(robot, rng):
    nv = robot.nv
    q, v = robot.random_state(rng)
    a, vr, ar, jr, tau = rng.normal(size=(5, nv))
    t, s, d = robot.time_derivatives(q, v, a, vr, ar, jr), robot.state_derivatives(q, v), robot.dynamics(q, v)
    yield "M_dot = C + C^T", relative_error(t.M_dot, d.C + d.C.T)
    yield "M_dot = dM/dq v", relative_error(t.M_dot, s.dM_dq @ v)
    yield "C_dot = dC/dq v + dC/dv a", relative_error(t.C_dot, s.dC_dq @ v + s.dC_dv @ a)
    yield "g_dot = dg/dq v", relative_error(t.g_dot, s.dg_dq @ v)
    yield "J_com_dot = dJcom/dq v", relative_error(t.J_com_dot, s.dJcom_dq @ v)
    yield ("Y_dot pi = M_dot a_r + M j_r + C_dot v_r + C a_r + g_dot",
           relative_error(t.Y_dot @ robot.parameters, t.M_dot @ ar + d.M @ jr + t.C_dot @ vr + d.C @ ar + t.g_dot))
    p = robot.parameter_derivatives(q, v)
    yield "M = dM/dpi pi", relative_error(p.dM_dpi @ robot.parameters, d.M)
    yield "C = dC/dpi pi", relative_error(p.dC_dpi @ robot.parameters, d.C)
    yield "g = dg/dpi pi", relative_error(p.dg_dpi @ robot.parameters, d.g)

    def at(h):
        return robot.dynamics(robot.integrate(q, h * v + 0.5 * h * h * a), v + h * a)

    later, earlier = at(H), at(-H)
    for name in ("M", "C", "g", "J_com"):
        rate = (getattr(later, name) - getattr(earlier, name)) / (2 * H)
        yield f"{name}_dot vs finite differences", relative_error(getattr(t, name + "_dot"), rate)

    def Y(h):
        return robot.regressor(robot.integrate(q, h * v + 0.5 * h * h * a), v + h * a, vr + h * ar + 0.5 * h * h * jr,
                               ar + h * jr)

    yield "Y_dot vs finite differences", relative_error(t.Y_dot, (Y(H) - Y(-H)) / (2 * H))
    for field, name in (("dM_dq", "M"), ("dC_dq", "C"), ("dg_dq", "g"), ("dJcom_dq", "J_com")):
        fd = central(lambda x: getattr(robot.dynamics(x, v), name), robot.integrate, q, nv)
        yield f"{field} vs finite differences", relative_error(getattr(s, field), fd)
    dC_dv = central(lambda x: robot.coriolis_matrix(q, x), np.add, v, nv)
    yield "dC_dv vs finite differences", relative_error(s.dC_dv, dC_dv)
    dq, dv, _ = robot.inverse_dynamics_derivatives(q, v, a)
    yield "dtau/dq vs finite differences", relative_error(dq, central(lambda x: robot.inverse_dynamics(x, v, a),
                                                                      robot.integrate, q, nv))
    yield "dtau/dv vs finite differences", relative_error(dv, central(lambda x: robot.inverse_dynamics(q, x, a),
                                                                      np.add, v, nv))
    fq, fv, M_inv = robot.forward_dynamics_derivatives(q, v, tau)
    yield "da/dq vs finite differences", relative_error(fq, central(lambda x: robot.forward_dynamics(x, v, tau),
                                                                    robot.integrate, q, nv))
    yield "da/dv vs finite differences", relative_error(fv, central(lambda x: robot.forward_dynamics(q, x, tau),
                                                                    np.add, v, nv))
    yield "M_inv M = E", relative_error(M_inv @ d.M, np.eye(nv))
    A, B = robot.linearize(q, v, tau, 0.01)
    A_fd, B_fd = euler_step_differences(robot, q, v, tau, 0.01)
    yield "linearize A (dt) vs finite differences", relative_error(A, A_fd)
    yield "linearize B (dt) vs finite differences", relative_error(B, B_fd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=3)
    parser.add_argument("--trees", type=int, default=12)
    args = parser.parse_args()
    warnings.simplefilter("ignore", rd.URDFWarning)
    worst = {}

    def record(errors, where):
        for what, err in errors:
            if err >= worst.get(what, (-1.0,))[0]:
                worst[what] = (err, where)

    for name, floating_base in CASES:
        robot, twin = pair(name, floating_base)
        rng = np.random.default_rng(len(name))
        for _ in range(args.states):
            record(against_pinocchio(robot, twin, rng), f"{name}{' floating' if floating_base else ''}")
    for seed in range(args.trees // 2):
        for floating_base in (False, True):
            robot = make(seed, floating_base)
            rng = np.random.default_rng(600 + seed)
            robot = robot.with_parameters(massive_parameters(robot, rng))      # M positive definite for FD
            record(on_a_tree(robot, rng), f"tree seed {seed}{' floating' if floating_base else ''}")
    brick = rd.load_urdf(FREE_BODY, floating_base=True)
    rng = np.random.default_rng(3)
    q, v = brick.random_state(rng)
    M_dot, M = brick.time_derivatives(q, v, rng.normal(size=6)).M_dot, brick.mass_matrix(q)
    print(f"worst relative error over {len(CASES)} real-robot cases x {args.states} states (Pinocchio) and "
          f"{args.trees // 2 * 2} random trees (identities, finite differences h = {H}):")
    for what, (err, where) in worst.items():
        print(f"  {what:<58}{err:10.2e}   ({where})")
    print(f"  {'single free rigid body: |M_dot| / |M| (must be 0)':<58}{np.abs(M_dot).max() / np.abs(M).max():10.2e}")


if __name__ == "__main__":
    main()
