"""Configuration-space operations: neutral, random, integrate (q + v dt on the manifold) and difference.

Revolute and prismatic coordinates add; a free joint moves by the SE(3) exponential of its body twist,
q(t + dt) = T(q) exp(v dt), a ball joint by the SO(3) exponential of its body angular velocity, R(q) exp(w dt), and
a planar joint by the SE(2) exponential -- Pinocchio's conventions (its free flyer, spherical and planar joints), so
that a simulated trajectory matches Pinocchio's `integrate` one-to-one.
"""

import numpy as np
from numba import njit

from .model import BALL, FREE, PLANAR
from .spatial import adj


@njit(cache=True)
def _left_jacobian_times(r0, r1, r2, u0, u1, u2):
    """V(r) u on scalars, V the left Jacobian of SO(3): exp([u; r]) moves the origin by V(r) u.

    With r = t k, |k| = 1: V u = u + (1 - cos t)/t k x u + (1 - sin t/t) k x (k x u), in the unit axis so that no
    power of t overflows; below t = 1e-8 the Taylor series to second order, u + r x u / 2 + r x (r x u) / 6."""
    t = np.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    if t < 1e-8:
        a, b = 0.5, 1.0 / 6.0
    else:
        r0, r1, r2 = r0 / t, r1 / t, r2 / t
        a, b = (1.0 - np.cos(t)) / t, 1.0 - np.sin(t) / t
    x0, x1, x2 = r1 * u2 - r2 * u1, r2 * u0 - r0 * u2, r0 * u1 - r1 * u0          # r x u
    y0, y1, y2 = r1 * x2 - r2 * x1, r2 * x0 - r0 * x2, r0 * x1 - r1 * x0          # r x (r x u)
    return u0 + a * x0 + b * y0, u1 + a * x1 + b * y1, u2 + a * x2 + b * y2


@njit(cache=True)
def _unit_quaternion(q, i):
    """(code, x, y, z, w): q[i:i + 4] made unit (_norm4); code -1, or i for a zero (norm below 1e-12) or not
    finite quaternion, zeros then."""
    n = _norm4(q, i)
    if not (n >= 1e-12 and n < np.inf):
        return i, 0.0, 0.0, 0.0, 0.0
    return -1, q[i] / n, q[i + 1] / n, q[i + 2] / n, q[i + 3] / n


@njit(cache=True)
def _quaternion_step(q, i, r0, r1, r2, out, hemisphere):
    """out[i:i + 4] <- q[i:i + 4] made unit (x) exp(r / 2): the quaternion [qx, qy, qz, qw] turned by the body
    rotation vector r, normalized.  The product keeps the sign of the quaternion continuous along a trajectory (no
    jump to -q); with ``hemisphere`` the result is also turned into q's hemisphere (-c where c . q < 0, which only
    a turn beyond pi can give) -- Pinocchio's conventions: its free flyer does that, its spherical joint keeps the
    product.  Returns _unit_quaternion's code."""
    code, a0, a1, a2, aw = _unit_quaternion(q, i)
    if code >= 0:
        return code
    t = np.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    s = 0.5 - t * t / 48.0 if t < 1e-6 else np.sin(0.5 * t) / t
    b0, b1, b2, bw = s * r0, s * r1, s * r2, np.cos(0.5 * t)
    c0 = aw * b0 + bw * a0 + a1 * b2 - a2 * b1
    c1 = aw * b1 + bw * a1 + a2 * b0 - a0 * b2
    c2 = aw * b2 + bw * a2 + a0 * b1 - a1 * b0
    cw = aw * bw - (a0 * b0 + a1 * b1 + a2 * b2)
    n = np.sqrt(c0 * c0 + c1 * c1 + c2 * c2 + cw * cw)
    if hemisphere and c0 * a0 + c1 * a1 + c2 * a2 + cw * aw < 0.0:
        n = -n
    out[i], out[i + 1], out[i + 2], out[i + 3] = c0 / n, c1 / n, c2 / n, cw / n
    return -1


