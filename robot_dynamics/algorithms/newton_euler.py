"""O(n) inverse and forward dynamics in body coordinates, [linear; angular] as paper 002.

Inverse dynamics, the recursive Newton-Euler algorithm (paper 001, eqs. (22)-(27); paper 004, (9.53)-(9.57)):
    outward:  v_k = Ad^-1_{p,k} v_p + xi_k
              a_k = Ad^-1_{p,k} a_p + Xi_k qddot + adj(v_k) xi_k          (a_world = gamma_0 = [-gravity; 0])
              f_k = Lambda_k a_k - adj(v_k)^T Lambda_k v_k                paper 002, eq. (2)
    inward:   tau_k = Xi_k^T f_k,   f_p += Ad^-T_{p,k} f_k
It shares only the joint kinematics with the closed-form matrices, so tau = M a + C v + g is a real check.

Forward dynamics, the articulated-body algorithm (paper 003, Algorithm 8.1; Featherstone's ABA) with the same
operators: articulated inertias IA_k and bias forces pA_k inward, accelerations outward.
"""
import numpy as np
from numba import njit

from .kinematics import (ERR_QUAT, ERR_SINGULAR, ad_apply, ad_transpose_apply, placement, scratch, to_body,
                         wrench_to_world)


@njit(cache=True)
def placements_and_twists(bodies, work, q, v):
    """T_{p,k} and the body twists v_k, xi-products c_k = adj(v_k) xi_k.  Returns 0 or ERR_QUAT."""
    sc = scratch(work)
    RJ, pJ, xi = sc.s33, sc.s3, sc.s6[0]
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        if placement(b, q, RJ, pJ, w.R_pk, w.p_pk) != 0:
            return ERR_QUAT
        for r in range(6):
            xi[r] = 0.0
            for c in range(b.nvj):
                xi[r] += b.Xi[r, c] * b.mult * v[b.iv + c]
        if b.parent < 0:
            for r in range(6):
                w.v[r] = xi[r]
        else:
            to_body(w.R_pk, w.p_pk, work[b.parent].v, w.v)         # v_k = Ad^-1 v_p + xi_k, eq. (26)
            for r in range(6):
                w.v[r] += xi[r]
        ad_apply(w.v, xi, w.c)                                     # adj(v_k) xi_k
    return 0


@njit(cache=True)
def gravity_acceleration(gravity, gamma0):
    """gamma0 <- [-gravity; 0]: the world's fictitious acceleration that brings in the weights."""
    for r in range(3):
        gamma0[r] = -gravity[r]
        gamma0[3 + r] = 0.0


@njit(cache=True)
def carried_acceleration(bodies, work, k, gamma0):
    """a_k <- Ad^-1_{p,k} a_p + adj(v_k) xi_k: the parent's acceleration carried into body k (a_world = gamma_0),
    before the joint's own acceleration is added."""
    b, w = bodies[k], work[k]
    if b.parent < 0:
        to_body(w.R_pk, w.p_pk, gamma0, w.a)
    else:
        to_body(w.R_pk, w.p_pk, work[b.parent].a, w.a)
    for r in range(6):
        w.a[r] += w.c[r]


@njit(cache=True)
def rnea(bodies, work, gravity, q, v, a, tau):
    """tau <- M(q) a + C(q, v) v + g(q).  Returns 0 or ERR_QUAT."""
    status = placements_and_twists(bodies, work, q, v)
    if status != 0:
        return status
    sc = scratch(work)
    gamma0, Lv, tmp = sc.s6[1], sc.s6[2], sc.s6[3]
    gravity_acceleration(gravity, gamma0)
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        carried_acceleration(bodies, work, k, gamma0)
        for r in range(6):
            for c in range(b.nvj):
                w.a[r] += b.Xi[r, c] * b.mult * a[b.iv + c]
        for r in range(6):
            x, y = 0.0, 0.0
            for c in range(6):
                x += b.Lam[r, c] * w.a[c]
                y += b.Lam[r, c] * w.v[c]
            w.f[r] = x
            Lv[r] = y
        ad_transpose_apply(w.v, Lv, tmp)                           # f = Lambda a - adj(v)^T Lambda v
        for r in range(6):
            w.f[r] -= tmp[r]
    for i in range(tau.shape[0]):
        tau[i] = 0.0
    for k in range(bodies.shape[0] - 1, -1, -1):
        b, w = bodies[k], work[k]
        for c in range(b.nvj):
            x = 0.0
            for r in range(6):
                x += b.Xi[r, c] * w.f[r]
            tau[b.iv + c] += b.mult * x
        if b.parent >= 0:
            wrench_to_world(w.R_pk, w.p_pk, w.f, tmp)               # f_p += Ad^-T_{p,k} f_k
            for r in range(6):
                work[b.parent].f[r] += tmp[r]
    return 0


