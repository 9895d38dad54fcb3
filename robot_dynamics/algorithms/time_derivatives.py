"""Time derivatives of M, C, g and J_com along a motion q' = v, v' = a (paper 002, Prop. 6 and section VI).

matrices.py writes eq. (6) in world coordinates, per pair of coordinates t (of body a) and s (of body j, a = j or
an ancestor of j), with the composite inertia Ic_j and Bc_j = sum over j's subtree of adj(V_k)^T Lambda_k^w:
    M_ts = S_t^T F_s,   C_ts = S_t^T G_s,   C_st = H_s^T S_t + F_s^T Sdot_t        (t strictly above s)
    F_s = Ic_j S_s,   G_s = -Bc_j S_s + Ic_j Sdot_s,   H_s = -Bc_j^T S_s.
Every factor has a closed-form rate, because each moves with a body:
    Sdot = adj(V_b) S,   Sddot = adj(Vdot_b) S + adj(V_b) Sdot      (b the body owning the coordinate; eq. (28))
    Vdot_k = Vdot_p + Sdot v + S a                                 (eq. (26) differentiated)
    Icdot = -(Bc + Bc^T)                                          (d/dt Lambda^w = -adj(V)^T Lambda^w - Lambda^w adj(V))
    Bcdot = sum over the subtree of adj(Vdot_k)^T Lambda_k^w - adj(V_k)^T (B_k + B_k^T),  B_k = adj(V_k)^T Lambda_k^w
so that, by the product rule,
    Mdot_ts = Sdot_t^T F_s + S_t^T Fdot_s,   Cdot_ts = Sdot_t^T G_s + S_t^T Gdot_s,
    Cdot_st = Hdot_s^T S_t + H_s^T Sdot_t + Fdot_s^T Sdot_t + F_s^T Sddot_t,
and g_s = S_s^T Ic_j gamma_0, J_com[:, s] = (F_s)_linear / m likewise.  Mdot is computed this way, not as C + C^T:
that identity (remark 5) is then a test.  O(n d) like M and C themselves.
"""
import numpy as np
from numba import njit

from .kinematics import checked_pass
from .matrices import composites, composite_times, total_mass
from .operators import add_adj_transpose_inertia, adj_times, dot6, force_cross, store6, transform_parameters

WORK = [                                                       # world frame, per body k (also matrices' F, G, H)
    ("Vd", np.float64, (6,)),                                  # Vdot_k, the rate of the twist (no gravity)
    ("Sdd", np.float64, (6, 6)),                               # Sddot of k's own coordinates
    ("Yk", np.float64, (10,)), ("Bk", np.float64, (6, 6)),     # Lambda_k^w and B_k of body k alone
    ("Bd", np.float64, (6, 6)),                                # Bcdot, summed over the subtree
    ("Fd", np.float64, (6,)), ("Gd", np.float64, (6,)), ("Hd", np.float64, (6,)),   # rates of F, G, H
]


