"""Where the compiled kernels are cached, and calling them with as little Python in between as possible.

Cache.  numba checks a cached kernel against its own source file only, so a kernel whose callee in another
module has changed would load stale machine code.  `kernel_cache` therefore gives numba (through its documented
setting numba.config.CACHE_DIR, for the duration of the kernels' import only) a directory named after a hash of
every kernel source: editing any of them starts a new directory, and nothing is ever deleted.  The directory lies
beside the package when that is writable, else in the user's cache directory (a read-only site-packages).  The
first use on a machine compiles for tens of seconds and says so on stderr, once.

Calls.  numba's dispatcher re-derives the types of every argument on each call (about 0.1 us per array here);
the kernels are always called with the same types, so `compiled` hands out the compiled function itself (the
dispatcher's get_overload), compiled or loaded at its first use.  That function does not check what it is given:
dispatch.py only passes it float64 arrays whose shape it has checked, resolved for C-contiguous arrays (a kernel
that knows the layout zeroes and walks its arrays up to 2x faster than one that reads strides); a view of other
strides is copied in and out around it (dispatch._Contiguous, Engine.run_batch).

C calls.  Even so, a route written in Python spends ~0.6 us before its kernel starts and numba's entry ~0.15 us
more: on a small robot, as long as Pinocchio's whole call.  A quantity's entry (dispatch.Calls) is therefore a
_fastcall.Call (robot_dynamics/_fastcall.c, built by `pip install`, made by `fast_call`): it checks a single
state's arrays and that no `out` overlaps an input or another out, allocates the results and calls the kernel's C
entry point (`fast_kernel`: a numba cfunc that rebuilds the C-contiguous arrays from pointers and shapes, calls
the kernel and checks its results); everything else, strided views included, goes to the quantity's route in
Python (dispatch.Quantity).  ROBOT_DYNAMICS_FAST_CALLS=0 in the environment turns them off.

Checks.  Every kernel's results are checked for a non-finite number (float64 overflow) by `result_checks`, as a
status code, and no output may overlap an input or another output (their byte extents, np.may_share_memory's
test): the C entry point leaves the overlaps to its callers (the Call, in C; dispatch.Engine for a whole batch,
before any state is computed: `overlapping`, in C); `checked_kernels` puts every kernel in a compiled function of
the same arguments that compares them too, for the route written in Python.  Both call the one compiled kernel, so a
strided view handed to the Python route gets the C entry point's very numbers.

Batches.  `batch_loop` is one compiled loop over the states of a batch, in parallel on all cores, that calls a
quantity's C entry point once per state with the workspace of the thread that runs it (numba.get_thread_id):
every quantity of the registry runs its batches in it, and no quantity's code is compiled into it (a loop per
quantity compiled that quantity again: ~2 s each at first use).  The per-thread workspaces are the caller's, made
once (`thread_count` says how many): copying a workspace per chunk of states cost ~2 us a chunk, a tenth of a
batch.
"""
import atexit
import contextlib
import ctypes
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
import types
from pathlib import Path

import numba
import numpy as np
from numba import get_num_threads, get_thread_id, njit, prange, typeof

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


def cache_is_cold():
    """True when the kernel cache holds no compiled kernel yet: this machine's first run."""
    return not (_cache_dir and any(_cache_dir.rglob("*.nbi")))


def announce_if_cold():
    """Say once per process, on stderr, that the kernels are being compiled when their cache is empty."""
    global _announced
    if not _announced and cache_is_cold():
        print("robot_dynamics: compiling the dynamics kernels for this machine (once; later runs load them from "
              "numba's cache)...", file=sys.stderr, flush=True)
    _announced = True


_target_ready = False


