"""What the quantities of one robot share: the body records, the workspace and its per-thread copies, gravity,
the batch lock and loop, the result pool and the frame table; and the messages of the kernels' status codes."""
import math
import threading

import numpy as np

from ..algorithms.kinematics import ERR_INPUT, ERR_OVERFLOW, ERR_OVERLAP, ERR_QUAT, ERR_SINGULAR
from ..algorithms.registry import QUANTITIES
from ..algorithms.workspace import workspace
from ..configuration import ConfigurationSpace
from ..memory import ResultPool
from .batch import batch_loop, layout, thread_count
from .compiling import compiled, prepare_target
from .frames import FrameTable
from .kernels import copy_back, dense, kernel_types, loop_types
from .native import entry, overlapping

_ND, _F64, _empty = np.ndarray, np.dtype(np.float64), np.empty


class Engine:
    """The body records, workspace, gravity, batch machinery and frame table of one robot (see the module's
    docstring).  Threads: a single state is computed within one compiled call, which holds the GIL, so threads that
    share a robot take turns on its workspace; a batch runs on numba's threads outside the GIL in per-thread
    workspaces, one batch of a robot at a time (its lock)."""

    def __init__(self, model):
        prepare_target()                            # numba's one-time set-up, here rather than in a first call
        self.model = model
        self.nq, self.nv, self.nbodies = model.nq, model.nv, model.nbodies
        self.gravity = np.array(model.gravity, dtype=float)
        self.space = ConfigurationSpace(model)
        self.q_shape, self.v_shape = (model.nq,), (model.nv,)
        self.bodies = model.bodies.copy()           # kernels take writable arrays; the model stays frozen
        self.work = workspace(model.nbodies)
        self.thread_work, self.thread_arrays = None, {}   # a workspace per thread of a batch (per_thread), made once
        self.lock = threading.Lock()                # one batch at a time in those workspaces
        self.results = ResultPool()                 # memory for batches' results, reused once dropped (memory.py)
        self.frames = FrameTable(model)
        self.coupled = any(j.mimic is not None for j in model.joints)   # mimic.CoupledCalls, no ABA
        self.loop = None                            # batch.batch_loop for loop_types(), resolved at first use
        sizes = {"nq": model.nq, "nv": model.nv, "nb": model.nbodies, "ny": 10 * model.nbodies}
        self.shapes = {row.name: tuple(tuple(sizes.get(n, n) for n in shape) for shape in row.shapes)
                       for row in QUANTITIES}

    def batch(self, checked=True, **arrays):
        """Validate named arrays, q-like ones (names starting with q) of width nq, others nv; flatten the batch.

        checked=False leaves finiteness and zero quaternions to the compiled kernel, which reports them (and uses
        a non-unit quaternion normalized, as for one state): float64 arrays are then taken without a copy.
        Returns the flattened (B, width) arrays followed by the common leading shape.
        """
        out, shape = [], None
        for name, x in arrays.items():
            width, what = (self.nq, "nq") if name.startswith("q") else (self.nv, "nv")
            if checked or type(x) is not _ND or x.dtype is not _F64:
                try:
                    x = np.array(x, dtype=float)
                except (TypeError, ValueError):
                    raise ValueError(f"{name} must be a numeric array of shape (..., {what}={width})") from None
            if x.ndim == 0 or x.shape[-1] != width:
                raise ValueError(f"{name} must have shape (..., {what}={width}), got {x.shape}")
            if shape is None:
                shape = x.shape[:-1]
            elif x.shape[:-1] != shape:
                raise ValueError(f"{name} has batch shape {x.shape[:-1]}, expected {shape} like "
                                 f"{next(iter(arrays))}")
            if checked:
                if not np.isfinite(x).all():
                    raise ValueError(f"{name} contains non-finite values (NaN or inf)")
                if width == self.nq and name.startswith("q"):
                    self.space.normalize(x, name)
            out.append(x.reshape(math.prod(shape), width))
        return (*out, shape)

    def error(self, status, row, inputs=()):
        """The ValueError of a kernel's status code (kinematics.ERR_* and the row's own `errors`) for the quantity
        `row` at the state `inputs` (one state's arrays, in the order of row.inputs)."""
        name = row.name.lstrip("_")
        for code, message in row.errors:
            if status == code:
                return ValueError(message)
        if status == ERR_OVERFLOW:
            sizes = [float(np.max(np.abs(x), initial=0.0)) for x in inputs[:len(row.state)]]
            culprit = f": {row.inputs[int(np.argmax(sizes))]} holds {max(sizes):.3g}" if sizes else ""
            return ValueError(f"{name} overflows float64 at this state (a result is not finite){culprit}")
        if status == ERR_OVERLAP:
            return ValueError(f"an out of {name} overlaps an input or another out")
        if status == ERR_QUAT:
            q = np.asarray(inputs[0]).reshape(-1) if len(inputs) and np.size(inputs[0]) == self.model.nq else None
            starts = ConfigurationSpace(self.model).quaternions           # the zero one(s), when q is at hand
            zero = [i for i in starts if q is not None and not np.linalg.norm(q[i:i + 4]) >= 1e-12]
            where = ", ".join(f"q[{i}:{i + 4}]" for i in (zero or starts))
            return ValueError(f"{where} is a zero quaternion; expected [qx, qy, qz, qw] of non-zero norm")
        if status == ERR_SINGULAR:
            return ValueError("the mass matrix is singular at this q: a joint moves a subtree without mass or "
                              "inertia, so the forward dynamics is undefined")
        return ValueError(f"{row.inputs[int(status) - ERR_INPUT]} contains non-finite values (NaN or inf)")

    def per_thread(self, row, arrays):
        """The workspaces of a batch's threads (thread_count, made once, larger when more threads are set), and
        copies of the per-robot arrays `arrays` of `row` for each: (threads, nbodies) records, (threads, ...)."""
        threads = thread_count()
        if self.thread_work is None or self.thread_work.shape[0] < threads:
            self.thread_work = np.repeat(self.work[None], threads, axis=0)
            self.thread_arrays = {}
        copies = self.thread_arrays.get(row.name)
        if copies is None or any(x.shape[1:] != y.shape for x, y in zip(copies, arrays)):
            count = self.thread_work.shape[0]
            copies = self.thread_arrays[row.name] = tuple(np.repeat(x[None], count, axis=0) for x in arrays)
        return self.thread_work, copies

    def run_batch(self, row, arrays, flat, targets):
        """The status codes of the compiled parallel loop of `row` (with its per-robot arrays `arrays`) over the
        states `flat` into `targets`.

        The loop takes C-contiguous arrays (kernel_types): arrays of other strides are replaced (dense), and the
        results copied back once every state has succeeded; status[0] is ERR_OVERLAP, and nothing computed, when
        the byte extents of the caller's targets overlap the inputs' or each other's (native.overlapping)."""
        status = np.zeros(flat[0].shape[0], dtype=np.int64)
        outs = [x if x.ndim > 1 else x[:, None] for x in targets]
        stand_ins = dense(flat, outs)
        if stand_ins is None or (status.shape[0] > 0 and overlapping(*stand_ins)):
            status[0] = ERR_OVERLAP
            return status
        kernel = entry(row.name, kernel_types(row.name))
        if self.loop is None:
            self.loop = compiled(batch_loop, loop_types())
        with self.lock:                             # the loop leaves the GIL; its workspaces are the robot's
            works, copies = self.per_thread(row, arrays)
            plan = layout(self.nbodies, copies, (self.gravity,) if row.gravity else (), stand_ins[0] + stand_ins[1])
            addresses = _empty((works.shape[0], plan[0]), dtype=np.int64)
            self.loop(kernel, self.bodies, works, plan, addresses, status)
        if not status.any():
            copy_back(outs, stand_ins[1])
        return status
