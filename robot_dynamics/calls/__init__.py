"""The call machinery: from a Robot method's arguments to its compiled kernel, and back.

A Robot method (robot.py) hands its arguments, positionally and `out` last, to ``self._calls[row]``, `row` the
name of its quantity in the registry (algorithms/registry.py, one Row per quantity: its kernel, inputs, outputs and
checks).  The entry of that row for that robot is made at its first use (methods.Calls) and is one of:

=====================  ============================================  ===========================================
route                  takes                                         how
=====================  ============================================  ===========================================
C Call                 one state of exact float64 vectors, `out`     native.fast_call: checks and allocates in
                       arrays of the row's shapes (no overlap)       C, calls the kernel's C entry point
Method                 a Robot method that only hands over            methods.forwards: the hand-over in C
(quantity) strided     one state of any strides or dtype, lists      quantity.Quantity.compute, through
                                                                     kernels.AnyStrides' C-contiguous stand-ins
(quantity) batch       leading batch dimensions                      Quantity.batched -> engine.Engine.run_batch:
                                                                     batch.batch_loop, in parallel, calling the
                                                                     same C entry point once a state
lean entry             the C Call's cases without the extension      quantity.lean_entry, then Quantity
mimic                  robots with mimic joints                      robot_dynamics/mimic.py, around these
=====================  ============================================  ===========================================

A reader finds the row by the method's name: a Robot method's rows are named after it -- Robot.mass_matrix hands
over to self._calls["mass_matrix"], Robot.dynamics to self._calls["_dynamics"] (or "_dynamics_with_regressor"): the
method's name, or a name holding it after "_" for a part of one (test_fast_calls keeps it so) -- and in
algorithms/registry.py `Row("_dynamics", bundle.dynamics, ...)` names the kernel.  A reading that follows calls stops
at that key by construction: the kernel is the row's, chosen by name when the robot first calls it, and the C Call
reaches it without a line of Python in between.

Every route ends in the row's one C entry point (generated.fast_kernel: the kernel within its result checks), or
without the extension in its checked kernel (generated.checked_kernels), so every route gives the same bits.  A
Quantity validates what the C Call hands over and raises the error naming the culprit (engine.Engine.error).

Where C and Python could do one job twice: the overlap test without the extension is numpy's own (native), the two
generated wrappers share one body (generated), and two twins are kept by hand on purpose, each serving only without
the extension and held to its C side by a test on a table of cases: batch.batch_layout and quantity.lean_entry.

Modules, lowest first: cache (where numba caches the kernels; generated modules), compiling (a kernel compiled for
fixed types; the compiled checks), generated (the sources generated around every kernel), native (the C extension,
_fastcall.c), batch (the batch loop and its layout) -- these the kernels' own package imports -- then checks (the
library's argument validators), kernels (each row's kernel as the routes call it), frames (the frame table), engine
(what one robot's quantities share), quantity (a row's route in Python and its entries) and methods (forwards and
Calls).  This package's __init__ imports nothing, so that algorithms/ can import its lower modules.
"""
