"""Ploen's global matrix form of the recursive Newton-Euler algorithm (paper 000, section 3.2 and Prop. 1), for trees.

Stacking the body twists V = col(V_k) in the body frames, the outward recursion V_k = Ad^-1_{p,k} V_p + S_k v_k
(paper 000, eq. (15)) reads V = Gamma V + S v, so V = G S v with G = (I - Gamma)^-1 (eq. (19), V_0 = 0), and
    M = S^T G^T J G S                                      (eqs. (24), (36))
    C = S^T G^T (J G ad_Gamma Gamma + C_bar) G S           (eq. (37); eq. (25) has -ad*_V J in place of C_bar)
    Mdot = N + N^T,  N = S^T G^T J G ad_Gamma Gamma G S    (eqs. (27)-(28): Gdot = G ad_Gamma Gamma G)
so that C = N + S^T G^T C_bar G S and Mdot - 2 C = N^T - N - 2 S^T G^T C_bar G S, skew because C_bar is (Prop. 2).
The operators, for nb bodies (block k = body k of the model, parent before child like Ploen's 1..n along a chain):
    S         (nb, 6, nv)      block k, the columns of k's coordinates: the joint's motion subspace Xi_k (times the
                               mimic multiplier); a free joint's block is the 6x6 identity (base twist in its frame)
    G         (nb, 6, nb, 6)   block (k, a) = Ad^-1 of T_{a,k} (twists of a seen from k) for a = k or an ancestor
                               of k, identity on the diagonal, zero elsewhere: a tree's G is lower block-triangular
                               with the sparsity of the ancestor relation, not only a chain's
    Gamma     (nb, 6, nb, 6)   block (k, parent(k)) = Ad^-1 of T_{p,k}, zero elsewhere (nilpotent; G = (I - Gamma)^-1)
    J         (nb, 6, nb, 6)   block (k, k) = Lambda_k, the body inertia at the body origin (eq. (12))
    ad_Gamma  (nb, 6, nb, 6)   block (k, k) = -adj(S_k v_k), the joint's relative twist (Ploen's ad_{S qdot})
    C_bar     (nb, 6, nb, 6)   block (k, k) = the skew-symmetric C_bar_k of Prop. 1 at the body's angular velocity
Written into zeroed dense outputs; Robot.global_factorization views each as a (6 nb, 6 nb) or (6 nb, nv) matrix.

Translation from paper 000 ([angular; linear] order) to ours ([linear; angular], paper 002): Ploen's J_i =
[[I - m r~^2, m r~], [-m r~, m E]] is our Lambda_k = [[m E, -h~], [h~, I_o]] (h = m c, I_o about the origin);
his ad_x = [[w~, 0], [v~, w~]] is our adj(x) = [[w~, v~], [0, w~]]; and his
    C_bar_i = [[w~ I_o + I_o w~, m r~ w~], [-m w~ r~, m w~]]  becomes  [[m w~, -w~ h~], [h~ w~, w~ I_o + I_o w~]],
with C_bar_k V_k = -adj(V_k)^T Lambda_k V_k (his C_i V_i), depending on w alone.
The drives' armature (drives.py) is not in these body operators: M = S^T G^T J G S is the rigid bodies', and the
robot's M is that plus diag(armature) (constant: Mdot and C are unchanged).
"""
from numba import njit

from .kinematics import checked_pass
from .operators import cross, rotate_transpose

WORK = []                      # nothing kept per body beyond the outward pass's poses and twists


@njit(cache=True)
def ad_inv_block(X, k, a, R, p):
    """X[k, :, a, :] <- Ad^-1 of T = (R, p) = [[R^T, -R^T p~], [0, R^T]] (paper 002, appendix)."""
    for c in range(3):
        e0, e1, e2 = 1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0
        x0, x1, x2 = cross(p[0], p[1], p[2], e0, e1, e2)
        y = rotate_transpose(R, x0, x1, x2)                               # R^T (p x e_c)
        for r in range(3):
            X[k, r, a, c] = R[c, r]
            X[k, 3 + r, a, 3 + c] = R[c, r]
            X[k, r, a, 3 + c] = -y[r]


@njit(cache=True)
def relative_ad_inv_block(X, k, a, Rk, pk, Ra, pa):
    """X[k, :, a, :] <- Ad^-1 of T_{a,k} = T_{0,a}^-1 T_{0,k}, from the world poses of k and a:
    [[Rk^T Ra, -Rk^T d~ Ra], [0, Rk^T Ra]] with d = pk - pa (column c of d~ Ra is d x (Ra e_c))."""
    d0, d1, d2 = pk[0] - pa[0], pk[1] - pa[1], pk[2] - pa[2]
    for c in range(3):
        z = rotate_transpose(Rk, Ra[0, c], Ra[1, c], Ra[2, c])
        x0, x1, x2 = cross(d0, d1, d2, Ra[0, c], Ra[1, c], Ra[2, c])
        y = rotate_transpose(Rk, x0, x1, x2)
        for r in range(3):
            X[k, r, a, c] = z[r]
            X[k, 3 + r, a, 3 + c] = z[r]
            X[k, r, a, 3 + c] = -y[r]


