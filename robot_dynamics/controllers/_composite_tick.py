"""The composite adaptive law's algebra (composite.py's module docstring), compiled: one control tick on buffers.

Each equation is written once here and called from CompositeSlotineLi's ``update`` (``tick``, the whole tick in one
compiled call), ``torque`` and ``law``, and from MomentumFilter.  Shapes: nv joints, nb bodies, p = 10 nb
parameters; the filter's state is one flat buffer (``filter_views``).  The linear algebra is written out (Cholesky,
triangular solves, Jacobi eigenvalues of 4x4 blocks) rather than called from LAPACK: no allocation-heavy wrappers
and no BLAS threads on the tick's path.
"""
import numpy as np
from numba import njit

from ..dense import cholesky_into, solve_lower
from ..drives import COULOMB_VELOCITY

STEP_BOUND = 0.1            # the largest relative change of a body's pseudo-inertia in one step, in any direction
FLOOR = 1e-9                # no body's pseudo-inertia below FLOOR J(pi_ref) in any direction: numerically > 0
GAIN_BOUND = 0.5            # Lambda dt and kd dt at most this
ESTIMATE_WATCH = 0.25       # from Lambda dt > ESTIMATE_WATCH GAIN_BOUND on, Lambda also by the estimate's inertia

LEAST_SQUARES, GRADIENT, NATURAL = 0, 1, 2      # the laws, CompositeSlotineLi.LAWS's order
START, STEP, HOLD = 0, 1, 2                     # what a tick does with the filters: start them, step them, neither
OK, LIMITED, NOT_FINITE = 0, 1, 2               # tick's status
CAPPED, NEEDS_ESTIMATE = 1, 2                   # gains' flags
REORDER = {"reassoc", "contract"}               # sums reordered (vectorized), NaN and inf kept: the triangular solves


@njit(cache=True)
def filter_views(F, nv, p):
    """The filter's state F (4 nv p + 5 nv,) as (Y_p, Y_h, x_p, x_h (nv, p), x_tau, v, f, x_v, x_f (nv,)): the last
    sample's regressors, their filtered values, F[tau], and with drives the last v, tau_f(v), F[v], F[tau_f]."""
    n = nv * p
    Y_p, Y_h = F[:n].reshape(nv, p), F[n:2 * n].reshape(nv, p)
    x_p, x_h = F[2 * n:3 * n].reshape(nv, p), F[3 * n:4 * n].reshape(nv, p)
    o = 4 * n
    return Y_p, Y_h, x_p, x_h, F[o:o + nv], F[o + nv:o + 2 * nv], F[o + 2 * nv:o + 3 * nv], \
        F[o + 3 * nv:o + 4 * nv], F[o + 4 * nv:o + 5 * nv]


@njit(cache=True)
def friction(v, damping, coulomb, out):
    """tau_f(v) = damping v + coulomb tanh(v / COULOMB_VELOCITY) (drives.Drives.torque, no friction model)."""
    for i in range(v.shape[0]):
        out[i] = damping[i] * v[i] + coulomb[i] * np.tanh(v[i] / COULOMB_VELOCITY)


@njit(cache=True)
def filter_start(F, Y_p, Y_h, v, f):
    """At the first sample: F[Y_p] = Y_p, F[Y_h] = 0, F[tau] = 0, F[v] = v, F[tau_f] = 0."""
    nv, p = Y_p.shape
    S_p, S_h, x_p, x_h, x_tau, S_v, S_f, x_v, x_f = filter_views(F, nv, p)
    S_p[:], S_h[:], x_p[:], x_h[:], x_tau[:] = Y_p, Y_h, Y_p, 0.0, 0.0
    S_v[:], S_f[:], x_v[:], x_f[:] = v, f, v, 0.0


