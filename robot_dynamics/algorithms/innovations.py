"""The innovations factorization of the mass matrix and its inverse (paper 003, Identity 4.1, Algorithm 4.1), in
world coordinates, for trees (not for joints coupled by mimics).

Paper 003's articulated-body Riccati recursion (Algorithm 4.1, eq. (4.7)), run from the tips to the root:
    P(k) = sum over children c of P+(c) + M(k)        articulated inertia (the paper's phi shifts are identities in
    D(k) = H(k) P(k) H*(k) + diag(armature_k)         world coordinates: every body's quantities are seen from the
    G(k) = P(k) H*(k) D^-1(k)                         same frame, as in matrices.py)
    tau_bar(k) = I - G(k) H(k),   P+(k) = tau_bar(k) P(k)
with H*(k) = S_k, the world axes of body k's coordinates (kinematics.py), M(k) = Lambda_k^w its world spatial
inertia, and armature_k the drives' armature of its coordinates (drives.py): a rotor turning with the joint adds
to D(k) alone, so that everything below is that of M + diag(armature), as Pinocchio's aba and computeMinverse add
it to StU.  Then (eqs. (4.1b)-(4.1d))
    M    = [I + H phi K] D [I + H phi K]^*,     [I + H phi K]^-1 = I - H psi K,
    M^-1 = [I - H psi K]^* D^-1 [I - H psi K],
where, for a coordinate i of body a and j of body b with a a strict ancestor of b (zero otherwise),
    [H phi K]_ij = S_a,i^T G_b,j                      (K(p(b), b) = G(b), phi = identity)
    [H psi K]_ij = S_a,i^T psi(a, p(b)) G_b,j,        psi(a, p(b)) = tau_bar(c_m) ... tau_bar(p(b)),
the c's being the bodies from p(b) up to a, a excluded.  The paper numbers links from the tip, so its "lower
triangular" [I + H phi K] is upper triangular in our parent-before-child order: L_ij != 0 only where i belongs to
an ancestor of j's body (the U D U^T of Pinocchio's cholesky::decompose).  D is block diagonal: one block per
joint (6 x 6 for a free joint, 1 x 1 for a revolute or prismatic one).

M^-1 without forming M (eq. (4.1d) applied to the unit vectors e_j, all at once, O(n^2)): the inward pass of
forward dynamics with tau = e_j and no velocity or gravity keeps, per body, the bias forces F_k (6, nv) of every
right-hand side; row block k of M^-1 restricted to k's subtree is D^-1 (E_k - S_k^T F_k) (the innovations
D^-1 [I - H psi K] e_j), and the outward pass adds -G_k^T A_p, A the accelerations, A_k = A_p + S_k (row block k).
Only the upper triangle is formed (columns from k's first coordinate on), each entry mirrored as it is written.
inverse_mass_matrix runs on its own compact fields: one outward pass (poses, axes, M(k)), the factorization fused
with the inward pass (P packed as its upper triangle, a 1-DoF joint on scalars), the free root of a floating base
through P^-1 (floating_root), and F_k, A_k kept in BV's row of k's depth (bodies of one depth own disjoint
columns), so that they stay in cache.  M^-1 x for one x is the same two passes on one vector: O(n) per right-hand
side once P, D and G are formed.
reference.py has none of this: test/kernels/test_innovations.py checks it against np.linalg and Pinocchio.
"""
import numpy as np
from numba import njit

from ..model import FREE, PRISMATIC, REVOLUTE
from .kinematics import ERR_INPUT, ERR_QUAT, ERR_SINGULAR, check_inputs, checked_pass, placement
from .newton_euler import invert_spd
from .operators import CONTRACT, ad_inv_times, ad_times, cross, rotate, store_inertia, transform_parameters

WORK = [
    ("pw", np.float64, (10,)),                                    # the body's own parameters in the world frame
    ("Pk", np.float64, (6, 6)),                                   # articulated inertia P(k), world frame
    ("HU", np.float64, (6, 6)),                                   # P(k) H*(k) = P S, first nvj columns
    ("Dk", np.float64, (6, 6)), ("Dki", np.float64, (6, 6)),      # D(k) and D(k)^-1, nvj x nvj
    ("Gk", np.float64, (6, 6)),                                   # Kalman gain G(k) = P S D^-1, first nvj columns
    ("GJk", np.float64, (6, 12)),                                 # invert_spd's scratch
    ("fb", np.float64, (6,)), ("ab", np.float64, (6,)),           # bias force and acceleration of one solve
    ("ub", np.float64, (6,)),                                     # D^-1 (x - S^T fb) of one solve
    # inverse_mass_matrix's own, side by side: T_{0,k}; a 1-DoF joint's world axis S and gain G = P S D^-1;
    # P(k) packed (the upper triangle, row by row)
    ("Rm", np.float64, (3, 3)), ("pm", np.float64, (3,)),
    ("Sm", np.float64, (6,)), ("Gm", np.float64, (6,)),
    ("Pm", np.float64, (21,)),
    ("depth", np.int64),                                          # the body's depth in the tree (a root: 0)
]


