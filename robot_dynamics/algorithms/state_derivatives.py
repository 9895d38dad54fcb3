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
from .matrices import composites, total_mass
from .operators import (add_adj_transpose_inertia, adj_times, dot6, force_cross, spatial_inertia_times, store6,
                        transform_parameters)

WORK = [                                                        # world frame, per body b, for the direction at hand
    ("Lb", np.float64, (10,)),                                  # Lambda_b of b alone
    ("Sw", np.float64, (6, 6)), ("Sdw", np.float64, (6, 6)),    # Sdot and (adj(V) S)dot of b's own coordinates
    ("Se", np.float64, (6, 6)),                                 # adj(S_k) S of C(q, e_k)
    ("Vw", np.float64, (6,)),                                   # Vdot_b
    ("Bw", np.float64, (6, 6)),                                 # Bcdot, summed over the moving part of the subtree
    ("Fs", np.float64, (6, 6)), ("Gs", np.float64, (6, 6)),     # F, G of b's own coordinates (time_derivatives)
    ("Hs", np.float64, (6, 6)),                                 # Bc^T S = -H of b's own coordinates
    ("Ig", np.float64, (6,)),                                   # Ic gamma_0
]


@njit(cache=True, inline="always")
def _add(x, y):
    return x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5]


@njit(cache=True, inline="always")
def _sub(x, y):
    return x[0] - y[0], x[1] - y[1], x[2] - y[2], x[3] - y[3], x[4] - y[4], x[5] - y[5]


@njit(cache=True, inline="always")
def _ic(w, x):
    """Ic x for the composite of w's subtree."""
    return spatial_inertia_times(w.pic, x[0], x[1], x[2], x[3], x[4], x[5])


@njit(cache=True, inline="always")
def _mat(B, x):
    """B x for a 6x6 B."""
    return (B[0, 0] * x[0] + B[0, 1] * x[1] + B[0, 2] * x[2] + B[0, 3] * x[3] + B[0, 4] * x[4] + B[0, 5] * x[5],
            B[1, 0] * x[0] + B[1, 1] * x[1] + B[1, 2] * x[2] + B[1, 3] * x[3] + B[1, 4] * x[4] + B[1, 5] * x[5],
            B[2, 0] * x[0] + B[2, 1] * x[1] + B[2, 2] * x[2] + B[2, 3] * x[3] + B[2, 4] * x[4] + B[2, 5] * x[5],
            B[3, 0] * x[0] + B[3, 1] * x[1] + B[3, 2] * x[2] + B[3, 3] * x[3] + B[3, 4] * x[4] + B[3, 5] * x[5],
            B[4, 0] * x[0] + B[4, 1] * x[1] + B[4, 2] * x[2] + B[4, 3] * x[3] + B[4, 4] * x[4] + B[4, 5] * x[5],
            B[5, 0] * x[0] + B[5, 1] * x[1] + B[5, 2] * x[2] + B[5, 3] * x[3] + B[5, 4] * x[4] + B[5, 5] * x[5])


@njit(cache=True, inline="always")
def _mat_t(B, x):
    """B^T x for a 6x6 B."""
    return (B[0, 0] * x[0] + B[1, 0] * x[1] + B[2, 0] * x[2] + B[3, 0] * x[3] + B[4, 0] * x[4] + B[5, 0] * x[5],
            B[0, 1] * x[0] + B[1, 1] * x[1] + B[2, 1] * x[2] + B[3, 1] * x[3] + B[4, 1] * x[4] + B[5, 1] * x[5],
            B[0, 2] * x[0] + B[1, 2] * x[1] + B[2, 2] * x[2] + B[3, 2] * x[3] + B[4, 2] * x[4] + B[5, 2] * x[5],
            B[0, 3] * x[0] + B[1, 3] * x[1] + B[2, 3] * x[2] + B[3, 3] * x[3] + B[4, 3] * x[4] + B[5, 3] * x[5],
            B[0, 4] * x[0] + B[1, 4] * x[1] + B[2, 4] * x[2] + B[3, 4] * x[3] + B[4, 4] * x[4] + B[5, 4] * x[5],
            B[0, 5] * x[0] + B[1, 5] * x[1] + B[2, 5] * x[2] + B[3, 5] * x[3] + B[4, 5] * x[4] + B[5, 5] * x[5])


