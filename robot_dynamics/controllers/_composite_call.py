"""CompositeSlotineLi.update in one call from C (_ct_tick.tick_entry): the robot's kernels (the regressor, the
momentum regressor, M(q; pi_ref), M(q; pi_0), and where the gains need it M(q; pi_hat)) by their C entry points
through _ct_tick plans, q_d (-) q
(_ct_tick.space_difference), the gains (_composite_tick.gains), the sliding variables, the drives' terms, then the law
(_composite_tick.tick), on the controller's buffers: the constants, the calls' inputs and outputs and the work array
one data array (``cs_views``), packed at construction.  Nothing Python runs between, and nothing is allocated.
"""
import numpy as np
from numba import carray, njit, types

from ..dense import copy_vector
from ._composite_tick import (CAPPED, HOLD, LIMITED, NEEDS_ESTIMATE, OK, START, STEP, cut, drive_terms, gains,
                              shaped, state_size, state_views, tick, work_size)
from ._ct_tick import BODIES, HEADER, PYTHON, SHAPE, USER, address_pointer, robot_call, space_difference
from ._slotine_tick import not_finite, sliding_vectors

# cs_tick's control entries (cs_views): dt, which state copy is current, whether the filters started, the mode
# (cs_tick's), the filter's lambda, rho, beta, Lambda's spectral radius
DT, CURRENT, STARTED, MODE, LAM, RHO, BETA, RADIUS = range(8)
CONTROL = 8
SLIDING, GIVEN = 1, 2           # cs_tick's modes: stop after the regressors; f_v and d given (a friction model's)
RIGID, COMPILED, MODEL = 0, 1, 2      # the drives: none, viscous and Coulomb (drive_terms), a friction model's (MODE)
FLAG_CAPPED = 2                 # cs_tick's status: LIMITED + FLAG_CAPPED when the gains were capped
# cs_tick's refusals, REFUSED + one of: 1-5 (the input of that index not finite: _slotine_tick.not_finite),
# NOT_FINITE_RESULT (6: the sliding variables), BAD_QUATERNION, BAD_KERNEL (a robot kernel refused the state),
# TICK_STATUS + tick's NOT_FINITE, NOT_POSITIVE or NOT_FINITE_SYSTEM
REFUSED, BAD_QUATERNION, BAD_KERNEL, TICK_STATUS = 16, 7, 8, 10
ROBOT, REFERENCE, INITIAL, ADAPTED, ESTIMATE = range(5)    # cs_tick's plans (ADAPTED: the adapted indices' row)


@njit(cache=True)
def cs_views(data, nv, nq, nb, m):
    """data's parts (cs_size): control (CONTROL,); Lambda (nv, nv), kd (nv,), Omega_0 (p, p), mu (nb,), S, S_inv
    (nb, 4, 4), drive (3, nv) (armature, damping, Coulomb level): the constants; q (nq,), v (nv,)
    (the robot calls' inputs), vectors (5, nv) (e, e_dot, v_r, a_r, s), Lambda_t (nv, nv), kd_t (nv,) (this tick's
    gains), M_ref, M_0 (nv, nv), estimate, f_v, d (nv,), Y, Y_p, Y_h (nv, p), M_hat (nv, nv) (the calls' outputs)
    and work (work_size)."""
    p, sizes = 10 * nb, cs_sizes(nv, nq, nb, m)
    control, o = cut(data, 0, sizes[0])
    Lambda, o = cut(data, o, sizes[1])
    kd, o = cut(data, o, sizes[2])
    Omega_0, o = cut(data, o, sizes[3])
    mu, o = cut(data, o, sizes[4])
    S, o = cut(data, o, sizes[5])
    S_inv, o = cut(data, o, sizes[6])
    drive, o = cut(data, o, sizes[7])
    q, o = cut(data, o, sizes[8])
    v, o = cut(data, o, sizes[9])
    vectors, o = cut(data, o, sizes[10])
    Lambda_t, o = cut(data, o, sizes[11])
    kd_t, o = cut(data, o, sizes[12])
    M_ref, o = cut(data, o, sizes[13])
    M_0, o = cut(data, o, sizes[14])
    estimate, o = cut(data, o, sizes[15])
    f_v, o = cut(data, o, sizes[16])
    d, o = cut(data, o, sizes[17])
    Y, o = cut(data, o, sizes[18])
    Y_p, o = cut(data, o, sizes[19])
    Y_h, o = cut(data, o, sizes[20])
    M_hat, o = cut(data, o, sizes[21])
    work = data[o:o + sizes[22]]
    return (control, shaped(Lambda, (nv, nv)), kd, shaped(Omega_0, (p, p)), mu, shaped(S, (nb, 4, 4)),
            shaped(S_inv, (nb, 4, 4)), shaped(drive, (3, nv)), q, v, shaped(vectors, (5, nv)),
            shaped(Lambda_t, (nv, nv)), kd_t, shaped(M_ref, (nv, nv)), shaped(M_0, (nv, nv)), estimate, f_v, d,
            shaped(Y, (nv, p)), shaped(Y_p, (nv, p)), shaped(Y_h, (nv, p)), shaped(M_hat, (nv, nv)), work)