@njit(cache=True, fastmath=CONTRACT, inline="always")
def project(S, P, U, D, n):
    """U <- P H* = P S and D <- H P H* = S^T U for a joint of n coordinates (world axes S (6, n), P (6, 6))."""
    for c in range(n):
        for r in range(6):
            U[r, c] = (P[r, 0] * S[0, c] + P[r, 1] * S[1, c] + P[r, 2] * S[2, c] + P[r, 3] * S[3, c]
                       + P[r, 4] * S[4, c] + P[r, 5] * S[5, c])
    for i in range(n):
        for c in range(n):
            D[i, c] = (S[0, i] * U[0, c] + S[1, i] * U[1, c] + S[2, i] * U[2, c] + S[3, i] * U[3, c]
                       + S[4, i] * U[4, c] + S[5, i] * U[5, c])


@njit(cache=True, fastmath=CONTRACT)
def factor(bodies, work):
    """Algorithm 4.1 (eq. (4.7)) inward, after the outward pass: P, D, D^-1 and G of every body.  0 or
    ERR_SINGULAR (a joint that carries a subtree without inertia)."""
    for k in range(bodies.shape[0]):                               # M(k): Lambda_k in the world frame
        w = work[k]
        transform_parameters(bodies[k].pi, w.R0, w.p0, w.pw)
        store_inertia(w.pw, w.Pk)    # [[m E, -[h]x], [[h]x, I]] (paper 002, appendix), [linear; angular]
    for k in range(bodies.shape[0] - 1, -1, -1):                   # the children's P+ are in P(k) by now
        b, w = bodies[k], work[k]
        n, P, S, U = b.nvj, w.Pk, w.S, w.HU
        if n == 1:                                                 # written out: one column, D a scalar
            s0, s1, s2, s3, s4, s5 = S[0, 0], S[1, 0], S[2, 0], S[3, 0], S[4, 0], S[5, 0]
            d = 0.0
            for r in range(6):
                x = P[r, 0] * s0 + P[r, 1] * s1 + P[r, 2] * s2 + P[r, 3] * s3 + P[r, 4] * s4 + P[r, 5] * s5
                U[r, 0] = x
                d += S[r, 0] * x
            d += b.armature[0]
            if not d > 1e-12 * max(abs(d), 1e-300):
                return ERR_SINGULAR
            w.Dk[0, 0], w.Dki[0, 0] = d, 1.0 / d
            for r in range(6):
                w.Gk[r, 0] = U[r, 0] / d
            if b.parent >= 0:
                Pp = work[b.parent].Pk
                for r in range(6):
                    g = w.Gk[r, 0]
                    for c in range(6):
                        Pp[r, c] += P[r, c] - g * U[c, 0]
            continue
        project(S, P, U, w.Dk, n)                                  # U = P H*, D = H P H* + diag(armature)
        for i in range(n):
            w.Dk[i, i] += b.armature[i]
        if n == 1:
            d = w.Dk[0, 0]
            if not d > 1e-12 * max(abs(d), 1e-300):
                return ERR_SINGULAR
            w.Dki[0, 0] = 1.0 / d
        elif not invert_spd(w.Dk, n, w.Dki, w.GJk):
            return ERR_SINGULAR
        for c in range(n):                                         # G = P H* D^-1
            for r in range(6):
                s = 0.0
                for i in range(n):
                    s += U[r, i] * w.Dki[i, c]
                w.Gk[r, c] = s
        if b.parent >= 0:                                          # P(parent) += P+ = P - G H P = P - G U^T
            Pp = work[b.parent].Pk
            for r in range(6):
                for c in range(6):
                    s = P[r, c]
                    for i in range(n):
                        s -= w.Gk[r, i] * U[c, i]
                    Pp[r, c] += s
    return 0


@njit(cache=True, fastmath=CONTRACT)
def innovations_terms(bodies, work, L, D, L_inv):
    """L = I + H phi K, D and L^-1 = I - H psi K (eqs. (4.1b), (4.1c)), after `factor`: for each coordinate j of
    body b, G_b,j is carried up the path to the root; at each ancestor a, L_aj = S_a^T G_b,j, L^-1_aj = -S_a^T y
    and y <- tau_bar(a) y = y + G_a L^-1_aj (y = psi(a, p(b)) G_b,j)."""
    nv = L.shape[0]
    for r in range(nv):
        for c in range(nv):
            v = 1.0 if r == c else 0.0
            L[r, c], D[r, c], L_inv[r, c] = v, 0.0, v
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        for i in range(b.nvj):
            for c in range(b.nvj):
                D[b.iv + i, b.iv + c] = w.Dk[i, c]
        for j in range(b.nvj):
            col = b.iv + j
            g0, g1, g2, g3, g4, g5 = w.Gk[0, j], w.Gk[1, j], w.Gk[2, j], w.Gk[3, j], w.Gk[4, j], w.Gk[5, j]
            y0, y1, y2, y3, y4, y5 = g0, g1, g2, g3, g4, g5
            a = b.parent
            while a >= 0:
                ba, wa = bodies[a], work[a]
                S = wa.S
                for t in range(ba.nvj):
                    L[ba.iv + t, col] = (S[0, t] * g0 + S[1, t] * g1 + S[2, t] * g2 + S[3, t] * g3 + S[4, t] * g4
                                         + S[5, t] * g5)
                    L_inv[ba.iv + t, col] = -(S[0, t] * y0 + S[1, t] * y1 + S[2, t] * y2 + S[3, t] * y3
                                              + S[4, t] * y4 + S[5, t] * y5)
                for t in range(ba.nvj):                            # y <- tau_bar(a) y
                    e, G = L_inv[ba.iv + t, col], wa.Gk
                    y0, y1, y2 = y0 + G[0, t] * e, y1 + G[1, t] * e, y2 + G[2, t] * e
                    y3, y4, y5 = y3 + G[3, t] * e, y4 + G[4, t] * e, y5 + G[5, t] * e
                a = ba.parent


