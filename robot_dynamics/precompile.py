"""robot-dynamics compile: build every kernel for this machine before the first call, into numba's cache.

    robot-dynamics compile [--jobs N]

The kernels are the same for every robot (their sizes are arguments), so calling every public method of a Robot
once -- a single state and a batch -- on a bundled floating-base quadruped compiles, or loads, all of them; later
processes load them from the cache (see the README's Speed section for where it lives).  The calls are spread over
N worker processes (default: the machine's cores); shared helpers are compiled first, by the first task (beside
only the composite controller's tick, which shares none), so that the workers do not compile them side by side.
The controllers' compiled ticks too (CONTROLLERS: each built and ticked once on the quadruped), so that a user's
first tick after the command loads its tick rather than compiling it: in the same workers as the methods, the
slowest tasks of either first (SLOWEST), so that no phase waits on another's slowest task.
A progress bar goes to stderr.  Use it once after installing: in a Dockerfile (``RUN robot-dynamics compile``),
before starting ROS nodes, or in CI before the tests.
"""
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from .algorithms.registry import QUANTITIES

# Every call, as (method, arguments, keywords): the arguments' letters are q, v, a (a state), f (the robot's
# frame), F (a list of that frame: a contact set) and x (an nv-vector for solve_mass_matrix).  Each call runs on
# one state and on a batch of two, but for those marked single (test_precompile checks every public method of
# Robot that computes from a state is here).  First the registry's rows that are Robot methods of their own name
# and take the state alone, then the methods written on other rows or with other arguments.
CALLS = [(row.name, "".join("q" if x.startswith("q") else "v" for x in row.inputs)) for row in QUANTITIES
         if not row.name.startswith("_") and row.state == row.inputs and not row.matrices] + [
    ("coriolis_matrix", "qv", {"kind": "christoffel"}), ("dynamics", "qv"), ("dynamics", "qvva"),
    ("time_derivatives", "qva"), ("time_derivatives", "qvavaa"), ("state_derivatives", "qv"), ("innovations", "q"),
    ("solve_mass_matrix", "qx"), ("diagonalized", "qva"), ("global_factorization", "qv"),
    ("frame_placement", "qf"), ("frame_velocity", "qvf"), ("frame_acceleration_bias", "qvf"),
    ("constrained_dynamics", "qvaF"),
    ("constrained_dynamics", "qvaF", {"baumgarte": (1.0, 1.0), "damping": 1e-6}),
    ("task_space_dynamics", "qvf"), ("task_space_dynamics", "qvf", {"position_only": True}),
    *(("frame_jacobian", "qf", {"reference": r}) for r in ("local", "world", "local_world_aligned")),
    ("inverse_dynamics", "qva", {"f_ext": "wrench"}), ("forward_dynamics", "qva", {"f_ext": "wrench"}),
    ("parameter_derivatives", "qv", {}, "single"), ("linearize", "qva", {}, "single"),
    ("linearize", "qva", {"dt": 1e-3}, "single"),
    ("integrate", "qv"), ("difference", "qq"),            # configuration.lie_integrate, difference_rows
]
TASKS = sorted({call[0] for call in CALLS})          # one task per method: its calls run in one process


def run_task(name, each=False):
    """Every call of the method ``name`` on the floating-base quadruped (the kernels are the same for every
    robot), compiling or loading their kernels.  Returns (name, seconds), or with ``each`` (name, the seconds of
    each call: one state, then a batch, for each of its CALLS)."""
    from . import load_urdf
    from .bundled import bundled_urdf

    start = time.perf_counter()
    robot, frame = load_urdf(bundled_urdf("quadruped"), floating_base=True), "FL_foot"
    rng = np.random.default_rng(0)
    q, v = robot.random_state(rng)
    values = {"q": q, "v": v, "a": rng.normal(size=robot.nv), "x": rng.normal(size=robot.nv), "f": frame,
              "F": [frame]}
    times = []
    for method, letters, keywords, *single in (call + ({},) * (3 - len(call)) for call in CALLS):
        if method != name:
            continue
        keywords = {k: ({frame: np.ones(6)} if k == "f_ext" else x) for k, x in keywords.items()}
        t = time.perf_counter()
        getattr(robot, method)(*(values[c] for c in letters), **keywords)
        times.append(time.perf_counter() - t)
        if not single:
            getattr(robot, method)(*(np.stack([values[c]] * 2) if c in "qvax" else values[c] for c in letters),
                                   **keywords)
            times.append(time.perf_counter() - t - times[-1])
    return name, (times if each else time.perf_counter() - start)


