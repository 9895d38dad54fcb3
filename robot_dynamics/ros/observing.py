"""dynamics_node's momentum observer: the external joint torque, the wrench at chosen frames and collisions, for the
stamped joint states (robot_dynamics.observers on the node's inputs).

The observer integrates between joint states (observers.MomentumObserver.update), so the node is stateful:

- **Time.** dt is the difference of two observed joint states' stamps, taken in integer nanoseconds (a float of
  seconds since 1970 has steps of 0.24 us: 0.02 % of a 1 kHz tick). The observer (re)starts -- r = 0 at that
  state, as the library's first update -- at its first joint state, when a stamp is not after the last observed
  one (a bag played again, a restarted driver, a clock set back: ``stamp_not_after``), and after a gap of more
  than ``observer_max_gap`` (lost or skipped messages, a paused publisher: the effort over the gap is unknown,
  ``gap``). A restart resets the detector: ~/collision goes false, the observer knowing nothing yet.
- **Effort.** tau is the torque applied over the tick that ends at the joint state (the library's convention):
  the joint state's own ``effort`` -- what ros2_control's joint_state_broadcaster and sim_node publish, the effort
  applied over the last step -- or, with ``effort_topic``, the last command received there, held until the next
  (the zero-order hold of an effort controller's ``commands``; it carries no stamp, so a command that arrives after
  the joint state it answered counts for the next tick).
- **A new model** (a hot-swapped description) gets a new Observing (publishing.Served): the observer restarts at
  the next joint state. Calibrated thresholds carry over (:meth:`Observing.carry_calibration`; a calibration under
  way goes on): the contact-free seconds are those after start-up, and a swap may come in contact.
- **Collisions.** CollisionDetector on r, its thresholds ``collision_thresholds`` (one per coordinate in the order
  of ``joints``, or one for all) or calibrated: the first ``collision_calibration_time`` seconds of observed
  joint states after the model starts are declared contact-free, and the thresholds are ``collision_margin``
  times the largest |r_i| seen then, at least ``collision_thresholds`` (else MomentumObserver.calibrate's floor,
  1e-3) -- calibrate's rule, on update's residuals. Hysteresis: a flag holds until |r_i| < ``collision_release``
  times its threshold.
- **Wrenches** at each frame of ``wrench_frames``, each alone (the hypothesis "the contact is at this frame"):
  MomentumObserver.wrench in the frame's own axes about its origin, the convention of a WrenchStamped.

A floating base is refused by the library (its residual holds every contact wrench, the feet's included): the node
then publishes none of these outputs, says so once per model, and reports it on /diagnostics.

No rclpy here: the node hands in arrays and stamps.
"""
from typing import NamedTuple, Optional

import numpy as np

from robot_dynamics.observers import CollisionDetector, MomentumObserver

CALIBRATION_FLOOR = 1e-3      # N m or N: MomentumObserver.calibrate's default floor, for calibrated thresholds
NANOSECONDS = 1_000_000_000


class ObserverSettings(NamedTuple):
    """The observer's parameters (dynamics_parameters.DynamicsParameters.observer).

    gain: k in rad/s; max_gap: s; thresholds: None or a list of 1 or nv positive numbers; calibration_time: s
    (0: none); margin: > 0; release: in [0, 1].
    """

    gain: float = 50.0
    max_gap: float = 0.1
    thresholds: Optional[list] = None
    calibration_time: float = 0.0
    margin: float = 2.0
    release: float = 0.5


def stamp_nanoseconds(stamp):
    """A builtin_interfaces/Time as integer nanoseconds."""
    return stamp.sec * NANOSECONDS + stamp.nanosec


