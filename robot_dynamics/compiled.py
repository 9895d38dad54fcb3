"""Where the compiled kernels are cached, and calling them with as little Python in between as possible.

Cache.  numba checks a cached kernel against its own source file only, so a kernel whose callee in another
module has changed would load stale machine code.  `kernel_cache` therefore gives numba (through its documented
setting numba.config.CACHE_DIR, for the duration of the kernels' import only) a directory named after a hash of
every kernel source: editing any of them starts a new directory, and nothing is ever deleted.  The directory lies
beside the package when that is writable, else in the user's cache directory (a read-only site-packages).  The
first use on a machine compiles for tens of seconds and says so on stderr, once.

Calls.  numba's dispatcher re-derives the types of every argument on each call (about 0.1 us per array here);
the kernels are always called with the same types, so after the first call -- which compiles, or loads the
cache -- `resolve` hands out the compiled function itself (the dispatcher's get_overload).  That function does not
check what it is given: Robot only passes it float64 arrays whose shape it has checked, resolved for layout 'A'
(see `strided`), which reads each array's strides, so that any view is handled.

Batches.  `parallel(kernel, name)` is a compiled loop over the states of a batch, in parallel on all cores, that
calls `kernel` once per state with the workspace of the thread that runs it (numba.get_thread_id): every quantity
of the registry gets one, with no code of its own.  The per-thread workspaces are the caller's, made once
(`thread_count` says how many): copying a workspace per chunk of states cost ~2 us a chunk, a tenth of a batch.
"""
import contextlib
import hashlib
import os
import sys
import tempfile
import types
import weakref
from pathlib import Path

import numba
import numpy as np
from numba import get_num_threads, get_thread_id, njit, prange, typeof
from numba.extending import overload

_cache_dir = None
_announced = False


def _writable(directory):
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def kernel_cache(package_dir, sources):
    """numba caches the kernels defined (decorated) within this context in a directory named after the hash of
    the files `sources`: beside the package (package_dir/__pycache__) when writable, else in the user cache."""
    global _cache_dir
    digest = hashlib.sha256(b"".join(Path(s).read_bytes() for s in sorted(map(str, sources)))).hexdigest()[:16]
    name = f"robot_dynamics-kernels-{digest}"
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    base = Path(numba.config.CACHE_DIR) if numba.config.CACHE_DIR else None
    for candidate in ([base] if base else [Path(package_dir) / "__pycache__", user]):
        if _writable(candidate / name):
            _cache_dir = candidate / name
            break
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(_cache_dir) if _cache_dir else previous
    try:
        yield
    finally:
        numba.config.CACHE_DIR = previous


def announce_if_cold():
    """Say once per process, on stderr, that the kernels are being compiled when their cache is empty."""
    global _announced
    if not _announced and not (_cache_dir and any(_cache_dir.rglob("*.nbi"))):
        print("robot_dynamics: compiling the dynamics kernels for this machine (once; later runs load them from "
              "numba's cache)...", file=sys.stderr, flush=True)
    _announced = True


def strided(ndim):
    """An example argument of ndim dimensions that numba types with layout 'A' (any strides): it makes `resolve`
    pick the compiled function which reads an array's strides, so that any view may be passed."""
    return np.zeros((2,) * ndim + (2,))[..., 0]


def compiled(dispatcher, *example_args):
    """The compiled function of `dispatcher` for the types of example_args (which are not computed on: only
    their types matter), compiled or loaded from the cache now."""
    signature = tuple(typeof(a) for a in example_args)
    if signature not in dispatcher.signatures:
        announce_if_cold()
        dispatcher.compile(signature)
    return dispatcher.get_overload(signature)


def resolve(owner, attribute, dispatcher, *example_args):
    """Set owner.<attribute> to the compiled function of `dispatcher`: at once when it is already compiled in this
    process, else on its first call -- so that a run loads (or, the first time, compiles) only the kernels it
    uses.  The first-call stand-in holds owner weakly: a Robot is freed as soon as it is no longer used."""
    if dispatcher.signatures:
        setattr(owner, attribute, compiled(dispatcher, *example_args))
        return
    ref = weakref.ref(owner)

    def first_call(*args):
        kernel = compiled(dispatcher, *example_args)
        target = ref()
        if target is not None:
            setattr(target, attribute, kernel)
        return kernel(*args)

    setattr(owner, attribute, first_call)


# ---- the parallel batch loop ------------------------------------------------------------------------------------
def row(arrays, i):
    """(x[i] for x in arrays), as a tuple, inside compiled code."""


@overload(row)
def _row(arrays, i):
    """row for tuples of 0 to 6 arrays (numba unrolls a tuple comprehension only of a known length)."""
    def take(n):
        return {0: lambda arrays, i: (),
                1: lambda arrays, i: (arrays[0][i],),
                2: lambda arrays, i: (arrays[0][i], arrays[1][i]),
                3: lambda arrays, i: (arrays[0][i], arrays[1][i], arrays[2][i]),
                4: lambda arrays, i: (arrays[0][i], arrays[1][i], arrays[2][i], arrays[3][i]),
                5: lambda arrays, i: (arrays[0][i], arrays[1][i], arrays[2][i], arrays[3][i], arrays[4][i]),
                6: lambda arrays, i: (arrays[0][i], arrays[1][i], arrays[2][i], arrays[3][i], arrays[4][i],
                                      arrays[5][i])}[n]
    return take(len(arrays))


def thread_count():
    """How many threads a batch runs on now (numba.get_num_threads): the per-thread workspaces it needs."""
    return get_num_threads()


def _parallel(bodies, works, arrays, constants, inputs, outputs, status):
    """KERNEL(bodies, works[t], *(x[t] for x in arrays), *constants, *inputs[i], *outputs[i]) for every state i,
    in parallel, t the thread that runs it; status[i] receives each state's code.  works and each of arrays hold
    one copy per thread (thread_count() of them at least)."""
    for i in prange(status.shape[0]):
        t = get_thread_id()
        status[i] = KERNEL(bodies, works[t], *row(arrays, t), *constants, *row(inputs, i), *row(outputs, i))  # noqa


def parallel(kernel, name):
    """A compiled parallel loop of _parallel's over the states of a batch, calling `kernel`.  It is _parallel's
    code with KERNEL bound to `kernel` among its globals and its own name (so numba caches each loop apart):
    one loop for every kernel without a hand-written copy, and without a closure (numba cannot cache a closure
    over a compiled function)."""
    code = _parallel.__code__.replace(co_name=name, co_qualname=name)
    function = types.FunctionType(code, {**_parallel.__globals__, "KERNEL": kernel}, name)
    return njit(cache=True, parallel=True)(function)
