"""The filtered momentum regressor of composite adaptive control (composite.py's module docstring; Slotine & Li,
"Composite adaptive control of robot manipulators", Automatica 25(4), 1989): W(q, qdot) with W pi = tau_f, the
applied torque filtered by lambda / (s + lambda).
"""
import numpy as np

from . import _composite_tick as kernel


class MomentumFilter:
    """The filtered momentum regressor: W(q, qdot) with W pi = tau_f, the applied torque filtered by
    lambda / (s + lambda), lambda = 2 pi cutoff (module docstring; Slotine & Li 1989).

    robot: gives momentum_regressor (its parameters are not used); cutoff: Hz.
    ``start(q, v)`` at the first sample, ``step(q, v, tau, dt)`` at every later one, tau being the torque held
    since the previous sample; ``replay(t, q, v, tau)`` does the same over a log in one batched regressor call.
    The filters start at rest in the momentum, F[p](0) = p(0), so that F[pdot] = lambda (p - F[p]) from the start.
    The state is one flat array (_composite_tick.filter_views), replaced at every sample, never written into; a
    CompositeSlotineLi's filter is advanced by the controller's tick instead, its state a view of the controller's.
    """

    def __init__(self, robot, cutoff):
        cutoff = float(cutoff)
        if not (np.isfinite(cutoff) and cutoff > 0):
            raise ValueError(f"cutoff must be a positive frequency in Hz, got {cutoff}")
        self.robot, self.lam = robot, 2 * np.pi * cutoff
        self.drives = not robot.model.drives.rigid     # known drives: module docstring
        self.armature = np.array(robot.armature, dtype=float)
        nv, p = robot.nv, 10 * robot.nbodies
        self.size = 4 * nv * p + 5 * nv
        self.state = None                              # filter_views' layout; None before start
        self._dt = self._weights_dt = None

    @property
    def started(self):
        return self.state is not None

    def _views(self):
        return kernel.filter_views(self.state, self.robot.nv, 10 * self.robot.nbodies)

    @property
    def Y_p(self):
        """The last sample's Y_p (nv, 10 nb)."""
        return self._views()[0]

    @property
    def Y_h(self):
        """The last sample's Y_h (nv, 10 nb)."""
        return self._views()[1]

    @property
    def x_p(self):
        """F[Y_p] (nv, 10 nb)."""
        return self._views()[2]

    @property
    def x_h(self):
        """F[Y_h] (nv, 10 nb)."""
        return self._views()[3]

    @property
    def x_tau(self):
        """F[tau] (nv,)."""
        return self._views()[4]

    def _friction(self, v):
        return self.robot.friction_torque(v) if self.drives else np.zeros(self.robot.nv)

    def start(self, q, v, Y=None):
        """Reset at the state (q, v): F[Y_p] = Y_p, F[Y_h] = 0, F[tau] = 0 (and F[v] = v, F[tau_f] = 0).  Returns
        (W, tau_f), both zero.

        Y: momentum_regressor(q, v) if already computed.
        """
        Y_p, Y_h = self.robot.momentum_regressor(q, v) if Y is None else Y
        v = np.array(v, dtype=float)
        state = np.empty(self.size)
        kernel.filter_start(state, np.ascontiguousarray(Y_p), np.ascontiguousarray(Y_h), v, self._friction(v))
        self.state = state
        return self.output()

    def step(self, q, v, tau, dt, Y=None):
        """Advance by dt > 0 to the state (q, v), tau (nv,) having been applied since the last sample.

        Exact for the filters' linear part: tau held (zero-order hold), Y_p and Y_h (and v, tau_f(v)) linear
        between the samples.  Returns (W (nv, 10 nb), tau_f (nv,)).  Y: momentum_regressor(q, v) if already
        computed.
        """
        Y_p, Y_h = self.robot.momentum_regressor(q, v) if Y is None else Y
        v = np.array(v, dtype=float)
        state = np.empty(self.size)
        kernel.filter_step(self.state, state, np.ascontiguousarray(Y_p), np.ascontiguousarray(Y_h),
                           np.asarray(tau, dtype=float), v, self._friction(v), *self.weights(dt))
        self.state = state
        return self.output()

    def output(self):
        """(W, tau_f) at the last sample: W = lambda (Y_p - F[Y_p]) - F[Y_h]; tau_f = F[tau], less, with drives,
        F[tau_f(v)] + lambda armature (v - F[v]) (module docstring; _composite_tick.filtered_regressor)."""
        nv, p = self.robot.nv, 10 * self.robot.nbodies
        W, tau_f = np.empty((nv, p)), np.empty(nv)
        kernel.filter_output(self.state, self.lam, self.armature, W, tau_f)
        return W, tau_f

    def weights(self, dt):
        """(a, b, c) with x(t + dt) = a x + b u(t) + c (u(t + dt) - u(t)) for x' = lambda (u - x), u linear over
        the step (kept for the last dt)."""
        if dt != self._dt:
            a = np.exp(-self.lam * dt)
            b = -np.expm1(-self.lam * dt)                                     # 1 - a
            self._dt, self._weights_dt = dt, (a, b, 1.0 - b / (self.lam * dt))
        return self._weights_dt

    def replay(self, t, q, v, tau):
        """The filter over a log: t (K,) increasing, q (K, nq), v (K, nv), tau (K, nv) applied from each sample to
        the next.  Returns W (K, nv, 10 nb) and tau_f (K, nv); the filter's state ends at the last sample."""
        t = np.asarray(t, dtype=float)
        if t.ndim != 1 or len(t) < 1 or not np.all(np.diff(t) > 0):
            raise ValueError("t must be a non-empty increasing (K,) array")
        Y_p, Y_h = self.robot.momentum_regressor(np.asarray(q, dtype=float), np.asarray(v, dtype=float))
        tau = np.asarray(tau, dtype=float)
        W, tau_f = np.empty_like(Y_p), np.empty((len(t), self.robot.nv))
        W[0], tau_f[0] = self.start(q[0], v[0], (Y_p[0], Y_h[0]))
        for k in range(1, len(t)):
            W[k], tau_f[k] = self.step(q[k], v[k], tau[k - 1], t[k] - t[k - 1], (Y_p[k], Y_h[k]))
        return W, tau_f
