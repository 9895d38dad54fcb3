"""Computed-torque (inverse-dynamics) control and the tracking error shared by the controllers.

    tau = M(q) (qddot_d + K_d edot + K_p e) + C(q, qdot) qdot + g(q) + tau_drive,   e = q_d - q,   edot = qdot_d - qdot

With the exact model the closed loop is M (edd + K_d ed + K_p e) = 0, i.e. the linear error dynamics
edd + K_d ed + K_p e = 0 whatever the configuration. For a floating base the position error lives in the tangent space,
e = robot.difference(q, q_d), and the base rows of tau are the wrench a fully actuated base would need.

Drives (robot_dynamics/drives.py).  M holds the armature.  The drives' friction tau_f(v) = D v + F s(v) (viscous D,
Coulomb F, or a friction model's law) is a torque of the velocity: compensated from the MEASURED velocity, held over
a sample dt, it is a velocity feedback, and a sampled loop bears it only while its gain is small beside the joint's
inertia.  Joint i alone, M_ii vdot = u - D_i v with u = D_i v_k held over [t_k, t_k + dt] and the model's D_i a little
above the true one, gives v_{k+1} ~ (D_i / D_true) v_k when D_i dt / M_ii >> 1 (the plant's own damping settles
within the tick): the loop's stability then hangs on the model never over-estimating the damping, and it is lost
outright (v_{k+1} = (1 + D_i dt / M_ii - K_d dt) v_k) where the true drive damps less than the model says.  Coulomb
friction smoothed as F tanh(v / v_c) is a damping of slope F / v_c near rest (100 N m s/rad for F = 1 N m, v_c =
0.01 rad/s), worse still.  A URDF's <dynamics damping friction> without the rotor's armature makes M_ii small: the
xArm7 of example-robot-data has D = 2 N m s/rad and F = 1 N m on joint 7, whose M_77 is 1.4e-4 kg m^2 -- D dt / M =
14 at 1 kHz.  So the drives are compensated at the reference, as standard practice does (friction="reference",
the default):

    tau_drive = tau_f(v_d) + D Lambda e,   Lambda = K_d^+ K_p (capped, below):   the damping at v_r = v_d + Lambda e
                                     (Slotine-Li's reference velocity), the rest of tau_f at v_d

(for a friction model, its tau_f at v_d plus its viscous D Lambda e).  Nothing measured enters it, and with the
true drives in the plant the error obeys, per joint of diagonal gains (Lambda = K_p / K_d),

    M (edd + K_d ed + K_p e) + D (ed + Lambda e) + F (s(v_d) - s(v)) = 0,
    i.e.  edd + (1 + D / (M K_d)) (K_d ed + K_p e) = M^-1 F (s(v) - s(v_d)):

the rigid loop's poles moved by the physical, continuous damping: stable for every D >= 0, the slow pole at
-K_p / K_d even where D / M is 10^4.  Sampled, a damping-dominated joint's error falls by Lambda dt per tick (its
velocity follows v_d + Lambda e within the tick), stable while Lambda dt < 2.  So Lambda is capped at K_d (per joint;
by the spectral norm for full gains): Lambda dt never exceeds the rigid loop's own K_d dt (measured: with K_p 10^4,
K_d 10 at 250 Hz, K_p dt / K_d = 4, the uncapped law diverged where friction=False did not; capped, 0.038 rad against
friction=False's 0.62).  Coulomb friction is exact wherever the joint moves the way it is asked to.  The measured
figures (benchmarks/bench_sampled_drives.py: MuJoCo's xArm7 with exactly the URDF's damping and frictionloss, the
latter a hard constraint at the step, a sum of sines, RMS error (rad) over the last second of 2 s):

    controller's drives            K_p 100, K_d 20   1 kHz   250 Hz     K_p 400, K_d 40   1 kHz   250 Hz
    rigid plant and model                             1.0e-3  4.1e-3                       2.5e-4  9.9e-4
    friction=False                                    1.80    1.79                         1.42    1.42
    measured velocity, tau_f(v)                       1.59    1.30                         1.03    1.09
    reference (default)                               3.4e-4  1.2e-3                       1.8e-4  6.7e-4
    measured, bounded (below)                         4.9e-3  2.5e-3                       1.4e-3  1.2e-3

The default tracks 1400-7700x better than friction=False, and better than the rigid loop itself (why is not
measured).

friction="measured" (with the control period dt) compensates the viscous part from the measured velocity only up to
what the sampled loop bears: D_bar_i (v - v_r) with D_bar_i = min(D_i, RHO m_i / dt), so that D_bar_i dt / m_i stays
within RHO = 0.5 (m_i the smallest M_ii over sampled configurations), the rest of D_i at v_r; a warning names every
joint bounded so.  Coulomb friction is fed forward at v_d, as the default does (bounding its slope F_i / w_i instead
widened w_i = F_i dt / (RHO m_i) so far that joints 6 and 7 stuck: 0.38 / 0.091 rad RMS at K_p 100, 1 kHz, now 4.2e-3
/ 2e-4).  It suits a well-identified geared arm (armature in M); for a URDF without armature, give the rotors'
reflected inertia (robot.with_drives(armature=...), I_m N^2 from the motor's datasheet) or identify the drives
(rd.identify(..., armature=True)).  friction=False ignores the model's friction (M keeps its armature).

The tick: validation at construction, then one compiled call (_ct_tick.ct_tick): the finiteness check, the command
and the drives' torque, and the robot's inverse dynamics called from it (its C entry point) on the controller's
buffers.
"""
import warnings