def prepare_target():
    """Make numba's CPU target ready, once per process: its first use loads numba's implementations of numpy
    (importing scipy.linalg for BLAS), ~0.4-0.7 s.  Called when a robot is loaded (dispatch.Engine), so that this
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
# without the extension, in their checked kernels (dispatch.row_kernel): the innovations factorization and what
# is built on it (paper 003), and the contact-constrained dynamics.  Their kernels are long runs of short nested
# loops over a joint's degrees of freedom, on which LSR took most of the machine-code time: one process calling
# every method on an empty cache, back to back, 186 s with LSR and 159 s without it for these rows (their machine
# code 28 -> 8 s), at the same speed (benchmarks/compile_phases.py).  Other kernels keep it: without it the
# single-state forward dynamics ran 11-18 % slower.
WITHOUT_LSR = frozenset({"inverse_mass_matrix", "_innovations", "_solve_mass_matrix", "from_diagonalized",
                         "_diagonalized", "_constrained_dynamics"})


_lsr_off = 0                    # how many _loop_strength_reduction(False) blocks are open
_lsr_lock = threading.RLock()   # held by the thread that has them open


@contextlib.contextmanager
def _loop_strength_reduction(enabled):
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
        with _loop_strength_reduction(row not in WITHOUT_LSR):
            dispatcher.compile(types)
    return dispatcher.get_overload(types)


# ---- the parallel batch loop ------------------------------------------------------------------------------------
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
    return signature(_ENTRY(0), bodies, works, index, index[None], index)


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


# ---- the checks around every kernel -----------------------------------------------------------------------------
# A state whose entries all lie within SAFE_MAGNITUDE cannot make a bounded output overflow for a model within
# urdf.MAX_MAGNITUDE (and parameters within model.MAX_PARAMETER): such outputs grow polynomially with the state
# and the model's numbers and stay far below float64's 1.8e308 there (test_finite_numbers evaluates every quantity
# of a model at the bounds).  An output that divides by a quantity of the state (M^-1, an articulated inertia,
# the total mass) is unbounded: checked always.
SAFE_MAGNITUDE = 1e6


def checked_source(name, n_params, inputs, outputs, always, overflow, overlap):
    """The source of checked_kernels' wrapper `name` of a kernel of n_params parameters, whose last outputs
    (their ndims) follow its inputs (their ndims); always[i]: output i is checked at every call, else only when
    an input entry exceeds SAFE_MAGNITUDE (result_checks).  Straight-line code: one line of pointer comparisons
    per pair of arrays."""
    a = [f"x{i}" for i in range(n_params)]
    outs = a[n_params - len(outputs):]
    ins = a[n_params - len(outputs) - len(inputs):n_params - len(outputs)]
    lines = [f"def {name}({', '.join(a)}):"]
    for x in ins + outs:        # [x_lo, x_hi): the bytes of x, C-contiguous as every kernel's arrays are
        lines += [f"    {x}_lo = {x}.ctypes.data", f"    {x}_hi = {x}_lo + {x}.nbytes"]
    pairs = [(o, x) for i, o in enumerate(outs) for x in ins + outs[i + 1:]]
    if pairs:                            # & and |, not and/or: no branch per pair for numba to compile
        lines.append("    if (" + "\n            | ".join(f"(({o}_lo < {x}_hi) & ({x}_lo < {o}_hi))" for o, x in pairs)
                     + "):")
        lines.append(f"        return {overlap}")
    lines += [f"    status = KERNEL({', '.join(a)})", "    if status != 0:", "        return status"]
    flat = [x if n == 1 else f"{x}.reshape({x}.size)" for x, n in zip(ins + outs, inputs + outputs)]
    lines += result_checks(flat[:len(ins)], flat[len(ins):], inputs, always, overflow)
    return "\n".join(lines) + "\n"


def result_checks(ins, outs, inputs, always, overflow):
    """The lines, after a kernel has succeeded, that return `overflow` when an output holds a non-finite number:
    the outputs of always[i] at every call, the others only when an input entry exceeds SAFE_MAGNITUDE (only
    vector inputs are told moderate: with a matrix input, at every call; without inputs, never).  ins, outs:
    expressions of the inputs and outputs as 1-D arrays; inputs: the inputs' ndims.  They call `finite` and
    `moderate` (compiled once, for all quantities), not loops written out in every kernel's checks: ~0.5 s less to
    compile per quantity."""
    vectors = all(n == 1 for n in inputs)
    every_call = [o for o, c in zip(outs, always) if c or not vectors]
    guarded = [o for o, c in zip(outs, always) if not c and vectors and ins]
    lines = []
    if every_call:
        lines += ["    if not (" + " & ".join(f"FINITE({o})" for o in every_call) + "):", f"        return {overflow}"]
    if guarded:
        lines += ["    if not (" + " & ".join(f"MODERATE({x})" for x in ins) + "):",
                  "        if not (" + " & ".join(f"FINITE({o})" for o in guarded) + "):",
                  f"            return {overflow}"]
    return lines + ["    return 0"]


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


_specs = {}    # name: (kernel, inputs, outputs, always, overflow, overlap), from checked_kernels: fast_kernel's


def checked_kernels(specs, overflow, overlap):
    """{name: compiled wrapper} of specs {name: (kernel, input ndims, output ndims, always)}: each wrapper takes
    its kernel's arguments (bodies, work, *arrays, *constants, *inputs, *outputs) and returns `overlap` when an
    output's bytes may overlap an input's or another output's (nothing is computed), else the kernel's status,
    or `overflow` when the kernel succeeded but an output holds a non-finite number (see checked_source).

    The wrappers are generated source (one straight line of pointer comparisons per pair, no loop over a
    tuple) that calls the kernel (not inlined: the machine code of the C entry point, fast_kernel); the source is
    written beside numba's cache of the kernels, so that numba caches them as well.  They are made when first
    asked for, and compiled when a route written in Python first calls one (a strided view, say): the single
    states and batches of float64 arrays go through the C entry points."""
    _specs.update({name: (*spec, overflow, overlap) for name, spec in specs.items()})
    return _Wrappers(specs, overflow, overlap)


class _Wrappers(dict):
    """checked_kernels' {name: wrapper}, each made when first asked for (the source of all of them, once)."""

    def __init__(self, specs, overflow, overlap):
        super().__init__()
        self.specs, self.codes = specs, (overflow, overlap)
        self.namespace = self.cacheable = None                 # the generated module's, made at the first look-up

    def __missing__(self, name):
        kernel = self.specs[name][0]                # a KeyError for a name that is not a row's
        if self.namespace is None:
            sources = [checked_source("checked_" + n, k.py_func.__code__.co_argcount, inputs, outputs, always,
                                      *self.codes) for n, (k, inputs, outputs, always) in self.specs.items()]
            source = ('"""Generated by robot_dynamics.compiled.checked_kernels: the checks around every kernel."""'
                      "\n\n\n" + "\n\n".join(sources))
            module, self.cacheable = _generated_module("checked_kernels.py", source, {})
            self.namespace = vars(module)
        function = self.namespace["checked_" + name]           # its own globals, with KERNEL its kernel
        function = types.FunctionType(function.__code__, {"__name__": __name__, "KERNEL": kernel,
                                                          "FINITE": finite, "MODERATE": moderate}, function.__name__)
        wrapper = self[name] = njit(cache=self.cacheable)(function)
        return wrapper


