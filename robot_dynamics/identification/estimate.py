"""identify(): inertial parameters (and joint friction) from logged motion and torques, by ordinary, weighted or
physically consistent least squares.

Every solver works from the per-joint normal equations (least_squares.NormalEquations: G_j, b_j, c_j, n), made
from arrays in memory or chunk by chunk with Dask (scale_out.py); the two routes give the same answer.

- The model: tau = Y(q, v, v, a) pi (paper 002, eq. (16) with v_r = v, a_r = a), plus friction columns.
- Base parameters (base.py): tau = Y theta = Y_b theta_b, Y_b = Y[:, independent], theta_b = K theta.
- OLS: theta_b = (Y_b^T Y_b)^-1 Y_b^T tau from sum_j G_j, sum_j b_j restricted to the base columns (solved by
  Cholesky after scaling the columns to unit norm).  Residual of joint j: |r_j|^2 = theta^T G_j theta - 2 theta^T
  b_j + c_j.
- WLS (Gautier, "Dynamic identification of robots with power model", ICRA 1997): joint j weighted by 1 / sigma_j^2,
  sigma_j^2 = |r_j^OLS|^2 / (n - r / nv) (the stacked system's n nv - r degrees of freedom shared evenly), so that
  each joint counts by its own noise and not by its torque's units or size.
- Standard deviations: cov(theta_b) = sigma^2 (Y_b^T W Y_b)^-1, sigma^2 = sum_j w_j |r_j|^2 / (n nv - r).
- Full pi for OLS/WLS: the prior pi_0 (default the URDF's) corrected by the least change, in the inertia metric at
  the prior (controllers.adaptive.InertiaMetric, at the prior made consistent), that gives the identified base
  parameters: pi = pi_0 + H^-1 K^T (K H^-1 K^T)^-1 (theta_b - K pi_0).  Nothing the data cannot see moves.
- Consistent (consistent.py): the full pi with every body's pseudo-inertia positive definite (friction
  unconstrained), with the WLS weights.
- regularization lambda >= 0 adds lambda |pi - pi_0|_H^2 to chi^2 = sum_j w_j |r_j|^2 / sigma^2, the residual
  whitened by the unregularized fit's noise (chi^2 ~ n nv): a Gaussian prior of precision lambda in the inertia
  metric, i.e. pi_0 trusted to about 1 / sqrt(lambda) of each body's own size (lambda = 100: to 10 %).  Friction
  is not regularized.  With lambda > 0, OLS/WLS minimize this over the full pi (one stacked least-squares problem:
  chi^2 - chi^2_min = |R (K theta - theta_b)|^2 with R^T R the whitened base normal matrix, and the prior's rows)
  and the consistent fit includes it; lambda = 0 for OLS/WLS is the least-change correction above.  The metric
  whitens each body by its own prior pseudo-inertia, so a thin link's thin direction weighs most: lambda = 1 can
  move identified base parameters by several standard deviations towards a wrong prior.
"""
from dataclasses import dataclass
from os import PathLike

import numpy as np
import scipy.linalg

from . import optional
from .base import BaseParameters, base_parameters
from .consistent import consistent_fit, prior_metric, prior_rows
from .least_squares import friction_joints, normal_equations, stacked_regressor
from .signals import interior_derivatives

METHODS = ("ols", "wls", "consistent")
SINGULAR = 1e-13            # reciprocal condition number of the column-scaled base normal matrix deemed singular
NOISE_FLOOR = 1e-12         # sigma_j^2 >= NOISE_FLOOR * mean_j(c_j / n): exact (simulated) data get finite weights


