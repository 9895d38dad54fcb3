"""The composite adaptive law's algebra (composite.py's module docstring), compiled: one control tick on buffers.

Each equation is written once here and called from CompositeSlotineLi's ``update`` (``tick``, the law, within
_composite_call.cs_tick: the whole update in one call from C), ``torque`` and ``law``, and from MomentumFilter.
Shapes: nv joints, nb bodies, p = 10 nb parameters; the filter's state is one flat buffer (``filter_views``), the
controller's state two copies of one layout (``state_views``: a tick reads one and writes the other), the tick's
temporaries one work array (``work_views``), each viewed by ``shaped`` (no reshape checks): ``tick`` allocates
nothing.  The linear algebra is written out (the p x p system by dense.cholesky_upper_into and solve_upper_factor
in 4-lane registers, M(q; pi_ref) by dense.cholesky_into; each body's 4 x 4 algebra in _body_steps) rather than
called from LAPACK: no allocation-heavy wrappers and no BLAS threads on the tick's path.
"""
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload, register_jitable

from ..dense import (REORDER, cholesky_into, cholesky_upper_into, copy_matrix, copy_vector, padded,
                     rank_update_lower, solve_lower, solve_upper_factor)
from ..drives import COULOMB_VELOCITY
from ._body_steps import PROJECTED_WORK, bounded_step, inverse_factors_into, projected

GAIN_BOUND = 0.5            # Lambda dt and kd dt at most this
ESTIMATE_WATCH = 0.25       # from Lambda dt > ESTIMATE_WATCH GAIN_BOUND on, Lambda also by the estimate's inertia

LEAST_SQUARES, GRADIENT, NATURAL = 0, 1, 2      # the laws, CompositeSlotineLi.LAWS's order
START, STEP, HOLD = 0, 1, 2                     # what a tick does with the filters: start them, step them, neither
# tick's status: the step was bounded; the torque, M(q; pi_ref) or a body's J(pi_hat), the adaptation's system are
# not finite, not positive definite, not finite
OK, LIMITED, NOT_FINITE, NOT_POSITIVE, NOT_FINITE_SYSTEM = 0, 1, 2, 3, 4
NOT_FINITE_SYSTEM_MESSAGE = "the adaptation's system Omega + mu H (or its gradient) is not finite, or singular"
CAPPED, NEEDS_ESTIMATE = 1, 2                   # gains' flags


def shaped(x, shape):
    """x (n,) C-contiguous viewed as a C-contiguous array of the shape (a tuple of ints, prod(shape) <= n): numpy's
    reshape; compiled, without its checks (_shaped_view: numba's reshape costs ~60 ns, a tick takes ~45 views)."""
    return x.reshape(shape)


@overload(shaped)
def _shaped(x, shape):
    return lambda x, shape: _shaped_view(x, shape)


@intrinsic
def _shaped_view(typingctx, x, shape):
    """shaped's compiled view, unchecked: the callers' shapes are their layouts' own (cut).  numba's array struct
    (meminfo, parent, nitems, itemsize, data, shape, strides) of x's memory and owner with the new shape."""
    ndim = len(shape)
    result = types.Array(x.dtype, ndim, "C")

    def codegen(context, builder, sig, args):
        source, intp = args[0], context.get_value_type(types.intp)
        dims = [context.cast(builder, builder.extract_value(args[1], i), sig.args[1][i], types.intp)
                for i in range(ndim)]
        itemsize = builder.extract_value(source, 3)
        strides, stride = [None] * ndim, itemsize
        for i in reversed(range(ndim)):
            strides[i] = stride
            stride = builder.mul(stride, dims[i])
        nitems = ir.Constant(intp, 1)
        for d in dims:
            nitems = builder.mul(nitems, d)
        value = ir.Constant(context.get_value_type(result), ir.Undefined)
        for i, field in enumerate((builder.extract_value(source, 0), builder.extract_value(source, 1), nitems,
                                   itemsize, builder.extract_value(source, 4))):
            value = builder.insert_value(value, field, i)
        for i in range(ndim):
            value = builder.insert_value(value, dims[i], [5, i])
            value = builder.insert_value(value, strides[i], [6, i])
        context.nrt.incref(builder, result, value)
        return value
    return result(x, shape), codegen


