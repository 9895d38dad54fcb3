"""The outward kinematic pass of paper 002, section VI, allocation-free, for every body k (parent before child).

Body k's Jacobian has one column per coordinate of k and of its ancestors, and that column is the same joint axis
wherever it is seen from: in the world frame it is S = Ad_{0,b} Xi_b (b the body whose joint owns it), so that
J_k = Ad_{0,k}^-1 [S of k and its ancestors]  -- eq. (27) unrolled.  Its time derivative follows from
d/dt S = adj(V_b) S (an axis fixed in body b, V_b the world-frame twist of b) and d/dt Ad_{0,k}^-1 = -adj(v_k)
Ad_{0,k}^-1, which is eq. (28) unrolled.  The pass therefore keeps, per body, the world-frame axes S and their
rates Sdot, the twist V_k = V_p + S qdot (eq. (26) in world coordinates) and the pose T_{0,k}.
reference.jacobians writes eqs. (26)-(28) as they stand, with J_k and Jdot_k formed explicitly.

Every algorithm module declares the fields it keeps per body (WORK below); Robot's workspace is one record per
body holding the fields of all of them (workspace.py), so a kernel takes one workspace argument.
"""
import numpy as np
from numba import njit

from ..model import BALL, FREE, PLANAR, PRISMATIC, REVOLUTE
from .operators import CONTRACT, ad_times, adj_times, cross, rotate, store_column

WORK = [
    ("R_J", np.float64, (3, 3)), ("p_J", np.float64, (3,)),       # T_J(q), the joint's motion (planar, free)
    ("R_pk", np.float64, (3, 3)), ("p_pk", np.float64, (3,)),     # T_{p,k} = T_tree T_J(q)
    ("R0", np.float64, (3, 3)), ("p0", np.float64, (3,)),         # T_{0,k}
    ("V", np.float64, (6,)),                                      # world-frame twist of body k
    ("S", np.float64, (6, 6)), ("Sd", np.float64, (6, 6)),        # world axes of k's own coordinates, their rates
]

# Status codes of every kernel: 0 is success; ERR_INPUT + i names the i-th input of the quantity (non-finite).
# ERR_OVERFLOW (a result is not finite) and ERR_OVERLAP (an output's memory overlaps an input's or another
# output's) come from the checks around every kernel (generated.checked_kernels).
ERR_QUAT, ERR_SINGULAR, ERR_OVERFLOW, ERR_OVERLAP, ERR_INPUT = 1, 2, 3, 4, 16


@njit(cache=True)
def all_finite(x):
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True


@njit(cache=True)
def check_inputs(inputs):
    """0, or ERR_INPUT + i for the first of the (1-D) inputs that holds a NaN or an inf."""
    for i in range(len(inputs)):
        if not all_finite(inputs[i]):
            return ERR_INPUT + i
    return 0


# ---- joints -----------------------------------------------------------------------------------------------
@njit(cache=True)
def joint_transform(b, q, R, p):
    """R, p <- the motion T_J(q) of body b's planar, free or ball joint (child frame in joint frame); revolute and
    prismatic joints take `placement`'s closed forms.  Returns ERR_QUAT for a zero quaternion; a non-unit one is
    used normalized (the caller's q is not modified)."""
    i = b.iq
    if b.jtype == PLANAR:                               # rotate about the normal, translate along Xi's e1, e2
        s, c = np.sin(q[i + 2]), np.cos(q[i + 2])
        a = b.axis
        c1 = 1.0 - c
        R[0, 0], R[0, 1], R[0, 2] = c + a[0] * a[0] * c1, a[0] * a[1] * c1 - a[2] * s, a[0] * a[2] * c1 + a[1] * s
        R[1, 0], R[1, 1], R[1, 2] = a[1] * a[0] * c1 + a[2] * s, c + a[1] * a[1] * c1, a[1] * a[2] * c1 - a[0] * s
        R[2, 0], R[2, 1], R[2, 2] = a[2] * a[0] * c1 - a[1] * s, a[2] * a[1] * c1 + a[0] * s, c + a[2] * a[2] * c1
        for r in range(3):
            p[r] = q[i] * b.Xi[r, 0] + q[i + 1] * b.Xi[r, 1]
        return 0
    if b.jtype == BALL:                                             # [qx, qy, qz, qw]: a rotation alone
        for r in range(3):
            p[r] = 0.0
        return quaternion_matrix(q, i, R)
    for r in range(3):                                             # FREE: [x, y, z, qx, qy, qz, qw]
        p[r] = q[i + r]
    return quaternion_matrix(q, i + 3, R)


