"""Slotine-Li adaptive tracking control, with a projection that keeps every body's estimate physical.

Slotine & Li, "On the adaptive control of robot manipulators", IJRR 6(3), 1987 (paper 002, ref. [18]):

    e = q_d (-) q,   qdot_r = qdot_d + Lambda e,   qddot_r = qddot_d + Lambda edot,   s = qdot - qdot_r
    tau = Y(q, qdot, qdot_r, qddot_r) pi_hat - K_D s,     Y pi = M qddot_r + C qdot_r + g     (paper 002, eq. 16)
    pi_hat_dot = -Gamma Y^T s

With pi_tilde = pi_hat - pi the closed loop is M sdot + C s + K_D s = Y pi_tilde, and

    V = 1/2 s^T M s + 1/2 pi_tilde^T Gamma^-1 pi_tilde,    Vdot = -s^T K_D s + 1/2 s^T (Mdot - 2 C) s = -s^T K_D s

The last step needs Mdot - 2C skew-symmetric for every s, not only s = qdot (paper 000, section 1; paper 002,
Remark 5): the library's C is built that way. Lambda here is the sliding-surface gain, not paper 002's body
inertia Lambda_k.

Projection (optional). A body's parameters pi_k = [m, m c, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz] (inertia about
the body origin) belong to some non-negative mass distribution iff its pseudo-inertia

    J(pi_k) = [[Sigma, m c], [m c^T, m]] >= 0,    Sigma = 1/2 tr(I) 1 - I      (the second moment of mass)

(Wensing, Kim & Slotine, "Linear matrix inequalities for physically consistent inertial parameter
identification", RA-L 2018). J >= 0 gives m >= 0, a positive-semidefinite rotational inertia about the CoM and
the triangle inequalities; J is linear in pi_k, so the physical set is a convex cone. ``InertiaMetric(pi_ref)``
(robot_dynamics/inertia.py, with the pseudo-inertia and the log-det metric and divergence) measures a change of
body k by the affine-invariant ("pullback", the Hessian of the log-det divergence) metric at its reference
pseudo-inertia J0_k:

    ||dpi_k||^2 = tr(J0_k^-1 J(dpi_k) J0_k^-1 J(dpi_k)) = ||S_k J(dpi_k) S_k||_F^2,    S_k = J0_k^-1/2

and gives both the gain Gamma = blockdiag(gamma_k G_k^-1) (G_k that metric's (10, 10) matrix) and the projection
J -> S^-1 clip(S J S) S^-1 (eigenvalues of the whitened 4x4 matrix clipped at ``floor``: J >= floor J0). Why:

- the projection is exact and cheap (one 4x4 eigendecomposition per body) because J -> S J S is an isometry onto
  the Frobenius norm that maps the cone J >= 0 onto itself;
- it is the Gamma^-1-metric projection onto a convex set that contains the true pi (floor = 0, or any floor
  with J(pi_k) >= floor J0_k), so it never increases pi_tilde^T Gamma^-1 pi_tilde and V keeps its Lyapunov
  property;
- the gain is relative: each parameter adapts in proportion to its body's own size (kg, kg m, kg m^2 all
  whitened by J0), so a light wrist does not make the adaptation stiff next to a heavy shoulder.

Per-body clipping of m and of the CoM inertia's eigenvalues is simpler to write but is not a projection in the
Gamma^-1 metric and can increase V; the log-det ("natural") adaptation law keeps J > 0 without projecting but
replaces V's quadratic term, which this controller exposes for inspection. ``projection`` accepts any callable
pi -> pi: with another Gamma the estimate stays physical but V's guarantee is lost.

Drives (robot_dynamics/drives.py, friction.py).  The joint torque has a drives' part, diag(armature) a + tau_f(v),
linear in theta_d = [armature; a linear friction model's coefficients] (friction.drive_regressor):

    tau = Y pi_hat + Y_d(v_r, a_r) theta_hat_d - K_D s,     theta_hat_d_dot = -Gamma_d Y_d^T s,

Y_d at the reference velocity with the sign smoothed (friction.drive_regressor says why: the friction the model
misses between v and v_r only dissipates), theta_hat_d kept >= 0 where it is a physical level (armature, F_v,
F_c: a projection onto an orthant, which never increases theta_tilde_d^T Gamma_d^-1 theta_tilde_d for a diagonal
Gamma_d) -- V gains 1/2 theta_tilde_d^T Gamma_d^-1 theta_tilde_d and Vdot stays -s^T K_D s.  With ``drives=None``
the robot's own drives, if it has any, are a fixed feedforward diag(armature) a_r + tau_f(v_r); with a linear
model's name ("viscous", "coulomb", "offset") theta_d starts at the robot's drives in that model's terms
(friction.drive_parameters) and adapts.

Use: ``update(q, v, q_d, v_d, a_d, dt)`` once per control tick (one Euler step of the adaptation law, the
projection, then the torque with the new estimate); ``adapt`` and ``torque`` split the two; ``law`` is the pure
continuous-time map (tau, pi_hat_dot) for integrating pi_hat together with the robot's state.
The library's default adaptive controller, built by ``RelativeGains().slotine_li(robot, pi_hat0, q0)`` (what the
demo and adaptive_controller_node run), is composite.CompositeSlotineLi: this tracking law plus a torque-prediction
error, a least-squares gain and a log-det barrier (log_det_metric, log_det_divergence) instead of the projection.
``TrackingRecord`` holds what such a loop reports.
"""
import functools
import math
from typing import NamedTuple

