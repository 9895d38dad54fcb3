"""Where numba's cold compile time goes, per phase (issue 26): run in a fresh process on an empty cache.

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_phases.py mass_matrix [forward_dynamics ...]
    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_phases.py --all [--brief]

For each method named (robot_dynamics.precompile.run_task: one state, then a batch of two; a controller's name of
precompile.CONTROLLERS or precompile.COMPOSITE_TICK builds its tick), or with --all every task of
`robot-dynamics compile` (precompile.compile_order) in this one process, prints the seconds
spent, exclusive of nested phases: numba's front end (bytecode, untyped passes, rewrites, inlining), type
inference, lowering to LLVM IR, LLVM function passes (per added IR module), LLVM module passes (the library's
final module, its linked callees included), machine code (MCJIT), cache load / save, and the rest.  Then every
library whose final module was optimised: its time, and how many of its functions came in from linked libraries.
At the end, three figures of the whole run (`overheads`): the seconds numba's inliner spent on the callees of
inline="always" (it runs their untyped passes and deep-copies their IR twice per call site, the second copy
unused), the LLVM module passes and machine code of the C entries' libraries against
those of the helpers' own libraries (each helper is finalised alone too, then linked into every caller and
optimised again there), and the functions compiled for more than one signature (a literal flag, an array layout).
"""
import sys
import time
from collections import Counter, defaultdict

from numba.core import caching, codegen, event

_stack = []                      # [category, start, nested seconds]
totals = Counter()
passes = Counter()                # front end: seconds per pass
functions = Counter()             # seconds per function compiled (its own passes, IR, LLVM, cache)
compiled = []                    # (dispatcher name, args)
all_compiled = []
modules = []                     # (library name, seconds, n functions defined, n linked libraries)


def _push(category, detail=None, owner=None):
    if owner is None and _stack:
        owner = _stack[-1][4]
    _stack.append([category, time.perf_counter(), 0.0, detail, owner])


def _pop():
    category, start, nested, detail, owner = _stack.pop()
    elapsed = time.perf_counter() - start
    totals[category] += elapsed - nested
    if owner:
        functions[owner] += elapsed - nested
    if detail:
        passes[detail] += elapsed - nested
    if _stack:
        _stack[-1][2] += elapsed
    return elapsed


def _timed(owner, name, category):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        _push(category)
        try:
            return original(*args, **kwargs)
        finally:
            _pop()
    setattr(owner, name, wrapper)


PASSES = {"nopython_type_inference": "type inference", "native_lowering": "lowering (IR)",
          "native_parfor_lowering": "lowering (IR)"}


class _Listener(event.Listener):
    def on_start(self, ev):
        if ev.kind == "numba:run_pass":
            name = ev.data["name"].split(" [")[0]
            _push(PASSES.get(name, "front end"), name, ev.data["qualname"])
        elif ev.kind == "numba:compile":
            d = ev.data["dispatcher"]
            compiled.append((getattr(d, "__qualname__", None) or getattr(d.py_func, "__qualname__", str(d)),
                             ev.data["args"]))
            _push("compile (other)", owner=compiled[-1][0])

    def on_end(self, ev):
        if ev.kind in ("numba:run_pass", "numba:compile"):
            _pop()


inlined = Counter()             # inline="always" callees: seconds in numba's inliner, outermost calls only
_inlining = [0]
entry_llvm = Counter()           # (C entry's library or a helper's, phase): seconds


def _is_entry(library):
    """A C entry's library (generated.fast_kernel's fast_<row>, a controller's <tick>_entry, the batch loop): the
    machine code that runs; every other library is a helper's, finalised on its own and linked into its callers."""
    return library.startswith("fast_") or library.endswith("_entry") or library == "batch_loop"


def _inliner():
    from numba.core import inline_closurecall
    original = inline_closurecall.InlineWorker.inline_function

    def inline_function(self, caller_ir, block, i, function, arg_typs=None):
        _inlining[0] += 1
        t = time.perf_counter()
        try:
            return original(self, caller_ir, block, i, function, arg_typs)
        finally:
            _inlining[0] -= 1
            if _inlining[0] == 0:
                inlined[function.__qualname__] += time.perf_counter() - t
    inline_closurecall.InlineWorker.inline_function = inline_function