import numpy as np

from ..calls.checks import check_vector
from ..configuration import ConfigurationSpace
from . import _ct_tick as kernel


def gain_matrix(gain, n, name="gain"):
    """A gain given as a scalar, a diagonal (n,) or a full (n, n) matrix  ->  (n, n) matrix."""
    gain = np.asarray(gain, dtype=float)
    if gain.ndim == 0:
        matrix = gain * np.eye(n)
    elif gain.shape == (n,):
        matrix = np.diag(gain)
    elif gain.shape == (n, n):
        matrix = gain.copy()
    else:
        raise ValueError(f"{name} must be a scalar, ({n},) or ({n}, {n}), got shape {gain.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} is not finite")
    return matrix


def tracking_error(robot, q, v, q_d, v_d):
    """e = q_d (-) q (robot.difference(q, q_d), the tangent vector at q towards q_d) and edot = v_d - v.

    q, q_d: (nq,); v, v_d: (nv,)  ->  e: (nv,), edot: (nv,)
    """
    q = check_vector("q", q, robot.nq)
    q_d = check_vector("q_d", q_d, robot.nq)
    v = check_vector("v", v, robot.nv)
    v_d = check_vector("v_d", v_d, robot.nv)
    return robot.difference(q, q_d), v_d - v


RHO = 0.5                  # the largest slope dt / m_i a measured-velocity compensation takes (module docstring)
_ND, _F64 = np.ndarray, np.dtype(np.float64)
_ARGUMENTS = ("q", "v", "q_d", "v_d", "a_d")


def smallest_inertias(robot, samples=32, rng=0):
    """m_i = min M_ii over the neutral and `samples` random configurations: the joints' smallest inertia."""
    rng = np.random.default_rng(rng)
    q = np.stack([robot.neutral()] + [robot.random_configuration(rng) for _ in range(samples)])
    return np.diagonal(robot.mass_matrix(q), axis1=-2, axis2=-1).min(axis=0)