@njit(cache=True)
def filter_views(F, nv, p):
    """The filter's state F (4 nv p + 5 nv,) as (Y_p, Y_h, x_p, x_h (nv, p), x_tau, v, f, x_v, x_f (nv,)): the last
    sample's regressors, their filtered values, F[tau], and with drives the last v, tau_f(v), F[v], F[tau_f]."""
    n = nv * p
    Y_p, Y_h = shaped(F[:n], (nv, p)), shaped(F[n:2 * n], (nv, p))
    x_p, x_h = shaped(F[2 * n:3 * n], (nv, p)), shaped(F[3 * n:4 * n], (nv, p))
    o = 4 * n
    return Y_p, Y_h, x_p, x_h, F[o:o + nv], F[o + nv:o + 2 * nv], F[o + 2 * nv:o + 3 * nv], \
        F[o + 3 * nv:o + 4 * nv], F[o + 4 * nv:o + 5 * nv]


@njit(cache=True)
def friction(v, damping, coulomb, out):
    """tau_f(v) = damping v + coulomb tanh(v / COULOMB_VELOCITY) (drives.Drives.torque, no friction model)."""
    for i in range(v.shape[0]):
        out[i] = damping[i] * v[i] + coulomb[i] * np.tanh(v[i] / COULOMB_VELOCITY)


@njit(cache=True, inline="always")
def filter_start(F, Y_p, Y_h, v, f):
    """At the first sample: F[Y_p] = Y_p, F[Y_h] = 0, F[tau] = 0, F[v] = v, F[tau_f] = 0."""
    nv, p = Y_p.shape
    S_p, S_h, x_p, x_h, x_tau, S_v, S_f, x_v, x_f = filter_views(F, nv, p)
    copy_matrix(S_p, Y_p), copy_matrix(S_h, Y_h), copy_matrix(x_p, Y_p), copy_vector(S_v, v), copy_vector(S_f, f)
    copy_vector(x_v, v)
    x_h[:], x_tau[:], x_f[:] = 0.0, 0.0, 0.0


@njit(cache=True, inline="always")
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
    copy_matrix(P1, Y_p), copy_matrix(H1, Y_h), copy_vector(v1, v), copy_vector(f1, f)


@njit(cache=True)
def filtered_regressor(lam, Y_p, x_p, x_h, x_tau, v, x_v, x_f, armature, W, tau_f):
    """W = lambda (Y_p - F[Y_p]) - F[Y_h] (nv, p) and tau_f = F[tau] - F[tau_f(v)] - lambda armature (v - F[v]) (nv,),
    with W pi = tau_f (composite.py's module docstring; the drives' terms are zero without drives)."""
    for i in range(Y_p.shape[0]):
        for j in range(Y_p.shape[1]):
            W[i, j] = lam * (Y_p[i, j] - x_p[i, j]) - x_h[i, j]
        tau_f[i] = x_tau[i] - x_f[i] - lam * armature[i] * (v[i] - x_v[i])


@njit(cache=True, inline="always")
def filter_output(F, lam, armature, W, tau_f):
    """(W, tau_f) (filtered_regressor) at the filter's last sample."""
    nv, p = W.shape
    Y_p, _, x_p, x_h, x_tau, v, _, x_v, x_f = filter_views(F, nv, p)
    filtered_regressor(lam, Y_p, x_p, x_h, x_tau, v, x_v, x_f, armature, W, tau_f)


@njit(cache=True, fastmath=REORDER)
def torque_into(Y, pi_hat, d, M_ref, kd, s, tau):
    """tau <- Y(q, v, v_r, a_r) pi_hat + d - K_D(q) s, K_D(q) s = D^1/2 M(q; pi_ref) D^1/2 s, D = diag(kd)
    (composite.py's module docstring).  Returns whether tau is finite."""
    finite = True
    for i in range(tau.shape[0]):
        t = d[i]
        for j in range(pi_hat.shape[0]):
            t += Y[i, j] * pi_hat[j]
        k = 0.0
        for j in range(s.shape[0]):
            k += M_ref[i, j] * (np.sqrt(kd[j]) * s[j])
        tau[i] = t - np.sqrt(kd[i]) * k
        finite = finite and np.isfinite(tau[i])
    return finite


@njit(cache=True)
def torque(Y, pi_hat, d, M_ref, kd, s):
    """tau (torque_into), a new array; d scalar or (nv,)."""
    tau = np.empty(Y.shape[0])
    torque_into(Y, pi_hat, np.zeros(Y.shape[0]) + d, M_ref, kd, s, tau)
    return tau


