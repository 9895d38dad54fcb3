"""SlotineLi's tick (adaptive.py's module docstring), compiled: the sliding variables, the regressor, the adaptation
step, the projection and the torque in one call on the controller's buffers.

Shapes: nv joints, nb bodies, p = 10 nb parameters.  The controller's state is two copies of one layout
(``state_views``: the estimate and the projection's eigenvectors): a tick reads one and writes the other, which
the controller takes only when the tick succeeds, so that a refused tick changes nothing.  The gains and the
model's constants are one array (``constant_views``); the tick is called from C (``entry``), where an argument
costs nanoseconds.  The regressor is the robot's own kernel (algorithms/regressor.py) on the controller's copy of
the body records and its own workspace.
"""
import functools

import numpy as np
from numba import carray, cfunc, from_dtype, njit
from numba import types as nt

from ..algorithms.regressor import regressor
from ..algorithms.workspace import WORK
from ..calls.native import FAST_CALLS, extension
from ..configuration import lie_difference
from ..inertia import project_whitened
from ..model import BODY

NOT_FINITE_RESULT = 6              # _reference's status for a result that overflows (1-5 name a non-finite input)
NOT_FINITE_ESTIMATE, NOT_FINITE_TORQUE = 1, 2


@njit(cache=True, fastmath={"reassoc", "contract"})
def matvec(A, x, out, block):
    """out = A x for A block diagonal in square blocks of size block (A.shape[1] for any A), the sums reassociated
    so that they vectorize (numba's np.dot calls BLAS: ~4 us for a 70 x 70 gain on 2 cores, against 0.7 us; an
    InertiaMetric gain's 10 x 10 blocks alone: 0.1 us)."""
    for i in range(A.shape[0]):
        lo = i - i % block
        acc = 0.0
        for j in range(lo, min(lo + block, A.shape[1])):
            acc += A[i, j] * x[j]
        out[i] = acc


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
def reference(q, v, q_d, v_d, a_d, Lambda, index, vectors):
    """The sliding variables (module docstring) into vectors[:5] = e, e_dot, v_r, a_r, s (nv each): e = q_d - q on
    the coordinates index[1] of 1-DoF joints (at index[0] in q; the rest of e as given: robot.difference's for a
    floating base), e_dot = v_d - v, v_r = v_d + Lambda e, a_r = a_d + Lambda e_dot, s = v - v_r.  Returns 0,
    1 + the index of the first non-finite input of (q, v, q_d, v_d, a_d), or NOT_FINITE_RESULT."""
    status = not_finite(q, v, q_d, v_d, a_d)
    if status:
        return status
    e, e_dot, v_r, a_r, s = vectors[0], vectors[1], vectors[2], vectors[3], vectors[4]
    for i in range(index.shape[1]):
        e[index[1, i]] = q_d[index[0, i]] - q[index[0, i]]
    e_dot[:] = v_d - v
    matvec(Lambda, e, v_r, e.shape[0])
    matvec(Lambda, e_dot, a_r, e.shape[0])
    for i in range(s.shape[0]):
        v_r[i] += v_d[i]
        a_r[i] += a_d[i]
        s[i] = v[i] - v_r[i]
        if not (np.isfinite(v_r[i]) and np.isfinite(a_r[i]) and np.isfinite(s[i])):
            return NOT_FINITE_RESULT
    return 0


@njit(cache=True)
def step(Y, s, pi_hat, Gamma, block, dt, basis, S_inv, floor, bases, rate, pi_new):
    """rate = pi_hat_dot = -Gamma Y^T s (Gamma block diagonal in blocks of size block) and pi_new = P(pi_hat + dt
    rate), P inertia.project_whitened(basis, S_inv, floor, bases) when basis has a body, else the identity.  Returns
    0 or NOT_FINITE_ESTIMATE."""
    g = np.empty(Y.shape[1])
    matvec_t(Y, s, g)
    matvec(Gamma, g, rate, block)
    for i in range(rate.shape[0]):
        rate[i] = -rate[i]
        pi_new[i] = pi_hat[i] + dt * rate[i]
        if not np.isfinite(pi_new[i]):
            return NOT_FINITE_ESTIMATE
    if basis.shape[0]:
        project_whitened(pi_new, basis, S_inv, floor, pi_new, bases)
        for i in range(pi_new.shape[0]):
            if not np.isfinite(pi_new[i]):
                return NOT_FINITE_ESTIMATE
    return 0


