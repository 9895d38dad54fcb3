"""O(n) inverse and forward dynamics in body coordinates, [linear; angular] as paper 002.

Inverse dynamics, the recursive Newton-Euler algorithm (paper 001, eqs. (22)-(27); paper 004, (9.53)-(9.57)):
    outward:  v_k = Ad^-1_{p,k} v_p + xi_k
              a_k = Ad^-1_{p,k} a_p + Xi_k qddot + adj(v_k) xi_k          (a_world = gamma_0 = [-gravity; 0])
              f_k = Lambda_k a_k - adj(v_k)^T Lambda_k v_k                paper 002, eq. (2)
    inward:   tau_k = Xi_k^T f_k,   f_p += Ad^-T_{p,k} f_k
It shares only the joint kinematics with the closed-form matrices, so tau = M a + C v + g is a real check.

Forward dynamics, the articulated-body algorithm (paper 003, Algorithm 8.1; Featherstone's ABA) with the same
operators: articulated inertias IA_k and bias forces pA_k inward, accelerations outward.

How the kernels are written (they are timed against Pinocchio):
- A 1-DoF joint (revolute or prismatic, by far the most common) has the single column Xi_k = [0; e] or [e; 0]
  (model._motion_subspace): its products with Xi_k touch one 3-block, D_k is a scalar, and it takes written-out
  paths; planar and free joints take the general loops.
- The spatial algebra is written out on scalars (kinematics' tuple helpers and those below return tuples,
  which stay in registers), and the helpers are inlined into the kernels (inline="always"): a numba call that
  is not inlined reference-counts each array argument.
- Multiply-adds are fused (CONTRACT).
"""
from numba import njit

from ..model import REVOLUTE
from .kinematics import (ERR_QUAT, ERR_SINGULAR, ad_apply, body_coordinates, cross, dot6, inertia_times, placement,
                         scratch)

# Let LLVM fuse a * b + c into one fused multiply-add (one rounding instead of two, and about a third fewer
# floating-point instructions here); no other fast-math liberty: NaN and inf behave as IEEE 754 says.
CONTRACT = {"contract"}


# ---- fixed-size algebra on scalars --------------------------------------------------------------------------
@njit(cache=True, fastmath=CONTRACT, inline="always")
def store6(out, x0, x1, x2, x3, x4, x5):
    """out <- (x0, ..., x5)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = x0, x1, x2, x3, x4, x5


@njit(cache=True, fastmath=CONTRACT, inline="always")
def add6(out, x0, x1, x2, x3, x4, x5):
    """out += (x0, ..., x5)."""
    out[0], out[1], out[2] = out[0] + x0, out[1] + x1, out[2] + x2
    out[3], out[4], out[5] = out[3] + x3, out[4] + x4, out[5] + x5


@njit(cache=True, fastmath=CONTRACT, inline="always")
def wrench_to_parent(R, p, f0, f1, f2, f3, f4, f5):
    """Ad^-T_{p,k} f = [R f_v; R f_w + p x R f_v], a body wrench in the parent's frame, as a 6-tuple."""
    g0 = R[0, 0] * f0 + R[0, 1] * f1 + R[0, 2] * f2
    g1 = R[1, 0] * f0 + R[1, 1] * f1 + R[1, 2] * f2
    g2 = R[2, 0] * f0 + R[2, 1] * f1 + R[2, 2] * f2
    m0, m1, m2 = cross(p[0], p[1], p[2], g0, g1, g2)
    return (g0, g1, g2, R[0, 0] * f3 + R[0, 1] * f4 + R[0, 2] * f5 + m0,
            R[1, 0] * f3 + R[1, 1] * f4 + R[1, 2] * f5 + m1, R[2, 0] * f3 + R[2, 1] * f4 + R[2, 2] * f5 + m2)


