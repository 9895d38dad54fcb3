"""Composite adaptive control: the library's default adaptive controller, and the filtered momentum regressor.

Slotine & Li, "Composite adaptive control of robot manipulators", Automatica 25(4), 1989, with the tracking law of
adaptive.py (e = q_d (-) q, qdot_r = qdot_d + Lambda e, qddot_r = qddot_d + Lambda edot, s = qdot - qdot_r):

    tau = Y(q, qdot, qdot_r, qddot_r) pi_hat + d - K_D(q) s,         K_D(q) = D^1/2 M(q; pi_ref) D^1/2, D = diag(kd)
    (Omega + mu H(pi_hat)) pi_hat_dot = -(Y^T s + W^T R eps),        eps = W pi_hat - tau_f,  R = rho M(q; pi_ref)^-1
    Omega_dot = -beta (Omega - Omega_0) + W^T R W,                   Omega_0 = G(pi_ref) / gamma

- The prediction error eps needs no acceleration.  The momentum is linear in pi (paper 002, Prop. 1),
  p = M qdot = Y_p pi, and its rate is pdot = tau + C^T qdot - g = tau + Y_h pi (Mdot = C + C^T), both from
  Robot.momentum_regressor.  Filtered by lambda / (s + lambda) (MomentumFilter), F[pdot] = lambda (p - F[p]) and

      W pi = F[tau] = tau_f,     W = lambda (Y_p - F[Y_p]) - F[Y_h],

  so eps = W (pi_hat - pi): every joint's filtered torque, predicted by the estimate, against the one applied.
  The drives of the robot model (armature A, friction tau_f: drives.py) are known, not adapted: the momentum is
  Y_p pi + A qdot and its rate tau - tau_f(qdot) + Y_h pi, so W pi = F[tau] - F[tau_f] - lambda A (qdot - F[qdot]),
  and the torque has their part d = A qddot_r + tau_f(qdot_r) (as adaptive.SlotineLi's feedforward; d = 0 without
  drives).
  R weighs it as the acceleration error it would cause (M(q; pi_ref)^-1), so a light wrist counts as much as the
  shoulder.
- Omega is a least-squares information matrix: the prior Omega_0 (the affine-invariant metric G of InertiaMetric at
  the reference parameters pi_ref, over gamma) plus the prediction errors' information, forgotten at the rate
  beta.  Every excited combination of parameters then converges at about the same rate whatever its size, where a
  fixed gain learns a light tool's parameters orders of magnitude slower than the shoulder's.
- mu H(pi_hat), H the Hessian of -sum_k log det J(pi_k) (adaptive.log_det_metric), is a log-det barrier: it grows
  without bound as a body's pseudo-inertia J nears singular, so the estimate stays physical (J > 0) without a
  projection (the natural adaptation law of Lee, Kwon & Park, "Natural adaptive control law for robot
  manipulators", IROS 2018, and Wensing & Slotine, "Beyond convexity", 2018, here beside a least-squares metric).
  A projection in another metric than Omega's is not safe: measured, the least-squares law with
  InertiaMetric.project diverges in MuJoCo on ur5 (benchmarks/bench_adaptive.py).
- pi_ref is the initial estimate plus a rated payload on the tool body (RelativeGains: a solid sphere of that mass
  at the body's origin): the scale a body may have, which sets how fast it adapts (Omega_0), the damping's inertia
  and R.  From a URDF alone, a 1.5 kg tool on a 0.17 kg wrist link would adapt 100x too slowly and get 10x too
  little damping.

Lyapunov function (pi the true parameters, pi_tilde = pi_hat - pi, J(pi_k) > 0):

    V = 1/2 s^T M s + 1/2 pi_tilde^T Omega pi_tilde + mu d_F(pi, pi_hat),     (d_F: adaptive.log_det_divergence)
    Vdot = -s^T K_D s - 1/2 eps^T R eps - 1/2 beta pi_tilde^T (Omega - Omega_0) pi_tilde <= 0,

using M sdot + C s + K_D s = Y pi_tilde (Mdot - 2C skew), d/dt d_F = pi_tilde^T H pi_hat_dot, and
Omega - Omega_0 >= 0.  ``law="gradient"`` keeps Omega = Omega_0 (a fixed gain; the prediction term optional) and
projects onto the physical set in Omega_0's metric instead of the barrier (InertiaMetric.project: V still falls);
``law="natural"`` uses mu H alone (Omega = 0).

Sampled at a rate 1/dt (``update``), the filters are integrated exactly (tau held over the tick, the regressors
linear between ticks), Omega's decay exactly, and the estimate by one step taken before the torque (as
SlotineLi.update).  Whatever the gains, the step is bounded in the metric of the estimate itself: no eigenvalue of
J_k^-1/2 dJ_k J_k^-T/2 exceeds 0.1 in magnitude (flag ``step_limited``), so every body stays physical (J > 0) and
finite, and a least-squares fit of the first few ticks cannot throw a body against the boundary before the
barrier acts (measured: with 0.5, panda adapting its payload alone sat there, 0.09 rad off); Lambda and kd are
capped at 1/(2 dt) (kd also by how much M(q; pi_ref) exceeds the estimated inertia; flag ``gains_capped``): a loop
sampled more slowly than its gains cannot be stabilized.  The torque's M_hat a_r = M_hat (a_d + Lambda (v_d - v)) is
a velocity feedback of gain Lambda M_hat against the true inertia: where the estimate outgrows both the initial one
and the reference (a friction the model lacks, learnt as inertia), Lambda dt M_jj(q; pi_hat) / max(M_jj(q; pi_0),
M_jj(q; pi_ref)) is capped at 0.5 too, checked once Lambda dt exceeds a quarter of its bound (measured: MuJoCo's
xArm7 with its URDF's damping and frictionloss, whose soft friction the model's Coulomb law over-states, a 1.5 kg
tool, Lambda x10 at 250 Hz: the estimate's M_77 grew to 12x the arm's and the loop diverged after 4.2 s; capped,
it stays finite).  A torque that is not finite is refused (ValueError) and
the state is left as it was.
"""
from typing import NamedTuple