@njit(cache=True)
def _finite(x):
    """Every entry of the 1-D array x is finite (the sum of x * 0 is 0, NaN otherwise): calls.compiling.finite's
    rule, written here because that module lies a layer above this one (test_architecture.LAYERS)."""
    nan = 0.0
    for i in range(x.shape[0]):
        nan += x[i] * 0.0
    return nan == 0.0


OK, Q_NOT_FINITE, W_NOT_FINITE, ZERO_QUATERNION, OVERFLOW = range(5)       # lie_integrate's, difference_rows'


@njit(cache=True)
def _inputs_finite(a, b):
    """OK, or Q_NOT_FINITE where a (1-D) holds a NaN or inf, else W_NOT_FINITE where b does."""
    return OK if _finite(a) and _finite(b) else (Q_NOT_FINITE if not _finite(a) else W_NOT_FINITE)


@njit(cache=True)
def lie_integrate(Q, W, dt, scalar_q, scalar_v, free_q, free_v, ball_q, ball_v, out):
    """out[b] <- Q[b] (+) W[b] dt for each row b of Q (B, nq) and W (B, nv): 1-DoF joints add; a free joint (iq, iv)
    moves by SE(3)'s exponential of its body twist w = [u; r] dt, p <- p + R(quat) V(r) u (_left_jacobian_times),
    quat <- quat (x) exp(r / 2) in quat's hemisphere (_quaternion_step); a ball joint's quaternion likewise, the
    product as it is; other coordinates (planar joints: the caller's; mimic joints) copied.  The quaternions of Q
    are made unit first (_norm4).  ConfigurationSpace.integrate compiled.  Returns (OK, 0, 0), or (what, b, i) for
    the first row b that is not integrated: Q_NOT_FINITE, W_NOT_FINITE (_inputs_finite), ZERO_QUATERNION
    (Q[b, i:i + 4]) or OVERFLOW (out[b] not finite)."""
    for b in range(Q.shape[0]):
        what, i = _integrate_row(Q[b], W[b], dt, scalar_q, scalar_v, free_q, free_v, ball_q, ball_v, out[b])
        if what != OK:
            return what, b, i
    return OK, 0, 0


@njit(cache=True)
def _integrate_row(q, w, dt, scalar_q, scalar_v, free_q, free_v, ball_q, ball_v, o):
    """lie_integrate for one row: o <- q (+) w dt; (OK, 0) or (what, i)."""
    what = _inputs_finite(q, w)
    if what != OK:
        return what, 0
    for i in range(q.shape[0]):
        o[i] = q[i]
    for k in range(scalar_q.shape[0]):
        o[scalar_q[k]] += w[scalar_v[k]] * dt
    for j in range(free_q.shape[0]):
        iq, iv = free_q[j], free_v[j]
        r0, r1, r2 = w[iv + 3] * dt, w[iv + 4] * dt, w[iv + 5] * dt
        n = _norm4(q, iq + 3)
        if not (n >= 1e-12 and n < np.inf):
            return ZERO_QUATERNION, iq + 3
        R = _rotation_entries(q, iq + 3, n)
        d0, d1, d2 = _left_jacobian_times(r0, r1, r2, w[iv] * dt, w[iv + 1] * dt, w[iv + 2] * dt)
        for a in range(3):
            o[iq + a] += R[3 * a] * d0 + R[3 * a + 1] * d1 + R[3 * a + 2] * d2
        _quaternion_step(q, iq + 3, r0, r1, r2, o, True)
    for j in range(ball_q.shape[0]):
        iv = ball_v[j]
        code = _quaternion_step(q, ball_q[j], w[iv] * dt, w[iv + 1] * dt, w[iv + 2] * dt, o, False)
        if code >= 0:
            return ZERO_QUATERNION, code
    if not _finite(o):
        return OVERFLOW, 0
    return OK, 0


def _se2_translation(v):
    """The translation, in the moving frame, of exp of the planar body twist [vx, vy, w] (its rotation is w)."""
    vx, vy, w = v
    if abs(w) < 1e-8:
        return np.array([vx - 0.5 * w * vy, vy + 0.5 * w * vx])
    s, c1 = np.sin(w) / w, (1.0 - np.cos(w)) / w
    return np.array([s * vx - c1 * vy, c1 * vx + s * vy])