@njit(cache=True, fastmath=CONTRACT, inline="always")
def bias_force(pi, v):
    """-adj(v)^T Lambda v = [w x l; v_v x l + w x k] with [l; k] = Lambda v, w = v_w: the velocity term of
    paper 002, eq. (2), as a 6-tuple."""
    v0, v1, v2, v3, v4, v5 = v[0], v[1], v[2], v[3], v[4], v[5]
    l0, l1, l2, k0, k1, k2 = inertia_times(pi, v0, v1, v2, v3, v4, v5)
    f0, f1, f2 = cross(v3, v4, v5, l0, l1, l2)
    g0, g1, g2 = cross(v0, v1, v2, l0, l1, l2)
    e0, e1, e2 = cross(v3, v4, v5, k0, k1, k2)
    return f0, f1, f2, g0 + e0, g1 + e1, g2 + e2


# ---- the outward kinematics both algorithms share --------------------------------------------------------------
@njit(cache=True, fastmath=CONTRACT)
def placements_and_twists(bodies, work, q, v):
    """T_{p,k} and the body twists v_k, xi-products c_k = adj(v_k) xi_k.  Returns 0 or ERR_QUAT."""
    sc = scratch(work)
    RJ, pJ, xi = sc.s33, sc.s3, sc.s6[0]
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        if placement(b, q, RJ, pJ, w.R_pk, w.p_pk) != 0:
            return ERR_QUAT
        if b.parent < 0:
            v0, v1, v2, v3, v4, v5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        else:                                                      # v_k = Ad^-1 v_p + xi_k, eq. (26)
            v0, v1, v2, v3, v4, v5 = body_coordinates(w.R_pk, w.p_pk, work[b.parent].v)
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
            store6(w.v, v0, v1, v2, v3, v4, v5)
            store6(w.c, c0, c1, c2, c3, c4, c5)
        else:
            store6(w.v, v0, v1, v2, v3, v4, v5)
            for r in range(6):
                x = 0.0
                for j in range(b.nvj):
                    x += b.Xi[r, j] * v[b.iv + j]
                xi[r] = b.mult * x
                w.v[r] += xi[r]
            ad_apply(w.v, xi, w.c)                                 # adj(v_k) xi_k
    return 0


@njit(cache=True, fastmath=CONTRACT)
def gravity_acceleration(gravity, gamma0):
    """gamma0 <- [-gravity; 0]: the world's fictitious acceleration that brings in the weights."""
    for r in range(3):
        gamma0[r] = -gravity[r]
        gamma0[3 + r] = 0.0


@njit(cache=True, fastmath=CONTRACT, inline="always")
def carried(bodies, work, k, gamma0):
    """Ad^-1_{p,k} a_p + adj(v_k) xi_k as a 6-tuple (a_world = gamma_0); see carried_acceleration."""
    b, w = bodies[k], work[k]
    if b.parent < 0:
        a0, a1, a2, a3, a4, a5 = body_coordinates(w.R_pk, w.p_pk, gamma0)
    else:
        a0, a1, a2, a3, a4, a5 = body_coordinates(w.R_pk, w.p_pk, work[b.parent].a)
    c = w.c
    return a0 + c[0], a1 + c[1], a2 + c[2], a3 + c[3], a4 + c[4], a5 + c[5]


@njit(cache=True, fastmath=CONTRACT, inline="always")
def carried_acceleration(bodies, work, k, gamma0):
    """a_k <- Ad^-1_{p,k} a_p + adj(v_k) xi_k: the parent's acceleration carried into body k (a_world = gamma_0),
    before the joint's own acceleration is added."""
    a0, a1, a2, a3, a4, a5 = carried(bodies, work, k, gamma0)
    store6(work[k].a, a0, a1, a2, a3, a4, a5)


