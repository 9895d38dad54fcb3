"""The one call protocol from a Robot method to its compiled kernel.

A Robot method (robot.py) hands its arguments, always positionally and `out` last, to `robot._calls.<row>`, where
<row> is the name of its quantity in the registry (algorithms/registry.py) -- with the C extension a method that
does nothing else is a _fastcall.Method (`forwards`), which makes that hand-over in C.  Calls makes that entry at its
first use:

- with the C extension, a _fastcall.Call (compiled.fast_call): it checks one state of exact float64 arrays and the
  `out` arrays in C, allocates the results and calls the kernel's C entry point (compiled.fast_kernel: the kernel
  and its result checks);
- whatever the Call does not take -- a batch, a list, a strided view, another dtype, an overlapping `out`, a status
  code to explain -- it hands to the row's Quantity below, which validates, computes and raises the error naming
  the culprit.  Without the extension the Quantity is the entry itself.

A Quantity owns everything between the arguments and the kernel for one (robot, row): the single state of any
strides (row_kernel -- the C entry point, or the checked kernel without the extension -- through _Contiguous), the
batch (the one compiled parallel loop, compiled.batch_loop, over per-thread workspaces), `out=` checks, overlaps,
status codes -> ValueErrors, and the result's type (results.RESULT_TYPES). A frame row's frame and reference, and
the contact row's contact set, are a constant input: one array, the same for every state of a batch
(FrameTable.array, contact_sets.ContactDynamics).

The Engine holds what the quantities of one robot share: the body records, the workspace and its per-thread
copies, gravity, the batch lock, the result pool and the frame table.  Nothing here holds the Robot: a Robot is
freed as soon as it is no longer used (the Calls hold their Quantity weakly, the Quantities hold the Engine).
"""
import dataclasses
import functools
import inspect
import math
import threading
import typing
import weakref

import numpy as np

from .algorithms.frames import REFERENCES, frame_array
from .algorithms.kinematics import ERR_INPUT, ERR_OVERFLOW, ERR_OVERLAP, ERR_QUAT, ERR_SINGULAR
from .algorithms.registry import CHECKED, QUANTITIES
from .algorithms.workspace import ARRAYS, EXAMPLES, workspace
from .compiled import (FAST_CALLS, Contiguous, Method, batch_loop, checked_entry, compiled, entry, fast_call, layout,
                       loop_signature, overlapping, prepare_target, signature, thread_count)
from .configuration import ConfigurationSpace
from .memory import ResultPool
from .model import BODY
from .results import RESULT_TYPES

_ND, _F64, _empty = np.ndarray, np.dtype(np.float64), np.empty
ROWS = {row.name: row for row in QUANTITIES}


# ---- the methods that only hand over -----------------------------------------------------------------------------
class Constant(typing.NamedTuple):
    """A value forwards hands to the entry in its place (frame_placement's reference "local")."""
    value: object


_REQUIRED = object()          # marks a parameter without a default, for _fastcall.Method


def forwards(row, *arguments):
    """Decorate a Robot method whose body, when every parameter not among `arguments` holds its default (the very
    object), is ``return self._calls[row](*arguments)`` -- `arguments` the names of its parameters and Constants,
    in the entry's order.  With the C extension the def becomes a _fastcall.Method, which does exactly that in C
    (binding positional and keyword arguments to the def's parameters and defaults) and calls the def itself for
    anything else: the same results and errors, without the def's Python frame (~0.09 us a call, 10-15 % of a
    frame Jacobian).  Read from the class it is the def (its signature, docstring and source).  Without the
    extension the def stays as it is.  test_architecture checks each against its def's own hand-over."""
    def decorate(function):
        code = function.__code__
        if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount:
            raise TypeError(f"{function.__qualname__}: forwards takes plain parameters only")
        names = code.co_varnames[1:code.co_argcount]
        given = function.__defaults__ or ()
        defaults = (_REQUIRED,) * (len(names) - len(given)) + given
        constants = tuple(x.value for x in arguments if isinstance(x, Constant))
        forward, c = [], 0
        for x in arguments:
            if isinstance(x, Constant):
                forward.append(-1 - c)
                c += 1
            else:
                forward.append(names.index(x))      # a ValueError for a name the def does not have
        function.forwards = (row, tuple(arguments))
        if Method is None:
            return function
        return Method(function, row, tuple(names), defaults, _REQUIRED, tuple(forward), constants)
    return decorate


