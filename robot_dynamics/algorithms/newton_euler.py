"""O(n) inverse and forward dynamics in body coordinates, [linear; angular] as paper 002.

Inverse dynamics, the recursive Newton-Euler algorithm (paper 001, eqs. (22)-(27); paper 004, (9.53)-(9.57)):
    outward:  v_k = Ad^-1_{p,k} v_p + xi_k
              a_k = Ad^-1_{p,k} a_p + Xi_k qddot + adj(v_k) xi_k          (a_world = gamma_0 = [-gravity; 0])
              f_k = Lambda_k a_k - adj(v_k)^T Lambda_k v_k                paper 002, eq. (2)
    inward:   tau_k = Xi_k^T f_k + armature_k qddot_k,   f_p += Ad^-T_{p,k} f_k
It shares only the joint kinematics with the closed-form matrices, so tau = M a + C v + g is a real check.
The drives' armature (drives.py; Pinocchio's model.armature) is a rotor spinning with its joint's coordinate, on
the diagonal of M: armature qddot in the inverse dynamics, and in the forward dynamics the joint block of the
articulated inertia D_k = Xi_k^T IA_k Xi_k + diag(armature_k) (as Pinocchio's aba adds it to StU), which the rest
of the algorithm carries into Ia and pa unchanged.

Forward dynamics, the articulated-body algorithm (paper 003, Algorithm 8.1; Featherstone's ABA) with the same
operators: articulated inertias IA_k and bias forces pA_k inward, accelerations outward.
reference.inverse_dynamics and reference.forward_dynamics write both as they stand (spatial_v2's ID and FDab).

How the kernels are written (they are timed against Pinocchio):
- A 1-DoF joint (revolute or prismatic, by far the most common) has the single column Xi_k = [0; e] or [e; 0]
  (model._motion_subspace): its products with Xi_k touch one 3-block, D_k is a scalar, and it takes written-out
  paths; planar and free joints take the general loops.
- The spatial algebra is written out on scalars (operators.py), inlined into the kernels.
- Multiply-adds are fused (CONTRACT).
"""
import numpy as np
from numba import njit

from ..model import REVOLUTE
from .kinematics import ERR_QUAT, ERR_SINGULAR, check_inputs, placement
from .operators import (CONTRACT, ad_inv_times, ad_inv_transpose_times, add6, add_transformed_inertia, adj_times,
                        bias_force, cross, dot6, rotate_transpose, spatial_inertia_times, store6)

WORK = [                                  # (placement also writes kinematics' R_J, p_J, R_pk, p_pk)
    ("v", np.float64, (6,)), ("c", np.float64, (6,)),             # body twist v_k, c_k = adj(v_k) xi_k
    ("a", np.float64, (6,)), ("f", np.float64, (6,)),             # body acceleration a_k and wrench f_k (RNEA)
    ("IA", np.float64, (6, 6)), ("pA", np.float64, (6,)),         # articulated inertia and bias force (ABA)
    ("Ia", np.float64, (6, 6)), ("pa", np.float64, (6,)),         # their projections, passed to the parent
    ("UD", np.float64, (6, 6)), ("Dinv", np.float64, (6, 6)),     # U = IA Xi (and W = Ad^-T U), D^-1
    ("u", np.float64, (6,)), ("uD", np.float64, (6,)),            # u = tau - Xi^T pA, D^-1 u
    ("GJ", np.float64, (6, 12)),                                  # Gauss-Jordan of D, then U D^-1 (multi-DoF)
]