# ---- inverse dynamics ---------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=CONTRACT)
def rnea(bodies, work, gravity, q, v, a, tau):
    """tau <- M(q) a + C(q, v) v + g(q).  Returns 0 or ERR_QUAT."""
    status = placements_and_twists(bodies, work, q, v)
    if status != 0:
        return status
    sc = scratch(work)
    gamma0 = sc.s6[1]
    gravity_acceleration(gravity, gamma0)
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        # a_k = Ad^-1 a_p + adj(v_k) xi_k + mult Xi_k qddot
        a0, a1, a2, a3, a4, a5 = carried(bodies, work, k, gamma0)
        if b.nvj == 1:
            s = b.mult * a[b.iv]
            if b.jtype == REVOLUTE:
                a3, a4, a5 = a3 + s * b.Xi[3, 0], a4 + s * b.Xi[4, 0], a5 + s * b.Xi[5, 0]
            else:
                a0, a1, a2 = a0 + s * b.Xi[0, 0], a1 + s * b.Xi[1, 0], a2 + s * b.Xi[2, 0]
            store6(w.a, a0, a1, a2, a3, a4, a5)
        else:
            store6(w.a, a0, a1, a2, a3, a4, a5)
            for r in range(6):
                for j in range(b.nvj):
                    w.a[r] += b.Xi[r, j] * b.mult * a[b.iv + j]
            a0, a1, a2, a3, a4, a5 = w.a[0], w.a[1], w.a[2], w.a[3], w.a[4], w.a[5]
        l0, l1, l2, l3, l4, l5 = inertia_times(b.pi, a0, a1, a2, a3, a4, a5)
        f0, f1, f2, f3, f4, f5 = bias_force(b.pi, w.v)             # f = Lambda a - adj(v)^T Lambda v,
        store6(w.f, l0 + f0, l1 + f1, l2 + f2, l3 + f3, l4 + f4, l5 + f5)   # paper 002, eq. (2)
    for i in range(tau.shape[0]):
        tau[i] = 0.0
    for k in range(bodies.shape[0] - 1, -1, -1):
        b, w = bodies[k], work[k]
        f0, f1, f2, f3, f4, f5 = w.f[0], w.f[1], w.f[2], w.f[3], w.f[4], w.f[5]
        if b.nvj == 1:                                             # tau += mult Xi_k^T f_k
            if b.jtype == REVOLUTE:
                tau[b.iv] += b.mult * (b.Xi[3, 0] * f3 + b.Xi[4, 0] * f4 + b.Xi[5, 0] * f5)
            else:
                tau[b.iv] += b.mult * (b.Xi[0, 0] * f0 + b.Xi[1, 0] * f1 + b.Xi[2, 0] * f2)
        else:
            for j in range(b.nvj):
                x = 0.0
                for r in range(6):
                    x += b.Xi[r, j] * w.f[r]
                tau[b.iv + j] += b.mult * x
        if b.parent >= 0:                                          # f_p += Ad^-T_{p,k} f_k
            g0, g1, g2, g3, g4, g5 = wrench_to_parent(w.R_pk, w.p_pk, f0, f1, f2, f3, f4, f5)
            add6(work[b.parent].f, g0, g1, g2, g3, g4, g5)
    return 0


# ---- forward dynamics ---------------------------------------------------------------------------------------------
@njit(cache=True, fastmath=CONTRACT)
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