@njit(cache=True)
def quaternion_matrix(q, i, R):
    """R <- the rotation of the quaternion q[i:i + 4] = [qx, qy, qz, qw] used normalized.  0, or ERR_QUAT for a
    quaternion of norm below 1e-12."""
    x, y, z, w = q[i], q[i + 1], q[i + 2], q[i + 3]
    scale = max(abs(x), abs(y), abs(z), abs(w))                    # scaled first: |q|^2 overflows beyond 1e154
    if not scale > 0.0:
        return ERR_QUAT
    x, y, z, w = x / scale, y / scale, z / scale, w / scale
    n2 = x * x + y * y + z * z + w * w                             # in [1, 4]
    if scale * np.sqrt(n2) < 1e-12:                                # the norm below 1e-12: a zero quaternion
        return ERR_QUAT
    s = 2.0 / n2
    R[0, 0], R[0, 1], R[0, 2] = 1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)
    R[1, 0], R[1, 1], R[1, 2] = s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w)
    R[2, 0], R[2, 1], R[2, 2] = s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y)
    return 0


@njit(cache=True, fastmath=CONTRACT, inline="always")   # inlined: a numba call reference-counts each array view
def placement(b, w, q):
    """w.R_pk, w.p_pk <- T_{p,k} = T_tree T_J(q), body b in its parent's frame.  0 or ERR_QUAT.
    A revolute joint takes Rodrigues' formula premultiplied by R_tree, R_tree + sin RA + (1 - cos) RA2, and a
    prismatic one p_tree + d Ra (model.py): no 3x3 product per body."""
    t = b.jtype
    R_pk, p_pk = w.R_pk, w.p_pk
    if t == REVOLUTE:
        angle = b.mult * q[b.iq] + b.offset
        s, c1 = np.sin(angle), 1.0 - np.cos(angle)
        for r in range(3):
            for c in range(3):
                R_pk[r, c] = b.R_tree[r, c] + s * b.RA[r, c] + c1 * b.RA2[r, c]
            p_pk[r] = b.p_tree[r]
        return 0
    if t == PRISMATIC:
        d = b.mult * q[b.iq] + b.offset
        for r in range(3):
            for c in range(3):
                R_pk[r, c] = b.R_tree[r, c]
            p_pk[r] = b.p_tree[r] + d * b.Ra[r]
        return 0
    if joint_transform(b, q, w.R_J, w.p_J) != 0:
        return ERR_QUAT
    for r in range(3):                                             # T_tree T_J
        for c in range(3):
            R_pk[r, c] = b.R_tree[r, 0] * w.R_J[0, c] + b.R_tree[r, 1] * w.R_J[1, c] + b.R_tree[r, 2] * w.R_J[2, c]
    p_pk[0], p_pk[1], p_pk[2] = rotate(b.R_tree, w.p_J[0], w.p_J[1], w.p_J[2])
    for r in range(3):
        p_pk[r] += b.p_tree[r]
    return 0