def _rot2(t):
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


@njit(cache=True)
def so3_log(R, out=None):
    """w (3,) with exp(w~) = R (3, 3), |w| <= pi, into out (3,) if given (_log_entries)."""
    if out is None:
        out = np.empty(3)
    out[0], out[1], out[2] = _log_entries(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1],
                                          R[2, 2])
    return out


@njit(cache=True)
def _log_entries(r00, r01, r02, r10, r11, r12, r20, r21, r22):
    """so3_log of R = [[r00, r01, r02], ...] on scalars: (w0, w1, w2), t = |w| = arccos((tr R - 1) / 2); below t =
    1e-8 w = vee(R - R^T) / 2, near pi the axis from the symmetric part of R (its column of the largest diagonal
    entry, (R + E) / 2 = k k^T there), its sign from the antisymmetric part, else w = t / (2 sin t) vee(R - R^T)."""
    c = min(max((r00 + r11 + r22 - 1.0) / 2.0, -1.0), 1.0)
    t = np.arccos(c)
    a0, a1, a2 = r21 - r12, r02 - r20, r10 - r01
    if t < 1e-8:
        return 0.5 * a0, 0.5 * a1, 0.5 * a2
    if np.pi - t < 1e-6:
        d, x0, x1, x2 = r00, r00 + 1.0, r10, r20
        if r11 > d:
            d, x0, x1, x2 = r11, r01, r11 + 1.0, r21
        if r22 > d:
            d, x0, x1, x2 = r22, r02, r12, r22 + 1.0
        b = np.sqrt((d + 1.0) / 2.0)
        x0, x1, x2 = (x0 / 2.0) / b, (x1 / 2.0) / b, (x2 / 2.0) / b
        sign = 1.0 if x0 * a0 + x1 * a1 + x2 * a2 >= 0.0 else -1.0
        return x0 * (t * sign), x1 * (t * sign), x2 * (t * sign)
    s = t / (2.0 * np.sin(t))
    return s * a0, s * a1, s * a2


@njit(cache=True)
def _norm4(q, i):
    """|q[i:i + 4]|: a quaternion's norm (below 1e-12, or not finite: a zero quaternion, normalize's bound), scaled
    by its largest entry first so that no square overflows or underflows (ConfigurationSpace.normalize's rule)."""
    scale = max(abs(q[i]), abs(q[i + 1]), abs(q[i + 2]), abs(q[i + 3]))
    if scale == 0.0:
        return 0.0
    x, y, z, w = q[i] / scale, q[i + 1] / scale, q[i + 2] / scale, q[i + 3] / scale
    return scale * np.sqrt(x * x + y * y + z * z + w * w)


@njit(cache=True)
def _rotation_entries(q, i, n):
    """The rotation matrix, row-major (9 scalars), of the quaternion q[i:i + 4] = [qx, qy, qz, qw] divided by its
    norm n (spatial.quaternion_rotation)."""
    x, y, z, w = q[i] / n, q[i + 1] / n, q[i + 2] / n, q[i + 3] / n
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
            2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
            2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y))


@njit(cache=True, inline="always")
def _column_dot(A, a, B, b):
    """Column a of A times column b of B, both 3 x 3 row-major tuples: (A^T B)[a, b]."""
    return A[a] * B[b] + A[3 + a] * B[3 + b] + A[6 + a] * B[6 + b]


_ZERO9 = (0.0,) * 9


@njit(cache=True)
def _relative_log(q0, q1, i):
    """(code, w0, w1, w2, R0): w = log(R0^T R1) of the quaternions q0[i:i + 4], q1[i:i + 4] made unit, and R0
    row-major (9 scalars); code -1, or 0 (q0's) or 1 (q1's) for a zero or not finite quaternion, nothing else
    computed."""
    n0, n1 = _norm4(q0, i), _norm4(q1, i)
    if not n0 >= 1e-12:
        return 0, 0.0, 0.0, 0.0, _ZERO9
    if not n1 >= 1e-12:
        return 1, 0.0, 0.0, 0.0, _ZERO9
    A, B = _rotation_entries(q0, i, n0), _rotation_entries(q1, i, n1)
    w0, w1, w2 = _log_entries(_column_dot(A, 0, B, 0), _column_dot(A, 0, B, 1), _column_dot(A, 0, B, 2),
                              _column_dot(A, 1, B, 0), _column_dot(A, 1, B, 1), _column_dot(A, 1, B, 2),
                              _column_dot(A, 2, B, 0), _column_dot(A, 2, B, 1), _column_dot(A, 2, B, 2))
    return -1, w0, w1, w2, A