@njit(cache=True)
def filter_step(F, G, Y_p, Y_h, tau, v, f, a, b, c):
    """G <- the state F advanced to the sample (Y_p, Y_h, v, f = tau_f(v)), tau held since F's sample:
    x(t + dt) = a x + b u(t) + c (u(t + dt) - u(t)), exact for u linear over the step (MomentumFilter._weights)."""
    nv, p = Y_p.shape
    P0, H0, x_p, x_h, x_tau, v0, f0, x_v, x_f = filter_views(F, nv, p)
    P1, H1, y_p, y_h, y_tau, v1, f1, y_v, y_f = filter_views(G, nv, p)
    for i in range(nv):
        for j in range(p):
            y_p[i, j] = a * x_p[i, j] + b * P0[i, j] + c * (Y_p[i, j] - P0[i, j])
            y_h[i, j] = a * x_h[i, j] + b * H0[i, j] + c * (Y_h[i, j] - H0[i, j])
        y_tau[i] = a * x_tau[i] + b * tau[i]
        y_v[i] = a * x_v[i] + b * v0[i] + c * (v[i] - v0[i])
        y_f[i] = a * x_f[i] + b * f0[i] + c * (f[i] - f0[i])
    P1[:], H1[:], v1[:], f1[:] = Y_p, Y_h, v, f


@njit(cache=True)
def filtered_regressor(lam, Y_p, x_p, x_h, x_tau, v, x_v, x_f, armature, W, tau_f):
    """W = lambda (Y_p - F[Y_p]) - F[Y_h] (nv, p) and tau_f = F[tau] - F[tau_f(v)] - lambda armature (v - F[v]) (nv,),
    with W pi = tau_f (composite.py's module docstring; the drives' terms are zero without drives)."""
    for i in range(Y_p.shape[0]):
        for j in range(Y_p.shape[1]):
            W[i, j] = lam * (Y_p[i, j] - x_p[i, j]) - x_h[i, j]
        tau_f[i] = x_tau[i] - x_f[i] - lam * armature[i] * (v[i] - x_v[i])


@njit(cache=True)
def filter_output(F, lam, armature, W, tau_f):
    """(W, tau_f) (filtered_regressor) at the filter's last sample."""
    nv, p = W.shape
    Y_p, _, x_p, x_h, x_tau, v, _, x_v, x_f = filter_views(F, nv, p)
    filtered_regressor(lam, Y_p, x_p, x_h, x_tau, v, x_v, x_f, armature, W, tau_f)


@njit(cache=True)
def damping_torque(M_ref, kd, s):
    """K_D(q) s = D^1/2 M(q; pi_ref) D^1/2 s, D = diag(kd)."""
    root = np.sqrt(kd)
    return root * (M_ref @ (root * s))


@njit(cache=True)
def torque(Y, pi_hat, d, M_ref, kd, s):
    """tau = Y(q, v, v_r, a_r) pi_hat + d - K_D(q) s (composite.py's module docstring)."""
    return Y @ pi_hat + d - damping_torque(M_ref, kd, s)


@njit(cache=True, fastmath=REORDER)
def forward(L, X):
    """L^-1 X for L lower triangular (nv, nv) and X (nv, k): forward substitution."""
    V = X.copy()
    for i in range(L.shape[0]):
        for j in range(i):
            for c in range(V.shape[1]):
                V[i, c] -= L[i, j] * V[j, c]
        for c in range(V.shape[1]):
            V[i, c] /= L[i, i]
    return V


@njit(cache=True)
def weighted(L, rho, x):
    """R x with R = rho M(q; pi_ref)^-1 = rho (L L^T)^-1, x (nv,)."""
    return rho * substituted(L, x)


@njit(cache=True, fastmath=REORDER)
def information(L, rho, W, decay, Omega, Omega_0, out):
    """out <- Omega_0 + decay (Omega - Omega_0) + W^T R W (p, p), W^T R W = rho V^T V with V = L^-1 W: the
    information a prediction error adds to Omega, the old forgotten at the rate beta (decay = exp(-beta dt))."""
    V = forward(L, W)
    VV = V.T @ V
    for i in range(V.shape[1]):
        for j in range(i + 1):
            out[i, j] = out[j, i] = Omega_0[i, j] + decay * (Omega[i, j] - Omega_0[i, j]) + rho * VV[i, j]


