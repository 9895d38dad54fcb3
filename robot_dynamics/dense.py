"""Layer 1: small dense linear algebra, compiled, shared by the controllers' ticks and the inertia geometry.

cholesky_into: A - shift 1 = L L^T for a symmetric A (n, n), with a pivot threshold, so that the caller learns
whether A is (numerically) positive definite from the factorization itself -- the inertia geometry's "is this
body physical" (J - floor 1 > 0), the task-space inertia's singularity test, the composite law's metric;
solve_lower: the triangular solves with such a factor; copy_vector and copy_matrix: one array into another.

Both are compiled with sums reordered (fastmath "reassoc" and "contract": vectorized dot products, fused
multiply-adds) and NaN and inf kept (no "nnan", "ninf"): a NaN in A still fails every pivot test.
"""
import numpy as np
from numba import njit

REORDER = {"reassoc", "contract"}


@njit(cache=True, fastmath=REORDER)
def cholesky_into(A, L, shift=0.0, tolerance=0.0):
    """L <- the lower-triangular factor of A - shift 1 = L L^T (n, n; A's lower triangle read, L's upper triangle
    zeroed; L may be A).  Returns False, L left incomplete, unless every pivot exceeds tolerance (A - shift 1 not
    positive definite, or singular to that precision).

    Crout's order, two columns j, j + 1 at a time against four rows i at a time: L_ij = (A_ij - sum_m<j L_im L_jm)
    / L_jj, eight dot products sharing their loads (70 x 70 in ~8 us, LAPACK's dpotrf ~20 us here).  The controllers
    pass shift and tolerance even when zero: numba compiles a function once per argument signature, and an omitted
    default is a signature of its own."""
    n = A.shape[0]
    for j in range(0, n, 2):
        if not _pivot(A, L, j, shift, tolerance):
            return False
        if j + 1 == n:
            break
        s = A[j + 1, j]
        for m in range(j):
            s -= L[j + 1, m] * L[j, m]
        L[j + 1, j] = s / L[j, j]
        if not _pivot(A, L, j + 1, shift, tolerance):
            return False
        _column_pair(A, L, j)
    for j in range(n):
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(cache=True, fastmath=REORDER, inline="always")
def _pivot(A, L, j, shift, tolerance):
    """L_jj = sqrt(A_jj - shift - sum_m<j L_jm^2); False unless the radicand exceeds tolerance."""
    d = A[j, j] - shift
    for m in range(j):
        d -= L[j, m] * L[j, m]
    if not d > tolerance:
        return False
    L[j, j] = np.sqrt(d)
    return True


@njit(cache=True, fastmath=REORDER, inline="always")
def _column_pair(A, L, j):
    """L[j + 2:, j] and L[j + 2:, j + 1], the columns j, j + 1 known down to their diagonal."""
    n, inv0, inv1, l10 = A.shape[0], 1.0 / L[j, j], 1.0 / L[j + 1, j + 1], L[j + 1, j]
    i = j + 2
    while i + 3 < n:
        a0, a1, a2, a3 = A[i, j], A[i + 1, j], A[i + 2, j], A[i + 3, j]
        b0, b1, b2, b3 = A[i, j + 1], A[i + 1, j + 1], A[i + 2, j + 1], A[i + 3, j + 1]
        for m in range(j):
            x, y = L[j, m], L[j + 1, m]
            c0, c1, c2, c3 = L[i, m], L[i + 1, m], L[i + 2, m], L[i + 3, m]
            a0 -= c0 * x
            a1 -= c1 * x
            a2 -= c2 * x
            a3 -= c3 * x
            b0 -= c0 * y
            b1 -= c1 * y
            b2 -= c2 * y
            b3 -= c3 * y
        a0, a1, a2, a3 = a0 * inv0, a1 * inv0, a2 * inv0, a3 * inv0
        L[i, j], L[i + 1, j], L[i + 2, j], L[i + 3, j] = a0, a1, a2, a3
        L[i, j + 1], L[i + 1, j + 1] = (b0 - a0 * l10) * inv1, (b1 - a1 * l10) * inv1
        L[i + 2, j + 1], L[i + 3, j + 1] = (b2 - a2 * l10) * inv1, (b3 - a3 * l10) * inv1
        i += 4
    for i in range(i, n):
        a, b = A[i, j], A[i, j + 1]
        for m in range(j):
            a -= L[i, m] * L[j, m]
            b -= L[i, m] * L[j + 1, m]
        a *= inv0
        L[i, j], L[i, j + 1] = a, (b - a * l10) * inv1


@njit(cache=True, fastmath=REORDER)
def solve_lower(L, x, transposed=False):
    """x <- L^-1 x, or L^-T x when transposed (L lower triangular (n, n), x (n,)): in place, by rows."""
    n = x.shape[0]
    if transposed:
        for i in range(n - 1, -1, -1):
            x[i] /= L[i, i]
            for m in range(i):
                x[m] -= L[i, m] * x[i]
    else:
        for i in range(n):
            s = x[i]
            for m in range(i):
                s -= L[i, m] * x[m]
            x[i] = s / L[i, i]


@njit(cache=True)
def copy_vector(out, x):
    """out[:] = x (n,) without numba's broadcasting checks: their error message (shapes formatted as strings) brings
    numba's string machinery into every compiled function that assigns one array to another, seconds of compilation
    each (the composite controller's tick: 65 -> 53 s of CPU cold with these two)."""
    for i in range(out.shape[0]):
        out[i] = x[i]


@njit(cache=True)
def copy_matrix(out, x):
    """out[:, :] = x (m, n), as copy_vector."""
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = x[i, j]
