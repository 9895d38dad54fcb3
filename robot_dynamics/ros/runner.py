"""Running a node as a process: one entry point shared by every node of the package."""
import gc
import os
import signal
import sys
import threading

import rclpy
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.experimental import EventsExecutor
from rclpy.signals import SignalHandlerOptions


def run(node_class, args=None):
    """Run one node until Ctrl-C or SIGTERM; then destroy it while the context is up, so it can still publish.

    rclpy's own signal handlers would shut the context down first (and a controller could not publish its last
    zero effort command), so they are not installed: the executor spins in short slices until a signal handler
    has asked it to stop. The executor is rclpy's C++ EventsExecutor, which costs a fraction of the Python
    executors' time per message (a closed loop over two nodes ticks about 1.5 times faster with it).
    Once the node is built, every object of the process (rclpy, numpy, numba and its kernels, the node and its
    first model: some 150,000) is frozen out of the cyclic garbage collector (``gc.freeze()``), so a full
    collection, which the allocations of a new description trigger, scans only what came later: it pauses the node
    for well under a millisecond instead of ~50 ms (several times that on a busy machine). Frozen objects are
    still freed by reference counting.
    OpenMP's idle workers sleep (``OMP_WAIT_POLICY=PASSIVE`` unless set): a batch call (numba's parallel kernels,
    OpenMP on this machine; the composite controller's first tick after a gap makes one) otherwise left a worker
    spinning on the other core after it returned (perf on adaptive_controller_node at 1 kHz: 9.5 % of its samples
    in libgomp, 14 ms of CPU per batch call in process), taken from the node's own thread on a busy machine.
    Returns the exit code: 0, or 2 when the node cannot start (its message on stderr).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")       # read when libgomp loads: at the first batch call
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda signum, frame: stop.set())
    try:
        node = node_class()
    except (ValueError, OSError, InvalidParameterTypeException, InvalidParameterValueException) as err:
        print(f"{node_class.__name__}: {err}", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    except MemoryError:
        print(f"{node_class.__name__}: the robot description does not fit in memory", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    gc.collect()
    gc.freeze()
    executor = EventsExecutor()
    executor.add_node(node)
    try:
        while not stop.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.remove_node(node)
        node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()
    return 0