_scratch = None                 # a temporary directory for generated modules when the cache directory is read-only


def _generated_module(name, source, namespace):
    """(module, cacheable): the module of `source`, run with `namespace` among its globals and registered in
    sys.modules (numba's cache imports a compiled function's module by name when it loads it back) -- a file in the
    kernels' cache directory named after its hash and written once (numba dates its cache by the file; a reader can
    open it), or, without a writable one, in a temporary directory of this process, which numba does not cache."""
    global _scratch
    stem, suffix = os.path.splitext(name)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    for cacheable in (True, False):
        if cacheable and _cache_dir is None:
            continue
        if not cacheable and _scratch is None:
            _scratch = Path(tempfile.mkdtemp(prefix="robot_dynamics-generated-"))
            atexit.register(shutil.rmtree, _scratch, True)
        path = (_cache_dir if cacheable else _scratch) / f"{stem}_{digest}{suffix}"
        try:
            if not path.exists():
                temporary = path.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(source)
                os.replace(temporary, path)        # atomic: another process never reads half a file
            break
        except OSError:
            if not cacheable:
                raise
    name = f"robot_dynamics_generated_{stem}_{digest}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        module.__dict__.update(namespace)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module, cacheable


# ---- the C entry points of the single-state calls ---------------------------------------------------------------
try:
    from . import _fastcall