@njit(cache=True, fastmath=REORDER)
def information_into(L, rho, W, decay, Omega, Omega_0, V, out, A):
    """out, A <- Omega_0 + decay (Omega - Omega_0) + W^T R W (p, p; the lower triangles read and written; A the
    adaptation's system before its barrier, rate_into: written in the same pass), W^T R W = rho V^T V with
    V = L^-1 W (V (nv, p) a work array): the information a prediction error adds to Omega, the old forgotten at the
    rate beta (decay = exp(-beta dt)).  Forward substitution by rows, then dense.rank_update_lower (4-lane tiles)."""
    nv, p = W.shape
    for i in range(nv):
        for c in range(p):
            V[i, c] = W[i, c]
        for j in range(i):
            f = L[i, j]
            for c in range(p):
                V[i, c] -= f * V[j, c]
        f = 1.0 / L[i, i]
        for c in range(p):
            V[i, c] *= f
    rank_update_lower(V, rho, decay, Omega, Omega_0, out, A)


@njit(cache=True)
def information(L, rho, W, decay, Omega, Omega_0, out):
    """information_into with its own work array, out symmetric."""
    information_into(L, rho, W, decay, Omega, Omega_0, np.empty(W.shape), out, out)
    for i in range(out.shape[0]):
        for j in range(i):
            out[j, i] = out[i, j]


@njit(cache=True, fastmath=REORDER)
def gradient_into(Y, s, W, eps, L, rho, r, g):
    """g <- Y^T s + W^T R eps, the adaptation's gradient (pi_hat_dot = -(Omega + mu H)^-1 g); r (nv,) <- R eps =
    rho (L L^T)^-1 eps, L the Cholesky factor of M(q; pi_ref)."""
    copy_vector(r, eps)
    solve_lower(L, r, False)
    solve_lower(L, r, True)
    for j in range(g.shape[0]):
        g[j] = 0.0
    for i in range(s.shape[0]):
        a, b = s[i], rho * r[i]
        for j in range(g.shape[0]):
            g[j] += Y[i, j] * a + W[i, j] * b


@njit(cache=True)
def gradient(Y, s, W, eps, L, rho):
    """g (gradient_into), a new array."""
    g = np.empty(Y.shape[1])
    gradient_into(Y, s, W, eps, L, rho, np.empty(Y.shape[0]), g)
    return g


@njit(cache=True)
def residual_into(W, pi, tau_f, eps):
    """eps <- W pi - tau_f (nv,): the filtered torque predicted by pi, against the one applied."""
    for i in range(eps.shape[0]):
        e = -tau_f[i]
        for j in range(pi.shape[0]):
            e += W[i, j] * pi[j]
        eps[i] = e


@njit(cache=True)
def cholesky(A):
    """The lower-triangular L with A = L L^T (n, n); A symmetric positive definite (a LinAlgError otherwise)."""
    L = np.empty_like(A)
    if not cholesky_into(A, L, 0.0, 0.0):
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return L


# parameter i of pi_k = (m, h, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz) on the unit U_ab of J (inertia.pseudo_inertia):
# (a, b) = (UNIT_A[i], UNIT_B[i]) with the coefficient UNIT_C[i] = its sign times f_ab (1 on the diagonal, 2 off it:
# U_ab = E_ab + E_ba); the moments on (0, 0), (1, 1), (2, 2) here, J_aa = tr(I) / 2 - I_aa applied after
# (add_log_det_block)
UNIT_A = np.array([3, 0, 1, 2, 0, 1, 2, 0, 0, 1])
UNIT_B = np.array([3, 3, 3, 3, 0, 1, 2, 1, 2, 2])
UNIT_C = np.array([1.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0, -2.0, -2.0, -2.0])
LOG_DET_WORK = 116                  # add_log_det_block's work: P (4, 4), K (10, 10); the gradient law's projection's
assert 4 * PROJECTED_WORK <= LOG_DET_WORK       # (which has no barrier) too


