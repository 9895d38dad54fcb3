"""A controller's tick in one compiled call: the robot's kernels called from it, and ComputedTorque's tick.

The robot's quantities are reached through their C entry points (compiled.fast_kernel: the kernel within its
result checks), called by address from the tick (`call_entry`), as the batch loop calls them: no quantity's code
is compiled into the tick, so the tick is cached by numba against its own sources only, and a kernel changed
elsewhere is never run stale.  A `Plan` is what those calls need, made once per controller: an int64 table holding
the body records' and workspace's addresses, each call's entry and the addresses and shapes of its arrays -- the
robot's own (per-robot arrays, gravity, the frame's array) and the controller's buffers, into which the tick copies
q and v first.  The tick itself is called with its arrays in C (_fastcall.Entry, as the robot's rows are: ~0.03
us an array), or without the extension through its compiled overload.
"""
import numpy as np
from llvmlite import ir
from numba import carray, cfunc, njit, types
from numba.extending import intrinsic

from ..algorithms.frames import frame_array
from ..algorithms.workspace import ARRAYS, workspace
from ..compiled import FAST_CALLS, compiled, fast_kernel, signature
from ..dispatch import ROWS, kernel_types
from ..drives import COULOMB_VELOCITY

if FAST_CALLS:
    from .._fastcall import Entry

HEADER, ENTRIES = 0, 1          # the plan's rows: counts and addresses, the calls' entries, then two rows a call
# the header's columns: how many calls, the addresses of the body records and workspace, then the tick's integers
CALLS, BODIES, WORK, USER = 0, 1, 2, 3
OVERLAP = -1                    # the tick's status when out overlaps an input (_fastcall.Entry's check)


@intrinsic
def call_entry(typingctx, address, bodies, work, pointers, dims):
    """address(bodies, work, pointers, dims) -> int64, each argument an integer address: a C entry point of
    compiled.fast_kernel's signature, called by its address."""
    def codegen(context, builder, sig, args):
        void_p = ir.IntType(8).as_pointer()
        function = ir.FunctionType(ir.IntType(64), [void_p] * 4).as_pointer()
        target = builder.inttoptr(args[0], function)
        return builder.call(target, [builder.inttoptr(x, void_p) for x in args[1:]])
    return types.int64(address, bodies, work, pointers, dims), codegen


@njit(cache=True)
def robot_calls(plan):
    """Every call of the plan in order (Plan); KERNEL-relative: -1 when all succeed, else the index of the first
    whose status is not 0."""
    for c in range(plan[HEADER, CALLS]):
        status = call_entry(plan[ENTRIES, c], plan[HEADER, BODIES], plan[HEADER, WORK],
                            plan[2 + 2 * c].ctypes.data, plan[3 + 2 * c].ctypes.data)
        if status != 0:
            return c
    return -1


def frame_input(model, frame, reference):
    """The frames.FRAME_SIZE array of the frame of index `frame` (model.frames' order) in `reference`: a frame
    row's constant input."""
    f = list(model.frames.values())[frame]
    return frame_array(f.body, reference, f.R, f.p)


def plan(model, calls, header):
    """(table, arrays): the int64 table (2 + 2 len(calls), width) of `calls`, each (row name, inputs, outputs) --
    the row's kernel called on the model's body records, a workspace and the row's per-robot arrays (made here, as
    dispatch.Engine makes them), then these (C-contiguous arrays the caller keeps alive, in the row's order; a
    frame_input among the inputs) -- and the arrays the table points into besides those, for the caller to keep.
    header: up to 5 integers the tick reads (table[HEADER, USER:]); the header's CALLS is the number of calls,
    BODIES and WORK the addresses of the body records and workspace."""
    bodies, work, gravity = model.bodies.copy(), workspace(model.nbodies), np.array(model.gravity, dtype=float)
    kept, rows = [bodies, work, gravity], []
    for name, inputs, outputs in calls:
        row = ROWS[name]
        fixed = tuple(ARRAYS[x](model) for x in row.arrays) + ((gravity,) if row.gravity else ())
        kept += fixed
        arrays = fixed + tuple(inputs) + tuple(outputs)
        assert len(arrays) == len(kernel_types(name)) - 2 and all(x.flags.c_contiguous for x in arrays), name
        rows.append([x.__array_interface__["data"][0] for x in arrays])
        rows.append([model.nbodies] + [d for x in arrays for d in x.shape])
    table = np.zeros((2 + len(rows), max(8, max(len(r) for r in rows))), dtype=np.int64)
    table[HEADER, USER:USER + len(header)] = header
    table[HEADER, CALLS] = len(calls)
    table[HEADER, BODIES] = bodies.__array_interface__["data"][0]
    table[HEADER, WORK] = work.__array_interface__["data"][0]
    table[ENTRIES, :len(calls)] = [fast_kernel(name, kernel_types(name)) for name, _, _ in calls]
    for i, r in enumerate(rows):
        table[2 + i, :len(r)] = r
    return table, tuple(kept)


_CFUNC = types.int64(types.voidptr, types.voidptr, types.CPointer(types.voidptr), types.CPointer(types.int64))
_cfuncs = {}


