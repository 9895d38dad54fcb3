"""M, C, g, the CoM and its Jacobian (paper 002, eqs. (6a)-(6c), (7)), summed per subtree.

With the world-frame axes S of kinematics.py, J_k = Ad_{0,k}^-1 [S_i]_{i in anc(k)} and eq. (6) becomes
    M = sum_k J_k^T Lambda_k J_k                              -> M_ij = S_i^T Ic_d S_j
    C = sum_k J_k^T [Psi_k J_k + Lambda_k Jdot_k]            -> C_ij = S_i^T (-Bc_d S_j + Ic_d Sdot_j)
    g = sum_k J_k^T Lambda_k Ad_{0,k}^-1 gamma_0             -> g_i  = S_i^T Ic_i gamma_0
    J_com = (1/m) P^T Lambda J                               -> J_com[:, i] = (Ic_i S_i)_linear / m
for every pair of coordinates i, j of which one (owned by body d) lies in the subtree of the other, where
Ic_d = sum of Lambda_k^w = Ad^-T Lambda_k Ad^-1 over the subtree of d (the composite inertia), and
Bc_d = sum of ad(V_k)^T Lambda_k^w over the same subtree.  The C form follows from Psi_k J_k + Lambda_k Jdot_k =
Ad^-1 (-ad(V_k)^T Lambda^w_k S + Lambda^w_k Sdot) in world coordinates: the Lambda adj terms of eq. (6b) cancel
against those of eq. (28).  C is exactly eq. (6b), so Mdot = C + C^T holds (remark 5).  Each coordinate pair
costs one 6-vector product: the cost grows with the depth of the tree, not with the square of the DoFs.
"""
from numba import njit

from .kinematics import dot6, inertia_apply, scratch


@njit(cache=True)
def world_parameters(pi, R, p, out):
    """out <- pi of a body posed at (R, p), in world coordinates (spatial.transform_parameters, no allocation):
    h' = R h + m p,  I' = R I R^T + m (|p|^2 E - p p^T) + 2 (p.h) E - p h^T - h p^T  with h = R h_body."""
    m = pi[0]
    a00, a11, a22, a01, a02, a12 = pi[4], pi[5], pi[6], pi[7], pi[8], pi[9]
    # T = R I (rows of R times the symmetric I)
    t00 = R[0, 0] * a00 + R[0, 1] * a01 + R[0, 2] * a02
    t01 = R[0, 0] * a01 + R[0, 1] * a11 + R[0, 2] * a12
    t02 = R[0, 0] * a02 + R[0, 1] * a12 + R[0, 2] * a22
    t10 = R[1, 0] * a00 + R[1, 1] * a01 + R[1, 2] * a02
    t11 = R[1, 0] * a01 + R[1, 1] * a11 + R[1, 2] * a12
    t12 = R[1, 0] * a02 + R[1, 1] * a12 + R[1, 2] * a22
    t20 = R[2, 0] * a00 + R[2, 1] * a01 + R[2, 2] * a02
    t21 = R[2, 0] * a01 + R[2, 1] * a11 + R[2, 2] * a12
    t22 = R[2, 0] * a02 + R[2, 1] * a12 + R[2, 2] * a22
    h0 = R[0, 0] * pi[1] + R[0, 1] * pi[2] + R[0, 2] * pi[3]
    h1 = R[1, 0] * pi[1] + R[1, 1] * pi[2] + R[1, 2] * pi[3]
    h2 = R[2, 0] * pi[1] + R[2, 1] * pi[2] + R[2, 2] * pi[3]
    p0, p1, p2 = p[0], p[1], p[2]
    diag = m * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * h0 + p1 * h1 + p2 * h2)
    out[0] = m
    out[1], out[2], out[3] = h0 + m * p0, h1 + m * p1, h2 + m * p2
    out[4] = t00 * R[0, 0] + t01 * R[0, 1] + t02 * R[0, 2] + diag - m * p0 * p0 - 2.0 * p0 * h0
    out[5] = t10 * R[1, 0] + t11 * R[1, 1] + t12 * R[1, 2] + diag - m * p1 * p1 - 2.0 * p1 * h1
    out[6] = t20 * R[2, 0] + t21 * R[2, 1] + t22 * R[2, 2] + diag - m * p2 * p2 - 2.0 * p2 * h2
    out[7] = t00 * R[1, 0] + t01 * R[1, 1] + t02 * R[1, 2] - m * p0 * p1 - p0 * h1 - h0 * p1
    out[8] = t00 * R[2, 0] + t01 * R[2, 1] + t02 * R[2, 2] - m * p0 * p2 - p0 * h2 - h0 * p2
    out[9] = t10 * R[2, 0] + t11 * R[2, 1] + t12 * R[2, 2] - m * p1 * p2 - p1 * h2 - h1 * p2


