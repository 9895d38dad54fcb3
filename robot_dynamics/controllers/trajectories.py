"""Reference trajectories: q_d(t), qdot_d(t), qddot_d(t) for the tracking controllers.

Every generator is called as ``reference = trajectory(t)`` and returns a ``Reference(q, v, a)``; ``t`` is a
scalar (arrays of shape (n,)) or an array of times of shape (...) (arrays of shape (..., n)).

- ``PiecewiseTrajectory(times, positions, velocities=None, accelerations=None)``: Hermite interpolation through
  timed points, i.e. the contents of a trajectory_msgs/JointTrajectory on plain arrays. The degree follows what
  the points give: linear with positions only, cubic with positions and velocities, quintic with positions,
  velocities and accelerations. Before the first point and after the last one the point is held (zero velocity
  and acceleration).
- ``quintic_waypoints(times, positions)``: rest-to-rest quintic segments, zero velocity and acceleration at
  every waypoint.
- ``SumOfSines(offset, amplitudes, omegas, phases)``: q_d = q0 + sum_k a_k sin(omega_k t + phi_k), smooth and
  persistently exciting (for adaptive control and identification).

Joint-space references only: a floating-base robot's reference configuration is built by the caller.
"""
from typing import NamedTuple

import numpy as np
from numba import njit


class Reference(NamedTuple):
    """Desired position q (..., n), velocity v (..., n) and acceleration a (..., n) at one or more times."""

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray


def _hermite_coefficients(T, q0, q1, v0, v1, a0, a1):
    """Coefficients c_0..c_5 of p(tau) = sum_j c_j tau^j on [0, T] with p, p', p'' given at both ends.

    T: (s, 1); q0, q1, v0, v1, a0, a1: (s, n)  ->  (s, 6, n)
    """
    dq = q1 - q0
    c3 = (20 * dq - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
    c4 = (-30 * dq + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
    c5 = (12 * dq - 6 * (v1 + v0) * T + (a1 - a0) * T**2) / (2 * T**5)
    return np.stack([q0, v0, a0 / 2, c3, c4, c5], axis=1)


def _cubic_coefficients(T, q0, q1, v0, v1):
    """Cubic Hermite: p, p' given at both ends.  T: (s, 1); q0, q1, v0, v1: (s, n)  ->  (s, 6, n)"""
    dq = q1 - q0
    c2 = (3 * dq - (2 * v0 + v1) * T) / T**2
    c3 = (-2 * dq + (v0 + v1) * T) / T**3
    zero = np.zeros_like(q0)
    return np.stack([q0, v0, c2, c3, zero, zero], axis=1)


def _linear_coefficients(T, q0, q1):
    """Straight line between the two positions.  T: (s, 1); q0, q1: (s, n)  ->  (s, 6, n)"""
    zero = np.zeros_like(q0)
    return np.stack([q0, (q1 - q0) / T, zero, zero, zero, zero], axis=1)


def _as_points(name, values, shape):
    if values is None:
        return None
    values = np.asarray(values, dtype=float)
    if values.shape != shape:
        raise ValueError(f"{name} has shape {values.shape}, expected {shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} is not finite")
    return values


class PiecewiseTrajectory:
    """Piecewise polynomial through timed points, held before the first and after the last point.

    times: (N,) strictly increasing; positions: (N, n); velocities: (N, n) or None; accelerations: (N, n) or
    None (only together with velocities). Segment k on [t_k, t_{k+1}] is the linear, cubic Hermite or quintic
    Hermite polynomial that matches what is given at both ends, so q_d is C^0, C^1 or C^2 accordingly.
    """

    def __init__(self, times, positions, velocities=None, accelerations=None):
        positions = np.asarray(positions, dtype=float)
        if positions.ndim != 2 or positions.shape[0] == 0:
            raise ValueError(f"positions must have shape (N, n) with N >= 1, got {positions.shape}")
        N, n = positions.shape
        times = _as_points("times", times, (N,))
        positions = _as_points("positions", positions, (N, n))
        velocities = _as_points("velocities", velocities, (N, n))
        accelerations = _as_points("accelerations", accelerations, (N, n))
        if np.any(np.diff(times) <= 0):
            raise ValueError("times must be strictly increasing")
        if accelerations is not None and velocities is None:
            raise ValueError("accelerations need velocities too")
        self.times, self.positions = times, positions
        self.degree = 1 if velocities is None else 3 if accelerations is None else 5

        T = np.diff(times)[:, None]                                    # (N-1, 1)
        if self.degree == 1:
            self.coefficients = _linear_coefficients(T, positions[:-1], positions[1:])
        elif self.degree == 3:
            self.coefficients = _cubic_coefficients(T, positions[:-1], positions[1:], velocities[:-1],
                                                    velocities[1:])
        else:
            self.coefficients = _hermite_coefficients(T, positions[:-1], positions[1:], velocities[:-1],
                                                      velocities[1:], accelerations[:-1], accelerations[1:])

    @property
    def duration(self):
        """Time of the last point."""
        return self.times[-1]

    def __call__(self, t):
        """Reference at time(s) t: scalar or (...)  ->  Reference of (n,) or (..., n) arrays."""
        t = np.asarray(t, dtype=float)
        n = self.positions.shape[1]
        held = (t < self.times[0]) | (t >= self.times[-1])
        q = np.where(held[..., None], self.positions[np.where(t < self.times[0], 0, -1)], 0.0)
        v = np.zeros(t.shape + (n,))
        a = np.zeros(t.shape + (n,))
        if len(self.times) == 1 or np.all(held):
            return Reference(q, v, a)
        k = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.times) - 2)
        tau = (t - self.times[k])[..., None]                           # time into segment k
        c = self.coefficients[k]                                       # (..., 6, n)
        p = ((((c[..., 5, :] * tau + c[..., 4, :]) * tau + c[..., 3, :]) * tau + c[..., 2, :]) * tau
             + c[..., 1, :]) * tau + c[..., 0, :]
        dp = (((5 * c[..., 5, :] * tau + 4 * c[..., 4, :]) * tau + 3 * c[..., 3, :]) * tau
              + 2 * c[..., 2, :]) * tau + c[..., 1, :]
        ddp = ((20 * c[..., 5, :] * tau + 12 * c[..., 4, :]) * tau + 6 * c[..., 3, :]) * tau + 2 * c[..., 2, :]
        moving = ~held[..., None]
        return Reference(np.where(moving, p, q), np.where(moving, dp, v), np.where(moving, ddp, a))

    def evaluate(self, t, out):
        """The reference at one time t (a float) written into out, a Reference of three (n,) float arrays, and
        returned: __call__(t)'s numbers, compiled, without allocating (a controller's tick)."""
        _evaluate(self.times, self.positions, self.coefficients, float(t), out.q, out.v, out.a)
        return out