def install():
    _inliner()
    listener = _Listener()
    event.register("numba:run_pass", listener)
    event.register("numba:compile", listener)
    C = codegen.CPUCodeLibrary
    _timed(C, "_optimize_functions", "LLVM function passes")
    _timed(C, "add_ir_module", "IR text -> LLVM (parse)")
    _timed(codegen.JITCodeLibrary, "_finalize_specific", "machine code")
    _timed(C, "finalize", "link/verify")
    original = C._optimize_final_module

    def optimize_final(self):
        nlinked = len(set(self._linking_libraries))
        _push("LLVM module passes")
        try:
            return original(self)
        finally:
            seconds = _pop()
            nfuncs = sum(1 for f in self._final_module.functions if not f.is_declaration)
            modules.append((self.name, seconds, nfuncs, nlinked))
            entry_llvm[_is_entry(self.name), "module passes"] += seconds
    C._optimize_final_module = optimize_final
    finalize = codegen.JITCodeLibrary._finalize_specific

    def machine_code(self):
        t = time.perf_counter()
        try:
            return finalize(self)
        finally:
            entry_llvm[_is_entry(self.name), "machine code"] += time.perf_counter() - t
    codegen.JITCodeLibrary._finalize_specific = machine_code
    from numba.core import lowering
    _timed(lowering.Lower, "create_cpython_wrapper", "cpython wrapper (IR)")
    _timed(caching.Cache, "save_overload", "cache save")
    _timed(caching.Cache, "load_overload", "cache load")


ORDER = ["front end", "type inference", "lowering (IR)", "cpython wrapper (IR)", "IR text -> LLVM (parse)",
         "LLVM function passes", "LLVM module passes", "link/verify", "machine code", "cache load", "cache save",
         "compile (other)", "python"]


def report(label, wall, cpu=0.0):
    parts = " ".join(f"{k}={totals[k]:.2f}" for k in ORDER if totals[k] > 0.005)
    print(f"{label}: wall {wall:.2f} s cpu {cpu:.2f} s | {parts} | {len(compiled)} compiles, "
          f"{len(modules)} module opts")


def overheads():
    """The three figures of the module docstring, over every compile so far."""
    inline = sum(inlined.values())
    print(f"numba's inliner (inline=\"always\" callees: their untyped passes and IR copies): {inline:.1f} s; "
          "largest: " + ", ".join(f"{k} {v:.1f}" for k, v in inlined.most_common(5)))
    for phase in ("module passes", "machine code"):
        print(f"LLVM {phase}: C entries' libraries {entry_llvm[True, phase]:.1f} s, helpers' own "
              f"{entry_llvm[False, phase]:.1f} s")
    signatures = defaultdict(set)
    for name, args in all_compiled + compiled:
        signatures[name].add(str(args))
    several = {name: len(s) for name, s in signatures.items() if len(s) > 1}
    print(f"functions compiled for more than one signature: {len(several)}, {sum(several.values())} compiles: "
          + ", ".join(f"{k} x{n}" for k, n in sorted(several.items(), key=lambda kv: -kv[1])[:12]))


def main(names, detail=True):
    w0, c0 = time.perf_counter(), time.process_time()
    install()
    import robot_dynamics as rd
    from robot_dynamics.bundled import bundled_urdf
    from robot_dynamics.precompile import compile_order, run_method_or_controller
    names = compile_order() if names == ["--all"] else names
    t0 = time.perf_counter()
    _push("python")
    rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)
    _pop()
    report("load_urdf", time.perf_counter() - t0)
    for name in names:
        totals.clear()
        passes.clear()
        functions.clear()
        all_compiled.extend(compiled)
        del compiled[:], modules[:]
        t0, c1 = time.perf_counter(), time.process_time()
        _push("python")
        run_method_or_controller(name)
        _pop()
        report(name, time.perf_counter() - t0, time.process_time() - c1)
        if detail:
            per = defaultdict(lambda: [0, 0.0, 0, 0])
            for lib, seconds, nf, nl in modules:
                p = per[lib]
                p[0] += 1
                p[1] += seconds
                p[2], p[3] = max(p[2], nf), max(p[3], nl)
            for lib, (n, s, nf, nl) in sorted(per.items(), key=lambda kv: -kv[1][1])[:12]:
                print(f"    module passes {s:6.2f} s  x{n}  {nf:3d} functions, {nl:2d} linked libs  {lib[:90]}")
            print("    slowest passes: " + ", ".join(f"{k} {v:.2f}" for k, v in passes.most_common(8)))
            print("    slowest functions: " + ", ".join(f"{k} {v:.2f}" for k, v in functions.most_common(10)))
            print("    compiled: " + ", ".join(sorted(Counter(n for n, _ in compiled).elements()))[:1500])
    if "--signatures" in sys.argv:
        for n, a in all_compiled:
            print(f"  SIG {n}{tuple(str(t)[:80] for t in a)}")
    overheads()
    print(f"TOTAL wall {time.perf_counter() - w0:.1f} s cpu {time.process_time() - c0:.1f} s")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(["--all"] if "--all" in args else [a for a in args if not a.startswith("-")], detail="--brief" not in args)
