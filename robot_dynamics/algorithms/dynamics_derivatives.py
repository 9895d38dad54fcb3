"""Derivatives of inverse and forward dynamics with respect to q (along the tangent directions of `integrate`, as
Pinocchio's), v and, for forward dynamics, tau -- what trajectory optimization, MPC and LQR linearize.

Inverse dynamics.  tau_i = S_i^T f_i with f_i the wrench carried by the joint of coordinate i, i.e. the sum over
the subtree of body b(i) of f_k = Y_k A_k + V_k x* (Y_k V_k), everything in world coordinates: S_i the world axis
(kinematics.py), V_k the twist, A_k = A_p + Sdot qdot + S qddot the spatial acceleration with A_world = gamma_0
(the weights), Y_k = Ad^-T Lambda_k Ad^-1 the world inertia (paper 002, eq. (2) and appendix; the world-frame
form of paper 001's Newton-Euler, eqs. (22)-(27)).  A coordinate j moves the bodies of its subtree rigidly with
the world twist S_j, which turns S_i (i in that subtree) by adj(S_j), and Y_k by -adj(S_j)^T Y_k - Y_k adj(S_j).
Differentiating the sums by these rules, with the per-coordinate columns
    dV/dq_j = adj(V_p) S_j,  dA/dq_j = adj(A_p) S_j + adj(V_p) dV/dq_j,  dA/dv_j = Sdot_j + dV/dq_j,
    Yc, dYc = sum over the subtree of Y_k and of Ydot_k + [x* h_k] (Ydot_k = -adj(V_k)^T Y_k - Y_k adj(V_k),
              h_k = Y_k V_k, [x* h] m = m x* h),
gives, for i in the subtree of j's body (d's: descendants) and j in the subtree of i's body, one backward pass
(Carpentier and Mansard, "Analytical derivatives of rigid body dynamics algorithms", RSS 2018):
    dtau_d/dq_j = (Yc_d S_d)^T dA/dq_j + (dYc_d^T S_d)^T dV/dq_j       (d strictly below j)
    dtau_j/dq_d = S_j^T dF/dq_d,  dF/dq_d = dYc dV/dq_d + Yc dA/dq_d (+ S_d x* f_d once d's own rows are done)
and the same for v with dA/dv, S in place of dA/dq, dV/dq; dtau/da = M.  Joints coupled by mimics are not
covered (nor are they by Pinocchio).

Forward dynamics.  a = FD(q, v, tau) solves tau = ID(q, v, a), so da/dq = -M^-1 dtau/dq, da/dv = -M^-1 dtau/dv
and da/dtau = M^-1, with M factored as L^T D L in the tree's sparsity (Featherstone, RBDA section 6.5: L[k, i]
is non-zero only for coordinates i on the path from k to the root, so a factorization costs O(n d^2) and a solve
O(n d), d the depth).
"""
import numpy as np
from numba import njit

from .kinematics import ERR_SINGULAR, checked_pass
from .newton_euler import aba
from .operators import adj_times, force_cross, spatial_inertia_times, store6, transform_parameters

WORK = [                                                         # world frame, per body k
    ("A_gf", np.float64, (6,)),                                  # spatial acceleration A_k (gravity included)
    ("Yc", np.float64, (10,)), ("dYc", np.float64, (6, 6)),      # Y and dY summed over the subtree
    ("fc", np.float64, (6,)),                                    # wrench summed over the subtree
    ("dVdq", np.float64, (6, 6)), ("dAdq", np.float64, (6, 6)), ("dAdv", np.float64, (6, 6)),   # k's own columns
    ("dFda", np.float64, (6, 6)), ("dFdq", np.float64, (6, 6)), ("dFdv", np.float64, (6, 6)),
    ("dYtJ", np.float64, (6, 6)),                                # dYc^T S for k's own columns
]


@njit(cache=True, inline="always")
def _unit(c):
    """e_c, the c-th unit 6-vector, as a tuple."""
    return (1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0, 1.0 if c == 3 else 0.0,
            1.0 if c == 4 else 0.0, 1.0 if c == 5 else 0.0)


