"""Diagnostics on ``/diagnostics`` (REP-107: diagnostic_msgs/DiagnosticArray, about once a second).

Each node reports one DiagnosticStatus named ``<fully qualified node name>: <what it does>``: the rate of the
messages it answered over the last period, the mean and worst compute time per answer, the messages it skipped,
in total and per reason (the ``kind`` of conversions.BadMessage), the exceptions its callbacks raised (per
callback and exception type, robot_dynamics.ros.guard), for a node with a robot description
(hotswap.DescriptionSwap) the descriptions it refused (per reason) and whether one is loading, and the ticks a
safeguard acted in (per kind: ``flagged``; the adaptive controller's safeguards, dynamics_node's observer
restarts). Level OK; WARN when a message was skipped, a description refused or a tick flagged in the last period,
or nothing was answered while inputs arrived; ERROR when a callback raised in the last period, or while the node
has no robot model (a lifecycle node that is not active reports its state, at level OK).
A node may add statuses of its own (``reports``): dynamics_node's momentum observer reports ``<node>: collision``,
ERROR naming the touched bodies while in collision, OK otherwise, and publishes it at once when it changes.
The ``diagnostic_msgs`` package (PyPI ``ros-diagnostic-msgs``) is optional: without it the node publishes no
diagnostics (and advertises no /diagnostics topic) and says so once in its log.
"""
import time

try:
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
except ImportError:                       # pragma: no cover - depends on the installation
    DiagnosticArray = None

PERIOD = 1.0                              # s between two reports (diagnostic_updater's default)
OK, WARN, ERROR = "ok", "warn", "error"   # the levels of a report (DiagnosticStatus.OK, ...)


