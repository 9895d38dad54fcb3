"""dense.cholesky_upper_into and solve_upper_factor (the composite law's p x p system, in four-lane registers: simd)
against LAPACK's factor and numpy's solve, on the sizes of its padding and tails; dense.rank_update_lower (the
law's information update) against numpy's products."""
import numpy as np
import pytest

from robot_dynamics.dense import cholesky_upper_into, padded, rank_update_lower, solve_upper_factor


def bordered(S, rng):
    """S's lower triangle in an n x n array (n = padded(m)) bordered by the identity, its upper triangle garbage."""
    m, n = S.shape[0], padded(S.shape[0])
    A = rng.normal(size=(n, n))
    A[np.tril_indices(n)] = 0.0
    A[:m, :m] += np.tril(S)
    A[np.arange(m, n), np.arange(m, n)] = 1.0
    return A


@pytest.mark.parametrize("m", [1, 3, 4, 5, 8, 11, 12, 70, 130])
def test_factor_and_solve_against_lapack(m):
    """L^T in the upper triangle equals numpy's (LAPACK's) factor to rounding, the strict lower triangle is left as
    it was, the border's factor is the identity's, and the solve meets S x = g to rounding, its border left zero:
    the panels of four columns, the groups of eight rows, the tail of four and the solves' blocks of four rows (one
    block alone, and many) are each reached here."""
    rng = np.random.default_rng(m)
    X = rng.normal(size=(m, 2 * m + 1))
    S = X @ X.T / m + 0.1 * np.eye(m)
    A = bordered(S, rng)
    lower = np.tril(A, -1)
    assert cholesky_upper_into(A)
    L = np.linalg.cholesky(S)
    np.testing.assert_allclose(np.triu(A)[:m, :m].T, L, rtol=0, atol=1e-14 * np.abs(L).max())
    np.testing.assert_array_equal(np.tril(A, -1), lower)
    np.testing.assert_array_equal(np.triu(A)[:, m:], np.eye(A.shape[0])[:, m:])
    g = rng.normal(size=m)
    x = np.zeros(A.shape[0])
    x[:m] = g
    solve_upper_factor(A, x)
    np.testing.assert_allclose(S @ x[:m], g, rtol=0, atol=1e-12 * np.abs(g).max())
    np.testing.assert_array_equal(x[m:], 0.0)


@pytest.mark.parametrize("m", [5, 70])
def test_refuses_what_is_not_positive_definite(m):
    """False where a pivot is not > 0: an indefinite matrix (its smallest pivot at a panel's fourth column, or in
    the tail), and a NaN in the lower triangle that the factor reads; and False, nothing written, for arrays whose
    sides are not what the 4-lane loads need (an unpadded right-hand side, a side not a multiple of four)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(m, 2 * m))
    S = X @ X.T / m + np.eye(m)
    for k in (3, m - 1):
        T = S.copy()
        T[k, k] = -1.0
        assert not cholesky_upper_into(bordered(T, rng))
    A = bordered(S, rng)
    A[m - 1, 1] = np.nan
    assert not cholesky_upper_into(A)
    A = bordered(S, rng)
    assert cholesky_upper_into(A)
    x = np.ones(m)                              # not padded: refused, untouched
    assert not solve_upper_factor(A, x) and (x == 1.0).all()
    for B in (np.eye(6), np.eye(8)[:4]):
        C = B.copy()
        assert not cholesky_upper_into(C) and np.array_equal(C, B)
    x = np.ones(6)                              # a side not a multiple of four: refused, untouched
    assert not solve_upper_factor(np.eye(6), x) and (x == 1.0).all()


@pytest.mark.parametrize("k, p", [(1, 1), (3, 4), (2, 9), (5, 12), (7, 70), (18, 130)])
def test_rank_update_lower_against_numpy(k, p):
    """out and A's lower triangles equal numpy's C + decay (B - C) + rho V^T V to rounding, into two arrays (A wider
    than p, as the padded system) and into one; nothing is written outside them but the three entries above the
    diagonal in each row of a 4 x 4 diagonal tile: the eight- and four-column tiles and the scalar rows past a
    multiple of four each reach some case here."""
    rng = np.random.default_rng(p)
    V = rng.normal(size=(k, p))
    B, C = rng.normal(size=(p, p)), rng.normal(size=(p, p))
    expected = C + 0.97 * (B - C) + 0.3 * V.T @ V
    lower = np.tril(np.ones((p, p), bool))
    tiles = lower | (np.subtract.outer(np.arange(p), np.arange(p)) > -4) & (np.arange(p) < p - p % 4)[:, None] \
        & (np.arange(p)[None, :] // 4 == np.arange(p)[:, None] // 4)
    out, A = rng.normal(size=(p, p)), rng.normal(size=(padded(p), padded(p)))
    out0, A0 = out.copy(), A.copy()
    rank_update_lower(V, 0.3, 0.97, B, C, out, A)
    scale = np.abs(expected).max()
    for X, X0 in ((out, out0), (A[:p, :p], A0[:p, :p])):
        np.testing.assert_allclose(X[lower], expected[lower], rtol=0, atol=1e-14 * scale)
        np.testing.assert_array_equal(X[~tiles], X0[~tiles])
    np.testing.assert_array_equal(A[p:], A0[p:])
    np.testing.assert_array_equal(A[:, p:], A0[:, p:])
    same = rng.normal(size=(p, p))
    rank_update_lower(V, 0.3, 0.97, B, C, same, same)
    np.testing.assert_array_equal(same[lower], out[lower])
