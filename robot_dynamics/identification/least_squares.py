"""Least squares on the inertial parameters from data: the stacked regressor tau = Y(q, v, v, a) pi (paper 002,
eq. (16) with v_r = v, a_r = a), friction columns, and the per-joint normal equations that every solver here and the
Dask route (scale_out.py) share.

Per-joint normal equations are what make one pass over the data enough for ordinary and weighted least squares
alike: with G_j = sum_t Y_j(t)^T Y_j(t), b_j = sum_t Y_j(t)^T tau_j(t), c_j = sum_t tau_j(t)^2 (Y_j the row of
joint j), the weighted problem with one weight w_j per joint is

    min_pi  sum_j w_j |Y_j pi - tau_j|^2  =  pi^T (sum_j w_j G_j) pi - 2 pi^T (sum_j w_j b_j) + sum_j w_j c_j,

so the weights (Gautier's 1 / sigma_j^2, from the ordinary fit's residual per joint) are applied after the pass.
"""
from typing import NamedTuple

import numpy as np


class NormalEquations(NamedTuple):
    """Per-joint normal equations of tau = Y theta over n samples; p = 10 nbodies (+ 2 n_friction with friction).

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
    return np.arange(6 if robot.floating_base else 0, robot.nv)


def friction_names(robot):
    """A name per friction joint coordinate (friction_joints' order): the joint's name, "<joint>[k]" for a joint
    of several coordinates."""
    names = []
    for joint in robot.model.joints:
        if joint.mimic is None and not (robot.floating_base and joint.idx_v < 6):
            names += [joint.name] if joint.nv == 1 else [f"{joint.name}[{k}]" for k in range(joint.nv)]
    return names


def friction_columns(robot, v):
    """Friction regressor: tau_f = F_v v_j + F_c sign(v_j) per joint, as extra columns after the 10 nbodies.

    v: (N, nv)  ->  (N, nv, 2 n_f), columns [F_v of each friction joint..., F_c of each friction joint...].
    """
    joints = friction_joints(robot)
    n_f = len(joints)
    Yf = np.zeros(v.shape[:-1] + (robot.nv, 2 * n_f))
    i = np.arange(n_f)
    Yf[..., joints, i] = v[..., joints]
    Yf[..., joints, n_f + i] = np.sign(v[..., joints])
    return Yf


def stacked_regressor(robot, q, v, a, friction=False):
    """Y(q, v, v, a) of every sample, so that tau = Y theta (paper 002, eq. (16) with v_r = v, a_r = a).

    q: (N, nq), v, a: (N, nv)  ->  (N, nv, p) with p = 10 nbodies, + 2 n_f friction columns when friction.
    """
    q, v, a = (np.ascontiguousarray(x, dtype=float) for x in (q, v, a))
    Y = robot.regressor(q, v, v, a)
    return np.concatenate([Y, friction_columns(robot, v)], axis=-1) if friction else Y


def normal_equations(robot, q, v, a, tau, friction=False, block=4096, progress=None):
    """Per-joint normal equations of the samples (q, v, a, tau), built block by block (memory bounded by block).

    q: (N, nq), v, a, tau: (N, nv); progress: None or callable(samples_done, samples_total), called after each
    block.  ->  NormalEquations.
    """
    p = 10 * robot.nbodies + (2 * len(friction_joints(robot)) if friction else 0)
    total = NormalEquations.zeros(robot.nv, p)
    for s in range(0, len(q), block):
        Y = stacked_regressor(robot, q[s:s + block], v[s:s + block], a[s:s + block], friction)
        t = np.asarray(tau[s:s + block], dtype=float)
        Yj = np.ascontiguousarray(Y.transpose(1, 0, 2))         # (nv, B, p): joint j's rows Y_j, one block
        total = total + NormalEquations(np.matmul(Yj.transpose(0, 2, 1), Yj),       # sum_t Y_j^T Y_j (BLAS; an
                                        np.einsum("jti,tj->ji", Yj, t),             # einsum here ran 25x slower)
                                        np.einsum("tj,tj->j", t, t), len(t))
        if progress is not None:
            progress(total.n, len(q))
    return total