class Diagnostics:
    """Counts answers and their compute time for ``node`` and reports them on /diagnostics every PERIOD.

    ``node`` must have ``skipped`` (collections.Counter) and ``robot`` attributes, and may have
    ``callback_errors``, ``refused`` and ``flagged`` (Counters), ``loading`` (bool) and ``lifecycle_state`` (str). Call
    :meth:`answered` with the compute time of every answered message and :meth:`received` for every input message.
    ``reports()``, if given, returns the node's other statuses as ``(what, level, message, values)`` (level OK, WARN
    or ERROR; values a dict of str), published with the node's every PERIOD and by :meth:`publish_reports`.
    """

    def __init__(self, node, what, reports=None):
        self.node = node
        self.what = what
        self.reports = reports or (lambda: [])
        self.count = self.received_count = 0
        self._period_count = self._period_received = 0
        self._period_time = self._period_worst = 0.0
        self._period_skipped = self._period_errors = self._period_refused = self._period_flagged = 0
        self._last = time.monotonic()
        self.publisher = None
        if DiagnosticArray is None:
            node.get_logger().info("diagnostic_msgs is not installed: no /diagnostics")
            return
        self.publisher = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        node.create_timer(PERIOD, self.publish)

    def answered(self, seconds):
        """Count an answered input that took ``seconds`` to compute."""
        self.count += 1
        self._period_count += 1
        self._period_time += seconds
        self._period_worst = max(self._period_worst, seconds)

    def received(self):
        """Count an input message."""
        self.received_count += 1
        self._period_received += 1

    def status(self):
        """The DiagnosticStatus of the period since the last report (and reset the period's counters)."""
        now = time.monotonic()
        elapsed, self._last = max(now - self._last, 1e-9), now
        skipped = sum(self.node.skipped.values())
        new_skips, self._period_skipped = skipped - self._period_skipped, skipped
        errors_by_kind = getattr(self.node, "callback_errors", {})
        errors = sum(errors_by_kind.values())
        new_errors, self._period_errors = errors - self._period_errors, errors
        refused_by_kind = getattr(self.node, "refused", None)
        refused = sum(refused_by_kind.values()) if refused_by_kind is not None else 0
        new_refused, self._period_refused = refused - self._period_refused, refused
        flagged_by_kind = getattr(self.node, "flagged", None)
        flagged = sum(flagged_by_kind.values()) if flagged_by_kind is not None else 0
        new_flagged, self._period_flagged = flagged - self._period_flagged, flagged
        state = getattr(self.node, "lifecycle_state", "active")
        n = self._period_count
        values = {"rate [Hz]": f"{n / elapsed:.3f}",
                  "mean compute time [ms]": f"{1e3 * self._period_time / n:.4f}" if n else "",
                  "max compute time [ms]": f"{1e3 * self._period_worst:.4f}" if n else "",
                  "answered": str(self.count), "received": str(self.received_count),
                  "skipped": str(skipped)}
        values.update({f"skipped {kind}": str(k) for kind, k in sorted(self.node.skipped.items())})
        values["callback errors"] = str(errors)
        values.update({f"callback error {kind}": str(k) for kind, k in sorted(errors_by_kind.items())})
        if refused_by_kind is not None:
            values["descriptions refused"] = str(refused)
            values.update({f"refused {kind}": str(k) for kind, k in sorted(refused_by_kind.items())})
            values["description loading"] = str(bool(getattr(self.node, "loading", False))).lower()
        if flagged_by_kind is not None:
            values.update({f"flagged {kind}": str(k) for kind, k in sorted(flagged_by_kind.items())})
        if hasattr(self.node, "lifecycle_state"):
            values["lifecycle state"] = state
        if new_errors:
            level, message = DiagnosticStatus.ERROR, f"{new_errors} callback exceptions in the last {elapsed:.1f} s"
        elif state != "active":
            level, message = DiagnosticStatus.OK, f"{state}: not answering"
        elif self.node.robot is None:
            level, message = DiagnosticStatus.ERROR, "no robot model: waiting for robot_description"
        elif new_refused:
            level, message = DiagnosticStatus.WARN, f"{new_refused} descriptions refused in the last {elapsed:.1f} s"
        elif new_skips:
            level, message = DiagnosticStatus.WARN, f"{new_skips} messages skipped in the last {elapsed:.1f} s"
        elif new_flagged:
            kinds = ", ".join(sorted(flagged_by_kind))
            level, message = DiagnosticStatus.WARN, f"{new_flagged} ticks flagged ({kinds}) in the last {elapsed:.1f} s"
        elif self._period_received and not n:
            level, message = DiagnosticStatus.WARN, "inputs arrive but none is answered"
        else:
            level, message = DiagnosticStatus.OK, f"{n} answered in the last {elapsed:.1f} s"
        self._period_count = self._period_received = 0
        self._period_time = self._period_worst = 0.0
        return DiagnosticStatus(level=level, name=f"{self.node.get_fully_qualified_name()}: {self.what}",
                                message=message, hardware_id=getattr(self.node.robot, "root_link", "") or "",
                                values=[KeyValue(key=k, value=v) for k, v in values.items()])

    def report_statuses(self):
        """The DiagnosticStatus of each of the node's reports."""
        levels = {OK: DiagnosticStatus.OK, WARN: DiagnosticStatus.WARN, ERROR: DiagnosticStatus.ERROR}
        return [DiagnosticStatus(level=levels[level], name=f"{self.node.get_fully_qualified_name()}: {what}",
                                 message=message, hardware_id=getattr(self.node.robot, "root_link", "") or "",
                                 values=[KeyValue(key=k, value=v) for k, v in values.items()])
                for what, level, message, values in self.reports()]

    def publish(self):
        """Publish the period's status and the reports on /diagnostics (the timer's callback)."""
        self._publish([self.status()] + self.report_statuses())

    def publish_reports(self):
        """Publish the reports now (a change that must not wait for the period: a collision)."""
        if self.publisher is not None:
            self._publish(self.report_statuses())

    def _publish(self, statuses):
        msg = DiagnosticArray(status=statuses)
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(msg)
