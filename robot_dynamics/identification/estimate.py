"""identify(): inertial parameters (and joint friction) from logged motion and torques, by ordinary, weighted or
physically consistent least squares.

Every solver works from the per-joint normal equations (least_squares.NormalEquations: G_j, b_j, c_j, n), made
from arrays in memory or chunk by chunk with Dask (scale_out.py); the two routes give the same answer.

- The model: tau = Y(q, v, v, a) pi (paper 002, eq. (16) with v_r = v, a_r = a), plus the drives' columns
  (friction.drive_regressor): diag(a) times the armatures (armature=True), and the linear coefficients of a
  friction model (friction=True: viscous + Coulomb; or "viscous", "coulomb", "offset").  The nonlinear models
  ("sigmoid", "stribeck") are fitted by variable projection (friction_fit.py), then as a linear model at their
  fitted nonlinear parameters, so that every step below applies to them too.
- Base parameters (base.py): tau = Y theta = Y_b theta_b, Y_b = Y[:, independent], theta_b = K theta.
- OLS: theta_b = (Y_b^T Y_b)^-1 Y_b^T tau from sum_j G_j, sum_j b_j restricted to the base columns (solved by
  Cholesky after scaling the columns to unit norm).  Residual of joint j: |r_j|^2 = theta^T G_j theta - 2 theta^T
  b_j + c_j.
- WLS (Gautier, "Dynamic identification of robots with power model", ICRA 1997): joint j weighted by 1 / sigma_j^2,
  sigma_j^2 = |r_j^OLS|^2 / (n - r / nv) (the stacked system's n nv - r degrees of freedom shared evenly), so that
  each joint counts by its own noise and not by its torque's units or size (least_squares.gautier_weights).
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
- Drive parameters the data cannot separate from others (the armature of the first joint of a fixed base, which
  only ever adds to link 1's inertia about the joint axis: base.py) are held at their prior, robot.armature for an
  armature and 0 for a friction coefficient, and the base parameter they share goes to the others (the link's
  inertia): the prior is the drive's datasheet value, and the data say nothing about it.  Identification.held
  names them.  They are taken out of the least change, the consistent fit and the regularized fit alike.
- The robot's own drives that are not identified (its armature without armature=True, its friction without a
  friction model: a URDF's <dynamics>, a drives file) are known: their torque is subtracted from the logged one
  before the fit (least_squares.known_drive_torque) and added back by predict.
- Write-back: Identification.drives(robot) is a drives.Drives (the armature and friction model identified),
  Identification.identified_robot(robot) the robot with the parameters and the drives identified.
"""
import warnings
from dataclasses import dataclass, field
from os import PathLike

import numpy as np
import scipy.linalg

from ..drives import Drives
from ..friction import PHYSICAL, FrictionModel, model_class, moving_coordinates
from . import optional
from .base import BaseParameters, base_parameters, column_names
from .consistent import consistent_fit, prior_metric, prior_rows
from .friction_fit import fit_shape, with_covariance
from .least_squares import (drive_count, friction_model, gautier_weights, known_drive_torque, normal_equations,
                            stacked_regressor, sums)
from .signals import interior_derivatives

METHODS = ("ols", "wls", "consistent")
SINGULAR = 1e-13            # reciprocal condition number of the column-scaled base normal matrix deemed singular
SEPARABLE = 1e-8            # a drive column is identifiable when its unit vector is this close to K's row space