class ComputedTorque:
    """tau = M(q)(a_d + K_d edot + K_p e) + C(q, v) v + g(q) + tau_drive, as inverse_dynamics(q, v, a_cmd) + tau_drive.

    robot: the controller's model; K_p, K_d: scalar, (nv,) diagonal or (nv, nv); friction: how the model's drives
    are compensated (module docstring) -- "reference" (True, the default: at the reference velocity), "measured"
    (from the measured velocity, bounded for the control period dt, which it needs) or False (not at all); nothing
    for a robot without drives.  Stateless: call ``torque`` once per control tick.
    """

    def __init__(self, robot, K_p, K_d, friction=True, dt=None):
        self.robot = robot
        n = robot.nv
        mode = "reference" if friction is True else friction
        if mode not in ("reference", "measured", False):
            raise ValueError(f"friction must be True, 'reference', 'measured' or False, got {friction!r}")
        drives = robot.model.drives
        self.friction = mode if mode and not drives.frictionless else False
        self._model = drives.model if self.friction else None            # a friction model's tau_f(v_d): numpy
        drive = self._drive_rows(drives, dt) if self.friction else np.zeros((4, n))
        self._space = ConfigurationSpace(robot.model)                      # q_d (-) q for a floating base
        self._shapes = ((robot.nq,), (n,), (robot.nq,), (n,), (n,))
        self._buffers(drive)
        self.K_p, self.K_d = K_p, K_d

    def _buffers(self, drive):
        """The tick's data (_ct_tick.ct_views: its state, gains and drive rows) and the plan of its inverse
        dynamics, into the data's tau_id from its q, v and a_cmd."""
        robot, n = self.robot, self.robot.nv
        self._data = np.zeros(kernel.ct_size(n, robot.nq))
        q, v, self._e, self._a_cmd, tau_id, _, self._K_p, self._K_d, self._Lam, rows = kernel.ct_views.py_func(
            self._data, n, robot.nq)
        rows[:] = drive
        calls = [("inverse_dynamics", (q, v, self._a_cmd), (tau_id,))]
        self._mode = kernel.difference_mode(self._space)
        self._direct = self._mode != kernel.PYTHON                          # the tick alone, when the inputs are
        self._plan, self._arrays = kernel.plan(robot.model, calls, (n, robot.nq, self._mode), self._space)
        self._fixed = self._arrays[:2] + (self._plan, self._data)       # the body records and workspace first
        example = (self._plan, self._data, q, v, q, v, v, v)
        self._tick = kernel.tick_entry(kernel.ct_tick, kernel.ct_entry, example, 5)

    def _drive_rows(self, drives, dt):
        """The (4, nv) rows of _ct_tick.command's drive array for self.friction (module docstring)."""
        n = len(drives.damping)
        rows = np.zeros((4, n))
        rows[0] = drives.damping
        if drives.model is None:
            rows[2], rows[3] = drives.damping, drives.friction
        if self.friction == "reference":
            return rows
        if drives.model is not None:
            raise ValueError(f"friction='measured' takes viscous + Coulomb drives; these have a friction model "
                             f"({type(drives.model).__name__}): use friction='reference'")
        if dt is None or not (np.isfinite(float(dt)) and float(dt) > 0):
            raise ValueError(f"friction='measured' needs the control period dt > 0 (s), got {dt!r}")
        m = smallest_inertias(self.robot)
        rows[1] = np.minimum(drives.damping, RHO * m / dt)                                       # D_bar
        bounded = [i for i in range(n) if rows[1, i] < drives.damping[i]]
        if bounded:
            names = self.robot.coordinate_names
            warnings.warn("ComputedTorque: at dt = {:g} s these drives are compensated from the measured velocity "
                          "only in part (slope dt / M_ii <= {}): {}; the rest of the damping is fed forward at the "
                          "reference velocity.  Give the rotors' armature (robot.with_drives(armature=...)) or use "
                          "friction='reference'".format(dt, RHO, ", ".join(
                              f"'{names[i]}' (M_ii >= {m[i]:.3g}, damping {drives.damping[i]:g}, Coulomb "
                              f"{drives.friction[i]:g})" for i in bounded)), stacklevel=3)
        return rows

    @property
    def K_p(self):
        return self._K_p

    @K_p.setter
    def K_p(self, gain):
        self._K_p[:] = gain_matrix(gain, self.robot.nv, "K_p")
        self._gains_changed()

    @property
    def K_d(self):
        return self._K_d

    @K_d.setter
    def K_d(self, gain):
        self._K_d[:] = gain_matrix(gain, self.robot.nv, "K_d")
        self._gains_changed()

    def _gains_changed(self):
        """Lambda, the reference velocity's gain (module docstring), into the tick's data whenever a gain is set:
        K_d^+ K_p, capped at K_d -- per joint for diagonal gains, by the spectral norm for full ones (zero when the
        drives are left out; at construction K_p is set while K_d is still zero, then K_d)."""
        K_p, K_d = self._K_p, self._K_d
        if not self.friction:
            return
        if not (np.count_nonzero(K_p - np.diag(np.diag(K_p))) or np.count_nonzero(K_d - np.diag(np.diag(K_d)))):
            p, d = np.diag(K_p), np.diag(K_d)
            self._Lam[:] = np.diag(np.minimum(np.where(d > 0, p / np.where(d > 0, d, 1.0), 0.0), np.abs(d)))
        else:
            Lam = np.linalg.pinv(K_d) @ K_p
            self._Lam[:] = Lam * min(1.0, np.linalg.norm(K_d, 2) / max(np.linalg.norm(Lam, 2), 1e-300))

    def torque(self, q, v, q_d, v_d, a_d, out=None):
        """Joint torques (nv,) for state q (nq,), v (nv,) and reference q_d (nq,), v_d (nv,), a_d (nv,) (into out,
        (nv,), if given).  A bad argument raises a ValueError naming it."""
        tau = np.empty(self._shapes[1][0]) if out is None else out
        try:                                        # float64 arrays of the tick's shapes, straight in (else SHAPE)
            status = self._tick(*self._fixed, q, v, q_d, v_d, a_d, tau) if self._direct and (
                out is None or out.flags.writeable) else kernel.SHAPE
        except (TypeError, AttributeError):
            status = kernel.SHAPE
        args = (q, v, q_d, v_d, a_d)
        if status == kernel.SHAPE:                  # converted and checked, each culprit named
            args = tuple(check_vector(name, x, shape[0]) for name, x, shape in zip(_ARGUMENTS, args, self._shapes))
            if self._mode == kernel.PYTHON and np.isfinite(args[0]).all() and np.isfinite(args[2]).all():  # (else
                self._space.difference(args[0], args[2], out=self._e)                       # the tick names them)
            tau = np.empty(self.robot.nv) if out is None else self._checked_out(out)
            status = self._tick(*self._fixed, *args, tau)
        if status != kernel.OK:
            self._refuse(status, args)
        if self._model is not None:
            tau += self._model.torque(args[3])
        return tau

    def _checked_out(self, out):
        if not (type(out) is _ND and out.dtype is _F64 and out.shape == self._shapes[1] and out.flags.c_contiguous
                and out.flags.writeable):
            raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {self._shapes[1]}")
        return out

    def _refuse(self, status, args):
        """The ValueError of a tick's status: the argument that is not finite, a zero quaternion (the space's
        message), the inverse dynamics' own refusal, an out that overlaps an input, or an overflow."""
        if kernel.BAD <= status < kernel.BAD + len(_ARGUMENTS):
            raise ValueError(f"{_ARGUMENTS[status - kernel.BAD]} is not finite")
        if status == kernel.QUATERNION:
            self._space.difference(args[0], args[2])
        if status == kernel.KERNEL:
            self.robot.inverse_dynamics(args[0], args[1], self._a_cmd)
        if status == kernel.OVERLAP:
            raise ValueError("out must not overlap q, v, q_d, v_d or a_d")
        raise ValueError("the torque overflows float64: the state or the reference is out of range")
