"""One registry row of one robot: its route in Python (Quantity) -- the single state of any strides, the batch, `out=`
checks, overlaps, status codes -> ValueErrors, the result's type -- and the entries in front of it: its C Call
(Quantity.c_call) or, without the extension, its lean entry (lean_entry)."""
import dataclasses

import numpy as np

from ..algorithms.kinematics import ERR_OVERLAP
from ..algorithms.workspace import ARRAYS
from ..results import RESULT_TYPES
from .checks import checked_out, dense_out, dense_state, fits, refuse_shared
from .kernels import AnyStrides, kernel_types, merged_batch, row_kernel
from .native import fast_call

_ND, _F64, _empty = np.ndarray, np.dtype(np.float64), np.empty


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
        self.kernel = AnyStrides(row).front
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


def lean_entry(quantity):
    """The entry of a row without the C extension: what a _fastcall.Call does, in Python -- one state of float64
    vectors (and a frame's keys), `out` positional or by name, straight into the kernel with new results, or into
    an `out` array; anything else, and a kernel's error, goes to the Quantity, which computes it or raises the error
    naming the culprit.  A closure, so that its look-ups are local: the Quantity's route costs ~1 us more a call.
    It calls the row's compiled checked kernel itself (not through AnyStrides, one Python frame less) when every
    array is C-contiguous, as the kernel is compiled for (kernel_types).

    The Call's twin kept by hand, on purpose: it serves only where the C Call cannot be called (no extension, or
    ROBOT_DYNAMICS_FAST_CALLS=0), and a Call in Python would cost the ~1 us a call it exists to save.
    test_fast_calls drives both over one table of cases and holds them to the same results, the same errors and
    the same hand-overs to the Quantity -- but for two it leaves to the Quantity, which gives the same numbers: an
    equal float64 dtype that is not numpy's own object (after pickle), and an array not aligned."""
    kernel = row_kernel(quantity.row.name)
    fixed, sizes, n = quantity.fixed, quantity.sizes, quantity.n
    shapes = [(1,) if s == () else s for s in quantity.shapes]   # a scalar's kernel writes a 1-vector
    shape = shapes[0]
    keys = 2 if quantity.framed else 0
    table = quantity.engine.frames.build() if keys else None
    single, scalar = len(shapes) == 1 and quantity.shapes[0] != (), quantity.shapes[0] == ()
    result_type = quantity.result_type
    fields = quantity.fields and quantity.fields[:len(shapes)]         # a result type's arrays, the kernel's outs
    unused = quantity.fields and quantity.fields[len(shapes):]         # its fields that must hold None

    def entry(*args, **keywords):
        if keywords:
            if len(args) != n + keys or len(keywords) != 1 or "out" not in keywords:
                return quantity(*args, **keywords)
            args += (keywords["out"],)
        elif len(args) == n + keys:
            args += (None,)
        elif len(args) != n + keys + 1:
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
            if len(outs) != len(shapes) or (unused and any(getattr(out, f) is not None for f in unused)):
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
