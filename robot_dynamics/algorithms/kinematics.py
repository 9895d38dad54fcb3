"""The outward kinematic pass of paper 002, section VI, allocation-free, for every body k (parent before child).

Body k's Jacobian has one column per coordinate of k and of its ancestors, and that column is the same joint axis
wherever it is seen from: in the world frame it is S = Ad_{0,b} Xi_b (b the body whose joint owns it), so that
J_k = Ad_{0,k}^-1 [S of k and its ancestors]  -- eq. (27) unrolled.  Its time derivative follows from
d/dt S = ad(V_b) S (an axis fixed in body b, V_b the world-frame twist of b) and d/dt Ad_{0,k}^-1 = -adj(v_k)
Ad_{0,k}^-1, which is eq. (28) unrolled.  The kernels below therefore keep, per body, the world-frame axes S and
their rates Sdot, the twist V_k = V_p + S qdot (eq. (26) in world coordinates) and the pose T_{0,k}.

Twists and wrenches are [linear; angular] (paper 002, appendix).  WORK is the per-body scratch record.
"""
import numpy as np
from numba import njit

from ..model import PLANAR, PRISMATIC, REVOLUTE

WORK = np.dtype([
    ("R_pk", np.float64, (3, 3)), ("p_pk", np.float64, (3,)),     # T_{p,k}
    ("R0", np.float64, (3, 3)), ("p0", np.float64, (3,)),         # T_{0,k}
    ("V", np.float64, (6,)),                                      # world-frame twist of body k
    ("S", np.float64, (6, 6)), ("Sd", np.float64, (6, 6)),        # world axes of k's own coordinates, their rates
    ("U", np.float64, (6,)), ("P", np.float64, (6,)),             # world J_k v_r and J_k a_r + Jdot_k v_r + gamma
    ("pic", np.float64, (10,)),                                   # composite (subtree) parameters, world frame
    ("Bc", np.float64, (6, 6)),                                   # composite sum of ad(V_k)^T Lambda_k^w
    ("W", np.float64, (6, 10)),                                   # regressor block in the world frame
    ("v", np.float64, (6,)), ("a", np.float64, (6,)), ("f", np.float64, (6,)),   # Newton-Euler / ABA
    ("IA", np.float64, (6, 6)), ("pA", np.float64, (6,)), ("c", np.float64, (6,)),
    ("UD", np.float64, (6, 6)), ("Dinv", np.float64, (6, 6)), ("u", np.float64, (6,)),
    # pass-wide scratch, used in the extra last record only (see `scratch`): nothing is allocated per call
    ("s33", np.float64, (3, 3)), ("s3", np.float64, (3,)), ("s6", np.float64, (10, 6)),
    ("s66", np.float64, (6, 6)), ("s612", np.float64, (6, 12)),
], align=True)

ERR_Q, ERR_V, ERR_VREF, ERR_AREF, ERR_QUAT, ERR_SINGULAR = 1, 2, 3, 4, 5, 6


@njit(cache=True)
def workspace(nbodies):
    """One WORK record per body, and one more whose s* fields are the scratch of every pass."""
    return np.zeros(nbodies + 1, dtype=WORK)


@njit(cache=True)
def scratch(work):
    """The pass-wide scratch record (the last).  Rows of s6 by user: 0 outward_pass / placements_and_twists;
    1-5 accumulate, regressor_blocks, rnea, aba (6-9 free)."""
    return work[work.shape[0] - 1]