@njit(cache=True, fastmath=CONTRACT)
def solve_terms(bodies, work, x, out):
    """out <- M^-1 x for one right-hand side x (nv,), after `factor`: the inward and outward passes of the module
    docstring on one vector, O(n)."""
    nb = bodies.shape[0]
    for k in range(nb):
        for r in range(6):
            work[k].fb[r] = 0.0
    for k in range(nb - 1, -1, -1):
        b, w = bodies[k], work[k]
        n, S, F = b.nvj, w.S, w.fb
        for i in range(n):                                         # u = x - S^T F
            w.ab[i] = x[b.iv + i] - (S[0, i] * F[0] + S[1, i] * F[1] + S[2, i] * F[2] + S[3, i] * F[3]
                                     + S[4, i] * F[4] + S[5, i] * F[5])
        for i in range(n):                                         # D^-1 u
            s = 0.0
            for j in range(n):
                s += w.Dki[i, j] * w.ab[j]
            w.ub[i] = s
        if b.parent >= 0:
            Fp = work[b.parent].fb
            for r in range(6):
                s = F[r]
                for i in range(n):
                    s += w.HU[r, i] * w.ub[i]
                Fp[r] += s
    for k in range(nb):
        b, w = bodies[k], work[k]
        n, S = b.nvj, w.S
        if b.parent >= 0:
            Ap = work[b.parent].ab
            a0, a1, a2, a3, a4, a5 = Ap[0], Ap[1], Ap[2], Ap[3], Ap[4], Ap[5]
        else:
            a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        for i in range(n):                                         # qdd = D^-1 u - G^T a_p
            G = w.Gk
            out[b.iv + i] = w.ub[i] - (G[0, i] * a0 + G[1, i] * a1 + G[2, i] * a2 + G[3, i] * a3 + G[4, i] * a4
                                       + G[5, i] * a5)
        for i in range(n):                                         # a = a_p + S qdd
            s = out[b.iv + i]
            a0, a1, a2 = a0 + S[0, i] * s, a1 + S[1, i] * s, a2 + S[2, i] * s
            a3, a4, a5 = a3 + S[3, i] * s, a4 + S[4, i] * s, a5 + S[5, i] * s
        w.ab[0], w.ab[1], w.ab[2], w.ab[3], w.ab[4], w.ab[5] = a0, a1, a2, a3, a4, a5


@njit(cache=True, fastmath=CONTRACT, inline="always")
def row6(X, i):
    """X[i, :6], as a tuple."""
    return X[i, 0], X[i, 1], X[i, 2], X[i, 3], X[i, 4], X[i, 5]