@njit(cache=True)
def gradient(Y, s, W, eps, L, rho):
    """g = Y^T s + W^T R eps, the adaptation's gradient (pi_hat_dot = -(Omega + mu H)^-1 g)."""
    return Y.T @ s + W.T @ weighted(L, rho, eps)


@njit(cache=True)
def pseudo_inertia(pi_k, B):
    """J(pi_k) = sum_j pi_kj J(e_j) (4, 4); B (10, 4, 4) the J(e_j)."""
    J = np.zeros((4, 4))
    for j in range(10):
        J += pi_k[j] * B[j]
    return J


@njit(cache=True)
def cholesky(A):
    """The lower-triangular L with A = L L^T (n, n); A symmetric positive definite (a LinAlgError otherwise)."""
    L = np.empty_like(A)
    if not cholesky_into(A, L):
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return L


@njit(cache=True)
def substituted(L, b):
    """(L L^T)^-1 b for L lower triangular (n, n) and b (n,): forward, then backward substitution."""
    y = b.copy()
    solve_lower(L, y)
    solve_lower(L, y, True)
    return y


@njit(cache=True)
def congruence(T, X):
    """T X T^T (n, n), small."""
    n = T.shape[0]
    TX, out = np.zeros((n, n)), np.zeros((n, n))
    for i in range(n):
        for k in range(n):
            for j in range(n):
                TX[i, j] += T[i, k] * X[k, j]
    for i in range(n):
        for j in range(n):
            for k in range(n):
                out[i, j] += TX[i, k] * T[j, k]
    return out


@njit(cache=True)
def eigenvalue_range(A):
    """(smallest, largest in magnitude) eigenvalue of a small symmetric A, by cyclic Jacobi rotations."""
    A = A.copy()
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
def log_det_block(L_inv, B):
    """H_k[i, j] = tr(J^-1 J(e_i) J^-1 J(e_j)), J(pi_k) = L L^T, L_inv = L^-1: the Hessian of -log det J(pi_k)
    (adaptive.log_det_metric).  -> (10, 10)"""
    J_inv = np.zeros((4, 4))                                          # L^-T L^-1
    for a in range(4):
        for b in range(4):
            for c in range(4):
                J_inv[a, b] += L_inv[c, a] * L_inv[c, b]
    X = np.zeros((10, 4, 4))                                          # J^-1 J(e_i)
    for i in range(10):
        for a in range(4):
            for c in range(4):
                for b in range(4):
                    X[i, a, b] += J_inv[a, c] * B[i, c, b]
    H = np.empty((10, 10))
    for i in range(10):
        for j in range(i + 1):
            h = 0.0
            for a in range(4):
                for b in range(4):
                    h += X[i, a, b] * X[j, b, a]
            H[i, j] = H[j, i] = h
    return H


@njit(cache=True)
def solve(A, b):
    """A^-1 b for A symmetric positive definite: by Cholesky (single-threaded, no LAPACK call: its threads cost the
    tick's p99 on a busy machine), by LU where rounding left A not numerically positive definite."""
    L = np.empty_like(A)
    if not cholesky_into(A, L):
        return np.linalg.solve(A, b)
    return substituted(L, b)


@njit(cache=True)
def inverse_factors(pi_hat, B):
    """L_k^-1 (nb, 4, 4) with J(pi_hat_k) = L_k L_k^T, every body physical (a LinAlgError otherwise)."""
    nb = pi_hat.shape[0] // 10
    L_inv = np.empty((nb, 4, 4))
    for k in range(nb):
        L_inv[k] = forward(cholesky(pseudo_inertia(pi_hat[10 * k:10 * k + 10], B)), np.eye(4))
    return L_inv


