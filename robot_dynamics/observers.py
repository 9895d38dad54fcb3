"""What the model does not explain: the external joint torque (MomentumObserver), the wrench behind it at chosen
frames (MomentumObserver.wrench) and collisions (CollisionDetector: thresholds calibrated on a contact-free log,
hysteresis, the touched body).

The generalized-momentum observer (De Luca & Mattone, ICRA 2003; Haddadin, De Luca & Albu-Schaeffer, "Robot
Collisions: A Survey on Detection, Isolation, and Identification", T-RO 2017) estimates the external joint
torque tau_ext of a fixed-base robot from q, v and the applied torque tau, without accelerations:

    r = K (p - p(0) - int_0^t (tau + C^T v - g - tau_f + r) dt),     p = M(q) v,
    rdot = K (tau_ext - r),

a first-order low-pass of tau_ext at the bandwidths K = diag(k_i) (rad/s): after a step of tau_ext, r is within
exp(-k t) of it.  It needs exactly what the kernels compute exactly -- p, C^T v and g, in one compiled call
(Robot.momentum_rate, which uses Mdot = C + C^T) -- and the drives' friction tau_f (Robot.friction_torque; the
armature is in M, so in p).  The observer is integrated exactly for its linear part, whatever the rate
(algorithms/momentum_observer.py, eqs. (O1)-(O3)): tau held over each tick (the controller's zero-order hold),
C^T v - g - tau_f by the trapezoidal rule, and tau_ext taken constant within a tick.

The drives' friction: the damping D v as the model says, a friction model's torque as it says, and the Coulomb
friction as Coulomb's law has it -- F sign(v) while a joint slides (the drives' F tanh(v / 0.01 rad/s) where |v|
>= 0.01 rad/s), anything in [-F, F] while it sticks: over a tick that may hold a stick (an end below 0.01 rad/s, or a
reversal) the observer takes, of the external torques the momentum allows, the one nearest its last estimate (eq.
(O2')).  A joint that sticks then shows only what its friction cannot hold, and r keeps the torque it had found;
an external torque that changes while a joint sticks shows on that joint once it exceeds what friction holds.
Measured (benchmarks/bench_sampled_drives.py) on MuJoCo's xArm7 carrying exactly its URDF's <dynamics
damping="2..10" friction="1"/> (a hard friction loss: its joints stick for 10-20 ms at each reversal), the arm
tracking: r within 1.9 % of J^T F for 10 N on link5 and 1.2 % for 20 N on link7, and 0.07 N m (0.5 % of the
latter) in free motion -- with the smoothed law through a stick, 13 %, 6 % and 1 N m; without the Coulomb friction,
55 %, 18 % and 2.6 N m.

A floating base is refused by name: there the residual's six base rows, and its joint rows, hold the wrenches of
every contact, the feet's included, and r estimates the unexpected ones only once the measured contact wrenches
are subtracted (J_c^T f_c added to tau) -- an extension not implemented here.
"""
from typing import NamedTuple

import numpy as np
from numba import njit

from .algorithms.momentum_observer import (DAMPING, ERR_DT, ERR_RESIDUAL, ERR_TAU, FRICTION, GAIN, P, P_LAST, R, S,
                                           S_LAST, V_LAST, observer_steps, observer_tick)
from .drives import COULOMB_VELOCITY

_ND, _F64, _empty = np.ndarray, np.dtype(np.float64), np.empty


class WrenchEstimate(NamedTuple):
    """A wrench estimated from a residual r (MomentumObserver.wrench).

    wrench: (..., 6) [force; torque] on the robot at the frame, in the reference asked for ((..., m, 6) for a list
    of m frames; 3 columns with force_only); unexplained: (..., nv) r - J^T wrench, what no wrench at those frames
    explains (the rows of coordinates below none of the frames, a contact elsewhere, model error); singular_values:
    (..., min(w, nv)) of the stacked Jacobian J (w rows): a zero one is a wrench direction no joint feels (a frame
    with fewer than six coordinates below it, a singular configuration), estimated as zero.
    """

    wrench: np.ndarray
    unexplained: np.ndarray
    singular_values: np.ndarray


