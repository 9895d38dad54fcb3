"""Fixed-step simulation of M(q) vdot + C(q, v) v + g(q) = tau, for fixed and floating bases.

The state is (q, v), optionally with a controller state z (e.g. the Slotine-Li estimate pi_hat) integrated
together with it. vdot = robot.forward_dynamics(q, v, tau); the configuration moves on its manifold only through
q' = robot.integrate(q, w, 1), so a floating base's quaternion stays unit.

- "rk4": classical Runge-Kutta 4 for (v, z); for q the Runge-Kutta-Munthe-Kaas form of it (Munthe-Kaas, "High
  order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29, 1999), whose two commutator terms keep order 4
  on the non-commutative SE(3) of a free joint and SE(2) of a planar one (they vanish for revolute and prismatic
  joints, where this is plain RK4).
- "euler": semi-implicit (symplectic) Euler, v' = v + h vdot(q, v), q' = integrate(q, v', h); first order.

The torque is a held array, a function tau(t, q, v) evaluated at every stage, or, with ``control_period``, that
function sampled once per period and held (zero-order hold, as a digital controller applies it).

With ``contacts`` (Robot.constrained_dynamics' set: frame names or Contacts, or {frame: "point" | "surface"}), vdot =
robot.constrained_dynamics(q, v, tau, contacts, baumgarte, damping)[0]: the frames are held (feet on the ground, a
gripper on a handle).  A run anchors every contact without a target where its frame is at the run's start, so that
the Baumgarte gains (Kp, Kd) pull a frame that drifts (integration error) back to where it touched down.
``with_payload`` builds the "real" robot of a mismatch experiment: the controller's model plus a payload.

Drives (robot_dynamics/drives.py).  The armature is in M, so forward_dynamics simulates it.  Friction is a passive
force: the joints receive tau - tau_f(v) (robot.friction_torque: viscous plus a Coulomb sign smoothed over
drives.COULOMB_VELOCITY, or the robot's friction model), never a bare sign().  Smoothed, Coulomb friction is a
stiff damper near v = 0 (slope friction / COULOMB_VELOCITY, ~100 N m s/rad): explicit steps would ring or blow
up on a light wrist.  So without contacts the friction is taken linearly implicitly, as MuJoCo's "implicitfast"
integrator takes its damping:

    (M(q) + h D(v)) vdot = tau - tau_f(v) - (C(q, v) v + g(q)),     D = diag(d tau_f / d v) >= 0,

at every stage (h the step): it equals forward dynamics up to h M^-1 D vdot, which matters only where the
friction is stiff -- a joint sticking, which it then does without ringing.  With contacts, tau - tau_f(v) goes to
constrained_dynamics explicitly.
"""
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ..robot import contact_list
from ..spatial import parameters_from_inertial
from .computed_torque import check_vector


def _se3_bracket(xi1, xi2):
    """[xi1, xi2] of two body twists [linear; angular] (6,): [w1 x u2 - w2 x u1; w1 x w2]."""
    u1, w1, u2, w2 = xi1[:3], xi1[3:], xi2[:3], xi2[3:]
    return np.concatenate([np.cross(w1, u2) - np.cross(w2, u1), np.cross(w1, w2)])


def _se2_bracket(xi1, xi2):
    """[xi1, xi2] of two planar body twists [vx, vy, w] (3,): [w1 E u2 - w2 E u1; 0], E the quarter turn."""
    (x1, y1, w1), (x2, y2, w2) = xi1, xi2
    return np.array([-w1 * y2 + w2 * y1, w1 * x2 - w2 * x1, 0.0])


def _so3_bracket(w1, w2):
    """[w1, w2] of two body angular velocities (3,) (a ball joint's): w1 x w2."""
    return np.cross(w1, w2)


_BRACKETS = {"free": (6, _se3_bracket), "floating": (6, _se3_bracket), "ball": (3, _so3_bracket),
             "planar": (3, _se2_bracket)}


