"""The innovations factorization of the mass matrix and its inverse (paper 003, Identity 4.1, Algorithm 4.1), in
world coordinates, for trees (not for joints coupled by mimics).

Paper 003's articulated-body Riccati recursion (Algorithm 4.1, eq. (4.7)), run from the tips to the root:
    P(k) = sum over children c of P+(c) + M(k)        articulated inertia (the paper's phi shifts are identities in
    D(k) = H(k) P(k) H*(k)                            world coordinates: every body's quantities are seen from the
    G(k) = P(k) H*(k) D^-1(k)                         same frame, as in matrices.py)
    tau_bar(k) = I - G(k) H(k),   P+(k) = tau_bar(k) P(k)
with H*(k) = S_k, the world axes of body k's coordinates (kinematics.py), and M(k) = Lambda_k^w its world spatial
inertia.  Then (eqs. (4.1b)-(4.1d))
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
Only the upper triangle is formed (columns from k's first coordinate on) and mirrored.  M^-1 x for one x is the
same two passes on one vector: O(n) per right-hand side once P, D and G are formed.
reference.py has none of this: test/test_innovations.py checks it against np.linalg and Pinocchio.
"""
import numpy as np
from numba import njit

from .kinematics import ERR_INPUT, ERR_SINGULAR, checked_pass
from .newton_euler import invert_spd
from .operators import CONTRACT, transform_parameters

WORK = [
    ("pw", np.float64, (10,)),                                    # the body's own parameters in the world frame
    ("Pk", np.float64, (6, 6)),                                   # articulated inertia P(k), world frame
    ("HU", np.float64, (6, 6)),                                   # P(k) H*(k) = P S, first nvj columns
    ("Dk", np.float64, (6, 6)), ("Dki", np.float64, (6, 6)),      # D(k) and D(k)^-1, nvj x nvj
    ("Gk", np.float64, (6, 6)),                                   # Kalman gain G(k) = P S D^-1, first nvj columns
    ("GJk", np.float64, (6, 12)),                                 # invert_spd's scratch
    ("fb", np.float64, (6,)), ("ab", np.float64, (6,)),           # bias force and acceleration of one solve
    ("ub", np.float64, (6,)),                                     # D^-1 (x - S^T fb) of one solve
]


