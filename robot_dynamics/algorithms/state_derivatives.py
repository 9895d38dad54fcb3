"""Derivatives of M, C, g and J_com with respect to the state (paper 002, Prop. 5): dM/dq, dC/dq, dC/dv, dg/dq,
dJ_com/dq, the last index the direction; q-directions are the tangent directions of `integrate`.

The pair terms of matrices.py, for s a coordinate of body j and t one of body a, a = j or an ancestor of j:
    M_ts = S_t . F_s,   C_ts = S_t . G_s,   C_st = -H_s . S_t + F_s . Sdot_t   (a != j)
with F_s = Ic_j S_s, G_s = Ic_j Sdot_s - Bc_j S_s, H_s = Bc_j^T S_s and Bc_j = sum over j's subtree of
adj(V_b)^T Lambda_b (paper 002, eq. (6); matrices.py keeps -H).  Moving along the direction e_k of coordinate k
of body K turns the bodies of K's subtree rigidly about the world twist S_k, and the others stay.  A quantity of
those bodies then changes at its rigid rate (S_k x S for an axis, S_k x* f for a wrench, S_k x* X - X S_k x for
a motion-to-wrench map), except that the part of their twists from above K does not turn: V_b = V_p(K) + (the
rest) has the rate S_k x V_b - U with U = S_k x V_p(K).  Hence, for j in K's subtree,
    F_s' = S_k x* F_s,   G_s' = S_k x* G_s - G^U_s,   H_s' = S_k x* H_s - Ic_j (U x S_s),
    G^U_s = Ic_j (U x S_s) + U x* F_s   (G_s with every twist of the subtree equal to U),
and for j above K only Ic_j and Bc_j change, by the rates of K's composites:
    Icdot_K = S_k x* Ic_K - Ic_K S_k x   (operators.inertia_rate, ten parameters),
    Bcdot_K = S_k x* Bc_K - Bc_K S_k x - adj(U)^T Ic_K.
Three cases per pair and direction follow, by the product rule (rigid rates cancel in a scalar product of two
turning quantities):
    A. a and j in K's subtree:  dM_ts = 0, dC_ts = -S_t . G^U_s = -dC_st;
    B. a above K, j in its subtree:  dM_ts = S_t . F_s',  dC_ts = S_t . G_s',  dC_st = -H_s' . S_t + F_s' . Sdot_t;
    C. j above K:  F_s' = Icdot_K S_s,  G_s' = Icdot_K Sdot_s - Bcdot_K S_s,  H_s' = Bcdot_K^T S_s, as in B;
and for g_s = S_s . Ic_j gamma_0 and J_com (the linear part of F_s over the mass): g_s' = -F_s . (S_k x gamma_0) in
A and B, S_s . Icdot_K gamma_0 in C;  J_com's column s changes by the linear part of F_s'.  C is linear in v, so
dC/dv_k = C(q, e_k), whose twists are S_k in K's subtree and 0 elsewhere: G^e_s = Ic_j (S_k x S_s) + S_k x* F_s and
C^e_st = -C^e_ts in A;  C^e_ts = S_t . G^e_s, C^e_st = -(Ic_j (S_k x S_s)) . S_t in B;  C^e_ts = S_t . S_k x*
(Ic_K S_s), C^e_st = -(Ic_K (S_k x S_s)) . S_t in C.  Only pairs whose lower body is in K's subtree or above K
contribute to direction k: O((|subtree(K)| + depth(K)) d) pairs, O(n d^2) for all directions, each a few dot
products of 6-vectors, against the 2 nv evaluations of M, C, g, J_com that central differences need.
The drives' armature (drives.py) is constant: dM/dq, dC/dq, dC/dv, dg/dq and dJ_com/dq are the same with or without it.
"""
import numpy as np
from numba import njit

from .kinematics import checked_pass
from .matrices import composite_product, composites, total_mass
from .operators import (CONTRACT, add, add_adj_transpose_inertia, adj_times, dot6, force_cross, inertia_rate,
                        matrix_times, matrix_transpose_times, negative, spatial_inertia_times, store6, subtract)