except ImportError:                             # not built (a source tree without `pip install -e .`): the methods
    _fastcall = None                            # written in Python do everything, as fast as before
FAST_CALLS = _fastcall is not None and os.environ.get("ROBOT_DYNAMICS_FAST_CALLS", "1") != "0"
# Contiguous(slow, n): calls a kernel directly when its last n arguments are C-contiguous arrays, else slow; the
# routes written in Python reach their kernels through one (dispatch._Contiguous), or through slow alone without C
Contiguous = _fastcall.Contiguous if FAST_CALLS else None
# Method(def, row, ...): a Robot method that only hands over to self._calls[row], called in C (dispatch.forwards)
Method = _fastcall.Method if FAST_CALLS else None


def extents_overlap(inputs, outputs):
    """True when the byte extent of an array of the tuple `outputs` overlaps that of one of `inputs` or of another
    output (np.may_share_memory's bounds): whole batches, before any state is computed (an out of one state may
    overlap the input of another).  _fastcall.overlapping does the same in C (0.06 us for 10 arrays, 14 us
    here): this is its stand-in without the extension."""
    bounds = []
    for x in inputs + outputs:
        lo = hi = x.__array_interface__["data"][0]
        if x.size:
            hi += x.itemsize
            for n, stride in zip(x.shape, x.strides):
                reach = (n - 1) * stride
                if reach < 0:
                    lo += reach
                else:
                    hi += reach
        bounds.append((lo, hi))
    return any(bounds[i][0] < bounds[j][1] and bounds[j][0] < bounds[i][1]
               for i in range(len(inputs), len(bounds)) for j in range(i))


overlapping = _fastcall.overlapping if _fastcall is not None else extents_overlap
layout = _fastcall.layout if _fastcall is not None else batch_layout    # batch_loop's layout: C, or Python
_fast_kernels = {}


def fast_source(name, types, inputs, outputs, always, overflow):
    """The source of fast_kernel's function `name` for a kernel of argument types `types` (see checked_source for
    inputs, outputs, always, overflow): (bodies, work, pointers, dims) -> KERNEL(...) on arrays rebuilt from the
    pointers -- the body records and the workspace (dims[0] records each), then every other array, C-contiguous,
    from its shape, as _fastcall.c lays them out -- and then the kernel's result checks (result_checks).  Overlaps
    are compared before: by the Call in C for one state, by dispatch.Engine for a whole batch."""
    args, flat, d = ["carray(bodies, (d[0],))", "carray(work, (d[0],))"], [], 1
    for p, t in enumerate(types[2:]):
        assert t.layout == "C", t
        dims = [f"d[{d + k}]" for k in range(t.ndim)]
        args.append(f"carray(p[{p}], ({', '.join(dims)},), dtype=D{p})")
        flat.append(f"carray(p[{p}], ({' * '.join(dims)},), dtype=D{p})")     # the same array, as 1-D
        d += t.ndim
    outs, ins = flat[len(flat) - len(outputs):], flat[len(flat) - len(outputs) - len(inputs):len(flat) - len(outputs)]
    lines = [f"def {name}(bodies, work, p, d):", "    status = KERNEL(" + ",\n                    ".join(args) + ")",
             "    if status != 0:", "        return status"]
    return "\n".join(lines + result_checks(ins, outs, inputs, always, overflow)) + "\n"


