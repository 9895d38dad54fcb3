"""Excitation trajectories: finite Fourier series whose stacked base regressor is well conditioned.

Swevers, Ganseman, Tukel, De Schutter & Van Brussel, "Optimal robot excitation and identification", IEEE T-RA
13(5), 1997: every coordinate i follows

    x_i(t) = x0_i + sum_{l=1..L} a_il / (w_f l) sin(w_f l t) - b_il / (w_f l) cos(w_f l t),
    xdot_i(t) = sum_l a_il cos(w_f l t) + b_il sin(w_f l t),
    xddot_i(t) = sum_l -a_il w_f l sin(w_f l t) + b_il w_f l cos(w_f l t),

periodic with period 2 pi / w_f (a log may average its periods; its spectrum is known, so the derivative filter's
cutoff can sit well above it). The coefficients minimize log cond(Y_b) of the base regressor (base.py) stacked at
the n_samples instants k T / n_samples (k = 0 .. n_samples - 1) of a period T (scipy.optimize.minimize, L-BFGS-B
with finite-difference gradients, from random coefficients of the given rng: deterministic); cond from the
eigenvalues of Y_b^T Y_b (accurate to eps cond^2, ample below cond 1e6). Limits are kept by construction: each
coordinate's series is scaled down (never up) until it stays within MARGIN of its position half-range about x0 (the
middle of its limits) and of its velocity limit, checked on a grid of DENSE points per period of the highest
harmonic. Accelerations and torques are not limited (scale the base frequency down if the drives cannot follow).

Defaults where a limit is absent (limits None, or inf in it): +-pi/2 rad about zero and 2 rad/s for revolute and
continuous joints, +-0.05 m and 0.1 m/s for prismatic ones.  A floating base moves too: its coordinates are
[x, y, z, roll, pitch, yaw] of the base in the world (URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll)), each a Fourier
series (defaults +-0.05 m, 0.1 m/s, +-0.2 rad, 0.5 rad/s about the neutral pose), mapped to Pinocchio's q =
[x, y, z, qx, qy, qz, qw, joints] and v = [R^T pdot, omega (base frame), joints].  Such a motion needs the base
to be moved by something that measures the wrench it applies (a force-torque sensor under a robot on a moving
platform, or a simulation); a legged robot in the field excites its base through its contacts instead.
"""
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from .base import base_parameters

MARGIN = 0.95               # the trajectory uses at most this share of each position half-range and velocity limit
DENSE = 20                  # limit-check points per period of the highest harmonic
DEFAULTS = {"revolute": (np.pi / 2, 2.0), "continuous": (np.pi / 2, 2.0), "prismatic": (0.05, 0.1)}
BASE_DEFAULTS = ((0.05, 0.1),) * 3 + ((0.2, 0.5),) * 3          # (half-range, velocity) of x, y, z, roll, pitch, yaw


