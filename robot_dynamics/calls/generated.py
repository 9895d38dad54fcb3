"""The code generated around every kernel: its result checks and its C entry point.

Every kernel's results are checked for a non-finite number (float64 overflow) by `kernel_and_checks`, as a status
code, and no output may overlap an input or another output (their byte extents, np.may_share_memory's test): the C
entry point (`fast_kernel`: a numba cfunc that rebuilds the C-contiguous arrays from pointers and shapes, calls the
kernel and checks its results) leaves the overlaps to its callers (the Call, in C; calls.engine for a whole batch,
before any state is computed); `checked_kernels` puts every kernel in a compiled function of the same arguments
that compares them too, for the route written in Python without the extension.  Both compile the one kernel
source with its own options (the C entry point inlines it: fast_kernel), so a strided view gets the C entry point's
very numbers (test_fast_calls holds them to the same bits).

The two generators are not twins kept by hand: one description of each kernel (`checked_kernels`' specs: its
inputs' and outputs' ndims, which outputs are always checked, the status codes) generates both sources, and their
one body, the kernel's call and its result checks, is `kernel_and_checks`; they differ only in how the arrays come in
(checked_source: as arrays, whose overlaps it compares itself, np.may_share_memory's bounds as the C Call's are;
fast_source: as pointers and shapes, rebuilt).  test_fast_calls holds the two compiled functions to the same
statuses and bits on the cases each check exists for (overflow, a non-finite input, overlapping outs).
"""
import types

from numba import njit

from .cache import generated_module
from .compiling import WITHOUT_LSR, compiled, finite, loop_strength_reduction, moderate


def checked_source(name, n_params, inputs, outputs, always, overflow, overlap):
    """The source of checked_kernels' wrapper `name` of a kernel of n_params parameters, whose last outputs
    (their ndims) follow its inputs (their ndims); always[i]: output i is checked at every call, else only when
    an input entry exceeds SAFE_MAGNITUDE (kernel_and_checks).  Straight-line code: one line of pointer comparisons
    per pair of arrays."""
    a = [f"x{i}" for i in range(n_params)]
    outs = a[n_params - len(outputs):]
    ins = a[n_params - len(outputs) - len(inputs):n_params - len(outputs)]
    lines = [f"def {name}({', '.join(a)}):"]
    for x in ins + outs:        # [x_lo, x_hi): the bytes of x, C-contiguous as every kernel's arrays are; x_hi 0
        lines += [f"    {x}_lo = {x}.ctypes.data",      # when x has none: it overlaps nothing, as in numpy's test
                  f"    {x}_hi = {x}_lo + {x}.nbytes if {x}.nbytes else 0"]
    pairs = [(o, x) for i, o in enumerate(outs) for x in ins + outs[i + 1:]]
    if pairs:                            # & and |, not and/or: no branch per pair for numba to compile
        lines.append("    if (" + "\n            | ".join(f"(({o}_lo < {x}_hi) & ({x}_lo < {o}_hi))" for o, x in pairs)
                     + "):")
        lines.append(f"        return {overlap}")
    flat = [x if n == 1 else f"{x}.reshape({x}.size)" for x, n in zip(ins + outs, inputs + outputs)]
    lines += kernel_and_checks(", ".join(a), flat[:len(ins)], flat[len(ins):], inputs, always, overflow)
    return "\n".join(lines) + "\n"


def kernel_and_checks(arguments, ins, outs, inputs, always, overflow):
    """The body both generators share: the lines that call KERNEL(arguments) and return its status when it failed,
    else `overflow` when an output holds a non-finite number -- the outputs of always[i] at every call, the others
    only when an input entry exceeds SAFE_MAGNITUDE (only vector inputs are told moderate: with a matrix input, at
    every call; without inputs, never) -- else 0.  ins, outs: expressions of the inputs and outputs as 1-D arrays;
    inputs: the inputs' ndims.  The checks call `finite` and `moderate` (compiled once, for all quantities), not
    loops written out in every kernel's checks: ~0.5 s less to compile per quantity."""
    lines = [f"    status = KERNEL({arguments})", "    if status != 0:", "        return status"]
    vectors = all(n == 1 for n in inputs)
    every_call = [o for o, c in zip(outs, always) if c or not vectors]
    guarded = [o for o, c in zip(outs, always) if not c and vectors and ins]
    if every_call:
        lines += ["    if not (" + " & ".join(f"FINITE({o})" for o in every_call) + "):", f"        return {overflow}"]
    if guarded:
        lines += ["    if not (" + " & ".join(f"MODERATE({x})" for x in ins) + "):",
                  "        if not (" + " & ".join(f"FINITE({o})" for o in guarded) + "):",
                  f"            return {overflow}"]
    return lines + ["    return 0"]


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
            source = ('"""Generated by robot_dynamics.calls.generated.checked_kernels: the checks around every '
                      'kernel."""\n\n\n' + "\n\n".join(sources))
            module, self.cacheable = generated_module("checked_kernels.py", source, {})
            self.namespace = vars(module)
        function = self.namespace["checked_" + name]           # its own globals, with KERNEL its kernel
        function = types.FunctionType(function.__code__, {"__name__": __name__, "KERNEL": kernel,
                                                          "FINITE": finite, "MODERATE": moderate}, function.__name__)
        wrapper = self[name] = njit(cache=self.cacheable)(function)
        return wrapper