import numpy as np

from ..configuration import ConfigurationSpace
from ..drives import COULOMB_VELOCITY
from ..friction import drive_parameters, drive_physical, drive_regressor, model_class
from ..inertia import InertiaMetric
from . import _ct_tick, _slotine_tick as kernel
from ._slotine_tick import NOT_FINITE_RESULT, reference as _reference  # noqa: F401 (composite.py's, too)
from .computed_torque import _F64, _ND, check_vector, gain_matrix, tracking_error


class Sliding(NamedTuple):
    """Tracking error e, edot (nv,), reference velocity v_r, acceleration a_r (nv,) and sliding variable s (nv,)."""

    e: np.ndarray
    e_dot: np.ndarray
    v_r: np.ndarray
    a_r: np.ndarray
    s: np.ndarray


def sliding(robot, Lambda, q, v, q_d, v_d, a_d):
    """e, edot, qdot_r = qdot_d + Lambda e, qddot_r = qddot_d + Lambda edot, s = qdot - qdot_r (all (nv,)).

    Lambda: (nv, nv); q, q_d: (nq,); v, v_d, a_d: (nv,), checked as tracking_error does.
    """
    e, e_dot = tracking_error(robot, q, v, q_d, v_d)
    v_r = np.asarray(v_d, dtype=float) + Lambda @ e
    a_r = check_vector("a_d", a_d, robot.nv) + Lambda @ e_dot
    return Sliding(e, e_dot, v_r, a_r, np.asarray(v, dtype=float) - v_r)


def _metric_projection(projection):
    """(metric, floor) when projection is InertiaMetric.project, or a functools.partial of it giving floor alone
    (then compiled in the tick); else None."""
    floor = 0.0
    if isinstance(projection, functools.partial) and not projection.args and set(projection.keywords) <= {"floor"}:
        floor = projection.keywords.get("floor", 0.0)
        projection = projection.func
    metric = getattr(projection, "__self__", None)
    if isinstance(metric, InertiaMetric) and getattr(projection, "__func__", None) is InertiaMetric.project:
        return metric, float(floor)
    return None


_INPUTS = ("q", "v", "q_d", "v_d", "a_d")
_empty = np.empty