@dataclass
class Identification:
    """Result of identify().

    method: "ols", "wls" or "consistent"; parameters: (10 nb,) full pi (module docstring); base: BaseParameters;
    base_values: (r,) theta_b (friction coefficients last, when identified); base_std: (r,) their standard
    deviations; friction: (n_f, 2) [F_v, F_c] per friction joint (least_squares.friction_joints) or None;
    residual_rms: (nv,) RMS torque residual per joint; condition: condition number of the stacked base regressor
    Y_b; n_samples: samples used.
    """

    method: str
    parameters: np.ndarray
    base: BaseParameters
    base_values: np.ndarray
    base_std: np.ndarray
    friction: np.ndarray | None
    residual_rms: np.ndarray
    condition: float
    n_samples: int

    @property
    def theta(self):
        """The regressor's coefficients [pi; F_v of each joint; F_c of each joint].  -> (p,)"""
        if self.friction is None:
            return self.parameters
        return np.concatenate([self.parameters, self.friction[:, 0], self.friction[:, 1]])

    def predict(self, robot, q, v, a):
        """tau = Y(q, v, v, a) pi + F_v v + F_c sign(v) (paper 002, eq. (16)).

        q: (N, nq) or (nq,), v, a: (N, nv) or (nv,)  ->  tau (N, nv) or (nv,)
        """
        single = np.ndim(q) == 1
        q, v, a = (np.atleast_2d(x) for x in (q, v, a))
        n = _samples(robot, q, v, a)
        tau = stacked_regressor(robot, q, v, a, self.friction is not None) @ self.theta
        return tau[0] if single and n == 1 else tau


