"""The Slotine-Li regressor Y(q, qdot, qdot_r, qddot_r) with Y pi = M qddot_r + C qdot_r + g (paper 002, eq. (16)):

    Y = J^T blkdiag(A(alpha_k) - adj(v_k)^T A(J_k qdot_r)),
    alpha_k = J_k qddot_r + adj(v_k) J_k qdot_r + Jdot_k qdot_r + gamma_k          (remark 4)

In world coordinates, with U_k = Ad_{0,k} J_k qdot_r and P_k = Ad_{0,k} (J_k qddot_r + Jdot_k qdot_r + gamma_k),
eqs. (27)-(28) give the outward recursions U_k = U_p + S qdot_r and P_k = P_p + S qddot_r + Sdot qdot_r from
P_world = gamma_0, and Ad_{0,k} alpha_k = P_k (the adj(v_k) terms cancel).  The block of body k is formed in its
own frame -- A(.) is the momentum matrix of eq. (8), linear in the body's own parameters -- and mapped back to
the world as W_k = Ad_{0,k}^-T (A(alpha_k) - adj(v_k)^T A(u_k)); then Y[i, 10k:10k+10] = S_i^T W_k for every
coordinate i of k and its ancestors.  reference.regressor writes eq. (16) as it stands.
M here is the rigid bodies' alone: a drive's armature term armature_i qddot_r,i is linear in the armature, not in
pi, and its column lives with the drives' parameters, not in Y (drives.py).
"""
import numpy as np
from numba import njit

from .kinematics import checked_pass
from .operators import ad_inv_times, cross, rotate, store6

WORK = [
    ("U", np.float64, (6,)), ("P", np.float64, (6,)),             # world J_k v_r and J_k a_r + Jdot_k v_r + gamma
    ("alpha", np.float64, (6,)), ("u_r", np.float64, (6,)),       # alpha_k and u_k = J_k v_r in the body frame
    ("v_k", np.float64, (6,)),                                    # the body's twist in its own frame
    ("W", np.float64, (6, 10)),                                   # regressor block in the world frame
]


@njit(cache=True)
def reference_recursion(bodies, work, gravity, v_ref, a_ref):
    """U_k and P_k of the module docstring, outward.  Needs outward_pass with rates."""
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        for r in range(6):
            if b.parent < 0:
                w.U[r] = 0.0
                w.P[r] = -gravity[r] if r < 3 else 0.0               # gamma_0
            else:
                w.U[r] = work[b.parent].U[r]
                w.P[r] = work[b.parent].P[r]
        for c in range(b.nvj):
            vr, ar = v_ref[b.iv + c], a_ref[b.iv + c]
            for r in range(6):
                w.U[r] += w.S[r, c] * vr
                w.P[r] += w.S[r, c] * ar + w.Sd[r, c] * vr


@njit(cache=True, inline="always")
def cross_unit(x0, x1, x2, j):
    """x x e_j, e_j the j-th unit vector."""
    if j == 0:
        return 0.0, x2, -x1
    if j == 1:
        return -x2, 0.0, x0
    return x1, -x0, 0.0


@njit(cache=True, inline="always")
def bar_column(j, x0, x1, x2):
    """Column j of the 3x6 matrix x-bar of eq. (12), I x = x-bar [I_xx, I_yy, I_zz, I_xy, I_xz, I_yz]."""
    if j == 0:
        return x0, 0.0, 0.0
    if j == 1:
        return 0.0, x1, 0.0
    if j == 2:
        return 0.0, 0.0, x2
    if j == 3:
        return x1, x0, 0.0
    if j == 4:
        return x2, 0.0, x0
    return 0.0, x2, x1


@njit(cache=True, forceinline=True)      # explicit: world_block, forced, would pass it on (operators.py)
def to_world_wrench(R, p, W, j, f0, f1, f2, n0, n1, n2):
    """W[:, j] <- Ad_{0,k}^-T [f; n] = [R f; R n + p x R f], the body wrench column in the world frame."""
    F0, F1, F2 = rotate(R, f0, f1, f2)
    N0, N1, N2 = rotate(R, n0, n1, n2)
    m0, m1, m2 = cross(p[0], p[1], p[2], F0, F1, F2)
    store6(W[:, j], (F0, F1, F2, N0 + m0, N1 + m1, N2 + m2))


