"""A controller's tick in one compiled call: the robot's kernels called from it, and ComputedTorque's tick.

The robot's quantities are reached through their C entry points (generated.fast_kernel: the kernel within its
result checks), called by address from the tick (`call_entry`), as the batch loop calls them: no quantity's code
is compiled into the tick, so the tick is cached by numba against its own sources only, and a kernel changed
elsewhere is never run stale.  A `Plan` is what those calls need, made once per controller: an int64 table holding
the body records' and workspace's addresses, each call's entry and the addresses and shapes of its arrays -- the
robot's own (per-robot arrays, gravity, the frame's array) and the controller's buffers, into which the tick copies
q and v first.  The tick itself is called with its arrays in C (_fastcall.Entry, as the robot's rows are: ~0.03
us an array), or without the extension through its compiled overload.
"""
import numba
import numpy as np
from llvmlite import ir
from numba import carray, cfunc, njit, types
from numba.extending import intrinsic

from ..algorithms.frames import frame_array
from ..algorithms.workspace import ARRAYS, workspace
from ..calls.cache import cached_in
from ..calls.compiling import compiled, loop_strength_reduction, signature
from ..calls.generated import fast_kernel
from ..calls.kernels import ROWS, kernel_types
from ..calls.native import FAST_CALLS, overlapping
from ..configuration import lie_difference
from ..dense import copy_vector
from ..drives import COULOMB_VELOCITY

if FAST_CALLS:
    from ..calls._fastcall import Entry

HEADER, ENTRIES = 0, 1          # the plan's rows: counts and addresses, the calls' entries, then two rows a call
# the header's columns: how many calls, the addresses of the body records and workspace, how many scalar, free and
# ball joints the space's rows hold (space_difference), then the tick's integers
CALLS, BODIES, WORK, SCALARS, FREES, BALLS, USER = range(7)
SUBTRACT, TICK, PYTHON = range(3)   # how a tick takes q1 (-) q0: q1 - q0, space_difference, or given (planar joints)
OVERLAP = -1                    # the tick's status when out overlaps an input (_fastcall.Entry's check)
SHAPE = -2                      # a tick's status when an input or out has another shape than the tick's


@intrinsic
def call_entry(typingctx, address, bodies, work, pointers, dims):
    """address(bodies, work, pointers, dims) -> int64, each argument an integer address: a C entry point of
    generated.fast_kernel's signature, called by its address."""
    def codegen(context, builder, sig, args):
        void_p = ir.IntType(8).as_pointer()
        function = ir.FunctionType(ir.IntType(64), [void_p] * 4).as_pointer()
        target = builder.inttoptr(args[0], function)
        return builder.call(target, [builder.inttoptr(x, void_p) for x in args[1:]])
    return types.int64(address, bodies, work, pointers, dims), codegen


@intrinsic
def address_pointer(typingctx, address):
    """The integer address as a void pointer: numba.carray's first argument, to view memory a plan points into."""
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], ir.IntType(8).as_pointer())
    return types.voidptr(address), codegen


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


@njit(cache=True)
def robot_call(plan, c):
    """The plan's call c alone (robot_calls' c-th): its status, 0 when it succeeds."""
    return call_entry(plan[ENTRIES, c], plan[HEADER, BODIES], plan[HEADER, WORK], plan[2 + 2 * c].ctypes.data,
                      plan[3 + 2 * c].ctypes.data)


def frame_input(model, frame, reference):
    """The frames.FRAME_SIZE array of the frame of index `frame` (model.frames' order) in `reference`: a frame
    row's constant input."""
    f = list(model.frames.values())[frame]
    return frame_array(f.body, reference, f.R, f.p)


def difference_mode(space):
    """How a tick takes q1 (-) q0 on the ConfigurationSpace `space`: SUBTRACT, TICK or PYTHON (planar joints)."""
    return PYTHON if space.planar else TICK if space.lie else SUBTRACT


@njit(cache=True)
def space_difference(plan, q0, q1, out):
    """out = q1 (-) q0 (ConfigurationSpace.difference without planar joints) from the plan's space rows: -1, or
    the code of the first zero quaternion (configuration.lie_difference's)."""
    row = 2 + 2 * plan[HEADER, CALLS]
    n_s, n_f, n_b = plan[HEADER, SCALARS], plan[HEADER, FREES], plan[HEADER, BALLS]
    for i in range(n_s):
        out[plan[row + 1, i]] = q1[plan[row, i]] - q0[plan[row, i]]
    return lie_difference(q0, q1, plan[row + 2, :n_f], plan[row + 3, :n_f], plan[row + 4, :n_b],
                          plan[row + 5, :n_b], out)


def plan(model, calls, header, space):
    """(table, arrays): the int64 table (2 + 2 len(calls), width) of `calls`, each (row name, inputs, outputs) --
    the row's kernel called on the model's body records, a workspace and the row's per-robot arrays (made here, as
    calls.engine.Engine makes them), then these (C-contiguous arrays the caller keeps alive, in the row's order; a
    frame_input among the inputs), then the index rows of the ConfigurationSpace `space` (space_difference) -- and
    the arrays the table points into besides those, for the caller to keep.  header: the integers the tick reads
    (table[HEADER, USER:]); the header's CALLS is the number of calls, BODIES and WORK the addresses of the body
    records and workspace, SCALARS, FREES, BALLS the lengths of the space's rows."""
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
    rows += [space.scalar_q, space.scalar_v, space.free_q, space.free_v, space.ball_q, space.ball_v]
    table = np.zeros((2 + len(rows), max(USER + len(header), max(len(r) for r in rows))), dtype=np.int64)
    table[HEADER, USER:USER + len(header)] = header
    table[HEADER, CALLS] = len(calls)
    table[HEADER, SCALARS:BALLS + 1] = len(space.scalar_q), len(space.free_q), len(space.ball_q)
    table[HEADER, BODIES] = bodies.__array_interface__["data"][0]
    table[HEADER, WORK] = work.__array_interface__["data"][0]
    table[ENTRIES, :len(calls)] = [fast_kernel(name, kernel_types(name)) for name, _, _ in calls]
    for i, r in enumerate(rows):
        table[2 + i, :len(r)] = r
    return table, tuple(kept)


