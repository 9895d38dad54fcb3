"""The composite tick's algebra of each body's pseudo-inertia J(pi_k) (4, 4), compiled: J(pi_k) itself, the inverse
factors of J(pi_hat_k) (the log-det barrier's Hessian, _composite_tick.add_log_det_block), and the bounds on a step of
the estimate (composite.py's module docstring): no eigenvalue of J_k^-1/2 dJ_k J_k^-T/2 beyond STEP_BOUND, no body
below FLOOR J(pi_ref); the gradient law's projection.
"""
import numpy as np
from numba import njit

from ..dense import cholesky_into

STEP_BOUND = 0.1            # the largest relative change of a body's pseudo-inertia in one step, in any direction
FLOOR = 1e-9                # no body's pseudo-inertia below FLOOR J(pi_ref) in any direction: numerically > 0


@njit(cache=True)
def pseudo_inertia_into(pi_k, J):
    """J <- J(pi_k) = [[1/2 tr(I) 1 - I, h], [h^T, m]] (4, 4) (inertia.pseudo_inertia), pi_k = (m, h, I_xx, I_yy,
    I_zz, I_xy, I_xz, I_yz): sum_j pi_kj J(e_j) written out, its sums in j's order."""
    m, hx, hy, hz, xx, yy, zz, xy, xz, yz = pi_k[0], pi_k[1], pi_k[2], pi_k[3], pi_k[4], pi_k[5], pi_k[6], \
        pi_k[7], pi_k[8], pi_k[9]
    J[0, 0] = -0.5 * xx + 0.5 * yy + 0.5 * zz
    J[1, 1] = 0.5 * xx - 0.5 * yy + 0.5 * zz
    J[2, 2] = 0.5 * xx + 0.5 * yy - 0.5 * zz
    J[3, 3] = m
    J[0, 1] = J[1, 0] = -xy
    J[0, 2] = J[2, 0] = -xz
    J[1, 2] = J[2, 1] = -yz
    J[0, 3] = J[3, 0] = hx
    J[1, 3] = J[3, 1] = hy
    J[2, 3] = J[3, 2] = hz


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


@njit(cache=True)
def eigenvalue_range(A):
    """(smallest, largest in magnitude) eigenvalue of a small symmetric A, by cyclic Jacobi rotations (A is
    overwritten: its diagonal ends as the eigenvalues)."""
    n = A.shape[0]
    for _ in range(30):
        off, scale = 0.0, 0.0
        for i in range(n):
            scale += A[i, i] * A[i, i]
            for j in range(i + 1, n):
                off += A[i, j] * A[i, j]
        if off <= 1e-30 * scale:                        # off-diagonal 1e-15 of the diagonal: converged
            break
        for i in range(n - 1):
            for j in range(i + 1, n):
                if A[i, j] == 0.0:
                    continue
                theta = 0.5 * (A[j, j] - A[i, i]) / A[i, j]
                t = (1.0 if theta >= 0 else -1.0) / (abs(theta) + np.sqrt(theta * theta + 1.0))
                c = 1.0 / np.sqrt(t * t + 1.0)
                sn = t * c
                for k in range(n):                              # A <- A G, then G^T A
                    a_ki, a_kj = A[k, i], A[k, j]
                    A[k, i], A[k, j] = c * a_ki - sn * a_kj, sn * a_ki + c * a_kj
                for k in range(n):
                    a_ik, a_jk = A[i, k], A[j, k]
                    A[i, k], A[j, k] = c * a_ik - sn * a_jk, sn * a_ik + c * a_jk
    low, top = np.inf, 0.0
    for i in range(n):
        low, top = min(low, A[i, i]), max(top, abs(A[i, i]))
    return low, top


@njit(cache=True)
def inverse_factors_into(pi_hat, J, L_inv):
    """L_inv[k] <- L_k^-1 (nb, 4, 4) with J(pi_hat_k) = L_k L_k^T; returns whether every body is physical (J_k > 0).
    J (2, 4, 4) a work array."""
    for k in range(L_inv.shape[0]):
        pseudo_inertia_into(pi_hat[10 * k:10 * k + 10], J[0])
        if not cholesky_into(J[0], J[1]):
            return False
        for c in range(4):                                            # L^-1, column c: forward substitution
            for i in range(4):
                x = 1.0 if i == c else 0.0
                for m in range(i):
                    x -= J[1, i, m] * L_inv[k, m, c]
                L_inv[k, i, c] = x / J[1, i, i]
    return True