@njit(cache=True, fastmath=CONTRACT, inline="always")
def rotated_block(R, M, i0, j0):
    """R B R^T for B = M[i0:i0+3, j0:j0+3], row by row as a 9-tuple."""
    m00, m01, m02 = M[i0, j0], M[i0, j0 + 1], M[i0, j0 + 2]
    m10, m11, m12 = M[i0 + 1, j0], M[i0 + 1, j0 + 1], M[i0 + 1, j0 + 2]
    m20, m21, m22 = M[i0 + 2, j0], M[i0 + 2, j0 + 1], M[i0 + 2, j0 + 2]
    r00, r01, r02 = R[0, 0], R[0, 1], R[0, 2]
    r10, r11, r12 = R[1, 0], R[1, 1], R[1, 2]
    r20, r21, r22 = R[2, 0], R[2, 1], R[2, 2]
    t00 = r00 * m00 + r01 * m10 + r02 * m20                        # T = R B
    t01 = r00 * m01 + r01 * m11 + r02 * m21
    t02 = r00 * m02 + r01 * m12 + r02 * m22
    t10 = r10 * m00 + r11 * m10 + r12 * m20
    t11 = r10 * m01 + r11 * m11 + r12 * m21
    t12 = r10 * m02 + r11 * m12 + r12 * m22
    t20 = r20 * m00 + r21 * m10 + r22 * m20
    t21 = r20 * m01 + r21 * m11 + r22 * m21
    t22 = r20 * m02 + r21 * m12 + r22 * m22
    return (t00 * r00 + t01 * r01 + t02 * r02, t00 * r10 + t01 * r11 + t02 * r12, t00 * r20 + t01 * r21 + t02 * r22,
            t10 * r00 + t11 * r01 + t12 * r02, t10 * r10 + t11 * r11 + t12 * r12, t10 * r20 + t11 * r21 + t12 * r22,
            t20 * r00 + t21 * r01 + t22 * r02, t20 * r10 + t21 * r11 + t22 * r12, t20 * r20 + t21 * r21 + t22 * r22)


@njit(cache=True, fastmath=CONTRACT, inline="always")
def rotated_sym(R, M, i0):
    """R S R^T for the symmetric S = M[i0:i0+3, i0:i0+3] read from its upper triangle; the upper triangle of the
    result (00, 01, 02, 11, 12, 22) as a 6-tuple."""
    m00, m01, m02 = M[i0, i0], M[i0, i0 + 1], M[i0, i0 + 2]
    m11, m12, m22 = M[i0 + 1, i0 + 1], M[i0 + 1, i0 + 2], M[i0 + 2, i0 + 2]
    r00, r01, r02 = R[0, 0], R[0, 1], R[0, 2]
    r10, r11, r12 = R[1, 0], R[1, 1], R[1, 2]
    r20, r21, r22 = R[2, 0], R[2, 1], R[2, 2]
    t00 = r00 * m00 + r01 * m01 + r02 * m02                        # T = R S
    t01 = r00 * m01 + r01 * m11 + r02 * m12
    t02 = r00 * m02 + r01 * m12 + r02 * m22
    t10 = r10 * m00 + r11 * m01 + r12 * m02
    t11 = r10 * m01 + r11 * m11 + r12 * m12
    t12 = r10 * m02 + r11 * m12 + r12 * m22
    t20 = r20 * m00 + r21 * m01 + r22 * m02
    t21 = r20 * m01 + r21 * m11 + r22 * m12
    t22 = r20 * m02 + r21 * m12 + r22 * m22
    return (t00 * r00 + t01 * r01 + t02 * r02, t00 * r10 + t01 * r11 + t02 * r12, t00 * r20 + t01 * r21 + t02 * r22,
            t10 * r10 + t11 * r11 + t12 * r12, t10 * r20 + t11 * r21 + t12 * r22, t20 * r20 + t21 * r21 + t22 * r22)


@njit(cache=True, fastmath=CONTRACT, inline="always")
def add_sym3(M, i0, x00, x01, x02, x11, x12, x22):
    """M[i0:i0+3, i0:i0+3] += the symmetric 3x3 given by its upper triangle."""
    M[i0, i0] += x00
    M[i0, i0 + 1] += x01
    M[i0, i0 + 2] += x02
    M[i0 + 1, i0] += x01
    M[i0 + 1, i0 + 1] += x11
    M[i0 + 1, i0 + 2] += x12
    M[i0 + 2, i0] += x02
    M[i0 + 2, i0 + 1] += x12
    M[i0 + 2, i0 + 2] += x22


