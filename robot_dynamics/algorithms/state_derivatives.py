"""Derivatives of M, C, g and J_com with respect to the state (paper 002, Prop. 5): dM/dq, dC/dq, dC/dv, dg/dq,
dJ_com/dq, the last index the direction; q-directions are the tangent directions of `integrate`.

time_derivatives.py differentiates the world-frame pair terms of matrices.py along a motion.  Moving along the
direction e_k of coordinate k (owned by body K) is a motion of its own kind: the bodies of K's subtree turn
rigidly with the world twist S_k, the others stay.  So, with the velocity v of C held:
    Sdot_s = adj(S_k) S_s,  Lambdadot_b = -adj(S_k)^T Lambda_b - Lambda_b adj(S_k)     (b, s in K's subtree)
    Vdot_b = adj(S_k) (V_b - V_p(K))                         (the twist's part above K does not turn)
    (adj(V) S)dot = adj(Vdot_b) S + adj(V_b) Sdot
    Icdot_j = -(adj(S_k)^T Ic_J + Ic_J adj(S_k)),  J = j inside K's subtree, J = K for j above K
    Bcdot_j = sum over b in subtree(j) and in K's subtree of adj(Vdot_b)^T Lambda_b + adj(V_b)^T Lambdadot_b
and every term of time_derivatives' product rule keeps its form with these rates (a = 0).  C is linear in v, so
dC/dv_k = C(q, e_k), whose twists are S_k in K's subtree: Bc_j = adj(S_k)^T Ic_J, Sdot = adj(S_k) S there.
Only bodies in K's subtree or above K contribute to direction k: the pairs of coordinates (t above s) whose lower
body j is one of them, O((|subtree(K)| + d) d) per direction, O(n d^2) for all of them -- against the 2 nv
evaluations of M, C, g, J_com that central differences need.
"""
import numpy as np
from numba import njit

from .kinematics import checked_pass
from .matrices import composite_product, composites, total_mass
from .operators import (add, add_adj_transpose_inertia, adj_times, dot6, force_cross, inertia_rate, matrix_times,
                        matrix_transpose_times, store6, subtract, transform_parameters)

WORK = [                                                        # world frame, per body b, for the direction at hand
    ("Lb", np.float64, (10,)),                                  # Lambda_b of b alone
    ("Sw", np.float64, (6, 6)), ("Sdw", np.float64, (6, 6)),    # Sdot and (adj(V) S)dot of b's own coordinates
    ("Se", np.float64, (6, 6)),                                 # adj(S_k) S of C(q, e_k)
    ("Vw", np.float64, (6,)),                                   # Vdot_b
    ("Bw", np.float64, (6, 6)),                                 # Bcdot, summed over the moving part of the subtree
    ("Fs", np.float64, (6, 6)), ("Gs", np.float64, (6, 6)),     # F, G of b's own coordinates (time_derivatives)
    ("Hs", np.float64, (6, 6)),                                 # Bc^T S = -H of b's own coordinates
    ("Ig", np.float64, (6,)),                                   # Ic gamma_0
    ("Ld", np.float64, (10,)),                                  # the parameters of Lambdadot_b
]


@njit(cache=True, inline="always")
def _icdot(wJ, Sk, ad_x, Ic_x):
    """Icdot x = S_k x* (Ic_J x) - Ic_J adj(S_k) x, given adj(S_k) x and Ic_J x (module docstring)."""
    return subtract(force_cross(Sk, Ic_x[0], Ic_x[1], Ic_x[2], Ic_x[3], Ic_x[4], Ic_x[5]),
                    composite_product(wJ, ad_x))