def tick_entry(tick, entry, example, n_inputs):
    """A callable tick(bodies, work, plan, data, *inputs, out) -> status, with the arrays of `example` (without
    bodies and work: the int64 plan, data, the inputs and out): in C through _fastcall.Entry calling `entry` (the
    tick's cfunc body: its arrays rebuilt from pointers and shapes), its status OVERLAP when out overlaps an
    input; without the extension, the tick's compiled overload (bodies and work ignored: the plan holds their
    addresses)."""
    if not FAST_CALLS:
        function = compiled(tick, signature(*example))
        return lambda bodies, work, *args: function(*args)
    if entry not in _cfuncs:
        _cfuncs[entry] = cfunc(_CFUNC, cache=True)(entry)
    return Entry(_cfuncs[entry].address, (1, 1) + tuple(x.ndim for x in example), n_inputs, 1, OVERLAP)


# ---- ComputedTorque's tick ----------------------------------------------------------------------------------------
OK, BAD = 0, 1             # ct_tick's status; BAD + j: argument j (q, v, q_d, v_d, a_d) is not finite
KERNEL, OVERFLOW = 6, 7    # ct_tick's status: inverse_dynamics refused the state; the torque is not finite


@njit(cache=True)
def ct_views(data, nv, nq):
    """data's parts (ct_size): q (nq,), v, e, a_cmd, tau_id, tau_drive (nv,), K_p, K_d, Lam (nv, nv), drive (4, nv)
    (command's arguments; the inverse dynamics reads q, v, a_cmd and writes tau_id)."""
    q, o = data[:nq], nq
    v, e, a_cmd = data[o:o + nv], data[o + nv:o + 2 * nv], data[o + 2 * nv:o + 3 * nv]
    tau_id, tau_drive = data[o + 3 * nv:o + 4 * nv], data[o + 4 * nv:o + 5 * nv]
    o += 5 * nv
    m = nv * nv
    K_p, K_d, Lam = data[o:o + m].reshape(nv, nv), data[o + m:o + 2 * m].reshape(nv, nv), \
        data[o + 2 * m:o + 3 * m].reshape(nv, nv)
    o += 3 * m
    return q, v, e, a_cmd, tau_id, tau_drive, K_p, K_d, Lam, data[o:o + 4 * nv].reshape(4, nv)


def ct_size(nv, nq):
    """The length of ct_views' data."""
    return nq + 5 * nv + 3 * nv * nv + 4 * nv


@njit(cache=True)
def command(q, v, q_d, v_d, a_d, K_p, K_d, Lam, drive, subtract, e, a_cmd, tau_drive):
    """a_cmd = a_d + K_d (v_d - v) + K_p e and the drives' torque tau_drive (computed_torque.py's module docstring),
    OK; or BAD + j for a non-finite argument j, writing nothing.  subtract: e = q_d - q (else e holds it); drive
    (4, nv): rows D (at v_r), D_bar (at the measured v), D (at v_d), F (at v_d, width COULOMB_VELOCITY), all zero
    when the drives are left out."""
    for j, x in enumerate((q, v, q_d, v_d, a_d)):
        for i in range(x.shape[0]):
            if not np.isfinite(x[i]):
                return BAD + j
    n = v.shape[0]
    if subtract:
        for i in range(n):
            e[i] = q_d[i] - q[i]
    for i in range(n):
        x = a_d[i]
        for j in range(n):
            x += K_d[i, j] * (v_d[j] - v[j]) + K_p[i, j] * e[j]
        a_cmd[i] = x
    for i in range(n):
        v_r = v_d[i]
        for j in range(n):
            v_r += Lam[i, j] * e[j]                                      # v_r = v_d + Lambda e
        tau_drive[i] = (drive[0, i] * (v_r - v_d[i]) + drive[1, i] * (v[i] - v_r) + drive[2, i] * v_d[i]
                        + drive[3, i] * np.tanh(v_d[i] / COULOMB_VELOCITY))
    return OK


@njit(cache=True)
def ct_tick(plan, data, q, v, q_d, v_d, a_d, tau):
    """tau = ID(q, v, a_cmd) + tau_drive (command), plan: inverse_dynamics from data's q, v, a_cmd into its tau_id,
    plan[HEADER, USER:] = nv, nq, subtract (e = q_d - q, else data's e holds q_d (-) q).  Returns OK, BAD + j (nothing
    written), KERNEL or OVERFLOW."""
    nv, nq = plan[HEADER, USER], plan[HEADER, USER + 1]
    q_b, v_b, e, a_cmd, tau_id, tau_drive, K_p, K_d, Lam, drive = ct_views(data, nv, nq)
    status = command(q, v, q_d, v_d, a_d, K_p, K_d, Lam, drive, plan[HEADER, USER + 2] != 0, e, a_cmd, tau_drive)
    if status != OK:
        return status
    q_b[:] = q
    v_b[:] = v
    if robot_calls(plan) >= 0:
        return KERNEL
    finite = True
    for i in range(nv):
        tau[i] = tau_id[i] + tau_drive[i]
        finite &= np.isfinite(tau[i])
    return OK if finite else OVERFLOW


def ct_entry(bodies, work, p, d):
    """ct_tick on the arrays of _fastcall.Entry's pointers p and shapes d (tick_entry)."""
    return ct_tick(carray(p[0], (d[1], d[2]), dtype=types.int64), carray(p[1], (d[3],), dtype=types.float64),
                   carray(p[2], (d[4],), dtype=types.float64), carray(p[3], (d[5],), dtype=types.float64),
                   carray(p[4], (d[6],), dtype=types.float64), carray(p[5], (d[7],), dtype=types.float64),
                   carray(p[6], (d[8],), dtype=types.float64), carray(p[7], (d[9],), dtype=types.float64))