# ---- the kernels' argument types ---------------------------------------------------------------------------------
@functools.cache
def kernel_types(name):
    """The argument types of the kernel of registry row `name`, the same for every robot: its body records and
    workspace, its per-robot arrays (workspace.EXAMPLES), gravity, and the inputs and outputs -- all C-contiguous:
    a kernel that knows its arrays' layout when it is compiled zeroes and walks them up to 2x faster than one that
    reads their strides (the regressor batch of 1024 states: 1.9 -> 1.65 us a state on solo12, 6.2 -> 5.0 on g1).
    Views of other strides are copied in and out around the kernel (_Contiguous, Quantity.run_batch; _fastcall.c
    hands them to the Quantity).  Computed once per process: numba's typeof of a record array takes ~0.7 ms."""
    row = ROWS[name]
    arrays = tuple(EXAMPLES[x] for x in row.arrays)
    constants = (np.zeros(3),) if row.gravity else ()
    return signature(np.zeros(1, dtype=BODY), workspace(1), *arrays, *constants,
                     *(np.zeros((2,) * (1 + (x in row.matrices))) for x in row.inputs),
                     *(np.zeros((2,) * max(len(s), 1)) for s in row.shapes))


@functools.cache
def loop_types():
    """The argument types of the batch loop (compiled.batch_loop), the same for every row."""
    return loop_signature(np.zeros(1, dtype=BODY), workspace(1)[None])


# ---- arrays -------------------------------------------------------------------------------------------------------
def dense(inputs, outputs):
    """C-contiguous stand-ins for a kernel's inputs and outputs, as (inputs, outputs) tuples: each array itself if it
    is C-contiguous, else a copy (an input) or a new array (an output, which the kernel writes whole).  None when
    some array was replaced and an output's extent overlaps an input's or another output's: the kernel's own check
    (np.may_share_memory's bounds) would not see that overlap among the stand-ins."""
    dense_inputs = tuple(x if x.flags.c_contiguous else np.ascontiguousarray(x) for x in inputs)
    dense_outputs = tuple(x if x.flags.c_contiguous else _empty(x.shape) for x in outputs)
    given = tuple(inputs) + tuple(outputs)
    if any(x is not y for x, y in zip(dense_inputs + dense_outputs, given)) and any(
            np.may_share_memory(x, y) for i, x in enumerate(outputs) for y in given[:len(inputs) + i]):
        return None
    return dense_inputs, dense_outputs


def copy_back(outputs, dense_outputs):
    """Copy the results from the stand-ins of `dense` into the outputs they replaced."""
    for x, y in zip(outputs, dense_outputs):
        if x is not y:
            x[...] = y


def merged_batch(x, batch_ndim, B):
    """A view of x with its batch_ndim leading dimensions merged into one of size B; None if that needs a copy."""
    y = x.reshape((B,) + x.shape[batch_ndim:])
    return y if np.may_share_memory(x, y) else None     # a copy is new memory


def fits(x, shape):
    """x can receive a result of this shape in place (the fast test; checked_out says what is wrong)."""
    return type(x) is _ND and x.dtype is _F64 and x.shape == shape and x.flags.writeable


def dense_state(x, size):
    """x is an exact float64 ndarray of shape `size`, C-contiguous: a state vector the kernel takes as it is."""
    return type(x) is _ND and x.dtype is _F64 and x.shape == size and x.flags.c_contiguous


def dense_out(x, shape):
    """x can receive a result of this shape in place and is C-contiguous: an out the kernel writes as it is."""
    return fits(x, shape) and x.flags.c_contiguous


