"""Compiling a kernel for fixed argument types and handing out the compiled function itself.

numba's dispatcher re-derives the types of every argument on each call (about 0.1 us per array here); the kernels
are always called with the same types, so `compiled` hands out the compiled function (the dispatcher's
get_overload), compiled or loaded at its first use, with the compile options of its registry row (WITHOUT_LSR).
That function does not check what it is given: the routes (calls/quantity.py) only pass it float64 arrays whose
shape they have checked, resolved for C-contiguous arrays.  `finite` and `moderate` are the two compiled checks
that every kernel's result checks call (generated.py).
"""
import contextlib
import threading

import numpy as np
from numba import njit, typeof

from .cache import announce_if_cold

# A state whose entries all lie within SAFE_MAGNITUDE cannot make a bounded output overflow for a model within
# urdf.MAX_MAGNITUDE (and parameters within model.MAX_PARAMETER): such outputs grow polynomially with the state
# and the model's numbers and stay far below float64's 1.8e308 there (test_finite_numbers evaluates every quantity
# of a model at the bounds).  An output that divides by a quantity of the state (M^-1, an articulated inertia,
# the total mass) is unbounded: checked always.
SAFE_MAGNITUDE = 1e6


_target_ready = False


def prepare_target():
    """Make numba's CPU target ready, once per process: its first use loads numba's implementations of numpy
    (importing scipy.linalg for BLAS), ~0.4-0.7 s.  Called when a robot is loaded (engine.Engine), so that this
    is paid there and not by the robot's first call -- a controller's first tick -- even when every kernel is in
    the cache."""
    global _target_ready
    if not _target_ready:
        finite(np.zeros(1))                 # a compiled function's first call (every C entry point's checks use it)
        _target_ready = True


def signature(*example_args):
    """The numba types of example_args (which are not computed on: only their types matter).  numba's typeof takes
    ~0.7 ms for a record array: a caller resolving many kernels for the same types computes this once."""
    return tuple(typeof(a) for a in example_args)


# The rows whose kernels LLVM compiles without its loop strength reduction (LSR), in their C entry points and,
# without the extension, in their checked kernels (kernels.row_kernel): the innovations factorization and what
# is built on it (paper 003), and the contact-constrained dynamics.  Their kernels are long runs of short nested
# loops over a joint's degrees of freedom, on which LSR took most of the machine-code time: one process calling
# every method on an empty cache, back to back, 186 s with LSR and 159 s without it for these rows (their machine
# code 28 -> 8 s), at the same speed (benchmarks/compile_phases.py).  Other kernels keep it: without it the
# single-state forward dynamics ran 11-18 % slower.
WITHOUT_LSR = frozenset({"inverse_mass_matrix", "_innovations", "_solve_mass_matrix", "from_diagonalized",
                         "_diagonalized", "_constrained_dynamics"})


_lsr_off = 0                    # how many loop_strength_reduction(False) blocks are open
_lsr_lock = threading.RLock()   # held by the thread that has them open


@contextlib.contextmanager
def loop_strength_reduction(enabled):
    """Compile in this block with LLVM's loop strength reduction on (`enabled`: as it is, so off within an outer
    block that turned it off) or off.  LLVM's option is global to the process: the blocks of one thread at a time
    (a lock, which both kinds take), so that another thread's rows never compile with this one's option.  Blocks
    nest: the outermost turns it back on when it closes, to LLVM's default (llvmlite cannot read an option back,
    so a process that turned LSR off for itself gets it back on after these compilations).  numba's own compiler
    lock is internal: a function of the user's own that another thread compiles meanwhile may get LSR off too --
    the same results, its loops' address arithmetic left as written."""
    global _lsr_off
    if enabled:
        with _lsr_lock:                     # not while another thread has it off
            yield
        return
    import llvmlite.binding as llvm
    with _lsr_lock:
        if _lsr_off == 0:
            llvm.set_option("robot_dynamics", "-disable-lsr")
        _lsr_off += 1
        try:
            yield
        finally:
            _lsr_off -= 1
            if _lsr_off == 0:
                llvm.set_option("robot_dynamics", "-disable-lsr=false")


def compiled(dispatcher, types, row=None):
    """The compiled function of `dispatcher` for the argument types `types` (see `signature`), compiled or loaded
    from the cache now; with the compile options of registry row `row` when it computes one (WITHOUT_LSR)."""
    if types not in dispatcher.signatures:
        announce_if_cold()
        with loop_strength_reduction(row not in WITHOUT_LSR):
            dispatcher.compile(types)
    return dispatcher.get_overload(types)


@njit(cache=True)
def finite(x):
    """Every entry of the 1-D array x is finite: the sum of x * 0 is 0 (NaN otherwise), four independent
    accumulators and no branch per entry."""
    s0 = s1 = s2 = s3 = 0.0
    j = 0
    while j + 4 <= x.shape[0]:
        s0 += x[j] * 0.0
        s1 += x[j + 1] * 0.0
        s2 += x[j + 2] * 0.0
        s3 += x[j + 3] * 0.0
        j += 4
    while j < x.shape[0]:
        s0 += x[j] * 0.0
        j += 1
    return s0 + s1 + s2 + s3 == 0.0


@njit(cache=True)
def moderate(x):
    """Every entry of the 1-D array x lies within SAFE_MAGNITUDE."""
    m = True
    for i in range(x.shape[0]):
        m &= abs(x[i]) <= SAFE_MAGNITUDE
    return m