class Observing:
    """The momentum observer and collision detector of one model, fed the node's stamped joint states.

    Parameters
    ----------
    robot : robot_dynamics.Robot
        A fixed-base model (MomentumObserver raises a ValueError for a floating base).
    settings : ObserverSettings

    Attributes
    ----------
    observer : robot_dynamics.observers.MomentumObserver
    residual : ndarray
        (nv,) r after the last observed joint state (the observer's read-only array).
    detector : robot_dynamics.observers.CollisionDetector or None
        None while there are no thresholds (none given, or calibrating).
    collision : robot_dynamics.observers.Collision or None
        The verdict of the last observed joint state; None without a detector.
    changed : bool
        True when the last observed joint state changed the verdict or its bodies (what /diagnostics reports at
        once).
    """

    def __init__(self, robot, settings):
        self.robot = robot
        self.settings = settings
        self.observer = MomentumObserver(robot, settings.gain)
        self.residual = self.observer.residual
        floor = settings.thresholds
        if floor is not None and len(floor) not in (1, robot.nv):
            raise ValueError(f"parameter collision_thresholds has {len(floor)} values: give one for every "
                             f"coordinate ({robot.nv}, in the order of the parameter joints) or one for all")
        self._floor = CALIBRATION_FLOOR if floor is None else np.broadcast_to(np.asarray(floor, float), robot.nv)
        self._calibration_ns = int(round(settings.calibration_time * NANOSECONDS))
        self._peak = np.zeros(robot.nv)            # the largest |r_i| of the calibration
        self._calibrated_ns = 0
        self.detector = None
        if floor is not None and not self._calibration_ns:
            self.detector = CollisionDetector(robot, self._floor, settings.release)
        self.collision = None
        self.changed = False
        self._last_ns = None                        # the stamp of the last observed joint state

    @property
    def calibrating(self):
        """True while the thresholds are being calibrated."""
        return self.detector is None and self._calibration_ns > 0

    @property
    def calibrated(self):
        """Seconds of joint states observed for the calibration so far."""
        return self._calibrated_ns / NANOSECONDS

    def stop(self):
        """Observe no more: the next joint state (re)starts the observer (the thresholds are kept)."""
        self._last_ns = None
        self.collision = None
        if self.detector is not None:
            self.detector.reset()

    def observe(self, q, v, tau, stamp_ns):
        """Advance to the joint state (q (nq,), v (nv,)) stamped ``stamp_ns`` (integer ns), ``tau`` (nv,) the effort
        applied since the last one; then the detector's verdict.

        Returns the reason of a restart (``"stamp_not_after"``, ``"gap"``), or None (the first start included).
        A ValueError from the observer (a state the model rejects) leaves everything as it was.
        """
        last, reason = self._last_ns, None
        if last is not None and stamp_ns <= last:
            reason = "stamp_not_after"
        elif last is not None and stamp_ns - last > self.settings.max_gap * NANOSECONDS:
            reason = "gap"
        if last is None or reason is not None:
            self.observer.start(q, v)                               # r = 0
            dt_ns = 0
            if self.detector is not None:
                self.detector.reset()
        else:
            dt_ns = stamp_ns - last
            self.observer.update(q, v, tau, dt_ns / NANOSECONDS)
        self._last_ns = stamp_ns
        if self.calibrating:
            self._calibrate(dt_ns)
        before = self.collision
        self.collision = self.detector.update(self.residual) if self.detector is not None else None
        self.changed = self.collision is not None and (before is None or before.detected != self.collision.detected
                                                       or before.bodies != self.collision.bodies)
        return reason

    def _calibrate(self, dt_ns):
        """Take r into the calibration; once it spans calibration_time, make the detector (calibrate's rule)."""
        np.maximum(self._peak, np.abs(self.residual), out=self._peak)
        self._calibrated_ns += dt_ns
        if self._calibrated_ns >= self._calibration_ns:
            thresholds = np.maximum(self.settings.margin * self._peak, self._floor)
            self.detector = CollisionDetector(self.robot, thresholds, self.settings.release)

    def calibration(self):
        """(calibration_time in ns, the ns observed for it so far, the largest |r_i| then (nv,)): what a model that
        replaces this one takes over (carry_calibration)."""
        return self._calibration_ns, self._calibrated_ns, self._peak.copy()

    def carry_calibration(self, old):
        """Take the calibration of ``old`` (the Observing of the model this one replaces, the same coordinates):
        its thresholds, or the calibration so far while it was calibrating."""
        span, observed, peak = old.calibration()
        if not self.calibrating or span != self._calibration_ns or old.robot.nv != self.robot.nv:
            return
        self._peak[:], self._calibrated_ns = peak, observed
        if old.detector is not None:
            self.detector = CollisionDetector(self.robot, old.detector.thresholds, self.settings.release)

    def wrench(self, q, frame):
        """(6,) [force; torque] at ``frame`` that best explains r, in the frame's axes about its origin
        (MomentumObserver.wrench, reference ``local``)."""
        return self.observer.wrench(q, frame, "local").wrench