@njit(cache=True, fastmath=CONTRACT, inline="always")
def outward_step(bodies, work, k, q, v, with_rates):
    """One step of outward_pass: body k, whose parent is done.  0, or ERR_QUAT.  Inlined into outward_pass and
    into frames.support_pass, which steps along one branch of the tree."""
    b, w = bodies[k], work[k]
    if placement(b, w, q) != 0:
        return ERR_QUAT
    if b.parent < 0:                         # element by element: an array-to-array slice copy makes numba
        for r in range(3):                   # compile its broadcasting error messages (seconds at first use)
            for c in range(3):
                w.R0[r, c] = w.R_pk[r, c]
            w.p0[r] = w.p_pk[r]
    else:
        wp = work[b.parent]                                        # T_{0,k} = T_{0,p} T_{p,k}
        for r in range(3):
            for c in range(3):
                w.R0[r, c] = wp.R0[r, 0] * w.R_pk[0, c] + wp.R0[r, 1] * w.R_pk[1, c] + wp.R0[r, 2] * w.R_pk[2, c]
        x0, x1, x2 = rotate(wp.R0, w.p_pk[0], w.p_pk[1], w.p_pk[2])
        w.p0[0], w.p0[1], w.p0[2] = wp.p0[0] + x0, wp.p0[1] + x1, wp.p0[2] + x2
    if b.jtype == REVOLUTE:                                        # S = Ad_{0,k} (mult Xi_k), eq. (27):
        a0, a1, a2 = rotate(w.R0, b.mult * b.axis[0], b.mult * b.axis[1], b.mult * b.axis[2])
        y0, y1, y2 = cross(w.p0[0], w.p0[1], w.p0[2], a0, a1, a2)          # [p0 x a; a] with a = mult R0 axis
        store_column(w.S, 0, (y0, y1, y2, a0, a1, a2))
    elif b.jtype == FREE:                                          # Xi = E_6 (and mult 1): S = Ad_{0,k} itself,
        for c in range(3):                                         # [[R0, [p0]x R0], [0, R0]], column by column
            a0, a1, a2 = w.R0[0, c], w.R0[1, c], w.R0[2, c]
            y0, y1, y2 = cross(w.p0[0], w.p0[1], w.p0[2], a0, a1, a2)
            store_column(w.S, c, (a0, a1, a2, 0.0, 0.0, 0.0))
            store_column(w.S, 3 + c, (y0, y1, y2, a0, a1, a2))
    else:
        for c in range(b.nvj):
            s0, s1, s2, s3, s4, s5 = ad_times(w.R0, w.p0, b.Xi[:, c])
            m = b.mult
            store_column(w.S, c, (m * s0, m * s1, m * s2, m * s3, m * s4, m * s5))
    if with_rates:
        for r in range(6):                                         # V_k = V_p + S qdot, eq. (26)
            w.V[r] = 0.0 if b.parent < 0 else work[b.parent].V[r]
        for c in range(b.nvj):
            for r in range(6):
                w.V[r] += w.S[r, c] * v[b.iv + c]
        for c in range(b.nvj):                                     # d/dt S = adj(V_k) S, eq. (28)
            d0, d1, d2, d3, d4, d5 = adj_times(w.V, w.S[:, c])
            store_column(w.Sd, c, (d0, d1, d2, d3, d4, d5))
    return 0


@njit(cache=True, fastmath=CONTRACT)
def outward_pass(bodies, work, q, v, with_rates):
    """Poses T_{p,k}, T_{0,k} and world axes S of every body; with_rates: also V_k and Sdot.  Paper 002,
    section VI: Ad_{0,k}^-1 = Ad_{p,k}^-1 Ad_{0,p}^-1 and eqs. (26)-(28) in world coordinates.
    Returns 0, or ERR_QUAT for a zero quaternion in q."""
    for k in range(bodies.shape[0]):
        if outward_step(bodies, work, k, q, v, with_rates) != 0:
            return ERR_QUAT
    return 0


@njit(cache=True, inline="always")
def checked_pass(bodies, work, inputs, q, v, with_rates):
    """check_inputs, then outward_pass: how most entry points begin.  0 or the first error's code."""
    status = check_inputs(inputs)
    return status if status != 0 else outward_pass(bodies, work, q, v, with_rates)


@njit(cache=True)
def body_placements(bodies, work, q, T):
    """T[k] <- T_{0,k}, the homogeneous pose of body k in the world, for every body (one outward pass)."""
    status = checked_pass(bodies, work, (q,), q, q, False)
    if status != 0:
        return status
    for k in range(bodies.shape[0]):
        w = work[k]
        for r in range(3):
            for c in range(3):
                T[k, r, c] = w.R0[r, c]
            T[k, r, 3] = w.p0[r]
            T[k, 3, r] = 0.0
        T[k, 3, 3] = 1.0
    return 0
