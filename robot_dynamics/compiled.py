"""Calling the compiled kernels with as little Python in between as possible.

numba's dispatcher re-derives the types of every argument on each call (about 0.1 us per array here); the
kernels are always called with the same types, so after the first call -- which compiles, or loads the on-disk
cache -- `compiled` hands out the machine-code entry point itself.  Robot only passes it arrays whose dtype, rank
and layout it has checked, the same as the first call's.

The cache lives beside the package when that is writable, else in numba's user cache directory (for a
read-only site-packages); the first use on a machine compiles for tens of seconds and says so on stderr once.
"""
import sys
from pathlib import Path

_announced = False


def _cache_missing(dispatcher):
    try:
        index = Path(dispatcher._cache._cache_file._index_path)   # numba's on-disk index of this function
    except AttributeError:
        return False
    return not index.exists()


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
    for signature, result in dispatcher.overloads.items():
        return result.entry_point
    raise RuntimeError(f"{dispatcher} compiled no signature")


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