# ---- small fixed-size algebra, written out so that nothing allocates ----------------------------------------
# On scalars, returning tuples (they stay in registers; inlined where they are called):
@njit(cache=True, inline="always")
def cross(a0, a1, a2, b0, b1, b2):
    """a x b of two 3-vectors given by their components."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def body_coordinates(R, p, x):
    """Ad^-1 x = [R^T (x_v - p x x_w); R^T x_w] for the pose (R, p) of a frame: the twist x in that frame, as a
    6-tuple."""
    x0, x1, x2, x3, x4, x5 = x[0], x[1], x[2], x[3], x[4], x[5]
    y0, y1, y2 = cross(p[0], p[1], p[2], x3, x4, x5)
    d0, d1, d2 = x0 - y0, x1 - y1, x2 - y2
    return (R[0, 0] * d0 + R[1, 0] * d1 + R[2, 0] * d2, R[0, 1] * d0 + R[1, 1] * d1 + R[2, 1] * d2,
            R[0, 2] * d0 + R[1, 2] * d1 + R[2, 2] * d2, R[0, 0] * x3 + R[1, 0] * x4 + R[2, 0] * x5,
            R[0, 1] * x3 + R[1, 1] * x4 + R[2, 1] * x5, R[0, 2] * x3 + R[1, 2] * x4 + R[2, 2] * x5)


@njit(cache=True, inline="always")
def inertia_times(pi, x0, x1, x2, x3, x4, x5):
    """Lambda(pi) x = [m x_v - h x x_w; h x x_v + I x_w], h = m c (paper 002, appendix), as a 6-tuple: from the
    10 parameters in 24 multiplications instead of 36."""
    m, h0, h1, h2 = pi[0], pi[1], pi[2], pi[3]
    y0, y1, y2 = cross(h0, h1, h2, x3, x4, x5)
    z0, z1, z2 = cross(h0, h1, h2, x0, x1, x2)
    return (m * x0 - y0, m * x1 - y1, m * x2 - y2,
            pi[4] * x3 + pi[7] * x4 + pi[8] * x5 + z0,
            pi[7] * x3 + pi[5] * x4 + pi[9] * x5 + z1,
            pi[8] * x3 + pi[9] * x4 + pi[6] * x5 + z2)


# On arrays:
@njit(cache=True)
def rot(R, x, out):
    """out = R x for 3-vectors (out must not alias x)."""
    for i in range(3):
        out[i] = R[i, 0] * x[0] + R[i, 1] * x[1] + R[i, 2] * x[2]


@njit(cache=True)
def cross_add(a, b, out, sign):
    """out += sign (a x b)."""
    out[0] += sign * (a[1] * b[2] - a[2] * b[1])
    out[1] += sign * (a[2] * b[0] - a[0] * b[2])
    out[2] += sign * (a[0] * b[1] - a[1] * b[0])


@njit(cache=True)
def matmul3(A, B, out):
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(cache=True)
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True)
def ad_apply(s, x, out):
    """out = adj(s) x = [s_w x x_v + s_v x x_w; s_w x x_w], the Lie bracket (paper 002, appendix)."""
    for i in range(6):
        out[i] = 0.0
    cross_add(s[3:], x[:3], out[:3], 1.0)
    cross_add(s[:3], x[3:], out[:3], 1.0)
    cross_add(s[3:], x[3:], out[3:], 1.0)


@njit(cache=True)
def to_world(R, p, x, out):
    """out = Ad_{0,k} x = [R x_v + p x R x_w; R x_w]: a body-frame twist in the world frame."""
    rot(R, x[3:], out[3:])
    rot(R, x[:3], out[:3])
    cross_add(p, out[3:], out[:3], 1.0)


@njit(cache=True)
def to_body(R, p, x, out):
    """out = Ad_{0,k}^-1 x: a world twist in the body frame (body_coordinates)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = body_coordinates(R, p, x)


@njit(cache=True)
def inertia_apply(pi, x, out):
    """out = Lambda(pi) x (inertia_times)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = inertia_times(pi, x[0], x[1], x[2], x[3], x[4], x[5])


# ---- joints -----------------------------------------------------------------------------------------------
@njit(cache=True)
def joint_transform(b, q, R, p):
    """R, p <- the motion T_J(q) of body b's joint (child frame in joint frame).  Returns ERR_QUAT for a zero
    quaternion; a non-unit one is used normalized (the caller's q is not modified)."""
    i, t = b.iq, b.jtype
    for r in range(3):
        p[r] = 0.0
    if t == REVOLUTE or t == PLANAR:
        angle = q[i + 2] if t == PLANAR else b.mult * q[i] + b.offset
        a = b.axis
        s, c = np.sin(angle), np.cos(angle)
        c1 = 1.0 - c
        R[0, 0], R[0, 1], R[0, 2] = c + a[0] * a[0] * c1, a[0] * a[1] * c1 - a[2] * s, a[0] * a[2] * c1 + a[1] * s
        R[1, 0], R[1, 1], R[1, 2] = a[1] * a[0] * c1 + a[2] * s, c + a[1] * a[1] * c1, a[1] * a[2] * c1 - a[0] * s
        R[2, 0], R[2, 1], R[2, 2] = a[2] * a[0] * c1 - a[1] * s, a[2] * a[1] * c1 + a[0] * s, c + a[2] * a[2] * c1
        if t == PLANAR:                                  # translate along the plane's e1, e2 (Xi's columns)
            for r in range(3):
                p[r] = q[i] * b.Xi[r, 0] + q[i + 1] * b.Xi[r, 1]
        return 0
    if t == PRISMATIC:
        d = b.mult * q[i] + b.offset
        for r in range(3):
            for c in range(3):
                R[r, c] = 1.0 if r == c else 0.0
            p[r] = b.axis[r] * d
        return 0
    x, y, z, w = q[i + 3], q[i + 4], q[i + 5], q[i + 6]          # FREE: [x, y, z, qx, qy, qz, qw]
    n2 = x * x + y * y + z * z + w * w
    if n2 < 1e-24:
        return ERR_QUAT
    s = 2.0 / n2
    R[0, 0], R[0, 1], R[0, 2] = 1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)
    R[1, 0], R[1, 1], R[1, 2] = s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w)
    R[2, 0], R[2, 1], R[2, 2] = s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y)
    for r in range(3):
        p[r] = q[i + r]
    return 0