@njit(cache=True)
def _free_difference(q0, q1, free_q, free_v, out):
    """out[iv:iv + 6] = log(T(q0)^-1 T(q1)) for each free joint (iq, iv), on scalars (no array made): w = log(R0^T
    R1) (_relative_log), the linear part u = V(w)^-1 d, d = R0^T (p1 - p0), V the left Jacobian of SO(3)
    (_left_jacobian_times) in closed form, V^-1 = E - w~ / 2 + c w~^2, c = (1 - (t / 2) cot(t / 2)) / t^2 (t = |w|;
    below 1e-2 its series 1/12 + t^2 / 720 + t^4 / 30240) -- ConfigurationSpace.difference compiled, the quaternions made unit
    first.  Returns -1, or 2 j (q0) or 2 j + 1 (q1) for the first zero (or not finite) quaternion of free joint j,
    nothing written for it."""
    for j in range(free_q.shape[0]):
        iq, iv = free_q[j], free_v[j]
        code, w0, w1, w2, A = _relative_log(q0, q1, iq + 3)
        if code >= 0:
            return 2 * j + code
        p0, p1, p2 = q1[iq] - q0[iq], q1[iq + 1] - q0[iq + 1], q1[iq + 2] - q0[iq + 2]
        d0, d1, d2 = (A[0] * p0 + A[3] * p1 + A[6] * p2, A[1] * p0 + A[4] * p1 + A[7] * p2,
                      A[2] * p0 + A[5] * p1 + A[8] * p2)
        t2 = w0 * w0 + w1 * w1 + w2 * w2
        t = np.sqrt(t2)
        c = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0 if t < 1e-2 else (1.0 - 0.5 * t * np.cos(0.5 * t) / np.sin(0.5 * t)) / t2
        x0, x1, x2 = w1 * d2 - w2 * d1, w2 * d0 - w0 * d2, w0 * d1 - w1 * d0           # w x d
        y0, y1, y2 = w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0           # w x (w x d)
        out[iv], out[iv + 1], out[iv + 2] = d0 - 0.5 * x0 + c * y0, d1 - 0.5 * x1 + c * y1, d2 - 0.5 * x2 + c * y2
        out[iv + 3], out[iv + 4], out[iv + 5] = w0, w1, w2
    return -1


@njit(cache=True)
def _ball_difference(q0, q1, ball_q, ball_v, out):
    """out[iv:iv + 3] = log(R(q0)^T R(q1)) for each ball joint (iq, iv) (_relative_log), the quaternions made unit
    first.  Returns -1, or 2 j (q0) or 2 j + 1 (q1) for the first zero (or not finite) quaternion of ball joint j,
    nothing written for it."""
    for j in range(ball_q.shape[0]):
        code, w0, w1, w2, _ = _relative_log(q0, q1, ball_q[j])
        if code >= 0:
            return 2 * j + code
        out[ball_v[j]], out[ball_v[j] + 1], out[ball_v[j] + 2] = w0, w1, w2
    return -1


@njit(cache=True)
def lie_difference(q0, q1, free_q, free_v, ball_q, ball_v, out):
    """out's entries of the free and ball joints of q1 (-) q0 (_free_difference, then _ball_difference): what
    ConfigurationSpace.difference and the controllers' compiled ticks compute beyond q1 - q0.  Returns -1, or the
    code of the first zero (or not finite) quaternion: _free_difference's, else 2 len(free_q) + _ball_difference's."""
    bad = _free_difference(q0, q1, free_q, free_v, out) if free_q.size else -1
    if bad < 0 and ball_q.size:
        bad = _ball_difference(q0, q1, ball_q, ball_v, out)
        if bad >= 0:
            bad += 2 * free_q.size
    return bad


