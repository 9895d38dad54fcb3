"""Layer 1: small dense linear algebra, compiled, shared by the controllers' ticks and the inertia geometry.

cholesky_into: A - shift 1 = L L^T for a symmetric A (n, n), with a pivot threshold, so that the caller learns
whether A is (numerically) positive definite from the factorization itself -- the inertia geometry's "is this
body physical" (J - floor 1 > 0), the task-space inertia's singularity test, the composite law's metric;
solve_lower: the triangular solves with such a factor.
"""
import numpy as np
from numba import njit


@njit(cache=True)
def cholesky_into(A, L, shift=0.0, tolerance=0.0):
    """L <- the lower-triangular factor of A - shift 1 = L L^T (n, n; A's lower triangle read, L's upper triangle
    zeroed).  Returns False, L left incomplete, unless every pivot exceeds tolerance (A - shift 1 not positive
    definite, or singular to that precision)."""
    n = A.shape[0]
    for j in range(n):
        for i in range(j):
            L[i, j] = 0.0
        d = A[j, j] - shift
        for m in range(j):
            d -= L[j, m] * L[j, m]
        if not d > tolerance:
            return False
        L[j, j] = np.sqrt(d)
        for i in range(j + 1, n):
            s = A[i, j]
            for m in range(j):
                s -= L[i, m] * L[j, m]
            L[i, j] = s / L[j, j]
    return True


@njit(cache=True)
def solve_lower(L, x, transposed=False):
    """x <- L^-1 x, or L^-T x when transposed (L lower triangular (n, n), x (n,)): in place, by rows."""
    n = x.shape[0]
    if transposed:
        for i in range(n - 1, -1, -1):
            s = x[i]
            for m in range(i + 1, n):
                s -= L[m, i] * x[m]
            x[i] = s / L[i, i]
    else:
        for i in range(n):
            s = x[i]
            for m in range(i):
                s -= L[i, m] * x[m]
            x[i] = s / L[i, i]
