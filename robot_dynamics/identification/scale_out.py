"""Scale-out: the per-joint normal equations of a log larger than one process, chunk by chunk with Dask.

One task builds the normal equations of one chunk of samples (or of one log file) with
least_squares.normal_equations, and a tree of additions reduces them, `split_every` at a time:

    G_j = sum_chunks sum_{t in chunk} Y_j(t)^T Y_j(t),   b_j = sum_chunks sum_t Y_j(t)^T tau_j(t),   c_j = ...

A worker holds one chunk's samples (and the regressor of 4096 of them at a time) per task, so its memory is
bounded by the chunk size, never by the log size.  The robot travels to the workers once per computation as its
pickled RobotModel (or its URDF text) in one graph key; each worker thread rebuilds the Robot once and keeps it
(a Robot holds references to compiled functions, which do not pickle; and one Robot runs one batch at a time).

Dask is imported by these functions only: `import robot_dynamics` does not import it, and nothing here starts a
cluster.
"""
import hashlib
import os
import pickle
import sys
import threading
from functools import reduce
from operator import add
from pathlib import Path

import numpy as np

from ..loading import load_urdf
from ..robot import Robot
from .least_squares import normal_equations
from .logs import read_log

_LOCAL = threading.local()     # per thread: .robots, token -> the Robot rebuilt from a source
_KEEP = 8                      # robots kept per thread


def dask_normal_equations(robot, q, v=None, a=None, tau=None, *, friction=False, chunks=100_000, client=None,
                          progress=None, urdf=None, split_every=8, armature=False):
    """Per-joint normal equations (least_squares.NormalEquations) of a log, reduced chunk by chunk with Dask.

    The same sums as least_squares.normal_equations(robot, q, v, a, tau, friction, armature=armature), computed
    as one task per chunk of `chunks` samples (or per log file) and a tree of additions.

    q, v, a, tau: (N, nq), (N, nv), (N, nv), (N, nv) numpy or dask arrays, rechunked along the samples to `chunks`
        rows (a dask array's own blocks are read as they are, so a worker holds the larger of the two);
        or q a list of log file paths (npz, CSV, ROS 2 bags; or one path) and v, a, tau None: each task reads one
        file with logs.read_log, which must carry v, a and tau, so a worker holds one file at a time.
        Numpy arrays travel to the workers inside the task graph: for logs that do not fit one process, pass
        files or a lazily read dask array (dask.array.from_zarr, from_delayed, ...).
    friction, armature: the drives' columns (least_squares.stacked_regressor; a linear friction model).
    chunks: samples per task (array input).
    client: a distributed.Client (of a LocalCluster or of a cluster's scheduler, Client("tcp://host:8786")); by
        default the current Dask scheduler (the default distributed client if there is one, else local threads).
    progress: None, True (Dask's progress bar) or a callable progress(done, total) called as each task completes:
        samples summed so far and in all (arrays), or log files read so far and in all (files).
    urdf: the robot's URDF (path or XML text); when given, the workers rebuild the robot from its text (with the
        robot's floating base, gravity and mimic coupling) instead of receiving its pickled model.
    split_every: partial sums added per reduction task.
    -> NormalEquations
    """
    chunks = _positive_int(chunks, "chunks")
    split_every = _positive_int(split_every, "split_every", least=2)
    if progress is not None and progress is not True and not callable(progress):
        raise ValueError(f"progress: None, True or a callable progress(done, total), not {progress!r}")
    import dask

    columns = {"friction": friction, "armature": armature}
    token, source = _robot_source(robot, urdf)
    source = dask.delayed(source, name=f"robot-source-{token}")
    files = _log_files(q)
    if files is not None:
        if v is not None or a is not None or tau is not None:
            raise ValueError("v, a, tau: must be None when q is a list of log files (each file carries them)")
        parts = [dask.delayed(_file_normal_equations, pure=True)(source, token, path, columns) for path in files]
        sizes = [1] * len(parts)
    else:
        parts, sizes = _chunk_tasks(dask, robot, source, token, (q, v, a, tau), columns, chunks)
    total = _tree_sum(dask, parts, split_every)
    return _compute(total, list(zip(parts, sizes)), client, progress)