@njit(cache=True)
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
            store6(w.Sdw[:, c], _add(adj_times(w.Vw, w.S[:, c]), adj_times(w.V, w.Sw[:, c])))
        w.Bw[:, :] = 0.0
        add_adj_transpose_inertia(w.Lb, w.Vw, w.Bw)             # adj(Vdot)^T Lambda_b
        for c in range(6):                                      # + adj(V)^T Lambdadot_b, by columns: with
            e = (1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0,  # Lambdadot e_c =
                 1.0 if c == 3 else 0.0, 1.0 if c == 4 else 0.0, 1.0 if c == 5 else 0.0)   # S_k x* (L e_c)
            y = spatial_inertia_times(w.Lb, e[0], e[1], e[2], e[3], e[4], e[5])             #  - L adj(S_k) e_c
            z = adj_times(Sk, e)
            u = spatial_inertia_times(w.Lb, z[0], z[1], z[2], z[3], z[4], z[5])
            d = _sub(force_cross(Sk, y[0], y[1], y[2], y[3], y[4], y[5]), u)
            f = force_cross(w.V, d[0], d[1], d[2], d[3], d[4], d[5])                     # adj(V)^T X = -(V x* X)
            for r in range(6):
                w.Bw[r, c] -= f[r]
    for b in range(bodies[K].last, K if not rigid else bodies[K].last, -1):   # Bcdot summed inside K's subtree
        p = bodies[b].parent
        for r in range(6):
            for c in range(6):
                work[p].Bw[r, c] += work[b].Bw[r, c]


@njit(cache=True)
def _direction(bodies, work, gravity, mass, K, k, kc, dM, dC, dCv, dg, dJ):
    """Column k of every derivative: the pairs whose lower body j is in K's subtree or above K.  When K is a root,
    its direction moves the whole tree rigidly, twists included: M and C do not change (a fixed arm's M and C do
    not depend on its first joint), and only g, J_com and C(q, e_k) are formed."""
    Sk = work[K].S[:, kc]
    rigid = bodies[K].parent < 0
    _moving_rates(bodies, work, K, Sk, rigid)
    last = bodies[K].last
    ad_g = adj_times(Sk, (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0))
    j = K
    while True:                                                 # K's subtree (K..last), then K's ancestors
        moving = K <= j <= last
        bj, wj = bodies[j], work[j]
        wJ = work[j if moving else K]                           # whose composite moves: Icdot_j = Icdot_J
        Ig = wJ.Ig                                      # Icdot gamma_0 = S_k x* Ic_J gamma_0 - Ic_J adj(S_k) gamma_0
        Icd_g = _sub(force_cross(Sk, Ig[0], Ig[1], Ig[2], Ig[3], Ig[4], Ig[5]), _ic(wJ, ad_g))
        for s in range(bj.nvj):
            cs = bj.iv + s
            S, F, G, H = wj.S[:, s], wj.Fs[:, s], wj.Gs[:, s], wj.Hs[:, s]
            Ics = (F[0], F[1], F[2], F[3], F[4], F[5]) if moving else _ic(wJ, S)     # Ic_J S
            Icd_S = _sub(force_cross(Sk, Ics[0], Ics[1], Ics[2], Ics[3], Ics[4], Ics[5]), _ic(wJ, adj_times(Sk, S)))
            x = dot6(S, Icd_g)                                  # g_s = S^T Ic gamma_0
            if moving:
                Sw = wj.Sw[:, s]
                Fd = _add(Icd_S, _ic(wj, Sw))                   # Fdot = Icdot S + Ic Sdot
                x += dot6(Sw, wj.Ig)
            else:
                Fd = Icd_S
            dg[cs, k] += x
            if mass > 0.0:
                for r in range(3):
                    dJ[r, cs, k] += Fd[r] / mass
            Ge = force_cross(Sk, Ics[0], Ics[1], Ics[2], Ics[3], Ics[4], Ics[5])   # C(q, e_k): -Bc^e S + Ic Sdot^e
            if moving:
                Ge = _add(Ge, _ic(wj, wj.Se[:, s]))
            He = _ic(wJ, adj_times(Sk, S))                      # Bc^e^T S = Ic_J adj(S_k) S
            if not rigid:
                Sd = wj.Sd[:, s]
                Icsd = _ic(wJ, Sd)
                Gd = _sub(_sub(force_cross(Sk, Icsd[0], Icsd[1], Icsd[2], Icsd[3], Icsd[4], Icsd[5]),
                               _ic(wJ, adj_times(Sk, Sd))), _mat(wJ.Bw, S))           # Icdot Sdot - Bcdot S ...
                Hd = _mat_t(wJ.Bw, S)                                                 # -Hdot = Bcdot^T S ...
                if moving:
                    Gd = _add(Gd, _sub(_ic(wj, wj.Sdw[:, s]), _mat(wj.Bc, Sw)))       # + Ic (adj V S)dot - Bc Sdot
                    Hd = _add(Hd, _mat_t(wj.Bc, Sw))                                  # + Bc^T Sdot
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
        store6(w.Ig, _ic(w, (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)))
        for c in range(bodies[b].nvj):
            S = w.S[:, c]
            store6(w.Fs[:, c], _ic(w, S))                                   # F = Ic S
            store6(w.Gs[:, c], _sub(_ic(w, w.Sd[:, c]), _mat(w.Bc, S)))     # G = Ic Sdot - Bc S
            store6(w.Hs[:, c], _mat_t(w.Bc, S))                             # -H = Bc^T S
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