@dataclass
class Identification:
    """Result of identify().

    method: "ols", "wls" or "consistent"; parameters: (10 nb,) full pi (module docstring); base: BaseParameters;
    base_values: (r,) theta_b (drive parameters last, when identified); base_std: (r,) their standard deviations;
    friction: (n_f, k) the friction model's linear coefficients per moving coordinate (friction.moving_coordinates;
    k in the order of model.coefficients: [F_v, F_c] for viscous + Coulomb) or None; residual_rms: (nv,) RMS torque
    residual per joint; condition: condition number of the stacked base regressor Y_b; n_samples: samples used;
    armature: (n_f,) or None; model: the friction model identified (friction.py, nv coordinates, the coefficients
    as identified, of either sign) or None; nonlinear_std: (n_f, m) standard deviations of a nonlinear model's
    nonlinear parameters (model.nonlinear order) or None; weights: (nv,) the weights w_j of the joints' residuals;
    held: names of the drive parameters the data cannot separate, held at their prior (module docstring).
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
    armature: np.ndarray | None = None
    model: FrictionModel | None = None
    nonlinear_std: np.ndarray | None = None
    weights: np.ndarray | None = None
    held: list = field(default_factory=list)

    @property
    def theta(self):
        """The regressor's coefficients [pi; armatures; each friction coefficient of each joint].  -> (p,)"""
        parts = [self.parameters]
        if self.armature is not None:
            parts.append(self.armature)
        if self.friction is not None:
            parts.append(self.friction.T.reshape(-1))
        return np.concatenate(parts)

    def predict(self, robot, q, v, a):
        """tau = Y(q, v, v, a) pi + diag(a) armature + tau_f(v) (paper 002, eq. (16); the sign exact), the robot's
        own drives where they were not identified (least_squares.known_drive_torque).

        q: (N, nq) or (nq,), v, a: (N, nv) or (nv,)  ->  tau (N, nv) or (nv,)
        """
        single = np.ndim(q) == 1
        q, v, a = (np.atleast_2d(x) for x in (q, v, a))
        n = _samples(robot, q, v, a)
        Y = stacked_regressor(robot, q, v, a, self.model if self.model is not None else False,
                              self.armature is not None)
        tau = Y @ self.theta + known_drive_torque(robot, v, a, self.model is not None, self.armature is not None)
        return tau[0] if single and n == 1 else tau

    def drives(self, robot):
        """The identified drives of robot (drives.Drives): the armature identified (the robot's where none was),
        the friction model identified (the robot's friction if none was; a viscous or Coulomb model as damping and
        friction, drives.py).  A negative armature or physical friction level (friction.PHYSICAL), which noise can
        give a joint without one, is raised to 0 with a warning naming it."""
        present = robot.model.drives or Drives.zero(robot.nv)
        return present.replaced(robot.coordinate_names, model=self.physical_model(robot),
                                armature=self._armature(robot))

    def identified_robot(self, robot):
        """The robot with the identified parameters and drives (drives()): what a URDF, a drives file or a
        controller should carry."""
        return robot.with_parameters(self.parameters).with_drives(self._armature(robot),
                                                                  model=self.physical_model(robot))

    def physical_model(self, robot):
        """The identified friction model (nv coordinates) with its negative physical levels raised to 0 (drives()),
        or None."""
        model = self.model
        if model is None:
            return None
        values = model.coefficient_values()
        for c, name in enumerate(model.coefficients):
            if name in PHYSICAL:
                values[c] = _raised(f"{model.name} {name}", values[c], robot.coordinate_names)
        return type(model).from_values(values, model.nonlinear_values())

    def _armature(self, robot):
        """(nv,) the identified armature (raised to 0 where negative), the robot's elsewhere."""
        armature = np.array(robot.armature)
        if self.armature is not None:
            joints = moving_coordinates(robot)
            armature[joints] = _raised("armature", self.armature, [robot.coordinate_names[i] for i in joints])
        return armature


def _raised(what, values, names):
    """values with negative entries raised to 0, with a warning naming them."""
    values = np.array(values, dtype=float)
    negative = np.flatnonzero(values < 0)
    if len(negative):
        warnings.warn(f"identified {what} negative at {', '.join(f'{names[i]} ({values[i]:.3g})' for i in negative)}"
                      f": set to 0 (not significant, or the model does not fit there)", stacklevel=3)
    return np.maximum(values, 0.0)