@njit(cache=True)
def _forward(bodies, work, gravity, v, a):
    """A_k, Y_k, dY_k = Ydot_k + [x* h_k], f_k and the columns dV/dq, dA/dq, dA/dv of every body (outward).
    Needs outward_pass with rates."""
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        par = b.parent
        for r in range(6):                                       # A_k = A_p + Sdot v + S a, A_world = gamma_0
            w.A_gf[r] = (-gravity[r] if r < 3 else 0.0) if par < 0 else work[par].A_gf[r]
            for c in range(b.nvj):
                w.A_gf[r] += w.Sd[r, c] * v[b.iv + c] + w.S[r, c] * a[b.iv + c]
        transform_parameters(b.pi, w.R0, w.p0, w.Yc)             # Y_k in the world frame
        V, A = w.V, w.A_gf
        h = spatial_inertia_times(w.Yc, V[0], V[1], V[2], V[3], V[4], V[5])            # h_k = Y_k V_k
        f = spatial_inertia_times(w.Yc, A[0], A[1], A[2], A[3], A[4], A[5])            # f_k = Y A + V x* h
        g = force_cross(V, h[0], h[1], h[2], h[3], h[4], h[5])
        store6(w.fc, (f[0] + g[0], f[1] + g[1], f[2] + g[2], f[3] + g[3], f[4] + g[4], f[5] + g[5]))
        for c in range(6):                      # column c of dY = -adj(V)^T Y - Y adj(V) + [x* h]: m = e_c
            m = _unit(c)
            y = spatial_inertia_times(w.Yc, m[0], m[1], m[2], m[3], m[4], m[5])
            t1 = force_cross(V, y[0], y[1], y[2], y[3], y[4], y[5])                    # -adj(V)^T Y m
            u = adj_times(V, m)
            t2 = spatial_inertia_times(w.Yc, u[0], u[1], u[2], u[3], u[4], u[5])       # Y adj(V) m
            t3 = force_cross(m, h[0], h[1], h[2], h[3], h[4], h[5])                    # m x* h
            for r in range(6):
                w.dYc[r, c] = t1[r] - t2[r] + t3[r]
        for c in range(b.nvj):                  # the columns of k's own coordinates
            S = w.S[:, c]
            if par < 0:
                dv = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
                x = _gamma_cross(gravity, S)
            else:
                wp = work[par]
                dv = adj_times(wp.V, S)                                               # dV/dq = adj(V_p) S
                y = adj_times(wp.A_gf, S)
                z = adj_times(wp.V, dv)
                x = (y[0] + z[0], y[1] + z[1], y[2] + z[2], y[3] + z[3], y[4] + z[4], y[5] + z[5])
            store6(w.dVdq[:, c], dv)
            store6(w.dAdq[:, c], x)                                  # dA/dq = adj(A_p) S + adj(V_p) dV/dq
            for r in range(6):
                w.dAdv[r, c] = w.Sd[r, c] + dv[r]                    # dA/dv = Sdot + dV/dq


@njit(cache=True, inline="always")
def _gamma_cross(gravity, S):
    """adj(gamma_0) S for gamma_0 = [-gravity; 0]: [-gravity x S_w; 0] (the root's dA/dq)."""
    x0, x1, x2 = -gravity[1] * S[5] + gravity[2] * S[4], -gravity[2] * S[3] + gravity[0] * S[5], \
        -gravity[0] * S[4] + gravity[1] * S[3]
    return x0, x1, x2, 0.0, 0.0, 0.0


@njit(cache=True, inline="always")
def _dot_columns(X, c, Y, d):
    """X[:, c]^T Y[:, d]."""
    return (X[0, c] * Y[0, d] + X[1, c] * Y[1, d] + X[2, c] * Y[2, d] + X[3, c] * Y[3, d] + X[4, c] * Y[4, d]
            + X[5, c] * Y[5, d])


@njit(cache=True)
def _backward(bodies, work, dtau_dq, dtau_dv, M):
    """The sums of the module docstring over each subtree, inward (bodies k..last of k's subtree); entries of
    coordinates on different branches are zero."""
    dtau_dq[:, :] = 0.0
    dtau_dv[:, :] = 0.0
    M[:, :] = 0.0
    for k in range(bodies.shape[0] - 1, -1, -1):
        b, w = bodies[k], work[k]
        Yc, dY = w.Yc, w.dYc
        for c in range(b.nvj):
            S = w.S[:, c]
            store6(w.dFda[:, c], spatial_inertia_times(Yc, S[0], S[1], S[2], S[3], S[4], S[5]))
            x = w.dAdq[:, c]
            y = spatial_inertia_times(Yc, x[0], x[1], x[2], x[3], x[4], x[5])
            x = w.dAdv[:, c]
            z = spatial_inertia_times(Yc, x[0], x[1], x[2], x[3], x[4], x[5])
            for r in range(6):
                dq, dv, t = 0.0, 0.0, 0.0
                for s in range(6):
                    dq += dY[r, s] * w.dVdq[s, c]
                    dv += dY[r, s] * S[s]
                    t += dY[s, r] * S[s]
                w.dFdq[r, c] = dq + y[r]                                   # dF/dq = dYc dV/dq + Yc dA/dq
                w.dFdv[r, c] = dv + z[r]                                   # dF/dv = dYc S + Yc dA/dv
                w.dYtJ[r, c] = t                                           # dYc^T S
        for c in range(b.nvj):
            i = b.iv + c
            for d in range(k, b.last + 1):                  # rows and columns of the subtree's coordinates
                bd, wd = bodies[d], work[d]
                for e in range(bd.nvj):
                    j = bd.iv + e
                    M[i, j] = _dot_columns(w.S, c, wd.dFda, e)
                    M[j, i] = M[i, j]
                    dtau_dq[i, j] = _dot_columns(w.S, c, wd.dFdq, e)
                    dtau_dv[i, j] = _dot_columns(w.S, c, wd.dFdv, e)
                    if d != k:                               # strictly below: the columns of k's coordinates
                        dtau_dq[j, i] = _dot_columns(wd.dFda, e, w.dAdq, c) + _dot_columns(wd.dYtJ, e, w.dVdq, c)
                        dtau_dv[j, i] = _dot_columns(wd.dFda, e, w.dAdv, c) + _dot_columns(wd.dYtJ, e, w.S, c)
        for c in range(b.nvj):                              # dF/dq += S x* f, for the rows of the ancestors
            f = w.fc
            g = force_cross(w.S[:, c], f[0], f[1], f[2], f[3], f[4], f[5])
            for r in range(6):
                w.dFdq[r, c] += g[r]
        par = b.parent
        if par >= 0:
            wp = work[par]
            for r in range(10):
                wp.Yc[r] += Yc[r]
            for r in range(6):
                wp.fc[r] += w.fc[r]
                for s in range(6):
                    wp.dYc[r, s] += dY[r, s]