import numpy as np

from ..configuration import ConfigurationSpace
from ..spatial import parameters_from_inertial
from . import _composite_call as fused, _composite_tick as kernel, _ct_tick
from ._body_steps import FLOOR, STEP_BOUND, inverse_factors  # noqa: F401 (the law's bounds, named here)
from ._composite_tick import GAIN_BOUND  # noqa: F401 (the gains' bound, named here)
from ..inertia import InertiaMetric, log_det_divergence, pseudo_inertia
from .adaptive import NOT_FINITE_RESULT, Sliding, _check_dt, sliding
from .computed_torque import check_vector, gain_matrix
from .momentum_filter import MomentumFilter


def reference_parameters(robot, pi_hat0, payload, body, radius=0.1):
    """pi_ref (10 nb,): pi_hat0 plus a payload of ``payload`` kg on ``body`` (name or index), a solid sphere of
    radius ``radius`` m centred at the body's origin: the scale the tool body may have."""
    k = robot.body_names.index(body) if isinstance(body, str) else int(body)
    pi_ref = np.array(pi_hat0, dtype=float)
    pi_ref[10 * k:10 * k + 10] += parameters_from_inertial(payload, np.zeros(3), 0.4 * payload * radius**2 * np.eye(3))
    return pi_ref


def default_payload_body(robot):
    """The tool body: the last body (parents first) moved by a revolute or continuous joint -- on an arm its wrist,
    past a gripper's prismatic fingers."""
    for joint in reversed(robot.model.joints):
        if joint.type in ("revolute", "continuous"):
            return robot.body_names[joint.body]
    raise ValueError("the robot has no revolute joint: give payload_body")


class Status(NamedTuple):
    """What the last update did: the step was bounded in the inertia metric (step_limited), Lambda or kd were
    capped (gains_capped)."""

    step_limited: bool
    gains_capped: bool