@njit(cache=True, fastmath=CONTRACT, inline="always")
def add_offdiagonal(M, x00, x01, x02, x10, x11, x12, x20, x21, x22):
    """M[0:3, 3:6] += X and M[3:6, 0:3] += X^T."""
    M[0, 3], M[0, 4], M[0, 5] = M[0, 3] + x00, M[0, 4] + x01, M[0, 5] + x02
    M[1, 3], M[1, 4], M[1, 5] = M[1, 3] + x10, M[1, 4] + x11, M[1, 5] + x12
    M[2, 3], M[2, 4], M[2, 5] = M[2, 3] + x20, M[2, 4] + x21, M[2, 5] + x22
    M[3, 0], M[3, 1], M[3, 2] = M[3, 0] + x00, M[3, 1] + x10, M[3, 2] + x20
    M[4, 0], M[4, 1], M[4, 2] = M[4, 0] + x01, M[4, 1] + x11, M[4, 2] + x21
    M[5, 0], M[5, 1], M[5, 2] = M[5, 0] + x02, M[5, 1] + x12, M[5, 2] + x22


@njit(cache=True, fastmath=CONTRACT, inline="always")
def congruence_to_parent(R, p, Ia, IAp):
    """IAp += Ad^-T_{p,k} Ia Ad^-1_{p,k}: a symmetric articulated inertia of body k (only its upper triangle is
    read) added in its parent's frame -- paper 003, Algorithm 8.1's I^A_p += X^T I^a X, written out by blocks.

    With Ad^-1_{p,k} = [[R^T, -R^T P], [0, R^T]] (P = p x) and Ia = [[A, B], [B^T, C]], rotate the blocks first,
    A' = R A R^T, B' = R B R^T, C' = R C R^T, then shift (P^T = -P):
        Ad^-T Ia Ad^-1 = [[A', B' - A' P], [(B' - A' P)^T, C' + P B' + (P B')^T - P A' P]]."""
    a00, a01, a02, a11, a12, a22 = rotated_sym(R, Ia, 0)
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = rotated_block(R, Ia, 0, 3)
    c00, c01, c02, c11, c12, c22 = rotated_sym(R, Ia, 3)
    p0, p1, p2 = p[0], p[1], p[2]
    n00, n01, n02 = cross(a00, a01, a02, p0, p1, p2)               # N = A' P: row i of N = row i of A' x p
    n10, n11, n12 = cross(a01, a11, a12, p0, p1, p2)
    n20, n21, n22 = cross(a02, a12, a22, p0, p1, p2)
    k00, k10, k20 = cross(p0, p1, p2, b00, b10, b20)               # K = P B': column j of K = p x column j of B'
    k01, k11, k21 = cross(p0, p1, p2, b01, b11, b21)
    k02, k12, k22 = cross(p0, p1, p2, b02, b12, b22)
    l00, _, _ = cross(p0, p1, p2, n00, n10, n20)                   # L = P N = P A' P (symmetric): its upper half
    l01, l11, _ = cross(p0, p1, p2, n01, n11, n21)
    l02, l12, l22 = cross(p0, p1, p2, n02, n12, n22)
    add_sym3(IAp, 0, a00, a01, a02, a11, a12, a22)
    add_offdiagonal(IAp, b00 - n00, b01 - n01, b02 - n02, b10 - n10, b11 - n11, b12 - n12, b20 - n20, b21 - n21,
                    b22 - n22)
    add_sym3(IAp, 3, c00 + 2.0 * k00 - l00, c01 + k01 + k10 - l01, c02 + k02 + k20 - l02, c11 + 2.0 * k11 - l11,
             c12 + k12 + k21 - l12, c22 + 2.0 * k22 - l22)