class SlotineLi:
    """Slotine-Li adaptive controller holding the parameter estimate pi_hat (10 nbodies,) as its state.

    robot: the controller's model (its kinematics are trusted, its parameters are used only when pi_hat is None);
    Lambda, K_D: scalar, (nv,) or (nv, nv); Gamma: scalar, (10 nb,) or (10 nb, 10 nb), symmetric positive
    definite, e.g. InertiaMetric(pi_nominal).gain(gamma); pi_hat: initial estimate (10 nb,), robot.parameters if
    None; projection: None or a callable (10 nb,) -> (10 nb,) applied to the initial estimate and after each
    adaptation step, e.g. InertiaMetric(pi_nominal).project (module docstring).
    drives: None (the robot's own drives, if any, as a fixed feedforward) or a linear friction model's name to adapt
    theta_d = [armature; its coefficients] (module docstring); armature: whether theta_d has the armatures;
    Gamma_drives: scalar or (p_d,) diagonal gain of theta_d; theta_hat: its initial estimate (p_d,), the robot's
    drives (friction.drive_parameters) if None.

    A tick (update, adapt, torque, law) is one compiled call on the controller's buffers (_slotine_tick.sl_tick: the
    sliding variables, the robot's regressor kernel, the adaptation step, the projection and the torque) for no
    projection or InertiaMetric(...).project (also as functools.partial(metric.project, floor=...)), no drives or
    the robot's viscous and Coulomb drives as the feedforward, and no planar joint; another projection callable, a
    friction model object and adapted drives stop the tick after the regressor and add their numpy calls.
    Lambda, K_D, Gamma, pi_hat and projection are checked when set; a tick checks its inputs and results are
    finite, and a ValueError naming the culprit leaves the estimates as they were (the state is double-buffered).
    """

    def __init__(self, robot, Lambda, K_D, Gamma, pi_hat=None, projection=None, drives=None, armature=True,
                 Gamma_drives=1.0, theta_hat=None):
        self.robot = robot
        p = 10 * robot.nbodies
        self._buffers()
        self.Lambda = Lambda
        self.K_D = K_D
        self.Gamma = Gamma
        self.projection = projection
        pi_hat = robot.parameters if pi_hat is None else pi_hat
        self.pi_hat = self._projected(check_vector("pi_hat", pi_hat, p))
        self.drives = None if drives is None else model_class(drives)
        self.armature = bool(armature)
        self._feedforward = drives is None and not robot.model.drives.rigid
        self.theta_hat = np.zeros(0)
        if self.drives is not None:
            self._levels = drive_physical(robot, self.armature, self.drives)      # kept >= 0 by the projection
            p_d = len(self._levels)
            start = drive_parameters(robot, self.armature, self.drives) if theta_hat is None else theta_hat
            self.theta_hat = self._drive_projected(check_vector("theta_hat", start, p_d))
            gain = np.broadcast_to(np.asarray(Gamma_drives, dtype=float), (p_d,))
            if not np.all(np.isfinite(gain) & (gain >= 0)):
                raise ValueError(f"Gamma_drives must be finite and >= 0, a scalar or ({p_d},)")
            self.Gamma_drives = gain.copy()
        own = robot.model.drives
        self._friction_model = self._feedforward and own.model is not None
        self._numpy_drives = self.drives is not None or self._friction_model           # _drive_torque's cases
        if self._feedforward:
            self._vectors[5] = robot.armature
        if self._feedforward and own.model is None:                       # viscous + Coulomb, in the tick
            self._vectors[6], self._vectors[7] = own.damping, own.friction
        self._set_modes()

    def _buffers(self):
        """The tick's arrays (_slotine_tick.sl_tick): the state's two copies, the data (sl_views: the control
        scalars, the projection's constants, the gains, the vectors, Y, the rate and scratch) and the plan of the
        robot's regressor, from the data's q, v, v_r and a_r into its Y."""
        robot, model = self.robot, self.robot.model
        n, nb = robot.nv, robot.nbodies
        self._states = np.zeros((2, 26 * nb))
        self._data = np.zeros(kernel.sl_size(n, robot.nq, nb))
        (self._control, self._whitening, self._S_inv, self._Lambda, self._K_D, self._gain, self._vectors, q, v, self._Y,
         self._rate, self._g, self._work) = kernel.sl_views.py_func(self._data, n, robot.nq, nb)
        self._control[kernel.WIDTH] = COULOMB_VELOCITY
        self._Gamma = np.zeros((10 * nb, 10 * nb))
        self._e, self._v_r, self._a_r, self._s, self._extra = (self._vectors[i] for i in (0, 2, 3, 4, 8))
        space = self._space = ConfigurationSpace(model)
        mode = _ct_tick.difference_mode(space)
        self._direct = mode != _ct_tick.PYTHON                        # the tick alone (planar: e = space.difference)
        calls = [("regressor", (q, v, self._v_r, self._a_r), (self._Y,))]
        self._plan, self._arrays = _ct_tick.plan(model, calls, (n, robot.nq, nb, mode), space)   # (kept: the plan
        self._fixed = self._arrays[:2] + (self._plan, self._data)   # points into them), the body records first
        example = (self._plan, self._data, self._states, q, v, q, v, v, v)
        self._call = _ct_tick.tick_entry(kernel.sl_tick, kernel.sl_entry, example, 5)
        self._shapes = ((robot.nq,), (n,), (robot.nq,), (n,), (n,))
        self._numpy_drives = False                                      # (until the drives are known: __init__)

    def _set_modes(self):
        """The tick's mode, and whether numpy finishes the tick (_numpy_tick: adapted drives, a friction model's
        torque, or a projection the tick does not compile), for torque and law (index 0) and for update (1)."""
        self._numpy = (self._numpy_drives, self._numpy_drives or not self._compiled_projection)
        self._modes = (kernel.SLIDING if self._numpy[0] else 0,
                       kernel.SLIDING if self._numpy[1] else self._mode | kernel.COMMIT)

    @property
    def Lambda(self):
        """The sliding-surface gain (nv, nv); set as a scalar, (nv,) or (nv, nv)."""
        return self._Lambda

    @Lambda.setter
    def Lambda(self, value):
        self._Lambda[:] = gain_matrix(value, self.robot.nv, "Lambda")

    @property
    def K_D(self):
        """The damping gain (nv, nv); set as a scalar, (nv,) or (nv, nv)."""
        return self._K_D

    @K_D.setter
    def K_D(self, value):
        self._K_D[:] = gain_matrix(value, self.robot.nv, "K_D")

    @property
    def Gamma(self):
        """The adaptation gain (10 nb, 10 nb); setting it (scalar, (10 nb,) or (10 nb, 10 nb)) also sets Gamma^-1,
        which the Lyapunov function needs."""
        return self._Gamma

    @Gamma.setter
    def Gamma(self, value):
        Gamma = gain_matrix(value, 10 * self.robot.nbodies, "Gamma")
        self._Gamma_inv = np.linalg.inv(Gamma)
        self._Gamma[:] = Gamma
        nb = self.robot.nbodies
        body_by_body = not np.any(Gamma[np.kron(np.eye(nb), np.ones((10, 10))) == 0])
        gain = np.array([Gamma[k:k + 10, k:k + 10] for k in range(0, 10 * nb, 10)]) if body_by_body else Gamma
        self._control[kernel.BLOCK] = 10 if body_by_body else len(Gamma)          # the tick's gain_times
        self._gain[:] = 0.0
        self._gain[:gain.size] = gain.ravel()

    @property
    def projection(self):
        """None or the callable (10 nb,) -> (10 nb,) applied after each adaptation step (class docstring)."""
        return self._projection

    @projection.setter
    def projection(self, value):
        if value is not None and not callable(value):
            raise ValueError(f"projection must be None or a callable pi -> pi, got {value!r}")
        self._projection = value
        compiled = _metric_projection(value)
        self._compiled_projection = value is None or compiled is not None
        self._mode = kernel.ADAPT | (kernel.PROJECT if compiled is not None else 0)
        if compiled is not None:
            metric, floor = compiled
            self._whitening[:], self._S_inv[:], self._control[kernel.FLOOR] = metric.whitening, metric.S_inv, floor
            for x in self._states:
                kernel.state_views(x, len(x) * 10 // 26)[1][:] = np.eye(4)      # the eigenvectors, from 1
        self._set_modes()

    @property
    def pi_hat(self):
        """The estimate (10 nb,): a new array."""
        return self._pi_hat.copy()

    @pi_hat.setter
    def pi_hat(self, value):
        self._pi_hat[:] = check_vector("pi_hat", value, 10 * self.robot.nbodies)

    @property
    def _current(self):
        return int(self._control[kernel.CURRENT])

    @property
    def _pi_hat(self):
        return self._states[self._current, :10 * self.robot.nbodies]

    def _drive_projected(self, theta):
        return np.where(self._levels, np.maximum(theta, 0.0), theta)

    def _projected(self, pi):
        return pi if self._projection is None else self._projection(pi)

    def sliding(self, q, v, q_d, v_d, a_d):
        """e, edot, qdot_r = qdot_d + Lambda e, qddot_r = qddot_d + Lambda edot, s = qdot - qdot_r (all (nv,))."""
        return sliding(self.robot, self._Lambda, q, v, q_d, v_d, a_d)

    def law(self, q, v, q_d, v_d, a_d, pi_hat=None):
        """Pure control and adaptation law: tau = Y pi_hat + (the drives' part) - K_D s (nv,), pi_hat_dot =
        -Gamma Y^T s (10 nb,) (module docstring; theta_hat_d's rate is _drive_torque's).

        pi_hat: the estimate to use, self.pi_hat if None. Nothing is modified.
        """
        states = self._states
        if pi_hat is not None:
            states = states.copy()
            states[self._current, :10 * self.robot.nbodies] = check_vector("pi_hat", pi_hat, 10 * self.robot.nbodies)
        tau = self._tick(q, v, q_d, v_d, a_d, 0.0, False, states)[0]
        return tau, self._rate.copy()

    def torque(self, q, v, q_d, v_d, a_d):
        """tau (nv,) with the current estimate; the estimate is not changed."""
        return self._tick(q, v, q_d, v_d, a_d, 0.0, False, self._states)[0]

    def adapt(self, q, v, q_d, v_d, a_d, dt):
        """pi_hat <- P(pi_hat + dt pi_hat_dot) (and theta_hat_d likewise): one explicit Euler step of the adaptation
        law; returns pi_hat (a new array)."""
        self.update(q, v, q_d, v_d, a_d, dt)
        return self.pi_hat

    def update(self, q, v, q_d, v_d, a_d, dt):
        """One control tick: the estimate advanced by dt, then tau (nv,) with the new estimate (one regressor).

        Adapting before computing tau makes the sampled loop a symplectic-Euler step of the oscillation between s
        and pi_tilde (stable for omega dt < 2); the other order is explicit Euler, which amplifies it every tick.
        Keep Gamma small enough that this oscillation (omega^2 ~ |M^-1/2 Y Gamma Y^T M^-1/2|) is well below the
        tick rate: the held torque lags by dt / 2.
        """
        tau, self.theta_hat = self._tick(q, v, q_d, v_d, a_d, _check_dt(dt), True, self._states)
        return tau

    def _tick(self, q, v, q_d, v_d, a_d, dt, adapt, states):
        """The law at one state: (tau, theta_new), tau a new array, the estimate pi_new in states[1 - current]
        (pi_new = pi_hat of states[current] without adapt) and rate <- pi_hat_dot; with adapt the estimates
        advanced by dt and projected, tau with them, and the controller takes pi_new (current <- 1 - current: the
        tick's COMMIT); else dt = 0 and tau with pi_hat.  A ValueError names what is not finite, nothing taken."""
        control = self._control
        control[kernel.DT] = dt
        control[kernel.MODE] = self._modes[adapt]
        tau = _empty(self._shapes[1][0])
        try:                                        # float64 arrays of the tick's shapes, straight in (else SHAPE)
            status = self._call(*self._fixed, states, q, v, q_d, v_d, a_d, tau) if self._direct else kernel.SHAPE
        except TypeError:
            status = kernel.SHAPE
        if status or self._numpy[adapt]:
            return self._checked_tick(status, (q, v, q_d, v_d, a_d), dt, adapt, states, tau)
        return tau, self.theta_hat

    def _checked_tick(self, status, state, dt, adapt, states, tau):
        """_tick after the tick's status: the inputs converted and checked, each culprit named, and the tick again
        (SHAPE), the ValueError of a refusal, or the numpy calls that finish the tick (_numpy_tick)."""
        if status == kernel.SHAPE:
            state = self._state(*state)
            status = self._call(*self._fixed, states, *state, tau)
        if status:
            self._refuse(status, state)
        if self._numpy[adapt]:
            return self._numpy_tick(state, dt, adapt, states, tau)
        return tau, self.theta_hat

    def _numpy_tick(self, state, dt, adapt, states, tau):
        """_tick where the drives' torque or the projection are numpy calls, after the compiled tick up to the
        regressor (kernel.SLIDING): the drives (_drive_torque), the step, the projection and the torque."""
        theta = self._drive_torque(dt if adapt else 0.0) if self._numpy_drives else self.theta_hat
        p, current = 10 * self.robot.nbodies, self._current
        pi_hat, bases = kernel.state_views(states[current], p)
        pi_new, bases_new = kernel.state_views(states[1 - current], p)
        bases_new[:] = bases
        compiled = self._mode & kernel.PROJECT and adapt
        status = kernel.step(self._Y, self._s, pi_hat, self._gain, int(self._control[kernel.BLOCK]), dt,
                             self._whitening if compiled else self._whitening[:0], self._S_inv, self._control[kernel.FLOOR],
                             bases_new, self._g, self._work, self._rate, pi_new)
        if not status:
            if adapt and not self._compiled_projection:
                pi_new[:] = check_vector("the projection's result", self._projection(pi_new.copy()), p)
            status = kernel.torque(self._Y, pi_new, self._K_D, self._vectors, COULOMB_VELOCITY, tau)
        if status:
            self._refuse(kernel.STEP_STATUS + status, state)
        if adapt:
            self._control[kernel.CURRENT] = 1 - current
        return tau, theta

    def _refuse(self, status, state):
        """The ValueError of the tick's status (nothing of the state taken)."""
        q, v, q_d, v_d, a_d = state
        if status == kernel.SHAPE:
            self._state(q, v, q_d, v_d, a_d)                    # raises, naming the input
        if status == kernel.BAD_QUATERNION:
            self._space.difference(q, q_d)                       # raises, naming the quaternion
        if status == kernel.BAD_REGRESSOR:
            self.robot.regressor(q, v, self._v_r, self._a_r)    # raises, naming the input
            raise ValueError("the regressor refused this state")
        if status == kernel.STEP_STATUS + kernel.NOT_FINITE_ESTIMATE:
            raise ValueError("pi_hat + dt pi_hat_dot is not finite (dt, Gamma or the state too large): "
                             "the estimate is unchanged")
        if status == kernel.STEP_STATUS + kernel.NOT_FINITE_TORQUE:
            raise ValueError("tau is not finite (the estimate or the state too large): the estimate is unchanged")
        raise ValueError(f"{_INPUTS[status - 1]} is not finite" if status != NOT_FINITE_RESULT else
                         "the sliding variables overflow float64 (Lambda e too large)")

    def _state(self, q, v, q_d, v_d, a_d):
        """The tick's inputs as C-contiguous float arrays, their shapes checked; with a planar joint, e <- q_d (-) q
        (ConfigurationSpace.difference) here rather than in the tick."""
        state = q, v, q_d, v_d, a_d
        if not all([type(x) is _ND and x.dtype is _F64 and x.shape == shape and x.flags.c_contiguous
                    for x, shape in zip(state, self._shapes)]):
            state = tuple(np.ascontiguousarray(x, dtype=float) for x in state)
            if tuple(x.shape for x in state) != self._shapes:
                name, x, shape = next(t for t in zip(_INPUTS, state, self._shapes) if t[1].shape != t[2])
                raise ValueError(f"{name} has shape {x.shape}, expected {shape}")
            q, v, q_d, v_d, a_d = state
        if not self._direct:
            for name, x in (("q", q), ("q_d", q_d)):
                if not np.isfinite(x).all():
                    raise ValueError(f"{name} is not finite")
            self._space.difference(q, q_d, out=self._e)
        return state

    def _drive_torque(self, dt):
        """theta_hat_d advanced by dt, and the drives' torque that _torque does not compute itself into self._extra
        (zeros, set at construction, when neither case applies): adapted drives, theta_new = P(theta_hat_d - dt
        Gamma_d Y_d^T s), extra = Y_d theta_new (module docstring); else a friction model object's tau_f(v_r)."""
        if self.drives is not None:
            Y_d = drive_regressor(self.robot, self._v_r, self._a_r, self.armature, self.drives, smooth=True)
            theta = self._drive_projected(self.theta_hat - dt * self.Gamma_drives * (Y_d.T @ self._s))
            if not np.all(np.isfinite(theta)):
                raise ValueError("theta_hat + dt theta_hat_dot is not finite (dt, Gamma_drives or the state too "
                                 "large): the estimates are unchanged")
            self._extra[:] = Y_d @ theta
            return theta
        self._extra[:] = self.robot.friction_torque(self._v_r)
        return self.theta_hat

    def lyapunov(self, q, v, q_d, v_d, pi, pi_hat=None):
        """V = 1/2 s^T M(q; pi) s + 1/2 (pi_hat - pi)^T Gamma^-1 (pi_hat - pi) for the true parameters pi (10 nb,).

        M(q; pi) is the true robot's, from the regressor at rest: Y(q, 0, 0, s) pi = M s + g and Y(q, 0, 0, 0) pi = g.
        s does not depend on the reference acceleration. pi_hat: self.pi_hat if None.
        """
        pi = check_vector("pi", pi, 10 * self.robot.nbodies)
        pi_hat = self.pi_hat if pi_hat is None else pi_hat
        s = self.sliding(q, v, q_d, v_d, np.zeros(self.robot.nv)).s
        q, zero = np.asarray(q, dtype=float), np.zeros(self.robot.nv)
        M_s = (self.robot.regressor(q, zero, zero, s) - self.robot.regressor(q, zero, zero, zero)) @ pi
        pi_tilde = pi_hat - pi
        return 0.5 * s @ M_s + 0.5 * pi_tilde @ self._Gamma_inv @ pi_tilde


class TrackingRecord(NamedTuple):
    """A closed loop as its controller saw it: at each answered tick t (K,), the tracking error e (K, nv) and its
    rate e_dot (K, nv) in model joint order, and the estimate pi_hat (K, 10 nb) after that tick's update."""

    t: np.ndarray
    e: np.ndarray
    e_dot: np.ndarray
    pi_hat: np.ndarray


def _check_dt(dt):
    dt = float(dt)
    if not (math.isfinite(dt) and dt >= 0):
        raise ValueError(f"dt must be finite and non-negative, got {dt}")
    return dt


def excitation_gain(model, trajectory, K_D, period, c, eps=1e-3, samples=50):
    """Gamma = c (Phi + eps tr(Phi G^-1) / p G)^-1, Phi = mean over one period of Y^T K_D^-1 Y along the reference.

    model: the controller's Robot (nominal parameters); trajectory: t -> Reference (q, v, a) for an array of
    times; K_D: (nv, nv) damping; period: seconds of reference to average over; c: the adaptation rate [1/s].

    With s ~ K_D^-1 Y pi_tilde the estimate moves as pi_tilde' ~ -Gamma Phi pi_tilde, so every well-excited
    combination of parameters adapts at about the rate c, however unevenly the trajectory excites them; the
    pullback metric G of the nominal model (InertiaMetric) regularizes the combinations it does not excite.
    Designed from the nominal model and the reference only, as one would on a real robot.
    """
    ref = trajectory(np.linspace(0.0, period, samples, endpoint=False))
    Y = model.regressor(ref.q, ref.v, ref.v, ref.a)                           # (samples, nv, p)
    Phi = np.einsum("tij,ik,tkl->jl", Y, np.linalg.inv(K_D), Y) / samples
    G = InertiaMetric(model.parameters).matrix()
    Gamma = c * np.linalg.inv(Phi + eps * np.trace(Phi @ np.linalg.inv(G)) / len(G) * G)
    return 0.5 * (Gamma + Gamma.T)
