"""Least squares on the inertial parameters from data: the stacked regressor tau = Y(q, v, v, a) pi (paper 002,
eq. (16) with v_r = v, a_r = a), the drives' columns (armature, friction: friction.drive_regressor), and the
per-joint normal equations that every solver here and the Dask route (scale_out.py) share.

Per-joint normal equations are what make one pass over the data enough for ordinary and weighted least squares
alike: with G_j = sum_t Y_j(t)^T Y_j(t), b_j = sum_t Y_j(t)^T tau_j(t), c_j = sum_t tau_j(t)^2 (Y_j the row of
joint j), the weighted problem with one weight w_j per joint is

    min_pi  sum_j w_j |Y_j pi - tau_j|^2  =  pi^T (sum_j w_j G_j) pi - 2 pi^T (sum_j w_j b_j) + sum_j w_j c_j,

so the weights (Gautier's 1 / sigma_j^2, from the ordinary fit's residual per joint) are applied after the pass.
"""
from typing import NamedTuple

import numpy as np

from ..friction import MODELS, drive_regressor, model_class, moving_coordinates

NOISE_FLOOR = 1e-12         # sigma_j^2 >= NOISE_FLOOR * mean_j(c_j / n): exact (simulated) data get finite weights
FRICTION_MODELS = ("none", *MODELS)     # the friction models by name (friction.py), "none" for no friction


class NormalEquations(NamedTuple):
    """Per-joint normal equations of tau = Y theta over n samples; p = 10 nbodies (+ the drives' columns).

    G: (nv, p, p) sum_t Y_j^T Y_j,  b: (nv, p) sum_t Y_j^T tau_j,  c: (nv,) sum_t tau_j^2,  n: samples summed.
    """
    G: np.ndarray
    b: np.ndarray
    c: np.ndarray
    n: int

    def __add__(self, other):
        """The normal equations of both data sets together (their sums add)."""
        return NormalEquations(self.G + other.G, self.b + other.b, self.c + other.c, self.n + other.n)

    @classmethod
    def zeros(cls, nv, p):
        """The normal equations of no data."""
        return cls(np.zeros((nv, p, p)), np.zeros((nv, p)), np.zeros(nv), 0)


def friction_joints(robot):
    """Velocity indices that carry joint friction: every joint coordinate, not the 6 of a floating base."""
    return moving_coordinates(robot)


def friction_names(robot):
    """A name per friction joint coordinate (friction_joints' order): the joint's name, "<joint>[k]" for a joint
    of several coordinates."""
    return [robot.coordinate_names[i] for i in moving_coordinates(robot)]


def friction_model(friction):
    """The friction model that identify()'s ``friction`` names: None for False, None or "none" (no friction),
    "coulomb" for True (viscous + Coulomb, the default), else the name, class or model object itself
    (friction.model_class checks it)."""
    if friction is True:
        return "coulomb"
    if friction is False or model_class(friction) is None:
        return None
    return friction


def drive_count(robot, friction=False, armature=False):
    """Columns of the drives after the 10 nbodies inertial ones: n_f armatures, k n_f friction coefficients."""
    cls = model_class(friction_model(friction))
    return len(moving_coordinates(robot)) * (bool(armature) + (len(cls.coefficients) if cls is not None else 0))


def friction_columns(robot, v):
    """Friction regressor: tau_f = F_v v_j + F_c sign(v_j) per joint, as extra columns after the 10 nbodies.

    v: (N, nv)  ->  (N, nv, 2 n_f), columns [F_v of each friction joint..., F_c of each friction joint...].
    """
    return drive_regressor(robot, v, armature=False, model="coulomb")


