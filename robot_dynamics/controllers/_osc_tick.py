"""OperationalSpace's tick (task_space.py's module docstring) in one compiled call: the robot's kernels called from
it (_ct_tick.robot_calls: the frame's Jacobian, Jdot v and pose, M and h = C v + g = ID(q, v, 0), into the tick's
buffers), then M = L L^T, the task inertia Lambda and the torque (_operational_step)."""
import numpy as np
from numba import carray, njit, types

from ..configuration import so3_log
from ..dense import cholesky_into, copy_vector, solve_lower
from ..drives import COULOMB_VELOCITY
from ._ct_tick import HEADER, SHAPE, SUBTRACT, TICK, USER, coulomb, robot_calls, space_difference

# osc_tick's status, or KERNEL + c: CALLS[c] refused the state
OK, SINGULAR, OVERFLOW, BAD_Q, BAD_V, BAD_T_D, BAD_V_D, BAD_A_D, QUATERNION, KERNEL = range(10)
CALLS = ("_frame_jacobian", "_frame_acceleration_bias", "_frame_placement", "mass_matrix", "inverse_dynamics")


@njit(cache=True)
def osc_views(data, nv, nq, k):
    """data's parts (osc_size): J (6, nv), bias = Jdot v (6,), T (4, 4), M (nv, nv), h, zero (nv,) -- the robot's
    calls' outputs and ID's zero acceleration -- q (nq,), v (nv,) (their inputs), dq (nv,) (q_0 (-) q, when the
    posture is not q_0 - q), q_posture (nq,), work_n (nv + k + 3, nv), work_k (3 k + 3, k), K_p, K_d (k, k), K_p0,
    K_d0 (nv, nv), drives (2, nv) ([damping; coulomb]), mu (1,)."""
    o, m = 0, nv * nv
    J, o = data[o:o + 6 * nv].reshape(6, nv), o + 6 * nv
    bias, T, o = data[o:o + 6], data[o + 6:o + 22].reshape(4, 4), o + 22
    M, o = data[o:o + m].reshape(nv, nv), o + m
    h, zero, o = data[o:o + nv], data[o + nv:o + 2 * nv], o + 2 * nv
    q, v, dq, o = data[o:o + nq], data[o + nq:o + nq + nv], data[o + nq + nv:o + nq + 2 * nv], o + nq + 2 * nv
    q_posture, o = data[o:o + nq], o + nq
    work_n, o = data[o:o + (nv + k + 3) * nv].reshape(nv + k + 3, nv), o + (nv + k + 3) * nv
    work_k, o = data[o:o + (3 * k + 3) * k].reshape(3 * k + 3, k), o + (3 * k + 3) * k
    K_p, K_d, o = data[o:o + k * k].reshape(k, k), data[o + k * k:o + 2 * k * k].reshape(k, k), o + 2 * k * k
    K_p0, K_d0, o = data[o:o + m].reshape(nv, nv), data[o + m:o + 2 * m].reshape(nv, nv), o + 2 * m
    return (J, bias, T, M, h, zero, q, v, dq, q_posture, work_n, work_k, K_p, K_d, K_p0, K_d0,
            data[o:o + 2 * nv].reshape(2, nv), data[o + 2 * nv:o + 2 * nv + 1])


def osc_size(nv, nq, k):
    """The length of osc_views' data."""
    return 12 * nv + 22 + 3 * nv * nv + 2 * nq + (nv + k + 3) * nv + (3 * k + 3) * k + 2 * k * k + 1