@njit(cache=True)
def torque(Y, pi, K_D, vectors, width, tau):
    """tau = Y pi + diag(armature) a_r + damping v_r + coulomb tanh(v_r / width) + extra - K_D s (paper 002, eq.
    (16); the drives' part at the reference, module docstring), vectors[2:] = v_r, a_r, s, armature, damping,
    coulomb, extra.  Returns 0 or NOT_FINITE_TORQUE."""
    v_r, a_r, s, armature, damping, coulomb, extra = (vectors[2], vectors[3], vectors[4], vectors[5], vectors[6],
                                                      vectors[7], vectors[8])
    k = np.empty(tau.shape[0])
    matvec(Y, pi, tau, pi.shape[0])
    matvec(K_D, s, k, s.shape[0])
    for i in range(tau.shape[0]):
        tau[i] += (armature[i] * a_r[i] + (damping[i] * v_r[i] + coulomb[i] * np.tanh(v_r[i] / width))
                   + extra[i]) - k[i]
        if not np.isfinite(tau[i]):
            return NOT_FINITE_TORQUE
    return 0


# tick's mode bits: step the estimate by dt; project it (project_whitened); stop after the regressor
ADAPT, PROJECT, SLIDING = 1, 2, 4
BAD_QUATERNION, BAD_REGRESSOR, BAD_SHAPE = 7, 8, 9    # tick's statuses beyond reference's
DT, MODE, CURRENT, NQ, BLOCK = range(5)     # the control array's entries
STEP_STATUS = 10                        # tick returns STEP_STATUS + step's or torque's status