def checked_out(out, shape, name="out"):
    """out, if it can receive a result of this shape in place; else a ValueError naming it."""
    if not (isinstance(out, np.ndarray) and out.dtype == _F64 and out.shape == shape and out.flags.writeable):
        got = (f"a {'read-only ' if not out.flags.writeable else ''}{out.dtype} array of shape {out.shape}"
               if isinstance(out, np.ndarray) else type(out).__name__)
        raise ValueError(f"{name} must be a writeable float64 array of shape {shape}, got {got}")
    return out


def refuse_shared(input_names, inputs, outputs, names):
    """A ValueError when an output shares memory with an input or another output (np.shares_memory); True when
    some extents overlap without a shared element (np.may_share_memory), False when none do.  Arrays only: a
    list given as an input is copied before it is read."""
    maybe = False
    for i, x in enumerate(outputs):
        others = list(zip(input_names, inputs)) + list(zip(names[i + 1:], outputs[i + 1:]))
        for name, y in others:
            if not (isinstance(y, np.ndarray) and np.may_share_memory(x, y)):
                continue
            try:
                shared = np.shares_memory(x, y, max_work=100_000)
            except np.exceptions.TooHardError:
                shared = True
            if shared:
                raise ValueError(f"{names[i]} shares memory with {name}: an out must not overlap the inputs "
                                 f"or another out (results would overwrite what is still to be read)")
            maybe = True
    return maybe


def finite(x, what, culprit):
    """x, if all finite; else the ValueError of a result that overflows float64 (ERR_OVERFLOW's, for results
    computed in Python)."""
    if not np.isfinite(x).all():
        raise ValueError(f"{what} overflows float64 at this state (a result is not finite): {culprit} too large")
    return x


def scalar(x, name):
    """x as a finite float, else a ValueError naming it."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {x!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x}")
    return x


def check_vector(name, x, n):
    """x as a finite float array (a copy) of shape (n,), else a ValueError naming it."""
    x = np.array(x, dtype=float)
    if x.shape != (n,) or not np.isfinite(x).all():
        raise ValueError(f"{name} must be a finite array of shape ({n},), got shape {x.shape}"
                         + ("" if x.shape != (n,) else " with non-finite values"))
    return x


def row_kernel(name):
    """The compiled kernel of registry row `name` within its checks, for C-contiguous arrays (kernel_types),
    compiled or loaded now: with the extension its C entry point (compiled.checked_entry, the machine code its Call
    and batches run), without it the checked kernel (registry.CHECKED)."""
    types = kernel_types(name)
    return checked_entry(name, types) if FAST_CALLS else compiled(CHECKED[name], types, name)


class _Contiguous:
    """The kernel of registry row `name` (row_kernel), resolved at its first call, callable with views of any
    strides: the inputs and outputs that are not C-contiguous are replaced (dense), and the results copied back
    once the kernel has succeeded; ERR_OVERLAP, nothing computed, when the caller's outputs overlap (as the
    kernel's checks say)."""

    __slots__ = ("kernel", "name", "n_inputs", "first", "front")

    def __init__(self, row):
        self.kernel, self.name, self.n_inputs = None, row.name, len(row.inputs)
        self.first = -(len(row.inputs) + len(row.shapes))   # where the inputs start among the kernel's arguments
        # what the Quantity calls: with the C extension a compiled.Contiguous, which checks the layout in C (0.3 us
        # less a call) and calls this object only for the first call and for strided arrays
        self.front = self if Contiguous is None else Contiguous(self, -self.first)

    def __call__(self, *args):
        if self.kernel is None:
            self.kernel = row_kernel(self.name)
            if self.front is not self:
                self.front.kernel = self.kernel
        for x in args[self.first:]:                       # a loop: all() of a generator costs 0.1 us more
            if not x.flags.c_contiguous:
                break
        else:
            return self.kernel(*args)
        k = len(args) + self.first
        inputs, outputs = args[k:k + self.n_inputs], args[k + self.n_inputs:]
        stand_ins = dense(inputs, outputs)
        if stand_ins is None:
            return ERR_OVERLAP
        status = self.kernel(*args[:k], *stand_ins[0], *stand_ins[1])
        if status == 0:
            copy_back(outputs, stand_ins[1])
        return status


