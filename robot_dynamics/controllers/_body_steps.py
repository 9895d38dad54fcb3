"""The composite tick's algebra of each body's pseudo-inertia J(pi_k) (4, 4), compiled: J(pi_k) itself, the inverse
factors of J(pi_hat_k) (the log-det barrier's Hessian, _composite_tick.add_log_det_block), and the bounds on a step of
the estimate (composite.py's module docstring): no eigenvalue of J_k^-1/2 dJ_k J_k^-T/2 beyond STEP_BOUND, no body
below FLOOR J(pi_ref); the gradient law's projection.
"""
import numpy as np
from numba import njit

from ..dense import cholesky4, cholesky_into
from ..inertia import clipped_into

STEP_BOUND = 0.1            # the largest relative change of a body's pseudo-inertia in one step, in any direction
FLOOR = 1e-9                # no body's pseudo-inertia below FLOOR J(pi_ref) in any direction: numerically > 0


@njit(cache=True)
def pseudo_inertia_into(pi_k, J):
    """J <- J(pi_k) = [[1/2 tr(I) 1 - I, h], [h^T, m]] (4, 4) (inertia.pseudo_inertia), pi_k = (m, h, I_xx, I_yy,
    I_zz, I_xy, I_xz, I_yz): _packed's entries, written out as a matrix."""
    J[0, 0], J[1, 1], J[2, 2], J[3, 3], J[0, 1], J[0, 2], J[0, 3], J[1, 2], J[1, 3], J[2, 3] = _packed(pi_k, 0)
    J[1, 0], J[2, 0], J[3, 0], J[2, 1], J[3, 1], J[3, 2] = J[0, 1], J[0, 2], J[0, 3], J[1, 2], J[1, 3], J[2, 3]


@njit(cache=True)
def pseudo_inertia(pi_k):
    """J(pi_k) (pseudo_inertia_into), a new array."""
    J = np.empty((4, 4))
    pseudo_inertia_into(pi_k, J)
    return J


@njit(cache=True)
def congruence_into(T, X, TX, out):
    """out <- T X T^T (4, 4); TX a work array."""
    for i in range(4):
        for j in range(4):
            x = 0.0
            for k in range(4):
                x += T[i, k] * X[k, j]
            TX[i, j] = x
    for i in range(4):
        for j in range(4):
            x = 0.0
            for k in range(4):
                x += TX[i, k] * T[j, k]
            out[i, j] = x


@njit(cache=True, inline="always")
def inverse_factors_into(pi_hat, L_inv):
    """L_inv[k] <- L_k^-1 (nb, 4, 4) with J(pi_hat_k) = L_k L_k^T; returns whether every body is physical (J_k > 0).
    On scalars (_packed, dense.cholesky4): no views of the arrays, whose reference counts cost more than this
    algebra."""
    for k in range(L_inv.shape[0]):
        ok, l00, l10, l20, l30, l11, l21, l31, l22, l32, l33 = cholesky4(_packed(pi_hat, 10 * k), 0.0)
        if not ok:
            return False
        m00, m11, m22, m33 = 1.0 / l00, 1.0 / l11, 1.0 / l22, 1.0 / l33       # L^-1 by forward substitution
        m10 = -(l10 * m00) / l11
        m20, m21 = -(l20 * m00 + l21 * m10) / l22, -(l21 * m11) / l22
        m30, m31, m32 = -(l30 * m00 + l31 * m10 + l32 * m20) / l33, -(l31 * m11 + l32 * m21) / l33, -(l32 * m22) / l33
        L_inv[k, 0, 0], L_inv[k, 0, 1], L_inv[k, 0, 2], L_inv[k, 0, 3] = m00, 0.0, 0.0, 0.0
        L_inv[k, 1, 0], L_inv[k, 1, 1], L_inv[k, 1, 2], L_inv[k, 1, 3] = m10, m11, 0.0, 0.0
        L_inv[k, 2, 0], L_inv[k, 2, 1], L_inv[k, 2, 2], L_inv[k, 2, 3] = m20, m21, m22, 0.0
        L_inv[k, 3, 0], L_inv[k, 3, 1], L_inv[k, 3, 2], L_inv[k, 3, 3] = m30, m31, m32, m33
    return True