def stacked_regressor(robot, q, v, a, friction=False, armature=False):
    """Y(q, v, v, a) of every sample, so that tau = Y theta (paper 002, eq. (16) with v_r = v, a_r = a), with the
    drives' columns after the inertial ones (friction.drive_regressor, the sign exact): the armatures when
    armature, the friction model's linear coefficients when friction (True: viscous + Coulomb; a name, class or
    model object of friction.py; a nonlinear model as an object, whose nonlinear parameters shape its columns).

    q: (N, nq), v, a: (N, nv)  ->  (N, nv, p) with p = 10 nbodies + drive_count(robot, friction, armature).
    """
    q, v, a = (np.ascontiguousarray(x, dtype=float) for x in (q, v, a))
    Y = robot.regressor(q, v, v, a)
    model = friction_model(friction)
    if model is None and not armature:
        return Y
    return np.concatenate([Y, drive_regressor(robot, v, a, armature=armature, model=model)], axis=-1)


def gautier_weights(e, c, n, unknowns, joints=None):
    """The weights w_j = 1 / sigma_j^2 of weighted least squares (Gautier, "Dynamic identification of robots with
    power model", ICRA 1997): each joint's residual variance sigma_j^2 = |r_j|^2 / (n - unknowns / n_j) from the
    ordinary fit, the stacked system's n n_j - unknowns degrees of freedom shared evenly by the n_j joints counted,
    so that each joint counts by its own noise and not by its torque's units or size.  sigma_j^2 is held above
    NOISE_FLOOR * mean_j(c_j) / n, so that exact (simulated) data get finite weights.

    e: (nv,) |r_j|^2 of the ordinary fit; c: (nv,) sum_t tau_j(t)^2 (NormalEquations.c); n: samples; unknowns:
    parameters fitted; joints: (nv,) bool, the joints counted (default all; the mean of c over them alone).
    -> w (nv,), 0 for a joint not counted"""
    counted = np.ones(len(e), dtype=bool) if joints is None else np.asarray(joints, dtype=bool)
    sigma2 = e / (n - unknowns / counted.sum())
    return counted / np.maximum(sigma2, NOISE_FLOOR * np.mean(c[counted]) / n + 1e-300)


def sums(Y, tau):
    """The normal equations of the samples of one block: Y (B, nv, p), tau (B, nv)  ->  NormalEquations."""
    t = np.asarray(tau, dtype=float)
    Yj = np.ascontiguousarray(np.transpose(Y, (1, 0, 2)))         # (nv, B, p): joint j's rows Y_j
    return NormalEquations(np.matmul(Yj.transpose(0, 2, 1), Yj),  # sum_t Y_j^T Y_j (BLAS; an einsum here ran
                           np.einsum("jti,tj->ji", Yj, t),        # 25x slower)
                           np.einsum("tj,tj->j", t, t), len(t))


def known_drive_torque(robot, v, a, friction=False, armature=False):
    """The torque of the robot's own drives that is not being identified -- diag(armature) a unless armature,
    tau_f(v) (robot.friction_torque) unless a friction model is -- which the identification takes as known and
    subtracts from the logged torque (zero for a robot without drives).  v, a: (N, nv)  ->  (N, nv) or 0.0"""
    known = 0.0
    if not armature and robot.armature.any():
        known = robot.armature * a
    if friction_model(friction) is None and not robot.model.drives.frictionless:
        known = known + robot.friction_torque(v)
    return known


def normal_equations(robot, q, v, a, tau, friction=False, block=4096, progress=None, armature=False):
    """Per-joint normal equations of the samples (q, v, a, tau - known_drive_torque), built block by block (memory
    bounded by block).

    q: (N, nq), v, a, tau: (N, nv); friction, armature: the drives' columns (stacked_regressor); progress: None or
    callable(samples_done, samples_total), called after each block.  ->  NormalEquations.
    """
    p = 10 * robot.nbodies + drive_count(robot, friction, armature)
    total = NormalEquations.zeros(robot.nv, p)
    for s in range(0, len(q), block):
        Y = stacked_regressor(robot, q[s:s + block], v[s:s + block], a[s:s + block], friction, armature)
        known = known_drive_torque(robot, v[s:s + block], a[s:s + block], friction, armature)
        total = total + sums(Y, tau[s:s + block] - known)
        if progress is not None:
            progress(total.n, len(q))
    return total
