"""identify_payload(): the mass, centre of mass and inertia of a payload on a robot whose own model is trusted.

The robot's model (its parameters and drives) explains its own torques; what it does not is the payload's:

    tau - ID(q, v, a) - tau_f(v) = Y_k(q, v, v, a) pi_p

with ID the robot's inverse dynamics (the armature included), tau_f its drives' friction (robot.friction_torque),
Y_k the ten columns of the Slotine-Li regressor of body k (paper 002, eq. (16) with v_r = v, a_r = a) and pi_p =
[m, m c, Ixx, Iyy, Izz, Ixy, Ixz, Iyz] the payload about body k's origin (paper 002, eq. (9)).  A payload fixed
to a link that is merged into body k (a flange, a tool link) is identified in that link's frame: with (R, p) the
link's placement in the body (model.frames), pi_k = T(R, p) pi_link (spatial.transform_parameters, linear), so
the columns are Y_k T.  Every result is in the frame of the link named by ``body``: the body's own frame when a
body is named.

- Fit: weighted least squares over the joints that carry the payload (the others' rows of Y_k are zero), from the
  per-joint normal equations (least_squares.sums), with Gautier's weights 1 / sigma_j^2 from the ordinary fit's
  residual per joint, as identify() (estimate.py).  Standard deviations: cov(pi) = sigma^2 (Y^T W Y)^-1,
  sigma^2 = sum_j w_j |r_j|^2 / (n n_j - p); the CoM's and the inertia's by first-order propagation through
  c = h / m and I_c = I_o - (|h|^2 1 - h h^T) / m.
- Identified or not: in units of a reference payload (REFERENCE_MASS at REFERENCE_LENGTH: x = pi / s, s = [1, L,
  L, L, L^2, ...] kg), the data determine every direction of x to a standard deviation of at most 1 (the
  information matrix's eigenvalues >= 1) -- else the ten parameters are not identified.  Then mass and CoM alone
  are fitted (four parameters), the inertia about the CoM held at ``inertia`` (default zero: a point mass), its
  inertia about the link origin following the fitted m and c (a fixed point: I_o = I_c + (|h|^2 1 - h h^T) / m);
  this is what static poses give (v = a = 0: the inertia's columns vanish, rank 4).  If mass and CoM are not
  determined either (a single pose; a body with too few joints above it), a ValueError says so.
- Physically consistent: the payload's pseudo-inertia J(pi) >= 0 (controllers.adaptive.pseudo_inertia).  When the
  weighted fit is not, consistent.consistent_fit finds the nearest consistent pi in the fit's own chi^2 (log-
  Cholesky coordinates; a ten-parameter problem here).  The standard deviations are the unconstrained fit's.  A
  fitted mass <= 0 is refused (a ValueError: the data show no payload).
- The excitation's condition number: of the weighted stacked regressor of the fitted parameters, its columns
  scaled to unit norm.

Written as: a URDF fixed link (PayloadIdentification.urdf_link, write_payload_urdf), a YAML or JSON file
(save_payload), the adaptive controller's starting estimate (PayloadIdentification.starting_estimate: the robot's
parameters with the payload added to its body, controllers.with_payload).
"""
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.linalg

from ..controllers.simulator import with_payload
from ..spatial import PARAMETER_NAMES, inertia_matrix, parameters_from_inertial, transform_parameters
from ..urdf import inertial_values, inertial_xml, is_xacro, parse_urdf
from .consistent import consistent_fit, is_consistent, prior_metric
from .estimate import in_memory_arrays
from .least_squares import NormalEquations, gautier_weights, sums
from .logs import parameter_dumper, coordinate_names

REFERENCE_MASS = 1.0        # kg  } the scale of "identified": a direction of pi whose standard deviation exceeds
REFERENCE_LENGTH = 0.1      # m   } that of this mass at this distance is not (module docstring)
SINGULAR = 1e-13            # reciprocal condition number of the column-scaled normal matrix deemed singular
FIXED_POINT = 50            # iterations at most of the mass-and-CoM fit's inertia about the origin, until
SETTLED = 1e-12             # it changes by less than this relative to the largest parameter
BLOCK = 4096                # samples per regressor block
MASS_AND_COM = np.arange(4)
INERTIA = np.arange(4, 10)
_SCALE = REFERENCE_MASS * REFERENCE_LENGTH ** np.array([0, 1, 1, 1, 2, 2, 2, 2, 2, 2], dtype=float)
_INERTIA_KEYS = (("ixx", (0, 0)), ("iyy", (1, 1)), ("izz", (2, 2)), ("ixy", (0, 1)), ("ixz", (0, 2)),
                 ("iyz", (1, 2)))


