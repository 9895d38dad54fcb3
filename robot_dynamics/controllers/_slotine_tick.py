"""SlotineLi's tick (adaptive.py's module docstring), compiled: the sliding variables, the regressor, the adaptation
step, the projection and the torque in one call on the controller's buffers.

Shapes: nv joints, nb bodies, p = 10 nb parameters.  The controller's state is two copies of one layout
(``state_views``: the estimate and the projection's eigenvectors): a tick reads one and writes the other, which
the controller takes only when the tick succeeds, so that a refused tick changes nothing.  Everything else the
tick reads or writes -- the control scalars, the projection's constants, the gains, the vectors, Y, the rate and
the scratch -- is one array (``sl_views``).  The regressor is the robot's own kernel, called by its C entry point
through a _ct_tick plan (_ct_tick.robot_calls: nothing of it compiled into the tick), and the tick is called from C
(_ct_tick.tick_entry), as ComputedTorque's and OperationalSpace's are.  Nothing is allocated on a tick.
"""
import numpy as np
from numba import carray, njit, types

from ..dense import copy_vector
from ..inertia import PROJECTION_WORK, project_whitened
from ._ct_tick import HEADER, PYTHON, SHAPE, USER, coulomb, robot_calls, space_difference

NOT_FINITE_RESULT = 6              # reference's status for a result that overflows (1-5 name a non-finite input)
NOT_FINITE_ESTIMATE, NOT_FINITE_TORQUE = 1, 2


@njit(cache=True, fastmath={"reassoc", "contract"})
def matvec(A, x, out):
    """out = A x, the sums reassociated so that they vectorize (numba's np.dot calls BLAS: ~4 us for a 70 x 70 gain
    on 2 cores; here a 7 x 70 Y 0.07 us)."""
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        out[i] = acc


@njit(cache=True, fastmath={"reassoc", "contract"})
def gain_times(gain, block, x, out):
    """out = Gamma x, gain (p p,) holding Gamma (p, p) row-major, or (block = 10) its p / 10 diagonal 10 x 10 blocks
    packed at its start (an InertiaMetric gain, a diagonal one): 2.6x faster than the blocks read within Gamma
    (0.29 against 0.75 us for p = 70, loaded 2 cores)."""
    p = x.shape[0]
    if block != 10:
        matvec(gain.reshape(p, p), x, out)
        return
    for k in range(0, p, 10):
        for i in range(10):
            acc = 0.0
            for j in range(10):
                acc += gain[10 * (k + i) + j] * x[k + j]
            out[k + i] = acc


@njit(cache=True)
def matvec_t(A, x, out):
    """out = A^T x, row by row (independent sums, vectorized)."""
    out[:] = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            out[j] += A[i, j] * x[i]


@njit(cache=True)
def not_finite(q, v, q_d, v_d, a_d):
    """0, or 1 + the index of the first non-finite input of (q, v, q_d, v_d, a_d)."""
    for k, x in enumerate((q, v, q_d, v_d, a_d)):
        for i in range(x.shape[0]):
            if not np.isfinite(x[i]):
                return 1 + k
    return 0


@njit(cache=True)
def sliding_vectors(v, v_d, a_d, Lambda, vectors):
    """From e = vectors[0], the rest of the sliding variables (module docstring) into vectors[1:5] = e_dot, v_r, a_r,
    s: e_dot = v_d - v, v_r = v_d + Lambda e, a_r = a_d + Lambda e_dot, s = v - v_r.  Returns 0 or
    NOT_FINITE_RESULT."""
    e, e_dot, v_r, a_r, s = vectors[0], vectors[1], vectors[2], vectors[3], vectors[4]
    for i in range(e_dot.shape[0]):
        e_dot[i] = v_d[i] - v[i]
    matvec(Lambda, e, v_r)
    matvec(Lambda, e_dot, a_r)
    for i in range(s.shape[0]):
        v_r[i] += v_d[i]
        a_r[i] += a_d[i]
        s[i] = v[i] - v_r[i]
        if not (np.isfinite(v_r[i]) and np.isfinite(a_r[i]) and np.isfinite(s[i])):
            return NOT_FINITE_RESULT
    return 0


@njit(cache=True)
def reference(q, v, q_d, v_d, a_d, Lambda, index, vectors):
    """The sliding variables into vectors[:5] = e, e_dot, v_r, a_r, s (nv each): e = q_d - q on the coordinates
    index[1] of 1-DoF joints (at index[0] in q; the rest of e as given: robot.difference's for a floating base), then
    sliding_vectors.  Returns 0, 1 + the index of the first non-finite input of (q, v, q_d, v_d, a_d), or
    NOT_FINITE_RESULT."""
    status = not_finite(q, v, q_d, v_d, a_d)
    if status:
        return status
    e = vectors[0]
    for i in range(index.shape[1]):
        e[index[1, i]] = q_d[index[0, i]] - q[index[0, i]]
    return sliding_vectors(v, v_d, a_d, Lambda, vectors)