WORK = [
    ("Fs", np.float64, (6, 6)), ("Gs", np.float64, (6, 6)),     # F_s = Ic S_s, G_s of b's own coordinates
    ("Hs", np.float64, (6, 6)),                                 # H_s = Bc^T S_s
    ("Icd", np.float64, (10,)), ("Bcd", np.float64, (6, 6)),    # Icdot_K, Bcdot_K of a direction of K
]


@njit(cache=True, fastmath=CONTRACT, inline="always")
def _cross_wrench(s, f):
    """s x* f of a 6-vector f given as an array or tuple."""
    return force_cross(s, f[0], f[1], f[2], f[3], f[4], f[5])


@njit(cache=True, fastmath=CONTRACT, inline="always")
def _inertia_times(pi, x):
    """Lambda(pi) x of a 6-vector x given as an array or tuple, for the parameters pi of an inertia rate (a
    composite's own product is matrices.composite_product)."""
    return spatial_inertia_times(pi, x[0], x[1], x[2], x[3], x[4], x[5])


@njit(cache=True, fastmath=CONTRACT, inline="always")
def _subtree(bodies, work, K, k, Sk, U, turning, ad_g, mass, dM, dC, dCv, dg, dJ):
    """Column k of every derivative from the pairs whose lower body j is in K's subtree (cases A and B of the
    module docstring); turning: K has a parent, so that U may be nonzero and there are bodies above K."""
    for j in range(K, bodies[K].last + 1):
        bj, wj = bodies[j], work[j]
        for s in range(bj.nvj):
            cs = bj.iv + s
            S, F, G, H = wj.S[:, s], wj.Fs[:, s], wj.Gs[:, s], wj.Hs[:, s]
            Fd = _cross_wrench(Sk, F)                                   # F_s'
            dg[cs, k] = -dot6(F, ad_g)
            if mass > 0.0:
                for r in range(3):
                    dJ[r, cs, k] = Fd[r] / mass
            He = composite_product(wj, adj_times(Sk, S))                # Ic_j (S_k x S_s)
            Ge = add(He, Fd)                                            # G^e_s
            if turning:
                IU = composite_product(wj, adj_times(U, S))             # Ic_j (U x S_s)
                GU = add(IU, _cross_wrench(U, F))                       # G^U_s
                Gd = subtract(_cross_wrench(Sk, G), GU)                 # G_s'
                Hd = subtract(_cross_wrench(Sk, H), IU)                 # H_s'
            else:                                                       # U = 0, and no bodies above K
                GU = Gd = Hd = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            a = j
            while a >= 0:
                ba, wa = bodies[a], work[a]
                if a >= K:                                              # A: a in K's subtree too
                    for t in range(ba.nvj):
                        ct = ba.iv + t
                        St = wa.S[:, t]
                        y = dot6(St, Ge)
                        dCv[ct, cs, k] = y
                        if a != j:
                            dCv[cs, ct, k] = -y
                        if turning:
                            x = dot6(St, GU)
                            dC[ct, cs, k] = -x
                            if a != j:
                                dC[cs, ct, k] = x
                else:                                                   # B: a above K
                    for t in range(ba.nvj):
                        ct = ba.iv + t
                        St, Sdt = wa.S[:, t], wa.Sd[:, t]
                        y = dot6(St, Fd)
                        dM[ct, cs, k] = y
                        dM[cs, ct, k] = y
                        dC[ct, cs, k] = dot6(St, Gd)
                        dC[cs, ct, k] = dot6(Fd, Sdt) - dot6(Hd, St)
                        dCv[ct, cs, k] = dot6(St, Ge)
                        dCv[cs, ct, k] = -dot6(He, St)
                a = ba.parent