@njit(cache=True, inline="always")      # inlined: a call would reference-count its arrays per direction
def _moving_rates(bodies, work, K, Sk, rigid):
    """The rates of the bodies of K's subtree for the direction Sk (module docstring), and Bcdot summed there;
    rigid (K a root): only Sdot, all that g and J_com need."""
    pK = bodies[K].parent
    for b in range(K, bodies[K].last + 1):
        w = work[b]
        for c in range(bodies[b].nvj):
            store6(w.Sw[:, c], adj_times(Sk, w.S[:, c]))                               # Sdot
        if rigid:
            continue
        for r in range(6):                                      # Vdot_b = adj(S_k) (V_b - V_p(K))
            w.Vw[r] = w.V[r] - (work[pK].V[r] if pK >= 0 else 0.0)
        store6(w.Vw, adj_times(Sk, w.Vw))
        for c in range(bodies[b].nvj):                          # (adj(V) S)dot
            store6(w.Sdw[:, c], add(adj_times(w.Vw, w.S[:, c]), adj_times(w.V, w.Sw[:, c])))
        w.Bw[:, :] = 0.0
        add_adj_transpose_inertia(w.Lb, w.Vw, w.Bw)             # adj(Vdot)^T Lambda_b
        inertia_rate(w.Lb, Sk, w.Ld)                            # + adj(V)^T Lambdadot_b, from Lambdadot's
        add_adj_transpose_inertia(w.Ld, w.V, w.Bw)              # ten parameters
    for b in range(bodies[K].last, K if not rigid else bodies[K].last, -1):   # Bcdot summed inside K's subtree
        p = bodies[b].parent
        for r in range(6):
            for c in range(6):
                work[p].Bw[r, c] += work[b].Bw[r, c]


@njit(cache=True, inline="always")
def _direction(bodies, work, gravity, mass, K, k, kc, dM, dC, dCv, dg, dJ):
    """Column k of every derivative: the pairs whose lower body j is in K's subtree or above K.  When K is a root,
    its direction moves the whole tree rigidly, twists included: M and C do not change (a fixed arm's M and C do
    not depend on its first joint), and only g, J_com and C(q, e_k) are formed."""
    Sk = work[K].S[:, kc]
    rigid = bodies[K].parent < 0
    _moving_rates(bodies, work, K, Sk, rigid)
    last = bodies[K].last
    ad_g = adj_times(Sk, (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0))
    Icd_g_above = _icdot(work[K], Sk, ad_g, work[K].Ig)         # Icdot gamma_0 of every j above K (J = K)
    j = K
    while True:                                                 # K's subtree (K..last), then K's ancestors
        moving = K <= j <= last
        bj, wj = bodies[j], work[j]
        wJ = work[j if moving else K]                           # whose composite moves: Icdot_j = Icdot_J
        Icd_g = _icdot(wJ, Sk, ad_g, wJ.Ig) if moving else Icd_g_above      # Icdot gamma_0
        for s in range(bj.nvj):
            cs = bj.iv + s
            S, F, G, H = wj.S[:, s], wj.Fs[:, s], wj.Gs[:, s], wj.Hs[:, s]
            Ics = (F[0], F[1], F[2], F[3], F[4], F[5]) if moving else composite_product(wJ, S)     # Ic_J S
            Se = wj.Se[:, s]                                    # adj(S_k) S, kept for a moving j
            ad_S = (Se[0], Se[1], Se[2], Se[3], Se[4], Se[5]) if moving else adj_times(Sk, S)
            He = composite_product(wJ, ad_S)                    # Ic_J adj(S_k) S: Bc^e^T S of C(q, e_k)
            Ge = force_cross(Sk, Ics[0], Ics[1], Ics[2], Ics[3], Ics[4], Ics[5])   # -Bc^e S (+ Ic Sdot^e below)
            Icd_S = subtract(Ge, He)                            # Icdot S
            x = dot6(S, Icd_g)                                  # g_s = S^T Ic gamma_0
            if moving:
                Sw = wj.Sw[:, s]
                Fd = add(Icd_S, composite_product(wj, Sw))     # Fdot = Icdot S + Ic Sdot
                x += dot6(Sw, wj.Ig)
                Ge = add(Ge, He)                                # + Ic Sdot^e, Sdot^e = Se: He itself
            else:
                Fd = Icd_S
            dg[cs, k] += x
            if mass > 0.0:
                for r in range(3):
                    dJ[r, cs, k] += Fd[r] / mass
            if not rigid:
                Sd = wj.Sd[:, s]
                Gd = subtract(_icdot(wJ, Sk, adj_times(Sk, Sd), composite_product(wJ, Sd)),
                              matrix_times(wJ.Bw, S))           # Icdot Sdot - Bcdot S ...
                Hd = matrix_transpose_times(wJ.Bw, S)           # -Hdot = Bcdot^T S ...
                if moving:                                      # ... + Ic (adj(V) S)dot - Bc Sdot, + Bc^T Sdot
                    Gd = add(Gd, subtract(composite_product(wj, wj.Sdw[:, s]), matrix_times(wj.Bc, Sw)))
                    Hd = add(Hd, matrix_transpose_times(wj.Bc, Sw))
            a = j
            while a >= 0:
                ba, wa = bodies[a], work[a]
                a_moving = K <= a <= last
                for t in range(ba.nvj):
                    ct = ba.iv + t
                    St = wa.S[:, t]
                    dCv[ct, cs, k] += dot6(St, Ge)                                    # C(q, e_k)[t, s]
                    if a != j:                                                        # C(q, e_k)[s, t]
                        dCv[cs, ct, k] += -dot6(He, St) + (dot6(F, wa.Se[:, t]) if a_moving else 0.0)
                    if rigid:
                        continue
                    Sdt = wa.Sd[:, t]
                    y = dot6(St, Fd)                                                  # Mdot[t, s]
                    z = dot6(St, Gd)                                                  # Cdot[t, s]
                    m = -dot6(Hd, St) + dot6(Fd, Sdt)                                 # Cdot[s, t]
                    if a_moving:
                        Swt = wa.Sw[:, t]
                        y += dot6(Swt, F)
                        z += dot6(Swt, G)
                        m += -dot6(H, Swt) + dot6(F, wa.Sdw[:, t])
                    dM[ct, cs, k] += y
                    dC[ct, cs, k] += z
                    if a != j:
                        dM[cs, ct, k] += y
                        dC[cs, ct, k] += m
                a = ba.parent
        if j == last or not moving:                             # done with the subtree: go above K
            j = bodies[K].parent if moving else bodies[j].parent
            if j < 0:
                break
        else:
            j += 1


