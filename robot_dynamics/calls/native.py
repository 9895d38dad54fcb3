"""The C extension (_fastcall.c, built by `pip install`) and what it calls: the single-state Calls, the Methods
that only hand over, the overlap test, and each kernel's C entry point as the batch loop calls it.

A route written in Python spends ~0.6 us before its kernel starts and numba's entry ~0.15 us more: on a small
robot, as long as Pinocchio's whole call.  A quantity's entry is therefore a _fastcall.Call (`fast_call`): it checks
a single state's arrays and that no `out` overlaps an input or another out, allocates the results and calls the
kernel's C entry point (generated.fast_kernel); everything else, strided views included, goes to the quantity's
route in Python (calls/quantity.py).  ROBOT_DYNAMICS_FAST_CALLS=0 in the environment turns them off.

The overlap test has no twin kept by hand: `overlapping` is the extension's, and without it numpy's own bounds test
(extents_overlap calls np.may_share_memory), which is the definition the C one follows; test_batch_loop holds the C
test to numpy's on a table of views (reversed, strided, interleaved, empty ones within another's extent).
"""
import ctypes
import os

from numpy import may_share_memory

from .generated import fast_kernel, spec

try:
    from . import _fastcall as extension
except ImportError:                             # not built (a source tree without `pip install -e .`): the methods
    extension = None                            # written in Python do everything, as fast as before
FAST_CALLS = extension is not None and os.environ.get("ROBOT_DYNAMICS_FAST_CALLS", "1") != "0"
# Contiguous(slow, n): calls a kernel directly when its last n arguments are C-contiguous arrays, else slow; the
# routes written in Python reach their kernels through one (kernels.AnyStrides), or through slow alone without C
Contiguous = extension.Contiguous if FAST_CALLS else None
# Method(def, row, ...): a Robot method that only hands over to self._calls[row], called in C (methods.forwards)
Method = extension.Method if FAST_CALLS else None


def extents_overlap(inputs, outputs):
    """True when the byte extent of an array of the tuple `outputs` overlaps that of one of `inputs` or of another
    output before it: np.may_share_memory's bounds test (its default), on whole batches before any state is
    computed (an out of one state may overlap the input of another).  An array without elements overlaps nothing.
    _fastcall.overlapping is the same test in C (0.06 us for 10 arrays; here ~1 us a pair)."""
    arrays = inputs + outputs
    return any(may_share_memory(x, arrays[j]) for i, x in enumerate(outputs, len(inputs)) for j in range(i))


overlapping = extension.overlapping if extension is not None else extents_overlap


def checked_entry(name, types):
    """What registry.CHECKED[name] is without the extension, with it: a _fastcall.Entry, called with the checked
    kernel's arguments (C-contiguous arrays of the resolved signature `types`), that returns its status -- the
    overlap code when an output overlaps an input or another output, else the C entry point's (fast_kernel).  So
    the routes written in Python (strided views, through kernels.AnyStrides) compute with the quantity's one
    compiled entry, the very machine code of its Call and its batches."""
    _, inputs, outputs, _, _, overlap = spec(name)
    return extension.Entry(fast_kernel(name, types), tuple(t.ndim for t in types), len(inputs), len(outputs), overlap)


_entries = {}
ENTRY = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def entry(name, types):
    """fast_kernel's C function of registry row `name` as a ctypes function of four addresses, as batch_loop
    calls it (numba passes an array's .ctypes as an address, never as the typed pointers of the cfunc's own
    signature: the same machine code, the same arguments)."""
    function = _entries.get(name)
    if function is None:
        function = _entries[name] = ENTRY(fast_kernel(name, types))
    return function


def fast_call(name, types, fixed, input_sizes, output_shapes, function, owner, keys=0, table=None, **options):
    """A _fastcall.Call of the kernel of registry row `name` (types: its resolved signature) within its checks
    (fast_kernel), called as (*inputs, *keys, out=None) for one state of float64 vectors of input_sizes: the `keys`
    arguments after the state select the kernel's constant input in the nested dicts `table` (or the one the Call
    `remember`s for a sequence key); everything else is handed to function(owner, *args, **kwargs), as is an `out`
    that overlaps an input or another out.  fixed: the body records, workspace, per-robot arrays and gravity the
    kernel reads, held by the Call; output_shapes: a shape per output.  options: result_type, fields, as
    _fastcall.c describes them."""
    return extension.Call(fast_kernel(name, types), tuple(fixed), tuple(input_sizes), tuple(output_shapes),
                          function, owner, keys, table, **options)
