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

The regressor (regressor.py: Y[i, block k] = S_i^T W_k, W_k = Ad^-T (A(alpha_k) - adj(v_k)^T A(u_k)) in the world)
moves the same way along a reference with v_r' = a_r, a_r' = j_r: d/dt Ad^-T = -adj(V_k)^T Ad^-T, the body-frame
alpha, u, v change as Ad^-1 (Xdot - adj(V_k) X) of their world forms X = P, U, V, whose rates follow from
U_k = U_p + S v_r and P_k = P_p + S a_r + Sdot v_r; so, with A linear,
    Wdot_k = -adj(V_k)^T W_k + Ad^-T (A(alphadot) - adj(v_k)^T A(udot)) - Ad^-T adj(vdot_k)^T A(u_k),
    Ydot[i, block k] = Sdot_i^T W_k + S_i^T Wdot_k,   Ydot pi = Mdot a_r + M j_r + Cdot v_r + C a_r + gdot.
The drives' armature (drives.py) is constant: Mdot, Cdot, gdot and J_com_dot are the same with or without it.
"""
import numpy as np
from numba import njit

from .kinematics import checked_pass
from .matrices import composite_product, composites, total_mass
from .operators import (ad_inv_times, add, add_adj_transpose_inertia, adj_times, dot6, dot_columns, force_cross,
                        matrix_times, matrix_transpose_times, negative, store6, subtract, transform_parameters)
from .regressor import reference_recursion, world_block

WORK = [                                                       # world frame, per body k (also matrices' F, G, H)
    ("Vd", np.float64, (6,)),                                  # Vdot_k, the rate of the twist (no gravity)
    ("Sdd", np.float64, (6, 6)),                               # Sddot of k's own coordinates
    ("Yk", np.float64, (10,)), ("Bk", np.float64, (6, 6)),     # Lambda_k^w and B_k of body k alone
    ("Bd", np.float64, (6, 6)),                                # Bcdot, summed over the subtree
    ("Fd", np.float64, (6,)), ("Gd", np.float64, (6,)), ("Hd", np.float64, (6,)),   # rates of F, G, H
    ("Ud", np.float64, (6,)), ("Pd", np.float64, (6,)),        # rates of regressor's U and P (world)
    ("alpha_d", np.float64, (6,)), ("u_d", np.float64, (6,)), ("v_d", np.float64, (6,)),   # body-frame rates
    ("Wd", np.float64, (6, 10)), ("Wx", np.float64, (6, 10)),  # Wdot_k, and a second block to add into it
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
def icdot_times(w, x):
    """Icdot x = -(Bc + Bc^T) x for the composite of w's subtree, as a tuple."""
    return negative(add(matrix_times(w.Bc, x), matrix_transpose_times(w.Bc, x)))


@njit(cache=True)
def _column_terms(w, c):
    """F, G, H of coordinate c of the body whose record is w, and their rates Fd, Gd, Hd (module docstring)."""
    S, Sd, Sdd, B, Bd = w.S[:, c], w.Sd[:, c], w.Sdd[:, c], w.Bc, w.Bd
    Ic_Sd = composite_product(w, Sd)
    store6(w.F, composite_product(w, S))                                               # F = Ic S
    store6(w.Fd, add(icdot_times(w, S), Ic_Sd))                                        # Fdot = Icdot S + Ic Sdot
    store6(w.G, subtract(Ic_Sd, matrix_times(B, S)))                                   # G = -Bc S + Ic Sdot
    store6(w.Gd, add(subtract(composite_product(w, Sdd), add(matrix_times(Bd, S), matrix_times(B, Sd))),
                     icdot_times(w, Sd)))                     # Gdot = -Bcdot S - Bc Sdot + Icdot Sdot + Ic Sddot
    store6(w.H, negative(matrix_transpose_times(B, S)))                                # H = -Bc^T S
    store6(w.Hd, negative(add(matrix_transpose_times(Bd, S), matrix_transpose_times(B, Sd))))  # Hdot


@njit(cache=True)
def gravity_rate_terms(bodies, work, gravity, g_dot):
    """gdot (eq. (6c) differentiated): gdot_s = Sdot_s^T Ic_j gamma_0 + S_s^T Icdot_j gamma_0, summed over the
    bodies a coordinate moves.  Needs outward_pass with rates and composites with Bc."""
    g0 = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    g_dot[:] = 0.0
    for j in range(bodies.shape[0]):
        bj, wj = bodies[j], work[j]
        f, e = composite_product(wj, g0), icdot_times(wj, g0)
        for s in range(bj.nvj):
            g_dot[bj.iv + s] += dot6(wj.Sd[:, s], f) + dot6(wj.S[:, s], e)