@njit(cache=True)
def rate(g, L_inv, Omega, mu, adapted, law, B):
    """pi_hat_dot = -(Omega + mu H(pi_hat))^-1 g over the adapted parameters (zero for the others); the gradient law
    passes Omega = Omega_0 and no barrier (composite.CompositeSlotineLi._rate)."""
    m = adapted.shape[0]
    A = np.empty((m, m))
    for i in range(m):
        for j in range(m):
            A[i, j] = Omega[adapted[i], adapted[j]]
    if law != GRADIENT:
        for i0 in range(0, m, 10):                      # adapted holds whole bodies, in order
            k = adapted[i0] // 10
            H = log_det_block(L_inv[k], B)
            for i in range(10):
                for j in range(10):
                    A[i0 + i, i0 + j] += mu[k] * H[i, j]
    out = np.zeros_like(g)
    x = solve(A, g[adapted])
    for i in range(m):
        out[adapted[i]] = -x[i]
    return out


@njit(cache=True)
def bounded_step(pi_hat, step, L_inv, S, B, out):
    """out <- pi_hat + step, each body's step scaled so that J_k^-1/2 dJ_k J_k^-T/2 has no eigenvalue beyond
    STEP_BOUND, a body that would fall below FLOOR J(pi_ref) (S = J(pi_ref)^-1/2) kept where it was.  Returns
    whether any was bounded (composite.py's module docstring)."""
    limited = False
    for k in range(S.shape[0]):
        lo, hi = 10 * k, 10 * k + 10
        if not np.any(step[lo:hi]):
            out[lo:hi] = pi_hat[lo:hi]
            continue
        top = eigenvalue_range(congruence(L_inv[k], pseudo_inertia(step[lo:hi], B)))[1]
        scale = STEP_BOUND / max(top, STEP_BOUND)
        out[lo:hi] = pi_hat[lo:hi] + step[lo:hi] * scale
        low = eigenvalue_range(congruence(S[k], pseudo_inertia(out[lo:hi], B)))[0] < FLOOR
        if low:
            out[lo:hi] = pi_hat[lo:hi]
        limited = limited or scale < 1.0 or low
    return limited


@njit(cache=True)
def projected(pi, S, S_inv, B, out):
    """out <- the nearest parameters to pi in the metric of S with every J(pi_k) >= 0 (InertiaMetric.project)."""
    for k in range(S.shape[0]):
        w, U = np.linalg.eigh(S[k] @ pseudo_inertia(pi[10 * k:10 * k + 10], B) @ S[k])
        J = S_inv[k] @ ((U * np.maximum(w, 0.0)) @ U.T) @ S_inv[k]
        out[10 * k] = J[3, 3]
        out[10 * k + 1:10 * k + 4] = J[:3, 3]
        trace = J[0, 0] + J[1, 1] + J[2, 2]
        out[10 * k + 4], out[10 * k + 5], out[10 * k + 6] = trace - J[0, 0], trace - J[1, 1], trace - J[2, 2]
        out[10 * k + 7], out[10 * k + 8], out[10 * k + 9] = -J[0, 1], -J[0, 2], -J[1, 2]


@njit(cache=True)
def drive_terms(v, v_r, a_r, armature, damping, coulomb, f_v, d):
    """f_v <- tau_f(v), d <- armature a_r + tau_f(v_r): the known drives' part of the torque (composite.py)."""
    friction(v, damping, coulomb, f_v)
    friction(v_r, damping, coulomb, d)
    d += armature * a_r


