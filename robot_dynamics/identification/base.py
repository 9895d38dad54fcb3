"""Base parameters: the combinations of inertial parameters that the joint torques determine.

tau = Y(q, v, v, a) theta (paper 002, eq. (16) with v_r = v, a_r = a) does not determine every entry of theta:
some columns of Y vanish for every motion (a body's inertia about an axis it never turns about) and others are
fixed combinations of the rest (the mass of a distal link acts like a point mass at the joint of its parent).
The base parameters theta_b = K theta are the combinations that Y does determine, with

    Y(q, v, v, a) theta = Y_b(q, v, v, a) theta_b    for every state and every theta,   Y_b = Y[:, independent].

They are found numerically, as OpenSYMORO and SymPyBotics do (Gautier, "Numerical calculation of the base inertial
parameters of robots", J. Robotic Systems 8(4), 1991): the regressors of n random states (random q, v, a; a
random pose and twist for a floating base) stacked into W (n nv, p) and factored by QR with column pivoting,
W P = Q R.  The first r pivots (r: diagonal entries of R above a relative tolerance) are independent columns; the
others are combinations of them, W_d = W_i beta with beta = R_11^-1 R_12, so that

    W theta = W_i theta_i + W_d theta_d = W_i (theta_i + beta theta_d),    K = [1 | beta] (columns permuted back).

The drives' columns (friction.drive_regressor: an armature per joint coordinate, the linear coefficients of a
friction model) go through the same QR as the inertial ones, because some are not separable from them.  The
armature of the first joint of a fixed base is the clearest: link 1 turns about that fixed axis only, so its
inertia about the axis, a^T I_1 a (I_1 about the link's origin on the axis), enters the torques only as
(a^T I_1 a) qdd_1 in joint 1's row, which is exactly the armature's column: the data determine the sum
a^T I_1 a + Ia_1, and the QR makes it one base parameter ("Izz_link1 + Ia_joint1" for a z axis).  Likewise the
offset of a vertical prismatic joint is not separable from the masses it lifts (gravity is a constant torque
there).  What the data cannot separate, identify() holds at its prior (estimate.py).
"""
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..spatial import PARAMETER_NAMES
from ..friction import drive_column_names
from .least_squares import drive_count, friction_model, stacked_regressor

TOLERANCE = 1e-9         # relative to the largest |R_ii|: below it, a pivot is a dependent column
NOISE = 1e-12            # coefficients of K below this (relative to their row's largest, at least 1) are zero
SHOWN = 1e-6             # names omit coefficients below this and show those within it of +-1 as +- the name


@dataclass(frozen=True)
class BaseParameters:
    """The base-parameter map theta_b = K theta of a robot.

    independent: (r,) column indices of theta whose regressor columns span all the others; K: (r, p) with
    theta_b = K theta and Y theta = Y[..., independent] theta_b; names: (r,) readable combinations ("m_link3 +
    m_link4"); rank: r; p: number of columns, 10 nbodies (+ the drives' columns).
    """

    independent: np.ndarray
    K: np.ndarray
    names: list
    rank: int
    p: int

    def values(self, theta):
        """theta_b = K theta.  theta: (..., p)  ->  (..., r)"""
        return np.asarray(theta, dtype=float) @ self.K.T

    def regressor(self, Y):
        """Y_b = Y[..., independent], the base regressor: Y theta = Y_b theta_b.  (..., p) -> (..., r)"""
        return np.asarray(Y)[..., self.independent]


def column_names(robot, friction=False, armature=False):
    """Names of the columns of theta: "<parameter>_<body>" (spatial.PARAMETER_NAMES), then the drives' columns
    (friction.drive_column_names: "Ia_<joint>" of each armature, "Fv_<joint>", "Fc_<joint>", ... of each friction
    coefficient).  -> list of p strings"""
    names = [f"{x}_{body}" for body in robot.body_names for x in PARAMETER_NAMES]
    model = friction_model(friction)
    if model is not None or armature:
        names += drive_column_names(robot, armature=armature, model=model)
    return names


def random_states(robot, n_states, rng):
    """n random (q, v, a): valid configurations (robot.random_configuration) with standard normal v and a.

    -> q (n, nq), v (n, nv), a (n, nv)
    """
    q = np.array([robot.random_configuration(rng) for _ in range(n_states)])
    return q, rng.normal(size=(n_states, robot.nv)), rng.normal(size=(n_states, robot.nv))


def base_parameters(robot, n_states=None, rng=None, friction=False, tolerance=TOLERANCE, armature=False):
    """The base-parameter map of the robot by QR with column pivoting of regressors at random states (Gautier 1991;
    module docstring).

    n_states: random states stacked (default: enough for 4 rows per column, at least 50); rng: seed or Generator
    (None: a fixed seed, so that a robot always gets the same map); friction, armature: the drives' columns
    (least_squares.stacked_regressor); tolerance: relative rank tolerance on the diagonal of R.  -> BaseParameters
    """
    p = 10 * robot.nbodies + drive_count(robot, friction, armature)
    if n_states is None:
        n_states = max(50, -(-4 * p // robot.nv))
    if int(n_states) != n_states or n_states < 1:
        raise ValueError(f"n_states must be a positive integer, got {n_states!r}")
    if not 0 < tolerance < 1:
        raise ValueError(f"tolerance must be in (0, 1), got {tolerance!r}")
    rng = np.random.default_rng(0 if rng is None else rng)
    q, v, a = random_states(robot, int(n_states), rng)
    W = stacked_regressor(robot, q, v, a, friction, armature).reshape(-1, p)         # stacked Y, (n nv, p)
    _, R, P = scipy.linalg.qr(W, mode="economic", pivoting=True)                    # W P = Q R
    d = np.abs(np.diag(R))
    r = int(np.sum(d > tolerance * d[0])) if d[0] > 0 else 0
    beta = scipy.linalg.solve_triangular(R[:r, :r], R[:r, r:])                      # W_d = W_i beta
    scale = np.maximum(1.0, np.abs(beta).max(axis=1, initial=0.0))[:, None]
    beta = np.where(np.abs(beta) < NOISE * scale, 0.0, beta)                      # the QR's rounding, not geometry
    order = np.argsort(P[:r])                                                       # independent columns ascending
    independent, beta = P[:r][order], beta[order]
    K = np.zeros((r, p))
    K[np.arange(r), independent] = 1.0
    K[:, P[r:]] = beta
    names = column_names(robot, friction, armature)
    return BaseParameters(independent=independent, K=K, names=[_combination(row, i, names)
                                                               for row, i in zip(K, independent)],
                          rank=r, p=p)


def _combination(row, first, names):
    """A row of K as text, its independent column first: "Izz_link1 + 0.09 m_link2 - mcx_link3" (coefficients to
    4 significant digits; below SHOWN omitted, within SHOWN of +-1 shown as +- the name).  K itself is exact: a
    URDF's rpy="1.5708" makes true coefficients of 1e-6."""
    text = names[first]
    for i in np.flatnonzero(np.abs(row) >= SHOWN):
        if i != first:
            term = names[i] if abs(abs(row[i]) - 1) < SHOWN else f"{abs(row[i]):.4g} {names[i]}"
            text += f" {'-' if row[i] < 0 else '+'} {term}"
    return text
