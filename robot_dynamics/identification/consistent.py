"""Physically consistent least squares: every body's pseudo-inertia positive definite, through the log-Cholesky
parametrization.

A body's parameters pi_k = [m, m c, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz] (inertia about the body origin) belong
to a non-negative mass distribution iff its pseudo-inertia J(pi_k) = [[1/2 tr(I) 1 - I, m c], [m c^T, m]] is
positive semi-definite (Wensing, Kim & Slotine, RA-L 2018; controllers.adaptive.pseudo_inertia): m >= 0, a PSD
rotational inertia about the CoM and the triangle inequalities all follow.  Rucker & Wensing ("Smooth
parameterization of rigid-body inertia", RA-L 7(2), 2022) map R^10 one-to-one onto the positive-definite
pseudo-inertias, x = [alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3]:

    U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]],    J = U U^T,

so an unconstrained least-squares problem in x is a constrained one in pi.  The data enter through the normal
equations only (least_squares.NormalEquations).  With theta = [pi; friction], Y theta = Y_b K theta (base.py), the
whitened base normal matrix A_b = sum_j w_j G_b,j / sigma^2 = R^T R (Cholesky) and theta_b* its unconstrained
(WLS) solution,

    chi^2(theta) = sum_j w_j |Y_j theta - tau_j|^2 / sigma^2 = |R (K theta - theta_b*)|^2 + chi^2_min,

so R (K theta - theta_b*) is a residual vector of r entries whatever the number of samples: scipy's
least_squares works from sums made by Dask as well as from arrays in memory, and without the cancellation of
expanding chi^2 into theta^T A theta - 2 theta^T g + c (which would bury exact data under c's rounding).

The prior pi_0 enters as sqrt(lambda) S_k J(pi_k - pi_0k) S_k (inertia metric of controllers.adaptive.InertiaMetric
at the prior made consistent); its 16 nb rows are kept (as zeros) when lambda = 0, so that there are at least as
many residuals as unknowns and MINPACK's Levenberg-Marquardt (method "lm") applies: in these coordinates it
converged in a tenth of the evaluations of the bounded trust-region method ("trf"), whose bounds would only have
served friction >= 0. Friction is therefore unconstrained, as in OLS/WLS. Scaling: x_scale 1 for alpha and the
logarithmic diagonal (already relative) and the body's size (the norm of U / e^alpha's diagonal, m) for the other
six entries, lengths; scaling by the Jacobian's columns ("jac") sends the directions the data cannot see off to
overflow.

When the optimum lies on the boundary (noise can put the unconstrained base parameters outside the image of the
consistent set even when the truth is inside: a body whose pseudo-inertia is nearly singular, a thin link), some
log-Cholesky coordinates creep towards -inf and least_squares' tolerances are not met; the budget of MAX_NFEV
evaluations per unknown ends the creep.  On arm7 with 1 % torque noise the cost then is within 0.002 (chi^2 units)
of where 20 times more evaluations take it.
"""
import numpy as np
import scipy.optimize

from ..inertia import InertiaMetric, parameters_from_pseudo_inertia, pseudo_inertia

MAX_NFEV = 10               # evaluations per variable at most (module docstring)
ALTERNATIONS = 200          # alternating projections for a starting point
TOLERANCE = 1e-10           # ftol, xtol, gtol of least_squares
FLOOR = 1e-6                # a projected prior's eigenvalues are at least FLOOR times its body's largest

# x -> U / e^alpha: the entry of each of x[1:] (d1, d2, d3 on the diagonal as exponentials)
_ENTRIES = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def log_cholesky(x):
    """pi of log-Cholesky coordinates and its Jacobian (Rucker & Wensing 2022; module docstring).

    x: (nb, 10)  ->  pi (nb, 10), dpi (nb, 10, 10) with dpi[k, i] = d pi_k / d x_ki
    """
    x = np.asarray(x, dtype=float)
    nb = len(x)
    e_alpha = np.exp(x[:, 0])
    V = np.zeros((nb, 4, 4))                                             # U / e^alpha
    dV = np.zeros((nb, 10, 4, 4))                                        # d(U / e^alpha) / dx (alpha: none)
    for i, (r, c) in enumerate(_ENTRIES):
        value = np.exp(x[:, 1 + i]) if r == c else x[:, 1 + i]
        V[:, r, c] = value
        dV[:, 1 + i, r, c] = value if r == c else 1.0
    V[:, 3, 3] = 1.0
    U = e_alpha[:, None, None] * V
    dU = e_alpha[:, None, None, None] * dV
    dU[:, 0] = U                                                         # dU / d alpha = U
    J = U @ np.swapaxes(U, -1, -2)
    dJ = dU @ np.swapaxes(U, -1, -2)[:, None]
    dJ = dJ + np.swapaxes(dJ, -1, -2)                                    # d(U U^T) = dU U^T + U dU^T
    return parameters_from_pseudo_inertia(J), parameters_from_pseudo_inertia(dJ)