# ---- M^-1 (inverse_mass_matrix): its own passes, on compact per-body fields --------------------------------------
@njit(cache=True, fastmath=CONTRACT, inline="always")
def pose(b, w, wp, x):
    """kinematics.outward_step without the rates, for body b (workspace record w, its parent's wp, done; any
    record for a root): w.Rm, w.pm <- T_{0,k} = T_{0,p} T_{p,k}, and the world axes S = Ad_{0,k} (mult Xi_k) of
    eq. (27) -- into w.Sm for a 1-DoF joint, w.S otherwise.  x: the joint's coordinate (1 DoF); a planar or free
    joint's T_{p,k} is in w.R_pk, w.p_pk (kinematics.placement).  A revolute joint's T_{p,k} (Rodrigues' formula
    premultiplied by R_tree, model.py) stays in registers.  Records and scalars only: an inlined function that
    takes an array reference-counts it."""
    t = b.jtype
    if t == REVOLUTE:
        angle = b.mult * x + b.offset
        s, c1 = np.sin(angle), 1.0 - np.cos(angle)
        T, A, B = b.R_tree, b.RA, b.RA2                            # R_pk = R_tree + sin RA + (1 - cos) RA2
        r00, r01, r02 = T[0, 0] + s * A[0, 0] + c1 * B[0, 0], T[0, 1] + s * A[0, 1] + c1 * B[0, 1], \
            T[0, 2] + s * A[0, 2] + c1 * B[0, 2]
        r10, r11, r12 = T[1, 0] + s * A[1, 0] + c1 * B[1, 0], T[1, 1] + s * A[1, 1] + c1 * B[1, 1], \
            T[1, 2] + s * A[1, 2] + c1 * B[1, 2]
        r20, r21, r22 = T[2, 0] + s * A[2, 0] + c1 * B[2, 0], T[2, 1] + s * A[2, 1] + c1 * B[2, 1], \
            T[2, 2] + s * A[2, 2] + c1 * B[2, 2]
        t0, t1, t2 = b.p_tree[0], b.p_tree[1], b.p_tree[2]
    elif t == PRISMATIC:                                           # p_pk = p_tree + d Ra
        d = b.mult * x + b.offset
        T = b.R_tree
        r00, r01, r02, r10, r11, r12 = T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2]
        r20, r21, r22 = T[2, 0], T[2, 1], T[2, 2]
        t0, t1, t2 = b.p_tree[0] + d * b.Ra[0], b.p_tree[1] + d * b.Ra[1], b.p_tree[2] + d * b.Ra[2]
    else:
        T = w.R_pk
        r00, r01, r02, r10, r11, r12 = T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2]
        r20, r21, r22 = T[2, 0], T[2, 1], T[2, 2]
        t0, t1, t2 = w.p_pk[0], w.p_pk[1], w.p_pk[2]
    R, p = w.Rm, w.pm
    if b.parent < 0:
        R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2] = r00, r01, r02, r10, r11, r12
        R[2, 0], R[2, 1], R[2, 2] = r20, r21, r22
        p[0], p[1], p[2] = t0, t1, t2
    else:                                                          # T_{0,k} = T_{0,p} T_{p,k}
        Q, o = wp.Rm, wp.pm
        for i in range(3):
            a0, a1, a2 = Q[i, 0], Q[i, 1], Q[i, 2]
            R[i, 0] = a0 * r00 + a1 * r10 + a2 * r20
            R[i, 1] = a0 * r01 + a1 * r11 + a2 * r21
            R[i, 2] = a0 * r02 + a1 * r12 + a2 * r22
            p[i] = o[i] + a0 * t0 + a1 * t1 + a2 * t2
    m = b.mult
    if t == REVOLUTE:                                              # S = [p x a; a], a = mult R axis (eq. (27))
        a0, a1, a2 = rotate(R, m * b.axis[0], m * b.axis[1], m * b.axis[2])
        y0, y1, y2 = cross(p[0], p[1], p[2], a0, a1, a2)
        S = w.Sm
        S[0], S[1], S[2], S[3], S[4], S[5] = y0, y1, y2, a0, a1, a2
    elif t == PRISMATIC:                                           # S = [a; 0]
        a0, a1, a2 = rotate(R, m * b.axis[0], m * b.axis[1], m * b.axis[2])
        S = w.Sm
        S[0], S[1], S[2], S[3], S[4], S[5] = a0, a1, a2, 0.0, 0.0, 0.0
    else:
        for c in range(b.nvj):
            s0, s1, s2, s3, s4, s5 = ad_times(R, p, b.Xi[:, c])
            w.S[0, c], w.S[1, c], w.S[2, c] = m * s0, m * s1, m * s2
            w.S[3, c], w.S[4, c], w.S[5, c] = m * s3, m * s4, m * s5


@njit(cache=True, fastmath=CONTRACT)
def articulated_pass(bodies, work, q):
    """The outward pass of `pose` over the tree, each body's P(k) started at M(k) = Lambda_k^w (eq. (4.7)'s M(k),
    packed: the upper triangle of [[m E, -[h]x], [[h]x, I]] row by row, paper 002, appendix).  0 or ERR_QUAT."""
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        x = 0.0
        if b.nvj == 1:
            x = q[b.iq]
        elif placement(b, w, q) != 0:
            return ERR_QUAT
        pose(b, w, work[max(b.parent, 0)], x)
        w.depth = 0 if b.parent < 0 else work[b.parent].depth + 1
        transform_parameters(bodies[k].pi, w.Rm, w.pm, w.pw)
        x, P = w.pw, w.Pm
        m, h0, h1, h2 = x[0], x[1], x[2], x[3]
        P[0], P[1], P[2], P[3], P[4], P[5] = m, 0.0, 0.0, 0.0, h2, -h1
        P[6], P[7], P[8], P[9], P[10] = m, 0.0, -h2, 0.0, h0
        P[11], P[12], P[13], P[14] = m, h1, -h0, 0.0
        P[15], P[16], P[17] = x[4], x[7], x[8]
        P[18], P[19], P[20] = x[5], x[9], x[6]
    return 0


@njit(cache=True, fastmath=CONTRACT, inline="always")
def unpack(P, F):
    """F (6, 6) <- the symmetric matrix packed in P (21,)."""
    i = 0
    for r in range(6):
        for c in range(r, 6):
            F[r, c] = F[c, r] = P[i]
            i += 1


@njit(cache=True, inline="always")
def floating(b, c1, nv):
    """Body b is the free root of a floating base (its subtree, up to coordinate c1, the whole tree), with world
    axes S = Ad_{0,0} (Xi = E_6) and no armature on its six rows (D = S^T P S): floating_root's case."""
    a = b.armature
    return (b.jtype == FREE and b.parent < 0 and b.iv == 0 and c1 == nv and b.mult == 1.0
            and a[0] == 0.0 and a[1] == 0.0 and a[2] == 0.0 and a[3] == 0.0 and a[4] == 0.0 and a[5] == 0.0)