@njit(cache=True, inline="always")       # inlined: a numba call reference-counts each array view it is passed
def placement(b, q, RJ, pJ, R_pk, p_pk):
    """R_pk, p_pk <- T_{p,k} = T_tree T_J(q), body b in its parent's frame (RJ, pJ: scratch).  0 or ERR_QUAT.
    A revolute joint takes Rodrigues' formula premultiplied by R_tree, R_tree + sin RA + (1 - cos) RA2, and a
    prismatic one p_tree + d Ra (model.py): no 3x3 product per body."""
    t = b.jtype
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
    if joint_transform(b, q, RJ, pJ) != 0:
        return ERR_QUAT
    matmul3(b.R_tree, RJ, R_pk)
    rot(b.R_tree, pJ, p_pk)
    for r in range(3):
        p_pk[r] += b.p_tree[r]
    return 0


@njit(cache=True)
def all_finite(x):
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True


@njit(cache=True)
def outward_pass(bodies, work, q, v, with_rates):
    """Poses T_{p,k}, T_{0,k} and world axes S of every body; with_rates: also V_k and Sdot.  Paper 002,
    section VI: Ad_{0,k}^-1 = Ad_{p,k}^-1 Ad_{0,p}^-1 and eqs. (26)-(28) in world coordinates.
    Returns 0, or ERR_QUAT for a zero quaternion in q."""
    sc = scratch(work)
    RJ, pJ, col = sc.s33, sc.s3, sc.s6[0]
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        if placement(b, q, RJ, pJ, w.R_pk, w.p_pk) != 0:
            return ERR_QUAT
        if b.parent < 0:                     # element by element: an array-to-array slice copy makes numba
            for r in range(3):               # compile its broadcasting error messages (seconds at first use)
                for c in range(3):
                    w.R0[r, c] = w.R_pk[r, c]
                w.p0[r] = w.p_pk[r]
        else:
            wp = work[b.parent]
            matmul3(wp.R0, w.R_pk, w.R0)                           # T_{0,k} = T_{0,p} T_{p,k}
            rot(wp.R0, w.p_pk, w.p0)
            for r in range(3):
                w.p0[r] += wp.p0[r]
        if b.jtype == REVOLUTE:                                    # S = Ad_{0,k} (mult Xi_k), eq. (27):
            S = w.S[:, 0]                                          # [p0 x w; w] with w = mult R0 a
            rot(w.R0, b.axis, S[3:])
            for r in range(3):
                S[3 + r] *= b.mult
                S[r] = 0.0
            cross_add(w.p0, S[3:], S[:3], 1.0)
        else:
            for c in range(b.nvj):
                for r in range(6):
                    col[r] = b.mult * b.Xi[r, c]
                to_world(w.R0, w.p0, col, w.S[:, c])
        if with_rates:
            for r in range(6):                                     # V_k = V_p + S qdot, eq. (26)
                w.V[r] = 0.0 if b.parent < 0 else work[b.parent].V[r]
            for c in range(b.nvj):
                for r in range(6):
                    w.V[r] += w.S[r, c] * v[b.iv + c]
            for c in range(b.nvj):                                 # d/dt S = ad(V_k) S, eq. (28)
                ad_apply(w.V, w.S[:, c], w.Sd[:, c])
    return 0