@njit(cache=True, inline="always")
def step(Y, s, pi_hat, gain, block, dt, whitening, S_inv, floor, bases, g, work, rate, pi_new):
    """rate = pi_hat_dot = -Gamma Y^T s (Gamma in gain, as gain_times reads it) and pi_new = P(pi_hat + dt
    rate), P inertia.project_whitened(whitening, S_inv, floor, bases, work) when whitening has a body, else the
    identity;
    g (p,): scratch.  Returns 0 or NOT_FINITE_ESTIMATE."""
    matvec_t(Y, s, g)
    gain_times(gain, block, g, rate)
    for i in range(rate.shape[0]):
        rate[i] = -rate[i]
        pi_new[i] = pi_hat[i] + dt * rate[i]
        if not np.isfinite(pi_new[i]):
            return NOT_FINITE_ESTIMATE
    if whitening.shape[0]:
        project_whitened(pi_new, whitening, S_inv, floor, pi_new, bases, work)
        for i in range(pi_new.shape[0]):
            if not np.isfinite(pi_new[i]):
                return NOT_FINITE_ESTIMATE
    return 0


@njit(cache=True)
def torque(Y, pi, K_D, vectors, width, tau):
    """tau = Y pi + diag(armature) a_r + damping v_r + coulomb tanh(v_r / width) + extra - K_D s (paper 002, eq.
    (16); the drives' part at the reference, module docstring), vectors[2:] = v_r, a_r, s, armature, damping,
    coulomb, extra.  Returns 0 or NOT_FINITE_TORQUE."""
    v_r, a_r, s, armature, damping, level, extra = (vectors[2], vectors[3], vectors[4], vectors[5], vectors[6],
                                                    vectors[7], vectors[8])
    matvec(Y, pi, tau)
    for i in range(tau.shape[0]):
        k = 0.0
        for j in range(s.shape[0]):
            k += K_D[i, j] * s[j]
        tau[i] += (armature[i] * a_r[i] + (damping[i] * v_r[i] + coulomb(level[i], v_r[i], width))
                   + extra[i]) - k
        if not np.isfinite(tau[i]):
            return NOT_FINITE_TORQUE
    return 0


# sl_tick's mode bits: step the estimate by dt; project it (project_whitened); stop after the regressor; take the
# new estimate (current <- 1 - current) when the tick succeeds
ADAPT, PROJECT, SLIDING, COMMIT = 1, 2, 4, 8
BAD_QUATERNION, BAD_REGRESSOR = 7, 8       # sl_tick's statuses beyond reference's (and _ct_tick's SHAPE, OVERLAP)
DT, MODE, CURRENT, BLOCK, FLOOR, WIDTH = range(6)     # the control entries (sl_views)
STEP_STATUS = 10                        # sl_tick returns STEP_STATUS + step's or torque's status