class Rollout(NamedTuple):
    """Sampled motion: t (K,), q (K, nq), v (K, nv), tau (K, nv) applied from each sample on (the last row
    repeats the one before), z (K, nz) or None."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    z: np.ndarray | None


class Simulator:
    """Fixed-step integrator of the robot's forward dynamics.

    robot: the simulated ("real") robot; dt: step (s); method: "rk4" or "euler".
    contacts: frames held by contacts (a list for Robot.constrained_dynamics: frame names or Contacts), with its
    baumgarte gains (Kp, Kd) and damping; None: free motion (forward_dynamics).
    """

    def __init__(self, robot, dt, method="rk4", contacts=None, baumgarte=(0.0, 0.0), damping=0.0):
        if method not in ("rk4", "euler"):
            raise ValueError(f"method must be 'rk4' or 'euler', got {method!r}")
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be positive, got {dt}")
        self.robot, self.dt, self.method = robot, float(dt), method
        self.contacts = None
        if contacts is not None:
            self.contacts = contact_list(contacts)
            robot.constrained_dynamics(robot.neutral(), np.zeros(robot.nv), np.zeros(robot.nv), self.contacts,
                                       baumgarte, damping)                  # checks the set and the gains now
        self.baumgarte, self.damping = tuple(baumgarte), damping
        self._frictionless = robot.model.drives.frictionless
        self._held = self.contacts
        self._groups = [(j.idx_v, *_BRACKETS[j.type]) for j in robot.model.joints
                        if j.mimic is None and j.type in _BRACKETS]

    def _bracket(self, w1, w2):
        """Lie bracket of two velocities (nv,): se(3) on free joints, so(3) on ball joints, se(2) on planar ones,
        zero elsewhere."""
        bracket = np.zeros(self.robot.nv)
        for i, n, lie_bracket in self._groups:
            bracket[i:i + n] = lie_bracket(w1[i:i + n], w2[i:i + n])
        return bracket

    def step_with_state(self, t, q, v, z, closed_loop, h=None):
        """One step of length h (default dt) of (q, v, z) under closed_loop(t, q, v, z) -> (tau (nv,), zdot (nz,)).

        Returns (q, v, z) at t + h and the torque tau (nv,) at the start of the step.
        """
        h = self.dt if h is None else h
        robot = self.robot

        def f(t, q, v, z):
            tau, z_dot = closed_loop(t, q, v, z)
            return self.acceleration(q, v, tau, h), np.asarray(z_dot, dtype=float), tau

        a1, zd1, tau = f(t, q, v, z)
        if self.method == "euler":
            v_next = v + h * a1                                        # semi-implicit: q moves with v_next
            return robot.integrate(q, v_next, h), v_next, z + h * zd1, tau
        # RKMK4 for body velocities, q(t) = q exp(theta): theta' = dexp^-1_{-theta}(w) = w + [theta, w]/2 + ...
        w1 = v
        a2, zd2, _ = f(t + h / 2, robot.integrate(q, w1, h / 2), v + h / 2 * a1, z + h / 2 * zd1)
        w2 = v + h / 2 * a1
        theta3 = h / 2 * w2 + h**2 / 8 * self._bracket(w1, w2)
        a3, zd3, _ = f(t + h / 2, robot.integrate(q, theta3, 1.0), v + h / 2 * a2, z + h / 2 * zd2)
        w3 = v + h / 2 * a2
        a4, zd4, _ = f(t + h, robot.integrate(q, w3, h), v + h * a3, z + h * zd3)
        w4 = v + h * a3
        theta = h / 6 * (w1 + 2 * w2 + 2 * w3 + w4) + h**2 / 12 * self._bracket(w1, w4)
        v_next = v + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        z_next = z + h / 6 * (zd1 + 2 * zd2 + 2 * zd3 + zd4)
        return robot.integrate(q, theta, 1.0), v_next, z_next, tau

    def acceleration(self, q, v, tau, h=None):
        """vdot (nv,) at (q, v) under the joint torques tau (nv,): forward dynamics, the drives' friction taken
        linearly implicitly over a step h (default dt; module docstring), or the contact-constrained dynamics."""
        robot = self.robot
        if not self._frictionless:
            tau = tau - robot.friction_torque(v)
        if self._held is not None:
            return robot.constrained_dynamics(q, v, tau, self._held, self.baumgarte, self.damping)[0]
        if self._frictionless:
            return robot.forward_dynamics(q, v, tau)
        h = self.dt if h is None else h
        M = robot.mass_matrix(q)
        M[np.diag_indices(robot.nv)] += h * np.maximum(robot.model.drives.slope(v), 0.0)   # friction dissipates
        return np.linalg.solve(M, tau - robot.inverse_dynamics(q, v, np.zeros(robot.nv)))

    def step(self, t, q, v, torque, h=None):
        """One step of (q, v) under torque: a held (nv,) array or a function (t, q, v) -> (nv,).

        Returns (q, v) at t + h (h defaults to dt).
        """
        q, v, _, _ = self.step_with_state(t, q, v, np.zeros(0), _without_state(self._torque(torque)), h)
        return q, v

    def run(self, q0, v0, torque, duration, control_period=None, t0=0.0):
        """Simulate for duration from (q0 (nq,), v0 (nv,)) at t0  ->  Rollout sampled every dt.

        torque: (nv,) held, or a function (t, q, v) -> (nv,) called at every stage of every step; with
        control_period (a multiple of dt) the function is called once per period, at its start, and held.
        """
        torque = self._torque(torque)
        if control_period is None:
            closed_loop = _without_state(torque)
            return self._run(q0, v0, np.zeros(0), lambda i, t, q, v: closed_loop, duration, t0)
        ratio = control_period / self.dt
        if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise ValueError(f"control_period {control_period} is not a positive multiple of dt {self.dt}")
        every, held = int(round(ratio)), None

        def zero_order_hold(i, t, q, v):
            nonlocal held
            if i % every == 0:
                tau = torque(t, q, v)
                held = _without_state(lambda t, q, v: tau)
            return held

        return self._run(q0, v0, np.zeros(0), zero_order_hold, duration, t0)

    def run_with_state(self, q0, v0, z0, closed_loop, duration, t0=0.0):
        """Simulate (q, v, z) under closed_loop(t, q, v, z) -> (tau, zdot), z integrated with the same scheme.

        q0 (nq,), v0 (nv,), z0 (nz,)  ->  Rollout sampled every dt, with z.
        """
        return self._run(q0, v0, np.array(z0, dtype=float), lambda i, t, q, v: closed_loop, duration, t0)

    def anchor(self, q):
        """Hold every contact without a target where its frame is at q (a point at its position, a surface at its
        pose) in the steps that follow; run and run_with_state anchor at their initial q."""
        if self.contacts is None:
            return
        robot = self.robot
        self._held = tuple(c if c.target is not None else
                           replace(c, target=(robot.frame_placement(q, c.frame)[:3, 3] if c.kind == "point"
                                              else robot.frame_placement(q, c.frame)))
                           for c in self.contacts)

    def _torque(self, torque):
        """A held array or a function of (t, q, v) as a function checked to return (nv,) finite values."""
        nv = self.robot.nv
        if not callable(torque):
            held = check_vector("torque", torque, nv)
            return lambda t, q, v: held
        return lambda t, q, v: check_vector("torque", torque(t, q, v), nv)

    def _run(self, q0, v0, z0, loop_for_step, duration, t0):
        """Integrate from (q0, v0, z0); step i uses the closed loop loop_for_step(i, t_i, q_i, v_i)."""
        q = check_vector("q0", q0, self.robot.nq)
        v = check_vector("v0", v0, self.robot.nv)
        z = z0
        self.anchor(q)
        steps = int(round(duration / self.dt))
        t = t0 + self.dt * np.arange(steps + 1)
        Q, V, Z = [q], [v], [z]
        tau = np.zeros((steps + 1, self.robot.nv))
        for i in range(steps):
            q, v, z, tau[i] = self.step_with_state(t[i], q, v, z, loop_for_step(i, t[i], q, v))
            Q.append(q), V.append(v), Z.append(z)
        if steps:
            tau[-1] = tau[-2]
        return Rollout(t, np.array(Q), np.array(V), tau, np.array(Z) if z0.size else None)


def _without_state(torque):
    """closed_loop(t, q, v, z) -> (torque(t, q, v), 0) for a simulation without controller state."""
    return lambda t, q, v, z: (torque(t, q, v), np.zeros_like(z))


def payload_parameters(mass, com=(0.0, 0.0, 0.0), inertia=None):
    """pi (10,) of a rigid payload: mass (kg) with its CoM at com (3,) in the body frame and rotational inertia
    (3, 3) about that CoM (zero: a point mass), about the body origin by the parallel-axis theorem:
    I = I_c + m (|c|^2 1 - c c^T)."""
    return parameters_from_inertial(mass, com, np.zeros((3, 3)) if inertia is None else inertia)


def with_payload(robot, body, mass, com=(0.0, 0.0, 0.0), inertia=None):
    """The robot with a payload rigidly added to body (name or index); same kinematics (robot.with_parameters).

    See ``payload_parameters`` for mass, com (3,) and inertia (3, 3).
    """
    k = robot.body_names.index(body) if isinstance(body, str) else int(body)
    pi = np.array(robot.parameters, dtype=float)
    pi[10 * k:10 * k + 10] += payload_parameters(mass, com, inertia)
    return robot.with_parameters(pi)
