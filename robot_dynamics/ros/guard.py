"""Callbacks that can neither kill their node nor outlive it, and messages they cannot use, counted.

:class:`GuardedCallbacks` goes before rclpy's ``Node`` (or ``LifecycleNode``) in a node's bases. It wraps every
callback the node creates -- subscriptions, timers, services (rclpy's parameter services included), guard
conditions -- so that

- an exception raised by a callback (``MemoryError`` included; not ``KeyboardInterrupt`` or ``SystemExit``) is
  logged, throttled per callback and kind of exception, and counted in ``callback_errors`` (reported on
  /diagnostics), and the executor spins on: with rclpy's executors an exception escaping a callback ends
  ``spin()``, and with it the node;
- :meth:`quiesce` (which ``destroy_node`` calls first) stops new callbacks from running and waits until those
  already running have returned, so no callback touches a publisher whose handle is being destroyed
  (``InvalidHandle``) when another thread destroys the node.

:class:`SkipsBadMessages` counts a message a callback cannot use (a conversions.BadMessage) per kind of fault and
logs it, throttled per kind.
"""
import collections
import threading

from robot_dynamics.ros.description import WARN_PERIOD

QUIESCE_TIMEOUT = 10.0            # s that quiesce() waits for running callbacks


class GuardedCallbacks:
    """Mixin for an rclpy node: every callback guarded (see the module docstring).

    Attributes
    ----------
    callback_errors : collections.Counter
        Exceptions raised by callbacks, per ``"<callback>: <exception type>"``.
    """

    def __init__(self, *args, **kwargs):
        self.callback_errors = collections.Counter()
        self._idle = threading.Condition()
        self._running = 0                         # callbacks running now, in every thread
        self._depth = threading.local()           # callbacks running in this thread (a callback may destroy)
        self._quiesced = False
        super().__init__(*args, **kwargs)         # rclpy's Node creates its parameter services here: guarded

    def create_subscription(self, msg_type, topic, callback, *args, **kwargs):
        """rclpy's create_subscription, the callback guarded."""
        return super().create_subscription(msg_type, topic, self._guarded(callback), *args, **kwargs)

    def create_timer(self, timer_period_sec, callback, *args, **kwargs):
        """rclpy's create_timer, the callback guarded."""
        guarded = self._guarded(callback)

        def tick():                               # no parameter: rclpy passes a TimerInfo to a callback that has one
            guarded()
        return super().create_timer(timer_period_sec, tick, *args, **kwargs)

    def create_guard_condition(self, callback, *args, **kwargs):
        """rclpy's create_guard_condition, the callback guarded."""
        guarded = self._guarded(callback)

        def triggered():
            guarded()
        return super().create_guard_condition(triggered, *args, **kwargs)

    def create_service(self, srv_type, srv_name, callback, *args, **kwargs):
        """rclpy's create_service, the callback guarded."""
        # a failed service callback answers with the empty response rclpy handed it (None would raise in rclpy)
        return super().create_service(srv_type, srv_name,
                                      self._guarded(callback, fallback=lambda request, response: response),
                                      *args, **kwargs)

    def _guarded(self, callback, fallback=lambda *args: None):
        name = getattr(callback, "__name__", type(callback).__name__)

        def guarded(*args):
            with self._idle:
                if self._quiesced:
                    return fallback(*args)
                self._running += 1
            self._depth.value = getattr(self._depth, "value", 0) + 1
            try:
                return callback(*args)
            except Exception as err:                       # MemoryError included
                self._callback_failed(name, err)
                return fallback(*args)
            finally:
                self._depth.value -= 1
                with self._idle:
                    self._running -= 1
                    self._idle.notify_all()
        return guarded

    def _callback_failed(self, name, err):
        key = f"{name}: {type(err).__name__}"
        self.callback_errors[key] += 1
        self.get_logger().error(f"callback {name} raised {type(err).__name__}: {err} (the node goes on; "
                                f"{self.callback_errors[key]} so far)", throttle_duration_sec=WARN_PERIOD)

    def quiesce(self, timeout=QUIESCE_TIMEOUT):
        """Run no more callbacks; wait up to ``timeout`` s for those running in other threads to return.

        Returns True when none is left running. Callbacks delivered afterwards return at once.
        """
        own = getattr(self._depth, "value", 0)              # called from a callback: do not wait for oneself
        with self._idle:
            self._quiesced = True
            return self._idle.wait_for(lambda: self._running <= own, timeout)

    def destroy_node(self):
        """:meth:`quiesce`, then destroy."""
        if not self.quiesce():
            self.get_logger().warning(f"a callback still runs after {QUIESCE_TIMEOUT} s; destroying the node")
        return super().destroy_node()


class SkipsBadMessages:
    """Mixin for a node with a ``skipped`` collections.Counter: ``_skip(err)`` counts a message that cannot be
    used (a conversions.BadMessage) under its kind of fault and logs it, throttled per kind."""

    def _skip(self, err):
        self.skipped[err.kind] += 1
        loggers = self.__dict__.setdefault("_kind_loggers", {})
        logger = loggers.get(err.kind)
        if logger is None:
            logger = loggers[err.kind] = self.get_logger().get_child(err.kind)
        logger.warning(f"skipped: {err}", throttle_duration_sec=WARN_PERIOD)