class CompositeSlotineLi:
    """Composite adaptive controller (module docstring), holding pi_hat (10 nb,), the filters and Omega as state.

    robot: the controller's model (kinematics; its parameters unused); Lambda [1/s]: scalar, (nv,) or (nv, nv);
    kd [1/s]: scalar or (nv,), K_D(q) = D^1/2 M(q; pi_ref) D^1/2; pi_hat: the initial estimate (10 nb,);
    pi_ref: the reference parameters (10 nb,) (reference_parameters); gamma: the prior adaptation gain, scalar or
    (nb,); prediction [s]: rho of R = rho M(q; pi_ref)^-1, 0 for Slotine-Li's tracking law alone; memory [s]:
    1 / beta; cutoff [Hz]: the momentum filter's; barrier: mu gamma; law: "least_squares" (the default),
    "gradient" (Omega = Omega_0, projected) or "natural" (mu H(pi_hat) alone, mu = 1 / gamma); adapted: the
    bodies (names or indices) whose parameters adapt, None for all; the others keep pi_hat0.
    """

    LAWS = ("least_squares", "gradient", "natural")

    def __init__(self, robot, Lambda, kd, pi_hat, pi_ref, gamma=1.0, prediction=30.0, memory=1.0, cutoff=2.0,
                 barrier=3e-3, law="least_squares", adapted=None):
        if law not in self.LAWS:
            raise ValueError(f"law must be one of {self.LAWS}, got {law!r}")
        for name, value in (("prediction", prediction), ("barrier", barrier)):
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be finite and non-negative, got {value}")
        if not (np.isfinite(memory) and memory > 0):
            raise ValueError(f"memory must be a positive time in s, got {memory}")
        nb = robot.nbodies
        self.robot, self.law_name = robot, law
        bodies = range(nb) if adapted is None else [robot.body_names.index(b) if isinstance(b, str) else int(b)
                                                    for b in adapted]
        self._adapted = np.array([10 * k + j for k in sorted(set(bodies)) for j in range(10)], dtype=np.intp)
        self.pi_ref = check_vector("pi_ref", pi_ref, 10 * nb)
        self.reference = robot.with_parameters(self.pi_ref)          # M(q; pi_ref): damping and R
        self.metric = InertiaMetric(self.pi_ref)
        self._buffers()
        self.prediction, self.beta, self.barrier = float(prediction), 1.0 / float(memory), float(barrier)
        self.set_gains(Lambda, kd, gamma)
        self.filter = MomentumFilter(robot, cutoff)
        # strictly physical from the start (the barrier and the step bound need J > 0): the initial estimate is
        # projected onto J_k >= 1e-6 J0_k, which moves a physical estimate by at most that much
        pi_hat = self.metric.project(check_vector("pi_hat", pi_hat, 10 * nb), floor=1e-6)
        self.initial = robot.with_parameters(pi_hat)                   # M(q; pi_hat0), for kd's cap
        self.status = Status(False, False)
        self._control[fused.LAM] = self.filter.lam
        self._plan()
        self._state[1][:], self._state[2][:] = self.Omega_0, pi_hat

    def _buffers(self):
        """The tick's data (_composite_call.cs_views: the constants -- Lambda, kd, Omega_0 and mu are views of it --,
        the robot calls' buffers and the work array), made once, and the state's two copies: a tick reads one and
        writes the other, which it takes only when it succeeds (_composite_call.cs_tick)."""
        robot, nv, p = self.robot, self.robot.nv, self.pi_ref.size
        nb, m = robot.nbodies, len(self._adapted)
        self._states = np.zeros((2, kernel.state_size(nv, p)))
        # (F, Omega, pi_hat, error, tau) of each copy, viewed again as numpy's own float64: the arrays numba
        # returns carry a dtype equal to it but not it (the robot's fast calls take both; a user's `is` does not)
        self._copies = [tuple(y.view(np.float64) for y in kernel.state_views(x, nv, p)) for x in self._states]
        self._data = np.zeros(fused.cs_size(nv, robot.nq, nb, m))
        (self._control, self.Lambda, self.kd, self.Omega_0, self.mu, S, S_inv, drive, self._q, self._v,
         self._vectors, self._Lambda_t, self._kd_t, self._M_ref, self._M_0, _, self._f_v, self._d, self._Y,
         self._Y_p, self._Y_h, self._M_hat, _) = fused.cs_views.py_func(self._data, nv, robot.nq, nb, m)
        self._e, self._v_r, self._a_r, self._s = (self._vectors[i] for i in (0, 2, 3, 4))
        self._law = self.LAWS.index(self.law_name)
        S[:], S_inv[:] = self.metric.S, self.metric.S_inv
        self._S, self._S_inv = S, S_inv
        drives = robot.model.drives
        self._drives = (fused.RIGID if drives.rigid else fused.MODEL if drives.model is not None
                        else fused.COMPILED)
        drive[0] = robot.armature
        if self._drives == fused.COMPILED:
            drive[1], drive[2] = drives.damping, drives.friction

    def _plan(self):
        """The robot calls of the tick (_composite_call.cs_tick's plans: the robot's regressor and momentum
        regressor, M(q; pi_ref), M(q; pi_0), M(q; pi_hat) on body records of its own, on the data's buffers) and the
        tick's fast call."""
        robot, nv, nq, nb, m = self.robot, self.robot.nv, self.robot.nq, self.robot.nbodies, len(self._adapted)
        space = self._space = ConfigurationSpace(robot.model)
        mode = _ct_tick.difference_mode(space)
        self._direct = mode != _ct_tick.PYTHON                      # the tick alone (planar: e = space.difference)
        self._fast = self._direct and self._drives != fused.MODEL  # (a friction model: two calls, _checked_update)
        header = (nv, nq, nb, mode, self._law, m, self._drives)
        q, v = self._q, self._v
        estimate = fused.record_layout(robot.model.bodies.dtype)        # write_parameters' header
        calls = ((robot, [("regressor", (q, v, self._v_r, self._a_r), (self._Y,)),
                          ("momentum_regressor", (q, v), (self._Y_p, self._Y_h))], header),
                 (self.reference, [("mass_matrix", (q,), (self._M_ref,))], header),
                 (self.initial, [("mass_matrix", (q,), (self._M_0,))], header),
                 (robot, [("mass_matrix", (q,), (self._M_hat,))], estimate))
        tables, self._kept = zip(*[_ct_tick.plan(r.model, c, h, space) for r, c, h in calls])  # (kept: the plans
        plans = np.zeros((5, max(len(t) for t in tables), max([m] + [t.shape[1] for t in tables])), dtype=np.int64)
        for i, table in zip((fused.ROBOT, fused.REFERENCE, fused.INITIAL, fused.ESTIMATE), tables):
            plans[i, :table.shape[0], :table.shape[1]] = table                                 # point into them)
        plans[fused.ADAPTED, 0, :m] = self._adapted
        self._fixed = self._kept[0][:2] + (plans, self._data)
        example = (plans, self._data, self._states, q, v, q, v, v, v)
        self._call = _ct_tick.tick_entry(fused.cs_tick, fused.cs_entry, example, 5)
        self._filters = [x[0] for x in self._copies]

    @staticmethod
    def compile_tick():
        """Compile (or load from the cache) update's compiled tick, without a robot: its C entry is the same for
        every robot.  What a first run can do in one process while others compile the robot's kernels (the demo's
        and `robot-dynamics compile`'s workers); nothing to do without the C extension, where the tick is compiled
        for its argument types at the first controller."""
        if _ct_tick.FAST_CALLS:
            _ct_tick.entry_address(fused.cs_entry)

    @property
    def prediction(self):
        """rho [s] of R = rho M(q; pi_ref)^-1 (the tick's data holds it)."""
        return float(self._control[fused.RHO])

    @prediction.setter
    def prediction(self, rho):
        self._control[fused.RHO] = rho

    @property
    def beta(self):
        """The information's forgetting rate 1 / memory [1/s] (the tick's data holds it)."""
        return float(self._control[fused.BETA])

    @beta.setter
    def beta(self, beta):
        self._control[fused.BETA] = beta

    # --- gains -----------------------------------------------------------------------------------------------

    def set_gains(self, Lambda=None, kd=None, gamma=None):
        """Change Lambda, kd or gamma (as in the constructor); the information gathered so far is kept."""
        nv, nb = self.robot.nv, self.robot.nbodies
        if Lambda is not None:
            self.Lambda[:] = gain_matrix(Lambda, nv, "Lambda")
            self._control[fused.RADIUS] = np.max(np.abs(np.linalg.eigvals(self.Lambda)))
        if kd is not None:
            kd = np.broadcast_to(np.asarray(kd, dtype=float), (nv,))
            if not np.all(np.isfinite(kd) & (kd > 0)):
                raise ValueError(f"kd must be positive, got {kd}")
            self.kd[:] = kd
        if gamma is not None:
            gamma = np.broadcast_to(np.asarray(gamma, dtype=float), (nb,))
            if not np.all(np.isfinite(gamma) & (gamma > 0)):
                raise ValueError(f"gamma must be positive, got {gamma}")
            old = self.Omega_0.copy() if hasattr(self, "gamma") else None
            self.gamma = gamma.copy()
            if self.law_name == "natural":
                self.Omega_0[:], self.mu[:] = 0.0, 1.0 / gamma
            else:
                self.Omega_0[:] = np.linalg.inv(self.metric.gain(gamma))
                self.mu[:] = 0.0 if self.law_name == "gradient" else self.barrier / gamma
            if old is not None:
                self._state[1][:] += self.Omega_0 - old

    # --- the law ---------------------------------------------------------------------------------------------

    @property
    def _current(self):
        return int(self._control[fused.CURRENT])

    @property
    def _state(self):
        """The current state's views (F, Omega, pi_hat, prediction_error, tau held): _composite_tick.state_views."""
        return self._copies[self._current]

    @property
    def _pi_hat(self):
        return self._state[2]

    @property
    def pi_hat(self):
        """The current estimate (10 nb,), physically consistent: a new array."""
        return self._state[2].copy()

    @property
    def Omega(self):
        """The information matrix (10 nb, 10 nb): a new array (the state holds its lower triangle)."""
        lower = np.tril(self._state[1])
        return lower + np.tril(lower, -1).T

    @property
    def prediction_error(self):
        """W pi_hat - tau_f at the last update (nv,), N m: a new array."""
        return self._state[3].copy()

    @property
    def _tau(self):
        """The torque held since the last update (None before the first)."""
        return self._state[4] if self.filter.started else None

    def min_eigenvalue(self):
        """The smallest eigenvalue of any body's pseudo-inertia J(pi_hat_k) (> 0: every body physical)."""
        return float(np.min(np.linalg.eigvalsh(self._J(self._pi_hat))))

    def sliding(self, q, v, q_d, v_d, a_d, Lambda=None):
        """e, edot, v_r, a_r, s (adaptive.sliding) with this controller's Lambda."""
        return sliding(self.robot, self.Lambda if Lambda is None else Lambda, q, v, q_d, v_d, a_d)

    def _J(self, pi):
        return pseudo_inertia(np.reshape(pi, (-1, 10)))

    def _rate(self, g, pi_hat, Omega):
        """pi_hat_dot = -(Omega + mu H(pi_hat))^-1 g, or -Gamma_0 g for the gradient law, over the adapted
        bodies' parameters (zero for the others; _composite_tick.rate)."""
        law = self.LAWS.index(self.law_name)
        if law == kernel.GRADIENT:
            Omega, L_inv = self.Omega_0, np.empty((0, 4, 4))
        else:
            L_inv = inverse_factors(pi_hat)
        return kernel.rate(g, L_inv, np.ascontiguousarray(Omega), self.mu, self._adapted, law)

    def law(self, q, v, q_d, v_d, a_d, z):
        """The continuous-time closed loop's controller: (tau (nv,), zdot) for the state z = state_vector() at (q, v).

        For integrating with the robot (Simulator.run_with_state); Omega and the filters are part of z.  The
        gradient law's projection is not applied here (it is a sampled-time safeguard).
        """
        pi_hat, x_p, x_h, x_tau, Omega, x_v, x_f = self._unpack(z)
        sl = self.sliding(q, v, q_d, v_d, a_d)
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        Y = self.robot.regressor(q, v, sl.v_r, sl.a_r)
        M_ref = self.reference.mass_matrix(q)
        tau = kernel.torque(Y, pi_hat, self._drive_torque(sl), M_ref, self.kd, sl.s)
        Y_p, Y_h = self.robot.momentum_regressor(q, v)
        lam, nv = self.filter.lam, self.robot.nv
        if not self.filter.drives:
            x_v, x_f = v, np.zeros(nv)
        W, tau_f = np.empty_like(Y_p), np.empty(nv)
        kernel.filtered_regressor(lam, Y_p, x_p, x_h, x_tau, v, x_v, x_f, self.filter.armature, W, tau_f)
        L = kernel.cholesky(M_ref)
        pi_dot = self._rate(kernel.gradient(Y, sl.s, W, W @ pi_hat - tau_f, L, self.prediction), pi_hat, Omega)
        if self.law_name == "least_squares":
            Omega_dot = np.empty_like(Omega)                    # -beta (Omega - Omega_0) + W^T R W
            kernel.information(L, self.prediction, W, -self.beta, Omega - self.Omega_0, np.zeros_like(Omega),
                               Omega_dot)
        else:
            Omega_dot = np.zeros_like(Omega)
        z_dot = [pi_dot, (lam * (Y_p - x_p)).ravel(), (lam * (Y_h - x_h)).ravel(), lam * (tau - x_tau),
                 Omega_dot.ravel()]
        if self.filter.drives:
            z_dot += [lam * (v - x_v), lam * (self.robot.friction_torque(v) - x_f)]
        return tau, np.concatenate(z_dot)

    def _drive_torque(self, sl):
        """d = armature a_r + tau_f(v_r), the known drives' part of the torque (module docstring); 0 without."""
        if not self.filter.drives:
            return 0.0
        return self.robot.armature * sl.a_r + self.robot.friction_torque(sl.v_r)

    def state_vector(self, q, v):
        """z = (pi_hat, F[Y_p], F[Y_h], F[tau], Omega) flattened (with drives, then F[v], F[tau_f]), with the
        filters started at (q, v)."""
        Y_p, _ = self.robot.momentum_regressor(np.asarray(q, dtype=float), np.asarray(v, dtype=float))
        parts = [self._pi_hat, Y_p.ravel(), np.zeros(Y_p.size), np.zeros(self.robot.nv), self.Omega.ravel()]
        if self.filter.drives:
            parts += [np.asarray(v, dtype=float), np.zeros(self.robot.nv)]
        return np.concatenate(parts)

    def _unpack(self, z):
        nv, p = self.robot.nv, 10 * self.robot.nbodies
        sizes = np.cumsum([p, nv * p, nv * p, nv, p * p, nv])
        pi_hat, x_p, x_h, x_tau, Omega, x_v, x_f = np.split(np.asarray(z, dtype=float), sizes)
        return pi_hat, x_p.reshape(nv, p), x_h.reshape(nv, p), x_tau, Omega.reshape(p, p), x_v, x_f

    def torque(self, q, v, q_d, v_d, a_d):
        """tau (nv,) with the current estimate; nothing is changed."""
        sl = self.sliding(q, v, q_d, v_d, a_d)
        q = np.asarray(q, dtype=float)
        Y = self.robot.regressor(q, np.asarray(v, float), sl.v_r, sl.a_r)
        return kernel.torque(Y, self._pi_hat, self._drive_torque(sl), self.reference.mass_matrix(q), self.kd, sl.s)

    def update(self, q, v, q_d, v_d, a_d, dt, out=None):
        """One control tick dt (s) after the last (0 at the first): the filters, Omega and the estimate advance,
        then tau (nv,) with the new estimate, a new array or written into out.  ``status`` tells what was bounded
        or capped.

        One compiled call (_composite_call.cs_tick: the robot's kernels by their C entry points, the gains, the
        law), which takes the new state only when the torque is finite.
        """
        self._control[fused.DT] = _check_dt(dt)
        tau = _empty(self._vectors.shape[1]) if out is None else out
        try:                                        # float64 arrays of the tick's shapes, straight in (else SHAPE)
            status = self._call(*self._fixed, self._states, q, v, q_d, v_d, a_d, tau) if self._fast else fused.SHAPE
        except TypeError:
            status = fused.SHAPE
        if status < 0 or status >= fused.REFUSED:
            status, tau = self._checked_update(status, (q, v, q_d, v_d, a_d), out)
        self.filter.state = self._filters[self._current]
        self.status = _STATUSES[status]
        return tau

    def _checked_update(self, status, state, out):
        """update after the fast call's status: the inputs converted and checked (each culprit named), with a
        planar joint e = q_d (-) q by the space, with a friction model its terms between two calls (the first
        stopped after the regressors: SLIDING), and the ValueError of a refusal.  Returns (status, tau)."""
        nv, nq = self.robot.nv, self.robot.nq
        q, v, q_d, v_d, a_d = state = tuple(_vector(name, x, n) for name, x, n in
                                            zip(("q", "v", "q_d", "v_d", "a_d"), state, (nq, nv, nq, nv, nv)))
        if out is not None and np.shape(out) != (nv,):
            raise ValueError(f"out has shape {np.shape(out)}, expected ({nv},)")
        tau, control = np.empty(nv), self._control
        if not self._direct and np.isfinite(q).all() and np.isfinite(q_d).all():
            self._space.difference(q, q_d, out=self._e)
        if self._drives == fused.MODEL:
            control[fused.MODE] = fused.SLIDING
            try:
                status = self._call(*self._fixed, self._states, *state, tau)
            finally:
                control[fused.MODE] = 0
            if status == kernel.OK:
                self._f_v[:] = self.robot.friction_torque(v)
                self._d[:] = self.robot.armature * self._a_r + self.robot.friction_torque(self._v_r)
        if status == kernel.OK or status == fused.SHAPE:
            status = self._call(*self._fixed, self._states, *state, tau)
        if status < 0 or status >= fused.REFUSED:
            self._refuse(status - fused.REFUSED, state)
        if out is None:
            return status, tau
        out[...] = tau
        return status, out

    def _refuse(self, code, state):
        """The ValueError of the tick's refusal code (nothing of the state taken), the checks in the order of the
        Python route before the tick was compiled, each naming its culprit."""
        if code == fused.TICK_STATUS + kernel.NOT_POSITIVE:
            raise ValueError("no torque for this state: Matrix is not positive definite")
        if code == fused.TICK_STATUS + kernel.NOT_FINITE_SYSTEM:
            raise ValueError(f"no torque for this state: {kernel.NOT_FINITE_SYSTEM_MESSAGE}")
        if code == fused.TICK_STATUS + kernel.NOT_FINITE:
            raise ValueError("the torque is not finite: the loop cannot be stabilized at these gains and rate")
        q, v, q_d, v_d, a_d = state
        self.reference.mass_matrix(q)
        if self._control[fused.DT] > 0:
            self.initial.mass_matrix(q)
        if self._space.lie:
            self._space.difference(q, q_d)
        if 1 <= code <= NOT_FINITE_RESULT:
            raise ValueError(f"{('q', 'v', 'q_d', 'v_d', 'a_d')[code - 1]} is not finite"
                             if code != NOT_FINITE_RESULT else
                             "the sliding variables overflow float64 (Lambda e too large)")
        self.robot.regressor(q, v, self._v_r, self._a_r)
        self.robot.momentum_regressor(q, v)
        raise ValueError("the robot's kernels refused this state")

    def adapt(self, q, v, q_d, v_d, a_d, dt):
        """update without the torque; returns pi_hat (a new array)."""
        self.update(q, v, q_d, v_d, a_d, dt)
        return self.pi_hat

    def lyapunov(self, q, v, q_d, v_d, pi, z=None):
        """V = 1/2 s^T M(q; pi) s + 1/2 pi_tilde^T Omega pi_tilde + mu d_F(pi, pi_hat) for the true parameters pi.

        z: a state_vector (the controller's own state if None).  M(q; pi) s = Y_p(q, s) pi.
        """
        pi = check_vector("pi", pi, 10 * self.robot.nbodies)
        if z is None:
            pi_hat, Omega = self._pi_hat, self.Omega
        else:
            pi_hat, _, _, _, Omega, _, _ = self._unpack(z)
        s = self.sliding(q, v, q_d, v_d, np.zeros(self.robot.nv)).s
        M_s = self.robot.momentum_regressor(np.asarray(q, dtype=float), s)[0] @ pi
        pi_tilde = pi_hat - pi
        V = 0.5 * s @ M_s + 0.5 * pi_tilde @ Omega @ pi_tilde
        if np.any(self.mu > 0):
            nb = self.robot.nbodies
            V += sum(self.mu[k] * log_det_divergence(pi[10 * k:10 * k + 10], pi_hat[10 * k:10 * k + 10])
                     for k in range(nb) if self.mu[k] > 0)
        return V


