"""The Slotine-Li regressor Y(q, qdot, qdot_r, qddot_r) with Y pi = M qddot_r + C qdot_r + g (paper 002, eq. (16)):

    Y = J^T blkdiag(A(alpha_k) - adj(v_k)^T A(J_k qdot_r)),
    alpha_k = J_k qddot_r + adj(v_k) J_k qdot_r + Jdot_k qdot_r + gamma_k          (remark 4)

In world coordinates, with U_k = Ad_{0,k} J_k qdot_r and P_k = Ad_{0,k} (J_k qddot_r + Jdot_k qdot_r + gamma_k),
eqs. (27)-(28) give the outward recursions U_k = U_p + S qdot_r and P_k = P_p + S qddot_r + Sdot qdot_r from
P_world = gamma_0, and Ad_{0,k} alpha_k = P_k (the adj(v_k) terms cancel).  The block of body k is formed in its
own frame -- A(.) is the momentum matrix of eq. (8), linear in the body's own parameters -- and mapped back to
the world as W_k = Ad_{0,k}^-T (A(alpha_k) - adj(v_k)^T A(u_k)); then Y[i, 10k:10k+10] = S_i^T W_k for every
coordinate i of k and its ancestors.
"""
import numpy as np
from numba import njit

from .kinematics import ad_transpose_apply, scratch, to_body, wrench_to_world


@njit(cache=True)
def momentum_columns(x, A):
    """A <- A(x) of paper 002, eqs. (10)-(12): Lambda x = A(x) pi for pi = [m, h, Ixx, Iyy, Izz, Ixy, Ixz, Iyz]."""
    A[:, :] = 0.0
    v0, v1, v2, w0, w1, w2 = x[0], x[1], x[2], x[3], x[4], x[5]
    A[0, 0], A[1, 0], A[2, 0] = v0, v1, v2                      # eq. (10): [v  w~  0]
    A[0, 2], A[0, 3] = -w2, w1
    A[1, 1], A[1, 3] = w2, -w0
    A[2, 1], A[2, 2] = -w1, w0
    A[3, 2], A[3, 3] = v2, -v1                                   # eq. (11): [0  -v~  w-bar]
    A[4, 1], A[4, 3] = -v2, v0
    A[5, 1], A[5, 2] = v1, -v0
    A[3, 4], A[3, 7], A[3, 8] = w0, w1, w2                       # eq. (12)
    A[4, 5], A[4, 7], A[4, 9] = w1, w0, w2
    A[5, 6], A[5, 8], A[5, 9] = w2, w0, w1


@njit(cache=True)
def reference_recursion(bodies, work, gravity, v_ref, a_ref):
    """U_k and P_k of the module docstring, outward.  Needs outward_pass with rates."""
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        for r in range(6):
            if b.parent < 0:
                w.U[r] = 0.0
                w.P[r] = -gravity[r] if r < 3 else 0.0               # gamma_0
            else:
                w.U[r] = work[b.parent].U[r]
                w.P[r] = work[b.parent].P[r]
        for c in range(b.nvj):
            vr, ar = v_ref[b.iv + c], a_ref[b.iv + c]
            for r in range(6):
                w.U[r] += w.S[r, c] * vr
                w.P[r] += w.S[r, c] * ar + w.Sd[r, c] * vr


@njit(cache=True)
def regressor_blocks(bodies, work, Y):
    """Y[:, 10k:10k+10] for every body k (eq. (16)); Y must be zeroed.  Needs reference_recursion."""
    sc = scratch(work)
    alpha, u, v, col = sc.s6[1], sc.s6[2], sc.s6[3], sc.s6[4]
    Aa, Au = sc.s610[0], sc.s610[1]
    for k in range(bodies.shape[0]):
        w = work[k]
        to_body(w.R0, w.p0, w.P, alpha)
        to_body(w.R0, w.p0, w.U, u)
        to_body(w.R0, w.p0, w.V, v)
        momentum_columns(alpha, Aa)
        momentum_columns(u, Au)
        for i in range(10):                                        # A(alpha) - adj(v)^T A(u), then to the world
            ad_transpose_apply(v, Au[:, i], col)
            for r in range(6):
                col[r] = Aa[r, i] - col[r]
            wrench_to_world(w.R0, w.p0, col, w.W[:, i])
        a = k
        while a >= 0:
            ba, wa = bodies[a], work[a]
            for t in range(ba.nvj):
                ct = ba.iv + t
                for i in range(10):
                    x = 0.0
                    for r in range(6):
                        x += wa.S[r, t] * w.W[r, i]
                    Y[ct, 10 * k + i] += x
            a = ba.parent