@njit(cache=True, fastmath=CONTRACT, inline="always")
def one_dof_inward(b, w, tau, Ia, pa):
    """Step k of paper 003, Algorithm 8.1's inward pass for a 1-DoF joint (Xi_k: one column, block e at row o):
        U = IA Xi,  D = Xi^T U (a scalar),  u = tau - Xi^T pA,
    and for a non-root body Ia = IA - U D^-1 U^T (its upper triangle, into the scratch Ia) and
        pa = pA + Ia c + U D^-1 u = pA + IA c + U D^-1 (u - U^T c).
    For the outward pass it keeps U and W = Ad^-T_{p,k} U (UD[:, 0], UD[:, 1]), D^-1 and u - U^T c (in u[0]), so
    that qdd = D^-1 (u - U^T a') with a' = Ad^-1 a_p + c is D^-1 (u - U^T c - W^T a_p): one dot product on the
    chain from a_p to qdd.  Returns False when D is singular (the test of invert_spd)."""
    o = 3 if b.jtype == REVOLUTE else 0                            # Xi_k = [0; e] revolute, [e; 0] prismatic
    e0, e1, e2 = b.Xi[o, 0], b.Xi[o + 1, 0], b.Xi[o + 2, 0]
    IA, U, c = w.IA, w.UD, w.c
    c0, c1, c2, c3, c4, c5 = c[0], c[1], c[2], c[3], c[4], c[5]
    for r in range(6):                                             # U = IA Xi, and IA c (into pa)
        U[r, 0] = IA[r, o] * e0 + IA[r, o + 1] * e1 + IA[r, o + 2] * e2
        pa[r] = IA[r, 0] * c0 + IA[r, 1] * c1 + IA[r, 2] * c2 + IA[r, 3] * c3 + IA[r, 4] * c4 + IA[r, 5] * c5
    D = e0 * U[o, 0] + e1 * U[o + 1, 0] + e2 * U[o + 2, 0]
    if not abs(D) > 1e-12 * max(abs(D), 1e-300):
        return False
    Dinv = 1.0 / D
    w.Dinv[0, 0] = Dinv
    u0, u1, u2, u3, u4, u5 = U[0, 0], U[1, 0], U[2, 0], U[3, 0], U[4, 0], U[5, 0]
    U[0, 1], U[1, 1], U[2, 1], U[3, 1], U[4, 1], U[5, 1] = wrench_to_parent(w.R_pk, w.p_pk, u0, u1, u2, u3, u4, u5)
    u = tau[b.iv] - (e0 * w.pA[o] + e1 * w.pA[o + 1] + e2 * w.pA[o + 2]) - (
        (u0 * c0 + u1 * c1) + (u2 * c2 + u3 * c3) + (u4 * c4 + u5 * c5))
    w.u[0] = u                                                     # u - U^T c
    if b.parent < 0:
        return True
    t = Dinv * u
    for r in range(6):                                             # pa = pA + IA c + U D^-1 (u - U^T c)
        pa[r] += w.pA[r] + U[r, 0] * t
    for r in range(6):                                             # Ia = IA - (U D^-1) U^T, upper triangle
        g = U[r, 0] * Dinv
        for j in range(r, 6):
            Ia[r, j] = IA[r, j] - g * U[j, 0]
    return True


@njit(cache=True, fastmath=CONTRACT)
def multi_dof_inward(b, w, tau, Ia, pa, UDinv, uD):
    """one_dof_inward for any Xi_k (6, n), without the W and u - U^T c it keeps: D (n, n) inverted by invert_spd,
    U D^-1 formed once (UDinv: the (6, 12) scratch, invert_spd's first; uD: a 6-vector scratch)."""
    n = b.nvj
    for c in range(n):                                             # U = IA Xi
        for r in range(6):
            s = 0.0
            for j in range(6):
                s += w.IA[r, j] * b.Xi[j, c]
            w.UD[r, c] = s
    for i in range(n):                                             # D = Xi^T U, u = tau - Xi^T pA
        for c in range(n):
            s = 0.0
            for r in range(6):
                s += b.Xi[r, i] * w.UD[r, c]
            Ia[i, c] = s                                           # D, kept in Ia's corner for a moment
        s = 0.0
        for r in range(6):
            s += b.Xi[r, i] * w.pA[r]
        w.u[i] = tau[b.iv + i] - s
    if not invert_spd(Ia, n, w.Dinv, UDinv):
        return False
    if b.parent < 0:
        return True
    for i in range(n):                                             # uD = Dinv u
        s = 0.0
        for j in range(n):
            s += w.Dinv[i, j] * w.u[j]
        uD[i] = s
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
            s += w.UD[r, i] * uD[i]
        pa[r] = s
    return True