@njit(cache=True)
def difference_rows(Q0, Q1, scalar_q, scalar_v, free_q, free_v, ball_q, ball_v, out):
    """out[b] <- Q1[b] (-) Q0[b] for each row b of Q0, Q1 (B, nq) -> out (B, nv): 1-DoF joints subtract, free and
    ball joints by lie_difference (their quaternions made unit), other entries (planar joints: the caller's) zero.
    Returns (OK, 0, 0), or (what, b, i) for the first row b that is not done: Q_NOT_FINITE (Q0's) or W_NOT_FINITE
    (Q1's), ZERO_QUATERNION (lie_difference's code i) or OVERFLOW (out[b] not finite)."""
    for b in range(Q0.shape[0]):
        what, i = _difference_row(Q0[b], Q1[b], scalar_q, scalar_v, free_q, free_v, ball_q, ball_v, out[b])
        if what != OK:
            return what, b, i
    return OK, 0, 0


@njit(cache=True)
def _difference_row(q0, q1, scalar_q, scalar_v, free_q, free_v, ball_q, ball_v, o):
    """difference_rows for one row: o <- q1 (-) q0; (OK, 0) or (what, i)."""
    what = _inputs_finite(q0, q1)
    if what != OK:
        return what, 0
    for i in range(o.shape[0]):
        o[i] = 0.0
    for k in range(scalar_q.shape[0]):
        o[scalar_v[k]] = q1[scalar_q[k]] - q0[scalar_q[k]]
    if free_q.size or ball_q.size:
        bad = lie_difference(q0, q1, free_q, free_v, ball_q, ball_v, o)
        if bad >= 0:
            return ZERO_QUATERNION, bad
    if not _finite(o):
        return OVERFLOW, 0
    return OK, 0