# ---- the outward kinematics both algorithms share --------------------------------------------------------------
@njit(cache=True, fastmath=CONTRACT)
def placements_and_twists(bodies, work, q, v, placed):
    """T_{p,k} (unless placed: an outward pass has just formed them) and the body twists v_k, xi-products
    c_k = adj(v_k) xi_k.  Returns 0 or ERR_QUAT."""
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        if not placed and placement(b, w, q) != 0:
            return ERR_QUAT
        if b.parent < 0:
            v0, v1, v2, v3, v4, v5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        else:                                                      # v_k = Ad^-1 v_p + xi_k, eq. (26)
            v0, v1, v2, v3, v4, v5 = ad_inv_times(w.R_pk, w.p_pk, work[b.parent].v)
        if b.nvj == 1:                                             # xi_k = mult Xi_k qdot: one 3-block x
            s = b.mult * v[b.iv]
            # adj(v_k) xi_k = [v_w x xi_v + v_v x xi_w; v_w x xi_w] (paper 002, appendix)
            if b.jtype == REVOLUTE:                                # xi_k = [0; x]: c = [v_v x x; v_w x x]
                x0, x1, x2 = s * b.Xi[3, 0], s * b.Xi[4, 0], s * b.Xi[5, 0]
                v3, v4, v5 = v3 + x0, v4 + x1, v5 + x2
                c0, c1, c2 = cross(v0, v1, v2, x0, x1, x2)
                c3, c4, c5 = cross(v3, v4, v5, x0, x1, x2)
            else:                                                  # prismatic, xi_k = [x; 0]: c = [v_w x x; 0]
                x0, x1, x2 = s * b.Xi[0, 0], s * b.Xi[1, 0], s * b.Xi[2, 0]
                v0, v1, v2 = v0 + x0, v1 + x1, v2 + x2
                c0, c1, c2 = cross(v3, v4, v5, x0, x1, x2)
                c3, c4, c5 = 0.0, 0.0, 0.0
            store6(w.v, (v0, v1, v2, v3, v4, v5))
            store6(w.c, (c0, c1, c2, c3, c4, c5))
        else:
            store6(w.v, (v0, v1, v2, v3, v4, v5))
            for r in range(6):                                     # xi_k, kept in a for a moment
                x = 0.0
                for j in range(b.nvj):
                    x += b.Xi[r, j] * v[b.iv + j]
                w.a[r] = b.mult * x
                w.v[r] += w.a[r]
            store6(w.c, adj_times(w.v, w.a))                      # adj(v_k) xi_k
    return 0


@njit(cache=True, fastmath=CONTRACT, inline="always")
def carried(bodies, work, k, gravity):
    """Ad^-1_{p,k} a_p + adj(v_k) xi_k as a 6-tuple: the parent's acceleration carried into body k, before the
    joint's own acceleration is added (a_world = gamma_0 = [-gravity; 0], so Ad^-1 gamma_0 = [-R^T gravity; 0])."""
    b, w = bodies[k], work[k]
    if b.parent < 0:
        a0, a1, a2 = rotate_transpose(w.R_pk, -gravity[0], -gravity[1], -gravity[2])
        a3, a4, a5 = 0.0, 0.0, 0.0
    else:
        a0, a1, a2, a3, a4, a5 = ad_inv_times(w.R_pk, w.p_pk, work[b.parent].a)
    c = w.c
    return a0 + c[0], a1 + c[1], a2 + c[2], a3 + c[3], a4 + c[4], a5 + c[5]