@njit(cache=True)
def state_views(X, p):
    """One copy X (p + 16 nb,) of the state as (pi_hat (p,), bases (nb, 4, 4)): the estimate and each body's
    eigenvectors of its whitened pseudo-inertia (project_whitened keeps them from tick to tick)."""
    return X[:p], X[p:].reshape(p // 10, 4, 4)


@njit(cache=True)
def sl_views(data, nv, nq, nb):
    """data's parts (sl_size): control (6,) [dt, mode, current, Gamma's block size, the projection's floor, the
    Coulomb law's smoothing velocity]; whitening (nb, 16, 10), S_inv (nb, 4, 4) (InertiaMetric's whitening and
    J0^1/2); Lambda, K_D (nv, nv); gain (p p,) (Gamma, gain_times); vectors (9, nv) (e, e_dot, v_r, a_r, s, armature, damping,
    Coulomb level, the extra drives' torque); q (nq,), v (nv,) (the regressor's inputs, with vectors' v_r, a_r);
    Y (nv, p); rate, g (p,); work (PROJECTION_WORK, 4) (project_whitened's)."""
    p, m = 10 * nb, nv * nv
    control, o = data[:6], 6
    whitening, o = data[o:o + 160 * nb].reshape(nb, 16, 10), o + 160 * nb
    S_inv, o = data[o:o + 16 * nb].reshape(nb, 4, 4), o + 16 * nb
    Lambda, K_D, o = data[o:o + m].reshape(nv, nv), data[o + m:o + 2 * m].reshape(nv, nv), o + 2 * m
    gain, o = data[o:o + p * p], o + p * p
    vectors, o = data[o:o + 9 * nv].reshape(9, nv), o + 9 * nv
    q, v, o = data[o:o + nq], data[o + nq:o + nq + nv], o + nq + nv
    Y, o = data[o:o + nv * p].reshape(nv, p), o + nv * p
    rate, g, o = data[o:o + p], data[o + p:o + 2 * p], o + 2 * p
    return control, whitening, S_inv, Lambda, K_D, gain, vectors, q, v, Y, rate, g, \
        data[o:o + 4 * PROJECTION_WORK].reshape(PROJECTION_WORK, 4)


def sl_size(nv, nq, nb):
    """The length of sl_views' data."""
    p = 10 * nb
    return 6 + 176 * nb + 2 * nv * nv + p * p + 9 * nv + nq + nv + nv * p + 2 * p + 4 * PROJECTION_WORK


@njit(cache=True, inline="always")
def sl_tick(plan, data, states, q, v, q_d, v_d, a_d, tau):
    """One tick of SlotineLi on buffers: e = q_d (-) q (_ct_tick.space_difference; data's e as given with PYTHON),
    the sliding variables (sliding_vectors), Y(q, v, v_r, a_r) (the plan's regressor, into data's Y; SLIDING stops
    here), pi_new = P(pi_hat - dt Gamma Y^T s) (P with PROJECT, dt with ADAPT, else pi_new = pi_hat) written to
    states[1 - current] with the projection's eigenvectors, tau = Y pi_new + the drives' part - K_D s (torque), and
    with COMMIT current <- 1 - current.  plan[HEADER, USER:] = nv, nq, nb, how e is taken (_ct_tick.SUBTRACT, TICK
    or PYTHON); data: sl_views; states (2, 26 nb).

    Returns 0, reference's status (1-5: a non-finite input; NOT_FINITE_RESULT), BAD_QUATERNION (a zero quaternion
    in q or q_d), BAD_REGRESSOR (the kernel refused the state), SHAPE (an array's length), or STEP_STATUS + step's
    or torque's status."""
    nv, nq, nb, mode_e = plan[HEADER, USER], plan[HEADER, USER + 1], plan[HEADER, USER + 2], plan[HEADER, USER + 3]
    p = 10 * nb
    if q.shape[0] != nq or q_d.shape[0] != nq or v.shape[0] != nv or v_d.shape[0] != nv or a_d.shape[0] != nv \
            or tau.shape[0] != nv or states.shape[0] != 2 or states.shape[1] != 26 * nb:
        return SHAPE
    control, whitening, S_inv, Lambda, K_D, gain, vectors, q_b, v_b, Y, rate, g, work = sl_views(data, nv, nq, nb)
    status = not_finite(q, v, q_d, v_d, a_d)                      # before the difference, which divides by q's
    if status:
        return status
    if mode_e != PYTHON and space_difference(plan, q, q_d, vectors[0]) >= 0:
        return BAD_QUATERNION
    status = sliding_vectors(v, v_d, a_d, Lambda, vectors)
    if status:
        return status
    copy_vector(q_b, q)
    copy_vector(v_b, v)
    if robot_calls(plan) >= 0:
        return BAD_REGRESSOR
    mode = int(control[MODE])
    if mode & SLIDING:
        return 0
    current = int(control[CURRENT])
    pi_hat, bases = state_views(states[current], p)
    pi_new, bases_new = state_views(states[1 - current], p)
    copy_vector(states[1 - current, p:], states[current, p:])          # bases_new <- bases
    status = step(Y, vectors[4], pi_hat, gain, int(control[BLOCK]), control[DT] if mode & ADAPT else 0.0,
                  whitening if mode & PROJECT else whitening[:0], S_inv, control[FLOOR], bases_new, g, work, rate, pi_new)
    if status == 0:
        status = torque(Y, pi_new, K_D, vectors, control[WIDTH], tau)
    if status:
        return STEP_STATUS + status
    if mode & COMMIT:
        control[CURRENT] = 1 - current
    return 0


def sl_entry(bodies, work, p, d):
    """sl_tick on the arrays of _fastcall.Entry's pointers p and shapes d (_ct_tick.tick_entry)."""
    f8 = types.float64
    return sl_tick(carray(p[0], (d[1], d[2]), dtype=types.int64), carray(p[1], (d[3],), dtype=f8),
                   carray(p[2], (d[4], d[5]), dtype=f8), carray(p[3], (d[6],), dtype=f8),
                   carray(p[4], (d[7],), dtype=f8), carray(p[5], (d[8],), dtype=f8), carray(p[6], (d[9],), dtype=f8),
                   carray(p[7], (d[10],), dtype=f8), carray(p[8], (d[11],), dtype=f8))