def _positive_int(x, name, least=1):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < least:
        raise ValueError(f"{name}: an integer >= {least}, not {x!r}")
    return int(x)


def _log_files(q):
    """q as a list of log file paths (one path: a list of one), or None if q holds numbers."""
    if isinstance(q, (str, os.PathLike)):
        q = [q]
    if not isinstance(q, (list, tuple)) or not all(isinstance(x, (str, os.PathLike)) for x in q):
        return None
    if not q:
        raise ValueError("q: an empty list of log files")
    return [os.fspath(path) for path in q]


def _robot_source(robot, urdf):
    """(token, source): what the workers rebuild the robot from, ("model", pickled RobotModel) or ("urdf", XML
    text, load_urdf options), and a digest of it that names it in the graph and in each worker's cache."""
    if not isinstance(robot, Robot):
        raise ValueError(f"robot: a robot_dynamics Robot, not {type(robot).__name__}")
    if urdf is None:
        source = ("model", pickle.dumps(robot.model, protocol=pickle.HIGHEST_PROTOCOL))
    else:
        text = Path(urdf).read_text() if _is_path(urdf) else urdf
        options = {"floating_base": robot.floating_base, "gravity": tuple(robot.gravity),
                   "mimic": any(j.mimic is not None for j in robot.model.joints)}
        rebuilt = load_urdf(text, **options)
        if (rebuilt.nq, rebuilt.nv, rebuilt.joint_names) != (robot.nq, robot.nv, robot.joint_names):
            raise ValueError(f"urdf: describes {rebuilt!r} with joints {rebuilt.joint_names}, not the robot "
                             f"{robot!r} with joints {robot.joint_names}")
        source = ("urdf", text, options)
    return hashlib.sha256(pickle.dumps(source)).hexdigest()[:32], source


def _is_path(urdf):
    if isinstance(urdf, os.PathLike):
        return True
    if isinstance(urdf, bytes):
        return False
    if not isinstance(urdf, str):
        raise ValueError(f"urdf: a path or the URDF's XML text, not {type(urdf).__name__}")
    return not urdf.lstrip().startswith("<")


def _worker_robot(token, source):
    """The Robot of a source, built once per worker thread, so that a worker's threads compute at the same time
    (the batches of one Robot take turns on its lock: they share its per-thread workspaces)."""
    robots = getattr(_LOCAL, "robots", None)
    if robots is None:
        robots = _LOCAL.robots = {}
    robot = robots.get(token)
    if robot is None:
        robot = Robot(pickle.loads(source[1])) if source[0] == "model" else load_urdf(source[1], **source[2])
        while len(robots) >= _KEEP:
            del robots[next(iter(robots))]
        robots[token] = robot
    return robot


def _chunk_tasks(dask, robot, source, token, arrays, columns, chunks):
    """One task per chunk of `chunks` samples of q, v, a, tau (validated shapes, aligned blocks), and the chunks'
    sizes."""
    import dask.array as da

    names, widths = ("q", "v", "a", "tau"), (robot.nq, robot.nv, robot.nv, robot.nv)
    for name, x in zip(names[1:], arrays[1:]):
        if x is None:
            raise ValueError(f"{name}: required with an array q (only a list of log files carries its own)")
    arrays = [x if hasattr(x, "shape") and hasattr(x, "dtype") else np.asarray(x) for x in arrays]
    for name, x, width in zip(names, arrays, widths):       # numpy and dask arrays, memory maps, HDF5 datasets
        if x.dtype.kind not in "iuf":
            raise ValueError(f"{name}: real numbers expected, not dtype {x.dtype}")
        if len(x.shape) != 2 or x.shape[1] != width:
            raise ValueError(f"{name}: expected shape (N, {width}) for {robot!r}, got {tuple(x.shape)}")
        if np.isnan(x.shape[0]):
            raise ValueError(f"{name}: a dask array of unknown length (call its compute_chunk_sizes() first)")
        if x.shape[0] != arrays[0].shape[0]:
            raise ValueError(f"{name}: {x.shape[0]} samples, but q has {arrays[0].shape[0]}")
    blocks = []
    for x, width in zip(arrays, widths):
        x = x.rechunk((chunks, width)) if isinstance(x, da.Array) else da.from_array(x, chunks=(chunks, width))
        blocks.append(x.to_delayed().ravel())
    sizes = x.chunks[0]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return [dask.delayed(_chunk_normal_equations, pure=True)(source, token, *chunk, columns, int(start))
            for *chunk, start in zip(*blocks, starts)], list(sizes)


