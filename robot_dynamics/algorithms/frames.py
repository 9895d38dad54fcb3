"""Frames: the pose, Jacobian, twist and classical acceleration bias of a frame rigidly attached to a body (every
URDF link is one, model.frames), summed along the frame's support -- its body and that body's ancestors, as
Pinocchio's computeFrameJacobian -- after kinematics' outward step along that support alone (O(depth), not O(nb)).

A frame f sits on body k at (R_kf, p_kf): T_{0,f} = T_{0,k} T_{k,f}.  Body k's world-frame Jacobian is the
world axes S of the coordinates of k and of its ancestors (paper 002, eq. (27) unrolled, see kinematics.py), so
the frame's twist in the world frame is V_0 = sum S qdot and, with qddot = 0, its world-frame acceleration is
A_0 = sum Sdot qdot (eq. (28) unrolled).  Each is then expressed in one of Pinocchio's three references, by X:

    "local"                (LOCAL)                 X = Ad_{0,f}^-1: the frame's body twist, in the frame's axes
    "world"                (WORLD)                 X = E: the world-frame (spatial) twist, at the world origin
    "local_world_aligned"  (LOCAL_WORLD_ALIGNED)   X = [[E, -[p_0f]x], [0, E]]: the velocity of the frame origin
                                                   and the angular velocity, in the world's axes

J_f = X S (6 x nv, zero outside the support), V_f = X V_0 = J_f qdot, and the classical acceleration bias
(Pinocchio's getFrameClassicalAcceleration at qddot = 0) Jdot_f qdot = X A_0 + [w_f x v_f; 0] with
(v_f, w_f) = V_f: in "local_world_aligned" it is [d^2 p_0f / dt^2; d w / dt] at qddot = 0, what a task-space
controller subtracts from its desired acceleration.

The frame travels into the kernels as one array `frame` (FRAME_SIZE,) = [body, reference, R_kf (row by row),
p_kf]: body -1 is the world (a link fixed to it), reference one of REFERENCES' codes.
"""
import numpy as np
from numba import njit

from .kinematics import ERR_QUAT, check_inputs, outward_step
from .operators import CONTRACT, ad_inv_times, cross, rotate

WORK = [
    ("chain", np.int64),                                          # work[i].chain: the i-th body from the frame's
    ("Rf", np.float64, (3, 3)), ("pf", np.float64, (3,)),         # up to the root; work[0].Rf, pf: T_{0,f}
]

REFERENCES = {"local": 0, "world": 1, "local_world_aligned": 2}
LOCAL, WORLD = 0, 1
FRAME_SIZE = 14


def frame_array(body, reference, R, p):
    """The (FRAME_SIZE,) array of a frame on `body` at (R, p) (body -1: the world), for a reference's name."""
    return np.concatenate([[body, REFERENCES[reference]], np.asarray(R, float).ravel(), np.asarray(p, float)])


@njit(cache=True, fastmath=CONTRACT)
def support_pass(bodies, work, inputs, frame, q, v, with_rates):
    """The frame's body and its ancestors listed root last (work[0].chain .. work[n-1].chain), the inputs checked
    and kinematics' outward step run along that support alone, then the frame's pose T_{0,f} = T_{0,k} T_{k,f} into
    work[0].Rf, work[0].pf (unless the frame's reference is "world", whose X = E does not use it).  Returns
    (status, n): status 0 or the first error's code, n the number of bodies (0 for a frame fixed to the world)."""
    k, n = int(frame[0]), 0
    while k >= 0:
        work[n].chain = k
        n += 1
        k = bodies[k].parent
    status = check_inputs(inputs)
    if status != 0:
        return status, n
    for i in range(n - 1, -1, -1):                                 # the outward pass along the support alone,
        if outward_step(bodies, work, work[i].chain, q, v, with_rates) != 0:    # root first (Pinocchio's
            return ERR_QUAT, n                                     # computeFrameJacobian: O(depth), not O(nb))
    if int(frame[1]) == WORLD:                                     # X = E: the pose is not used
        return 0, n
    f = work[0]
    if n == 0:
        for r in range(3):
            for c in range(3):
                f.Rf[r, c] = frame[2 + 3 * r + c]
            f.pf[r] = frame[11 + r]
        return 0, 0
    w = work[int(frame[0])]
    for r in range(3):
        for c in range(3):
            f.Rf[r, c] = w.R0[r, 0] * frame[2 + c] + w.R0[r, 1] * frame[5 + c] + w.R0[r, 2] * frame[8 + c]
    x0, x1, x2 = rotate(w.R0, frame[11], frame[12], frame[13])
    f.pf[0], f.pf[1], f.pf[2] = w.p0[0] + x0, w.p0[1] + x1, w.p0[2] + x2
    return 0, n