@njit(cache=True)
def inverse_dynamics_derivatives(bodies, work, gravity, q, v, a, dtau_dq, dtau_dv, M):
    """dtau/dq, dtau/dv and dtau/da = M at (q, v, a) (the module docstring)."""
    status = checked_pass(bodies, work, (q, v, a), q, v, True)
    if status == 0:
        _forward(bodies, work, gravity, v, a)
        _backward(bodies, work, dtau_dq, dtau_dv, M)
    return status


# ---- M = L^T D L in the tree's sparsity (Featherstone, RBDA section 6.5: LTDL) ------------------------------------
@njit(cache=True, inline="always")
def _up(bodies, b, c):
    """The coordinate before coordinate c of body b on the path to the root, as (body, coordinate), (-1, -1) at
    the root: lambda(i) of Featherstone's LTDL."""
    if c > 0:
        return b, c - 1
    p = bodies[b].parent
    return (p, bodies[p].nvj - 1) if p >= 0 else (-1, -1)


@njit(cache=True)
def ltdl(bodies, H):
    """H <- L and D of H = L^T D L, in place: D on the diagonal, the unit lower L below it (only the lower triangle
    of H is read).  L[k, i] is non-zero only for i on k's path to the root.  False if H is not positive definite."""
    for kb in range(bodies.shape[0] - 1, -1, -1):
        for kc in range(bodies[kb].nvj - 1, -1, -1):
            k = bodies[kb].iv + kc
            if not H[k, k] > 0.0:
                return False
            ib, ic = _up(bodies, kb, kc)
            while ib >= 0:
                i = bodies[ib].iv + ic
                x = H[k, i] / H[k, k]
                jb, jc = ib, ic
                while jb >= 0:
                    j = bodies[jb].iv + jc
                    H[i, j] -= x * H[k, j]
                    jb, jc = _up(bodies, jb, jc)
                H[k, i] = x
                ib, ic = _up(bodies, ib, ic)
    return True


@njit(cache=True)
def ltdl_solve(bodies, H, x):
    """x <- M^-1 x with H from ltdl: L^T y = x backwards, y / D, then L z = y forwards; O(n d)."""
    for kb in range(bodies.shape[0] - 1, -1, -1):
        for kc in range(bodies[kb].nvj - 1, -1, -1):
            k = bodies[kb].iv + kc
            ib, ic = _up(bodies, kb, kc)
            while ib >= 0:
                i = bodies[ib].iv + ic
                x[i] -= H[k, i] * x[k]
                ib, ic = _up(bodies, ib, ic)
    for k in range(x.shape[0]):
        x[k] /= H[k, k]
    for kb in range(bodies.shape[0]):
        for kc in range(bodies[kb].nvj):
            k = bodies[kb].iv + kc
            ib, ic = _up(bodies, kb, kc)
            while ib >= 0:
                i = bodies[ib].iv + ic
                x[k] -= H[k, i] * x[i]
                ib, ic = _up(bodies, ib, ic)


@njit(cache=True)
def forward_dynamics_derivatives(bodies, work, H, gravity, q, v, tau, da_dq, da_dv, M_inv):
    """da/dq, da/dv and da/dtau = M^-1 at a = FD(q, v, tau) (the module docstring).  H: an (nv, nv) scratch."""
    status = checked_pass(bodies, work, (q, v, tau), q, v, True)
    a = M_inv[0]                                   # a, kept in the first row of M^-1 until M^-1 is formed
    if status == 0:
        status = aba(bodies, work, gravity, q, v, tau, a)
    if status != 0:
        return status
    _forward(bodies, work, gravity, v, a)
    _backward(bodies, work, da_dq, da_dv, H)       # dtau/dq, dtau/dv and M
    if not ltdl(bodies, H):
        return ERR_SINGULAR
    n = H.shape[0]
    for j in range(n):
        ltdl_solve(bodies, H, da_dq[:, j])
        ltdl_solve(bodies, H, da_dv[:, j])
        for i in range(n):
            da_dq[i, j] = -da_dq[i, j]
            da_dv[i, j] = -da_dv[i, j]
            M_inv[i, j] = 1.0 if i == j else 0.0
    for j in range(n):
        ltdl_solve(bodies, H, M_inv[:, j])
    return 0