class ConfigurationSpace:
    """Index sets of a model's coordinates: 1-DoF joints add, free, ball and planar joints use their group law.

    free, ball, planar: (iq, iv) of each such joint; quaternions: where each unit quaternion [qx, qy, qz, qw] starts
    in q; lie: some coordinates do not simply add (q_d (-) q is then `difference`'s)."""

    def __init__(self, model):
        jtype = model.bodies["jtype"]
        independent = [j for j in model.joints if j.mimic is None]
        self.nq, self.nv = model.nq, model.nv
        self.scalar_q = np.array([j.idx_q for j in independent if j.nq == 1], dtype=np.int64)
        self.scalar_v = np.array([j.idx_v for j in independent if j.nq == 1], dtype=np.int64)
        self.prismatic = np.array([j.idx_q for j in independent if j.type == "prismatic"], dtype=np.int64)
        self.free = [(j.idx_q, j.idx_v) for j in independent if jtype[j.body] == FREE]
        self.free_q = np.array([iq for iq, _ in self.free], dtype=np.int64)
        self.free_v = np.array([iv for _, iv in self.free], dtype=np.int64)
        self.ball = [(j.idx_q, j.idx_v) for j in independent if jtype[j.body] == BALL]
        self.ball_q = np.array([iq for iq, _ in self.ball], dtype=np.int64)
        self.ball_v = np.array([iv for _, iv in self.ball], dtype=np.int64)
        self.planar = [(j.idx_q, j.idx_v) for j in independent if jtype[j.body] == PLANAR]
        self.quaternions = sorted([iq + 3 for iq, _ in self.free] + [iq for iq, _ in self.ball])
        # Lie groups among the joints: the velocity slice and the basis Xi (6, n) of its algebra in se(3)
        self.groups = [(j.idx_v, model.bodies["Xi"][j.body][:, :j.nv]) for j in independent
                       if jtype[j.body] in (FREE, BALL, PLANAR)]
        self.lie = bool(self.groups)

    def neutral(self):
        q = np.zeros(self.nq)
        for i in self.quaternions:
            q[i + 3] = 1.0
        return q

    def random(self, rng):
        """Revolute angles in [-pi, pi], prismatic and planar/free positions in [-0.5, 0.5] m, uniform rotations
        (free and ball joints)."""
        q = np.zeros(self.nq)
        q[self.scalar_q] = rng.uniform(-np.pi, np.pi, self.scalar_q.size)
        q[self.prismatic] = rng.uniform(-0.5, 0.5, self.prismatic.size)
        for iq, _ in self.planar:
            q[iq:iq + 3] = [*rng.uniform(-0.5, 0.5, 2), rng.uniform(-np.pi, np.pi)]
        for iq, _ in self.free:
            quat = rng.normal(size=4)
            q[iq:iq + 7] = [*rng.uniform(-0.5, 0.5, 3), *(quat / np.linalg.norm(quat))]
        for iq, _ in self.ball:
            quat = rng.normal(size=4)
            q[iq:iq + 4] = quat / np.linalg.norm(quat)
        return q

    def normalize(self, q, name="q"):
        """Make every free or ball joint's quaternion in q (..., nq) unit, in place; a zero quaternion (norm below
        1e-12) is a ValueError.  Scaled by its largest entry first, so that no square overflows (or underflows)."""
        for i in self.quaternions:
            quat = q[..., i:i + 4]
            scale = np.max(np.abs(quat), axis=-1, keepdims=True)
            unit = np.divide(quat, scale, out=np.zeros_like(quat), where=scale > 0.0)
            n = np.sqrt(np.sum(unit * unit, axis=-1, keepdims=True))           # in [1, 2], or 0
            if np.any(scale * n < 1e-12):
                raise ValueError(f"{name}[{i}:{i + 4}] is a zero quaternion; expected [qx, qy, qz, qw] "
                                 f"of non-zero norm")
            quat[...] = unit / n
        return q

    def integrate(self, Q, W, dt=1.0, name="q"):
        """Q (+) W dt row by row, Q (B, nq) and W (B, nv) float64 -> (B, nq): the configuration reached from each q
        after moving with constant body velocity w for the time dt (lie_integrate, compiled; planar joints by
        SE(2)'s exponential here); Q's quaternions made unit first.  A ValueError names a zero quaternion, a NaN or inf
        in Q or W, or a result that overflows."""
        Q, W = np.ascontiguousarray(Q, dtype=float), np.ascontiguousarray(W, dtype=float)
        out = np.empty(Q.shape)
        what, row, i = lie_integrate(Q, W, dt, self.scalar_q, self.scalar_v, self.free_q, self.free_v, self.ball_q,
                                     self.ball_v, out)
        if what == ZERO_QUATERNION:
            where = f"{name}[{i}:{i + 4}]" if Q.shape[0] == 1 else f"{name}[{row}, {i}:{i + 4}]"
            raise ValueError(f"{where} is a zero quaternion; expected [qx, qy, qz, qw] of non-zero norm")
        if what != OK:
            raise ValueError(f"{name} contains non-finite values (NaN or inf)" if what == Q_NOT_FINITE else
                             "v contains non-finite values (NaN or inf)" if what == W_NOT_FINITE else
                             "integrate overflows float64 at this state (a result is not finite): v dt too large")
        if not self.planar:
            return out
        for o, w in zip(out, W):
            for iq, iv in self.planar:
                o[iq:iq + 2] += _rot2(o[iq + 2]) @ _se2_translation(dt * w[iv:iv + 3])
                o[iq + 2] += dt * w[iv + 2]
        if not np.isfinite(out).all():
            raise ValueError("integrate overflows float64 at this state (a result is not finite): v dt too large")
        return out

    def integrate_jacobians(self, w):
        """(d/dq, d/dw) of integrate(q, w), both (nv, nv), in tangent coordinates (q perturbed as integrate(q, e),
        as Pinocchio's dIntegrate): the identity for 1-DoF joints; for a free, ball or planar joint, with X = ad(w_j)
        the Lie bracket of its algebra (Xi^T adj(Xi w_j) Xi), exp(-X) = Ad(exp(-w_j)) and the right Jacobian
        sum_k (-X)^k / (k+1)!, both read off exp([[-X, E], [0, 0]])."""
        from scipy.linalg import expm
        Jq, Jw = np.eye(self.nv), np.eye(self.nv)
        for iv, Xi in self.groups:
            n = Xi.shape[1]
            X = Xi.T @ adj(Xi @ w[iv:iv + n]) @ Xi
            E = expm(np.block([[-X, np.eye(n)], [np.zeros((n, 2 * n))]]))
            Jq[iv:iv + n, iv:iv + n], Jw[iv:iv + n, iv:iv + n] = E[:n, :n], E[:n, n:]
        return Jq, Jw

    def difference(self, q0, q1, out=None):
        """v with integrate(q0, v) = q1 (the log of q0^-1 q1 for free, ball and planar joints), into out if given
        (a controller's buffer: the free and ball joints compiled, lie_difference; a zero
        quaternion is a ValueError naming it).  q0, q1 (nq,) float64  ->  (nv,)"""
        v = np.zeros(self.nv) if out is None else out
        v[self.scalar_v] = q1[self.scalar_q] - q0[self.scalar_q]
        bad = lie_difference(q0, q1, self.free_q, self.free_v, self.ball_q, self.ball_v, v) if self.lie else -1
        if bad >= 0:
            name, i = self._quaternion_of(bad)
            raise ValueError(f"{name}[{i}:{i + 4}] is a zero or non-finite quaternion; "
                             f"expected [qx, qy, qz, qw] of non-zero norm")
        self._planar_difference(q0, q1, v)
        return v

    def _quaternion_of(self, bad):
        """("q0" or "q1", where its quaternion starts in q) of lie_difference's code for a zero quaternion."""
        frees = 2 * self.free_q.size
        return ("q0", "q1")[bad % 2], self.free_q[bad // 2] + 3 if bad < frees else self.ball_q[(bad - frees) // 2]

    def _planar_difference(self, q0, q1, v):
        """v's entries of the planar joints of q1 (-) q0: SE(2)'s log."""
        for iq, iv in self.planar:
            w = (q1[iq + 2] - q0[iq + 2] + np.pi) % (2.0 * np.pi) - np.pi
            P, Q = _se2_translation(np.array([1.0, 0.0, w])), _se2_translation(np.array([0.0, 1.0, w]))
            d = _rot2(q0[iq + 2]).T @ (q1[iq:iq + 2] - q0[iq:iq + 2])
            v[iv:iv + 2] = np.linalg.solve(np.column_stack([P, Q]), d)
            v[iv + 2] = w

    def differences(self, Q0, Q1):
        """Q1 (-) Q0 row by row, Q0 and Q1 (B, nq) -> (B, nv) (difference_rows, compiled; planar joints here); a
        ValueError names a NaN or inf, a zero quaternion, or a result that overflows."""
        Q0, Q1 = np.ascontiguousarray(Q0, dtype=float), np.ascontiguousarray(Q1, dtype=float)
        out = np.empty((Q0.shape[0], self.nv))
        what, row, bad = difference_rows(Q0, Q1, self.scalar_q, self.scalar_v, self.free_q, self.free_v,
                                         self.ball_q, self.ball_v, out)
        if what == ZERO_QUATERNION:
            name, i = self._quaternion_of(bad)
            where = f"{name}[{i}:{i + 4}]" if Q0.shape[0] == 1 else f"{name}[{row}, {i}:{i + 4}]"
            raise ValueError(f"{where} is a zero quaternion; expected [qx, qy, qz, qw] of non-zero norm")
        if what != OK:
            raise ValueError("q0 contains non-finite values (NaN or inf)" if what == Q_NOT_FINITE else
                             "q1 contains non-finite values (NaN or inf)" if what == W_NOT_FINITE else
                             "difference overflows float64 at this state (a result is not finite): q1 - q0 too large")
        if self.planar:
            for v, q0, q1 in zip(out, Q0, Q1):
                self._planar_difference(q0, q1, v)
            if not np.isfinite(out).all():
                raise ValueError("difference overflows float64 at this state (a result is not finite): q1 - q0 "
                                 "too large")
        return out