@njit(cache=True, fastmath=CONTRACT)
def floating_root(w, B, M_inv):
    """inverse_inward's step at the free root of a floating base (`floating`), in B's row 0, from P^-1 rather than
    D^-1: with S = Ad = Ad_{0,0} invertible, D^-1 = Ad^-1 P^-1 Ad^-T, so that (module docstring, F_0 = 0 on the
    root's own columns)
        row block 0 = D^-1 on the own columns,   x = -D^-1 S^T F_0 = -Ad^-1 P^-1 F_0 on the others,
    and the root's outward step A_0 = S x = -P^-1 F_0 comes at no cost.  P^-1 = W^T W with W = L^-1, P = L L^T
    (Cholesky, in w.Pk and w.Dk; P^-1 in w.Dki).  0 or ERR_SINGULAR (a pivot not above 1e-12 of P's largest
    diagonal entry, as invert_spd)."""
    nv = M_inv.shape[0]
    L, W, Y, X = w.Pk, w.Dk, w.Dki, w.GJk
    unpack(w.Pm, L)
    scale = max(L[0, 0], L[1, 1], L[2, 2], L[3, 3], L[4, 4], L[5, 5])
    for j in range(6):                                             # P = L L^T, L lower, in place
        s = L[j, j]
        for t in range(j):
            s -= L[j, t] * L[j, t]
        if not s > 1e-12 * max(scale, 1e-300):
            return ERR_SINGULAR
        d = np.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, 6):
            s = L[i, j]
            for t in range(j):
                s -= L[i, t] * L[j, t]
            L[i, j] = s / d
    for j in range(6):                                             # W = L^-1, lower
        W[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, 6):
            s = 0.0
            for t in range(j, i):
                s -= L[i, t] * W[t, j]
            W[i, j] = s / L[i, i]
    for i in range(6):                                             # P^-1 = W^T W
        for j in range(i, 6):
            s = 0.0
            for t in range(j, 6):
                s += W[t, i] * W[t, j]
            Y[i, j] = Y[j, i] = s
    R, o = w.Rm, w.pm
    for j in range(6):                                             # X = Ad^-1 P^-1, column by column
        x0, x1, x2, x3, x4, x5 = ad_inv_times(R, o, Y[:, j])
        X[0, j], X[1, j], X[2, j], X[3, j], X[4, j], X[5, j] = x0, x1, x2, x3, x4, x5
    for i in range(6):                         # D^-1 = Ad^-1 X^T (column i from row i of X): the upper triangle
        x0, x1, x2, x3, x4, x5 = ad_inv_times(R, o, X[i, :6])
        w.fb[0], w.fb[1], w.fb[2], w.fb[3], w.fb[4], w.fb[5] = x0, x1, x2, x3, x4, x5
        for r in range(i + 1):
            M_inv[r, i] = M_inv[i, r] = w.fb[r]
    y00, y01, y02, y03, y04, y05 = row6(Y, 0)
    y11, y12, y13, y14, y15 = Y[1, 1], Y[1, 2], Y[1, 3], Y[1, 4], Y[1, 5]
    y22, y23, y24, y25, y33, y34, y35, y44, y45, y55 = Y[2, 2], Y[2, 3], Y[2, 4], Y[2, 5], Y[3, 3], Y[3, 4], \
        Y[3, 5], Y[4, 4], Y[4, 5], Y[5, 5]
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], \
        R[2, 1], R[2, 2]
    o0, o1, o2 = o[0], o[1], o[2]
    for c in range(6, nv):
        f0, f1, f2, f3, f4, f5 = B[0, c, 0], B[0, c, 1], B[0, c, 2], B[0, c, 3], B[0, c, 4], B[0, c, 5]
        a0 = -(y00 * f0 + y01 * f1 + y02 * f2 + y03 * f3 + y04 * f4 + y05 * f5)   # A_0 = -P^-1 F_0
        a1 = -(y01 * f0 + y11 * f1 + y12 * f2 + y13 * f3 + y14 * f4 + y15 * f5)
        a2 = -(y02 * f0 + y12 * f1 + y22 * f2 + y23 * f3 + y24 * f4 + y25 * f5)
        a3 = -(y03 * f0 + y13 * f1 + y23 * f2 + y33 * f3 + y34 * f4 + y35 * f5)
        a4 = -(y04 * f0 + y14 * f1 + y24 * f2 + y34 * f3 + y44 * f4 + y45 * f5)
        a5 = -(y05 * f0 + y15 * f1 + y25 * f2 + y35 * f3 + y45 * f4 + y55 * f5)
        B[0, c, 0], B[0, c, 1], B[0, c, 2], B[0, c, 3], B[0, c, 4], B[0, c, 5] = a0, a1, a2, a3, a4, a5
        e0, e1, e2 = cross(o0, o1, o2, a3, a4, a5)                 # x = Ad^-1 A_0 = [R^T (a_v - o x a_w); R^T a_w]
        e0, e1, e2 = a0 - e0, a1 - e1, a2 - e2
        M_inv[0, c] = M_inv[c, 0] = r00 * e0 + r10 * e1 + r20 * e2                # and its mirror image
        M_inv[1, c] = M_inv[c, 1] = r01 * e0 + r11 * e1 + r21 * e2
        M_inv[2, c] = M_inv[c, 2] = r02 * e0 + r12 * e1 + r22 * e2
        M_inv[3, c] = M_inv[c, 3] = r00 * a3 + r10 * a4 + r20 * a5
        M_inv[4, c] = M_inv[c, 4] = r01 * a3 + r11 * a4 + r21 * a5
        M_inv[5, c] = M_inv[c, 5] = r02 * a3 + r12 * a4 + r22 * a5
    return 0


