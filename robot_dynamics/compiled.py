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
check what it is given: Robot only passes it float64 arrays whose shape it has checked, resolved for C-contiguous
arrays (a kernel that knows the layout zeroes and walks its arrays up to 2x faster than one that reads strides);
a view of other strides is copied in and out around it (robot._Contiguous, Robot._run_batch).

C calls.  Even so, a method written in Python spends ~0.6 us before its kernel starts and numba's entry ~0.15 us
more: on a small robot, as long as Pinocchio's whole call.  After a method's first single state, Robot installs a
_fastcall.Call (robot_dynamics/_fastcall.c, built by `pip install`) under the method's name: it checks a single
state's arrays, allocates the results and calls the kernel's C entry point (`fast_kernel`: a numba cfunc that
rebuilds the C-contiguous arrays from pointers and shapes and calls the checked kernel, the very overload the
method calls); everything else, strided views included, goes to the method.  ROBOT_DYNAMICS_FAST_CALLS=0 in the
environment turns them off.

Checks.  `checked_kernels` puts every kernel (inlined: a call would cost ~10 ns an array argument) in a compiled
function of the same arguments that refuses an output overlapping an input or another output (their byte extents,
np.may_share_memory's test: a few pointer comparisons) and reports a non-finite result (float64 overflow), as
status codes.  Robot calls it for one state and in the batch loop, and compares the whole batches' extents before
computing any state (`overlapping`, in C).

Batches.  `parallel(kernel, name)` is a compiled loop over the states of a batch, in parallel on all cores, that
calls `kernel` once per state with the workspace of the thread that runs it (numba.get_thread_id): every quantity
of the registry gets one, with no code of its own.  The per-thread workspaces are the caller's, made once
(`thread_count` says how many): copying a workspace per chunk of states cost ~2 us a chunk, a tenth of a batch.
"""
import contextlib
import hashlib
import linecache
import os
import sys
import tempfile
import types
import weakref
from pathlib import Path

import numba
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


def signature(*example_args):
    """The numba types of example_args (which are not computed on: only their types matter).  numba's typeof takes
    ~0.7 ms for a record array: a caller resolving many kernels for the same types computes this once."""
    return tuple(typeof(a) for a in example_args)


def compiled(dispatcher, types):
    """The compiled function of `dispatcher` for the argument types `types` (see `signature`), compiled or loaded
    from the cache now."""
    if types not in dispatcher.signatures:
        announce_if_cold()
        dispatcher.compile(types)
    return dispatcher.get_overload(types)


def resolve(owner, attribute, dispatcher, types):
    """Set owner.<attribute> to the compiled function of `dispatcher` for the argument types `types()` (a function
    returning them, see `signature`, called only when needed): at once when it is already compiled in this
    process, else on its first call -- so that a run types (~7 ms a quantity), loads (or, the first time,
    compiles) only the kernels it uses.  The first-call stand-in holds owner weakly: a Robot is freed as soon as
    it is no longer used."""
    if dispatcher.signatures:
        setattr(owner, attribute, compiled(dispatcher, types()))
        return
    ref = weakref.ref(owner)

    def first_call(*args):
        kernel = compiled(dispatcher, types())
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
    one copy per thread (thread_count() of them at least).  The caller has compared the batches' extents
    (`overlapping`): inside the loop that check cost ~0.5 s of compilation per quantity."""
    for i in prange(status.shape[0]):
        t = get_thread_id()
        status[i] = KERNEL(bodies, works[t], *row(arrays, t), *constants, *row(inputs, i), *row(outputs, i))  # noqa


def parallel(kernel, name):
    """A compiled parallel loop of _parallel's over the states of a batch, calling `kernel`.  It is _parallel's
    code with KERNEL bound among its globals and its own name (so numba caches each loop apart): one loop for
    every kernel without a hand-written copy, and without a closure (numba cannot cache a closure over a compiled
    function)."""
    code = _parallel.__code__.replace(co_name=name, co_qualname=name)
    function = types.FunctionType(code, {**_parallel.__globals__, "KERNEL": kernel}, name)
    return njit(cache=True, parallel=True)(function)


# ---- the checks around every kernel -----------------------------------------------------------------------------
# A state whose entries all lie within SAFE_MAGNITUDE cannot make a bounded output overflow for a model within
# urdf.MAX_MAGNITUDE (and parameters within model.MAX_PARAMETER): such outputs grow polynomially with the state
# and the model's numbers and stay far below float64's 1.8e308 there (test_reliability evaluates every quantity
# of a model at the bounds).  An output that divides by a quantity of the state (M^-1, an articulated inertia,
# the total mass) is unbounded: checked always.
SAFE_MAGNITUDE = 1e6


def checked_source(name, n_params, inputs, outputs, always, overflow, overlap):
    """The source of checked_kernels' wrapper `name` of a kernel of n_params parameters, whose last outputs
    (their ndims) follow its inputs (their ndims); always[i]: output i is checked at every call, else only when
    an input entry exceeds SAFE_MAGNITUDE.  Straight-line code written out for the arrays' ndims, rather than
    helpers with loops inlined (numba's SSA pass warns about those)."""
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
    checked_always = [(o, n) for o, n, c in zip(outs, outputs, always) if c]
    guarded = [(o, n) for o, n, c in zip(outs, outputs, always) if not c]
    if checked_always:
        lines += _finite_lines(checked_always, "    ")
        lines += ["    if not s0 + s1 + s2 + s3 == 0.0:", f"        return {overflow}"]
    if guarded:                          # only vectors are told moderate (a matrix input: always checked)
        vectors = all(n == 1 for n in inputs)
        lines.append(f"    moderate = {vectors}")
        for x in ins if vectors else ():
            lines += [f"    for i in range({x}.shape[0]):", f"        moderate &= abs({x}[i]) <= {SAFE_MAGNITUDE!r}"]
        lines += ["    if not moderate:"] + _finite_lines(guarded, "        ")
        lines += ["        if not s0 + s1 + s2 + s3 == 0.0:", f"            return {overflow}"]
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def _finite_lines(arrays, indent):
    """Lines summing x * 0 over every entry of the (name, ndim) arrays into s0..s3: 0 when all are finite, NaN
    otherwise -- four independent accumulators and no branch per entry."""
    lines = [indent + "s0 = s1 = s2 = s3 = 0.0"]
    for x, ndim in arrays:
        inner = indent
        for d in range(ndim - 1):
            lines.append(f"{inner}for i{d} in range({x}.shape[{d}]):")
            inner += "    "
        row = x + ("[" + ", ".join(f"i{d}" for d in range(ndim - 1)) + "]" if ndim > 1 else "")
        lines += [f"{inner}r = {row}", f"{inner}j = 0", f"{inner}while j + 4 <= r.shape[0]:"]
        lines += [f"{inner}    s{i} += r[j + {i}] * 0.0" for i in range(4)]
        lines += [f"{inner}    j += 4", f"{inner}while j < r.shape[0]:", f"{inner}    s0 += r[j] * 0.0",
                  f"{inner}    j += 1"]
    return lines


def checked_kernels(specs, overflow, overlap):
    """{name: compiled wrapper} of specs {name: (kernel, input ndims, output ndims, always)}: each wrapper takes
    its kernel's arguments (bodies, work, *arrays, *constants, *inputs, *outputs) and returns `overlap` when an
    output's bytes may overlap an input's or another output's (nothing is computed), else the kernel's status,
    or `overflow` when the kernel succeeded but an output holds a non-finite number (see checked_source).

    The wrappers are generated source (one straight line of pointer comparisons per pair, no loop over a
    tuple), with the kernel inlined (numba's inline="always" on a dispatcher of its Python function, compiled only
    there); the source is written beside numba's cache of the kernels, so that numba caches them as well."""
    sources = {name: checked_source("checked_" + name, kernel.py_func.__code__.co_argcount, inputs, outputs,
                                    always, overflow, overlap)
               for name, (kernel, inputs, outputs, always) in specs.items()}
    source = ('"""Generated by robot_dynamics.compiled.checked_kernels: the checks around every kernel."""\n\n\n'
              + "\n\n".join(sources.values()))
    namespace = {}
    filename, cacheable = _generated_file("checked_kernels.py", source)
    exec(compile(source, filename, "exec"), namespace)
    wrappers = {}
    for name, (kernel, *_) in specs.items():     # each its own globals, with KERNEL its kernel (as `parallel`)
        function = namespace["checked_" + name]
        inlined = njit(inline="always")(kernel.py_func)        # a call would cost ~10 ns an array argument
        function = types.FunctionType(function.__code__, {"__name__": __name__, "KERNEL": inlined},
                                      function.__name__)
        wrappers[name] = njit(cache=cacheable)(function)
    return wrappers


def _generated_file(name, source):
    """(filename, cacheable): a file holding `source` in the kernels' cache directory, named after its hash and
    written once (numba dates its cache by the file) -- or, without a writable one, a placeholder registered with
    linecache, which numba cannot cache."""
    if _cache_dir is not None:
        stem, suffix = os.path.splitext(name)
        path = _cache_dir / f"{stem}_{hashlib.sha256(source.encode()).hexdigest()[:16]}{suffix}"
        try:
            if not path.exists():
                temporary = path.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(source)
                os.replace(temporary, path)        # atomic: another process never reads half a file
            return str(path), True
        except OSError:
            pass
    filename = f"<robot_dynamics {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename, False


# ---- the C entry points of the single-state calls ---------------------------------------------------------------
try:
    from . import _fastcall
except ImportError:                             # not built (a source tree without `pip install -e .`): the methods
    _fastcall = None                            # written in Python do everything, as fast as before
FAST_CALLS = _fastcall is not None and os.environ.get("ROBOT_DYNAMICS_FAST_CALLS", "1") != "0"
# Contiguous(slow, n): calls a kernel directly when its last n arguments are C-contiguous arrays, else slow; the
# methods written in Python reach their kernels through one (robot._Contiguous), or through slow alone without C
Contiguous = _fastcall.Contiguous if FAST_CALLS else None


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
_fast_kernels = {}


def fast_source(name, types):
    """The source of fast_kernel's function `name` for a checked kernel of argument types `types`: (bodies, work,
    pointers, dims) -> KERNEL(...) with each array rebuilt from its pointer -- the body records and the workspace
    (dims[0] records each), then every other array, C-contiguous, from its shape, as _fastcall.c lays them out."""
    args, p, d = ["carray(bodies, (d[0],))", "carray(work, (d[0],))"], 0, 1
    for i, t in enumerate(types[2:]):
        assert t.layout == "C", t
        shape = ", ".join(f"d[{d + k}]" for k in range(t.ndim)) + ","
        args.append(f"carray(p[{p}], ({shape}), dtype=D{i})")
        d += t.ndim
        p += 1
    return f"def {name}(bodies, work, p, d):\n    return KERNEL(" + ",\n                  ".join(args) + ")\n"


def fast_kernel(name, dispatcher, types):
    """The address of a C function int64 (void *bodies, void *work, void **pointers, int64 *dims) that calls
    `dispatcher` (a checked kernel) for the argument types `types` (its resolved signature, see `signature`) on
    arrays it rebuilds from raw pointers: what a _fastcall.Call calls.  A numba cfunc, compiled once per process
    (cached on disk beside the kernels), on the first single-state call of its method."""
    if name in _fast_kernels:
        return _fast_kernels[name].address
    from numba import cfunc
    from numba import types as nt
    compiled(dispatcher, types)                 # the kernel itself (and the notice when the cache is cold)
    source = ('"""Generated by robot_dynamics.compiled.fast_kernel: a kernel\'s C entry point."""\n'
              "from numba import carray\n\n\n"
              + fast_source("fast_" + name, types))
    filename, cacheable = _generated_file(f"fast_{name}.py", source)
    namespace = {"__name__": __name__, "KERNEL": dispatcher, **{f"D{i}": t.dtype for i, t in enumerate(types[2:])}}
    exec(compile(source, filename, "exec"), namespace)
    sig = nt.int64(nt.CPointer(types[0].dtype), nt.CPointer(types[1].dtype), nt.CPointer(nt.voidptr),
                   nt.CPointer(nt.int64))
    _fast_kernels[name] = cfunc(sig, cache=cacheable)(namespace["fast_" + name])
    return _fast_kernels[name].address


def fast_call(name, dispatcher, types, fixed, input_sizes, output_shapes, function, owner, frames=None,
              references=True, **options):
    """A _fastcall.Call of the checked kernel `dispatcher` of registry row `name` (types: its resolved signature):
    called as function(owner, *inputs, out=None) is -- or, with frames, function(owner, *inputs, frame,
    [reference,] out=None), the frame looked up in frames {frame: (its array in "local", "world",
    "local_world_aligned")} -- for one state of float64 vectors of input_sizes; everything else is handed to
    `function`.  fixed: the body records, workspace, per-robot arrays and gravity the kernel reads, held by the
    Call; output_shapes: a shape per output.  options: result_type, fields, extended, as _fastcall.c describes
    them."""
    return _fastcall.Call(fast_kernel(name, dispatcher, types), tuple(fixed), tuple(input_sizes), tuple(output_shapes),
                          function, owner, frames, references, **options)