@njit(cache=True)
def invert_spd(D, n, Dinv, A):
    """Dinv[:n, :n] <- D[:n, :n]^-1 by Gauss-Jordan in the scratch A (6, 12); False if D is singular (a joint
    that carries a subtree without mass or inertia)."""
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(D[i, i]))
    if n == 1:
        if not abs(D[0, 0]) > 1e-12 * max(scale, 1e-300):
            return False
        Dinv[0, 0] = 1.0 / D[0, 0]
        return True
    for i in range(n):
        for j in range(n):
            A[i, j] = D[i, j]
            A[i, n + j] = 1.0 if i == j else 0.0
    for i in range(n):
        piv = i
        for r in range(i + 1, n):
            if abs(A[r, i]) > abs(A[piv, i]):
                piv = r
        if not abs(A[piv, i]) > 1e-12 * max(scale, 1e-300):
            return False
        if piv != i:
            for j in range(2 * n):
                A[i, j], A[piv, j] = A[piv, j], A[i, j]
        d = A[i, i]
        for j in range(2 * n):
            A[i, j] /= d
        for r in range(n):
            if r != i:
                f = A[r, i]
                for j in range(2 * n):
                    A[r, j] -= f * A[i, j]
    for i in range(n):
        for j in range(n):
            Dinv[i, j] = A[i, n + j]
    return True


@njit(cache=True)
def congruence_to_parent(R, p, Ia, IAp, scratch):
    """IAp += Ad^-T_{p,k} Ia Ad^-1_{p,k}: an articulated inertia of body k added in its parent's frame.
    scratch: (4, 6)."""
    e, x, y, z = scratch[0], scratch[1], scratch[2], scratch[3]
    for c in range(6):
        for r in range(6):
            e[r] = 0.0
        e[c] = 1.0
        to_body(R, p, e, x)                                        # Ad^-1 e_c
        for r in range(6):
            s = 0.0
            for j in range(6):
                s += Ia[r, j] * x[j]
            y[r] = s
        wrench_to_world(R, p, y, z)                                # Ad^-T (Ia Ad^-1 e_c)
        for r in range(6):
            IAp[r, c] += z[r]


@njit(cache=True)
def aba(bodies, work, gravity, q, v, tau, qdd):
    """qdd <- M^-1 (tau - C v - g) by the articulated-body algorithm (no mimic joints).
    Returns 0, ERR_QUAT, or ERR_SINGULAR when a joint carries a subtree without inertia."""
    status = placements_and_twists(bodies, work, q, v)
    if status != 0:
        return status
    nb = bodies.shape[0]
    sc = scratch(work)
    Lv, tmp, pa, uD, gamma0 = sc.s6[1], sc.s6[2], sc.s6[3], sc.s6[4], sc.s6[5]
    Ia, gj, vectors = sc.s66, sc.s612, sc.s6[6:10]                 # gj: invert_spd's, vectors: congruence's
    for k in range(nb):                                            # IA = Lambda, pA = -adj(v)^T Lambda v
        b, w = bodies[k], work[k]
        w.IA[:, :] = b.Lam
        for r in range(6):
            s = 0.0
            for c in range(6):
                s += b.Lam[r, c] * w.v[c]
            Lv[r] = s
        ad_transpose_apply(w.v, Lv, tmp)
        for r in range(6):
            w.pA[r] = -tmp[r]
    for k in range(nb - 1, -1, -1):
        b, w = bodies[k], work[k]
        n = b.nvj
        for c in range(n):                                         # U = IA Xi, D = Xi^T U, u = tau - Xi^T pA
            for r in range(6):
                s = 0.0
                for j in range(6):
                    s += w.IA[r, j] * b.Xi[j, c]
                w.UD[r, c] = s
        for i in range(n):
            for c in range(n):
                s = 0.0
                for r in range(6):
                    s += b.Xi[r, i] * w.UD[r, c]
                Ia[i, c] = s                                       # D, kept in Ia's corner for a moment
            s = 0.0
            for r in range(6):
                s += b.Xi[r, i] * w.pA[r]
            w.u[i] = tau[b.iv + i] - s
        if not invert_spd(Ia, n, w.Dinv, gj):
            return ERR_SINGULAR
        if b.parent < 0:
            continue
        for i in range(n):                                         # uD = Dinv u
            s = 0.0
            for j in range(n):
                s += w.Dinv[i, j] * w.u[j]
            uD[i] = s
        for r in range(6):                                         # Ia = IA - U Dinv U^T
            for c in range(6):
                s = 0.0
                for i in range(n):
                    for j in range(n):
                        s += w.UD[r, i] * w.Dinv[i, j] * w.UD[c, j]
                Ia[r, c] = w.IA[r, c] - s
        for r in range(6):                                         # pa = pA + Ia c + U Dinv u
            s = w.pA[r]
            for c in range(6):
                s += Ia[r, c] * w.c[c]
            for i in range(n):
                s += w.UD[r, i] * uD[i]
            pa[r] = s
        wp = work[b.parent]
        congruence_to_parent(w.R_pk, w.p_pk, Ia, wp.IA, vectors)
        wrench_to_world(w.R_pk, w.p_pk, pa, tmp)
        for r in range(6):
            wp.pA[r] += tmp[r]
    gravity_acceleration(gravity, gamma0)
    for k in range(nb):                                            # a' = Ad^-1 a_p + c; qdd = Dinv (u - U^T a')
        b, w = bodies[k], work[k]
        carried_acceleration(bodies, work, k, gamma0)
        n = b.nvj
        for i in range(n):
            s = w.u[i]
            for r in range(6):
                s -= w.UD[r, i] * w.a[r]
            uD[i] = s
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += w.Dinv[i, j] * uD[j]
            qdd[b.iv + i] = s
            for r in range(6):
                w.a[r] += b.Xi[r, i] * s
    return 0