@njit(cache=True, fastmath=CONTRACT)
def inverse_inward(bodies, work, BV, M_inv):
    """Algorithm 4.1 (eq. (4.7)) and the inward pass of M^-1 (the module docstring) fused, tips to root: at body k
    P(k) is complete (its children's P+ added) and so is F_k (their bias forces), so that
        U = P S,  D = S^T U,  G = U D^-1,  P(parent) += P+ = P - G U^T,
        row block k of M^-1 on k's subtree = D^-1 (E_k - S^T F_k),   F_p = F_k + U D^-1 (E_k - S^T F_k),
    with F_k zero on k's own columns.  The children's subtrees split k's: each column of F_p is written by one
    child (no zeroing).  A 1-DoF joint runs on scalars; a free root also forms A_0 = S x (its outward step).
    BV[k, c] holds F_k's column c.  0 or ERR_SINGULAR."""
    nb, nv = bodies.shape[0], M_inv.shape[0]
    B = BV
    for k in range(nb - 1, -1, -1):
        b, w = bodies[k], work[k]
        n, p, sk = b.nvj, b.parent, w.depth
        sp = sk - 1                                                # (the rows of BV: k's and its parent's depths)
        c0, c1 = b.iv, bodies[b.last].iv + bodies[b.last].nvj     # k's subtree: coordinates c0 .. c1 - 1
        if n == 1:
            P = w.Pm
            p00, p01, p02, p03, p04, p05 = P[0], P[1], P[2], P[3], P[4], P[5]
            p11, p12, p13, p14, p15 = P[6], P[7], P[8], P[9], P[10]
            p22, p23, p24, p25, p33, p34, p35, p44, p45, p55 = P[11], P[12], P[13], P[14], P[15], P[16], P[17], \
                P[18], P[19], P[20]
            S = w.Sm
            s0, s1, s2, s3, s4, s5 = S[0], S[1], S[2], S[3], S[4], S[5]
            # (sums as trees, not chains: the parent's P waits for this body's P+, along every branch)
            u0 = (p00 * s0 + p01 * s1) + (p02 * s2 + p03 * s3) + (p04 * s4 + p05 * s5)  # U = P H* = P S
            u1 = (p01 * s0 + p11 * s1) + (p12 * s2 + p13 * s3) + (p14 * s4 + p15 * s5)
            u2 = (p02 * s0 + p12 * s1) + (p22 * s2 + p23 * s3) + (p24 * s4 + p25 * s5)
            u3 = (p03 * s0 + p13 * s1) + (p23 * s2 + p33 * s3) + (p34 * s4 + p35 * s5)
            u4 = (p04 * s0 + p14 * s1) + (p24 * s2 + p34 * s3) + (p44 * s4 + p45 * s5)
            u5 = (p05 * s0 + p15 * s1) + (p25 * s2 + p35 * s3) + (p45 * s4 + p55 * s5)
            d = (s0 * u0 + s1 * u1) + (s2 * u2 + s3 * u3) + (s4 * u4 + s5 * u5)       # D = H P H*
            d += b.armature[0]                                                       # + armature
            if not d > 1e-12 * max(abs(d), 1e-300):
                return ERR_SINGULAR
            dinv = 1.0 / d
            g0, g1, g2, g3, g4, g5 = u0 * dinv, u1 * dinv, u2 * dinv, u3 * dinv, u4 * dinv, u5 * dinv  # G = P H* D^-1
            G = w.Gm                                               # (U and D^-1: used here only)
            G[0], G[1], G[2], G[3], G[4], G[5] = g0, g1, g2, g3, g4, g5
            M_inv[c0, c0] = dinv
            if p < 0:
                for c in range(c0 + 1, c1):                        # D^-1 (0 - S^T F)
                    M_inv[c0, c] = -dinv * (s0 * B[sk, c, 0] + s1 * B[sk, c, 1] + s2 * B[sk, c, 2] + s3 * B[sk, c, 3]
                                            + s4 * B[sk, c, 4] + s5 * B[sk, c, 5])
                continue
            Q = work[p].Pm                                         # P(parent) += P+ = tau_bar P = P - G U^T
            Q[0], Q[1], Q[2] = Q[0] + (p00 - g0 * u0), Q[1] + (p01 - g0 * u1), Q[2] + (p02 - g0 * u2)
            Q[3], Q[4], Q[5] = Q[3] + (p03 - g0 * u3), Q[4] + (p04 - g0 * u4), Q[5] + (p05 - g0 * u5)
            Q[6], Q[7], Q[8] = Q[6] + (p11 - g1 * u1), Q[7] + (p12 - g1 * u2), Q[8] + (p13 - g1 * u3)
            Q[9], Q[10], Q[11] = Q[9] + (p14 - g1 * u4), Q[10] + (p15 - g1 * u5), Q[11] + (p22 - g2 * u2)
            Q[12], Q[13], Q[14] = Q[12] + (p23 - g2 * u3), Q[13] + (p24 - g2 * u4), Q[14] + (p25 - g2 * u5)
            Q[15], Q[16], Q[17] = Q[15] + (p33 - g3 * u3), Q[16] + (p34 - g3 * u4), Q[17] + (p35 - g3 * u5)
            Q[18], Q[19], Q[20] = Q[18] + (p44 - g4 * u4), Q[19] + (p45 - g4 * u5), Q[20] + (p55 - g5 * u5)
            B[sp, c0, 0], B[sp, c0, 1], B[sp, c0, 2] = g0, g1, g2    # own column: F = 0, F_p = U D^-1
            B[sp, c0, 3], B[sp, c0, 4], B[sp, c0, 5] = g3, g4, g5
            for c in range(c0 + 1, c1):    # (scalar indexing: a view per column would count references)
                f0, f1, f2, f3, f4, f5 = B[sk, c, 0], B[sk, c, 1], B[sk, c, 2], B[sk, c, 3], B[sk, c, 4], B[sk, c, 5]
                x = -dinv * (s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5)   # D^-1 (0 - S^T F)
                M_inv[c0, c] = x
                B[sp, c, 0], B[sp, c, 1], B[sp, c, 2] = f0 + u0 * x, f1 + u1 * x, f2 + u2 * x   # F_p = F + U x
                B[sp, c, 3], B[sp, c, 4], B[sp, c, 5] = f3 + u3 * x, f4 + u4 * x, f5 + u5 * x
            continue
        if floating(b, c1, nv):                                    # the free root of a floating base
            if floating_root(w, B, M_inv) != 0:
                return ERR_SINGULAR
            continue
        S, U, P, D, G = w.S, w.HU, w.Pk, w.Dki, w.Gk               # several coordinates: on 6x6 matrices
        unpack(w.Pm, P)
        project(S, P, U, w.Dk, n)                                  # U = P H*, D = H P H* + diag(armature)
        for i in range(n):
            w.Dk[i, i] += b.armature[i]
        if not invert_spd(w.Dk, n, D, w.GJk):
            return ERR_SINGULAR
        for c in range(n):                                         # G = P H* D^-1
            for r in range(6):
                s = 0.0
                for i in range(n):
                    s += U[r, i] * D[i, c]
                G[r, c] = s
        if p >= 0:                                                 # P(parent) += P+ = P - G U^T
            Q, i = work[p].Pm, 0
            for r in range(6):
                for c in range(r, 6):
                    s = P[r, c]
                    for j in range(n):
                        s -= G[r, j] * U[c, j]
                    Q[i] += s
                    i += 1
        for c in range(n):                                         # own columns: F = 0, x = D^-1 E
            for i in range(n):
                M_inv[c0 + i, c0 + c] = D[i, c]
            if p >= 0:
                for r in range(6):
                    B[sp, c0 + c, r] = G[r, c]
        for c in range(c0 + n, c1):
            for i in range(n):                                     # u = 0 - S^T F
                w.fb[i] = -(S[0, i] * B[sk, c, 0] + S[1, i] * B[sk, c, 1] + S[2, i] * B[sk, c, 2]
                            + S[3, i] * B[sk, c, 3] + S[4, i] * B[sk, c, 4] + S[5, i] * B[sk, c, 5])
            for i in range(n):                                     # row block k, subtree part: D^-1 u
                x = 0.0
                for j in range(n):
                    x += D[i, j] * w.fb[j]
                M_inv[c0 + i, c] = x
            if p >= 0:                                             # F_p = F + P S D^-1 u
                for r in range(6):
                    x = B[sk, c, r]
                    for i in range(n):
                        x += U[r, i] * M_inv[c0 + i, c]
                    B[sp, c, r] = x
    return 0