@njit(cache=True, fastmath=CONTRACT)
def factor(bodies, work):
    """Algorithm 4.1 (eq. (4.7)) inward, after the outward pass: P, D, D^-1 and G of every body.  0 or
    ERR_SINGULAR (a joint that carries a subtree without inertia)."""
    for k in range(bodies.shape[0]):                               # M(k): Lambda_k in the world frame
        w = work[k]
        transform_parameters(bodies[k].pi, w.R0, w.p0, w.pw)
        x = w.pw
        m, h0, h1, h2 = x[0], x[1], x[2], x[3]
        P = w.Pk                     # [[m E, -[h]x], [[h]x, I]] (paper 002, appendix), [linear; angular]
        P[0, 0], P[0, 1], P[0, 2], P[0, 3], P[0, 4], P[0, 5] = m, 0.0, 0.0, 0.0, h2, -h1
        P[1, 0], P[1, 1], P[1, 2], P[1, 3], P[1, 4], P[1, 5] = 0.0, m, 0.0, -h2, 0.0, h0
        P[2, 0], P[2, 1], P[2, 2], P[2, 3], P[2, 4], P[2, 5] = 0.0, 0.0, m, h1, -h0, 0.0
        P[3, 0], P[3, 1], P[3, 2], P[3, 3], P[3, 4], P[3, 5] = 0.0, -h2, h1, x[4], x[7], x[8]
        P[4, 0], P[4, 1], P[4, 2], P[4, 3], P[4, 4], P[4, 5] = h2, 0.0, -h0, x[7], x[5], x[9]
        P[5, 0], P[5, 1], P[5, 2], P[5, 3], P[5, 4], P[5, 5] = -h1, h0, 0.0, x[8], x[9], x[6]
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
        for c in range(n):                                         # P H* = P S
            for r in range(6):
                U[r, c] = (P[r, 0] * S[0, c] + P[r, 1] * S[1, c] + P[r, 2] * S[2, c] + P[r, 3] * S[3, c]
                           + P[r, 4] * S[4, c] + P[r, 5] * S[5, c])
        for i in range(n):                                         # D = H P H*
            for c in range(n):
                w.Dk[i, c] = (S[0, i] * U[0, c] + S[1, i] * U[1, c] + S[2, i] * U[2, c] + S[3, i] * U[3, c]
                              + S[4, i] * U[4, c] + S[5, i] * U[5, c])
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
def inverse_mass_matrix_terms(bodies, work, BV, M_inv):
    """M^-1 (eq. (4.1d)) for all unit right-hand sides at once, after `factor` (the module docstring).  BV (nb, nv,
    6) holds F_k (a 6-vector per column) in the inward pass and A_k in the outward one.  A 1-DoF joint takes
    written-out paths (D, G: one column)."""
    nb, nv = bodies.shape[0], M_inv.shape[0]
    for k in range(nb):
        b = bodies[k]
        c0, c1 = b.iv, bodies[b.last].iv + bodies[b.last].nvj     # k's subtree: coordinates c0 .. c1 - 1
        for c in range(c0, c1):
            for r in range(6):
                BV[k, c, r] = 0.0
        for i in range(b.nvj):
            for c in range(c1, nv):
                M_inv[b.iv + i, c] = 0.0
    for k in range(nb - 1, -1, -1):                                # inward
        b, w = bodies[k], work[k]
        n, S, U, F = b.nvj, w.S, w.HU, BV[k]
        c0, c1 = b.iv, bodies[b.last].iv + bodies[b.last].nvj
        p = b.parent
        if n == 1:
            s0, s1, s2, s3, s4, s5 = S[0, 0], S[1, 0], S[2, 0], S[3, 0], S[4, 0], S[5, 0]
            u0, u1, u2, u3, u4, u5 = U[0, 0], U[1, 0], U[2, 0], U[3, 0], U[4, 0], U[5, 0]
            dinv = w.Dki[0, 0]
            for c in range(c0, c1):        # (scalar indexing: a view per column would count references)
                f0, f1, f2, f3, f4, f5 = BV[k, c, 0], BV[k, c, 1], BV[k, c, 2], BV[k, c, 3], BV[k, c, 4], BV[k, c, 5]
                x = dinv * ((1.0 if c == c0 else 0.0)              # D^-1 (e - S^T F)
                            - (s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5))
                M_inv[c0, c] = x
                if p >= 0:                                         # F_p += F + P S D^-1 u
                    BV[p, c, 0] += f0 + u0 * x
                    BV[p, c, 1] += f1 + u1 * x
                    BV[p, c, 2] += f2 + u2 * x
                    BV[p, c, 3] += f3 + u3 * x
                    BV[p, c, 4] += f4 + u4 * x
                    BV[p, c, 5] += f5 + u5 * x
            continue
        for c in range(c0, c1):
            f = F[c]
            for i in range(n):                                     # u = e - S^T F
                w.fb[i] = ((1.0 if c == b.iv + i else 0.0)
                           - (S[0, i] * f[0] + S[1, i] * f[1] + S[2, i] * f[2] + S[3, i] * f[3] + S[4, i] * f[4]
                              + S[5, i] * f[5]))
            for i in range(n):                                     # row block k, subtree part: D^-1 u
                x = 0.0
                for j in range(n):
                    x += w.Dki[i, j] * w.fb[j]
                M_inv[b.iv + i, c] = x
            if p >= 0:                                             # F_p += F + P S D^-1 u
                g = BV[p, c]
                for r in range(6):
                    x = f[r]
                    for i in range(n):
                        x += U[r, i] * M_inv[b.iv + i, c]
                    g[r] += x
    for k in range(nb):                                            # outward, columns from k's first on
        b, w = bodies[k], work[k]
        n, S, G, A, p = b.nvj, w.S, w.Gk, BV[k], b.parent
        if n == 1:
            s0, s1, s2, s3, s4, s5 = S[0, 0], S[1, 0], S[2, 0], S[3, 0], S[4, 0], S[5, 0]
            g0, g1, g2, g3, g4, g5 = G[0, 0], G[1, 0], G[2, 0], G[3, 0], G[4, 0], G[5, 0]
            i = b.iv
            for c in range(i, nv):
                if p >= 0:
                    a0, a1, a2 = BV[p, c, 0], BV[p, c, 1], BV[p, c, 2]
                    a3, a4, a5 = BV[p, c, 3], BV[p, c, 4], BV[p, c, 5]
                    x = M_inv[i, c] - (g0 * a0 + g1 * a1 + g2 * a2 + g3 * a3 + g4 * a4 + g5 * a5)  # -= G^T A_p
                    M_inv[i, c] = x
                else:
                    a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
                    x = M_inv[i, c]
                BV[k, c, 0], BV[k, c, 1], BV[k, c, 2] = a0 + s0 * x, a1 + s1 * x, a2 + s2 * x     # A = A_p + S x
                BV[k, c, 3], BV[k, c, 4], BV[k, c, 5] = a3 + s3 * x, a4 + s4 * x, a5 + s5 * x
            continue
        for c in range(b.iv, nv):
            a = A[c]
            if p >= 0:                                             # row block k -= G^T A_p
                e = BV[p, c]
                a0, a1, a2, a3, a4, a5 = e[0], e[1], e[2], e[3], e[4], e[5]
                for i in range(n):
                    M_inv[b.iv + i, c] -= (G[0, i] * a0 + G[1, i] * a1 + G[2, i] * a2 + G[3, i] * a3
                                           + G[4, i] * a4 + G[5, i] * a5)
            else:
                a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            for i in range(n):                                     # A_k = A_p + S (row block k)
                x = M_inv[b.iv + i, c]
                a0, a1, a2 = a0 + S[0, i] * x, a1 + S[1, i] * x, a2 + S[2, i] * x
                a3, a4, a5 = a3 + S[3, i] * x, a4 + S[4, i] * x, a5 + S[5, i] * x
            a[0], a[1], a[2], a[3], a[4], a[5] = a0, a1, a2, a3, a4, a5
    for k in range(nb):                                            # the lower triangle, mirrored
        b = bodies[k]
        for i in range(b.nvj):
            r = b.iv + i
            for c in range(b.iv):
                M_inv[r, c] = M_inv[c, r]


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
    status = factored(bodies, work, (q,), q, q, False)
    if status == 0:
        inverse_mass_matrix_terms(bodies, work, BV, M_inv)
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
