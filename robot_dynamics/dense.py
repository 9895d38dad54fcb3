"""Layer 1: small dense linear algebra, compiled, shared by the controllers' ticks and the inertia geometry.

cholesky_into: A - shift 1 = L L^T for a symmetric A (n, n), with a pivot threshold, so that the caller learns
whether A is (numerically) positive definite from the factorization itself -- the inertia geometry's "is this
body physical" (J - floor 1 > 0), the task-space inertia's singularity test, M(q; pi_ref) in the composite law;
solve_lower: the triangular solves with such a factor; cholesky_upper_into and solve_upper_factor: the same for the
composite law's p x p system, written in 4-lane registers (simd) on the system bordered to padded(m) rows;
rank_update_lower: that system's information update (a decayed matrix plus rho V^T V), in the same lanes;
cholesky4: a 4 x 4 factor on scalars (those diagonal blocks, the bodies' pseudo-inertias); copy_vector and
copy_matrix: one array into another.

The first two are compiled with sums reordered (fastmath "reassoc" and "contract": vectorized dot products, fused
multiply-adds), the 4-lane ones in a fixed order with fused multiply-adds; all keep NaN and inf (no "nnan",
"ninf"): a NaN in A still fails every pivot test.
"""
import numpy as np
from numba import njit
from numba.extending import register_jitable

from .simd import fnma, lane, lanes, load, mul, splat, store

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


@register_jitable
def padded(n):
    """The side of cholesky_upper_into's array for an n x n system: n rounded up to a multiple of 4."""
    return (n + 3) // 4 * 4


@njit(cache=True, fastmath={"contract"})
def cholesky_upper_into(A):
    """A's upper triangle (its diagonal included) <- L^T, L the lower-triangular factor of A = L L^T, A's strict
    lower triangle read and left as it was; A (n, n) C-contiguous, n a multiple of 4 (padded: a system of m < n
    unknowns bordered by the identity, whose factor is L bordered by the identity).  Returns False, A's upper
    triangle incomplete, unless every pivot is > 0 (A not positive definite, or NaN) -- or A is not square with a
    multiple of four rows (nothing written).

    Left-looking by panels of four columns j0..j0 + 3, the rows below them eight at a time (then four): the column
    segments L[i0:i0 + 8, j] are rows of L^T, so A[i, j0 + c] - sum_m<j0 L[i, m] L[j0 + c, m] for eight rows and four
    columns is eight 4-lane accumulators updated by two loads, four broadcasts and eight fused multiply-adds per m
    (simd: numba leaves such a register tile scalar); the panel's 4 x 4 diagonal block is then factored on scalars
    and the rows below solved against it lane-wise (_panel_solve).  With solve_upper_factor, 0.67-0.71x the time of
    cholesky_into and solve_lower for 70 to 180 unknowns (stop 50, paired in one process)."""
    n = A.shape[0]
    if n % 4 != 0 or A.shape[1] != n:
        return False
    F = A.reshape(n * n)                    # (flat indices: F[m n + i] = L^T[m, i] = L[i, m])
    for j0 in range(0, n, 4):
        i0 = j0
        while i0 < n:
            eight = i0 + 8 <= n
            a0, a1, a2, a3 = _column(A, i0, j0), _column(A, i0, j0 + 1), _column(A, i0, j0 + 2), \
                _column(A, i0, j0 + 3)
            b0, b1, b2, b3 = a0, a1, a2, a3
            k, c = i0, j0                       # row m of L^T: F[k:k + 8] the rows', F[c:c + 4] the panel's
            if eight:
                b0, b1, b2, b3 = _column(A, i0 + 4, j0), _column(A, i0 + 4, j0 + 1), _column(A, i0 + 4, j0 + 2), \
                    _column(A, i0 + 4, j0 + 3)
                for _ in range(j0):
                    u, w = load(F, k), load(F, k + 4)
                    s = splat(F[c])
                    a0, b0 = fnma(s, u, a0), fnma(s, w, b0)
                    s = splat(F[c + 1])
                    a1, b1 = fnma(s, u, a1), fnma(s, w, b1)
                    s = splat(F[c + 2])
                    a2, b2 = fnma(s, u, a2), fnma(s, w, b2)
                    s = splat(F[c + 3])
                    a3, b3 = fnma(s, u, a3), fnma(s, w, b3)
                    k += n
                    c += n
            else:
                for _ in range(j0):
                    u = load(F, k)
                    a0, a1 = fnma(splat(F[c]), u, a0), fnma(splat(F[c + 1]), u, a1)
                    a2, a3 = fnma(splat(F[c + 2]), u, a2), fnma(splat(F[c + 3]), u, a3)
                    k += n
                    c += n
            if i0 == j0:                                    # the diagonal block: rows j0..j0 + 3 of a0..a3
                if not _diagonal_block(F, n, j0, a0, a1, a2, a3):
                    return False
                if eight:
                    _panel_solve(F, n, j0, i0 + 4, b0, b1, b2, b3)
            else:
                _panel_solve(F, n, j0, i0, a0, a1, a2, a3)
                if eight:
                    _panel_solve(F, n, j0, i0 + 4, b0, b1, b2, b3)
            i0 += 8 if eight else 4
    return True