@njit(cache=True, fastmath=REORDER)
def add_log_det_block(L_inv, mu, X, A, i0):
    """A[i0:i0 + 10, i0:i0 + 10] += mu H_k, lower triangle: H_k[i, j] = tr(P J(e_i) P J(e_j)), P = J(pi_k)^-1 =
    L^-T L^-1 (L_inv = L^-1 (4, 4)), the Hessian of -log det J(pi_k) (inertia.log_det_metric; Lee, Kwon & Park 2018,
    Wensing & Slotine 2018).  In closed form over J's symmetric units U_ab = E_ab + E_ba (E_aa on the diagonal):
    tr(P E_ab P E_cd) = P_bc P_da, so tr(P U_ab P U_cd) = f_ab f_cd / 2 (P_ac P_bd + P_ad P_bc), f = 1 on the
    diagonal and 2 off it; J(pi_k) = T pi_k (pseudo_inertia_into) maps m, h and the products of inertia each onto one
    unit (UNIT_A, UNIT_B, UNIT_C) and the moments through T_m = 1/2 1 1^T - 1 onto the diagonal units (0, 0), (1, 1),
    (2, 2), so H_k = T^T K T: K's moments' rows and columns x <- 1/2 sum(x) - x.  No branches on the data.
    X (LOG_DET_WORK,) a work array."""
    P, K = shaped(X[:16], (4, 4)), shaped(X[16:LOG_DET_WORK], (10, 10))
    for a in range(4):                                                # L^-T L^-1
        for c in range(4):
            x = 0.0
            for e in range(4):
                x += L_inv[e, a] * L_inv[e, c]
            P[a, c] = x
    for i in range(10):
        a, b, ci = UNIT_A[i], UNIT_B[i], 0.5 * UNIT_C[i]
        for j in range(10):
            c, d = UNIT_A[j], UNIT_B[j]
            K[i, j] = ci * UNIT_C[j] * (P[a, c] * P[b, d] + P[a, d] * P[b, c])
    for j in range(10):                                               # T_m^T K: the moments' rows
        half = 0.5 * (K[4, j] + K[5, j] + K[6, j])
        K[4, j], K[5, j], K[6, j] = half - K[4, j], half - K[5, j], half - K[6, j]
    for i in range(10):                                               # K T_m: their columns
        half = 0.5 * (K[i, 4] + K[i, 5] + K[i, 6])
        K[i, 4], K[i, 5], K[i, 6] = half - K[i, 4], half - K[i, 5], half - K[i, 6]
    for i in range(10):
        for j in range(i + 1):
            A[i0 + i, i0 + j] += mu * K[i, j]


@njit(cache=True)
def system_matrix(L_inv, Omega, mu, adapted, law, X, A, filled):
    """A <- Omega + mu H(pi_hat) over the adapted parameters (m, m; lower triangle), H block diagonal
    (add_log_det_block; none for the gradient law); Omega's lower triangle read, unless filled: A holds it already
    (information_into wrote it).  X (LOG_DET_WORK,) a work array."""
    m = adapted.shape[0]
    if not filled and m == Omega.shape[0]:              # all adapted: adapted = 0, 1, ..., m - 1
        for i in range(m):
            for j in range(i + 1):
                A[i, j] = Omega[i, j]
    elif not filled:
        for i in range(m):
            for j in range(i + 1):
                A[i, j] = Omega[adapted[i], adapted[j]]
    if law != GRADIENT:
        for i0 in range(0, m, 10):
            k = adapted[i0] // 10
            add_log_det_block(L_inv[k], mu[k], X, A, i0)


@njit(cache=True)
def lu_solve_into(A, x):
    """x <- A^-1 x by Gaussian elimination with partial pivoting, A (m, m) overwritten by its factors; False where a
    pivot is zero (A singular), x then partly overwritten."""
    m = A.shape[0]
    for k in range(m):
        pivot = k
        for i in range(k + 1, m):
            if abs(A[i, k]) > abs(A[pivot, k]):
                pivot = i
        if A[pivot, k] == 0.0:
            return False
        if pivot != k:
            for j in range(m):
                A[k, j], A[pivot, j] = A[pivot, j], A[k, j]
            x[k], x[pivot] = x[pivot], x[k]
        for i in range(k + 1, m):
            f = A[i, k] / A[k, k]
            for j in range(k + 1, m):
                A[i, j] -= f * A[k, j]
            x[i] -= f * x[k]
    for k in range(m - 1, -1, -1):
        for j in range(k + 1, m):
            x[k] -= A[k, j] * x[j]
        x[k] /= A[k, k]
    return True