@dataclass
class PayloadIdentification:
    """Result of identify_payload(), in the frame of the link ``frame`` (module docstring).

    body: the robot's body carrying the payload; frame: the link whose frame the results are in (the body's own
    link when a body was named); parameters: (10,) pi = [m, m c, Ixx, Iyy, Izz, Ixy, Ixz, Iyz] about the frame's
    origin; covariance: (10, 10) of the weighted fit (nan in the rows and columns of parameters not identified);
    identified: (10,) bool; condition: of the column-scaled stacked regressor of the identified parameters;
    residual_rms: (nv,) RMS of tau - ID - tau_f - Y_k pi per joint (from the normal equations, as identify()'s:
    on exact data it shows the rounding of sum tau^2, ~1e-8 of the torques); n_samples: samples used; weights:
    (nv,) the joints' weights (zero for joints that do not carry the payload); constrained: whether the
    consistency constraint was active (the weighted fit was not physical).
    """

    body: str
    frame: str
    parameters: np.ndarray
    covariance: np.ndarray
    identified: np.ndarray
    condition: float
    residual_rms: np.ndarray
    n_samples: int
    weights: np.ndarray
    constrained: bool = False

    @property
    def mass(self):
        """m (kg)."""
        return float(self.parameters[0])

    @property
    def com(self):
        """c (3,) in the frame (m)."""
        return self.parameters[1:4] / self.parameters[0]

    @property
    def inertia(self):
        """(3, 3) rotational inertia about the CoM, in the frame's axes (kg m^2): I_o - m (|c|^2 1 - c c^T)."""
        return _inertia_about_com(self.parameters)

    @property
    def std(self):
        """(10,) standard deviations of parameters (nan where not identified)."""
        return np.sqrt(np.diag(self.covariance))

    @property
    def mass_std(self):
        return float(self.std[0])

    @property
    def com_std(self):
        """(3,) standard deviations of com, to first order."""
        D = _com_jacobian(self.parameters)                       # c depends on m and h = m c alone
        C = self.covariance[:4, :4]
        return np.sqrt(np.diag(D @ C @ D.T))

    @property
    def inertia_std(self):
        """(3, 3) standard deviations of inertia's entries, to first order (nan when not identified)."""
        if not self.identified.all():
            return np.full((3, 3), np.nan)
        D = _inertia_jacobian(self.parameters)
        s = np.sqrt(np.diag(D @ self.covariance @ D.T))
        return inertia_matrix(np.concatenate([np.zeros(4), s]))

    @property
    def rank(self):
        """How many of the ten parameters the data determine: 10, or 4 (mass and CoM)."""
        return int(self.identified.sum())

    @property
    def not_identified(self):
        """Names (spatial.PARAMETER_NAMES) of the parameters the data do not determine."""
        return [name for name, known in zip(PARAMETER_NAMES, self.identified) if not known]

    def body_parameters(self, robot):
        """pi (10,) of the payload about its body's origin, in the body's axes (paper 002, eq. (9))."""
        frame = _frame(robot, self.frame)
        return transform_parameters(self.parameters, frame.R, frame.p)

    def added_to(self, robot):
        """The robot with the payload rigidly added to its body (controllers.with_payload)."""
        frame = _frame(robot, self.frame)
        return with_payload(robot, self.body, self.mass, frame.R @ self.com + frame.p,
                            frame.R @ self.inertia @ frame.R.T)

    def starting_estimate(self, robot):
        """(10 nb,) the adaptive controller's starting estimate pi_hat0: the robot's parameters with the payload
        added to its body (RelativeGains().slotine_li(robot, pi_hat0, q0); logs.save_ros_parameters writes it as
        adaptive_controller_node's initial_parameters)."""
        return np.array(self.added_to(robot).parameters)

    def urdf_link(self, name="payload"):
        """The payload as URDF text: a <link> with its <inertial> (origin at the CoM, inertia about it) and a
        <joint type="fixed"> to the frame's link, to append inside <robot> (written as urdf.rewrite_inertials
        writes a link's <inertial>)."""
        inertial = inertial_xml(*inertial_values(name, self.parameters), "    ", "      ", "\n")
        return (f'  <link name="{name}">\n    {inertial}\n  </link>\n'
                f'  <joint name="{name}_joint" type="fixed">\n    <parent link="{self.frame}"/>\n'
                f'    <child link="{name}"/>\n    <origin xyz="0 0 0" rpy="0 0 0"/>\n  </joint>\n')


