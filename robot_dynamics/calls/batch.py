"""The one compiled loop over the states of a batch.

`batch_loop` runs a quantity's C entry point once per state, in parallel on all cores, with the workspace of the
thread that runs it (numba.get_thread_id): every quantity of the registry runs its batches in it, and no quantity's
code is compiled into it (a loop per quantity compiled that quantity again: ~2 s each at first use).  The
per-thread workspaces are the caller's, made once (`thread_count` says how many): copying a workspace per chunk of
states cost ~2 us a chunk, a tenth of a batch.  `layout` lays a batch's arrays out for it: in C (_fastcall.layout)
or, without the extension, `batch_layout`.

The layout is a twin kept by hand, on purpose: the C one takes 0.3 us a batch, this one ~20 us, and numpy has no
layout of its own to call instead (as native.extents_overlap calls np.may_share_memory).  `batch_layout` is its
written definition, used only without the extension; test_batch_loop holds the C layout to it, bit for bit, on a
table of arrays (per thread, constant, per state; strided, 0-d, none of a kind), and batch_loop to what the layout
means.
"""
import numpy as np
from numba import get_num_threads, get_thread_id, njit, prange

from .compiling import signature
from .native import ENTRY, extension


def thread_count():
    """How many threads a batch runs on now (numba.get_num_threads): the per-thread workspaces it needs."""
    return get_num_threads()


@njit(cache=True, parallel=True)
def batch_loop(kernel, bodies, works, layout, addresses, status):
    """kernel(bodies, works[t], pointers, dims) for every state i of a batch, in parallel, t the thread that runs it;
    status[i] receives each state's code.  kernel: a quantity's C entry point (fast_kernel, as a ctypes
    function: `entry`), so that this one loop, compiled once, runs every quantity's batch, and no quantity's code is
    compiled into it (so numba's own cache, dated by this file, serves it, as it does finite and moderate).
    layout (`batch_layout`): n, then the n arrays' addresses, their strides per state and per
    thread, then dims; pointers, addresses[t], receives the addresses of state i's arrays."""
    n = layout[0]
    base, by_state, by_thread, dims = layout[1:1 + n], layout[1 + n:1 + 2 * n], layout[1 + 2 * n:1 + 3 * n], \
        layout[1 + 3 * n:]
    for i in prange(status.shape[0]):
        t = get_thread_id()
        pointers = addresses[t]
        for k in range(n):
            pointers[k] = base[k] + i * by_state[k] + t * by_thread[k]
        status[i] = kernel(bodies.ctypes, works[t].ctypes, pointers.ctypes, dims.ctypes)


def loop_signature(bodies, works):
    """batch_loop's argument types, the same for every quantity (bodies, works: examples of the body records and
    the per-thread workspaces)."""
    index = np.zeros(2, dtype=np.int64)
    return signature(ENTRY(0), bodies, works, index, index[None], index)


def batch_layout(nbodies, per_thread, constants, per_state):
    """batch_loop's layout of a batch's arrays, in the kernel's argument order: per_thread, arrays of one copy per
    thread (x[t]); constants, the same for every state; per_state, one row per state (x[i]).  An int64 array: n
    (their count), their addresses, their strides per state, their strides per thread, then dims as fast_kernel
    reads them (nbodies, then every array's shape for one state)."""
    arrays = tuple(per_thread) + tuple(constants) + tuple(per_state)
    n = len(arrays)
    base = [x.__array_interface__["data"][0] for x in arrays]
    steps = [x.strides[0] if x.ndim else 0 for x in arrays]
    thread = len(per_thread)
    state = thread + len(constants)
    by_state = [s if k >= state else 0 for k, s in enumerate(steps)]
    by_thread = [s if k < thread else 0 for k, s in enumerate(steps)]
    dims = [nbodies] + [d for k, x in enumerate(arrays) for d in (x.shape if thread <= k < state else x.shape[1:])]
    return np.array([n] + base + by_state + by_thread + dims, dtype=np.int64)


layout = extension.layout if extension is not None else batch_layout    # C, or Python