# ---- frames --------------------------------------------------------------------------------------------------------
class FrameTable:
    """Every URDF link of a model as a frame: its frames.FRAME_SIZE array in each reference, looked up by name or
    index: rows[frame][reference], the table the C Calls of the frame rows look up too, made at the first use."""

    def __init__(self, model):
        self.model, self.rows = model, None

    def array(self, frame, reference):
        """The array of `frame` (a name of robot.frame_names or its index) in `reference`; a ValueError naming the
        close matches of an unknown name."""
        try:
            return self.build()[frame][reference]
        except (KeyError, TypeError):
            pass
        if not isinstance(reference, str) or reference not in REFERENCES:
            raise ValueError(f"reference must be one of {', '.join(map(repr, REFERENCES))}, got {reference!r}")
        names = list(self.model.frames)
        if isinstance(frame, str):
            import difflib
            close = difflib.get_close_matches(frame, names, n=5, cutoff=0.6)
            raise ValueError(f"unknown frame {frame!r}: " + (f"did you mean {', '.join(map(repr, close))}?" if close
                             else f"robot.frame_names lists the {len(names)} frames"))
        if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool):
            if -len(names) <= frame < 0:
                return self.rows[int(frame) + len(names)][reference]
            raise ValueError(f"frame index {frame} is out of range for {len(names)} frames")
        raise ValueError(f"frame must be a frame name (robot.frame_names) or its index, got {type(frame).__name__}")

    def build(self):
        """{name or index: {reference: its array}}."""
        if self.rows is None:
            self.rows = {}
            for i, (name, f) in enumerate(self.model.frames.items()):
                self.rows[name] = self.rows[i] = {ref: frame_array(f.body, ref, f.R, f.p) for ref in REFERENCES}
        return self.rows


# ---- what the quantities of one robot share -----------------------------------------------------------------------
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
        self.loop = None                            # compiled.batch_loop for loop_types(), resolved at first use
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
        the byte extents of the caller's targets overlap the inputs' or each other's (compiled.overlapping)."""
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