def log_cholesky_coordinates(pi):
    """x of bodies whose pseudo-inertia is positive definite: U = E chol(E J E) E (E the exchange matrix) is the
    upper-triangular factor of J = U U^T.  pi: (nb, 10)  ->  x (nb, 10); a ValueError if some J is not PD."""
    J = pseudo_inertia(pi)
    E = np.eye(4)[::-1]
    try:
        U = E @ np.linalg.cholesky(E @ J @ E) @ E
    except np.linalg.LinAlgError:
        raise ValueError("log_cholesky_coordinates: a pseudo-inertia is not positive definite") from None
    V = U / U[:, 3:4, 3:4]
    x = np.empty((len(J), 10))
    x[:, 0] = np.log(U[:, 3, 3])
    for i, (r, c) in enumerate(_ENTRIES):
        x[:, 1 + i] = np.log(V[:, r, c]) if r == c else V[:, r, c]
    return x


def project_consistent(pi, floor=FLOOR):
    """The nearest parameters (Frobenius norm of the pseudo-inertia) whose pseudo-inertias are positive definite:
    eigenvalues of each J(pi_k) raised to floor times its largest (or 1e-9 for a massless body).

    pi: (10 nb,)  ->  (10 nb,)
    """
    w, Q = np.linalg.eigh(pseudo_inertia(np.reshape(pi, (-1, 10))))
    w = np.maximum(w, np.maximum(floor * w[:, -1:], 1e-9))
    return parameters_from_pseudo_inertia((Q * w[:, None, :]) @ np.swapaxes(Q, -1, -2)).reshape(-1)


def is_consistent(pi, tolerance=0.0):
    """True if every body's pseudo-inertia has eigenvalues >= -tolerance.  pi: (10 nb,)"""
    return bool(np.all(np.linalg.eigvalsh(pseudo_inertia(np.reshape(pi, (-1, 10)))) >= -tolerance))


def metric_basis(metric):
    """vec(S_k J(e_j) S_k) of each body k and parameter j: |S_k J(dpi_k) S_k|_F = |dpi_k^T A_k|, the inertia metric
    of metric (an InertiaMetric).  ->  A (nb, 10, 16)"""
    S = metric.S                                                    # J_0k^-1/2, (nb, 4, 4)
    return (S[:, None] @ pseudo_inertia(np.eye(10)) @ S[:, None]).reshape(len(S), 10, 16)


def prior_metric(prior):
    """The inertia metric at the prior made consistent (module docstring), which weighs the prior's rows and the
    least change of OLS/WLS.  prior: (10 nb,)  ->  InertiaMetric"""
    return InertiaMetric(project_consistent(prior))


def prior_rows(metric):
    """B (16 nb, 10 nb) with |B (pi - pi_0)|^2 = sum_k |S_k J(pi_k - pi_0k) S_k|_F^2 in the metric of prior_metric
    (module docstring).  metric: InertiaMetric"""
    A = metric_basis(metric)
    nb = len(A)
    B = np.zeros((16 * nb, 10 * nb))
    for k in range(nb):
        B[16 * k:16 * k + 16, 10 * k:10 * k + 10] = A[k].T
    return B