def identify(robot, q, v=None, a=None, tau=None, *, t=None, method="wls", friction=False, prior=None,
             regularization=0.0, cutoff=None, chunks=None, client=None, progress=None, armature=False):
    """The inertial parameters (and the drives': armature, friction) that best explain the logged torques (module
    docstring).

    robot: the model (kinematics trusted, parameters only as the default prior, its armature as the armature's);
    q: (N, nq) positions; or a list of log files, or a dask array (then, or with chunks or client, the normal
    equations are reduced by Dask: scale_out.dask_normal_equations; linear friction models only);
    v, a: (N, nv) velocities and accelerations; both None: from q by signals.derivatives(t, q, cutoff) (a fixed
    base only), and only the samples of signals.interior(t, cutoff) are used (2 / cutoff from the ends);
    tau: (N, nv) joint torques (a floating base's first 6 rows: the wrench on the base, in its frame);
    t: (N,) times (s), needed only to differentiate q; method: "ols", "wls" or "consistent";
    friction: the friction model identified with them: False or "none" (none), True (viscous + Coulomb), a name
    ("viscous", "coulomb", "offset", "sigmoid", "stribeck"; friction.py), or a model object, whose nonlinear
    parameters are then kept and only its linear coefficients fitted; armature: identify an armature per joint
    coordinate; prior: (10 nb,) pi_0 (default robot.parameters); regularization: lambda >= 0; cutoff: Hz, of
    the derivative filter (default 10 Hz); chunks: samples per Dask chunk; client: a distributed.Client;
    progress: callable(samples_done, samples_total).
    -> Identification
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    regularization = float(regularization)
    if not (np.isfinite(regularization) and regularization >= 0):
        raise ValueError(f"regularization must be finite and >= 0, got {regularization!r}")
    prior = _checked_prior(robot, prior)
    model = friction_model(friction)
    cls = model_class(model)
    nonlinear = cls is not None and cls.nonlinear and not isinstance(model, FrictionModel)
    if chunks is not None or client is not None or _is_distributed(q):
        if nonlinear:
            raise ValueError(f"friction={model!r}: a nonlinear friction model is fitted in memory (variable "
                             "projection); give arrays, not log files, chunks or a client")
        optional("dask.array", "the Dask route (a list of logs, dask arrays, chunks= or client=)")
        from .scale_out import dask_normal_equations
        ne = dask_normal_equations(robot, q, v, a, tau, friction=model or False, armature=armature,
                                   chunks=100_000 if chunks is None else chunks, client=client, progress=progress)
    else:
        q, v, a, tau = in_memory_arrays(robot, q, v, a, tau, t, cutoff)
        if nonlinear:                                             # variable projection, then the linear fit
            tau = tau - known_drive_torque(robot, v, a, True, armature)
            shaped, Y = fit_shape(robot, q, v, a, tau, cls, method, armature)
            if progress is not None:
                progress(len(q), len(q))
            result = solve_normal_equations(robot, sums(Y, tau), method, shaped, prior, regularization,
                                            armature=armature)
            return with_covariance(result, robot, Y, v, cls)
        ne = normal_equations(robot, q, v, a, tau, model or False, progress=progress, armature=armature)
    return solve_normal_equations(robot, ne, method, model or False, prior, regularization, armature=armature)


def solve_normal_equations(robot, ne, method="wls", friction=False, prior=None, regularization=0.0, base=None,
                           armature=False):
    """identify() from the normal equations of the data (least_squares.NormalEquations).

    friction, armature: the drives' columns the normal equations hold (a nonlinear model as an object: its columns
    at its nonlinear parameters); base: the robot's BaseParameters (with the same columns), computed if None.
    -> Identification
    """
    model = friction_model(friction)
    cls = model_class(model)
    if cls is not None and cls.nonlinear and not isinstance(model, FrictionModel):
        raise ValueError(f"friction={model!r}: a nonlinear model's normal equations are those of a model object "
                         "(its nonlinear parameters fixed)")
    joints = moving_coordinates(robot)
    p_in = 10 * robot.nbodies
    p = p_in + drive_count(robot, model, armature)
    if np.shape(ne.G) != (robot.nv, p, p) or np.shape(ne.b) != (robot.nv, p) or np.shape(ne.c) != (robot.nv,):
        raise ValueError(f"normal equations: G must be (nv, p, p) = {(robot.nv, p, p)} (friction={model!r}, "
                         f"armature={armature}), got {np.shape(ne.G)}")
    prior = _checked_prior(robot, prior)
    base = base_parameters(robot, friction=model, armature=armature) if base is None else base
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
        w = gautier_weights(e, ne.c, n, r)
        theta_b, A_b = _base_fit(G_b, b_b, w, base)
        e = residuals(theta_b)
    chi2_scale = max(float(w @ e) / dof, 1e-300)                   # sigma^2 of the weighted residual

    theta0 = np.concatenate([prior, np.zeros(p - p_in)])
    if armature:
        theta0[p_in:p_in + len(joints)] = (robot.model.drives or Drives.zero(nv)).armature[joints]
    free = separable(base.K, p_in)                                  # the rest is held at theta0 (module docstring)
    K, target = base.K[:, free], theta_b - base.K[:, ~free] @ theta0[~free]
    n_d = int(free[p_in:].sum())
    metric = prior_metric(prior)
    H = scipy.linalg.block_diag(metric.matrix(), np.eye(n_d))
    theta = theta0.copy()
    theta[free] = _least_change(K, H, theta0[free], target)
    if method == "consistent" or regularization > 0:
        R = scipy.linalg.cholesky(A_b / chi2_scale)                    # R^T R: the whitened base normal matrix
        if method == "consistent":
            theta[free] = consistent_fit(R, K, target, robot.nbodies, prior, metric, regularization,
                                         [np.concatenate([prior, theta[free][p_in:]]), theta[free]])
        else:   # chi^2 - chi^2_min = |R (K theta - theta_b)|^2 (consistent.py), stacked with the prior's rows
            B = np.sqrt(regularization) * prior_rows(metric)
            rows = np.vstack([R @ K, np.hstack([B, np.zeros((len(B), n_d))])])
            theta[free] = np.linalg.lstsq(rows, np.concatenate([R @ target, B @ prior]), rcond=None)[0]
        theta_b = base.values(theta)
        e = residuals(theta_b)
    cov = float(w @ e) / dof * np.linalg.inv(A_b)
    n_f, n_a = len(joints), (len(joints) if armature else 0)
    coefficients = theta[p_in + n_a:].reshape(-1, n_f)                        # (k, n_f)
    return Identification(method=method, parameters=theta[:p_in], base=base, base_values=theta_b,
                          base_std=np.sqrt(np.maximum(np.diag(cov), 0.0)),
                          friction=coefficients.T.copy() if cls is not None else None,
                          residual_rms=np.sqrt(e / n), condition=_condition(G_b.sum(axis=0)), n_samples=n,
                          armature=theta[p_in:p_in + n_a].copy() if armature else None,
                          model=_identified_model(robot, cls, model, coefficients), weights=w,
                          held=[name for name, f in zip(column_names(robot, model, armature), free) if not f])


def separable(K, p_in):
    """Which columns of theta the base parameters determine, K theta = theta_b: the inertial ones (always, as their
    combinations are what the least change and the consistent fit work on) and each drive column whose unit vector
    lies in K's row space.  K: (r, p)  ->  (p,) bool"""
    Q, _ = np.linalg.qr(K.T)                                       # an orthonormal basis of K's row space
    free = np.sum(Q**2, axis=1) > 1.0 - SEPARABLE                  # |projection of e_i|^2 = 1: e_i in the space
    free[:p_in] = True
    return free


def _identified_model(robot, cls, model, coefficients):
    """The friction model object (nv coordinates) of the identified coefficients (k, n_f): zero on a floating
    base's coordinates; a nonlinear model's nonlinear parameters those of the model the columns were made with."""
    if cls is None:
        return None
    values = np.zeros((len(cls.coefficients), robot.nv))
    values[:, moving_coordinates(robot)] = coefficients
    nonlinear = model.nonlinear_values() if isinstance(model, FrictionModel) else ()
    return cls.from_values(values, nonlinear)


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


def in_memory_arrays(robot, q, v, a, tau, t, cutoff):
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