# ---- inverse dynamics ---------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=CONTRACT)
def rnea(bodies, work, gravity, q, v, a, tau):
    """tau <- M(q) a + C(q, v) v + g(q), M with the armature.  Returns 0 or ERR_QUAT."""
    status = placements_and_twists(bodies, work, q, v, False)
    if status != 0:
        return status
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        # a_k = Ad^-1 a_p + adj(v_k) xi_k + mult Xi_k qddot
        a0, a1, a2, a3, a4, a5 = carried(bodies, work, k, gravity)
        if b.nvj == 1:
            s = b.mult * a[b.iv]
            if b.jtype == REVOLUTE:
                a3, a4, a5 = a3 + s * b.Xi[3, 0], a4 + s * b.Xi[4, 0], a5 + s * b.Xi[5, 0]
            else:
                a0, a1, a2 = a0 + s * b.Xi[0, 0], a1 + s * b.Xi[1, 0], a2 + s * b.Xi[2, 0]
            store6(w.a, (a0, a1, a2, a3, a4, a5))
        else:
            store6(w.a, (a0, a1, a2, a3, a4, a5))
            for r in range(6):
                for j in range(b.nvj):
                    w.a[r] += b.Xi[r, j] * b.mult * a[b.iv + j]
            a0, a1, a2, a3, a4, a5 = w.a[0], w.a[1], w.a[2], w.a[3], w.a[4], w.a[5]
        l0, l1, l2, l3, l4, l5 = spatial_inertia_times(b.pi, a0, a1, a2, a3, a4, a5)
        f0, f1, f2, f3, f4, f5 = bias_force(b.pi, w.v)             # f = Lambda a - adj(v)^T Lambda v,
        store6(w.f, (l0 + f0, l1 + f1, l2 + f2, l3 + f3, l4 + f4, l5 + f5))   # paper 002, eq. (2)
    for i in range(tau.shape[0]):
        tau[i] = 0.0
    for k in range(bodies.shape[0] - 1, -1, -1):
        b, w = bodies[k], work[k]
        f0, f1, f2, f3, f4, f5 = w.f[0], w.f[1], w.f[2], w.f[3], w.f[4], w.f[5]
        if b.nvj == 1:                                             # tau += mult Xi_k^T f_k + armature qddot
            if b.jtype == REVOLUTE:
                tau[b.iv] += b.mult * (b.Xi[3, 0] * f3 + b.Xi[4, 0] * f4 + b.Xi[5, 0] * f5)
            else:
                tau[b.iv] += b.mult * (b.Xi[0, 0] * f0 + b.Xi[1, 0] * f1 + b.Xi[2, 0] * f2)
            tau[b.iv] += b.armature[0] * a[b.iv]
        else:
            for j in range(b.nvj):
                x = 0.0
                for r in range(6):
                    x += b.Xi[r, j] * w.f[r]
                tau[b.iv + j] += b.mult * x
                tau[b.iv + j] += b.armature[j] * a[b.iv + j]
        if b.parent >= 0:                                          # f_p += Ad^-T_{p,k} f_k
            add6(work[b.parent].f, ad_inv_transpose_times(w.R_pk, w.p_pk, f0, f1, f2, f3, f4, f5))
    return 0


# ---- forward dynamics ---------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=CONTRACT)
def invert_spd(D, n, Dinv, A):
    """Dinv[:n, :n] <- D[:n, :n]^-1 (n > 1) by Gauss-Jordan in the scratch A (6, 12); False if D is singular (a joint
    that carries a subtree without mass or inertia)."""
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(D[i, i]))
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