def identify_payload(robot, q, v=None, a=None, tau=None, body=None, *, t=None, cutoff=None, inertia=None):
    """The payload on ``body`` that explains what the robot's own model does not of the logged torques (module
    docstring).

    robot: the model without the payload (parameters and drives trusted); q: (N, nq); v, a: (N, nv), or both None:
    from q by signals.derivatives(t, q, cutoff), only the samples beyond 2 / cutoff of either end used (as
    identify()); static poses: v = a = 0; tau: (N, nv) measured joint torques; body: a body name or the name of a
    link fixed to one (robot.frame_names): the results are in that link's frame; t: (N,) s; cutoff: Hz of the
    derivative filter (default 10 Hz); inertia: (3, 3) about the CoM, the value held when the data do not
    determine the inertia (default zero).
    -> PayloadIdentification
    """
    frame = _frame(robot, body)
    prior = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
    if prior.shape != (3, 3) or not np.all(np.isfinite(prior)) or not np.allclose(prior, prior.T):
        raise ValueError(f"inertia must be a finite symmetric (3, 3) matrix, got {prior!r}")
    if not is_consistent(parameters_from_inertial(1.0, np.zeros(3), prior), 1e-12 * max(np.abs(prior).max(), 1)):
        raise ValueError(f"inertia {prior.tolist()} is not the inertia of a body (not PSD, or I1 + I2 < I3)")
    q, v, a, tau = in_memory_arrays(robot, q, v, a, tau, t, cutoff)
    T = np.stack([transform_parameters(e, frame.R, frame.p) for e in np.eye(10)], axis=1)   # pi_k = T pi_link
    k = frame.body
    total = NormalEquations.zeros(robot.nv, 10)
    for s in range(0, len(q), BLOCK):
        block = slice(s, s + BLOCK)
        r = tau[block] - robot.inverse_dynamics(q[block], v[block], a[block]) - robot.friction_torque(v[block])
        total = total + sums(robot.regressor(q[block], v[block], v[block], a[block])[..., 10 * k:10 * k + 10] @ T, r)
    seen = np.einsum("jii->j", total.G) > 0                     # the joints that carry the payload
    if not seen.any():
        raise ValueError(f"no joint moves '{body}': a payload there exerts no torque the robot measures")
    fit = _weighted_fit(total, seen)
    identified = fit is not None and _determined(fit, np.arange(10))
    if identified:
        pi, A, sigma2, w = fit
        columns = np.arange(10)
    else:
        pi, A, sigma2, w = _mass_and_com(total, seen, prior, body)
        columns = MASS_AND_COM
    if pi[0] <= 0:
        std = np.sqrt(sigma2 * np.linalg.inv(A)[0, 0])
        raise ValueError(f"the identified payload mass is {pi[0]:.3g} kg (std {std:.2g}): the data show no payload "
                         f"on '{body}'")
    covariance = np.full((10, 10), np.nan)
    covariance[np.ix_(columns, columns)] = sigma2 * np.linalg.inv(A)
    constrained = identified and not is_consistent(pi)
    if constrained:
        R = scipy.linalg.cholesky(A) / np.sqrt(sigma2)         # chi^2(pi) - chi^2_min = |R (pi - pi_wls)|^2
        pi = consistent_fit(R, np.eye(10), pi, 1, pi, prior_metric(pi), 0.0, [pi])
    e = _residuals(total, pi)
    known = np.zeros(10, dtype=bool)
    known[columns] = True
    return PayloadIdentification(body=robot.body_names[k], frame=body, parameters=pi,
                                 covariance=covariance, identified=known, condition=_condition(A),
                                 residual_rms=np.sqrt(e / total.n), n_samples=int(total.n), weights=w,
                                 constrained=constrained)


def _frame(robot, body):
    """The frame (model.Frame: body, R, p) of a body or link name."""
    if body is None:
        raise ValueError("body is required: the name of the body (or of a link fixed to it) carrying the payload")
    frames = robot.model.frames
    if not isinstance(body, str) or body not in frames:
        raise ValueError(f"body {body!r} is not a link of '{robot.model.name}' (bodies: "
                         f"{', '.join(robot.body_names)}; every link: robot.frame_names)")
    frame = frames[body]
    if frame.body < 0:
        raise ValueError(f"link '{body}' is fixed to the world: a payload there exerts no torque the joints measure")
    return frame