@njit(cache=True, fastmath=CONTRACT)
def inverse_outward(bodies, work, BV, M_inv):
    """The outward pass of M^-1 after inverse_inward, root to tips, on columns from k's first on: row block k
    -= G^T A_p (zero beyond k's subtree before that), A_k = A_p + S (row block k) into BV[depth of k, c] (not for
    a leaf: no child reads it); each entry mirrored into the lower triangle as it is written."""
    nb, nv = bodies.shape[0], M_inv.shape[0]
    B = BV
    for k in range(nb):
        b, w = bodies[k], work[k]
        n, p, i, sk = b.nvj, b.parent, b.iv, w.depth
        sp = sk - 1
        c1 = bodies[b.last].iv + bodies[b.last].nvj
        leaf = b.last == k
        if n == 1:
            S, G = w.Sm, w.Gm
            s0, s1, s2, s3, s4, s5 = S[0], S[1], S[2], S[3], S[4], S[5]
            g0, g1, g2, g3, g4, g5 = G[0], G[1], G[2], G[3], G[4], G[5]
            if p < 0:                                              # a root: A_p = 0, zero beyond its subtree
                for c in range(i, nv):
                    x = M_inv[i, c] if c < c1 else 0.0
                    M_inv[i, c] = M_inv[c, i] = x
                    if not leaf:
                        B[sk, c, 0], B[sk, c, 1], B[sk, c, 2] = s0 * x, s1 * x, s2 * x
                        B[sk, c, 3], B[sk, c, 4], B[sk, c, 5] = s3 * x, s4 * x, s5 * x
            elif leaf:                                             # -= G^T A_p (dot products as trees: shorter
                for c in range(i, nv):                             # chains)
                    x = (M_inv[i, c] if c < c1 else 0.0) - ((g0 * B[sp, c, 0] + g1 * B[sp, c, 1])
                                                            + (g2 * B[sp, c, 2] + g3 * B[sp, c, 3])
                                                            + (g4 * B[sp, c, 4] + g5 * B[sp, c, 5]))
                    M_inv[i, c] = M_inv[c, i] = x
            else:
                for c in range(i, nv):
                    a0, a1, a2 = B[sp, c, 0], B[sp, c, 1], B[sp, c, 2]
                    a3, a4, a5 = B[sp, c, 3], B[sp, c, 4], B[sp, c, 5]
                    x = (M_inv[i, c] if c < c1 else 0.0) - ((g0 * a0 + g1 * a1) + (g2 * a2 + g3 * a3)
                                                            + (g4 * a4 + g5 * a5))
                    M_inv[i, c] = M_inv[c, i] = x
                    B[sk, c, 0], B[sk, c, 1], B[sk, c, 2] = a0 + s0 * x, a1 + s1 * x, a2 + s2 * x  # A = A_p + S x
                    B[sk, c, 3], B[sk, c, 4], B[sk, c, 5] = a3 + s3 * x, a4 + s4 * x, a5 + s5 * x
            continue
        if floating(b, c1, nv):                                    # done by inverse_inward
            continue
        S, G = w.S, w.Gk
        for c in range(i, nv):
            if p >= 0:                                             # row block k -= G^T A_p
                a0, a1, a2, a3, a4, a5 = B[sp, c, 0], B[sp, c, 1], B[sp, c, 2], B[sp, c, 3], B[sp, c, 4], B[sp, c, 5]
                for t in range(n):
                    y = M_inv[i + t, c] if c < c1 else 0.0
                    M_inv[i + t, c] = y - (G[0, t] * a0 + G[1, t] * a1 + G[2, t] * a2 + G[3, t] * a3
                                           + G[4, t] * a4 + G[5, t] * a5)
            else:
                a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
                if c >= c1:
                    for t in range(n):
                        M_inv[i + t, c] = 0.0
            if c >= i + n:                                         # (the own block is formed whole)
                for t in range(n):
                    M_inv[c, i + t] = M_inv[i + t, c]
            if not leaf:
                for t in range(n):                                 # A_k = A_p + S (row block k)
                    x = M_inv[i + t, c]
                    a0, a1, a2 = a0 + S[0, t] * x, a1 + S[1, t] * x, a2 + S[2, t] * x
                    a3, a4, a5 = a3 + S[3, t] * x, a4 + S[4, t] * x, a5 + S[5, t] * x
                B[sk, c, 0], B[sk, c, 1], B[sk, c, 2] = a0, a1, a2
                B[sk, c, 3], B[sk, c, 4], B[sk, c, 5] = a3, a4, a5