@njit(cache=True)
def skew_symmetric_block(X, k, pi, w0, w1, w2):
    """X[k, :, k, :] <- C_bar_k of paper 000, Prop. 1, in [linear; angular] order, for the body angular velocity w:
    [[m w~, -w~ h~], [h~ w~, w~ I + I w~]], h = m c and I about the origin taken from the parameters pi."""
    m = pi[0]
    W = ((0.0, -w2, w1), (w2, 0.0, -w0), (-w1, w0, 0.0))
    H = ((0.0, -pi[3], pi[2]), (pi[3], 0.0, -pi[1]), (-pi[2], pi[1], 0.0))
    I = ((pi[4], pi[7], pi[8]), (pi[7], pi[5], pi[9]), (pi[8], pi[9], pi[6]))
    for r in range(3):
        for c in range(3):
            WH = W[r][0] * H[0][c] + W[r][1] * H[1][c] + W[r][2] * H[2][c]
            HW = H[r][0] * W[0][c] + H[r][1] * W[1][c] + H[r][2] * W[2][c]
            WI = W[r][0] * I[0][c] + W[r][1] * I[1][c] + W[r][2] * I[2][c]
            IW = I[r][0] * W[0][c] + I[r][1] * W[1][c] + I[r][2] * W[2][c]
            X[k, r, k, c] = m * W[r][c]
            X[k, r, k, 3 + c] = -WH
            X[k, 3 + r, k, c] = HW
            X[k, 3 + r, k, 3 + c] = WI + IW


@njit(cache=True, inline="always")
def joint_twist(b, v):
    """S_k v_k = mult Xi_k v_k, the twist of body b relative to its parent, in its own frame, as a 6-tuple."""
    x0 = x1 = x2 = x3 = x4 = x5 = 0.0
    for c in range(b.nvj):
        s = b.mult * v[b.iv + c]
        x0, x1, x2 = x0 + s * b.Xi[0, c], x1 + s * b.Xi[1, c], x2 + s * b.Xi[2, c]
        x3, x4, x5 = x3 + s * b.Xi[3, c], x4 + s * b.Xi[4, c], x5 + s * b.Xi[5, c]
    return x0, x1, x2, x3, x4, x5


@njit(cache=True)
def global_factorization(bodies, work, q, v, S, G, Gamma, J, ad_Gamma, C_bar):
    """S, G, Gamma, J, ad_Gamma and C_bar of paper 000 at (q, v) (module docstring), into dense blocked arrays."""
    status = checked_pass(bodies, work, (q, v), q, v, True)
    if status != 0:
        return status
    nb = bodies.shape[0]
    for k in range(nb):                        # zero every entry (loops: ~1.5x faster than slices of strided arrays)
        for r in range(6):
            for c in range(S.shape[2]):
                S[k, r, c] = 0.0
            for a in range(nb):
                for c in range(6):
                    G[k, r, a, c] = Gamma[k, r, a, c] = J[k, r, a, c] = ad_Gamma[k, r, a, c] = C_bar[k, r, a, c] = 0.0
    for k in range(nb):
        b, w = bodies[k], work[k]
        for c in range(b.nvj):
            for r in range(6):
                S[k, r, b.iv + c] = b.mult * b.Xi[r, c]              # eq. (19): S = diag(S_k)
        x0, x1, x2, x3, x4, x5 = joint_twist(b, v)
        for r in range(6):
            G[k, r, k, r] = 1.0
            for c in range(6):
                J[k, r, k, c] = b.Lam[r, c]                          # eq. (12): J = diag(J_k)
        if b.parent >= 0:
            ad_inv_block(Gamma, k, b.parent, w.R_pk, w.p_pk)         # Gamma: Ad^-1_{p,k} below the diagonal
        a = b.parent
        while a >= 0:                                                # G = (I - Gamma)^-1: block (k, a) = Ad^-1_{a,k}
            relative_ad_inv_block(G, k, a, w.R0, w.p0, work[a].R0, work[a].p0)
            a = bodies[a].parent
        W = ((0.0, -x5, x4), (x5, 0.0, -x3), (-x4, x3, 0.0))
        U = ((0.0, -x2, x1), (x2, 0.0, -x0), (-x1, x0, 0.0))
        for r in range(3):                                           # ad_Gamma = diag(-adj(S_k v_k)), eq. (20)
            for c in range(3):
                ad_Gamma[k, r, k, c] = -W[r][c]
                ad_Gamma[k, r, k, 3 + c] = -U[r][c]
                ad_Gamma[k, 3 + r, k, 3 + c] = -W[r][c]
        w0, w1, w2 = rotate_transpose(w.R0, w.V[3], w.V[4], w.V[5])  # body angular velocity R_{0,k}^T w
        skew_symmetric_block(C_bar, k, b.pi, w0, w1, w2)             # Prop. 1
    return 0
