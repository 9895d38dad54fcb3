"""Each registry row's compiled kernel as the routes call it: its argument types (the same for every robot, all
C-contiguous: a kernel that knows its arrays' layout zeroes and walks them up to 2x faster), the kernel itself
within its checks (row_kernel), and AnyStrides, which hands views of other strides to it through C-contiguous
stand-ins (dense, copy_back)."""
import functools

import numpy as np

from ..algorithms.kinematics import ERR_OVERLAP
from ..algorithms.registry import CHECKED, QUANTITIES
from ..algorithms.workspace import EXAMPLES, workspace
from ..model import BODY
from .batch import loop_signature
from .compiling import compiled, signature
from .native import FAST_CALLS, Contiguous, checked_entry

_empty = np.empty
ROWS = {row.name: row for row in QUANTITIES}


@functools.cache
def kernel_types(name):
    """The argument types of the kernel of registry row `name`, the same for every robot: its body records and
    workspace, its per-robot arrays (workspace.EXAMPLES), gravity, and the inputs and outputs -- all C-contiguous:
    a kernel that knows its arrays' layout when it is compiled zeroes and walks them up to 2x faster than one that
    reads their strides (the regressor batch of 1024 states: 1.9 -> 1.65 us a state on solo12, 6.2 -> 5.0 on g1).
    Views of other strides are copied in and out around the kernel (AnyStrides, Quantity.run_batch; _fastcall.c
    hands them to the Quantity).  Computed once per process: numba's typeof of a record array takes ~0.7 ms."""
    row = ROWS[name]
    arrays = tuple(EXAMPLES[x] for x in row.arrays)
    constants = (np.zeros(3),) if row.gravity else ()
    return signature(np.zeros(1, dtype=BODY), workspace(1), *arrays, *constants,
                     *(np.zeros((2,) * (1 + (x in row.matrices))) for x in row.inputs),
                     *(np.zeros((2,) * max(len(s), 1)) for s in row.shapes))


@functools.cache
def loop_types():
    """The argument types of the batch loop (batch.batch_loop), the same for every row."""
    return loop_signature(np.zeros(1, dtype=BODY), workspace(1)[None])


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


def row_kernel(name):
    """The compiled kernel of registry row `name` within its checks, for C-contiguous arrays (kernel_types),
    compiled or loaded now: with the extension its C entry point (native.checked_entry, the machine code its Call
    and batches run), without it the checked kernel (registry.CHECKED)."""
    types = kernel_types(name)
    return checked_entry(name, types) if FAST_CALLS else compiled(CHECKED[name], types, name)


class AnyStrides:
    """The kernel of registry row `name` (row_kernel), resolved at its first call, callable with views of any
    strides: the inputs and outputs that are not C-contiguous are replaced (dense), and the results copied back
    once the kernel has succeeded; ERR_OVERLAP, nothing computed, when the caller's outputs overlap (as the
    kernel's checks say)."""

    __slots__ = ("kernel", "name", "n_inputs", "first", "front")

    def __init__(self, row):
        self.kernel, self.name, self.n_inputs = None, row.name, len(row.inputs)
        self.first = -(len(row.inputs) + len(row.shapes))   # where the inputs start among the kernel's arguments
        # what the Quantity calls: with the C extension a native.Contiguous, which checks the layout in C (0.3 us
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