def _shifted(ne, columns, pi_fixed):
    """The normal equations of the columns given, the others' contribution Y_F pi_F taken off the torques:
    G_AA, b_A - G_AF pi_F, c - 2 pi_F^T b_F + pi_F^T G_FF pi_F.  -> NormalEquations"""
    fixed = np.setdiff1d(np.arange(ne.G.shape[-1]), columns)
    x = pi_fixed[fixed]
    G_AF = ne.G[:, columns[:, None], fixed]
    G_FF = ne.G[:, fixed[:, None], fixed]
    return NormalEquations(ne.G[:, columns[:, None], columns], ne.b[:, columns] - G_AF @ x,
                           ne.c - 2 * ne.b[:, fixed] @ x + np.einsum("i,jik,k->j", x, G_FF, x), ne.n)


def _residuals(ne, pi):
    """|r_j|^2 = pi^T G_j pi - 2 pi^T b_j + c_j per joint (>= 0).  -> (nv,)"""
    return np.maximum(np.einsum("i,jik,k->j", pi, ne.G, pi) - 2 * ne.b @ pi + ne.c, 0.0)


def _weighted_fit(ne, seen):
    """Gautier's weighted least squares on the joints seen (ordinary fit, then each joint weighted by 1 / its
    residual variance: least_squares.gautier_weights) of the p parameters ne holds.  None when the column-scaled
    normal matrix is singular (or the samples too few).  -> (pi (p,), A = sum_j w_j G_j (p, p), sigma^2, w (nv,))
    or None"""
    p, n, n_j = ne.G.shape[-1], ne.n, int(seen.sum())
    if n * n_j <= p:
        return None
    ordinary = _solve(ne, seen.astype(float))
    if ordinary is None:
        return None
    w = gautier_weights(_residuals(ne, ordinary[0]), ne.c, n, p, seen)
    weighted = _solve(ne, w)
    if weighted is None:
        return None
    pi, A = weighted
    sigma2 = max(float(w @ _residuals(ne, pi)) / (n * n_j - p), 1e-300)
    return pi, A, sigma2, w


def _solve(ne, w):
    """pi minimizing sum_j w_j |Y_j pi - tau_j|^2, by Cholesky of the column-scaled normal matrix; None when that
    is singular.  -> (pi (p,), A = sum_j w_j G_j (p, p)) or None"""
    A = np.einsum("j,jik->ik", w, ne.G)
    d = np.sqrt(np.diag(A))
    if np.any(d == 0):
        return None
    As = A / np.outer(d, d)
    s = np.linalg.eigvalsh(As)
    if s[0] <= SINGULAR * s[-1]:
        return None
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(As), (w @ ne.b) / d) / d, A


def _determined(fit, columns):
    """Every direction of the fitted parameters, in units of the reference payload, has a standard deviation of at
    most 1 (module docstring)."""
    _, A, sigma2, _ = fit
    s = _SCALE[columns]
    return bool(np.linalg.eigvalsh(A * np.outer(s, s))[0] >= sigma2)   # not A / sigma2: exact data give 1e-300


def _mass_and_com(ne, seen, prior, body):
    """m and h = m c by weighted least squares, the inertia about the CoM held at prior: its inertia about the
    origin I_o = prior + (|h|^2 1 - h h^T) / m follows the fit (a fixed point; exact for static poses, where the
    inertia's columns vanish).  -> (pi (10,), A (4, 4), sigma^2, w)"""
    pi = parameters_from_inertial(0.0, np.zeros(3), prior)
    for _ in range(FIXED_POINT):
        fit = _weighted_fit(_shifted(ne, MASS_AND_COM, pi), seen)
        if fit is None or not _determined(fit, MASS_AND_COM):
            raise ValueError(f"the data do not determine the mass and CoM of a payload on '{body}': hold the robot "
                             f"in poses that turn the link several ways, or move it (an excitation trajectory)")
        h_pi, A, sigma2, w = fit
        if h_pi[0] <= 0:
            return np.concatenate([h_pi, pi[4:]]), A, sigma2, w
        previous, pi = pi, parameters_from_inertial(h_pi[0], h_pi[1:] / h_pi[0], prior)
        if np.all(np.abs(pi - previous) <= SETTLED * np.abs(pi).max()):
            break
    else:
        warnings.warn(f"the payload's mass and CoM did not settle in {FIXED_POINT} iterations", stacklevel=3)
    return pi, A, sigma2, w


def _inertia_about_com(pi):
    """I_c = I_o - (|h|^2 1 - h h^T) / m (parallel axes).  -> (3, 3)"""
    m, h = pi[0], pi[1:4]
    return inertia_matrix(pi) - (h @ h * np.eye(3) - np.outer(h, h)) / m