@njit(cache=True)
def inverse_factors(pi_hat):
    """L_k^-1 (nb, 4, 4) (inverse_factors_into), a new array; a LinAlgError where a body is not physical."""
    L_inv = np.empty((pi_hat.shape[0] // 10, 4, 4))
    if not inverse_factors_into(pi_hat, L_inv):
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return L_inv


@njit(cache=True, inline="always")
def _packed(pi, o):
    """J(pi[o:o + 10]) = [[1/2 tr(I) 1 - I, h], [h^T, m]] packed as (J_00, J_11, J_22, J_33, J_01, J_02, J_03, J_12,
    J_13, J_23): sum_j pi_j J(e_j) written out, its sums in j's order (inertia.pseudo_inertia)."""
    m, hx, hy, hz, xx, yy, zz, xy, xz, yz = pi[o], pi[o + 1], pi[o + 2], pi[o + 3], pi[o + 4], pi[o + 5], \
        pi[o + 6], pi[o + 7], pi[o + 8], pi[o + 9]
    return (-0.5 * xx + 0.5 * yy + 0.5 * zz, 0.5 * xx - 0.5 * yy + 0.5 * zz, 0.5 * xx + 0.5 * yy - 0.5 * zz, m,
            -xy, -xz, hx, -yz, hy, hz)


@njit(cache=True, fastmath={"contract"}, inline="always")
def _row(T, k, i, X):
    """Row i of T[k] X, X symmetric packed."""
    x00, x11, x22, x33, x01, x02, x03, x12, x13, x23 = X
    t0, t1, t2, t3 = T[k, i, 0], T[k, i, 1], T[k, i, 2], T[k, i, 3]
    return (t0 * x00 + t1 * x01 + t2 * x02 + t3 * x03, t0 * x01 + t1 * x11 + t2 * x12 + t3 * x13,
            t0 * x02 + t1 * x12 + t2 * x22 + t3 * x23, t0 * x03 + t1 * x13 + t2 * x23 + t3 * x33)


@njit(cache=True, fastmath={"contract"}, inline="always")
def _dot(r, T, k, j):
    """r . T[k, j]."""
    return r[0] * T[k, j, 0] + r[1] * T[k, j, 1] + r[2] * T[k, j, 2] + r[3] * T[k, j, 3]


@njit(cache=True, inline="always")
def _congruent(T, k, X):
    """T[k] X T[k]^T packed, X symmetric packed (T (nb, 4, 4))."""
    r0, r1, r2, r3 = _row(T, k, 0, X), _row(T, k, 1, X), _row(T, k, 2, X), _row(T, k, 3, X)
    return (_dot(r0, T, k, 0), _dot(r1, T, k, 1), _dot(r2, T, k, 2), _dot(r3, T, k, 3), _dot(r0, T, k, 1),
            _dot(r0, T, k, 2), _dot(r0, T, k, 3), _dot(r1, T, k, 2), _dot(r1, T, k, 3), _dot(r2, T, k, 3))


@njit(cache=True, inline="always")
def step_matrix_into(L_inv, k, step, E):
    """E[:10, k] <- X = L_k^-1 dJ L_k^-T packed (E's rows: X_00, X_11, X_22, X_33, X_01, X_02, X_03, X_12, X_13, X_23:
    the layout diagonalize takes), dJ = J(step[10 k:10 k + 10]); returns X's Frobenius norm."""
    return _store(E, k, _congruent(L_inv, k, _packed(step, 10 * k)))


@njit(cache=True, inline="always")
def _store(E, k, X):
    """E[:10, k] <- X packed; returns X's Frobenius norm."""
    x00, x11, x22, x33, x01, x02, x03, x12, x13, x23 = X
    E[0, k], E[1, k], E[2, k], E[3, k], E[4, k] = x00, x11, x22, x33, x01
    E[5, k], E[6, k], E[7, k], E[8, k], E[9, k] = x02, x03, x12, x13, x23
    return np.sqrt(x00 * x00 + x11 * x11 + x22 * x22 + x33 * x33
                   + 2.0 * (x01 * x01 + x02 * x02 + x03 * x03 + x12 * x12 + x13 * x13 + x23 * x23))


@njit(cache=True, inline="always")
def jacobi_tangent(a_pp, a_qq, a_pq):
    """t = tan(phi) of the Jacobi rotation zeroing a_pq, the smaller angle (Golub & Van Loan, Matrix Computations,
    4th ed., Algorithm 8.5.1):
    theta = (a_qq - a_pp) / (2 a_pq), t = sign(theta) / (|theta| + sqrt(theta^2 + 1)); 0 where a_pq = 0."""
    nonzero = a_pq != 0.0
    theta = 0.5 * (a_qq - a_pp) / (a_pq if nonzero else 1.0)
    t = (1.0 if theta >= 0 else -1.0) / (abs(theta) + np.sqrt(theta * theta + 1.0))
    return t if nonzero else 0.0


@njit(cache=True, inline="always")
def rotate_pairs(a_pp, a_qq, a_pq, a_uu, a_ww, a_uw, a_up, a_uq, a_wp, a_wq):
    """One round of the parallel-ordered Jacobi method on a symmetric 4 x 4: the rotations zeroing (p, q) and (u, w),
    disjoint pairs, their angles independent.  A' = G^T A G: a_pp -= t a_pq, a_qq += t a_pq, a_pq = 0 (the same for
    (u, w)), and the block of rows (u, w) and columns (p, q) rotated on both sides.  Returns the ten entries, in the
    arguments' order."""
    t1, t2 = jacobi_tangent(a_pp, a_qq, a_pq), jacobi_tangent(a_uu, a_ww, a_uw)
    c1, c2 = 1.0 / np.sqrt(t1 * t1 + 1.0), 1.0 / np.sqrt(t2 * t2 + 1.0)
    s1, s2 = t1 * c1, t2 * c2
    b_up, b_uq = c1 * a_up - s1 * a_uq, s1 * a_up + c1 * a_uq            # columns (p, q)
    b_wp, b_wq = c1 * a_wp - s1 * a_wq, s1 * a_wp + c1 * a_wq
    return (a_pp - t1 * a_pq, a_qq + t1 * a_pq, 0.0, a_uu - t2 * a_uw, a_ww + t2 * a_uw, 0.0,
            c2 * b_up - s2 * b_wp, c2 * b_uq - s2 * b_wq, s2 * b_up + c2 * b_wp, s2 * b_uq + c2 * b_wq)  # rows (u, w)


@njit(cache=True)
def diagonalize(E, k):
    """Column k of E (packed symmetric 4 x 4, step_matrix_into) brought to diagonal form by Jacobi rotations in the
    parallel order (0, 1)(2, 3), (0, 2)(1, 3), (0, 3)(1, 2) (Golub & Van Loan, section 8.5: a cyclic order whose
    rounds rotate disjoint pairs, so each round's two angles are independent), until the off-diagonal is 1e-15 of
    the diagonal: E[:4, k] then holds the eigenvalues, to rounding of the matrix's norm (backward stable).  The ten
    entries held as scalars throughout."""
    d0, d1, d2, d3, a01, a02, a03, a12, a13, a23 = E[0, k], E[1, k], E[2, k], E[3, k], E[4, k], E[5, k], E[6, k], \
        E[7, k], E[8, k], E[9, k]
    for _ in range(30):
        off = a01 * a01 + a02 * a02 + a03 * a03 + a12 * a12 + a13 * a13 + a23 * a23
        if off <= 1e-30 * (d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3):
            break
        d0, d1, a01, d2, d3, a23, a02, a12, a03, a13 = rotate_pairs(d0, d1, a01, d2, d3, a23, a02, a12, a03, a13)
        d0, d2, a02, d1, d3, a13, a01, a12, a03, a23 = rotate_pairs(d0, d2, a02, d1, d3, a13, a01, a12, a03, a23)
        d0, d3, a03, d1, d2, a12, a01, a13, a02, a23 = rotate_pairs(d0, d3, a03, d1, d2, a12, a01, a13, a02, a23)
    E[0, k], E[1, k], E[2, k], E[3, k], E[4, k], E[5, k], E[6, k], E[7, k], E[8, k], E[9, k] = \
        d0, d1, d2, d3, a01, a02, a03, a12, a13, a23


@njit(cache=True)
def step_scales(step, L_inv, E):
    """E[10, k] <- STEP_BOUND / max(top_k, STEP_BOUND), top_k the largest |eigenvalue| of X_k = L_k^-1 dJ_k L_k^-T,
    dJ_k = J(step_k): 1 where the Frobenius norm already bounds it, the eigenvalues (diagonalize) only where it does
    not.  E (11, nb) a work array."""
    nb = E.shape[1]
    bounded = True
    for k in range(nb):
        norm = step_matrix_into(L_inv, k, step, E)
        E[10, k] = 1.0 if norm <= STEP_BOUND * (1.0 - 1e-9) else -1.0      # |lambda|max <= |X|_F: none beyond
        bounded = bounded and E[10, k] > 0
    if bounded:
        return
    for k in range(nb):
        if E[10, k] < 0:
            diagonalize(E, k)
            top = max(abs(E[0, k]), abs(E[1, k]), abs(E[2, k]), abs(E[3, k]))
            E[10, k] = STEP_BOUND / max(top, STEP_BOUND)


@njit(cache=True)
def below_floor(S, k, pi, o, E):
    """Whether the smallest eigenvalue of S_k J(pi[o:o + 10]) S_k^T is below FLOOR (S (nb, 4, 4)): the Jacobi
    eigenvalues (diagonalize, in E[:10, k]) only where a Cholesky factorization with the shift 2 FLOOR fails (else it
    is above 2 FLOOR).  E (11, nb) a work array."""
    X = _congruent(S, k, _packed(pi, o))
    if cholesky4(X, 2.0 * FLOOR)[0]:
        return False
    _store(E, k, X)
    diagonalize(E, k)
    return min(E[0, k], E[1, k], E[2, k], E[3, k]) < FLOOR


@njit(cache=True, inline="always")
def bounded_step(pi_hat, step, L_inv, S, E, out):
    """out <- pi_hat + step, each body's step scaled so that J_k^-1/2 dJ_k J_k^-T/2 has no eigenvalue beyond
    STEP_BOUND (step_scales), a body that would fall below FLOOR J(pi_ref) (S = J(pi_ref)^-1/2) kept where it was.
    Returns whether any was bounded (composite.py's module docstring).  E (11, nb) a work array."""
    step_scales(step, L_inv, E)
    limited = False
    for k in range(S.shape[0]):
        lo, hi = 10 * k, 10 * k + 10
        moved = False
        for i in range(lo, hi):
            moved = moved or step[i] != 0.0
        if not moved:
            for i in range(lo, hi):
                out[i] = pi_hat[i]
            continue
        scale = E[10, k]
        for i in range(lo, hi):
            out[i] = pi_hat[i] + step[i] * scale
        low = below_floor(S, k, out, lo, E)                   # (E[:10, k]: free once E[10, k] holds the scale)
        if low:
            for i in range(lo, hi):
                out[i] = pi_hat[i]
        limited = limited or scale < 1.0 or low
    return limited


PROJECTED_WORK = 25         # projected's work rows of 4: J(pi_k), S J S, a factor, a basis (4, 4), clipped_into's (9, 4)


@njit(cache=True, inline="always")
def projected(pi, step, S, S_inv, work, out):
    """out <- the nearest parameters to pi + step in the metric of S = J(pi_ref)^-1/2 with every J(pi_k) >= 0
    (InertiaMetric.project, floor 0; the gradient law's step): a body whose S J S is positive definite (a Cholesky
    factorization) as it is, the others with the eigenvalues of S J S clipped at 0 (inertia.clipped_into, from the
    identity basis).  work (PROJECTED_WORK, 4): nothing is allocated."""
    J, Jw, F, U = work[:4], work[4:8], work[8:12], work[12:16]
    for k in range(S.shape[0]):
        o = 10 * k
        for i in range(o, o + 10):
            out[i] = pi[i] + step[i]
        pseudo_inertia_into(out[o:o + 10], J)
        congruence_into(S[k], J, F, Jw)                                 # S J S (S symmetric)
        if cholesky_into(Jw, F, 0.0, 0.0):
            continue
        for a in range(4):
            for b in range(4):
                U[a, b] = 1.0 if a == b else 0.0
        clipped_into(Jw, S_inv[k], 0.0, U, work[16:25], out, o)