# ---- one quantity of one robot --------------------------------------------------------------------------------------
class Quantity:
    """Registry row `row` for the robot of `engine`: called as quantity(*state, [frame, reference,] out), as the
    Robot methods and the C Call's hand-over do (`out` also as a keyword); a frame row's frame and reference give
    its constant input, the frame's array (FrameTable.array).  Returns an array (a numpy scalar for a scalar
    quantity), a tuple of arrays, or the row's result type (results.RESULT_TYPES); into `out` (an array, a tuple,
    or the result type) when given."""

    def __init__(self, engine, row):
        self.engine, self.row = engine, row
        self.n = len(row.state)
        self.framed = "frame" in row.inputs          # its constant input: a frame's array (FrameTable.array)
        self.shapes = engine.shapes[row.name]
        self.arrays = tuple(ARRAYS[x](engine.model) for x in row.arrays)   # per-robot arrays, made when first used
        self.constants = (engine.gravity,) if row.gravity else ()
        self.result_type = RESULT_TYPES.get(row.name)
        self.fields = None if self.result_type is None else tuple(f.name for f in dataclasses.fields(self.result_type))
        self.names = self.out_names()
        self.kernel = _Contiguous(row).front
        self.calls = None                           # a weak reference to the Calls that made it (Calls.quantity)
        e = engine
        self.sizes = tuple(e.q_shape if x[0] == "q" else e.v_shape for x in row.state)
        self.fixed = (e.bodies, e.work, *self.arrays, *self.constants)     # the kernel's arguments before the state

    def c_call(self):
        """The _fastcall.Call of this row: one state of float64 vectors in C, everything else handed to this
        Quantity (called as quantity(*args), positionally, as the Robot methods call the Call).  A row with matrix
        inputs has none: this Quantity is its entry."""
        e, row = self.engine, self.row
        if row.matrices:
            return self
        fixed = (e.bodies, e.work, *self.arrays, *self.constants)
        options = {} if self.result_type is None else {"result_type": self.result_type, "fields": self.fields}
        if self.framed:                             # keys (frame, reference): the frame table's entry
            options.update(keys=2, table=e.frames.build())
        elif "contacts" in row.inputs:              # key the contact set, whose spec the Call `remember`s
            options.update(keys=1)
        sizes = tuple(e.nq if x[0] == "q" else e.nv for x in row.state)
        return fast_call(row.name, kernel_types(row.name), fixed, sizes, self.shapes, type(self).__call__, self,
                         **options)

    def lean(self):
        """This row's entry without the C extension: lean_entry (a route of its own overrides it)."""
        return lean_entry(self)

    def out_names(self):
        """How the outputs are named in messages: out, out[i] of a tuple, or out.<field> of a result type."""
        n = len(self.row.outputs)
        if self.result_type is not None:
            return [f"out.{f}" for f in self.fields[:n]]
        return ["out" if n == 1 else f"out[{i}]" for i in range(n)]

    def __call__(self, *args, out=None):
        n, framed = self.n, self.framed
        if len(args) > n + 2 * framed:
            out = args[n + 2 * framed]
        constant = self.engine.frames.array(*args[n:n + 2]) if framed else None
        return self.result(args[:n], self.outputs(out), constant, out)

    def outputs(self, out):
        """The output arrays that `out` (None, an array, a tuple or the result type) gives, checked later."""
        if out is None:
            return None
        if self.result_type is not None:
            if type(out) is not self.result_type:
                kind = self.result_type.__name__
                raise ValueError(f"out must be {'an' if kind[0] in 'AEIOU' else 'a'} {kind}, got {type(out).__name__}")
            return [getattr(out, f) for f in self.fields[:len(self.row.outputs)]]
        if len(self.row.outputs) > 1:
            if not isinstance(out, (tuple, list)) or len(out) != len(self.row.outputs):
                raise ValueError(f"out must be a tuple of {len(self.row.outputs)} arrays "
                                 f"({', '.join(name for name, _ in self.row.outputs)}), got {type(out).__name__}")
            return list(out)
        return [out]

    def result(self, state, outs, constant, out):
        """compute(...) as the row's method returns it."""
        results = self.compute(state, outs, constant)
        if out is not None:
            return out
        if self.result_type is not None:
            return self.result_type(*results)
        if len(results) > 1:
            return tuple(results)
        return results[0][()] if self.shapes[0] == () and results[0].ndim == 0 else results[0]

    def compute(self, state, outs, constant=None, shapes=None):
        """The row's outputs at `state` (one state or a batch), into `outs` (a list of arrays) or new arrays.
        shapes: the outputs' shapes for one state, if not the row's (the contact set's forces)."""
        e, shapes = self.engine, self.shapes if shapes is None else shapes
        for x, size in zip(state, self.sizes):
            if not (type(x) is _ND and x.dtype is _F64 and x.shape == size):
                return self.batched(state, outs, constant, shapes)
        if outs is None:
            outs = [_empty(s) for s in shapes]
        elif not all(fits(x, s) for x, s in zip(outs, shapes)):
            self.check_outs((), outs, shapes)
        given = (constant,) if constant is not None else ()
        kernel_outs = [x[None] if x.ndim == 0 else x for x in outs]      # a scalar: its kernel writes a 1-vector
        status = self.kernel(e.bodies, e.work, *self.arrays, *self.constants, *state, *given, *kernel_outs)
        if status:
            self.failed(status, state + given, kernel_outs)
        return outs

    def check_outs(self, batch, outs, shapes):
        """Each of outs can receive its output for this batch shape, else a ValueError naming it."""
        for name, shape, x in zip(self.names, shapes, outs):
            checked_out(x, batch + shape, name)

    def failed(self, status, inputs, outputs):
        """After a single state's kernel returned `status`: its ValueError, or -- when the outputs' extents overlap
        but no element is shared (interleaved views) -- the results computed into new arrays and copied in."""
        e = self.engine
        if status != ERR_OVERLAP:
            raise e.error(status, self.row, inputs)
        refuse_shared(self.row.inputs, inputs, outputs, self.names)           # raises on shared memory
        fresh = [_empty(x.shape) for x in outputs]
        status = self.kernel(e.bodies, e.work, *self.arrays, *self.constants, *inputs, *fresh)
        if status:
            raise e.error(status, self.row, inputs)
        for x, y in zip(outputs, fresh):
            x[...] = y

    def batched(self, state, outs, constant, shapes):
        """The row for validated states (any batch shape, or one state given as lists, other dtypes...) by the
        compiled parallel loop; a constant input passed as a batch of stride 0."""
        e, row = self.engine, self.row
        *flat, batch = e.batch(False, **dict(zip(row.state, state)))
        B, nd = flat[0].shape[0], len(batch)
        if outs is None:
            results = [e.results.empty(batch + s) for s in shapes]
        else:
            results = outs
            self.check_outs(batch, results, shapes)
        if constant is not None:
            flat.append(np.lib.stride_tricks.as_strided(constant, (B,) + constant.shape, (0,) + constant.strides))
        targets = [merged_batch(x, nd, B) for x in results]
        if any(x is None for x in targets):         # views whose batch dimensions do not merge: computed apart,
            if outs is not None:                    # copied in (an out sharing memory with an input is refused)
                refuse_shared(row.state, flat, results, self.names)
            targets = [_empty((B,) + s) for s in shapes]
        status = e.run_batch(row, self.arrays, flat, targets)
        if status.any() and status[0] == ERR_OVERLAP:   # extents overlap: refused if memory is shared, else
            refuse_shared(row.state, flat, results, self.names)                 # computed apart
            targets = [_empty((B,) + s) for s in shapes]
            status = e.run_batch(row, self.arrays, flat, targets)
        if status.any():
            i = np.flatnonzero(status)[0]
            raise e.error(status[i], row, [x[i] for x in flat])
        for x, y in zip(results, targets):
            if not np.may_share_memory(x, y):
                x[...] = y.reshape(x.shape)
        return results


