"""Nonlinear friction models (sigmoid, stribeck) identified with the rigid body's parameters by variable projection.

The joint torques are linear in everything but a few nonlinear parameters eta of the friction model (phi2, phi3
of the sigmoid, v_s of the Stribeck model, per joint; friction.py):

    tau = Y_b(q, v, a) theta_b + F(v; eta) c,

Y_b the base regressor of the inertial parameters (and armatures: base.py), F(v; eta) the friction model's
columns at eta (friction.drive_regressor, the sign exact), c its linear coefficients.  For a given eta the best
theta_b, c are a linear least-squares solution, so the fit is a problem in eta alone (Golub & Pereyra, "The
differentiation of pseudo-inverses and nonlinear least squares problems whose variables separate", SIAM J. Numer.
Anal. 10(2), 1973):

    min_eta |P_perp(eta) W^1/2 tau|^2,    P_perp(eta) the projector onto the complement of W^1/2 [Y_b, F(eta)],

solved by scipy.optimize.least_squares (trust region, bounds) with Kaufman's Jacobian J = -P_perp dF/deta c
(L. Kaufman, BIT 15, 1975), which is the exact Jacobian wherever the residual vanishes.  W^1/2 [Y_b] is
factored once (Q_0); each eta needs F's part orthogonal to it and one small QR.  Positive parameters (phi2, v_s)
are optimized as logarithms, within bounds relative to each joint's velocity range V_j = max |v_j| (phi2 V_j in
[0.5, 1e4], |phi3| <= V_j, v_s / V_j in [1e-4, 1]); the start is, joint by joint, the best of a grid of common
values (STARTS).

Weights as identify()'s (least_squares.gautier_weights): the ordinary fit first, then each joint weighted by the
inverse of its residual variance and the fit repeated from there (method "wls" or "consistent").  With eta fixed
at the optimum, the model is a linear one (a friction model object) and identify() finishes the fit with
estimate.solve_normal_equations: base parameters, least change, consistent fit, regularization as for every other
model.  Standard deviations come from the Gauss-Newton covariance of all the fitted quantities together,
sigma^2 (J^T W J)^-1 with J = [Y_b, F(eta), dF/deta c], so that the uncertainty of eta widens that of theta_b.

The stacked base regressor is held in memory: N nv r doubles (N samples, r base parameters).
"""
from dataclasses import replace

import numpy as np
import scipy.linalg
import scipy.optimize

from ..friction import moving_coordinates
from .base import base_parameters
from .least_squares import drive_regressor, gautier_weights, stacked_regressor

# Start values of the nonlinear parameters, as multiples of each joint's velocity range V = max |v|: the best of
# each grid, joint by joint, starts the fit.  Bounds likewise, (low, high) in units of V^power.
STARTS = {"sigmoid": [(g, 0.0) for g in (2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0)],     # phi2 V, phi3 / V
          "stribeck": [(g,) for g in (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)]}                  # v_s / V
BOUNDS = {"sigmoid": ((0.5, 1e4), (-1.0, 1.0)), "stribeck": ((1e-4, 1.0),)}
POWER = {"sigmoid": (-1, 1), "stribeck": (1,)}      # phi2 scales as 1 / V, phi3 and v_s as V
TOLERANCE = 1e-12                                   # ftol, xtol, gtol of least_squares
MAX_NFEV = 200


def fit_shape(robot, q, v, a, tau, cls, method, armature):
    """The nonlinear parameters of friction model class cls that best explain the torques, by variable projection
    (module docstring), and the friction model object of those parameters (zero linear coefficients: its columns
    are what estimate.identify fits linearly next).  q, v, a, tau: (N, ...) arrays in memory, already checked.
    -> shaped (a cls object), Y (N, nv, p) the stacked regressor with its columns"""
    joints = moving_coordinates(robot)
    Y = stacked_regressor(robot, q, v, a, armature=armature)                         # (N, nv, p0)
    base = base_parameters(robot, armature=armature)
    projection = Projection(Y[..., base.independent], tau, v[:, joints], joints, cls)
    eta = projection.fit(np.ones(robot.nv))
    if method != "ols":
        w = gautier_weights(projection.joint_residuals(eta), np.sum(np.square(tau), axis=0), len(q),
                            projection.unknowns)
        eta = projection.fit(w, eta)
    shape = np.ones((len(cls.nonlinear), robot.nv))                  # a floating base's rows: any valid value
    shape[:, joints] = eta
    shaped = cls.from_values(np.zeros((len(cls.coefficients), robot.nv)), shape)
    return shaped, np.concatenate([Y, drive_regressor(robot, v, armature=False, model=shaped)], axis=-1)


