"""The kernels of compiling.WITHOUT_LSR compile without LLVM's loop strength reduction, and only they: the option
is global to the process, so it must be back on after their compilation.  (What it saves is measured by
benchmarks/compile_phases.py, not here.)
"""
import re
import threading

from numba import njit
from numba import types as nt

from robot_dynamics.calls import compiling
from robot_dynamics.algorithms.registry import QUANTITIES


def probe_assembly():
    """The machine code of a new function (compiled now: never from the cache) with a nested loop whose address
    arithmetic loop strength reduction rewrites, its symbol names and numbers blanked out."""
    @njit
    def probe(a, b, n, k):
        s = 0.0
        for i in range(n):
            for j in range(n):
                s += a[i * k + j] * b[j * k + i]
        return s
    probe.compile((nt.float64[::1], nt.float64[::1], nt.int64, nt.int64))
    text = next(iter(probe.inspect_asm().values()))
    return [re.sub(r"_Z\w+|\.L\w+|\b\d+\b", "#", line.strip()) for line in text.splitlines()
            if line.strip() and not line.strip().startswith((".", "#")) or line.strip().startswith(".L")]


def test_loop_strength_reduction_is_off_inside_the_block_only():
    before = probe_assembly()
    with compiling.loop_strength_reduction(False):
        inside = probe_assembly()
        with compiling.loop_strength_reduction(False):       # a compilation inside another one
            pass
        assert probe_assembly() == inside    # still off: only the outermost block turns it back on
    after = probe_assembly()
    assert inside != before                  # the option took effect: other address arithmetic
    assert after == before                   # and is back on for every later compilation
    with compiling.loop_strength_reduction(True):
        assert probe_assembly() == before


def test_another_thread_compiles_only_once_the_block_is_closed():
    """A row of another thread (LSR on) waits until this thread's block (LSR off) has closed."""
    opened, entered, order = threading.Event(), threading.Event(), []

    def other():
        opened.wait()
        with compiling.loop_strength_reduction(True):
            order.append("other compiles")
            entered.set()

    thread = threading.Thread(target=other)
    thread.start()
    with compiling.loop_strength_reduction(False):
        opened.set()
        assert not entered.wait(0.3)          # held back while LSR is off
        order.append("block closes")
    thread.join(5)
    assert order == ["block closes", "other compiles"]


def test_the_rows_compiled_without_it_are_registry_rows():
    """A misspelt name would silently compile its kernel with the option on."""
    assert compiling.WITHOUT_LSR and compiling.WITHOUT_LSR <= {row.name for row in QUANTITIES}


def test_forced_helpers_leave_no_call_in_their_callers():
    """operators.forced is LLVM's alwaysinline: a function compiled now that calls add_transformed_inertia (the
    ABA's per-body step) in a loop has no call to it left in its machine code, where the same helper compiled
    not to be inlined (optnone) is called.  `inline` helpers say forceinline=False outright, so that a forced
    caller does not pass its flag on to them (operators.py)."""
    from robot_dynamics.algorithms import operators

    def inward_assembly(helper):
        @njit
        def inward(R, p, I, I_p, n):
            for _ in range(n):
                helper(R, p, I, I_p)
        matrix = nt.float64[:, ::1]
        inward.compile((matrix, nt.float64[::1], matrix, matrix, nt.int64))
        return next(iter(inward.inspect_asm().values()))

    def calls(text):
        return re.search(r"(call\w*|movabsq)\s+\$?\w*add_transformed_inertia", text) is not None

    assert calls(inward_assembly(njit(_dbg_optnone=True)(operators.add_transformed_inertia.py_func)))
    assert not calls(inward_assembly(operators.add_transformed_inertia))
    assert operators.add_transformed_inertia.targetoptions["forceinline"] is True
    assert operators.rotate.targetoptions["forceinline"] is False