@njit(cache=True, fastmath=CONTRACT, inline="always")
def one_dof_inward(b, w, tau):
    """Step k of paper 003, Algorithm 8.1's inward pass for a 1-DoF joint (Xi_k: one column, block e at row o):
        U = IA Xi,  D = Xi^T U + armature (a scalar),  u = tau - Xi^T pA,
    and for a non-root body Ia = IA - U D^-1 U^T and
        pa = pA + Ia c + U D^-1 u = pA + IA c + U D^-1 (u - U^T c).
    For the outward pass it keeps U and W = Ad^-T_{p,k} U (UD[:, 0], UD[:, 1]), D^-1 and u - U^T c (in u[0]), so
    that qdd = D^-1 (u - U^T a') with a' = Ad^-1 a_p + c is D^-1 (u - U^T c - W^T a_p): one dot product on the
    chain from a_p to qdd.  Returns False when D is singular (the test of invert_spd)."""
    o = 3 if b.jtype == REVOLUTE else 0                            # Xi_k = [0; e] revolute, [e; 0] prismatic
    e0, e1, e2 = b.Xi[o, 0], b.Xi[o + 1, 0], b.Xi[o + 2, 0]
    IA, U, c, pa = w.IA, w.UD, w.c, w.pa
    c0, c1, c2, c3, c4, c5 = c[0], c[1], c[2], c[3], c[4], c[5]
    for r in range(6):                                             # U = IA Xi, and IA c (into pa)
        U[r, 0] = IA[r, o] * e0 + IA[r, o + 1] * e1 + IA[r, o + 2] * e2
        pa[r] = IA[r, 0] * c0 + IA[r, 1] * c1 + IA[r, 2] * c2 + IA[r, 3] * c3 + IA[r, 4] * c4 + IA[r, 5] * c5
    D = e0 * U[o, 0] + e1 * U[o + 1, 0] + e2 * U[o + 2, 0]
    D += b.armature[0]
    if not abs(D) > 1e-12 * max(abs(D), 1e-300):
        return False
    Dinv = 1.0 / D
    w.Dinv[0, 0] = Dinv
    u0, u1, u2, u3, u4, u5 = U[0, 0], U[1, 0], U[2, 0], U[3, 0], U[4, 0], U[5, 0]
    U[0, 1], U[1, 1], U[2, 1], U[3, 1], U[4, 1], U[5, 1] = ad_inv_transpose_times(w.R_pk, w.p_pk, u0, u1, u2, u3,
                                                                                  u4, u5)
    u = tau[b.iv] - (e0 * w.pA[o] + e1 * w.pA[o + 1] + e2 * w.pA[o + 2]) - (
        (u0 * c0 + u1 * c1) + (u2 * c2 + u3 * c3) + (u4 * c4 + u5 * c5))
    w.u[0] = u                                                     # u - U^T c
    if b.parent < 0:
        return True
    t = Dinv * u
    for r in range(6):                                             # pa = pA + IA c + U D^-1 (u - U^T c)
        pa[r] += w.pA[r] + U[r, 0] * t
    for r in range(6):                                             # Ia = IA - (U D^-1) U^T, upper triangle
        g = U[r, 0] * Dinv                                         # (all add_transformed_inertia reads)
        for j in range(r, 6):
            w.Ia[r, j] = IA[r, j] - g * U[j, 0]
    return True


@njit(cache=True, fastmath=CONTRACT)
def multi_dof_inward(b, w, tau):
    """one_dof_inward for any Xi_k (6, n), without the W and u - U^T c it keeps: D (n, n) inverted by invert_spd,
    U D^-1 formed once (in GJ, after invert_spd has used it)."""
    n = b.nvj
    Ia, UDinv = w.Ia, w.GJ
    for c in range(n):                                             # U = IA Xi
        for r in range(6):
            s = 0.0
            for j in range(6):
                s += w.IA[r, j] * b.Xi[j, c]
            w.UD[r, c] = s
    for i in range(n):                                             # D = Xi^T U + diag(armature),
        for c in range(n):                                         # u = tau - Xi^T pA
            s = 0.0
            for r in range(6):
                s += b.Xi[r, i] * w.UD[r, c]
            Ia[i, c] = s                                           # D, kept in Ia's corner for a moment
        Ia[i, i] += b.armature[i]
        s = 0.0
        for r in range(6):
            s += b.Xi[r, i] * w.pA[r]
        w.u[i] = tau[b.iv + i] - s
    if not invert_spd(Ia, n, w.Dinv, w.GJ):
        return False
    if b.parent < 0:
        return True
    for i in range(n):                                             # uD = Dinv u
        s = 0.0
        for j in range(n):
            s += w.Dinv[i, j] * w.u[j]
        w.uD[i] = s
    for r in range(6):                                             # U Dinv
        for j in range(n):
            s = 0.0
            for i in range(n):
                s += w.UD[r, i] * w.Dinv[i, j]
            UDinv[r, j] = s
    for r in range(6):                                             # Ia = IA - (U Dinv) U^T
        for c in range(6):
            s = 0.0
            for i in range(n):
                s += UDinv[r, i] * w.UD[c, i]
            Ia[r, c] = w.IA[r, c] - s
    for r in range(6):                                             # pa = pA + Ia c + U Dinv u
        s = w.pA[r]
        for c in range(6):
            s += Ia[r, c] * w.c[c]
        for i in range(n):
            s += w.UD[r, i] * w.uD[i]
        w.pa[r] = s
    return True