@njit(cache=True)
def add_velocity_product(pic, V, B):
    """B += ad(V)^T Lambda(pic) = [[-m w~, w~ h~], [-m v~ - w~ h~, v~ h~ - w~ I]] for the twist V = [v; w]."""
    m = pic[0]
    v0, v1, v2, w0, w1, w2 = V[0], V[1], V[2], V[3], V[4], V[5]
    h0, h1, h2 = pic[1], pic[2], pic[3]
    # skew matrices as nested tuples: W = w~, Vx = v~, H = h~
    W = ((0.0, -w2, w1), (w2, 0.0, -w0), (-w1, w0, 0.0))
    Vx = ((0.0, -v2, v1), (v2, 0.0, -v0), (-v1, v0, 0.0))
    H = ((0.0, -h2, h1), (h2, 0.0, -h0), (-h1, h0, 0.0))
    I = ((pic[4], pic[7], pic[8]), (pic[7], pic[5], pic[9]), (pic[8], pic[9], pic[6]))
    for i in range(3):
        for j in range(3):
            WH = W[i][0] * H[0][j] + W[i][1] * H[1][j] + W[i][2] * H[2][j]
            VH = Vx[i][0] * H[0][j] + Vx[i][1] * H[1][j] + Vx[i][2] * H[2][j]
            WI = W[i][0] * I[0][j] + W[i][1] * I[1][j] + W[i][2] * I[2][j]
            B[i, j] -= m * W[i][j]
            B[i, 3 + j] += WH
            B[3 + i, j] -= m * Vx[i][j] + WH
            B[3 + i, 3 + j] += VH - WI


@njit(cache=True)
def composites(bodies, work, with_inertia, with_c):
    """pic_k (and with_c, Bc_k) summed over the subtree of k: each body's own world terms, then a backward pass.
    Without inertia only the mass and first moment (pic[:4]) are formed: all that g, the CoM and J_com need."""
    nb = bodies.shape[0]
    n = 10 if with_inertia else 4
    for k in range(nb):
        w = work[k]
        if with_inertia:
            world_parameters(bodies[k].pi, w.R0, w.p0, w.pic)
        else:
            pi, R, p = bodies[k].pi, w.R0, w.p0
            w.pic[0] = pi[0]
            for r in range(3):
                w.pic[1 + r] = R[r, 0] * pi[1] + R[r, 1] * pi[2] + R[r, 2] * pi[3] + pi[0] * p[r]
        if with_c:
            w.Bc[:, :] = 0.0
            add_velocity_product(w.pic, w.V, w.Bc)
    for k in range(nb - 1, -1, -1):
        par = bodies[k].parent
        if par >= 0:
            for r in range(n):
                work[par].pic[r] += work[k].pic[r]
            if with_c:
                for r in range(6):
                    for c in range(6):
                        work[par].Bc[r, c] += work[k].Bc[r, c]


@njit(cache=True)
def accumulate(bodies, work, gravity, want_m, want_c, want_g, M, C, g, com, J_com):
    """Add the pair terms of eqs. (6a), (6b), (6c), (7) into the zeroed outputs (see the module docstring);
    want_g covers g, com and J_com: an output of size 0 is skipped.  Needs outward_pass (with rates for C)
    and composites (with the inertias for M or C, with Bc for C).  Returns the total mass."""
    want_com, want_jcom = want_g and com.size > 0, want_g and J_com.size > 0
    want_g = want_g and g.size > 0
    nb = bodies.shape[0]
    sc = scratch(work)
    F = sc.s6[1]             # Ic_j S_s
    w1 = sc.s6[2]            # -Bc_j S_s + Ic_j Sdot_s
    w2 = sc.s6[3]            # -Bc_j^T S_s
    gamma = sc.s6[4]
    Ig = sc.s6[5]
    for r in range(3):
        gamma[r] = -gravity[r] if want_g else 0.0        # gamma_0 = [-gravity; 0] (paper 002, footnote 1)
        gamma[3 + r] = 0.0
    mass = 0.0
    for k in range(nb):
        if bodies[k].parent < 0:
            mass += work[k].pic[0]
            if want_com:
                for r in range(3):
                    com[r] += work[k].pic[1 + r]
    for j in range(nb):
        bj, wj = bodies[j], work[j]
        if want_g:
            inertia_apply(wj.pic, gamma, Ig)
        for s in range(bj.nvj):
            cs = bj.iv + s
            S = wj.S[:, s]
            if want_m or want_c or want_jcom:
                inertia_apply(wj.pic, S, F)
            if want_g:
                g[cs] += dot6(S, Ig)                                  # eq. (6c)
            if want_jcom and mass > 0.0:
                for r in range(3):
                    J_com[r, cs] += F[r] / mass                       # eq. (7)
            if want_c:
                inertia_apply(wj.pic, wj.Sd[:, s], w1)
                for r in range(6):
                    acc, acc_t = 0.0, 0.0
                    for c in range(6):
                        acc += wj.Bc[r, c] * S[c]
                        acc_t += wj.Bc[c, r] * S[c]
                    w1[r] -= acc
                    w2[r] = -acc_t
            a = j if want_m or want_c else -1                         # j itself, then its ancestors
            while a >= 0:
                ba, wa = bodies[a], work[a]
                for t in range(ba.nvj):
                    ct = ba.iv + t
                    St = wa.S[:, t]
                    if want_m:
                        x = dot6(St, F)                               # eq. (6a)
                        M[ct, cs] += x
                        if a != j:
                            M[cs, ct] += x
                    if want_c:
                        C[ct, cs] += dot6(St, w1)                     # eq. (6b)
                        if a != j:
                            C[cs, ct] += dot6(w2, St) + dot6(F, wa.Sd[:, t])
                a = ba.parent
    if want_com and mass > 0.0:
        for r in range(3):
            com[r] /= mass
    return mass