@njit(cache=True, inline="always")
def rate_into(g, L_inv, Omega, mu, adapted, law, A, X, x, out, filled=False):
    """out <- pi_hat_dot = -(Omega + mu H(pi_hat))^-1 g over the adapted parameters (zero for the others); the
    gradient law passes Omega = Omega_0 and no barrier (composite.CompositeSlotineLi._rate).  A (n, n) with
    n = padded(m), X (LOG_DET_WORK,), x (n,) work arrays, m the adapted parameters' count; filled: A holds Omega's
    lower triangle (system_matrix).  By Cholesky of the system bordered by the identity (dense.cholesky_upper_into:
    single-threaded, no LAPACK call, whose threads cost the tick's p99 on a busy machine), by LU with partial
    pivoting (lu_solve_into, on the same memory as an m x m array) where rounding left A not numerically positive
    definite.  Returns whether it was solved: False (out not written) where A or g is not finite or A is singular
    -- a status, never an exception, which the C caller of the tick could not see."""
    m, n = adapted.shape[0], A.shape[0]
    for i in range(m):
        x[i] = g[adapted[i]]
    for i in range(m, n):
        x[i] = 0.0
    system_matrix(L_inv, Omega, mu, adapted, law, X, A, filled)
    for i in range(m, n):                               # the border
        for j in range(i):
            A[i, j] = 0.0
        A[i, i] = 1.0
    if not (cholesky_upper_into(A) and solve_upper_factor(A, x)):
        B = shaped(A.reshape(n * n), (m, m))
        system_matrix(L_inv, Omega, mu, adapted, law, X, B, False)
        for i in range(m):
            for j in range(i):
                B[j, i] = B[i, j]
        if not (np.isfinite(B).all() and np.isfinite(x).all()) or not lu_solve_into(B, x):
            return False
    out[:] = 0.0
    for i in range(m):
        out[adapted[i]] = -x[i]
    return True


@njit(cache=True)
def rate(g, L_inv, Omega, mu, adapted, law):
    """pi_hat_dot (rate_into), a new array."""
    m = adapted.shape[0]
    out = np.empty_like(g)
    n = padded(m)
    if not rate_into(g, L_inv, Omega, mu, adapted, law, np.empty((n, n)), np.empty(LOG_DET_WORK), np.empty(n), out):
        raise np.linalg.LinAlgError(NOT_FINITE_SYSTEM_MESSAGE)
    return out


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
    copy_matrix(Lambda_out, Lambda), copy_vector(kd_out, kd)
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
def state_size(nv, p):
    """The length of one copy of the controller's state (state_views)."""
    return 4 * nv * p + 5 * nv + p * p + p + 2 * nv


@njit(cache=True)
def state_views(X, nv, p):
    """One copy X (state_size,) of the controller's state as (F, Omega (p, p), pi_hat (p,), prediction_error (nv,),
    tau (nv,)): the filter's state (filter_views), the information matrix (its lower triangle), the estimate,
    W pi_hat - tau_f and the torque held since the last tick."""
    n = 4 * nv * p + 5 * nv
    o = n + p * p
    return X[:n], shaped(X[n:o], (p, p)), X[o:o + p], X[o + p:o + p + nv], X[o + p + nv:o + p + 2 * nv]