@njit(cache=True, fastmath={"contract"}, forceinline=True)    # once per body: always inlined (operators.py)
def world_block(alpha, u, v, R, p, W):
    """W <- Ad_{0,k}^-T (A(alpha) - adj(v)^T A(u)), the regressor block of one body (module docstring), written
    out column by column.  alpha = [a; b], u = [c; d], v = [e; w] in the body frame; with A(x) of eqs. (10)-(12)
    (columns: m -> [x_v; 0], h_j -> [x_w x e_j; e_j x x_v], inertia -> [0; x_w-bar column]) and
    adj(v)^T f = [-w x f_v; -e x f_v - w x f_w], the body-frame columns are
        m:        [a + w x c;  e x c]
        h_j:      [b x e_j + w x (d x e_j);  e_j x a + e x (d x e_j) - w x (c x e_j)]
        inertia:  [0;  b-bar column + w x d-bar column]"""
    a0, a1, a2, b0, b1, b2 = alpha[0], alpha[1], alpha[2], alpha[3], alpha[4], alpha[5]
    c0, c1, c2, d0, d1, d2 = u[0], u[1], u[2], u[3], u[4], u[5]
    e0, e1, e2, w0, w1, w2 = v[0], v[1], v[2], v[3], v[4], v[5]
    x0, x1, x2 = cross(w0, w1, w2, c0, c1, c2)                     # mass column
    n0, n1, n2 = cross(e0, e1, e2, c0, c1, c2)
    to_world_wrench(R, p, W, 0, a0 + x0, a1 + x1, a2 + x2, n0, n1, n2)
    for j in range(3):                                             # first-moment columns h_j
        m0, m1, m2 = cross_unit(d0, d1, d2, j)                     # d x e_j
        y0, y1, y2 = cross_unit(c0, c1, c2, j)                     # c x e_j
        f0, f1, f2 = cross_unit(b0, b1, b2, j)                     # b x e_j
        k0, k1, k2 = cross_unit(a0, a1, a2, j)                     # a x e_j = -(e_j x a)
        g0, g1, g2 = cross(w0, w1, w2, m0, m1, m2)
        l0, l1, l2 = cross(e0, e1, e2, m0, m1, m2)
        o0, o1, o2 = cross(w0, w1, w2, y0, y1, y2)
        to_world_wrench(R, p, W, 1 + j, f0 + g0, f1 + g1, f2 + g2, l0 - k0 - o0, l1 - k1 - o1, l2 - k2 - o2)
    for j in range(6):                                             # inertia columns: pure moments, [0; R n]
        l0, l1, l2 = bar_column(j, b0, b1, b2)
        m0, m1, m2 = bar_column(j, d0, d1, d2)
        x0, x1, x2 = cross(w0, w1, w2, m0, m1, m2)
        N0, N1, N2 = rotate(R, l0 + x0, l1 + x1, l2 + x2)
        store6(W[:, 4 + j], (0.0, 0.0, 0.0, N0, N1, N2))


@njit(cache=True)
def to_body_frame(w, x, out):
    """out <- Ad_{0,k}^-1 x: the world twist x in the frame of the body whose workspace record is w."""
    store6(out, ad_inv_times(w.R0, w.p0, x))


@njit(cache=True)
def regressor_blocks(bodies, work, Y):
    """Y[:, 10k:10k+10] for every body k (eq. (16)); Y must be zeroed.  Needs reference_recursion.
    Y[i, 10k:10k+10] = S_i^T W_k, where the inertia columns of W_k are pure moments (no linear part)."""
    for k in range(bodies.shape[0]):
        w = work[k]
        to_body_frame(w, w.P, w.alpha)
        to_body_frame(w, w.U, w.u_r)
        to_body_frame(w, w.V, w.v_k)
        world_block(w.alpha, w.u_r, w.v_k, w.R0, w.p0, w.W)
        W = w.W
        a = k
        while a >= 0:
            ba, wa = bodies[a], work[a]
            for t in range(ba.nvj):
                S = wa.S[:, t]
                row = Y[ba.iv + t]
                c0 = 10 * k
                for i in range(4):
                    row[c0 + i] += (S[0] * W[0, i] + S[1] * W[1, i] + S[2] * W[2, i]
                                    + S[3] * W[3, i] + S[4] * W[4, i] + S[5] * W[5, i])
                for i in range(4, 10):
                    row[c0 + i] += S[3] * W[3, i] + S[4] * W[4, i] + S[5] * W[5, i]
            a = ba.parent


@njit(cache=True, inline="always")
def regressor_after_pass(bodies, work, gravity, v_ref, a_ref, Y):
    """Y (eq. (16)) from the poses, axes and rates an outward pass with rates left in work."""
    Y[:, :] = 0.0
    reference_recursion(bodies, work, gravity, v_ref, a_ref)
    regressor_blocks(bodies, work, Y)


@njit(cache=True)
def regressor(bodies, work, gravity, q, v, v_ref, a_ref, Y):
    """The Slotine-Li Y(q, v, v_ref, a_ref) alone (paper 002, eq. (16))."""
    status = checked_pass(bodies, work, (q, v, v_ref, a_ref), q, v, True)
    if status == 0:
        regressor_after_pass(bodies, work, gravity, v_ref, a_ref, Y)
    return status