def identify(robot, q, v=None, a=None, tau=None, *, t=None, method="wls", friction=False, prior=None,
             regularization=0.0, cutoff=None, chunks=None, client=None, progress=None):
    """The inertial parameters (and friction) that best explain the logged torques (module docstring).

    robot: the model (kinematics trusted, parameters only as the default prior);
    q: (N, nq) positions; or a list of log files, or a dask array (then, or with chunks or client, the normal
    equations are reduced by Dask: scale_out.dask_normal_equations);
    v, a: (N, nv) velocities and accelerations; both None: from q by signals.derivatives(t, q, cutoff) (a fixed
    base only), and only the samples of signals.interior(t, cutoff) are used (2 / cutoff from the ends);
    tau: (N, nv) joint torques (a floating base's first 6 rows: the wrench on the base, in its frame);
    t: (N,) times (s), needed only to differentiate q; method: "ols", "wls" or "consistent";
    friction: identify viscous and Coulomb friction per joint too; prior: (10 nb,) pi_0 (default
    robot.parameters); regularization: lambda >= 0; cutoff: Hz, of the derivative filter (default 10 Hz);
    chunks: samples per Dask chunk; client: a distributed.Client; progress: callable(samples_done, samples_total).
    -> Identification
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    regularization = float(regularization)
    if not (np.isfinite(regularization) and regularization >= 0):
        raise ValueError(f"regularization must be finite and >= 0, got {regularization!r}")
    prior = _checked_prior(robot, prior)
    if chunks is not None or client is not None or _is_distributed(q):
        optional("dask.array", "the Dask route (a list of logs, dask arrays, chunks= or client=)")
        from .scale_out import dask_normal_equations
        ne = dask_normal_equations(robot, q, v, a, tau, friction=friction,
                                   chunks=100_000 if chunks is None else chunks, client=client, progress=progress)
    else:
        q, v, a, tau = _in_memory(robot, q, v, a, tau, t, cutoff)
        ne = normal_equations(robot, q, v, a, tau, friction, progress=progress)
    return solve_normal_equations(robot, ne, method, friction, prior, regularization)


def solve_normal_equations(robot, ne, method="wls", friction=False, prior=None, regularization=0.0, base=None):
    """identify() from the normal equations of the data (least_squares.NormalEquations).

    base: the robot's BaseParameters (with the same friction), computed if None.  -> Identification
    """
    n_f = len(friction_joints(robot)) if friction else 0
    p = 10 * robot.nbodies + 2 * n_f
    if np.shape(ne.G) != (robot.nv, p, p) or np.shape(ne.b) != (robot.nv, p) or np.shape(ne.c) != (robot.nv,):
        raise ValueError(f"normal equations: G must be (nv, p, p) = {(robot.nv, p, p)} (friction={friction}), "
                         f"got {np.shape(ne.G)}")
    prior = _checked_prior(robot, prior)
    base = base_parameters(robot, friction=friction) if base is None else base
    ind, r, n, nv = base.independent, base.rank, int(ne.n), robot.nv
    dof = n * nv - r
    if dof <= 0:
        raise ValueError(f"{n} samples of {nv} torques cannot determine {r} base parameters")
    G_b, b_b = ne.G[:, ind[:, None], ind], ne.b[:, ind]

    def residuals(theta_b):                                     # |r_j|^2 = theta^T G_j theta - 2 theta^T b_j + c_j
        e = np.einsum("i,jik,k->j", theta_b, G_b, theta_b) - 2 * b_b @ theta_b + ne.c
        return np.maximum(e, 0.0)

    w = np.ones(nv)
    theta_b, A_b = _base_fit(G_b, b_b, w, base)
    e = residuals(theta_b)
    if method != "ols":
        sigma2 = e / (n - r / nv)
        w = 1.0 / np.maximum(sigma2, NOISE_FLOOR * np.mean(ne.c) / n + 1e-300)
        theta_b, A_b = _base_fit(G_b, b_b, w, base)
        e = residuals(theta_b)
    chi2_scale = max(float(w @ e) / dof, 1e-300)                   # sigma^2 of the weighted residual
    p_in = 10 * robot.nbodies

    theta0 = np.concatenate([prior, np.zeros(2 * n_f)])
    metric = prior_metric(prior)
    H = scipy.linalg.block_diag(metric.matrix(), np.eye(2 * n_f))
    theta = _least_change(base.K, H, theta0, theta_b)
    if method == "consistent" or regularization > 0:
        R = scipy.linalg.cholesky(A_b / chi2_scale)                    # R^T R: the whitened base normal matrix
        if method == "consistent":
            theta = consistent_fit(R, base.K, theta_b, robot.nbodies, prior, metric, regularization,
                                   [np.concatenate([prior, theta[p_in:]]), theta])
        else:   # chi^2 - chi^2_min = |R (K theta - theta_b)|^2 (consistent.py), stacked with the prior's rows
            B = np.sqrt(regularization) * prior_rows(metric)
            rows = np.vstack([R @ base.K, np.hstack([B, np.zeros((len(B), 2 * n_f))])])
            theta = np.linalg.lstsq(rows, np.concatenate([R @ theta_b, B @ prior]), rcond=None)[0]
        theta_b = base.values(theta)
        e = residuals(theta_b)
    cov = float(w @ e) / dof * np.linalg.inv(A_b)
    return Identification(method=method, parameters=theta[:p_in], base=base, base_values=theta_b,
                          base_std=np.sqrt(np.maximum(np.diag(cov), 0.0)),
                          friction=theta[p_in:].reshape(2, n_f).T if friction else None,
                          residual_rms=np.sqrt(e / n), condition=_condition(G_b.sum(axis=0)), n_samples=n)


def _base_fit(G_b, b_b, w, base):
    """theta_b minimizing sum_j w_j |Y_b,j theta_b - tau_j|^2, by Cholesky of the column-scaled normal matrix.

    -> theta_b (r,), A_b = sum_j w_j G_b,j (r, r)
    """
    A_b = np.einsum("j,jik->ik", w, G_b)
    d = np.sqrt(np.diag(A_b))
    if np.any(d == 0):
        missing = [base.names[i] for i in np.flatnonzero(d == 0)]
        raise ValueError(f"the data do not excite the base parameters {missing}: move every joint "
                         "(excitation_trajectory)")
    As = A_b / np.outer(d, d)
    s = np.linalg.eigvalsh(As)
    if s[0] <= SINGULAR * s[-1]:
        raise ValueError(f"the data do not determine the base parameters (condition number of the scaled normal "
                         f"matrix {s[-1] / max(s[0], 1e-300):.3g}): excite the robot more (excitation_trajectory)")
    factor = scipy.linalg.cho_factor(As)
    return scipy.linalg.cho_solve(factor, (w @ b_b) / d) / d, A_b


def _least_change(K, H, theta0, theta_b):
    """theta0 + H^-1 K^T (K H^-1 K^T)^-1 (theta_b - K theta0): the least change of theta0 in the metric H that
    gives K theta = theta_b.  -> (p,)"""
    HinvKt = np.linalg.solve(H, K.T)
    return theta0 + HinvKt @ np.linalg.solve(K @ HinvKt, theta_b - K @ theta0)


def _condition(A):
    """Condition number of Y from its normal matrix A = Y^T Y: sqrt(lambda_max / lambda_min)."""
    s = np.linalg.eigvalsh(A)
    return float(np.sqrt(s[-1] / s[0])) if s[0] > 0 else float("inf")


def _checked_prior(robot, prior):
    """The prior pi_0 (10 nb,), robot.parameters if None."""
    if prior is None:
        return np.array(robot.parameters, dtype=float)
    prior = np.asarray(prior, dtype=float)
    if prior.shape != (10 * robot.nbodies,):
        raise ValueError(f"prior must be (10 nbodies,) = ({10 * robot.nbodies},), got shape {prior.shape}")
    if not np.all(np.isfinite(prior)):
        raise ValueError("prior has non-finite entries")
    return prior


def _is_distributed(q):
    """A list of log files or a dask array: data for the Dask route."""
    if type(q).__module__.split(".")[0] == "dask":
        return True
    return isinstance(q, (list, tuple)) and len(q) > 0 and all(isinstance(x, (str, PathLike)) for x in q)


def _samples(robot, q, v, a, tau=None):
    """Check the shapes (N, nq), (N, nv) and finiteness of the samples, naming the culprit.  -> N"""
    arrays = {"q": (q, robot.nq), "v": (v, robot.nv), "a": (a, robot.nv), "tau": (tau, robot.nv)}
    N = len(q) if np.ndim(q) == 2 else None
    for name, (x, n) in arrays.items():
        if x is None:
            continue
        if np.ndim(x) != 2 or np.shape(x)[1] != n or (N is not None and len(x) != N):
            raise ValueError(f"{name} must be (N, {n}) with N = {N} samples, got shape {np.shape(x)}")
        bad = ~np.all(np.isfinite(x), axis=1)
        if np.any(bad):
            raise ValueError(f"{name} has non-finite entries (NaN or inf) at sample {int(np.argmax(bad))}")
    return N


def _in_memory(robot, q, v, a, tau, t, cutoff):
    """The samples as float arrays, v and a from q when neither is given.  -> q, v, a, tau"""
    q = np.asarray(q, dtype=float)
    if tau is None:
        raise ValueError("tau is required (the measured joint torques, (N, nv))")
    tau = np.asarray(tau, dtype=float)
    if (v is None) != (a is None):
        raise ValueError(f"give both v and a, or neither (then they come from q and t); {'v' if v is None else 'a'}"
                         " is missing")
    if v is None:
        if t is None:
            raise ValueError("t is required to differentiate q when v and a are not given")
        if robot.floating_base:
            raise ValueError("v and a are required for a floating base (signals.derivatives differentiates joint "
                             "coordinates, not the base's quaternion)")
        _samples(robot, q, None, None, tau)
        keep, q, v, a = interior_derivatives(t, q, cutoff)        # past the filter's start-up at either end
        tau = tau[keep]
    v, a = np.asarray(v, dtype=float), np.asarray(a, dtype=float)
    if _samples(robot, q, v, a, tau) == 0:
        raise ValueError("q has no samples")
    return q, v, a, tau