@njit(cache=True)
def _evaluate(times, positions, coefficients, t, q, v, a):
    """q, v, a <- PiecewiseTrajectory.__call__(t) for one time t: the point held before the first time and from
    the last one on, else segment k's polynomial by Horner's rule (__call__'s operations, in its order)."""
    last = times.shape[0] - 1
    if t < times[0] or t >= times[last]:
        held = positions[0] if t < times[0] else positions[last]
        for j in range(q.shape[0]):
            q[j], v[j], a[j] = held[j], 0.0, 0.0
        return
    k = min(max(np.searchsorted(times, t, side="right") - 1, 0), last - 1)
    tau = t - times[k]
    c = coefficients[k]
    for j in range(q.shape[0]):
        c0, c1, c2, c3, c4, c5 = c[0, j], c[1, j], c[2, j], c[3, j], c[4, j], c[5, j]
        q[j] = ((((c5 * tau + c4) * tau + c3) * tau + c2) * tau + c1) * tau + c0
        v[j] = (((5 * c5 * tau + 4 * c4) * tau + 3 * c3) * tau + 2 * c2) * tau + c1
        a[j] = ((20 * c5 * tau + 12 * c4) * tau + 6 * c3) * tau + 2 * c2


def quintic_waypoints(times, positions):
    """Rest-to-rest quintic segments through the waypoints: zero velocity and acceleration at each one.

    times: (N,) strictly increasing; positions: (N, n)  ->  PiecewiseTrajectory of degree 5
    """
    positions = np.asarray(positions, dtype=float)
    zero = np.zeros_like(positions)
    return PiecewiseTrajectory(times, positions, zero, zero)


class SumOfSines:
    """q_d(t) = q0 + sum_k a_k sin(omega_k t + phi_k), per joint, with its exact derivatives.

    offset: (n,); amplitudes: (n, K); omegas: (K,) or (n, K) in rad/s; phases: (n, K) or None (zeros)
    """

    def __init__(self, offset, amplitudes, omegas, phases=None):
        self.offset = np.asarray(offset, dtype=float)
        n = self.offset.shape[0]
        self.amplitudes = np.asarray(amplitudes, dtype=float)
        if self.amplitudes.ndim != 2 or self.amplitudes.shape[0] != n:
            raise ValueError(f"amplitudes must have shape ({n}, K), got {self.amplitudes.shape}")
        shape = self.amplitudes.shape
        self.omegas = np.broadcast_to(np.asarray(omegas, dtype=float), shape)
        self.phases = np.zeros(shape) if phases is None else np.broadcast_to(np.asarray(phases, float), shape)

    def __call__(self, t):
        """Reference at time(s) t: scalar or (...)  ->  Reference of (n,) or (..., n) arrays."""
        t = np.asarray(t, dtype=float)[..., None, None]
        angle = self.omegas * t + self.phases                          # (..., n, K)
        sin, cos = np.sin(angle), np.cos(angle)
        q = self.offset + np.sum(self.amplitudes * sin, axis=-1)
        v = np.sum(self.amplitudes * self.omegas * cos, axis=-1)
        a = -np.sum(self.amplitudes * self.omegas**2 * sin, axis=-1)
        return Reference(q, v, a)