@njit(cache=True, inline="always")
def _column(A, i, j):
    """A[i:i + 4, j] as one value."""
    return lanes(A[i, j], A[i + 1, j], A[i + 2, j], A[i + 3, j])


@njit(cache=True, inline="always")
def _diagonal_block(F, n, j0, a0, a1, a2, a3):
    """L^T's 4 x 4 diagonal block at j0 from the updated block (a_c's lane r: row j0 + r, column j0 + c, r >= c), by
    cholesky4; False unless every pivot is > 0."""
    ok, l00, l10, l20, l30, l11, l21, l31, l22, l32, l33 = cholesky4(
        (lane(a0, 0), lane(a1, 1), lane(a2, 2), lane(a3, 3), lane(a0, 1), lane(a0, 2), lane(a0, 3), lane(a1, 2),
         lane(a1, 3), lane(a2, 3)), 0.0)
    if not ok:
        return False
    k = j0 * n + j0
    F[k], F[k + 1], F[k + 2], F[k + 3] = l00, l10, l20, l30
    k += n + 1
    F[k], F[k + 1], F[k + 2] = l11, l21, l31
    k += n + 1
    F[k], F[k + 1] = l22, l32
    F[k + n + 1] = l33
    return True


@njit(cache=True, fastmath={"contract"}, inline="always")
def cholesky4(X, shift):
    """(ok, L_00, L_10, L_20, L_30, L_11, L_21, L_31, L_22, L_32, L_33): X - shift 1 = L L^T for a symmetric 4 x 4 X
    packed as (X_00, X_11, X_22, X_33, X_01, X_02, X_03, X_12, X_13, X_23), on scalars (cholesky_into's factor and
    pivot test, tolerance 0); ok False where a pivot is not > 0 (NaN included).  The bodies' pseudo-inertias
    (controllers._body_steps) and cholesky_upper_into's diagonal blocks."""
    x00, x11, x22, x33, x01, x02, x03, x12, x13, x23 = X
    d = x00 - shift
    if not d > 0.0:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    l00 = np.sqrt(d)
    l10, l20, l30 = x01 / l00, x02 / l00, x03 / l00
    d = x11 - shift - l10 * l10
    if not d > 0.0:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    l11 = np.sqrt(d)
    l21, l31 = (x12 - l20 * l10) / l11, (x13 - l30 * l10) / l11
    d = x22 - shift - l20 * l20 - l21 * l21
    if not d > 0.0:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    l22 = np.sqrt(d)
    l32 = (x23 - l30 * l20 - l31 * l21) / l22
    d = x33 - shift - l30 * l30 - l31 * l31 - l32 * l32
    if not d > 0.0:
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    return True, l00, l10, l20, l30, l11, l21, l31, l22, l32, np.sqrt(d)


