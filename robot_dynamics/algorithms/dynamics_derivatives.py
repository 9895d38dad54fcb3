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
and the same for v with dA/dv, S in place of dA/dq, dV/dq; dtau/da = M.  The drives' armature term armature a
(drives.py) depends on a alone: it adds diag(armature) to dtau/da = M and nothing to dtau/dq, dtau/dv (as
Pinocchio's computeRNEADerivatives).  Joints coupled by mimics are not covered (nor are they by Pinocchio).

Forward dynamics.  a = FD(q, v, tau) solves tau = ID(q, v, a), so da/dq = -M^-1 dtau/dq, da/dv = -M^-1 dtau/dv
and da/dtau = M^-1 (M and a with the armature), with M factored as L^T D L in the tree's sparsity (Featherstone,
RBDA section 6.5: L[k, i] is non-zero only for coordinates i on the path from k to the root, so a factorization
costs O(n d^2) and a solve O(n d), d the depth).
"""
import numpy as np
from numba import njit

from .kinematics import ERR_SINGULAR, checked_pass
from .newton_euler import aba
from .operators import adj_times, cross, dot_columns, force_cross, spatial_inertia_times, store6, transform_parameters

WORK = [                                                         # world frame, per body k
    ("A_gf", np.float64, (6,)),                                  # spatial acceleration A_k (gravity included)
    ("Yc", np.float64, (10,)),                                   # Y summed over the subtree
    ("dYl", np.float64, (3,)), ("dYB", np.float64, (3, 3)),      # dY = [[0, dYl~], [0, dYB]], summed likewise
    ("fc", np.float64, (6,)),                                    # wrench summed over the subtree
    ("dVdq", np.float64, (6, 6)), ("dAdq", np.float64, (6, 6)), ("dAdv", np.float64, (6, 6)),   # k's own columns
    ("dFda", np.float64, (6, 6)), ("dFdq", np.float64, (6, 6)), ("dFdv", np.float64, (6, 6)),
    ("dYtJ", np.float64, (6, 6)),                                # dYc^T S for k's own columns
]


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
        # dY = -adj(V)^T Y - Y adj(V) + [x* h] in closed form: with V = [v; w], Y = [[m E, -s~], [s~, I]] and
        # h = Y V = [l; k], the left blocks cancel and dY = [[0, -2 l~], [0, w~ I - I w~ - v~ s~ - s~ v~ - k~]].
        Y = w.Yc
        s0, s1, s2 = Y[1], Y[2], Y[3]
        v0, v1, v2, w0, w1, w2 = V[0], V[1], V[2], V[3], V[4], V[5]
        w.dYl[0], w.dYl[1], w.dYl[2] = -2.0 * h[0], -2.0 * h[1], -2.0 * h[2]
        # w~ I - I w~ = T + T^T with T = w~ I; v~ s~ + s~ v~ = s v^T + v s^T - 2 (v.s) E; k~ is skew
        t00, t01, t02 = -w2 * Y[7] + w1 * Y[8], -w2 * Y[5] + w1 * Y[9], -w2 * Y[9] + w1 * Y[6]
        t10, t11, t12 = w2 * Y[4] - w0 * Y[8], w2 * Y[7] - w0 * Y[9], w2 * Y[8] - w0 * Y[6]
        t20, t21, t22 = -w1 * Y[4] + w0 * Y[7], -w1 * Y[7] + w0 * Y[5], -w1 * Y[8] + w0 * Y[9]
        vs = 2.0 * (v0 * s0 + v1 * s1 + v2 * s2)
        k0, k1, k2 = h[3], h[4], h[5]
        B = w.dYB
        B[0, 0] = 2.0 * t00 - 2.0 * s0 * v0 + vs
        B[1, 1] = 2.0 * t11 - 2.0 * s1 * v1 + vs
        B[2, 2] = 2.0 * t22 - 2.0 * s2 * v2 + vs
        x01, x02, x12 = t01 + t10 - s0 * v1 - v0 * s1, t02 + t20 - s0 * v2 - v0 * s2, t12 + t21 - s1 * v2 - v1 * s2
        B[0, 1], B[1, 0] = x01 + k2, x01 - k2
        B[0, 2], B[2, 0] = x02 - k1, x02 + k1
        B[1, 2], B[2, 1] = x12 + k0, x12 - k0
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


@njit(cache=True)
def _backward(bodies, work, dtau_dq, dtau_dv, M):
    """The sums of the module docstring over each subtree, inward (bodies k..last of k's subtree); entries of
    coordinates on different branches are zero."""
    dtau_dq[:, :] = 0.0
    dtau_dv[:, :] = 0.0
    M[:, :] = 0.0
    for k in range(bodies.shape[0] - 1, -1, -1):
        b, w = bodies[k], work[k]
        Yc, L, B = w.Yc, w.dYl, w.dYB
        for c in range(b.nvj):
            S, x, y = w.S[:, c], w.dVdq[:, c], w.dAdv[:, c]
            store6(w.dFda[:, c], spatial_inertia_times(Yc, S[0], S[1], S[2], S[3], S[4], S[5]))
            z = w.dAdq[:, c]
            f = spatial_inertia_times(Yc, z[0], z[1], z[2], z[3], z[4], z[5])
            g = spatial_inertia_times(Yc, y[0], y[1], y[2], y[3], y[4], y[5])
            p0, p1, p2 = cross(L[0], L[1], L[2], x[3], x[4], x[5])                   # dYc dV/dq
            r0, r1, r2 = cross(L[0], L[1], L[2], S[3], S[4], S[5])                   # dYc S
            t0, t1, t2 = cross(S[0], S[1], S[2], L[0], L[1], L[2])                   # dYc^T S: -L x S_v
            store6(w.dFdq[:, c], (p0 + f[0], p1 + f[1], p2 + f[2], f[3], f[4], f[5]))   # dYc dV/dq + Yc dA/dq
            store6(w.dFdv[:, c], (r0 + g[0], r1 + g[1], r2 + g[2], g[3], g[4], g[5]))   # dYc S + Yc dA/dv
            store6(w.dYtJ[:, c], (0.0, 0.0, 0.0, t0, t1, t2))                          # dYc^T S
            for r in range(3):
                w.dFdq[3 + r, c] += B[r, 0] * x[3] + B[r, 1] * x[4] + B[r, 2] * x[5]
                w.dFdv[3 + r, c] += B[r, 0] * S[3] + B[r, 1] * S[4] + B[r, 2] * S[5]
                w.dYtJ[3 + r, c] += B[0, r] * S[3] + B[1, r] * S[4] + B[2, r] * S[5]
        for c in range(b.nvj):
            i = b.iv + c
            for d in range(k, b.last + 1):                  # rows and columns of the subtree's coordinates
                bd, wd = bodies[d], work[d]
                for e in range(bd.nvj):
                    j = bd.iv + e
                    M[i, j] = dot_columns(w.S, c, wd.dFda, e)
                    M[j, i] = M[i, j]
                    dtau_dq[i, j] = dot_columns(w.S, c, wd.dFdq, e)
                    dtau_dv[i, j] = dot_columns(w.S, c, wd.dFdv, e)
                    if d != k:                               # strictly below: the columns of k's coordinates
                        dtau_dq[j, i] = dot_columns(wd.dFda, e, w.dAdq, c) + dot_columns(wd.dYtJ, e, w.dVdq, c)
                        dtau_dv[j, i] = dot_columns(wd.dFda, e, w.dAdv, c) + dot_columns(wd.dYtJ, e, w.S, c)
            M[i, i] += b.armature[c]                         # + diag(armature)
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
            for r in range(3):
                wp.dYl[r] += L[r]
                for c in range(3):
                    wp.dYB[r, c] += B[r, c]


@njit(cache=True)
def inverse_dynamics_derivatives(bodies, work, gravity, q, v, a, dtau_dq, dtau_dv, M):
    """dtau/dq, dtau/dv and dtau/da = M at (q, v, a) (the module docstring)."""
    status = checked_pass(bodies, work, (q, v, a), q, v, True)
    if status == 0:
        _forward(bodies, work, gravity, v, a)
        _backward(bodies, work, dtau_dq, dtau_dv, M)
    return status


# ---- M = L^T D L in the tree's sparsity (Featherstone, RBDA section 6.5: LTDL) ------------------------------------
@njit(cache=True)
def ltdl(lam, H):
    """H <- L and D of H = L^T D L, in place: D on the diagonal, the unit lower L below it (only the lower triangle
    of H is read).  lam[i]: the coordinate before i on its path to the root (-1 at the root); L[k, i] is non-zero
    only for i on k's path.  False if H is not positive definite."""
    for k in range(H.shape[0] - 1, -1, -1):
        if not H[k, k] > 0.0:
            return False
        i = lam[k]
        while i >= 0:
            x = H[k, i] / H[k, k]
            j = i
            while j >= 0:
                H[i, j] -= x * H[k, j]
                j = lam[j]
            H[k, i] = x
            i = lam[i]
    return True


@njit(cache=True)
def ltdl_solve(lam, H, X, scale):
    """X <- scale M^-1 X for the (n, m) X, with H from ltdl: L^T Y = X backwards, Y / D, then L Z = Y forwards,
    each a row operation on all m columns at once; O(n d m)."""
    n, m = X.shape
    for k in range(n - 1, -1, -1):
        i = lam[k]
        while i >= 0:
            h = H[k, i]
            for c in range(m):
                X[i, c] -= h * X[k, c]
            i = lam[i]
    for k in range(n):
        h = scale / H[k, k]
        for c in range(m):
            X[k, c] *= h
    for k in range(n):
        i = lam[k]
        while i >= 0:
            h = H[k, i]
            for c in range(m):
                X[k, c] -= h * X[i, c]
            i = lam[i]


@njit(cache=True)
def forward_dynamics_derivatives(bodies, work, lam, H, X, gravity, q, v, tau, da_dq, da_dv, M_inv):
    """da/dq, da/dv and da/dtau = M^-1 at a = FD(q, v, tau) (the module docstring).  lam: the coordinates'
    parents, H: room for the factor of M, X: for [dtau/dq, dtau/dv, -E], solved at once (workspace.ARRAYS)."""
    status = checked_pass(bodies, work, (q, v, tau), q, v, True)
    a = M_inv[0]                                   # a, kept in the first row of M^-1 until M^-1 is formed
    if status == 0:
        status = aba(bodies, work, gravity, q, v, tau, a, True)     # the outward pass placed the bodies
    if status != 0:
        return status
    n = H.shape[0]
    _forward(bodies, work, gravity, v, a)
    _backward(bodies, work, X[:, :n], X[:, n:2 * n], H)          # dtau/dq, dtau/dv and M
    if not ltdl(lam, H):
        return ERR_SINGULAR
    for i in range(n):
        for j in range(n):
            X[i, 2 * n + j] = -1.0 if i == j else 0.0
    ltdl_solve(lam, H, X, -1.0)                    # [da/dq, da/dv, M^-1] = -M^-1 [dtau/dq, dtau/dv, -E]
    for i in range(n):
        for j in range(n):
            da_dq[i, j], da_dv[i, j], M_inv[i, j] = X[i, j], X[i, n + j], X[i, 2 * n + j]
    return 0