def with_covariance(result, robot, Y, v, cls):
    """The result (of the linear fit at the nonlinear parameters, on the stacked regressor Y (N, nv, p)) with the
    standard deviations of theta_b and of the nonlinear parameters from the Gauss-Newton covariance of both
    (module docstring).  -> Identification"""
    joints = moving_coordinates(robot)
    vj = v[:, joints]
    n, nv = len(Y), robot.nv
    eta = result.model.nonlinear_values()[:, joints]
    c = result.friction.T                                                        # (k, n_f)
    dB = cls.basis_nonlinear_derivatives(vj, eta, smooth=False)                  # (N, k, m, n_f)
    D = np.zeros((n, nv) + eta.shape)                                            # d tau_j / d eta_li
    D[:, joints, :, np.arange(len(joints))] = np.moveaxis(np.einsum("tkmi,ki->tmi", dB, c), -1, 0)
    D = D.reshape(n, nv, -1)                                                     # (N, nv, m n_f)
    J = np.concatenate([Y[..., result.base.independent], D], axis=-1) * np.sqrt(result.weights)[:, None]
    J = J.reshape(n * nv, -1)
    e2 = n * result.residual_rms**2
    sigma2 = float(result.weights @ e2) / (n * nv - J.shape[1])
    cov = sigma2 * np.linalg.inv(J.T @ J)
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    r = result.base.rank
    return replace(result, base_std=std[:r], nonlinear_std=std[r:].reshape(eta.shape).T.copy())


def _least_squares_solver(F):
    """x -> argmin_c |F c - x| for a tall F (M, n), by Cholesky of the column-scaled Gram matrix: n^2 M flops in
    one matrix product, where LAPACK's Householder QR of a tall matrix ran ten times slower here.  The Gram matrix
    squares cond(F), of order 10 for friction columns beside the rest; a singular one (a column the data do not
    excite) falls back to the pseudo-inverse."""
    d = np.sqrt(np.einsum("ij,ij->j", F, F))
    d[d == 0] = 1.0
    Fs = F / d
    try:
        factor = scipy.linalg.cho_factor(Fs.T @ Fs)
        return lambda x: (scipy.linalg.cho_solve(factor, Fs.T @ x).T / d).T
    except np.linalg.LinAlgError:
        pinv = np.linalg.pinv(Fs)
        return lambda x: ((pinv @ x).T / d).T


def _orthonormal(J):
    """U (M, n) orthonormal and R (n, n) with J = U R, by Cholesky QR twice (CholeskyQR2: as accurate as
    Householder for cond(J) below 1e8, in matrix products) on the column-scaled J; Householder QR where a Gram
    matrix is singular."""
    d = np.sqrt(np.einsum("ij,ij->j", J, J))
    d[d == 0] = 1.0
    U, R = J / d, np.diag(d)
    try:
        for _ in range(2):
            C = np.linalg.cholesky(U.T @ U).T                                   # U^T U = C^T C
            U, R = U @ scipy.linalg.solve_triangular(C, np.eye(len(C))), C @ R    # U C^-1: a product, not a TRSM
    except np.linalg.LinAlgError:
        U, R = np.linalg.qr(J)
    return U, R