@njit(cache=True, fastmath=CONTRACT, inline="always")
def _above(bodies, work, K, k, Sk, U, gamma, mass, dM, dC, dCv, dg, dJ):
    """Column k of every derivative from the pairs whose lower body j is above K (case C)."""
    wK = work[K]
    P, Q = wK.Icd, wK.Bcd
    inertia_rate(wK.pic, Sk, P)                                         # Icdot_K
    for c in range(6):                          # Bcdot_K = S_k x* Bc_K - Bc_K S_k x = S_k x* Bc_K + (S_k x* Bc_K^T)^T
        store6(Q[:, c], _cross_wrench(Sk, wK.Bc[:, c]))
    for r in range(6):
        z = _cross_wrench(Sk, wK.Bc[r, :])
        for c in range(6):
            Q[r, c] += z[c]
    add_adj_transpose_inertia(wK.pic, negative(U), Q)                   # - adj(U)^T Ic_K
    Pg = _inertia_times(P, gamma)
    j = bodies[K].parent
    while j >= 0:
        bj, wj = bodies[j], work[j]
        for s in range(bj.nvj):
            cs = bj.iv + s
            S = wj.S[:, s]
            Fd = _inertia_times(P, S)                                   # F_s'
            Gd = subtract(_inertia_times(P, wj.Sd[:, s]), matrix_times(Q, S))      # G_s'
            Hd = matrix_transpose_times(Q, S)                           # H_s'
            dg[cs, k] = dot6(S, Pg)
            if mass > 0.0:
                for r in range(3):
                    dJ[r, cs, k] = Fd[r] / mass
            Xe = _cross_wrench(Sk, composite_product(wK, S))            # S_k x* (Ic_K S_s)
            Ye = composite_product(wK, adj_times(Sk, S))                # Ic_K (S_k x S_s)
            a = j
            while a >= 0:
                ba, wa = bodies[a], work[a]
                for t in range(ba.nvj):
                    ct = ba.iv + t
                    St = wa.S[:, t]
                    y = dot6(St, Fd)
                    dM[ct, cs, k] = y
                    dC[ct, cs, k] = dot6(St, Gd)
                    dCv[ct, cs, k] = dot6(St, Xe)
                    if a != j:
                        dM[cs, ct, k] = y
                        dC[cs, ct, k] = dot6(Fd, wa.Sd[:, t]) - dot6(Hd, St)
                        dCv[cs, ct, k] = -dot6(Ye, St)
                a = ba.parent
        j = bj.parent


@njit(cache=True, fastmath=CONTRACT)
def state_derivatives(bodies, work, gravity, q, v, dM_dq, dC_dq, dC_dv, dg_dq, dJcom_dq):
    """dM/dq, dC/dq, dC/dv, dg/dq, dJ_com/dq at (q, v) (the module docstring)."""
    status = checked_pass(bodies, work, (q, v), q, v, True)
    if status != 0:
        return status
    composites(bodies, work, True, True)
    mass = total_mass(bodies, work)
    for b in range(bodies.shape[0]):                            # what does not depend on the direction
        w = work[b]
        for c in range(bodies[b].nvj):
            S = w.S[:, c]
            store6(w.Fs[:, c], composite_product(w, S))                                   # F = Ic S
            store6(w.Gs[:, c], subtract(composite_product(w, w.Sd[:, c]), matrix_times(w.Bc, S)))  # G
            store6(w.Hs[:, c], matrix_transpose_times(w.Bc, S))                             # H = Bc^T S
    dM_dq[:, :, :] = 0.0                                        # pairs of unrelated bodies stay 0
    dC_dq[:, :, :] = 0.0
    dC_dv[:, :, :] = 0.0
    dg_dq[:, :] = 0.0
    dJcom_dq[:, :, :] = 0.0
    gamma = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    for K in range(bodies.shape[0]):
        pK = bodies[K].parent
        for kc in range(bodies[K].nvj):
            k = bodies[K].iv + kc
            Sk = work[K].S[:, kc]
            if pK >= 0:
                U = adj_times(Sk, work[pK].V)
                _subtree(bodies, work, K, k, Sk, U, True, adj_times(Sk, gamma), mass, dM_dq, dC_dq, dC_dv, dg_dq,
                         dJcom_dq)
                _above(bodies, work, K, k, Sk, U, gamma, mass, dM_dq, dC_dq, dC_dv, dg_dq, dJcom_dq)
            else:
                _subtree(bodies, work, K, k, Sk, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), False, adj_times(Sk, gamma), mass,
                         dM_dq, dC_dq, dC_dv, dg_dq, dJcom_dq)
    return 0