@njit(cache=True, fastmath={"contract"}, inline="always")
def _panel_solve(F, n, j0, i0, a0, a1, a2, a3):
    """L^T[j0 + c, i0:i0 + 4] <- the rows i0..i0 + 3 of the panel's columns: x_c = (a_c - sum_d<c x_d L_cd) / L_cc,
    lane by lane, L's diagonal block at j0 read from L^T (_diagonal_block wrote it)."""
    k = j0 * n + j0
    l00, l10, l20, l30 = F[k], F[k + 1], F[k + 2], F[k + 3]
    l11, l21, l31 = F[k + n + 1], F[k + n + 2], F[k + n + 3]
    l22, l32, l33 = F[k + 2 * n + 2], F[k + 2 * n + 3], F[k + 3 * n + 3]
    x0 = mul(a0, splat(1.0 / l00))
    x1 = mul(fnma(splat(l10), x0, a1), splat(1.0 / l11))
    x2 = mul(fnma(splat(l21), x1, fnma(splat(l20), x0, a2)), splat(1.0 / l22))
    x3 = mul(fnma(splat(l32), x2, fnma(splat(l31), x1, fnma(splat(l30), x0, a3))), splat(1.0 / l33))
    k = j0 * n + i0
    store(F, k, x0)
    store(F, k + n, x1)
    store(F, k + 2 * n, x2)
    store(F, k + 3 * n, x3)


@njit(cache=True, fastmath={"contract"})
def solve_upper_factor(U, x):
    """x <- (L L^T)^-1 x in place, L^T in U's upper triangle (cholesky_upper_into; U (n, n), n a multiple of four);
    x (n,), its entries past the system's m unknowns zero (the border: they stay zero).  Both passes by blocks of
    four rows of L^T: forward, the block's 4 x 4 triangle on scalars, then the entries below it updated by one
    4-lane load and store of x per four fused multiply-adds; backward, four dot products sharing each load of x,
    then the block's triangle.  0.69-0.71x the time of one row at a time (70 and 130 unknowns, in one process).
    Returns False, x untouched, unless x has n entries and n is a multiple of four (the 4-lane loads and stores)."""
    n = U.shape[0]
    if x.shape[0] != n or U.shape[1] != n or n % 4 != 0:
        return False
    F = U.reshape(n * n)                    # (F[j n + i] = L^T[j, i] = L[i, j])
    for j0 in range(0, n, 4):
        k = j0 * n + j0
        y0 = x[j0] / F[k]
        y1 = (x[j0 + 1] - F[k + 1] * y0) / F[k + n + 1]
        y2 = (x[j0 + 2] - F[k + 2] * y0 - F[k + n + 2] * y1) / F[k + 2 * n + 2]
        y3 = (x[j0 + 3] - F[k + 3] * y0 - F[k + n + 3] * y1 - F[k + 2 * n + 3] * y2) / F[k + 3 * n + 3]
        x[j0], x[j0 + 1], x[j0 + 2], x[j0 + 3] = y0, y1, y2, y3
        s0, s1, s2, s3 = splat(y0), splat(y1), splat(y2), splat(y3)
        k = j0 * n
        for i in range(j0 + 4, n, 4):
            store(x, i, fnma(s3, load(F, k + 3 * n + i), fnma(s2, load(F, k + 2 * n + i),
                  fnma(s1, load(F, k + n + i), fnma(s0, load(F, k + i), load(x, i))))))
    for j0 in range(n - 4, -1, -4):
        k = j0 * n
        a0, a1, a2, a3 = splat(0.0), splat(0.0), splat(0.0), splat(0.0)     # -sum_i U[j0 + r, i] x[i], i > j0 + 3
        for i in range(j0 + 4, n, 4):
            u = load(x, i)
            a0, a1 = fnma(load(F, k + i), u, a0), fnma(load(F, k + n + i), u, a1)
            a2, a3 = fnma(load(F, k + 2 * n + i), u, a2), fnma(load(F, k + 3 * n + i), u, a3)
        x3 = (x[j0 + 3] + _sum(a3)) / F[k + 3 * n + j0 + 3]
        x2 = (x[j0 + 2] + _sum(a2) - F[k + 2 * n + j0 + 3] * x3) / F[k + 2 * n + j0 + 2]
        x1 = (x[j0 + 1] + _sum(a1) - F[k + n + j0 + 3] * x3 - F[k + n + j0 + 2] * x2) / F[k + n + j0 + 1]
        x0 = (x[j0] + _sum(a0) - F[k + j0 + 3] * x3 - F[k + j0 + 2] * x2 - F[k + j0 + 1] * x1) / F[k + j0]
        x[j0], x[j0 + 1], x[j0 + 2], x[j0 + 3] = x0, x1, x2, x3
    return True