@njit(cache=True)
def state_views(X, p):
    """One copy X (p + 16 nb,) of the state as (pi_hat (p,), bases (nb, 4, 4)): the estimate and each body's
    eigenvectors of its whitened pseudo-inertia (project_whitened keeps them from tick to tick)."""
    return X[:p], X[p:].reshape(p // 10, 4, 4)


def constant_size(nb):
    """The length of the constants' array (constant_views)."""
    return 3 + 176 * nb + 2


@njit(cache=True)
def constant_views(C, nb):
    """C (constant_size,) as (gravity (3,), basis (nb, 10, 16), S_inv (nb, 4, 4), floor, width): the robot's
    gravity, InertiaMetric's whitened basis and J0^1/2, the projection's floor and the Coulomb law's smoothing
    velocity."""
    o = 3 + 160 * nb
    return C[:3], C[3:o].reshape(nb, 10, 16), C[o:o + 16 * nb].reshape(nb, 4, 4), C[-2], C[-1]


@njit(cache=True)
def tick(bodies, work, states, constants, Lambda, K_D, Gamma, joints, vectors, Y, rate, control, q, v, q_d, v_d, a_d,
         tau):
    """One tick of SlotineLi on buffers: e = q_d (-) q, the sliding variables (reference), Y(q, v, v_r, a_r) (the
    robot's kernel, into Y; SLIDING stops here), pi_new = P(pi_hat - dt Gamma Y^T s) (P with PROJECT, dt with
    ADAPT, else pi_new = pi_hat) written to states[1 - current] with the projection's eigenvectors, and tau = Y
    pi_new + the drives' part - K_D s (torque).  vectors (9, nv): e, e_dot, v_r, a_r, s, armature, damping, Coulomb
    level and the extra drives' torque (reference, torque); rate (p,) <- pi_hat_dot; control: [dt, mode, current,
    nq, Gamma's block size]; joints (2, 1 + k): [n_scalar, n_free], then the (iq, iv) of the scalar coordinates,
    the free joints and the ball joints.

    Returns 0, reference's status (1-5: a non-finite input; NOT_FINITE_RESULT), BAD_QUATERNION (a zero quaternion
    in q or q_d), BAD_REGRESSOR (the kernel refused the state), BAD_SHAPE (an input's length), or STEP_STATUS +
    step's or torque's status."""
    nv, p, nq = tau.shape[0], states.shape[1] * 10 // 26, int(control[NQ])
    if q.shape[0] != nq or q_d.shape[0] != nq or v.shape[0] != nv or v_d.shape[0] != nv or a_d.shape[0] != nv:
        return BAD_SHAPE
    mode, current = int(control[MODE]), int(control[CURRENT])
    gravity, basis, S_inv, floor, width = constant_views(constants, p // 10)
    pi_hat, bases = state_views(states[current], p)
    pi_new, bases_new = state_views(states[1 - current], p)
    status = not_finite(q, v, q_d, v_d, a_d)                      # before the difference, which solves with q
    if status:
        return status
    a, b = 1 + joints[0, 0], 1 + joints[0, 0] + joints[1, 0]
    bad = lie_difference(q, q_d, joints[0, a:b], joints[1, a:b], joints[0, b:], joints[1, b:], vectors[0])
    status = reference(q, v, q_d, v_d, a_d, Lambda, joints[:, 1:a], vectors)
    if status:
        return status
    if bad >= 0:
        return BAD_QUATERNION
    if regressor(bodies, work, gravity, q, v, vectors[2], vectors[3], Y):
        return BAD_REGRESSOR
    if mode & SLIDING:
        return 0
    bases_new[:] = bases
    status = step(Y, vectors[4], pi_hat, Gamma, int(control[BLOCK]), control[DT] if mode & ADAPT else 0.0,
                  basis if mode & PROJECT else basis[:0], S_inv, floor, bases_new, rate, pi_new)
    if status == 0:
        status = torque(Y, pi_new, K_D, vectors, width, tau)
    return STEP_STATUS + status if status else 0


def _entry_point(bodies, work, p, d):
    """tick on the arrays a _fastcall.Entry passes: the body records and workspace (d[0] each), then the pointers
    p and dimensions d of tick's other arguments, C-contiguous: a kernel that knows its arrays' layout runs up to 2x
    faster (calls.kernels.kernel_types)."""
    f8, i8 = nt.float64, nt.int64
    return tick(carray(bodies, (d[0],)), carray(work, (d[0],)), carray(p[0], (d[1], d[2]), dtype=f8),
                carray(p[1], (d[3],), dtype=f8), carray(p[2], (d[4], d[5]), dtype=f8),
                carray(p[3], (d[6], d[7]), dtype=f8), carray(p[4], (d[8], d[9]), dtype=f8),
                carray(p[5], (d[10], d[11]), dtype=i8), carray(p[6], (d[12], d[13]), dtype=f8),
                carray(p[7], (d[14], d[15]), dtype=f8), carray(p[8], (d[16],), dtype=f8),
                carray(p[9], (d[17],), dtype=f8), carray(p[10], (d[18],), dtype=f8), carray(p[11], (d[19],), dtype=f8),
                carray(p[12], (d[20],), dtype=f8), carray(p[13], (d[21],), dtype=f8), carray(p[14], (d[22],), dtype=f8),
                carray(p[15], (d[23],), dtype=f8))


@functools.cache
def entry():
    """tick called from C (a _fastcall.Entry of a numba cfunc: ~0.1 us for its 18 arrays, where numba's dispatcher
    takes ~2 us), with the arguments of tick; None without the C extension.  A TypeError for an argument that is
    not a C-contiguous array of tick's type (the last six: float64), as Entry says."""
    if not FAST_CALLS:
        return None
    signature = nt.int64(nt.CPointer(from_dtype(BODY)), nt.CPointer(from_dtype(WORK)), nt.CPointer(nt.voidptr),
                         nt.CPointer(nt.int64))
    address = cfunc(signature, cache=True)(_entry_point).address
    return extension.Entry(address, (1, 1, 2, 1, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1), 5, 1, BAD_SHAPE)