# by cs_tick's status: LIMITED + FLAG_CAPPED
_STATUSES = (Status(False, False), Status(True, False), Status(False, True), Status(True, True))
_empty = np.empty


def _vector(name, x, n):
    """x as a C-contiguous float64 (n,) array (its finiteness is the tick's to check), or ValueError naming it."""
    x = np.ascontiguousarray(x, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"{name} has shape {x.shape}, expected ({n},)")
    return x


class RelativeGains(NamedTuple):
    """The default adaptive controller's settings, from what a user knows; ``slotine_li`` builds it (what the demo
    and adaptive_controller_node run).

    bandwidth [Hz]: Lambda = kd = 2 pi bandwidth unless given: the tracking error's two poles at -2 pi bandwidth
    with the model right;
    Lambda [1/s]: of s = v - v_d - Lambda e, scalar or (nv,);
    kd [1/s]: K_D(q) = D^1/2 M(q; pi_ref) D^1/2, D = diag(kd), so kd is a rate whatever the joint; scalar or (nv,);
    gamma: the prior adaptation gain, Omega_0 = G(pi_ref) / gamma (each body relative to its own scale); scalar or
    (nbodies,);
    payload [kg]: the rated payload, carried by payload_body; None: a quarter of the robot's moving mass in the
    initial estimate (collaborative arms carry 15-30 % of their mass);
    payload_body: name or index; None: default_payload_body (the wrist);
    adapt: "all" bodies, or "payload": the payload body alone, the others kept as in pi_hat0 -- for a description
    whose links are right, when the payload's mass itself is wanted: a mass on the last joint's axis moves no
    torque differently from the same mass on the link before it (Gautier & Khalil's regrouping), so with every
    body adapting, how the payload's mass splits between the two is the prior's choice, not the data's;
    prediction [s]: as CompositeSlotineLi's; None: 30 s for the least-squares law, 0 for the others, whose fixed
    metric makes the prediction term stiff (measured: with 30 s the gradient law diverged within a second on all
    four arms of benchmarks/bench_adaptive.py);
    memory [s], cutoff [Hz], barrier, law: as CompositeSlotineLi's.
    """

    Lambda: object = None
    kd: object = None
    gamma: object = 1.0
    bandwidth: float = 2.0
    payload: float | None = None
    payload_body: object = None
    prediction: float | None = None
    memory: float = 1.0
    cutoff: float = 2.0
    barrier: float = 3e-3
    law: str = "least_squares"
    adapt: str = "all"

    def reference(self, robot, pi_hat0):
        """pi_ref (10 nb,): pi_hat0 with the rated payload on the tool body (reference_parameters)."""
        pi_hat0 = check_vector("pi_hat0", pi_hat0, 10 * robot.nbodies)
        payload = 0.25 * float(np.sum(pi_hat0[::10])) if self.payload is None else float(self.payload)
        if not (np.isfinite(payload) and payload >= 0):
            raise ValueError(f"payload must be a mass in kg >= 0, got {payload}")
        return reference_parameters(robot, pi_hat0, payload, self.body(robot))

    def body(self, robot):
        """The payload body's name."""
        if self.payload_body is None:
            return default_payload_body(robot)
        if isinstance(self.payload_body, str):
            if self.payload_body not in robot.body_names:
                raise ValueError(f"payload_body {self.payload_body!r} is not a moving body of the robot: "
                                 f"{robot.body_names}")
            return self.payload_body
        return robot.body_names[int(self.payload_body)]

    def rates(self):
        """(Lambda, kd) with the bandwidth's default for the one not given."""
        rate = 2 * np.pi * float(self.bandwidth)
        if not (np.isfinite(rate) and rate > 0):
            raise ValueError(f"bandwidth must be a positive frequency in Hz, got {self.bandwidth}")
        return (rate if self.Lambda is None else self.Lambda), (rate if self.kd is None else self.kd)

    def slotine_li(self, robot, pi_hat0, q0=None):
        """CompositeSlotineLi for ``robot`` (its kinematics) from the estimate pi_hat0 (10 nb,).  q0 (the first
        configuration) is accepted for the signature of earlier releases; the gains no longer depend on it."""
        Lambda, kd = self.rates()
        if self.adapt not in ("all", "payload"):
            raise ValueError(f"adapt must be 'all' or 'payload', got {self.adapt!r}")
        prediction = (30.0 if self.law == "least_squares" else 0.0) if self.prediction is None else self.prediction
        return CompositeSlotineLi(robot, Lambda, kd, pi_hat0, self.reference(robot, pi_hat0), self.gamma,
                                  prediction, self.memory, self.cutoff, self.barrier, self.law,
                                  None if self.adapt == "all" else [self.body(robot)])


__all__ = ["CompositeSlotineLi", "MomentumFilter", "RelativeGains", "Sliding", "Status", "default_payload_body",
           "reference_parameters"]