@njit(cache=True)
def gravity_derivative(bodies, work, gravity, q, v, g_dot):
    """gdot = dg/dq v alone, O(n): what needs only q and v."""
    status = checked_pass(bodies, work, (q, v), q, v, True)
    if status == 0:
        composites(bodies, work, True, True)
        gravity_rate_terms(bodies, work, gravity, g_dot)
    return status


@njit(cache=True)
def time_derivatives(bodies, work, gravity, q, v, a, M_dot, C_dot, g_dot, J_com_dot):
    """Mdot, Cdot, gdot and J_comdot at (q, v, a) (the module docstring)."""
    status = checked_pass(bodies, work, (q, v, a), q, v, True)
    if status == 0:
        _matrix_rates(bodies, work, gravity, v, a, M_dot, C_dot, g_dot, J_com_dot)
    return status


@njit(cache=True)
def time_derivatives_with_regressor(bodies, work, gravity, q, v, a, v_ref, a_ref, j_ref, M_dot, C_dot, g_dot,
                                    J_com_dot, Y_dot):
    """time_derivatives and Ydot along v_r' = a_r, a_r' = j_r (the module docstring)."""
    status = checked_pass(bodies, work, (q, v, a, v_ref, a_ref, j_ref), q, v, True)
    if status != 0:
        return status
    _matrix_rates(bodies, work, gravity, v, a, M_dot, C_dot, g_dot, J_com_dot)
    reference_recursion(bodies, work, gravity, v_ref, a_ref)
    Y_dot[:, :] = 0.0
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        for r in range(6):                                     # Udot, Pdot: the outward recursions differentiated
            w.Ud[r] = 0.0 if b.parent < 0 else work[b.parent].Ud[r]
            w.Pd[r] = 0.0 if b.parent < 0 else work[b.parent].Pd[r]
            for c in range(b.nvj):
                i = b.iv + c
                w.Ud[r] += w.Sd[r, c] * v_ref[i] + w.S[r, c] * a_ref[i]
                w.Pd[r] += 2.0 * w.Sd[r, c] * a_ref[i] + w.S[r, c] * j_ref[i] + w.Sdd[r, c] * v_ref[i]
        _body_rates(w)
        world_block(w.alpha, w.u_r, w.v_k, w.R0, w.p0, w.W)    # W_k
        world_block(w.alpha_d, w.u_d, w.v_k, w.R0, w.p0, w.Wd)  # Ad^-T (A(alphadot) - adj(v)^T A(udot))
        for r in range(6):
            w.v_k[r] = 0.0
        world_block(w.v_k, w.u_r, w.v_d, w.R0, w.p0, w.Wx)     # - Ad^-T adj(vdot)^T A(u)  (alpha = 0)
        for c in range(10):
            x = force_cross(w.V, w.W[0, c], w.W[1, c], w.W[2, c], w.W[3, c], w.W[4, c], w.W[5, c])
            for r in range(6):
                w.Wd[r, c] += w.Wx[r, c] + x[r]                # - adj(V)^T W_k
        a_ = k
        while a_ >= 0:
            ba, wa = bodies[a_], work[a_]
            for t in range(ba.nvj):
                row = Y_dot[ba.iv + t]
                for c in range(10):
                    row[10 * k + c] += (dot_columns(wa.Sd, t, w.W, c) + dot_columns(wa.S, t, w.Wd, c))
            a_ = ba.parent
    return 0


@njit(cache=True)
def _body_rates(w):
    """alpha, u, v of the body (regressor.py) and their rates, in its frame: Ad^-1 X, Ad^-1 (Xdot - adj(V) X)."""
    R, p, V = w.R0, w.p0, w.V
    for X, Xd, x, xd in ((w.P, w.Pd, w.alpha, w.alpha_d), (w.U, w.Ud, w.u_r, w.u_d)):
        store6(x, ad_inv_times(R, p, X))
        c = adj_times(V, X)
        y = (Xd[0] - c[0], Xd[1] - c[1], Xd[2] - c[2], Xd[3] - c[3], Xd[4] - c[4], Xd[5] - c[5])
        store6(xd, ad_inv_times(R, p, y))
    store6(w.v_k, ad_inv_times(R, p, V))
    store6(w.v_d, ad_inv_times(R, p, w.Vd))                     # adj(V) V = 0


@njit(cache=True)
def _matrix_rates(bodies, work, gravity, v, a, M_dot, C_dot, g_dot, J_com_dot):
    """The matrices' rates (the module docstring), after outward_pass with rates."""
    _rates(bodies, work, v, a)
    gravity_rate_terms(bodies, work, gravity, g_dot)
    mass = total_mass(bodies, work)
    M_dot[:, :] = 0.0
    C_dot[:, :] = 0.0
    J_com_dot[:, :] = 0.0
    for j in range(bodies.shape[0]):
        bj, wj = bodies[j], work[j]
        for s in range(bj.nvj):
            cs = bj.iv + s
            _column_terms(wj, s)
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