_CFUNC = types.int64(types.voidptr, types.voidptr, types.CPointer(types.voidptr), types.CPointer(types.int64))
_cfuncs = {}
_CACHE = numba.config.CACHE_DIR     # where this module was imported to be cached (controllers/__init__'s kernel_cache)


def tick_entry(tick, entry, example, n_inputs):
    """A callable tick(bodies, work, plan, data, *inputs, out) -> status, with the arrays of `example` (without
    bodies and work: the int64 plan, data, the inputs and out): in C through _fastcall.Entry calling `entry` (the
    tick's cfunc body: its arrays rebuilt from pointers and shapes), its status OVERLAP when out overlaps an
    input; a TypeError for an argument that is not a C-contiguous array of example's dtype and ndim (the tick
    checks the shapes: SHAPE).  Without the extension, the tick's compiled overload after the same checks (bodies
    and work ignored: the plan holds their addresses).  A tick (ct_tick, sl_tick, osc_tick, cs_tick) is declared
    inline="always": numba types and lowers it inside its entry, once, where it would otherwise compile it alone
    and then link, optimise and generate its machine code again inside the entry (-1.5 to -4 s of CPU each at a
    cold `robot-dynamics compile`, the same machine code)."""
    if not FAST_CALLS:
        function = compiled(tick, signature(*example))

        def call(bodies, work, *args):
            if not all([type(x) is np.ndarray and x.dtype == y.dtype and x.ndim == y.ndim and x.flags.c_contiguous
                        for x, y in zip(args, example)]):
                raise TypeError(f"{tick.__name__} takes C-contiguous arrays of its dtypes and ndims")
            return OVERLAP if overlapping(args[2:-1], args[-1:]) else function(*args)
        return call
    return Entry(entry_address(entry), (1, 1) + tuple(x.ndim for x in example), n_inputs, 1, OVERLAP)


def entry_address(entry):
    """The address of `entry`'s cfunc (tick_entry), compiled or loaded from the cache at its first use in a process:
    it needs no robot, so a first run can build it in one worker while another compiles the robot's kernels."""
    if entry not in _cfuncs:
        with cached_in(_CACHE), loop_strength_reduction(False):     # (_CACHE: beside the ticks, never stale)
            _cfuncs[entry] = cfunc(_CFUNC, cache=True)(entry)
    return _cfuncs[entry].address


# ---- ComputedTorque's tick ----------------------------------------------------------------------------------------
OK, BAD = 0, 1             # ct_tick's status; BAD + j: argument j (q, v, q_d, v_d, a_d) is not finite
# ct_tick's status: inverse_dynamics refused the state; the torque is not finite; a zero quaternion in q or q_d
KERNEL, OVERFLOW, QUATERNION = 6, 7, 8


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
def finite_status(arrays):
    """OK, or BAD + j for the first of the 1-D arrays that holds a NaN or inf."""
    for j, x in enumerate(arrays):
        for i in range(x.shape[0]):
            if not np.isfinite(x[i]):
                return BAD + j
    return OK


@njit(cache=True)
def coulomb(level, v, width):
    """level tanh(v / width): the smoothed Coulomb friction of one joint, without the tanh (~30 ns) at level 0."""
    return level * np.tanh(v / width) if level != 0.0 else 0.0


@njit(cache=True)
def command(q, v, q_d, v_d, a_d, K_p, K_d, Lam, drive, subtract, e, a_cmd, tau_drive):
    """a_cmd = a_d + K_d (v_d - v) + K_p e and the drives' torque tau_drive (computed_torque.py's module docstring).
    subtract: e = q_d - q (else e holds it); drive (4, nv): rows D (at v_r), D_bar (at the measured v), D (at v_d),
    F (at v_d, width COULOMB_VELOCITY), all zero when the drives are left out."""
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
                        + coulomb(drive[3, i], v_d[i], COULOMB_VELOCITY))


@njit(cache=True, inline="always")
def ct_tick(plan, data, q, v, q_d, v_d, a_d, tau):
    """tau = ID(q, v, a_cmd) + tau_drive (command), plan: inverse_dynamics from data's q, v, a_cmd into its tau_id,
    plan[HEADER, USER:] = nv, nq, how e = q_d (-) q is taken (SUBTRACT, TICK, or PYTHON: data's e holds it).
    Returns OK, SHAPE, BAD + j or QUATERNION (nothing computed), KERNEL or OVERFLOW."""
    nv, nq, mode = plan[HEADER, USER], plan[HEADER, USER + 1], plan[HEADER, USER + 2]
    if q.shape[0] != nq or q_d.shape[0] != nq or v.shape[0] != nv or v_d.shape[0] != nv or a_d.shape[0] != nv \
            or tau.shape[0] != nv:
        return SHAPE
    q_b, v_b, e, a_cmd, tau_id, tau_drive, K_p, K_d, Lam, drive = ct_views(data, nv, nq)
    status = finite_status((q, v, q_d, v_d, a_d))
    if status != OK:
        return status
    if mode == TICK and space_difference(plan, q, q_d, e) >= 0:
        return QUATERNION
    command(q, v, q_d, v_d, a_d, K_p, K_d, Lam, drive, mode == SUBTRACT, e, a_cmd, tau_drive)
    copy_vector(q_b, q)
    copy_vector(v_b, v)
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