@njit(cache=True, inline="always")
def osc_tick(plan, data, q, v, T_d, V_d, A_d, tau):
    """tau (task_space.py's module docstring) at q, v towards T_d, V_d, A_d; plan: CALLS on data's q and v into
    its J, bias, T, M, h (osc_views), plan[HEADER, USER:] = nv, nq, k and how the posture error q_0 (-) q is taken
    (_ct_tick.SUBTRACT, TICK, or PYTHON: data's dq holds it).  Returns OK, SINGULAR, OVERFLOW, SHAPE, the first
    non-finite input's status or QUATERNION (nothing computed), or KERNEL + c."""
    nv, nq, k, mode = plan[HEADER, USER], plan[HEADER, USER + 1], plan[HEADER, USER + 2], plan[HEADER, USER + 3]
    if q.shape[0] != nq or v.shape[0] != nv or T_d.shape[0] != 4 or T_d.shape[1] != 4 or V_d.shape[0] != k \
            or A_d.shape[0] != k or tau.shape[0] != nv:
        return SHAPE
    J, bias, T, M, h, _, q_b, v_b, dq, q_posture, work_n, work_k, K_p, K_d, K_p0, K_d0, drives, mu = osc_views(
        data, nv, nq, k)
    status = _finite_status(q, v, T_d, V_d, A_d)
    if status != OK:
        return status
    if mode == TICK and space_difference(plan, q, q_posture, dq) >= 0:
        return QUATERNION
    copy_vector(q_b, q)
    copy_vector(v_b, v)
    c = robot_calls(plan)
    if c >= 0:
        return KERNEL + c
    return _operational_step(J, bias, T, M, h, q, v, T_d, V_d, A_d, q_posture[:nq * (mode == SUBTRACT)], dq,
                             K_p, K_d, K_p0, K_d0, mu[0], drives, work_n, work_k, tau)


def osc_entry(bodies, work, p, d):
    """osc_tick on the arrays of _fastcall.Entry's pointers p and shapes d (_ct_tick.tick_entry)."""
    return osc_tick(carray(p[0], (d[1], d[2]), dtype=types.int64), carray(p[1], (d[3],), dtype=types.float64),
                    carray(p[2], (d[4],), dtype=types.float64), carray(p[3], (d[5],), dtype=types.float64),
                    carray(p[4], (d[6], d[7]), dtype=types.float64), carray(p[5], (d[8],), dtype=types.float64),
                    carray(p[6], (d[9],), dtype=types.float64), carray(p[7], (d[10],), dtype=types.float64))


@njit(cache=True)
def _finite_status(q, v, T_d, V_d, A_d):
    """The first of the tick's inputs with a NaN or inf, as a status (OK: none)."""
    for status, x in ((BAD_Q, q), (BAD_V, v), (BAD_V_D, V_d), (BAD_A_D, A_d)):
        for i in range(x.shape[0]):
            if not np.isfinite(x[i]):
                return status
    for i in range(4):
        for j in range(4):
            if not np.isfinite(T_d[i, j]):
                return BAD_T_D
    return OK


@njit(cache=True, inline="always")
def _commanded_acceleration(J, T, v, T_d, V_d, A_d, K_p, K_d, R, e, r, x):
    """x = xddot_cmd = A_d + K_d (V_d - J v) + K_p e, e = [p_d - p; log(R_d R^T)]; R (3, 3), e, r (k,): scratch."""
    k = K_p.shape[0]
    for i in range(3):
        e[i] = T_d[i, 3] - T[i, 3]
    if k == 6:
        for i in range(3):
            for j in range(3):
                R[i, j] = T_d[i, 0] * T[j, 0] + T_d[i, 1] * T[j, 1] + T_d[i, 2] * T[j, 2]     # R_d R^T
        so3_log(R, e[3:])
    for i in range(k):
        s = 0.0
        for j in range(v.shape[0]):
            s += J[i, j] * v[j]
        r[i] = V_d[i] - s                                   # V_d - V, V = J v
    for i in range(k):
        s = A_d[i]
        for j in range(k):
            s += K_d[i, j] * r[j]
        for j in range(k):
            s += K_p[i, j] * e[j]
        x[i] = s


@njit(cache=True, inline="always")
def _mass_solves(M, h, J, L, MJt, a0):
    """M = L L^T; MJt = (M^-1 J^T)^T (k, nv) for J's first k rows and a0 = -M^-1 h, the unactuated acceleration.
    False when M is not positive definite."""
    if not cholesky_into(M, L, 0.0, 0.0):
        return False
    for i in range(MJt.shape[0]):
        copy_vector(MJt[i], J[i])
        solve_lower(L, MJt[i], False)
        solve_lower(L, MJt[i], True)
    for j in range(h.shape[0]):
        a0[j] = -h[j]
    solve_lower(L, a0, False)
    solve_lower(L, a0, True)
    return True