def fast_kernel(name, types):
    """The address of a C function int64 (void *bodies, void *work, void **pointers, int64 *dims) that calls the
    kernel of registry row `name` (as checked_kernels was given it) for the argument types `types` (its resolved
    signature, see `signature`) on arrays it rebuilds from raw pointers, and checks its results: what a
    _fastcall.Call and batch_loop call.  A numba cfunc, compiled once per process (cached on disk beside the
    kernels), at the first single state or batch of its quantity.

    The kernel and the checks' helpers are compiled first, on their own: typed from within the cfunc, numba took
    ~1.5 s longer to compile the same kernel."""
    if name in _fast_kernels:
        return _fast_kernels[name].address
    from numba import cfunc
    from numba import types as nt
    kernel, inputs, outputs, always, overflow, _ = _specs[name]
    vector = types[-1].copy(ndim=1)
    for dispatcher, arguments in ((finite, (vector,)), (moderate, (vector,))):
        compiled(dispatcher, arguments)        # (and the notice when the cache is cold)
    compiled(kernel, types, name)               # with its row's options, as the entry point below
    source = ('"""Generated by robot_dynamics.compiled.fast_kernel: a kernel\'s C entry point."""\n'
              "from numba import carray\n\n\n"
              + fast_source("fast_" + name, types, inputs, outputs, always, overflow))
    module, cacheable = _generated_module(f"fast_{name}.py", source, {
        "KERNEL": kernel, "FINITE": finite, "MODERATE": moderate,
        **{f"D{i}": t.dtype for i, t in enumerate(types[2:])}})
    sig = nt.int64(nt.CPointer(types[0].dtype), nt.CPointer(types[1].dtype), nt.CPointer(nt.voidptr),
                   nt.CPointer(nt.int64))
    with _loop_strength_reduction(name not in WITHOUT_LSR):
        _fast_kernels[name] = cfunc(sig, cache=cacheable)(getattr(module, "fast_" + name))
    return _fast_kernels[name].address


def checked_entry(name, types):
    """What registry.CHECKED[name] is without the extension, with it: a _fastcall.Entry, called with the checked
    kernel's arguments (C-contiguous arrays of the resolved signature `types`), that returns its status -- the
    overlap code when an output overlaps an input or another output, else the C entry point's (fast_kernel).  So
    the routes written in Python (strided views, through dispatch._Contiguous) compute with the quantity's one
    compiled entry, the very machine code of its Call and its batches."""
    _, inputs, outputs, _, _, overlap = _specs[name]
    return _fastcall.Entry(fast_kernel(name, types), tuple(t.ndim for t in types), len(inputs), len(outputs), overlap)


_entries = {}
_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def entry(name, types):
    """fast_kernel's C function of registry row `name` as a ctypes function of four addresses, as batch_loop
    calls it (numba passes an array's .ctypes as an address, never as the typed pointers of the cfunc's own
    signature: the same machine code, the same arguments)."""
    function = _entries.get(name)
    if function is None:
        function = _entries[name] = _ENTRY(fast_kernel(name, types))
    return function


def fast_call(name, types, fixed, input_sizes, output_shapes, function, owner, keys=0, table=None, **options):
    """A _fastcall.Call of the kernel of registry row `name` (types: its resolved signature) within its checks
    (fast_kernel), called as (*inputs, *keys, out=None) for one state of float64 vectors of input_sizes: the `keys`
    arguments after the state select the kernel's constant input in the nested dicts `table` (or the one the Call
    `remember`s for a sequence key); everything else is handed to function(owner, *args, **kwargs), as is an `out`
    that overlaps an input or another out.  fixed: the body records, workspace, per-robot arrays and gravity the
    kernel reads, held by the Call; output_shapes: a shape per output.  options: result_type, fields, as
    _fastcall.c describes them."""
    return _fastcall.Call(fast_kernel(name, types), tuple(fixed), tuple(input_sizes), tuple(output_shapes),
                          function, owner, keys, table, **options)