@njit(cache=True, fastmath=CONTRACT, inline="always")
def express(reference, R, p, x):
    """X x: a world-frame twist (or axis, or acceleration) x in the reference of the frame posed at (R, p)."""
    if reference == LOCAL:                                         # Ad_{0,f}^-1 x
        return ad_inv_times(R, p, x)
    if reference == WORLD:
        return x[0], x[1], x[2], x[3], x[4], x[5]
    y0, y1, y2 = cross(x[3], x[4], x[5], p[0], p[1], p[2])         # at the frame origin: x_v + x_w x p
    return x[0] + y0, x[1] + y1, x[2] + y2, x[3], x[4], x[5]


@njit(cache=True)
def frame_placement(bodies, work, q, frame, T):
    """T <- T_{0,f} (4, 4), the frame's pose in the world."""
    status = support_pass(bodies, work, (q,), frame, q, q, False)[0]
    if status != 0:
        return status
    f = work[0]
    for r in range(3):
        for c in range(3):
            T[r, c] = f.Rf[r, c]
        T[r, 3] = f.pf[r]
        T[3, r] = 0.0
    T[3, 3] = 1.0
    return 0


@njit(cache=True, fastmath=CONTRACT)
def frame_jacobian(bodies, work, q, frame, J):
    """J <- J_f = X S (6, nv): the world axes S of the support's coordinates (paper 002, eq. (27) unrolled) in the
    frame's reference; a mimic joint's column adds into its master's."""
    status, n = support_pass(bodies, work, (q,), frame, q, q, False)
    if status != 0:
        return status
    for r in range(6):
        for c in range(J.shape[1]):
            J[r, c] = 0.0
    reference, R, p = int(frame[1]), work[0].Rf, work[0].pf
    for i in range(n):
        b, w = bodies[work[i].chain], work[work[i].chain]
        for c in range(b.nvj):
            x = express(reference, R, p, w.S[:, c])
            for r in range(6):
                J[r, b.iv + c] += x[r]
    return 0


@njit(cache=True, fastmath=CONTRACT)
def frame_velocity(bodies, work, q, v, frame, V):
    """V <- V_f = X V_0 = J_f qdot, V_0 the world-frame twist of the frame's body (eq. (26))."""
    status, n = support_pass(bodies, work, (q, v), frame, q, v, True)
    if status != 0:
        return status
    if n == 0:
        for r in range(6):
            V[r] = 0.0
        return 0
    x = express(int(frame[1]), work[0].Rf, work[0].pf, work[int(frame[0])].V)
    for r in range(6):
        V[r] = x[r]
    return 0


@njit(cache=True, fastmath=CONTRACT)
def frame_acceleration_bias(bodies, work, q, v, frame, A):
    """A <- Jdot_f qdot, the classical acceleration of the frame at qddot = 0 (Pinocchio's
    getFrameClassicalAcceleration): X A_0 + [w_f x v_f; 0], A_0 = sum Sdot qdot over the support (eq. (28)
    unrolled, world frame) and (v_f, w_f) = X V_0."""
    status, n = support_pass(bodies, work, (q, v), frame, q, v, True)
    if status != 0:
        return status
    if n == 0:
        for r in range(6):
            A[r] = 0.0
        return 0
    a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for i in range(n):                                             # A_0 = sum_c Sdot_c qdot_c
        b, w = bodies[work[i].chain], work[work[i].chain]
        for c in range(b.nvj):
            s = v[b.iv + c]
            a0, a1, a2 = a0 + w.Sd[0, c] * s, a1 + w.Sd[1, c] * s, a2 + w.Sd[2, c] * s
            a3, a4, a5 = a3 + w.Sd[3, c] * s, a4 + w.Sd[4, c] * s, a5 + w.Sd[5, c] * s
    reference, R, p = int(frame[1]), work[0].Rf, work[0].pf
    v0, v1, v2, w0, w1, w2 = express(reference, R, p, work[int(frame[0])].V)
    A[0], A[1], A[2], A[3], A[4], A[5] = a0, a1, a2, a3, a4, a5
    x0, x1, x2, x3, x4, x5 = express(reference, R, p, A)
    c0, c1, c2 = cross(w0, w1, w2, v0, v1, v2)                     # the classical correction w_f x v_f
    A[0], A[1], A[2], A[3], A[4], A[5] = x0 + c0, x1 + c1, x2 + c2, x3, x4, x5
    return 0