@dataclass
class FourierTrajectory:
    """x(t) = x0 + sum_l a_l / (w_f l) sin(w_f l t) - b_l / (w_f l) cos(w_f l t) per coordinate (module docstring).

    x0: (n,) offsets; a, b: (n, L) coefficients (rad/s or m/s); w_f: fundamental (rad/s); floating_base: the first
    six coordinates are the base's [x, y, z, roll, pitch, yaw]; condition: cond of the stacked base regressor at
    the optimization's samples (nan if not computed); initial_condition: the same for the initial guess;
    duration: s, of the log it is meant for (default: one period).
    """

    x0: np.ndarray
    a: np.ndarray
    b: np.ndarray
    w_f: float
    floating_base: bool = False
    condition: float = float("nan")
    initial_condition: float = float("nan")
    duration: float = float("nan")

    def __post_init__(self):
        self.x0, self.a, self.b = (np.asarray(x, dtype=float) for x in (self.x0, self.a, self.b))
        n = len(self.x0)
        if self.x0.shape != (n,) or self.a.ndim != 2 or self.a.shape[0] != n or self.b.shape != self.a.shape:
            raise ValueError(f"FourierTrajectory: x0 must be (n,) and a, b (n, L), got {self.x0.shape}, "
                             f"{self.a.shape}, {self.b.shape}")
        if not (np.isfinite(self.w_f) and self.w_f > 0):
            raise ValueError(f"FourierTrajectory: w_f must be positive, got {self.w_f!r}")
        if not np.isfinite(self.duration):
            self.duration = self.period

    @property
    def period(self):
        """2 pi / w_f (s)."""
        return 2 * np.pi / self.w_f

    def coordinates(self, t):
        """x, xdot, xddot (N, n) of the Fourier coordinates at times t (N,) (module docstring)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if t.ndim != 1 or not np.all(np.isfinite(t)):
            raise ValueError(f"t must be a finite 1-D array of times, got shape {t.shape}")
        wl = self.w_f * np.arange(1, self.a.shape[1] + 1)                  # w_f l, (L,)
        S, C = np.sin(np.outer(t, wl)), np.cos(np.outer(t, wl))            # (N, L)
        x = self.x0 + S @ (self.a / wl).T - C @ (self.b / wl).T
        return x, C @ self.a.T + S @ self.b.T, -S @ (self.a * wl).T + C @ (self.b * wl).T

    def sample(self, t):
        """q (N, nq), v (N, nv), a (N, nv) at times t (N,): for a floating base, q = [p, quaternion (x, y, z, w),
        joints], v = [R^T pdot, omega; joints] (base frame) and a = d/dt v (module docstring)."""
        x, xd, xdd = self.coordinates(t)
        if not self.floating_base:
            return x, xd, xdd
        return _free_flyer(x, xd, xdd)

    def save(self, path):
        """Write the trajectory to an .npz file (its fields as arrays)."""
        np.savez(path, x0=self.x0, a=self.a, b=self.b, w_f=self.w_f, floating_base=self.floating_base,
                 condition=self.condition, initial_condition=self.initial_condition, duration=self.duration)

    @classmethod
    def load(cls, path):
        """The trajectory saved by ``save``."""
        with np.load(path) as f:
            missing = {"x0", "a", "b", "w_f"} - set(f.files)
            if missing:
                raise ValueError(f"{path}: not a FourierTrajectory file, no {sorted(missing)}")
            optional = {k: (bool if k == "floating_base" else float)(f[k])
                        for k in ("floating_base", "condition", "initial_condition", "duration") if k in f.files}
            return cls(x0=f["x0"], a=f["a"], b=f["b"], w_f=float(f["w_f"]), **optional)


def _free_flyer(x, xd, xdd):
    """Fourier coordinates [p, rpy, joints] with their derivatives -> Pinocchio free-flyer q, v, a (N, .)."""
    p, rpy, pd, rpyd, pdd, rpydd = x[:, :3], x[:, 3:6], xd[:, :3], xd[:, 3:6], xdd[:, :3], xdd[:, 3:6]
    r, pi_, y = rpy.T
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(pi_), np.sin(pi_), np.cos(y), np.sin(y)
    R = np.empty((len(x), 3, 3))                                          # Rz(yaw) Ry(pitch) Rx(roll)
    R[:, 0] = np.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], -1)
    R[:, 1] = np.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], -1)
    R[:, 2] = np.stack([-sp, cp * sr, cp * cr], -1)
    h = 0.5 * rpy
    c2, s2 = np.cos(h), np.sin(h)
    quat = np.stack([s2[:, 0] * c2[:, 1] * c2[:, 2] - c2[:, 0] * s2[:, 1] * s2[:, 2],
                     c2[:, 0] * s2[:, 1] * c2[:, 2] + s2[:, 0] * c2[:, 1] * s2[:, 2],
                     c2[:, 0] * c2[:, 1] * s2[:, 2] - s2[:, 0] * s2[:, 1] * c2[:, 2],
                     c2[:, 0] * c2[:, 1] * c2[:, 2] + s2[:, 0] * s2[:, 1] * s2[:, 2]], -1)
    # omega (base frame) = E(rpy) rpydot, E = [[1, 0, -sp], [0, cr, sr cp], [0, -sr, cr cp]]; omegadot = E rpyddot
    # + Edot rpydot
    rd, pd_, yd = rpyd.T
    E = np.zeros((len(x), 3, 3))
    E[:, 0, 0], E[:, 0, 2] = 1.0, -sp
    E[:, 1, 1], E[:, 1, 2] = cr, sr * cp
    E[:, 2, 1], E[:, 2, 2] = -sr, cr * cp
    Ed = np.zeros_like(E)
    Ed[:, 0, 2] = -cp * pd_
    Ed[:, 1, 1], Ed[:, 1, 2] = -sr * rd, cr * cp * rd - sr * sp * pd_
    Ed[:, 2, 1], Ed[:, 2, 2] = -cr * rd, -sr * cp * rd - cr * sp * pd_
    w = np.einsum("nij,nj->ni", E, rpyd)
    wd = np.einsum("nij,nj->ni", E, rpydd) + np.einsum("nij,nj->ni", Ed, rpyd)
    u = np.einsum("nji,nj->ni", R, pd)                                    # R^T pdot
    ud = np.einsum("nji,nj->ni", R, pdd) - np.cross(w, u)                 # d/dt (R^T pdot) = R^T pddot - w x u
    q = np.concatenate([p, quat, x[:, 6:]], axis=1)
    return q, np.concatenate([u, w, xd[:, 6:]], axis=1), np.concatenate([ud, wd, xdd[:, 6:]], axis=1)


def coordinate_limits(robot, limits=None):
    """(center, half_range, velocity) (n,) of each Fourier coordinate (module docstring for the defaults).

    limits: None or a Limits-like object with lower, upper, velocity arrays over the robot's velocity
    coordinates (nv, or nv - 6 joints only for a floating base), inf where absent.
    """
    types = []
    for j in robot.model.joints:
        if j.mimic is not None:
            continue
        if j.type in ("free", "floating") and j.idx_v == 0 and robot.floating_base:
            continue
        if j.type not in DEFAULTS:
            raise ValueError(f"excitation_trajectory: joint {j.name!r} is {j.type}; supported: revolute, "
                             "continuous, prismatic (and a floating base)")
        types.append(j.type)
    half = np.array([DEFAULTS[t][0] for t in types])
    vel = np.array([DEFAULTS[t][1] for t in types])
    center = np.zeros(len(types))
    if limits is not None:
        lower, upper, velocity = (_joint_entries(robot, limits, name, len(types))
                                  for name in ("lower", "upper", "velocity"))
        bounded = np.isfinite(lower) & np.isfinite(upper)
        empty = np.flatnonzero(bounded & (upper <= lower))
        if len(empty):
            raise ValueError(f"limits: upper <= lower at joint coordinates {empty}")
        if np.any(velocity <= 0):
            raise ValueError(f"limits.velocity must be positive, got {velocity}")
        center[bounded] = 0.5 * (lower[bounded] + upper[bounded])    # only there: inf - inf is NaN elsewhere
        half[bounded] = 0.5 * (upper[bounded] - lower[bounded])
        vel = np.where(np.isfinite(velocity), velocity, vel)
    if robot.floating_base:
        center = np.concatenate([np.zeros(6), center])
        half = np.concatenate([[h for h, _ in BASE_DEFAULTS], half])
        vel = np.concatenate([[v for _, v in BASE_DEFAULTS], vel])
    return center, half, vel


def _joint_entries(robot, limits, name, n):
    """limits.<name> over the n joint coordinates (a floating base's 6 dropped when given).  -> (n,)"""
    x = np.asarray(getattr(limits, name), dtype=float).reshape(-1)
    if robot.floating_base and len(x) == robot.nv:
        x = x[6:]
    if len(x) != n:
        raise ValueError(f"limits.{name} must have one entry per joint coordinate ({n}), got {len(x)}")
    if np.any(np.isnan(x)):
        raise ValueError(f"limits.{name} has NaN entries")
    return x


def excitation_trajectory(robot, limits=None, duration=10.0, harmonics=5, base_frequency=None, n_samples=None,
                          rng=None, maxiter=30):
    """A Fourier trajectory within the limits whose stacked base regressor is well conditioned (module docstring).

    limits: urdf.Limits (lower, upper, velocity over the velocity coordinates) or None (defaults); duration: s, of
    the log it is meant for; harmonics: L; base_frequency: Hz (default 1 / duration: one period per log);
    n_samples: instants of a period stacked in the objective (default: enough for 3 rows per base parameter, at
    least 50); rng: seed or Generator of the initial coefficients; maxiter: L-BFGS-B iterations (0: the random
    initial guess, scaled into the limits).  ->  FourierTrajectory
    """
    if not (np.isfinite(duration) and duration > 0):
        raise ValueError(f"duration must be positive, got {duration!r}")
    if int(harmonics) != harmonics or harmonics < 1:
        raise ValueError(f"harmonics must be a positive integer, got {harmonics!r}")
    f = 1.0 / duration if base_frequency is None else float(base_frequency)
    if not (np.isfinite(f) and f > 0):
        raise ValueError(f"base_frequency must be positive, got {base_frequency!r}")
    if int(maxiter) != maxiter or maxiter < 0:
        raise ValueError(f"maxiter must be a non-negative integer, got {maxiter!r}")
    L, w_f = int(harmonics), 2 * np.pi * f
    center, half, vel = coordinate_limits(robot, limits)
    base = base_parameters(robot)
    if n_samples is None:
        n_samples = max(50, -(-3 * base.rank // robot.nv))
    if int(n_samples) != n_samples or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    n = len(center)
    t_obj = np.arange(int(n_samples)) * (2 * np.pi / w_f) / n_samples
    t_dense = np.arange(DENSE * L) * (2 * np.pi / w_f) / (DENSE * L)

    def trajectory(c):
        """The coefficients c (2 n L,) scaled into the limits."""
        a, b = c.reshape(2, n, L)
        x, xd, _ = FourierTrajectory(np.zeros(n), a, b, w_f).coordinates(t_dense)
        reach = np.maximum(np.abs(x).max(axis=0) / (MARGIN * half), np.abs(xd).max(axis=0) / (MARGIN * vel))
        s = 1.0 / np.maximum(reach, 1.0)
        return FourierTrajectory(center.copy(), a * s[:, None], b * s[:, None], w_f, robot.floating_base,
                                 duration=float(duration))

    def log_condition(c):
        q, v, a = trajectory(c).sample(t_obj)
        # one state per call: the optimizer makes ~100 small batches per iteration, and each batch's parallel
        # region waits for its threads to be scheduled (50 states of arm7: 0.1 ms alone, 10 ms on a busy machine)
        Y = np.stack([robot.regressor(q[i], v[i], v[i], a[i]) for i in range(len(q))])
        Y_b = base.regressor(Y).reshape(-1, base.rank)
        s = np.linalg.eigvalsh(np.einsum("ij,ik->jk", Y_b, Y_b))    # sigma^2 of Y_b (einsum: no BLAS threads)
        return float(0.5 * np.log(s[-1] / s[0])) if s[0] > 0 else 1e3

    c0 = np.random.default_rng(rng).normal(size=2 * n * L)
    initial = log_condition(c0)
    c = c0
    if maxiter:
        c = scipy.optimize.minimize(log_condition, c0, method="L-BFGS-B", options={"maxiter": int(maxiter)}).x
    best = log_condition(c)
    if best > initial:
        c, best = c0, initial
    result = trajectory(c)
    result.condition, result.initial_condition = float(np.exp(best)), float(np.exp(initial))
    return result