def alternating_projections(K, theta_b, metric, theta, iterations=None):
    """theta projected alternately onto the affine set K theta = theta_b and the physical set J(pi_k) >= 1e-9
    J_0k, both in the inertia metric (least change; InertiaMetric.project): von Neumann's alternating projections
    between two convex sets, which tend to a point of both when they meet (exact data, a physical truth) and
    otherwise to a physical point near the unconstrained fit.  A starting point for consistent_fit.

    K: (r, p); theta_b: (r,); metric: InertiaMetric (nb bodies); theta: (p,) start.  ->  (p,), physical
    """
    p_in = 10 * len(metric.S)
    H = np.eye(K.shape[1])
    H[:p_in, :p_in] = metric.matrix()
    HinvKt = np.linalg.solve(H, K.T)
    P = HinvKt @ np.linalg.inv(K @ HinvKt)              # theta + P (theta_b - K theta): onto K theta = theta_b
    theta = np.array(theta, dtype=float)
    for _ in range(ALTERNATIONS if iterations is None else iterations):
        theta += P @ (theta_b - K @ theta)
        theta[:p_in] = metric.project(theta[:p_in], floor=1e-9)
    return theta


def consistent_fit(R, K, theta_b, nbodies, prior, metric, regularization, starts, max_nfev=None):
    """theta = [pi; friction] minimizing chi^2(theta) + lambda sum_k |S_k J(pi_k - pi_0k) S_k|_F^2 over
    physically consistent pi (module docstring), by scipy.optimize.least_squares (Levenberg-Marquardt) in
    log-Cholesky coordinates from the best of the starting points.

    R: (r, r) upper-triangular factor of the whitened base normal matrix, R^T R = sum_j w_j G_b,j / sigma^2;
    K: (r, p) base map; theta_b: (r,) the unconstrained (WLS) base parameters, so that chi^2(theta) = |R (K theta
    - theta_b)|^2 + chi^2_min; prior: (10 nb,) pi_0 (possibly not consistent); metric: prior_metric(prior);
    regularization: lambda >= 0; starts: list of (p,) theta, each made consistent before use; max_nfev:
    evaluations at most (default MAX_NFEV per unknown).  ->  theta (p,)
    """
    p_in = 10 * nbodies
    RK = R @ K
    r_star = R @ theta_b
    A = metric_basis(metric)
    root = np.sqrt(regularization)
    prior = np.reshape(prior, (nbodies, 10))

    def parameters(z):
        pi, dpi = log_cholesky(z[:p_in].reshape(nbodies, 10))
        return np.concatenate([pi.reshape(-1), z[p_in:]]), pi, dpi

    def residual(z):
        with np.errstate(over="ignore", invalid="ignore"):
            theta, pi, _ = parameters(z)
            r = np.concatenate([RK @ theta - r_star, root * np.einsum("kj,kjm->km", pi - prior, A).reshape(-1)])
        return r if np.all(np.isfinite(r)) else np.full_like(r, 1e150)       # e^x overflowed: a step refused

    def jacobian(z):
        _, _, dpi = parameters(z)
        Jz = np.empty((len(RK), len(z)))
        Jz[:, :p_in] = np.einsum("rkj,kij->rki", RK[:, :p_in].reshape(-1, nbodies, 10), dpi).reshape(len(RK), -1)
        Jz[:, p_in:] = RK[:, p_in:]
        blocks = root * np.einsum("kij,kjm->kmi", dpi, A)                # (nb, 16, 10)
        Jr = np.zeros((16 * nbodies, len(z)))
        for k in range(nbodies):
            Jr[16 * k:16 * k + 16, 10 * k:10 * k + 10] = blocks[k]
        return np.vstack([Jz, Jr])

    candidates = []
    starts = list(starts) + [alternating_projections(K, theta_b, metric, starts[-1])]
    for theta in starts:
        x = log_cholesky_coordinates(project_consistent(theta[:p_in]).reshape(nbodies, 10))
        z = np.concatenate([x.reshape(-1), theta[p_in:]])
        candidates.append((float(np.sum(residual(z) ** 2)), z))
    z0 = min(candidates, key=lambda c: c[0])[1]
    x0 = z0[:p_in].reshape(nbodies, 10)
    length = np.sqrt(np.exp(2 * x0[:, 1:4]).sum(axis=1))                # of U / e^alpha's diagonal: body size (m)
    scale = np.concatenate([np.column_stack([np.ones((nbodies, 4)), np.repeat(length[:, None], 6, 1)]).reshape(-1),
                            np.ones(len(z0) - p_in)])
    fit = scipy.optimize.least_squares(residual, z0, jac=jacobian, method="lm", x_scale=scale, ftol=TOLERANCE,
                                       xtol=TOLERANCE, gtol=TOLERANCE, max_nfev=max_nfev or MAX_NFEV * len(z0))
    return parameters(fit.x)[0]