# ---- the entries the Robot methods call -----------------------------------------------------------------------
def lean_entry(quantity):
    """The entry of a row without the C extension: what a _fastcall.Call does, in Python -- one state of float64
    vectors (and a frame's keys) straight into the kernel with new results, or into an `out` array; anything else,
    and a kernel's error, goes to the Quantity, which computes it or raises the error naming the culprit.  A
    closure, so that its look-ups are local: the Quantity's route costs ~1 us more a call.  It calls the row's
    compiled checked kernel itself (not through _Contiguous, one Python frame less) when every array is
    C-contiguous, as the kernel is compiled for (kernel_types)."""
    kernel = row_kernel(quantity.row.name)
    fixed, sizes, n = quantity.fixed, quantity.sizes, quantity.n
    shapes = [(1,) if s == () else s for s in quantity.shapes]   # a scalar's kernel writes a 1-vector
    shape = shapes[0]
    keys = 2 if quantity.framed else 0
    table = quantity.engine.frames.build() if keys else None
    single, scalar = len(shapes) == 1 and quantity.shapes[0] != (), quantity.shapes[0] == ()
    result_type = quantity.result_type
    fields = quantity.fields and quantity.fields[:len(shapes)]         # a result type's arrays, the kernel's outs

    def entry(*args):
        if len(args) != n + keys + 1:
            return quantity(*args)
        state, out = args[:n], args[-1]
        for x, size in zip(state, sizes):
            if not dense_state(x, size):
                return quantity(*args)
        constant = ()
        if keys:
            try:
                constant = (table[args[n]][args[n + 1]],)
            except (KeyError, TypeError):
                return quantity(*args)
        if out is None:
            outs = [_empty(shape)] if single or scalar else [_empty(s) for s in shapes]
        elif single:
            if not dense_out(out, shape):
                return quantity(*args)
            outs = [out]
        elif not scalar and type(out) is (tuple if result_type is None else result_type):
            outs = out if result_type is None else [getattr(out, f) for f in fields]   # a tuple, or the type's
            if len(outs) != len(shapes):
                return quantity(*args)
            for x, s in zip(outs, shapes):
                if not dense_out(x, s):
                    return quantity(*args)
        else:
            return quantity(*args)
        if kernel(*fixed, *state, *constant, *outs):
            return quantity(*args)                  # the Quantity says what went wrong, or computes apart
        if out is not None:
            return out
        if single:
            return outs[0]
        if scalar:
            return outs[0][0]
        return tuple(outs) if result_type is None else result_type(*outs)

    return entry