# The controllers whose ticks are compiled (controllers/, observers/): each on the quadruped (its base fixed for the
# observer, which refuses a floating one), the tick the same for every robot, a floating base's and a fixed base's
# alike; SlotineLi also with adapted drives (its numpy route)
CONTROLLERS = ("CompositeSlotineLi", "SlotineLi", "OperationalSpace", "ComputedTorque", "MomentumObserver")


def run_controller(name):
    """One tick (two for the adaptive controllers: the filter's start, then a step) of the controller ``name`` on
    the quadruped, compiling or loading its tick.  Returns (name, seconds)."""
    from . import load_urdf
    from .bundled import bundled_urdf
    from .controllers import (CompositeSlotineLi, ComputedTorque, InertiaMetric, OperationalSpace,
                              RelativeGains, SlotineLi)
    from .observers import MomentumObserver

    start = time.perf_counter()
    robot, frame = load_urdf(bundled_urdf("quadruped"), floating_base=name != "MomentumObserver"), "FL_foot"
    q, v = robot.random_state(np.random.default_rng(0))
    z = np.zeros(robot.nv)
    if name == "ComputedTorque":
        ComputedTorque(robot, 100.0, 20.0).torque(q, v, q, z, z)
    elif name == "OperationalSpace":
        OperationalSpace(robot, frame, 400.0, 40.0).torque(q, v, robot.frame_placement(q, frame), z[:6], z[:6])
    elif name == "SlotineLi":
        metric = InertiaMetric(robot.parameters)
        SlotineLi(robot, 5.0, 5.0, metric.gain(1.0), projection=metric.project).update(q, v, q, z, z, 1e-3)
        driven = robot.with_drives(damping=0.1, friction=0.1)
        SlotineLi(driven, 5.0, 5.0, metric.gain(1.0), drives="viscous").update(q, v, q, z, z, 1e-3)
    elif name == "CompositeSlotineLi":
        CompositeSlotineLi.compile_tick()           # first: the kernels it calls meanwhile in the other workers
        controller = RelativeGains().slotine_li(robot, robot.parameters, q)
        controller.update(q, v, q, z, z, 0.0), controller.update(q, v, q, z, z, 1e-3)
    else:
        MomentumObserver(robot, 100.0).update(q, v, z, 1e-3)
    return name, time.perf_counter() - start


def in_workers(task, names, jobs=None, stream=None, first=None, beside=()):
    """Run ``task(name)`` for every name on ``jobs`` spawned processes (default: the machine's cores; fork is not
    safe with numba), each returning (name, seconds).  With ``first``, that name runs before the others start, and
    only the names of ``beside`` with it (the shared helpers it compiles are then loaded, not compiled side by side,
    by every task but those, which share none with it).  A progress bar on ``stream`` (default stderr).  Returns
    {name: seconds} and the wall time."""
    stream = sys.stderr if stream is None else stream
    jobs = (os.cpu_count() or 1) if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    names = list(names)
    began = time.perf_counter()
    done = {}

    def progress(name):
        stream.write(f"\r  [{'#' * round(30 * len(done) / len(names)):<30}] {len(done)}/{len(names)} {name:<30}")
        stream.flush()

    head = [] if first is None else [first, *beside]
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        pending = [pool.submit(task, name) for name in head]
        if head:
            done.update([pending.pop(0).result()])     # before the others are queued
            progress(first)
        pending += [pool.submit(task, name) for name in names if name not in head]
        for future in as_completed(pending):
            name, seconds = future.result()
            done[name] = seconds
            progress(name)
    stream.write("\n")
    return done, time.perf_counter() - began