# ---- entry points -------------------------------------------------------------------------------------------
@njit(cache=True)
def factored(bodies, work, inputs, q, v, with_rates):
    """Inputs checked, the outward pass (with rates: V, Sdot) and `factor` done: 0 or the first error's code."""
    status = checked_pass(bodies, work, inputs, q, v, with_rates)
    return status if status != 0 else factor(bodies, work)


@njit(cache=True)
def innovations(bodies, work, q, L, D, L_inv):
    status = factored(bodies, work, (q,), q, q, False)
    if status == 0:
        innovations_terms(bodies, work, L, D, L_inv)
    return status


@njit(cache=True)
def inverse_mass_matrix(bodies, work, BV, q, M_inv):
    """M_inv <- M^-1 (eq. (4.1d)): articulated_pass, inverse_inward, inverse_outward."""
    status = check_inputs((q,))
    if status == 0:
        status = articulated_pass(bodies, work, q)
    if status == 0:
        status = inverse_inward(bodies, work, BV, M_inv)
    if status == 0:
        inverse_outward(bodies, work, BV, M_inv)
    return status


@njit(cache=True)
def solve_mass_matrix(bodies, work, q, X, out):
    """out[:, j] <- M^-1 X[:, j] for every column j of X (nv, k): one factorization, then O(n) per column."""
    status = factored(bodies, work, (q,), q, q, False)
    if status != 0:
        return status
    for r in range(X.shape[0]):
        for c in range(X.shape[1]):
            if not np.isfinite(X[r, c]):
                return ERR_INPUT + 1                               # the right-hand side
    for c in range(X.shape[1]):
        solve_terms(bodies, work, X[:, c], out[:, c])
    return 0