class Collision(NamedTuple):
    """The detector's verdict at a sample: detected (any coordinate flagged), coordinates (nv,) bool flagged now
    (over their threshold, or still over release times it since), touched (nv,) bool flagged at any sample since
    the collision began, bodies the touched bodies' names (CollisionDetector.isolate of touched)."""

    detected: bool
    coordinates: np.ndarray
    touched: np.ndarray
    bodies: tuple


def _positive_vector(value, name, n):
    x = np.array(value, dtype=float)
    if x.ndim == 0:
        x = np.full(n, float(x))
    if x.shape != (n,):
        raise ValueError(f"{name} must be a number or an array of shape ({n},) (one per coordinate of v), got shape "
                         f"{x.shape}")
    bad = ~(np.isfinite(x) & (x > 0))
    if bad.any():
        raise ValueError(f"{name}[{int(np.argmax(bad))}] = {x[bad][0]!r}: {name} must be finite and positive")
    return x


def _read_only(x):
    view = x.view()
    view.flags.writeable = False
    return view


class MomentumObserver:
    """The momentum residual r (module docstring) of a fixed-base robot, at the controller's rate or over a log.

    robot: the model (a Robot with a fixed base; its drives' armature is in M, their friction subtracted when
    friction=True and it has any).  gain: the bandwidth k_i in rad/s, a number or (nv,) per coordinate.

    ``update(q, v, tau, dt, out=None)`` at every tick, tau the torque applied over the last dt, returns r (the
    estimate of tau_ext, (nv,): a new array, or out); the first call (or ``start``) sets p(0) and returns zeros;
    ``residual`` is a read-only view of the last r.  ``replay(t, q, v, tau)`` does the
    same over a log in one batched kernel call and one compiled loop.  ``wrench`` maps r to wrenches at frames,
    ``calibrate`` makes a CollisionDetector from a contact-free log.
    """

    def __init__(self, robot, gain, friction=True):
        if robot.floating_base:
            raise ValueError(f"MomentumObserver: robot '{robot.model.name}' has a floating base, whose residual "
                             f"rows hold every contact wrench; only fixed-base robots are observed (load the URDF "
                             f"with floating_base=False)")
        self.robot = robot
        n = robot.nv
        self.gain = _read_only(_positive_vector(gain, "gain", n))
        drives = robot.model.drives
        self.friction = bool(friction) and not drives.frictionless
        self._model = drives.model if self.friction else None    # a friction model: its torque subtracted in numpy
        self._state = np.zeros((9, n))                           # observer_tick's state (its docstring)
        self._state[GAIN] = self.gain
        if self.friction and self._model is None:                # viscous + Coulomb: in the compiled tick
            self._state[DAMPING], self._state[FRICTION] = drives.damping, drives.friction
        self._p, self._s = self._ps = self._state[P], self._state[S]    # momentum_rate writes here
        self._momentum_rate = robot.momentum_rate
        self._n = (n,)                                           # the shape of v, tau and r
        self._v = np.zeros(n)                                    # v, when the one given is not a float64 vector
        self.residual = _read_only(self._state[R])
        self.started = False

    def start(self, q, v, out=None):
        """Start at the state (q, v): p(0) = M(q) v, r = 0.  Returns r (zeros), a new array or out (nv,)."""
        r = self._out(out)
        v = self._velocity(v)
        self._rate(q, v)
        state = self._state
        state[S] -= state[DAMPING] * v
        state[P_LAST], state[S_LAST], state[V_LAST], state[R] = state[P], state[S], v, 0.0
        self.started = True
        r[:] = 0.0
        return r

    def update(self, q, v, tau, dt, out=None):
        """Advance by dt (s) to the state q (nq,), v (nv,), tau (nv,) having been applied over the tick.

        Returns r (nv,), the estimate of tau_ext: a new array, or written into out (nv,) when given (the observer's
        own ``residual`` is a read-only view of its state, which the next update overwrites).  The first call
        starts the observer (start) and returns zeros.  A bad input raises a ValueError naming it and leaves the
        observer as it was.
        """
        if not self.started:
            return self.start(q, v, out)
        r = _empty(self._n) if out is None else self._out(out)
        n = self._n
        if not (type(v) is _ND and type(tau) is _ND and v.dtype is _F64 and tau.dtype is _F64 and v.shape == n
                and tau.shape == n and v.flags.c_contiguous and tau.flags.c_contiguous):
            v, tau = self._velocity(v), self._torque(tau)
        self._rate(q, v)
        status = observer_tick(self._state, tau, v, dt, COULOMB_VELOCITY, r)
        if status != 0:
            raise ValueError({ERR_DT: f"dt must be a positive time in s, got {dt}",
                              ERR_TAU: "tau contains non-finite values (NaN or inf)",
                              ERR_RESIDUAL: "the residual overflows float64: tau, v or dt is out of range"}[status])
        return r

    def _out(self, out):
        """The array r is written into: a new one, or out once checked (a writeable float64 (nv,) array)."""
        if out is None:
            return _empty(self._n)
        if not (type(out) is _ND and out.dtype is _F64 and out.shape == self._n and out.flags.writeable):
            raise ValueError(f"out must be a writeable float64 array of shape {self._n}")
        return out

    def _velocity(self, v):
        """v as a C-contiguous float64 (nv,) array: itself when it is one, else a copy in the observer's buffer."""
        if type(v) is _ND and v.dtype is _F64 and v.shape == self._n and v.flags.c_contiguous:
            return v
        if np.shape(v) != self._n:
            raise ValueError(f"v must have shape {self._n} (one state), got {np.shape(v)}")
        self._v[:] = v
        return self._v

    def _torque(self, tau):
        """tau as a C-contiguous float64 (nv,) array."""
        tau = np.ascontiguousarray(tau, dtype=float)
        if tau.shape != self._n:
            raise ValueError(f"tau must have shape {self._n}, got {tau.shape}")
        return tau

    def _rate(self, q, v):
        """P, S <- p and h = C^T v - g (minus a friction model's torque) at one state (q, v) (nv,) float64."""
        try:
            self._momentum_rate(q, v, self._ps)
        except ValueError:
            if np.shape(q) != (self.robot.nq,):
                raise ValueError(f"q must have shape ({self.robot.nq},) (one state), got {np.shape(q)}") from None
            raise
        if self._model is not None:
            self._s -= self._model.torque(v)

    def replay(self, t, q, v, tau, out=None):
        """The residuals over a log: t (K,) increasing (s), q (K, nq), v (K, nv), tau (K, nv) applied from each
        sample to the next.  Starts at the first sample (r[0] = 0) and leaves the observer at the last, so that
        update can go on from there.  p and s come from one batched kernel call (on all cores), the ticks from
        one compiled loop, each tick's arithmetic that of update.  Returns r (K, nv) (into out if given)."""
        r, P, S = self._residuals(t, q, v, tau, out)
        state = self._state
        state[P_LAST], state[S_LAST], state[V_LAST], state[R] = P[-1], S[-1], np.asarray(v)[-1], r[-1]
        self.started = True
        return r

    def _residuals(self, t, q, v, tau, out=None):
        """(r, P, S) over a log (replay), the observer's own state untouched."""
        t = np.ascontiguousarray(t, dtype=float)
        if t.ndim != 1 or len(t) < 1 or not np.all(np.isfinite(t)) or not np.all(np.diff(t) > 0):
            raise ValueError("t must be a non-empty increasing (K,) array of finite times")
        K, n = len(t), self.robot.nv
        tau = np.ascontiguousarray(tau, dtype=float)
        for name, x, width in (("q", q, self.robot.nq), ("v", v, n), ("tau", tau, n)):
            if np.shape(x) != (K, width):
                raise ValueError(f"{name} must have shape ({K}, {width}) for {K} times, got {np.shape(x)}")
        if not np.all(np.isfinite(tau)):
            raise ValueError("tau contains non-finite values (NaN or inf)")
        v = np.ascontiguousarray(v, dtype=float)
        P, S = self.robot.momentum_rate(q, v)
        S -= self._state[DAMPING] * v
        if self._model is not None:
            S -= self._model.torque(v)
        if out is None:
            r = np.empty((K, n))
        elif not (isinstance(out, np.ndarray) and out.shape == (K, n) and out.dtype == float
                  and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out must be a writeable C-contiguous float64 array of shape ({K}, {n})")
        else:
            r = out
        r[0] = 0.0
        observer_steps(P, S, v, tau, t, self.gain, self._state[FRICTION], COULOMB_VELOCITY, r)
        if not np.all(np.isfinite(r[-1])):                  # a non-finite r stays so (a > 0): the last row tells
            raise ValueError("the residual overflows float64: tau, v or t is out of range")
        return r, P, S

    def wrench(self, q, frame, reference="local_world_aligned", residual=None, damping=1e-3, force_only=False):
        """The wrench F at a frame (or at several) that best explains a residual: r = J^T F + unexplained.

        q: (..., nq); frame: a name of robot.frame_names or its index, or a list of them (one wrench each, stacked
        Jacobians); reference: frame_jacobian's ("local_world_aligned" by default: world axes, torque about the
        frame's origin -- where a contact force is usually wanted); residual: (..., nv), the observer's last r by
        default; force_only: a force through each frame's origin alone (the 3 linear rows), for a contact
        that can carry no torque or a frame with fewer than six coordinates below it.

        Damped least squares: F = argmin |J^T F - r|^2 + damping^2 |F|^2 = sum_j u_j s_j / (s_j^2 + damping^2)
        v_j^T r over the singular triplets (s_j, u_j, v_j) of J; damping 0 is the pseudo-inverse.  Where J has full
        row rank (six coordinates below each frame, away from singular configurations) F is the least-squares
        wrench, low by a relative (damping / s_j)^2 (damping in J's units, those of the frame's lever arms: 1e-3
        leaves F within 1e-4 of it where s_j > 0.1); at a singular configuration the wrench direction that no joint
        feels (s_j = 0) is estimated as zero, and one nearly so is damped instead of amplified (singular_values
        says which).  A contact on a body the frame is not on, or model error, is what remains in `unexplained`.
        Returns a WrenchEstimate.
        """
        frames = list(frame) if isinstance(frame, (list, tuple)) else [frame]
        if not frames:
            raise ValueError("frame: give a frame or a non-empty list of frames")
        damping = float(damping)
        if not (np.isfinite(damping) and damping >= 0):
            raise ValueError(f"damping must be finite and non-negative, got {damping}")
        r = self.residual if residual is None else np.asarray(residual, dtype=float)
        if r.shape[-1:] != (self.robot.nv,) or not np.isfinite(r).all():
            raise ValueError(f"residual must be a finite (..., {self.robot.nv}) array, got shape {r.shape}")
        rows = slice(0, 3) if force_only else slice(0, 6)
        J = np.concatenate([self.robot.frame_jacobian(q, f, reference)[..., rows, :] for f in frames], axis=-2)
        width = rows.stop
        if J.ndim == 2 and r.ndim == 1 and damping > 0:             # one state: compiled (~4x numpy's calls)
            F, unexplained, sv = _damped_least_squares(J, r, damping)
            F = F.reshape(len(frames), width)
            return WrenchEstimate(F if isinstance(frame, (list, tuple)) else F[0], unexplained, sv)
        U, sv, Vh = np.linalg.svd(J, full_matrices=False)
        if damping > 0:
            gain = sv / (sv * sv + damping * damping)
        else:                                          # the pseudo-inverse, numpy's rank cut-off
            kept = sv > sv[..., :1] * max(J.shape[-2:]) * np.finfo(float).eps
            gain = np.where(kept, 1.0 / np.where(kept, sv, 1.0), 0.0)
        F = np.einsum("...ij,...j->...i", U, gain * np.einsum("...jk,...k->...j", Vh, r))
        unexplained = r - np.einsum("...ij,...i->...j", J, F)
        F = F.reshape(F.shape[:-1] + (len(frames), width))
        return WrenchEstimate(F if isinstance(frame, (list, tuple)) else F[..., 0, :], unexplained, sv)

    def calibrate(self, t, q, v, tau, margin=2.0, floor=1e-3, release=0.5):
        """A CollisionDetector for this observer, its thresholds from a log without contact (replay's arguments):
        per coordinate, margin times the largest |r_i| the log shows (the model's error, the sampling's), at
        least floor (N m or N: a coordinate the log left still).  The observer's own state is untouched.  Use a
        log of the motions the robot will make, as fast: a threshold is the margin over what was seen.
        """
        for name, value in (("margin", margin), ("floor", floor)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be finite and positive, got {value}")
        r = self._residuals(t, q, v, tau)[0]
        return CollisionDetector(self.robot, np.maximum(margin * np.abs(r).max(axis=0), floor), release)


@njit(cache=True)
def _damped_least_squares(J, r, damping):
    """(F, r - J^T F, the singular values of J) with F = sum_j u_j s_j / (s_j^2 + damping^2) v_j^T r (wrench)."""
    U, sv, Vh = np.linalg.svd(J, full_matrices=False)
    F = U @ (sv / (sv * sv + damping * damping) * (Vh @ r))
    return F, r - J.T @ F, sv


QUIET, ACTIVE, NOT_FINITE = 0, 1, 2       # _activity's verdicts


@njit(cache=True)
def _activity(r, thresholds, release, touched, flags):
    """CollisionDetector.update's first look at r (nv,), compiled (a free robot's every sample: ~1 us, against
    ~10-20 us of numpy calls): NOT_FINITE for a NaN or inf in r; QUIET when no |r_i| exceeds release times its
    threshold and no coordinate is touched (then every flag is set off); ACTIVE otherwise."""
    quiet = True
    for i in range(r.shape[0]):
        x = abs(r[i])
        if not np.isfinite(x):
            return NOT_FINITE
        if x > release * thresholds[i] or touched[i]:
            quiet = False
    if quiet:
        flags[:] = False
    return QUIET if quiet else ACTIVE


class CollisionDetector:
    """Collisions from a residual: coordinate i is flagged when |r_i| exceeds its threshold, and stays flagged
    until |r_i| falls below release times it (hysteresis: no chatter around the threshold); a collision is any
    flagged coordinate, from the first sample one is flagged to the first none is.  The touched bodies are the
    most distal ones whose joints carried a flagged coordinate since the collision began (isolate): a contact on a
    body loads its own joint and its ancestors' (J^T F) and never those below it, but a joint whose axis the
    force's line crosses feels nothing at that moment -- as the body moves the line may cross it, and a verdict of
    that sample alone would name the parent.

    robot: the model (for the bodies); thresholds: (nv,) positive (MomentumObserver.calibrate makes them);
    release: in [0, 1].  ``update(r)`` at each tick returns a Collision, ``replay(R)`` the flags over a log.
    """

    def __init__(self, robot, thresholds, release=0.5):
        self.robot = robot
        self.thresholds = _read_only(_positive_vector(thresholds, "thresholds", robot.nv))
        release = float(release)
        if not 0.0 <= release <= 1.0:
            raise ValueError(f"release must lie in [0, 1], got {release}")
        self.release = release
        self.flags = np.zeros(robot.nv, dtype=bool)
        self.touched = np.zeros(robot.nv, dtype=bool)
        none = _read_only(np.zeros(robot.nv, dtype=bool))
        self._free = Collision(False, none, none, ())     # the verdict while nothing is going on (update)
        body = np.full(robot.nv, -1)                    # the body whose joint owns each coordinate
        for joint in robot.model.joints:
            if joint.mimic is None:
                body[joint.idx_v:joint.idx_v + joint.nv] = joint.body
        parent = robot.model.parent
        ancestors = []                                  # each body's strict ancestors
        for k in range(robot.nbodies):
            a, chain = parent[k], set()
            while a >= 0:
                chain.add(int(a))
                a = parent[a]
            ancestors.append(chain)
        self._body, self._ancestors = body, ancestors

    def reset(self):
        """No coordinate flagged, no collision going on."""
        self.flags[:] = False
        self.touched[:] = False

    def update(self, residual):
        """The verdict after the residual (nv,) of a new sample (see Collision)."""
        x = np.asarray(residual, dtype=float)
        activity = _activity(x, self.thresholds, self.release, self.touched, self.flags) \
            if x.shape == self.flags.shape else NOT_FINITE
        if activity == QUIET:                   # nothing going on (every flag now off): the verdict of a free robot
            return self._free
        if activity == NOT_FINITE:
            raise ValueError(f"residual must be a finite ({self.robot.nv},) array, got shape {x.shape}")
        x = np.abs(x)
        self.flags = (x > self.thresholds) | (self.flags & (x > self.release * self.thresholds))
        detected = bool(self.flags.any())
        self.touched = (self.touched | self.flags) if detected else np.zeros_like(self.flags)
        return Collision(detected, self.flags.copy(), self.touched.copy(), self.isolate(self.touched))

    def replay(self, residuals):
        """(flags, touched), both (K, nv) bool, over the residuals (K, nv) of a log: each sample's Collision's
        coordinates and touched, from the detector's present state on (which ends as the last sample's).
        Vectorized: a flag is on after its last crossing of the threshold when |r_i| has not fallen below release
        times it since, and touched when it was on since the collision began."""
        x = np.abs(np.asarray(residuals, dtype=float))
        if x.ndim != 2 or x.shape[1] != self.robot.nv or not np.all(np.isfinite(x)):
            raise ValueError(f"residuals must be a finite (K, {self.robot.nv}) array, got shape {x.shape}")
        if not len(x):
            return np.zeros(x.shape, dtype=bool), np.zeros(x.shape, dtype=bool)
        index = np.arange(len(x))
        on = np.maximum.accumulate(np.where(x > self.thresholds, index[:, None], -1), axis=0)
        off = np.maximum.accumulate(np.where(x > self.release * self.thresholds, -2, index[:, None]), axis=0)
        on = np.where(on >= 0, on, np.where(self.flags, -1, -3))     # before any crossing: the present flags
        flags = on > off
        detected = flags.any(axis=1)
        begins = detected & ~np.r_[self.flags.any(), detected[:-1]]
        start = np.maximum.accumulate(np.where(begins, index, -1))  # -1: the collision going on before the log
        last = np.maximum.accumulate(np.where(flags, index[:, None], -1), axis=0)
        touched = detected[:, None] & ((last >= np.maximum(start, 0)[:, None])
                                       | ((start < 0)[:, None] & self.touched))
        self.flags, self.touched = flags[-1].copy(), touched[-1].copy()
        return flags, touched

    def isolate(self, flags):
        """The touched bodies' names (robot.body_names) for flags (nv,) bool (a Collision's touched): the bodies of
        flagged coordinates below which no flagged coordinate lies -- on an arm, the most distal one."""
        bodies = {int(self._body[i]) for i in np.flatnonzero(flags)}
        below = set().union(*(self._ancestors[b] for b in bodies)) if bodies else set()
        return tuple(self.robot.body_names[b] for b in sorted(bodies - below))