@njit(cache=True)
def _rates(bodies, work, v, a):
    """Vdot_k, Sddot and each body's own term of Bcdot, outward; then the composites (matrices.composites) and
    Bcdot summed inward.  Needs outward_pass with rates."""
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        for r in range(6):                                     # Vdot_k = Vdot_p + Sdot v + S a
            w.Vd[r] = 0.0 if b.parent < 0 else work[b.parent].Vd[r]
            for c in range(b.nvj):
                w.Vd[r] += w.Sd[r, c] * v[b.iv + c] + w.S[r, c] * a[b.iv + c]
        for c in range(b.nvj):                                 # Sddot = adj(Vdot) S + adj(V) Sdot
            x = adj_times(w.Vd, w.S[:, c])
            y = adj_times(w.V, w.Sd[:, c])
            store6(w.Sdd[:, c], (x[0] + y[0], x[1] + y[1], x[2] + y[2], x[3] + y[3], x[4] + y[4], x[5] + y[5]))
        transform_parameters(b.pi, w.R0, w.p0, w.Yk)
        w.Bk[:, :] = 0.0
        add_adj_transpose_inertia(w.Yk, w.V, w.Bk)             # B_k = adj(V_k)^T Lambda_k^w
        w.Bd[:, :] = 0.0
        add_adj_transpose_inertia(w.Yk, w.Vd, w.Bd)            # adj(Vdot_k)^T Lambda_k^w
        for c in range(6):                                     # - adj(V_k)^T (B_k + B_k^T), column by column
            x = force_cross(w.V, w.Bk[0, c] + w.Bk[c, 0], w.Bk[1, c] + w.Bk[c, 1], w.Bk[2, c] + w.Bk[c, 2],
                            w.Bk[3, c] + w.Bk[c, 3], w.Bk[4, c] + w.Bk[c, 4], w.Bk[5, c] + w.Bk[c, 5])
            for r in range(6):
                w.Bd[r, c] += x[r]
    composites(bodies, work, True, True)
    for k in range(bodies.shape[0] - 1, -1, -1):
        p = bodies[k].parent
        if p >= 0:
            for r in range(6):
                for c in range(6):
                    work[p].Bd[r, c] += work[k].Bd[r, c]


@njit(cache=True, inline="always")
def _icdot_times(w, x0, x1, x2, x3, x4, x5):
    """Icdot x = -(Bc + Bc^T) x for the composite of w's subtree, as a 6-tuple."""
    B = w.Bc
    return (-((B[0, 0] + B[0, 0]) * x0 + (B[0, 1] + B[1, 0]) * x1 + (B[0, 2] + B[2, 0]) * x2
              + (B[0, 3] + B[3, 0]) * x3 + (B[0, 4] + B[4, 0]) * x4 + (B[0, 5] + B[5, 0]) * x5),
            -((B[1, 0] + B[0, 1]) * x0 + (B[1, 1] + B[1, 1]) * x1 + (B[1, 2] + B[2, 1]) * x2
              + (B[1, 3] + B[3, 1]) * x3 + (B[1, 4] + B[4, 1]) * x4 + (B[1, 5] + B[5, 1]) * x5),
            -((B[2, 0] + B[0, 2]) * x0 + (B[2, 1] + B[1, 2]) * x1 + (B[2, 2] + B[2, 2]) * x2
              + (B[2, 3] + B[3, 2]) * x3 + (B[2, 4] + B[4, 2]) * x4 + (B[2, 5] + B[5, 2]) * x5),
            -((B[3, 0] + B[0, 3]) * x0 + (B[3, 1] + B[1, 3]) * x1 + (B[3, 2] + B[2, 3]) * x2
              + (B[3, 3] + B[3, 3]) * x3 + (B[3, 4] + B[4, 3]) * x4 + (B[3, 5] + B[5, 3]) * x5),
            -((B[4, 0] + B[0, 4]) * x0 + (B[4, 1] + B[1, 4]) * x1 + (B[4, 2] + B[2, 4]) * x2
              + (B[4, 3] + B[3, 4]) * x3 + (B[4, 4] + B[4, 4]) * x4 + (B[4, 5] + B[5, 4]) * x5),
            -((B[5, 0] + B[0, 5]) * x0 + (B[5, 1] + B[1, 5]) * x1 + (B[5, 2] + B[2, 5]) * x2
              + (B[5, 3] + B[3, 5]) * x3 + (B[5, 4] + B[4, 5]) * x4 + (B[5, 5] + B[5, 5]) * x5))