@njit(cache=True, inline="always")
def _sum(a):
    """The sum of a's four lanes."""
    return (lane(a, 0) + lane(a, 1)) + (lane(a, 2) + lane(a, 3))


@njit(cache=True, fastmath={"contract"})
def rank_update_lower(V, rho, decay, B, C, out, A):
    """out and A's lower triangles <- C + decay (B - C) + rho V^T V (V (k, p), B, C, out (p, p), A (>= p, >= p), all
    C-contiguous; out and A may be one array).  Rows four at a time by tiles of eight (then four) columns, eight 4-lane
    accumulators (simd) updated by two loads, four broadcasts and eight fused multiply-adds per row of V: the tile
    on the diagonal also writes the three entries above it in each of out and A, from B and C's there (the callers
    read lower triangles only).  The last p mod 4 rows on scalars."""
    k, p = V.shape
    i0 = 0
    while i0 + 4 <= p:
        j0 = 0
        while j0 < i0 + 4:
            eight = j0 + 8 <= i0 + 4
            z = splat(0.0)                                  # -sum V[m, i] V[m, j], rows i0.., columns j0..
            a0, a1, a2, a3, b0, b1, b2, b3 = z, z, z, z, z, z, z, z
            m = j0
            for r in range(k):
                u = load(V, m)
                s0, s1, s2, s3 = splat(V[r, i0]), splat(V[r, i0 + 1]), splat(V[r, i0 + 2]), splat(V[r, i0 + 3])
                a0, a1, a2, a3 = fnma(s0, u, a0), fnma(s1, u, a1), fnma(s2, u, a2), fnma(s3, u, a3)
                if eight:
                    w = load(V, m + 4)
                    b0, b1, b2, b3 = fnma(s0, w, b0), fnma(s1, w, b1), fnma(s2, w, b2), fnma(s3, w, b3)
                m += p
            _tile_row(B, C, out, A, i0, j0, rho, decay, a0)
            _tile_row(B, C, out, A, i0 + 1, j0, rho, decay, a1)
            _tile_row(B, C, out, A, i0 + 2, j0, rho, decay, a2)
            _tile_row(B, C, out, A, i0 + 3, j0, rho, decay, a3)
            if eight:
                _tile_row(B, C, out, A, i0, j0 + 4, rho, decay, b0)
                _tile_row(B, C, out, A, i0 + 1, j0 + 4, rho, decay, b1)
                _tile_row(B, C, out, A, i0 + 2, j0 + 4, rho, decay, b2)
                _tile_row(B, C, out, A, i0 + 3, j0 + 4, rho, decay, b3)
            j0 += 8 if eight else 4
        i0 += 4
    for i in range(i0, p):
        for j in range(i + 1):
            t = 0.0
            for m in range(k):
                t += V[m, i] * V[m, j]
            out[i, j] = A[i, j] = C[i, j] + decay * (B[i, j] - C[i, j]) + rho * t


@njit(cache=True, fastmath={"contract"}, inline="always")
def _tile_row(B, C, out, A, i, j, rho, decay, a):
    """out[i, j:j + 4] and A[i, j:j + 4] <- C + decay (B - C) - rho a there (rank_update_lower)."""
    f = i * B.shape[1] + j
    c = load(C, f)
    x = fnma(splat(rho), a, fnma(splat(-decay), load(B, f), fnma(splat(decay), c, c)))
    store(out, i * out.shape[1] + j, x)
    store(A, i * A.shape[1] + j, x)


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