@njit(cache=True)
def work_size(nv, p, m):
    """The length of the tick's work array (work_views), m the adapted parameters' count."""
    return (2 * nv * p + nv * nv + padded(m) ** 2 + 2 * p + padded(m) + 3 * nv + 16 * (p // 10) + LOG_DET_WORK
            + 11 * (p // 10))


@njit(cache=True)
def work_views(Z, nv, p, m):
    """The work array Z (work_size,) as (W, V (nv, p), L (nv, nv), A (n, n), g, step (p,), x (n,), tau_f, eps,
    r (nv,), L_inv (nb, 4, 4), X (LOG_DET_WORK,), E (11, nb)), n = dense.padded(m)."""
    W, o = cut(Z, 0, nv * p)
    V, o = cut(Z, o, nv * p)
    L, o = cut(Z, o, nv * nv)
    n = padded(m)
    A, o = cut(Z, o, n * n)
    g, o = cut(Z, o, p)
    step, o = cut(Z, o, p)
    x, o = cut(Z, o, n)
    tau_f, o = cut(Z, o, nv)
    eps, o = cut(Z, o, nv)
    r, o = cut(Z, o, nv)
    L_inv, o = cut(Z, o, 16 * (p // 10))
    X, o = cut(Z, o, LOG_DET_WORK)
    return (shaped(W, (nv, p)), shaped(V, (nv, p)), shaped(L, (nv, nv)), shaped(A, (n, n)), g, step, x, tau_f, eps,
            r, shaped(L_inv, (p // 10, 4, 4)), X, shaped(Z[o:o + 11 * (p // 10)], (11, p // 10)))


@register_jitable
def cut(Z, o, size):
    """(Z[o:o + size], o + size): the next part of a flat buffer."""
    return Z[o:o + size], o + size


@njit(cache=True, inline="always")
def tick(mode, law, current, states, work, Y, Y_p, Y_h, M_ref, s, kd, v, f_v, d, a, b, c, lam, armature, rho, decay,
         Omega_0, mu, adapted, S, S_inv, dt):
    """One tick of CompositeSlotineLi.update on buffers: the state read from states[current] and the new state
    written to states[1 - current] (state_views: F, Omega, pi_hat, prediction_error, the torque), work the tick's
    work array (work_views):

    - START: the filters start at this sample; HOLD (dt = 0): nothing moves; STEP: the filters advance,
      W pi = tau_f at this sample, and with R = rho M(q; pi_ref)^-1 (a Cholesky factor of M(q; pi_ref)),
      Omega_next = Omega_0 + exp(-beta dt) (Omega - Omega_0) + dt W^T R W (least squares; the others keep Omega),
      pi_next = pi_hat + dt pi_hat_dot bounded (bounded_step; the gradient law projects), eps = W pi_next - tau_f.

    The caller takes the new state (current <- 1 - current) only when the status is OK or LIMITED (the step was
    bounded), so that a refused tick changes nothing: NOT_FINITE (the torque not finite), NOT_POSITIVE (M(q; pi_ref)
    or a body's J(pi_hat) not positive definite) or NOT_FINITE_SYSTEM (the rate's system or the step not finite).
    """
    nv, p = Y.shape
    F, Omega, pi_hat, error, held = state_views(states[current], nv, p)
    F_next, Omega_next, pi_next, error_next, tau = state_views(states[1 - current], nv, p)
    W, V, L, A, g, step, x, tau_f, eps, r, L_inv, X, E = work_views(work, nv, p, adapted.shape[0])
    limited = False
    if mode == STEP:
        filter_step(F, F_next, Y_p, Y_h, held, v, f_v, a, b, c)
        filter_output(F_next, lam, armature, W, tau_f)
        if not cholesky_into(M_ref, L, 0.0, 0.0):
            return NOT_POSITIVE
        residual_into(W, pi_hat, tau_f, eps)
        gradient_into(Y, s, W, eps, L, rho, r, g)
        filled = law == LEAST_SQUARES and adapted.shape[0] == p      # A <- Omega_next in the same pass
        if law == LEAST_SQUARES:
            information_into(L, dt * rho, W, decay, Omega, Omega_0, V, Omega_next, A if filled else Omega_next)
        else:
            copy_matrix(Omega_next, Omega)
        if law != GRADIENT and not inverse_factors_into(pi_hat, L_inv):
            return NOT_POSITIVE
        if not rate_into(g, L_inv, Omega_0 if law == GRADIENT else Omega_next, mu, adapted, law, A, X, x, step,
                         filled):
            return NOT_FINITE_SYSTEM
        for i in range(p):
            step[i] *= dt
        if law == GRADIENT:
            if not np.isfinite(step).all():
                return NOT_FINITE_SYSTEM
            projected(pi_hat, step, S, S_inv, shaped(X, (PROJECTED_WORK, 4)), pi_next)   # (X: the barrier's)
        else:
            limited = bounded_step(pi_hat, step, L_inv, S, E, pi_next)
        residual_into(W, pi_next, tau_f, error_next)
    else:
        if mode == START:
            filter_start(F_next, Y_p, Y_h, v, f_v)
        else:
            copy_vector(F_next, F)
        copy_matrix(Omega_next, Omega), copy_vector(pi_next, pi_hat), copy_vector(error_next, error)
    if not torque_into(Y, pi_next, d, M_ref, kd, s, tau):
        return NOT_FINITE
    return LIMITED if limited else OK