@njit(cache=True)
def cs_sizes(nv, nq, nb, m):
    """The lengths of cs_views' parts, in order."""
    p, n = 10 * nb, nv * nv
    return (CONTROL, n, nv, p * p, nb, 16 * nb, 16 * nb, 3 * nv, nq, nv, 5 * nv, n, nv, n, n, nv, nv, nv,
            nv * p, nv * p, nv * p, n, work_size(nv, p, m))


def cs_size(nv, nq, nb, m):
    """The length of cs_views' data."""
    return sum(cs_sizes.py_func(nv, nq, nb, m))


@njit(cache=True, inline="always")
def tick_gains(plans, control, Lambda, kd, M_ref, M_0, estimate, M_hat, pi_hat, Lambda_t, kd_t):
    """M(q; pi_ref) and (dt > 0) M(q; pi_0) by the plans' calls, then this tick's gains (gains), with diag M(q; pi_hat)
    (armature included) by the ESTIMATE plan's call where they need it (write_parameters).  Returns gains' flags, or
    -1 when a kernel refused the state."""
    dt = control[DT]
    if robot_call(plans[REFERENCE], 0) != 0 or (dt > 0 and robot_call(plans[INITIAL], 0) != 0):
        return -1
    estimate[0] = -1.0
    flags = gains(Lambda, control[RADIUS], kd, dt, M_ref, M_0, estimate, Lambda_t, kd_t)
    if flags != NEEDS_ESTIMATE:
        return flags
    write_parameters(plans[ESTIMATE], pi_hat)
    if robot_call(plans[ESTIMATE], 0) != 0:
        return -1
    for j in range(estimate.shape[0]):
        estimate[j] = M_hat[j, j]
    return gains(Lambda, control[RADIUS], kd, dt, M_ref, M_0, estimate, Lambda_t, kd_t)


@njit(cache=True)
def write_parameters(plan, pi_hat):
    """The inertial parameters of the plan's body records (model.BODY's pi, per body) <- pi_hat (10 nb,): the records
    viewed as float64 at the plan's BODIES address, each its header's USER entry long, pi at the next entry's
    offset (record_layout).  Only M(q; pi)'s kernel reads these records: it reads pi alone (algorithms/matrices)."""
    stride, offset = plan[HEADER, USER], plan[HEADER, USER + 1]
    nb = pi_hat.shape[0] // 10
    records = carray(address_pointer(plan[HEADER, BODIES]), (nb * stride,), dtype=np.float64)
    for k in range(nb):
        copy_vector(records[k * stride + offset:k * stride + offset + 10], pi_hat[10 * k:10 * k + 10])


def record_layout(dtype):
    """(stride, offset) of write_parameters: a body record's length and its pi's offset, in float64 entries."""
    offset = dtype.fields["pi"][1]
    assert dtype.itemsize % 8 == 0 and offset % 8 == 0, "body records not in whole float64 entries"
    return dtype.itemsize // 8, offset // 8


