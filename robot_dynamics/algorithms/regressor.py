"""The Slotine-Li regressor Y(q, qdot, qdot_r, qddot_r) with Y pi = M qddot_r + C qdot_r + g (paper 002, eq. (16)):

    Y = J^T blkdiag(A(alpha_k) - adj(v_k)^T A(J_k qdot_r)),
    alpha_k = J_k qddot_r + adj(v_k) J_k qdot_r + Jdot_k qdot_r + gamma_k          (remark 4)

In world coordinates, with U_k = Ad_{0,k} J_k qdot_r and P_k = Ad_{0,k} (J_k qddot_r + Jdot_k qdot_r + gamma_k),
eqs. (27)-(28) give the outward recursions U_k = U_p + S qdot_r and P_k = P_p + S qddot_r + Sdot qdot_r from
P_world = gamma_0, and Ad_{0,k} alpha_k = P_k (the adj(v_k) terms cancel).  The block of body k is formed in its
own frame -- A(.) is the momentum matrix of eq. (8), linear in the body's own parameters -- and mapped back to
the world as W_k = Ad_{0,k}^-T (A(alpha_k) - adj(v_k)^T A(u_k)); then Y[i, 10k:10k+10] = S_i^T W_k for every
coordinate i of k and its ancestors.
"""
from numba import njit

from .kinematics import scratch, to_body


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


@njit(cache=True)
def world_block(alpha, u, v, R, p, W):
    """W <- Ad_{0,k}^-T (A(alpha) - adj(v)^T A(u)), the regressor block of one body (module docstring), written
    out column by column.  alpha = [a; b], u = [c; d], v = [e; w] in the body frame; with A(x) of eqs. (10)-(12)
    (columns: m -> [x_v; 0], h_j -> [x_w x e_j; e_j x x_v], inertia -> [0; L_j(x_w)]) and
    adj(v)^T f = [-w x f_v; -e x f_v - w x f_w], the body-frame columns are
        m:        [a + w x c;  e x c]
        h_j:      [b x e_j + w x n_j;  e_j x a + e x n_j - w x (c x e_j)]      with n_j = d x e_j
        inertia:  [0;  L_j(b) + w x L_j(d)]
    and a body wrench [f; n] goes to the world as [R f; R n + p x R f]."""
    a0, a1, a2, b0, b1, b2 = alpha[0], alpha[1], alpha[2], alpha[3], alpha[4], alpha[5]
    c0, c1, c2, d0, d1, d2 = u[0], u[1], u[2], u[3], u[4], u[5]
    e0, e1, e2, w0, w1, w2 = v[0], v[1], v[2], v[3], v[4], v[5]
    for j in range(4):
        if j == 0:                                     # mass column
            f0, f1, f2 = a0 + w1 * c2 - w2 * c1, a1 + w2 * c0 - w0 * c2, a2 + w0 * c1 - w1 * c0
            n0, n1, n2 = e1 * c2 - e2 * c1, e2 * c0 - e0 * c2, e0 * c1 - e1 * c0
        else:                                          # first-moment column h_j, e_j the unit vector
            i = j - 1
            x0 = d1 if i == 2 else (-d2 if i == 1 else 0.0)       # n_j = d x e_j
            x1 = -d0 if i == 2 else (d2 if i == 0 else 0.0)
            x2 = d0 if i == 1 else (-d1 if i == 0 else 0.0)
            y0 = c1 if i == 2 else (-c2 if i == 1 else 0.0)       # c x e_j
            y1 = -c0 if i == 2 else (c2 if i == 0 else 0.0)
            y2 = c0 if i == 1 else (-c1 if i == 0 else 0.0)
            f0 = (b1 if i == 2 else (-b2 if i == 1 else 0.0)) + w1 * x2 - w2 * x1     # b x e_j + w x n_j
            f1 = (-b0 if i == 2 else (b2 if i == 0 else 0.0)) + w2 * x0 - w0 * x2
            f2 = (b0 if i == 1 else (-b1 if i == 0 else 0.0)) + w0 * x1 - w1 * x0
            n0 = (-a1 if i == 2 else (a2 if i == 1 else 0.0)) + e1 * x2 - e2 * x1 - (w1 * y2 - w2 * y1)
            n1 = (a0 if i == 2 else (-a2 if i == 0 else 0.0)) + e2 * x0 - e0 * x2 - (w2 * y0 - w0 * y2)
            n2 = (-a0 if i == 1 else (a1 if i == 0 else 0.0)) + e0 * x1 - e1 * x0 - (w0 * y1 - w1 * y0)
        F0 = R[0, 0] * f0 + R[0, 1] * f1 + R[0, 2] * f2
        F1 = R[1, 0] * f0 + R[1, 1] * f1 + R[1, 2] * f2
        F2 = R[2, 0] * f0 + R[2, 1] * f1 + R[2, 2] * f2
        W[0, j], W[1, j], W[2, j] = F0, F1, F2
        W[3, j] = R[0, 0] * n0 + R[0, 1] * n1 + R[0, 2] * n2 + p[1] * F2 - p[2] * F1
        W[4, j] = R[1, 0] * n0 + R[1, 1] * n1 + R[1, 2] * n2 + p[2] * F0 - p[0] * F2
        W[5, j] = R[2, 0] * n0 + R[2, 1] * n1 + R[2, 2] * n2 + p[0] * F1 - p[1] * F0
    for j in range(4, 10):                             # inertia columns: L_j of eq. (12), pure moments
        if j == 4:
            l0, l1, l2, m0, m1, m2 = b0, 0.0, 0.0, d0, 0.0, 0.0
        elif j == 5:
            l0, l1, l2, m0, m1, m2 = 0.0, b1, 0.0, 0.0, d1, 0.0
        elif j == 6:
            l0, l1, l2, m0, m1, m2 = 0.0, 0.0, b2, 0.0, 0.0, d2
        elif j == 7:
            l0, l1, l2, m0, m1, m2 = b1, b0, 0.0, d1, d0, 0.0
        elif j == 8:
            l0, l1, l2, m0, m1, m2 = b2, 0.0, b0, d2, 0.0, d0
        else:
            l0, l1, l2, m0, m1, m2 = 0.0, b2, b1, 0.0, d2, d1
        n0, n1, n2 = l0 + w1 * m2 - w2 * m1, l1 + w2 * m0 - w0 * m2, l2 + w0 * m1 - w1 * m0
        W[0, j], W[1, j], W[2, j] = 0.0, 0.0, 0.0
        W[3, j] = R[0, 0] * n0 + R[0, 1] * n1 + R[0, 2] * n2
        W[4, j] = R[1, 0] * n0 + R[1, 1] * n1 + R[1, 2] * n2
        W[5, j] = R[2, 0] * n0 + R[2, 1] * n1 + R[2, 2] * n2


@njit(cache=True)
def regressor_blocks(bodies, work, Y):
    """Y[:, 10k:10k+10] for every body k (eq. (16)); Y must be zeroed.  Needs reference_recursion.
    Y[i, 10k:10k+10] = S_i^T W_k, where the inertia columns of W_k are pure moments (no linear part)."""
    sc = scratch(work)
    alpha, u, v = sc.s6[1], sc.s6[2], sc.s6[3]
    for k in range(bodies.shape[0]):
        w = work[k]
        to_body(w.R0, w.p0, w.P, alpha)
        to_body(w.R0, w.p0, w.U, u)
        to_body(w.R0, w.p0, w.V, v)
        world_block(alpha, u, v, w.R0, w.p0, w.W)
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