@njit(cache=True, inline="always")
def _task_inertia(J, MJt, mu, L, L_inv, Lam):
    """Lam = (J M^-1 J^T + mu E)^-1 (k, k) by its Cholesky factor L (L_inv its inverse), MJt = (M^-1 J^T)^T;
    False when J M^-1 J^T + mu E is not positive definite to 1e-12 of its largest diagonal entry."""
    k = L.shape[0]
    scale = 0.0
    for i in range(k):
        for j in range(k):
            s = mu if i == j else 0.0
            for m in range(MJt.shape[1]):
                s += J[i, m] * MJt[j, m]
            Lam[i, j] = s
        scale = max(scale, abs(Lam[i, i]))
    if not cholesky_into(Lam, L, 0.0, 1e-12 * scale):
        return False
    for j in range(k):                                      # L_inv, lower triangular
        for i in range(k):
            if i < j:
                L_inv[i, j] = 0.0
                continue
            s = 1.0 if i == j else 0.0
            for m in range(j, i):
                s -= L[i, m] * L_inv[m, j]
            L_inv[i, j] = s / L[i, i]
    for i in range(k):                                      # Lam = L^-T L^-1
        for j in range(k):
            s = 0.0
            for m in range(max(i, j), k):
                s += L_inv[m, i] * L_inv[m, j]
            Lam[i, j] = s
    return True


@njit(cache=True, inline="always")
def _posture_torque(M, h, q, v, q_posture, dq, K_p0, K_d0, a, tau0):
    """tau0 = M a + h, a = K_p0 (q_0 (-) q) - K_d0 v: q_0 - q when q_posture (nq = nv) is given, else dq."""
    n = v.shape[0]
    for j in range(n):
        if q_posture.shape[0]:
            dq[j] = q_posture[j] - q[j]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += K_p0[i, j] * dq[j] - K_d0[i, j] * v[j]
        a[i] = s
    for i in range(n):
        s = h[i]
        for j in range(n):
            s += M[i, j] * a[j]
        tau0[i] = s


@njit(cache=True, inline="always")
def _operational_step(J, bias, T, M, h, q, v, T_d, V_d, A_d, q_posture, dq, K_p, K_d, K_p0, K_d0, mu, drives,
                      work_n, work_k, tau):
    """tau = tau_0 + J^T Lambda (xddot_cmd - (J a_0 + Jdot v) - (M^-1 J^T)^T tau_0) + tau_f(v) (the module
    docstring; tau_f = damping v + coulomb tanh(v / COULOMB_VELOCITY), drives = [damping; coulomb] (2, nv)).
    J (6, nv) (its first k rows used), bias = Jdot v (6,), T the frame's pose, M (nv, nv), h = C v + g;
    work_n (nv + k + 3, nv), work_k (3 k + 3, k).  Returns OK, SINGULAR or OVERFLOW."""
    k, nv = K_p.shape[0], v.shape[0]
    L_M, MJt = work_n[:nv], work_n[nv:nv + k]
    a0, a, tau0 = work_n[nv + k], work_n[nv + k + 1], work_n[nv + k + 2]
    L, L_inv, Lam = work_k[:k], work_k[k:2 * k], work_k[2 * k:3 * k]
    e, r, x = work_k[3 * k], work_k[3 * k + 1], work_k[3 * k + 2]
    _commanded_acceleration(J, T, v, T_d, V_d, A_d, K_p, K_d, L_inv, e, r, x)
    if not (_mass_solves(M, h, J, L_M, MJt, a0) and _task_inertia(J, MJt, mu, L, L_inv, Lam)):
        return SINGULAR
    _posture_torque(M, h, q, v, q_posture, dq, K_p0, K_d0, a, tau0)
    for i in range(k):                                      # r = xddot_cmd - (J a0 + Jdot v) - MJt tau0
        s = bias[i]
        for j in range(nv):
            s += J[i, j] * a0[j]
        t = 0.0
        for j in range(nv):
            t += MJt[i, j] * tau0[j]
        r[i] = x[i] - s - t
    for i in range(k):                                      # e = Lam r
        s = 0.0
        for j in range(k):
            s += Lam[i, j] * r[j]
        e[i] = s
    finite = True
    for j in range(nv):
        s = tau0[j] + drives[0, j] * v[j] + coulomb(drives[1, j], v[j], COULOMB_VELOCITY)
        for i in range(k):
            s += J[i, j] * e[i]
        tau[j] = s
        finite &= np.isfinite(s)
    return OK if finite else OVERFLOW
