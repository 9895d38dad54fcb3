"""Calling the compiled kernels with as little Python in between as possible.

numba's dispatcher re-derives the types of every argument on each call (about 0.1 us per array here); the
kernels are always called with the same types, so after the first call -- which compiles, or loads the on-disk
cache -- `compiled` hands out the machine-code entry point itself.  That entry point does not check what it is
given: Robot only passes it float64 arrays whose shape it has checked, and resolves it for layout 'A' (see
`strided`), which reads each array's strides, so that any view is handled.

The cache lives beside the package when that is writable, else in numba's user cache directory (for a
read-only site-packages); the first use on a machine compiles for tens of seconds and says so on stderr once.
numba checks a cached kernel against its own source file only, so a kernel whose callee in another module has
changed would load stale machine code: `clear_stale_cache` keeps a fingerprint of all kernel sources beside the
cache and empties the cache when they change.
"""
import hashlib
import sys
from pathlib import Path

import numpy as np
from numba import typeof

_announced = False


def _cache_missing(dispatcher):
    try:
        index = Path(dispatcher._cache._cache_file._index_path)   # numba's on-disk index of this function
    except AttributeError:
        return False
    return not index.exists()


def clear_stale_cache(dispatcher, sources):
    """Remove numba's cache files beside `dispatcher`'s cache when the files `sources` (every module its kernels
    compile from) differ from those the cache was built from; then record their fingerprint."""
    try:
        cache_dir = Path(dispatcher._cache._cache_path)     # numba's choice: beside the package, or user-wide
    except AttributeError:
        return
    digest = hashlib.sha256(b"".join(Path(s).read_bytes() for s in sorted(sources))).hexdigest()
    stamp = cache_dir / "robot_dynamics-sources.sha256"
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        for path in cache_dir.glob("*.nb[ic]"):
            path.unlink(missing_ok=True)
        cache_dir.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:                                         # unwritable: numba will not cache there either
        pass


def announce_if_cold(dispatcher):
    """Say once per process, on stderr, that kernels are being compiled when `dispatcher` has no disk cache yet."""
    global _announced
    if not _announced and _cache_missing(dispatcher):
        print("robot_dynamics: compiling the dynamics kernels for this machine (once; later runs load them from "
              "numba's cache)...", file=sys.stderr, flush=True)
        _announced = True


def compiled(dispatcher, *example_args):
    """The entry point of `dispatcher` compiled for the types of example_args (called once with them)."""
    announce_if_cold(dispatcher)
    dispatcher(*example_args)
    signature = tuple(typeof(a) for a in example_args)
    return dispatcher.overloads[signature].entry_point


def strided(*shape):
    """Zeros of `shape` that numba types with layout 'A' (any strides) when not empty: an example argument that
    makes `resolve` pick the entry point which reads an array's strides, so that any view may be passed."""
    return np.zeros(shape + (2,))[..., 0]


def resolve(owner, attribute, dispatcher, *example_args):
    """Set owner.<attribute> to the entry point of `dispatcher`: at once when it is already compiled in this
    process, else on its first call -- so that a run loads (or, the first time, compiles) only the kernels it
    uses."""
    if dispatcher.overloads:
        setattr(owner, attribute, compiled(dispatcher, *example_args))
        return

    def first_call(*args):
        kernel = compiled(dispatcher, *example_args)
        setattr(owner, attribute, kernel)
        return kernel(*args)

    setattr(owner, attribute, first_call)