@njit(cache=True)
def _column_terms(w, c):
    """F, G, H of coordinate c of the body whose record is w, and their rates Fd, Gd, Hd (module docstring)."""
    S, Sd, Sdd, B, Bd = w.S[:, c], w.Sd[:, c], w.Sdd[:, c], w.Bc, w.Bd
    composite_times(w, S, w.F)                                           # F = Ic S
    composite_times(w, Sd, w.G)                                          # Ic Sdot, then G = Ic Sdot - Bc S
    composite_times(w, Sdd, w.Gd)                                        # Ic Sddot, then Gd (below)
    x = _icdot_times(w, S[0], S[1], S[2], S[3], S[4], S[5])
    y = _icdot_times(w, Sd[0], Sd[1], Sd[2], Sd[3], Sd[4], Sd[5])
    for r in range(6):
        bs = bsd = bts = btsd = bds = bdts = 0.0
        for t in range(6):
            bs += B[r, t] * S[t]
            bsd += B[r, t] * Sd[t]
            bts += B[t, r] * S[t]
            btsd += B[t, r] * Sd[t]
            bds += Bd[r, t] * S[t]
            bdts += Bd[t, r] * S[t]
        w.Fd[r] = x[r] + w.G[r]                                          # Fdot = Icdot S + Ic Sdot
        w.G[r] -= bs                                                     # G = -Bc S + Ic Sdot
        w.Gd[r] += -bds - bsd + y[r]                                     # Gdot = -Bcdot S - Bc Sdot + Icdot Sdot
        w.H[r] = -bts                                                    #        + Ic Sddot
        w.Hd[r] = -bdts - btsd                                           # Hdot = -Bcdot^T S - Bc^T Sdot


@njit(cache=True)
def time_derivatives(bodies, work, gravity, q, v, a, M_dot, C_dot, g_dot, J_com_dot):
    """Mdot, Cdot, gdot and J_comdot at (q, v, a) (the module docstring)."""
    status = checked_pass(bodies, work, (q, v, a), q, v, True)
    if status != 0:
        return status
    _rates(bodies, work, v, a)
    mass = total_mass(bodies, work)
    M_dot[:, :] = 0.0
    C_dot[:, :] = 0.0
    g_dot[:] = 0.0
    J_com_dot[:, :] = 0.0
    for j in range(bodies.shape[0]):
        bj, wj = bodies[j], work[j]
        for s in range(bj.nvj):
            cs = bj.iv + s
            _column_terms(wj, s)
            S, Sd = wj.S[:, s], wj.Sd[:, s]
            ig = _icdot_times(wj, -gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
            m, h = wj.pic[0], wj.pic[1:4]                      # Ic gamma_0 = [m gamma_v; h x gamma_v]
            c0, c1, c2 = -m * gravity[0], -m * gravity[1], -m * gravity[2]
            n0 = -(h[1] * gravity[2] - h[2] * gravity[1])
            n1 = -(h[2] * gravity[0] - h[0] * gravity[2])
            n2 = -(h[0] * gravity[1] - h[1] * gravity[0])
            g_dot[cs] += (Sd[0] * c0 + Sd[1] * c1 + Sd[2] * c2 + Sd[3] * n0 + Sd[4] * n1 + Sd[5] * n2
                          + dot6(S, ig))                         # gdot_s = Sdot^T Ic gamma_0 + S^T Icdot gamma_0
            if mass > 0.0:
                for r in range(3):
                    J_com_dot[r, cs] += wj.Fd[r] / mass
            a_ = j
            while a_ >= 0:
                ba, wa = bodies[a_], work[a_]
                for t in range(ba.nvj):
                    ct = ba.iv + t
                    St, Sdt = wa.S[:, t], wa.Sd[:, t]
                    x = dot6(Sdt, wj.F) + dot6(St, wj.Fd)
                    M_dot[ct, cs] += x
                    C_dot[ct, cs] += dot6(Sdt, wj.G) + dot6(St, wj.Gd)
                    if a_ != j:
                        M_dot[cs, ct] += x
                        C_dot[cs, ct] += (dot6(wj.Hd, St) + dot6(wj.H, Sdt) + dot6(wj.Fd, Sdt)
                                          + dot6(wj.F, wa.Sdd[:, t]))
                a_ = ba.parent
    return 0