@njit(cache=True)
def gains(Lambda, top, kd, dt, M_ref, M_0, estimate_diag, Lambda_out, kd_out):
    """The gains of this tick: Lambda dt g <= GAIN_BOUND with g = max(1, max_j M_jj(q; pi_hat) / max(M_jj(q; pi_0),
    M_jj(q; pi_ref))) once Lambda dt > ESTIMATE_WATCH GAIN_BOUND (else g = 1), kd_j dt r_j <= GAIN_BOUND with r_j =
    max(M_jj(q; pi_ref) / max(M_jj(q; pi_0), M_jj(q; pi_hat)), 1) (composite.py); diag M(q; pi_hat) is asked for
    (NEEDS_ESTIMATE) only where Lambda dt is that close to its bound or M(q; pi_0) alone would cap kd, and
    estimate_diag is not given (a negative first entry).  Returns the flags (CAPPED) or NEEDS_ESTIMATE."""
    Lambda_out[:], kd_out[:] = Lambda, kd
    flags = 0
    if dt > 0:
        grow = 1.0                                  # max_j M_jj(q; pi_hat) / max(M_jj(q; pi_0), M_jj(q; pi_ref))
        if top * dt > ESTIMATE_WATCH * GAIN_BOUND:
            if estimate_diag[0] < 0:
                return NEEDS_ESTIMATE
            for j in range(estimate_diag.shape[0]):
                grow = max(grow, estimate_diag[j] / max(M_0[j, j], M_ref[j, j]))
        if top * dt * grow > GAIN_BOUND:
            Lambda_out *= GAIN_BOUND / (top * dt * grow)
            flags |= CAPPED
        for j in range(kd.shape[0]):
            limit = GAIN_BOUND / (dt * max(M_ref[j, j] / M_0[j, j], 1.0))
            if kd[j] > limit:
                if estimate_diag[0] < 0:
                    return NEEDS_ESTIMATE
                limit = GAIN_BOUND / (dt * max(M_ref[j, j] / max(M_0[j, j], estimate_diag[j]), 1.0))
            if kd[j] > limit:
                kd_out[j] = limit
                flags |= CAPPED
    return flags


@njit(cache=True)
def tick(mode, law, F, G, Y, Y_p, Y_h, M_ref, s, kd, v, f_v, d, tau_held, a, b, c, lam, armature, rho, decay,
         Omega, Omega_next, Omega_0, mu, adapted, S, S_inv, B, dt, pi_hat, pi_next, prediction_error, tau):
    """One tick of CompositeSlotineLi.update on buffers, the state read from (F, Omega, pi_hat) and the new state
    written to (G, Omega_next, pi_next, prediction_error), tau (nv,) with the new estimate:

    - START: the filters start at this sample (G); HOLD (dt = 0): nothing moves; STEP: the filters advance (G),
      W pi = tau_f at this sample, and with R = rho M(q; pi_ref)^-1 (a Cholesky factor of M(q; pi_ref)),
      Omega_next = Omega_0 + exp(-beta dt) (Omega - Omega_0) + dt W^T R W (least squares; the others keep Omega),
      pi_next = pi_hat + dt pi_hat_dot bounded (bounded_step; the gradient law projects), eps = W pi_next - tau_f.

    The caller takes the new state only when the status is not NOT_FINITE (tau not finite), so that a refused tick
    changes nothing.  Returns OK, LIMITED (the step was bounded) or NOT_FINITE.
    """
    limited = False
    if mode == START:
        filter_start(G, Y_p, Y_h, v, f_v)
        pi_next[:] = pi_hat
    elif mode == HOLD:
        pi_next[:] = pi_hat
    else:
        filter_step(F, G, Y_p, Y_h, tau_held, v, f_v, a, b, c)
        nv, p = Y.shape
        W, tau_f = np.empty((nv, p)), np.empty(nv)
        filter_output(G, lam, armature, W, tau_f)
        L = cholesky(M_ref)
        if law == LEAST_SQUARES:
            information(L, dt * rho, W, decay, Omega, Omega_0, Omega_next)
            A = Omega_next
        else:
            A = Omega_0 if law == GRADIENT else Omega
        L_inv = inverse_factors(pi_hat, B) if law != GRADIENT else np.empty((0, 4, 4))
        step = dt * rate(gradient(Y, s, W, W @ pi_hat - tau_f, L, rho), L_inv, A, mu, adapted, law, B)
        if law == GRADIENT:
            projected(pi_hat + step, S, S_inv, B, pi_next)
        else:
            limited = bounded_step(pi_hat, step, L_inv, S, B, pi_next)
        prediction_error[:] = W @ pi_next - tau_f
    tau[:] = torque(Y, pi_next, d, M_ref, kd, s)
    if not np.all(np.isfinite(tau)):
        return NOT_FINITE
    return LIMITED if limited else OK