_fast_kernels = {}
INLINED_OPTIONS = ("fastmath", "error_model", "boundscheck")     # a kernel's options its C entry point takes too


def fast_source(name, types, inputs, outputs, always, overflow):
    """The source of fast_kernel's function `name` for a kernel of argument types `types` (see checked_source for
    inputs, outputs, always, overflow): (bodies, work, pointers, dims) -> KERNEL(...) on arrays rebuilt from the
    pointers -- the body records and the workspace (dims[0] records each), then every other array, C-contiguous,
    from its shape, as _fastcall.c lays them out -- and then the kernel's result checks (kernel_and_checks).  Overlaps
    are compared before: by the Call in C for one state, by engine.Engine for a whole batch."""
    args, flat, d = ["carray(bodies, (d[0],))", "carray(work, (d[0],))"], [], 1
    for p, t in enumerate(types[2:]):
        assert t.layout == "C", t
        dims = [f"d[{d + k}]" for k in range(t.ndim)]
        args.append(f"carray(p[{p}], ({', '.join(dims)},), dtype=D{p})")
        flat.append(f"carray(p[{p}], ({' * '.join(dims)},), dtype=D{p})")     # the same array, as 1-D
        d += t.ndim
    outs, ins = flat[len(flat) - len(outputs):], flat[len(flat) - len(outputs) - len(inputs):len(flat) - len(outputs)]
    return "\n".join([f"def {name}(bodies, work, p, d):"] + kernel_and_checks(
        ",\n                    ".join(args), ins, outs, inputs, always, overflow)) + "\n"


def fast_kernel(name, types):
    """The address of a C function int64 (void *bodies, void *work, void **pointers, int64 *dims) that calls the
    kernel of registry row `name` (as checked_kernels was given it) for the argument types `types` (its resolved
    signature, see `signature`) on arrays it rebuilds from raw pointers, and checks its results: what a
    _fastcall.Call and batch_loop call.  A numba cfunc, compiled once per process (cached on disk beside the
    kernels), at the first single state or batch of its quantity.

    The kernel's body is inlined into the cfunc: a dispatcher of the kernel's own Python function with numba's
    inline="always" and the kernel's compile options (INLINED_OPTIONS), which the cfunc takes too.  So the
    kernel's code is optimized and turned into machine code once, here.  Compiled on its own first and then linked
    in, as its callees are, it was optimized twice, and its own machine code never ran: the C routes are its only
    callers (the routes written in Python compile the kernel itself, through checked_kernels).  Every method
    called once, serially, on an empty cache (precompile.run_task): 171.7 -> 144.3 s of CPU.  The checks' helpers
    are compiled first, on their own."""
    if name in _fast_kernels:
        return _fast_kernels[name].address
    from numba import cfunc
    from numba import types as nt
    kernel, inputs, outputs, always, overflow, _ = _specs[name]
    vector = types[-1].copy(ndim=1)
    for dispatcher, arguments in ((finite, (vector,)), (moderate, (vector,))):
        compiled(dispatcher, arguments)        # (and the notice when the cache is cold)
    options = {k: v for k, v in kernel.targetoptions.items() if k in INLINED_OPTIONS}
    source = ('"""Generated by robot_dynamics.calls.generated.fast_kernel: a kernel\'s C entry point."""\n'
              "from numba import carray\n\n\n"
              + fast_source("fast_" + name, types, inputs, outputs, always, overflow))
    module, cacheable = generated_module(f"fast_{name}.py", source, {
        "KERNEL": njit(inline="always", **options)(kernel.py_func), "FINITE": finite, "MODERATE": moderate,
        **{f"D{i}": t.dtype for i, t in enumerate(types[2:])}})
    sig = nt.int64(nt.CPointer(types[0].dtype), nt.CPointer(types[1].dtype), nt.CPointer(nt.voidptr),
                   nt.CPointer(nt.int64))
    with loop_strength_reduction(name not in WITHOUT_LSR):
        _fast_kernels[name] = cfunc(sig, cache=cacheable, **options)(getattr(module, "fast_" + name))
    return _fast_kernels[name].address


def spec(name):
    """(kernel, inputs, outputs, always, overflow, overlap) of registry row `name`, as checked_kernels was given it."""
    return _specs[name]