@njit(cache=True)
def state_derivatives(bodies, work, gravity, q, v, dM_dq, dC_dq, dC_dv, dg_dq, dJcom_dq):
    """dM/dq, dC/dq, dC/dv, dg/dq, dJ_com/dq at (q, v) (the module docstring)."""
    status = checked_pass(bodies, work, (q, v), q, v, True)
    if status != 0:
        return status
    for b in range(bodies.shape[0]):
        transform_parameters(bodies[b].pi, work[b].R0, work[b].p0, work[b].Lb)
    composites(bodies, work, True, True)
    mass = total_mass(bodies, work)
    for b in range(bodies.shape[0]):                            # what does not depend on the direction
        w = work[b]
        store6(w.Ig, composite_product(w, (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)))
        for c in range(bodies[b].nvj):
            S = w.S[:, c]
            store6(w.Fs[:, c], composite_product(w, S))                                   # F = Ic S
            store6(w.Gs[:, c], subtract(composite_product(w, w.Sd[:, c]), matrix_times(w.Bc, S)))  # G
            store6(w.Hs[:, c], matrix_transpose_times(w.Bc, S))                             # -H = Bc^T S
    dM_dq[:, :, :] = 0.0
    dC_dq[:, :, :] = 0.0
    dC_dv[:, :, :] = 0.0
    dg_dq[:, :] = 0.0
    dJcom_dq[:, :, :] = 0.0
    for K in range(bodies.shape[0]):
        for kc in range(bodies[K].nvj):
            Sk = work[K].S[:, kc]
            for b in range(K, bodies[K].last + 1):              # C(q, e_k)'s Sdot = adj(S_k) S in K's subtree
                for c in range(bodies[b].nvj):
                    store6(work[b].Se[:, c], adj_times(Sk, work[b].S[:, c]))
            _direction(bodies, work, gravity, mass, K, bodies[K].iv + kc, kc, dM_dq, dC_dq, dC_dv, dg_dq,
                       dJcom_dq)
    return 0