class MatrixQuantity(Quantity):
    """A row with a matrix input of a free number of columns (_solve_mass_matrix): no C Call."""

    def c_call(self):
        return self

    def lean(self):
        return self

    def __call__(self, q, x, out=None):
        """M(q)^-1 x, x (..., nv) or (..., nv, k)."""
        e, row = self.engine, self.row
        q = np.asarray(q)
        batch = q.shape[:-1]
        x = np.array(x, dtype=float) if not (type(x) is _ND and x.dtype is _F64) else x
        nv = e.nv
        if x.shape == batch + (nv,):
            X = x[..., None]
        elif x.ndim == len(batch) + 2 and x.shape[:-1] == batch + (nv,):
            X = x
        else:
            raise ValueError(f"x must have shape {batch + (nv,)} or {batch + (nv,)[:-1]}(..., {nv}, k) for q of "
                             f"batch shape {batch}, got {x.shape}")
        result = _empty(x.shape) if out is None else checked_out(out, x.shape)
        target = result[..., None] if X is not x else result
        if q.shape == e.q_shape and q.dtype is _F64:
            status = self.kernel(e.bodies, e.work, q, X, target)
            if status:
                self.failed(status, (q, X), [target])
            return result
        Q, batch = e.batch(False, q=q)
        B, k = Q.shape[0], X.shape[-1]
        Xf = X.reshape((B, nv, k))
        Tf = merged_batch(target, len(batch), B) if target.shape[:len(batch)] == batch else None
        if Tf is None and out is not None:
            refuse_shared(row.inputs, (Q, Xf), (target,), ("out",))
        work_out = Tf if Tf is not None else _empty((B, nv, k))
        status = e.run_batch(row, (), (Q, Xf), (work_out,))
        if status.any() and status[0] == ERR_OVERLAP:
            refuse_shared(row.inputs, (Q, Xf), (target,), ("out",))
            Tf, work_out = None, _empty((B, nv, k))
            status = e.run_batch(row, (), (Q, Xf), (work_out,))
        if status.any():
            i = np.flatnonzero(status)[0]
            raise e.error(status[i], row, (Q[i], Xf[i]))
        if Tf is None:
            target[...] = work_out.reshape(target.shape)
        return result


class Calls(dict):
    """The entry of every registry row of one robot, by the row's name (calls["mass_matrix"], calls["_dynamics"],
    ...), made at its first use (__missing__) and kept: the row's C Call (Quantity.c_call) in front of its
    Quantity, or without the C extension its lean entry (Quantity.lean).  routes: {row
    name: a Quantity subclass} for rows with a route of their own (contact_sets.ContactDynamics, MatrixQuantity)."""

    def __init__(self, engine, routes=()):
        super().__init__()
        self.engine, self.quantities = engine, {}
        self.routes = {"_solve_mass_matrix": MatrixQuantity, **dict(routes)}

    def quantity(self, name):
        """The Quantity of row `name`: the route in Python (what its C Call hands over to)."""
        quantity = self.quantities.get(name)
        if quantity is None:
            quantity = self.quantities[name] = self.routes.get(name, Quantity)(self.engine, ROWS[name])
            quantity.calls = weakref.ref(self)
        return quantity

    def __missing__(self, name):
        quantity = self.quantity(name)              # a KeyError for a name that is not a row's
        value = quantity.c_call() if FAST_CALLS else quantity.lean()
        self[name] = value
        return value

    def forget(self, name):
        """Make row `name`'s entry anew at its next use (its per-robot arrays have changed)."""
        self.pop(name, None)