def _com_jacobian(pi):
    """d c / d (m, h) (3, 4) of c = h / m."""
    m, h = pi[0], pi[1:4]
    D = np.zeros((3, 4))
    D[:, 0] = -h / m**2
    D[:, 1:4] = np.eye(3) / m
    return D


def _inertia_jacobian(pi):
    """d I_c / d pi (6, 10), I_c's entries in the order xx, yy, zz, xy, xz, yz (I_c = I_o - S(h) / m, S(h) =
    |h|^2 1 - h h^T)."""
    m, h = pi[0], pi[1:4]
    rows = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)]
    S = h @ h * np.eye(3) - np.outer(h, h)
    D = np.zeros((6, 10))
    D[:, 4:] = np.eye(6)
    for r, (i, j) in enumerate(rows):
        D[r, 0] = S[i, j] / m**2
        for l in range(3):                                      # d S_ij / d h_l = 2 h_l d_ij - d_il h_j - h_i d_jl
            D[r, 1 + l] = -(2 * h[l] * (i == j) - (i == l) * h[j] - h[i] * (j == l)) / m
    return D


def _condition(A):
    """Condition number of the column-scaled stacked regressor from its normal matrix A."""
    d = np.sqrt(np.diag(A))
    s = np.linalg.eigvalsh(A / np.outer(d, d))
    return float(np.sqrt(s[-1] / s[0])) if s[0] > 0 else float("inf")


# --- writers ------------------------------------------------------------------------------------------------------

def write_payload_urdf(urdf_path, out_path, result, name="payload"):
    """Write to ``out_path`` the URDF ``urdf_path`` with the payload appended as a link ``name`` fixed to the
    result's frame (PayloadIdentification.urdf_link), inserted before </robot>; every other character unchanged.
    Loaded, its body carries the robot's parameters plus the payload.  ValueError when the URDF has no such frame
    or already a link or joint of that name, or is a xacro file."""
    urdf_path = Path(urdf_path)
    if is_xacro(os.fspath(urdf_path)):
        raise ValueError(f"'{urdf_path}' is a xacro file: expand it first (xacro {urdf_path.name} > robot.urdf)")
    text = urdf_path.read_bytes().decode("utf-8")
    description = parse_urdf(text)
    if result.frame not in description.links:
        raise ValueError(f"'{urdf_path}' has no link '{result.frame}', the payload's frame")
    taken = [n for n in (name, f"{name}_joint") if n in description.links or n in description.joints]
    if taken:
        raise ValueError(f"'{urdf_path}' already has a link or joint '{taken[0]}': give the payload another name")
    end = text.rfind("</robot>")
    Path(out_path).write_bytes((text[:end] + result.urdf_link(name) + text[end:]).encode("utf-8"))


def save_payload(path, result, robot=None):
    """Write the payload to ``path``, YAML (.yaml, .yml) or JSON (.json): body, frame, mass, com, inertia (about the
    CoM, frame axes: ixx .. iyz), their standard deviations (null where not identified), parameters (about the
    frame's origin, spatial.PARAMETER_NAMES) and their stds, not_identified, and the identification's condition
    number, samples and residual RMS per joint (named with robot, else numbered)."""
    path = Path(path)
    dump = parameter_dumper(path)
    I, I_std = result.inertia, result.inertia_std
    names = coordinate_names(robot) if robot is not None else [str(j) for j in range(len(result.residual_rms))]
    document = {
        "body": result.body, "frame": result.frame,
        "mass": result.mass, "mass_std": _number(result.mass_std),
        "com": [float(x) for x in result.com], "com_std": [_number(x) for x in result.com_std],
        "inertia": {key: float(I[i, j]) for key, (i, j) in _INERTIA_KEYS},
        "inertia_std": {key: _number(I_std[i, j]) for key, (i, j) in _INERTIA_KEYS},
        "parameters": dict(zip(PARAMETER_NAMES, map(float, result.parameters))),
        "parameters_std": dict(zip(PARAMETER_NAMES, map(_number, result.std))),
        "not_identified": result.not_identified,
        "identification": {"condition": float(result.condition), "n_samples": int(result.n_samples),
                           "constrained": bool(result.constrained),
                           "residual_rms": dict(zip(names, map(float, result.residual_rms)))}}
    with open(path, "w") as file:
        dump(document, file)


def _number(x):
    """A float, or None for nan (JSON has no nan)."""
    return None if np.isnan(x) else float(x)