def _chunk_normal_equations(source, token, q, v, a, tau, columns, start):
    """Task: the normal equations of samples start .. start + len(q) of the log."""
    for name, x in zip(("q", "v", "a", "tau"), (q, v, a, tau)):
        _check_finite(x, name, start)
    return normal_equations(_worker_robot(token, source), q, v, a, tau, **columns)


def _file_normal_equations(source, token, path, columns):
    """Task: the normal equations of one log file (read_log checks its shapes and numbers, naming the file)."""
    robot = _worker_robot(token, source)
    log = read_log(path, robot)
    missing = [name for name in ("v", "a", "tau") if getattr(log, name) is None]
    if missing:
        raise ValueError(f"log '{path}' has no {', '.join(missing)}: the Dask route needs v, a and tau logged")
    return normal_equations(robot, log.q, log.v, log.a, log.tau, **columns)


def _check_finite(x, name, start):
    bad = ~np.isfinite(x)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name}: non-finite value {x[i, j]} at sample {start + i}, column {j}")


def _tree_sum(dask, parts, split_every):
    """A tree of additions over the partial normal equations, split_every at a time."""
    while len(parts) > 1:
        parts = [dask.delayed(_sum, pure=True)(*parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
    return parts[0]


def _sum(*parts):
    return reduce(add, parts)


def _compute(total, tasks, client, progress):
    """Compute the reduction on the client (or the current scheduler); tasks: [(a chunk's or a file's task, its
    samples or 1), ...], whose completions progress reports."""
    client = client if client is not None else _default_client()
    if client is None:
        return _compute_locally(total, tasks, progress)
    if progress is None:
        return client.compute(total).result()
    if progress is True:
        from distributed import progress as progress_bar

        future = client.compute(total)
        progress_bar(future, notebook=False, scheduler=client.scheduler.address)     # a text bar, until done
        return future.result()
    return _compute_reporting(client, total, tasks, progress)


def _compute_locally(total, tasks, progress):
    """total.compute() on the current local scheduler (threads unless configured otherwise), with Dask's progress
    bar or progress(done, total) called as the chunk and file tasks complete."""
    if progress is None:
        return total.compute()
    from dask.callbacks import Callback
    from dask.diagnostics import ProgressBar

    counts, done = {part.key: n for part, n in tasks}, [0]

    def posttask(key, result, dsk, state, worker_id):
        if key in counts:
            done[0] += counts[key]
            progress(done[0], sum(counts.values()))
    with ProgressBar() if progress is True else Callback(posttask=posttask):
        return total.compute()


def _compute_reporting(client, total, tasks, progress):
    """client.compute with progress(done, total) called as the chunk and file tasks complete; each one's future is
    released once reported, so the cluster keeps a chunk's result only until its reduction task has used it."""
    from distributed import as_completed

    counts = {part.key: n for part, n in tasks}
    total, *chunks = client.compute([total, *(part for part, _ in tasks)])
    completed, done = as_completed(chunks, loop=client.loop), 0
    del chunks
    for future in completed:
        done += counts[future.key]
        future.release()
        progress(done, sum(counts.values()))
    return total.result()


def _default_client():
    """The default distributed client, if distributed is imported and one is registered."""
    if "distributed" not in sys.modules:
        return None
    from distributed import default_client
    try:
        return default_client()
    except ValueError:
        return None