class Projection:
    """The variable-projection residual of tau = Y_b theta_b + F(v; eta) c as a function of eta (module docstring).

    Y_b: (N, nv, r) the base regressor of the linear part; tau: (N, nv); vj: (N, n_f) velocities of the moving
    coordinates joints (n_f,); cls: the friction model class.
    """

    def __init__(self, Y_b, tau, vj, joints, cls):
        self.Y_b, self.tau, self.vj, self.joints, self.cls = Y_b, np.asarray(tau, dtype=float), vj, joints, cls
        self.n, self.nv, self.n_f = len(tau), tau.shape[1], len(joints)
        self.k, self.m = len(cls.coefficients), len(cls.nonlinear)
        self.unknowns = Y_b.shape[-1] + self.k * self.n_f
        self.V = np.maximum(np.abs(vj).max(axis=0), 1e-12)                       # (n_f,) velocity ranges
        self.log = np.array([name in cls.positive for name in cls.nonlinear])
        self.weigh(np.ones(self.nv))

    def weigh(self, w):
        """Weights w (nv,) of the joints' residuals: the factor Q_0 of W^1/2 Y_b, and W^1/2 tau without its part
        in Q_0's span."""
        self.sw = np.sqrt(w)
        A = (self.Y_b * self.sw[:, None]).reshape(self.n * self.nv, -1)
        self.Q0 = _orthonormal(A)[0]
        t = (self.tau * self.sw).reshape(-1)
        self.t = t - self.Q0 @ (self.Q0.T @ t)
        self._cache = None

    def columns(self, B):
        """W^1/2 F of per-joint columns B (N, c, n_f): column c n_f + i on joint i's rows.  -> (N nv, c n_f)"""
        F = np.zeros((self.n, self.nv, B.shape[1], self.n_f))
        F[:, self.joints, :, np.arange(self.n_f)] = np.moveaxis(B, -1, 0) * self.sw[self.joints, None, None]
        return F.reshape(self.n * self.nv, -1)

    def eta(self, x):
        """eta (m, n_f) of the optimizer's variables (logarithms for the positive parameters)."""
        eta = np.array(x, dtype=float).reshape(self.m, self.n_f)
        eta[self.log] = np.exp(eta[self.log])
        return eta

    def evaluate(self, x):
        """The projected residual (N nv,) and Kaufman's Jacobian (N nv, m n_f) at the variables x."""
        if self._cache is not None and np.array_equal(self._cache[0], x):
            return self._cache[1:]
        eta = self.eta(x)
        F = self.columns(self.cls.basis(self.vj, eta, smooth=False))
        F -= self.Q0 @ (self.Q0.T @ F)                                               # F's part beside Y_b
        solve = _least_squares_solver(F)
        c = solve(self.t)
        rho = self.t - F @ c
        dB = self.cls.basis_nonlinear_derivatives(self.vj, eta, smooth=False)        # (N, k, m, n_f)
        chain = np.where(self.log[:, None], eta, 1.0)                                # d eta / dx
        D = self.columns(np.einsum("tkmi,ki,mi->tmi", dB, c.reshape(self.k, self.n_f), chain))
        D -= self.Q0 @ (self.Q0.T @ D)
        D -= F @ solve(D)                                                            # P_perp dF/dx c
        self._cache = (x.copy(), rho, -D)
        return rho, -D

    def variables(self, eta):
        """The optimizer's variables of eta (m, n_f): the logarithms of the positive parameters.  -> (m n_f,)"""
        x = np.array(eta, dtype=float)
        x[self.log] = np.log(x[self.log])
        return x.reshape(-1)

    def compressed(self, x):
        """The residual and Jacobian of evaluate(x) in n + 1 rows instead of N nv: J = U R (U orthonormal),
        r = [U^T rho; |rho - U U^T rho|], J_r = [R; 0].  |r + J_r d| = |rho + J d| for every step d, so the trust
        region sees the same problem, and its SVD is of an (n + 1, n) matrix."""
        rho, J = self.evaluate(x)
        U, R = _orthonormal(J)
        z = U.T @ rho
        return np.append(z, np.linalg.norm(rho - U @ z)), np.vstack([R, np.zeros((1, R.shape[1]))])

    def joint_residuals(self, eta):
        """|r_j|^2 per joint (nv,) of the fit at eta (m, n_f), unweighted."""
        rho = self.evaluate(self.variables(eta))[0].reshape(self.n, self.nv) / self.sw
        return np.sum(rho**2, axis=0)

    def fit(self, w, eta=None):
        """eta (m, n_f) minimizing the weighted projected residual, from eta or from the grid's best (STARTS)."""
        self.weigh(w)
        name, V = self.cls.name, self.V
        scale = np.array([V ** p for p in POWER[name]])                                  # (m, n_f)
        low = np.array([b[0] for b in BOUNDS[name]])[:, None] * scale
        high = np.array([b[1] for b in BOUNDS[name]])[:, None] * scale
        if eta is None:
            grid = [np.array(g)[:, None] * scale for g in STARTS[name]]
            e = np.array([self.joint_residuals(g)[self.joints] for g in grid])            # (grid, n_f)
            best = np.argmin(e, axis=0)
            eta = np.array([grid[g][:, i] for i, g in enumerate(best)]).T
        lo, hi = self.variables(low), self.variables(high)
        x0 = np.clip(self.variables(np.clip(eta, low, high)), lo + 1e-9 * (hi - lo), hi - 1e-9 * (hi - lo))
        x_scale = np.where(self.log[:, None], 1.0, 0.1 * scale).reshape(-1)
        fit = scipy.optimize.least_squares(lambda x: self.compressed(x)[0], x0, jac=lambda x: self.compressed(x)[1],
                                           bounds=(lo, hi), method="trf", x_scale=x_scale, ftol=TOLERANCE,
                                           xtol=TOLERANCE, gtol=TOLERANCE, max_nfev=MAX_NFEV)
        return self.eta(fit.x)
