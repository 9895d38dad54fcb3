"""Where the default adaptive controller's tick spends its time (issue 37): each part of the composite law timed on
its own, in a compiled loop, on a controller's own buffers after a few hundred ticks of bench_controllers' trajectory.

    python benchmarks/composite_parts.py [--robots arm7 solo12] [--ticks 600] [--repeat 2000]

Per robot (p = 10 nb parameters), µs per call, the median of 7 rounds of --repeat calls each on the same buffers
(controllers/_composite_tick.py, in the order the tick runs them):

- the robot's calls from Python with ``out=`` (the tick makes them from C, without the ~0.1–0.3 µs of a Python call):
  Y(q, v, v_r, a_r), the momentum regressor (Y_p, Y_h), M(q; π) -- twice a tick (π_ref, π_0);
- the filters' step and output (W, τ_f), M(q; π_ref)'s Cholesky factor with the residual and the gradient;
- the information update (Ω and the system's copy of it in one pass: nv p² / 2 multiply-adds);
- the inverse factors of J(π̂_k), the system's log-det blocks (A <- Ω + μ H(π̂): the copy of Ω's lower triangle
  that the tick skips, plus the blocks), then that and the p × p Cholesky (the Cholesky alone: the difference), and
  the two triangular solves;
- the bounded step, the torque;

then the whole ``update`` from Python and ``robot.dynamics(q, v, v_r, a_r, out=d)``, for scale.  Read the
proportions, not the sum: each part runs warm in its loop, the tick runs them one after another on ~0.2 MB (arm7)
to ~0.7 MB (solo12) of buffers.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_controllers import DT, Ticks, robots  # noqa: E402
from robot_dynamics.controllers import RelativeGains  # noqa: E402
from robot_dynamics.controllers import _composite_call as fused, _composite_tick as law  # noqa: E402
from robot_dynamics.controllers._body_steps import bounded_step, inverse_factors_into  # noqa: E402
from robot_dynamics.dense import cholesky_into, cholesky_upper_into, solve_upper_factor  # noqa: E402

ROUNDS = 7


@njit
def filters(n, F, G, Y_p, Y_h, held, v, f_v, a, b, c, lam, armature, W, tau_f):
    for _ in range(n):
        law.filter_step(F, G, Y_p, Y_h, held, v, f_v, a, b, c)
        law.filter_output(G, lam, armature, W, tau_f)


@njit
def gradient(n, M_ref, L, W, pi_hat, tau_f, eps, Y, s, rho, r, g):
    for _ in range(n):
        cholesky_into(M_ref, L, 0.0, 0.0)
        law.residual_into(W, pi_hat, tau_f, eps)
        law.gradient_into(Y, s, W, eps, L, rho, r, g)


@njit
def information(n, L, rho, W, decay, Omega, Omega_0, V, Omega_next, A):
    for _ in range(n):
        law.information_into(L, rho, W, decay, Omega, Omega_0, V, Omega_next, A)


@njit
def factors(n, pi_hat, L_inv):
    for _ in range(n):
        inverse_factors_into(pi_hat, L_inv)


@njit
def system(n, L_inv, Omega, mu, adapted, kind, X, A, factor):
    for _ in range(n):
        law.system_matrix(L_inv, Omega, mu, adapted, kind, X, A, False)     # (A's border: rate_into set it)
        if factor:
            cholesky_upper_into(A)


@njit
def solves(n, A, x0, x):
    for _ in range(n):
        for i in range(x.shape[0]):         # the same right-hand side each time (repeated, x would underflow)
            x[i] = x0[i]
        solve_upper_factor(A, x)


@njit
def step(n, pi_hat, delta, L_inv, S, E, out):
    for _ in range(n):
        bounded_step(pi_hat, delta, L_inv, S, E, out)


@njit
def torque(n, Y, pi, d, M_ref, kd, s, tau):
    for _ in range(n):
        law.torque_into(Y, pi, d, M_ref, kd, s, tau)


def timed(call, repeat):
    """µs per call: the median of ROUNDS rounds of call(repeat), after a warm-up."""
    call(10)
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        call(repeat)
        rounds.append((time.perf_counter() - start) / repeat * 1e6)
    return float(np.median(rounds))


def parts(robot, ticks, repeat):
    """[(part, µs)] for one robot (module docstring)."""
    nv, nb = robot.nv, robot.nbodies
    p, count = 10 * nb, len(ticks.q)
    controller = RelativeGains().slotine_li(robot, robot.parameters, ticks.q0)
    tau = np.empty(nv)
    for k in range(count):
        controller.update(ticks.q[k], ticks.v[k], ticks.q_d[k], ticks.v_d[k], ticks.a_d[k], 0.0 if k == 0 else DT,
                          out=tau)
    m = len(controller._adapted)
    (control, _, _, Omega_0, mu, S, _, drive, _, v, vectors, _, kd_t, M_ref, _, _, f_v, d, Y, Y_p, Y_h, _,
     work) = fused.cs_views.py_func(controller._data, nv, robot.nq, nb, m)
    current = int(control[fused.CURRENT])
    F, Omega, pi_hat, _, held = law.state_views.py_func(controller._states[current], nv, p)
    G, Omega_next, pi_next, _, _ = law.state_views.py_func(controller._states[1 - current], nv, p)
    W, V, L, A, g, delta, x, tau_f, eps, r, L_inv, X, E = law.work_views.py_func(work, nv, p, m)
    lam, rho, beta = control[fused.LAM], control[fused.RHO], control[fused.BETA]
    a, b = np.exp(-lam * DT), -np.expm1(-lam * DT)
    c, decay = 1.0 - b / (lam * DT), np.exp(-beta * DT)
    adapted, kind, s = controller._adapted, controller._law, vectors[4]
    law.rate_into(g, L_inv, Omega_next, mu, adapted, kind, A, X, x, delta)      # a step of this tick's size
    delta *= DT
    k = count - 1
    qk, vk, vr, ar = ticks.q[k], ticks.v[k], ticks.v_r[k], ticks.a_r[k]
    Y_out, (P, H), M = robot.regressor(qk, vk, vr, ar), robot.momentum_regressor(qk, vk), robot.mass_matrix(qk)
    dyn = robot.dynamics(qk, vk, vr, ar)
    out = [("robot.regressor (Y)", timed(lambda n: [robot.regressor(qk, vk, vr, ar, out=Y_out) for _ in range(n)],
                                         repeat)),
           ("robot.momentum_regressor (Y_p, Y_h)",
            timed(lambda n: [robot.momentum_regressor(qk, vk, out=(P, H)) for _ in range(n)], repeat)),
           ("robot.mass_matrix (x 2 a tick)", timed(lambda n: [robot.mass_matrix(qk, out=M) for _ in range(n)],
                                                    repeat)),
           ("filters: step and output",
            timed(lambda n: filters(n, F, G, Y_p, Y_h, held, v, f_v, a, b, c, lam, drive[0], W, tau_f), repeat)),
           ("M(q; pi_ref)'s Cholesky, residual, gradient",
            timed(lambda n: gradient(n, M_ref, L, W, pi_hat, tau_f, eps, Y, s, rho, r, g), repeat)),
           (f"information update (nv p^2 / 2 = {nv * p * p // 2} FMAs)",
            timed(lambda n: information(n, L, DT * rho, W, decay, Omega, Omega_0, V, Omega_next, A), repeat)),
           ("inverse factors of J(pi_hat)", timed(lambda n: factors(n, pi_hat, L_inv), repeat))]
    blocks = timed(lambda n: system(n, L_inv, Omega_next, mu, adapted, kind, X, A, False), repeat)
    factored = timed(lambda n: system(n, L_inv, Omega_next, mu, adapted, kind, X, A, True), repeat)
    out += [("system: copy of Omega + log-det blocks", blocks),
            (f"p x p Cholesky (p^3 / 6 = {p ** 3 // 6} FMAs)", factored - blocks),
            ("two triangular solves", timed(lambda n: solves(n, A, x.copy(), x), repeat)),
            ("bounded step", timed(lambda n: step(n, pi_hat, delta, L_inv, S, E, pi_next), repeat)),
            ("torque", timed(lambda n: torque(n, Y, pi_next, d, M_ref, kd_t, s, tau), repeat))]
    z = ticks
    out += [("CompositeSlotineLi.update (whole, from Python)",
             timed(lambda n: [controller.update(z.q[k], z.v[k], z.q_d[k], z.v_d[k], z.a_d[k], DT, out=tau)
                              for _ in range(n)], repeat)),
            ("robot.dynamics (scale)", timed(lambda n: [robot.dynamics(qk, vk, vr, ar, out=dyn) for _ in range(n)],
                                             repeat))]
    return p, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robots", nargs="+", default=["arm7", "solo12"], choices=["arm7", "panda", "solo12"])
    parser.add_argument("--ticks", type=int, default=600, help="ticks of the trajectory before timing")
    parser.add_argument("--repeat", type=int, default=2000, help="calls per round")
    args = parser.parse_args()
    for name, robot, frame in robots(args.robots):
        ticks = Ticks(robot, frame, args.ticks, np.random.default_rng(0))
        p, rows = parts(robot, ticks, args.repeat)
        print(f"\n{name} (nv = {robot.nv}, p = {p}): µs per call, median of {ROUNDS} rounds of {args.repeat}")
        for part, us in rows:
            print(f"  {part:<52}{us:8.2f}")


if __name__ == "__main__":
    main()