@njit(cache=True, fastmath=CONTRACT)
def aba(bodies, work, gravity, q, v, tau, qdd):
    """qdd <- M^-1 (tau - C v - g) by the articulated-body algorithm (no mimic joints).
    Returns 0, ERR_QUAT, or ERR_SINGULAR when a joint carries a subtree without inertia."""
    status = placements_and_twists(bodies, work, q, v)
    if status != 0:
        return status
    nb = bodies.shape[0]
    sc = scratch(work)
    pa, uD, gamma0 = sc.s6[3], sc.s6[4], sc.s6[5]
    Ia, gj = sc.s66, sc.s612                                       # gj: invert_spd's, then U Dinv
    for k in range(nb):                                            # IA = Lambda, pA = -adj(v)^T Lambda v
        b, w = bodies[k], work[k]
        for r in range(6):                 # element by element: an array-to-array slice copy would make numba
            for c in range(6):             # compile its broadcasting error messages
                w.IA[r, c] = b.Lam[r, c]
        w.pA[0], w.pA[1], w.pA[2], w.pA[3], w.pA[4], w.pA[5] = bias_force(b.pi, w.v)
    for k in range(nb - 1, -1, -1):                                # inward: U, D, u; IA_p, pA_p
        b, w = bodies[k], work[k]
        if b.nvj == 1:
            ok = one_dof_inward(b, w, tau, Ia, pa)
        else:
            ok = multi_dof_inward(b, w, tau, Ia, pa, gj, uD)
        if not ok:
            return ERR_SINGULAR
        if b.parent < 0:
            continue
        wp = work[b.parent]
        congruence_to_parent(w.R_pk, w.p_pk, Ia, wp.IA)            # IA_p += Ad^-T Ia Ad^-1
        g0, g1, g2, g3, g4, g5 = wrench_to_parent(w.R_pk, w.p_pk, pa[0], pa[1], pa[2], pa[3], pa[4], pa[5])
        add6(wp.pA, g0, g1, g2, g3, g4, g5)                        # pA_p += Ad^-T pa
    gravity_acceleration(gravity, gamma0)
    for k in range(nb):                                            # a' = Ad^-1 a_p + c; qdd = Dinv (u - U^T a');
        b, w = bodies[k], work[k]                                  # a = a' + Xi qdd
        n = b.nvj
        if n == 1:                                                 # qdd = D^-1 (u - U^T c - W^T a_p), see
            W = w.UD[:, 1]                                         # one_dof_inward
            s = dot6(W, gamma0) if b.parent < 0 else dot6(W, work[b.parent].a)
            s = w.Dinv[0, 0] * (w.u[0] - s)
            qdd[b.iv] = s
            a0, a1, a2, a3, a4, a5 = carried(bodies, work, k, gamma0)
            if b.jtype == REVOLUTE:
                a3, a4, a5 = a3 + s * b.Xi[3, 0], a4 + s * b.Xi[4, 0], a5 + s * b.Xi[5, 0]
            else:
                a0, a1, a2 = a0 + s * b.Xi[0, 0], a1 + s * b.Xi[1, 0], a2 + s * b.Xi[2, 0]
            store6(w.a, a0, a1, a2, a3, a4, a5)
            continue
        carried_acceleration(bodies, work, k, gamma0)
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