@njit(cache=True)
def inverse_factors(pi_hat):
    """L_k^-1 (nb, 4, 4) (inverse_factors_into), a new array; a LinAlgError where a body is not physical."""
    L_inv = np.empty((pi_hat.shape[0] // 10, 4, 4))
    if not inverse_factors_into(pi_hat, np.empty((2, 4, 4)), L_inv):
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return L_inv


@njit(cache=True)
def step_bound(L_inv, step_k, J):
    """STEP_BOUND / max(top, STEP_BOUND), top the largest |eigenvalue| of L^-1 dJ L^-T, dJ = J(step_k): 1 where the
    Frobenius norm already bounds it (no eigenvalues computed).  J (3, 4, 4) a work array."""
    pseudo_inertia_into(step_k, J[0])
    congruence_into(L_inv, J[0], J[1], J[2])
    frobenius = 0.0
    for a in range(4):
        for b in range(4):
            frobenius += J[2, a, b] * J[2, a, b]
    if np.sqrt(frobenius) <= STEP_BOUND * (1.0 - 1e-9):            # |lambda|max <= |X|_F: no eigenvalue beyond
        return 1.0
    return STEP_BOUND / max(eigenvalue_range(J[2])[1], STEP_BOUND)


@njit(cache=True)
def below_floor(S_k, pi_k, J):
    """Whether the smallest eigenvalue of S_k J(pi_k) S_k^T is below FLOOR: the Jacobi eigenvalues only where a
    Cholesky factorization with the shift 2 FLOOR fails (else it is above 2 FLOOR).  J (3, 4, 4) a work array."""
    pseudo_inertia_into(pi_k, J[0])
    congruence_into(S_k, J[0], J[1], J[2])
    if cholesky_into(J[2], J[1], 2.0 * FLOOR):
        return False
    return eigenvalue_range(J[2])[0] < FLOOR


@njit(cache=True)
def bounded_step(pi_hat, step, L_inv, S, J, out):
    """out <- pi_hat + step, each body's step scaled so that J_k^-1/2 dJ_k J_k^-T/2 has no eigenvalue beyond
    STEP_BOUND, a body that would fall below FLOOR J(pi_ref) (S = J(pi_ref)^-1/2) kept where it was.  Returns
    whether any was bounded (composite.py's module docstring).  J (3, 4, 4) a work array."""
    limited = False
    for k in range(S.shape[0]):
        lo, hi = 10 * k, 10 * k + 10
        if not np.any(step[lo:hi]):
            out[lo:hi] = pi_hat[lo:hi]
            continue
        scale = step_bound(L_inv[k], step[lo:hi], J)
        for i in range(lo, hi):
            out[i] = pi_hat[i] + step[i] * scale
        low = below_floor(S[k], out[lo:hi], J)
        if low:
            out[lo:hi] = pi_hat[lo:hi]
        limited = limited or scale < 1.0 or low
    return limited


@njit(cache=True)
def projected(pi, S, S_inv, out):
    """out <- the nearest parameters to pi in the metric of S with every J(pi_k) >= 0 (InertiaMetric.project)."""
    for k in range(S.shape[0]):
        w, U = np.linalg.eigh(S[k] @ pseudo_inertia(pi[10 * k:10 * k + 10]) @ S[k])
        J = S_inv[k] @ ((U * np.maximum(w, 0.0)) @ U.T) @ S_inv[k]
        out[10 * k] = J[3, 3]
        out[10 * k + 1:10 * k + 4] = J[:3, 3]
        trace = J[0, 0] + J[1, 1] + J[2, 2]
        out[10 * k + 4], out[10 * k + 5], out[10 * k + 6] = trace - J[0, 0], trace - J[1, 1], trace - J[2, 2]
        out[10 * k + 7], out[10 * k + 8], out[10 * k + 9] = -J[0, 1], -J[0, 2], -J[1, 2]