def run_method_or_controller(name):
    """run_controller for a name of CONTROLLERS, the composite controller's tick alone for COMPOSITE_TICK, else
    run_task."""
    if name == COMPOSITE_TICK:
        from .controllers import CompositeSlotineLi
        start = time.perf_counter()
        CompositeSlotineLi.compile_tick()
        return name, time.perf_counter() - start
    return run_controller(name) if name in CONTROLLERS else run_task(name)


# The tasks that compile longest, longest first (seconds of CPU on a 2-core machine, cold: the composite's tick
# 40-50, the forward dynamics and its derivatives 17-22, ...): started first, so that no long task is left running
# alone at the end while the other workers idle (longest-processing-time-first scheduling).  The others follow in
# TASKS' order, the regressors' first (the composite controller's construction calls them).
SLOWEST = ("forward_dynamics", "forward_dynamics_derivatives", "inverse_mass_matrix", "constrained_dynamics",
           "diagonalized", "SlotineLi", "OperationalSpace", "time_derivatives", "state_derivatives", "regressor",
           "momentum_regressor")
# The composite controller's tick, built without a robot (CompositeSlotineLi.compile_tick) from the start, beside
# mass_matrix (which compiles the helpers every kernel shares, and the tick none of them); its controller's task,
# then quick (its tick and kernels in the cache), last.
COMPOSITE_TICK = "CompositeSlotineLi.compile_tick"


def compile_order():
    """The names compile_all runs, in order: mass_matrix, COMPOSITE_TICK, the SLOWEST, the other tasks and
    controllers, the composite controller."""
    rest = [name for name in TASKS + list(CONTROLLERS)
            if name not in SLOWEST and name not in ("mass_matrix", "CompositeSlotineLi")]
    return ["mass_matrix", COMPOSITE_TICK, *SLOWEST, *rest, "CompositeSlotineLi"]


def compile_all(jobs=None, stream=None):
    """Every task of compile_order on ``jobs`` processes: mass_matrix first, with the composite's tick beside it;
    the others once mass_matrix is done (in_workers)."""
    return in_workers(run_method_or_controller, compile_order(), jobs, stream, first="mass_matrix",
                      beside=(COMPOSITE_TICK,))


def main(args, out):
    """The command: compile the methods and the controllers' ticks; print the slowest tasks and the totals; delete
    the kernel cache folders older sources left beside the package (calls.cache.remove_stale)."""
    done, wall = compile_all(args.jobs)
    done["CompositeSlotineLi"] += done.pop(COMPOSITE_TICK)          # its tick and its controller, one figure
    methods = {name: seconds for name, seconds in done.items() if name not in CONTROLLERS}
    slowest = sorted(methods.items(), key=lambda item: -item[1])[:5]
    out.write(f"{len(methods)} methods and {len(done) - len(methods)} controllers' ticks compiled or loaded in "
              f"{wall:.1f} s on {args.jobs or os.cpu_count()} processes; slowest methods: "
              + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in slowest) + "; ticks: "
              + ", ".join(f"{name} {done[name]:.1f} s" for name in CONTROLLERS) + "\n")
    from . import controllers  # noqa: F401  (its ticks' cache folder in use too, before remove_stale)
    from .calls.cache import remove_stale
    removed = remove_stale()
    if removed:
        out.write(f"removed {len(removed)} kernel cache folders of older sources beside the package "
                  f"({sum(size for _, size in removed) / 1e6:.0f} MB)\n")