@njit(cache=True, fastmath=CONTRACT)
def aba(bodies, work, gravity, q, v, tau, qdd, placed):
    """qdd <- M^-1 (tau - C v - g) by the articulated-body algorithm (no mimic joints).
    Returns 0, ERR_QUAT, or ERR_SINGULAR when a joint carries a subtree without inertia.  placed: T_{p,k} are
    already in the workspace (an outward pass has just run)."""
    status = placements_and_twists(bodies, work, q, v, placed)
    if status != 0:
        return status
    nb = bodies.shape[0]
    for k in range(nb):                                            # IA = Lambda, pA = -adj(v)^T Lambda v
        b, w = bodies[k], work[k]
        for r in range(6):                 # element by element: an array-to-array slice copy would make numba
            for c in range(6):             # compile its broadcasting error messages
                w.IA[r, c] = b.Lam[r, c]
        store6(w.pA, bias_force(b.pi, w.v))
    for k in range(nb - 1, -1, -1):                                # inward: U, D, u; IA_p, pA_p
        b, w = bodies[k], work[k]
        ok = one_dof_inward(b, w, tau) if b.nvj == 1 else multi_dof_inward(b, w, tau)
        if not ok:
            return ERR_SINGULAR
        if b.parent < 0:
            continue
        wp = work[b.parent]
        add_transformed_inertia(w.R_pk, w.p_pk, w.Ia, wp.IA)      # IA_p += Ad^-T Ia Ad^-1
        pa = w.pa                                                  # pA_p += Ad^-T pa
        add6(wp.pA, ad_inv_transpose_times(w.R_pk, w.p_pk, pa[0], pa[1], pa[2], pa[3], pa[4], pa[5]))
    for k in range(nb):                                            # a' = Ad^-1 a_p + c; qdd = Dinv (u - U^T a');
        b, w = bodies[k], work[k]                                  # a = a' + Xi qdd
        n = b.nvj
        if n == 1:                                                 # qdd = D^-1 (u - U^T c - W^T a_p), see
            W = w.UD[:, 1]                                         # one_dof_inward
            if b.parent < 0:                                       # a_world = gamma_0 = [-gravity; 0]
                s = -(W[0] * gravity[0] + W[1] * gravity[1] + W[2] * gravity[2])
            else:
                s = dot6(W, work[b.parent].a)
            s = w.Dinv[0, 0] * (w.u[0] - s)
            qdd[b.iv] = s
            a0, a1, a2, a3, a4, a5 = carried(bodies, work, k, gravity)
            if b.jtype == REVOLUTE:
                a3, a4, a5 = a3 + s * b.Xi[3, 0], a4 + s * b.Xi[4, 0], a5 + s * b.Xi[5, 0]
            else:
                a0, a1, a2 = a0 + s * b.Xi[0, 0], a1 + s * b.Xi[1, 0], a2 + s * b.Xi[2, 0]
            store6(w.a, (a0, a1, a2, a3, a4, a5))
            continue
        store6(w.a, carried(bodies, work, k, gravity))
        for i in range(n):
            s = w.u[i]
            for r in range(6):
                s -= w.UD[r, i] * w.a[r]
            w.uD[i] = s
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += w.Dinv[i, j] * w.uD[j]
            qdd[b.iv + i] = s
            for r in range(6):
                w.a[r] += b.Xi[r, i] * s
    return 0


# ---- entry points ---------------------------------------------------------------------------------------------
@njit(cache=True)
def inverse_dynamics(bodies, work, gravity, q, v, a, tau):
    """tau = M a + C v + g by Newton-Euler."""
    status = check_inputs((q, v, a))
    return status if status != 0 else rnea(bodies, work, gravity, q, v, a, tau)


@njit(cache=True)
def forward_dynamics(bodies, work, gravity, q, v, tau, qdd):
    """qdd = M^-1 (tau - C v - g) by the articulated-body algorithm."""
    status = check_inputs((q, v, tau))
    return status if status != 0 else aba(bodies, work, gravity, q, v, tau, qdd, False)
