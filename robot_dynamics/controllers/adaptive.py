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
from typing import NamedTuple

import numpy as np

from ..friction import drive_parameters, drive_physical, drive_regressor, model_class
from ..inertia import InertiaMetric, log_det_divergence, log_det_metric, pseudo_inertia  # noqa: F401 (composite's)
from .computed_torque import check_vector, gain_matrix, tracking_error


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
    """

    def __init__(self, robot, Lambda, K_D, Gamma, pi_hat=None, projection=None, drives=None, armature=True,
                 Gamma_drives=1.0, theta_hat=None):
        self.robot = robot
        self.Lambda = gain_matrix(Lambda, robot.nv, "Lambda")
        self.K_D = gain_matrix(K_D, robot.nv, "K_D")
        self.Gamma = Gamma
        self.projection = projection
        pi_hat = robot.parameters if pi_hat is None else pi_hat
        self.pi_hat = self._projected(check_vector("pi_hat", pi_hat, 10 * robot.nbodies))
        self.drives = None if drives is None else model_class(drives)
        self.armature = bool(armature)
        self._feedforward = drives is None and not robot.model.drives.rigid
        self.theta_hat = np.zeros(0)
        if self.drives is not None:
            self._levels = drive_physical(robot, self.armature, self.drives)      # kept >= 0 by the projection
            p = len(self._levels)
            start = drive_parameters(robot, self.armature, self.drives) if theta_hat is None else theta_hat
            self.theta_hat = self._drive_projected(check_vector("theta_hat", start, p))
            gain = np.broadcast_to(np.asarray(Gamma_drives, dtype=float), (p,))
            if not np.all(np.isfinite(gain) & (gain >= 0)):
                raise ValueError(f"Gamma_drives must be finite and >= 0, a scalar or ({p},)")
            self.Gamma_drives = gain.copy()

    def _drive_projected(self, theta):
        return np.where(self._levels, np.maximum(theta, 0.0), theta)

    def _drive_part(self, v_r, a_r):
        """(Y_d (nv, p_d), the drives' torque (nv,)) at the reference (module docstring); Y_d None without
        adapted drives."""
        if self.drives is not None:
            Y_d = drive_regressor(self.robot, v_r, a_r, self.armature, self.drives, smooth=True)
            return Y_d, Y_d @ self.theta_hat
        if self._feedforward:
            return None, self.robot.armature * a_r + self.robot.friction_torque(v_r)
        return None, 0.0

    @property
    def Gamma(self):
        """The adaptation gain (10 nb, 10 nb); setting it (scalar, (10 nb,) or (10 nb, 10 nb)) also sets Gamma^-1,
        which the Lyapunov function needs."""
        return self._Gamma

    @Gamma.setter
    def Gamma(self, value):
        self._Gamma = gain_matrix(value, 10 * self.robot.nbodies, "Gamma")
        self._Gamma_inv = np.linalg.inv(self._Gamma)

    def _projected(self, pi):
        return pi if self.projection is None else self.projection(pi)

    def sliding(self, q, v, q_d, v_d, a_d):
        """e, edot, qdot_r = qdot_d + Lambda e, qddot_r = qddot_d + Lambda edot, s = qdot - qdot_r (all (nv,))."""
        return sliding(self.robot, self.Lambda, q, v, q_d, v_d, a_d)

    def law(self, q, v, q_d, v_d, a_d, pi_hat=None):
        """Pure control and adaptation law: tau = Y pi_hat + (the drives' part) - K_D s (nv,), pi_hat_dot =
        -Gamma Y^T s (10 nb,) (module docstring; theta_hat_d's rate is _adapt_drives').

        pi_hat: the estimate to use, self.pi_hat if None. Nothing is modified.
        """
        pi_hat = self.pi_hat if pi_hat is None else pi_hat
        sl = self.sliding(q, v, q_d, v_d, a_d)
        Y = self.robot.regressor(np.asarray(q, float), np.asarray(v, float), sl.v_r, sl.a_r)
        return Y @ pi_hat + self._drive_part(sl.v_r, sl.a_r)[1] - self.K_D @ sl.s, -self.Gamma @ (Y.T @ sl.s)

    def torque(self, q, v, q_d, v_d, a_d):
        """tau (nv,) with the current estimate; the estimate is not changed."""
        return self.law(q, v, q_d, v_d, a_d)[0]

    def adapt(self, q, v, q_d, v_d, a_d, dt):
        """pi_hat <- P(pi_hat + dt pi_hat_dot) (and theta_hat_d likewise): one explicit Euler step of the adaptation
        law; returns pi_hat."""
        dt = _check_dt(dt)
        sl = self.sliding(q, v, q_d, v_d, a_d)
        Y = self.robot.regressor(np.asarray(q, float), np.asarray(v, float), sl.v_r, sl.a_r)
        self._adapt_drives(sl, dt)
        self.pi_hat = self._projected(self.pi_hat - dt * self.Gamma @ (Y.T @ sl.s))
        return self.pi_hat

    def _adapt_drives(self, sl, dt):
        """theta_hat_d <- P(theta_hat_d - dt Gamma_d Y_d^T s); returns the drives' torque with the new estimate."""
        Y_d, torque = self._drive_part(sl.v_r, sl.a_r)
        if Y_d is None:
            return torque
        self.theta_hat = self._drive_projected(self.theta_hat - dt * self.Gamma_drives * (Y_d.T @ sl.s))
        return Y_d @ self.theta_hat

    def update(self, q, v, q_d, v_d, a_d, dt):
        """One control tick: the estimate advanced by dt, then tau (nv,) with the new estimate (one regressor).

        Adapting before computing tau makes the sampled loop a symplectic-Euler step of the oscillation between s
        and pi_tilde (stable for omega dt < 2); the other order is explicit Euler, which amplifies it every tick.
        Keep Gamma small enough that this oscillation (omega^2 ~ |M^-1/2 Y Gamma Y^T M^-1/2|) is well below the
        tick rate: the held torque lags by dt / 2.
        """
        dt = _check_dt(dt)
        sl = self.sliding(q, v, q_d, v_d, a_d)
        Y = self.robot.regressor(np.asarray(q, float), np.asarray(v, float), sl.v_r, sl.a_r)
        self.pi_hat = self._projected(self.pi_hat - dt * self.Gamma @ (Y.T @ sl.s))
        return Y @ self.pi_hat + self._adapt_drives(sl, dt) - self.K_D @ sl.s

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
    if not (np.isfinite(dt) and dt >= 0):
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