@njit(cache=True, inline="always")
def cs_tick(plans, data, states, q, v, q_d, v_d, a_d, tau):
    """CompositeSlotineLi.update on buffers: e = q_d (-) q (_ct_tick.space_difference; data's e as given with
    PYTHON), the gains (tick_gains), the sliding variables, Y(q, v, v_r, a_r) and Y_p, Y_h(q, v) by the plans' calls,
    the drives' terms, then tick (START, STEP or HOLD from the control's STARTED and dt), tau <- the new torque, and
    the new state taken (current <- 1 - current).  plans (5, rows, width): the robot's plan (_ct_tick.plan: the
    regressor, the momentum regressor; its header's USER entries nv, nq, nb, how e is taken, the law, m, the drives
    (RIGID, COMPILED or MODEL)), M(q; pi_ref)'s and M(q; pi_0)'s plans, the adapted parameters' indices
    (plans[ADAPTED, 0, :m]) and M(q; pi_hat)'s plan (on its own body records: write_parameters); data: cs_views;
    states (2, state_size).  With the mode
    SLIDING it stops after the regressors (the caller computes a friction model's f_v and d, then ticks with GIVEN).

    Returns LIMITED (the step was bounded) + FLAG_CAPPED (the gains were capped), or SHAPE or REFUSED + the reason
    (nothing taken)."""
    plan = plans[ROBOT]
    nv, nq, nb, mode_e = plan[HEADER, USER], plan[HEADER, USER + 1], plan[HEADER, USER + 2], plan[HEADER, USER + 3]
    law, m, drives = plan[HEADER, USER + 4], plan[HEADER, USER + 5], plan[HEADER, USER + 6]
    p = 10 * nb
    if q.shape[0] != nq or q_d.shape[0] != nq or v.shape[0] != nv or v_d.shape[0] != nv or a_d.shape[0] != nv \
            or tau.shape[0] != nv or states.shape[0] != 2 or states.shape[1] != state_size(nv, p):
        return SHAPE
    (control, Lambda, kd, Omega_0, mu, S, S_inv, drive, q_b, v_b, vectors, Lambda_t, kd_t, M_ref, M_0,
     estimate, f_v, d, Y, Y_p, Y_h, M_hat, work) = cs_views(data, nv, nq, nb, m)
    status = not_finite(q, v, q_d, v_d, a_d)                      # before the difference, which divides by q's
    if status:
        return REFUSED + status
    if mode_e != PYTHON and space_difference(plan, q, q_d, vectors[0]) >= 0:
        return REFUSED + BAD_QUATERNION
    copy_vector(q_b, q)
    copy_vector(v_b, v)
    dt, current = control[DT], int(control[CURRENT])
    pi_hat = state_views(states[current], nv, p)[2]
    flags = tick_gains(plans, control, Lambda, kd, M_ref, M_0, estimate, M_hat, pi_hat, Lambda_t, kd_t)
    if flags < 0:
        return REFUSED + BAD_KERNEL
    status = sliding_vectors(v, v_d, a_d, Lambda_t, vectors)
    if status:
        return REFUSED + status
    mode = START if control[STARTED] == 0 else (STEP if dt > 0 else HOLD)
    if robot_call(plan, 0) != 0 or (mode != HOLD and robot_call(plan, 1) != 0):
        return REFUSED + BAD_KERNEL
    if control[MODE] == SLIDING:
        return OK
    if drives == COMPILED:
        drive_terms(v, vectors[2], vectors[3], drive[0], drive[1], drive[2], f_v, d)
    lam, a, b, c, decay = control[LAM], 0.0, 0.0, 0.0, 1.0
    if mode == STEP:                                    # MomentumFilter.weights, exp(-beta dt)
        a, b = np.exp(-lam * dt), -np.expm1(-lam * dt)
        c, decay = 1.0 - b / (lam * dt), np.exp(-control[BETA] * dt)
    status = tick(mode, law, current, states, work, Y, Y_p, Y_h, M_ref, vectors[4], kd_t, v, f_v, d, a, b, c, lam,
                  drive[0], control[RHO], decay, Omega_0, mu, plans[ADAPTED, 0, :m], S, S_inv, dt)
    if status != OK and status != LIMITED:
        return REFUSED + TICK_STATUS + status
    copy_vector(tau, state_views(states[1 - current], nv, p)[4])
    control[CURRENT], control[STARTED] = 1 - current, 1.0
    return status + (FLAG_CAPPED if flags & CAPPED else 0)


def cs_entry(bodies, work, p, d):
    """cs_tick on the arrays of _fastcall.Entry's pointers p and shapes d (_ct_tick.tick_entry)."""
    f8 = types.float64
    return cs_tick(carray(p[0], (d[1], d[2], d[3]), dtype=types.int64), carray(p[1], (d[4],), dtype=f8),
                   carray(p[2], (d[5], d[6]), dtype=f8), carray(p[3], (d[7],), dtype=f8),
                   carray(p[4], (d[8],), dtype=f8), carray(p[5], (d[9],), dtype=f8), carray(p[6], (d[10],), dtype=f8),
                   carray(p[7], (d[11],), dtype=f8), carray(p[8], (d[12],), dtype=f8))
