"""Contact-constrained forward dynamics: the KKT system
    [M  J^T] [ a ]   [tau - C v - g]
    [J   0 ] [-f ] = [   -gamma    ],     gamma = Jdot v + Kp e + Kd J v,
of m contact rows J (m, nv) -- 3 per point contact (the linear rows of a frame's Jacobian), 6 per surface contact
-- solved in O(n) per row through the innovations factorization M = L D L^T (paper 003, Identity 4.1; see
innovations.py), without forming M or M^-1:
    a_0 = M^-1 (tau - C v - g)                                 the unconstrained acceleration
    (J M^-1 J^T + mu E) f = -(J a_0 + gamma)                   f: the contact forces on the robot
    a = a_0 + M^-1 J^T f,
so that J a + Jdot v = -(Kp e + Kd J v) (exactly when mu = 0): the frames' classical accelerations follow the
Baumgarte law (Baumgarte, "Stabilization of constraints and integrals of motion in dynamical systems", Comput.
Methods Appl. Mech. Eng. 1, 1972), e the frame's position error (and, for a surface, its rotation error
log(R R_target^T)).  mu > 0 is a damping for redundant or singular sets (a least-squares compromise).

The Delassus matrix J M^-1 J^T by eq. (4.1d), M^-1 = [I - H psi K]^* D^-1 [I - H psi K]:  J M^-1 J^T =
Y^T D^-1 Y with Y = [I - H psi K] J^T, whose block of body j is S_j^T W_j, where the wrenches W_j (6, m) are
carried from each contact's body to the root by the articulated-body transmission of innovations.py,
    W_k = X^T (the contact's unit wrenches, world frame),   W_p += (E - G_j S_j^T) W_j,
so that J M^-1 J^T = sum_j (S_j^T W_j)^T D_j^-1 (S_j^T W_j), summed over the contacts' supports only (each body
touches the columns of the contacts below it).  M^-1 J^T f is then the outward half of the same solve on the one
vector Y f: qddot_j = D_j^-1 S_j^T W_j f - G_j^T A_p, A_j = A_p + S_j qddot_j.  a_0 takes one world-frame
Newton-Euler pass at qddot = 0 (b = C v + g: A_k = A_p + Sdot_k qdot_k, F_k = Lambda_k^w (A_k + gamma_0) +
V_k x* Lambda_k^w V_k summed inward, b_j = S_j^T F_j) and innovations.solve_terms on tau - b.

Rows and forces are in the contact's reference, as frame_jacobian's: "local_world_aligned" (world axes at the
frame's origin) or "local" (the frame's axes): a point contact's force [f] (3,), a surface's wrench [f; tau_f]
(6,) about the frame's origin.  J a + Jdot v is the frame's classical acceleration (frames.py: [pddot; wdot] in
world axes, rotated into the frame's for "local"), which is also the time derivative of its "local_world_aligned"
twist: a contact at rest stays at rest.

The contact set travels into the kernel as one array `spec`: HEADER entries [number of contacts, m, Kp, Kd, mu], then
CONTACT_SIZE per contact: [body, rows (3 or 6), first row, reference code, R_kf (row by row), p_kf, has target,
R_target (row by row), p_target].

M is the robot's with the drives' armature (drives.py): `factor` puts it into D, and the Newton-Euler bias b
(qddot = 0) has no armature term, so a_0, J M^-1 J^T and M^-1 J^T f are those of M + diag(armature).
"""
import numpy as np
from numba import njit

from .frames import LOCAL
from .innovations import factor, solve_terms
from .kinematics import check_inputs, outward_pass
from .operators import CONTRACT, bias_force, cross, rotate, spatial_inertia_times

WORK = [
    ("Ac", np.float64, (6,)),                                     # A_k = sum Sdot qdot, world frame
    ("Fn", np.float64, (6,)),                                     # F_k of Newton-Euler at qddot = 0, then summed
    ("dA", np.float64, (6,)),                                     # the accelerations M^-1 J^T f adds, world
    ("cmask", np.int64),                                          # bit i: contact i lies in the body's subtree
]

HEADER, CONTACT_SIZE = 5, 29
ERR_REDUNDANT = 3                   # J M^-1 J^T + mu E is singular: a redundant or singular constraint set
MAX_CONTACTS = 63                   # cmask's bits
EXTRA = 14                          # L's columns after the m x m block: rhs, f, K^T (6), D^-1 K^T (6)


@njit(cache=True, fastmath=CONTRACT)
def free_acceleration(bodies, work, gravity, v, tau, a):
    """a <- a_0 = M^-1 (tau - C v - g), after the outward pass with rates and `factor`; leaves A_k in Ac and the
    accelerations of a_0 (sum S qddot, world) in innovations' ab."""
    nb = bodies.shape[0]
    for k in range(nb):                                            # outward: A_k, F_k
        b, w = bodies[k], work[k]
        A = w.Ac
        for r in range(6):
            A[r] = 0.0 if b.parent < 0 else work[b.parent].Ac[r]
        for c in range(b.nvj):
            s = v[b.iv + c]
            for r in range(6):
                A[r] += w.Sd[r, c] * s
        l0, l1, l2, l3, l4, l5 = spatial_inertia_times(w.pw, A[0] - gravity[0], A[1] - gravity[1],
                                                       A[2] - gravity[2], A[3], A[4], A[5])
        g0, g1, g2, g3, g4, g5 = bias_force(w.pw, w.V)
        F = w.Fn
        F[0], F[1], F[2], F[3], F[4], F[5] = l0 + g0, l1 + g1, l2 + g2, l3 + g3, l4 + g4, l5 + g5
    for k in range(nb - 1, -1, -1):                                # inward: b_k = S_k^T F_k, F_p += F_k
        b, w = bodies[k], work[k]
        F = w.Fn
        for c in range(b.nvj):
            a[b.iv + c] = tau[b.iv + c] - (w.S[0, c] * F[0] + w.S[1, c] * F[1] + w.S[2, c] * F[2]
                                           + w.S[3, c] * F[3] + w.S[4, c] * F[4] + w.S[5, c] * F[5])
        if b.parent >= 0:
            Fp = work[b.parent].Fn
            for r in range(6):
                Fp[r] += F[r]
    solve_terms(bodies, work, a, a)       # reads every right-hand side (inward) before writing any result


@njit(cache=True, fastmath=CONTRACT, inline="always")
def frame_pose(w, spec, o):
    """(R_f as a 9-tuple row by row, p_f as a 3-tuple): T_{0,f} = T_{0,k} T_{k,f} of the contact at spec[o:]."""
    R0 = w.R0
    r00, r10, r20 = rotate(R0, spec[o + 4], spec[o + 7], spec[o + 10])         # R_0k R_kf, column by column
    r01, r11, r21 = rotate(R0, spec[o + 5], spec[o + 8], spec[o + 11])
    r02, r12, r22 = rotate(R0, spec[o + 6], spec[o + 9], spec[o + 12])
    x0, x1, x2 = rotate(R0, spec[o + 13], spec[o + 14], spec[o + 15])
    return (r00, r01, r02, r10, r11, r12, r20, r21, r22), (w.p0[0] + x0, w.p0[1] + x1, w.p0[2] + x2)


@njit(cache=True, fastmath=CONTRACT, inline="always")
def times_transpose(R, spec, o):
    """R T^T (9-tuple, row by row) for R a 9-tuple and T = spec[o:o + 9], both row by row."""
    return (R[0] * spec[o] + R[1] * spec[o + 1] + R[2] * spec[o + 2],
            R[0] * spec[o + 3] + R[1] * spec[o + 4] + R[2] * spec[o + 5],
            R[0] * spec[o + 6] + R[1] * spec[o + 7] + R[2] * spec[o + 8],
            R[3] * spec[o] + R[4] * spec[o + 1] + R[5] * spec[o + 2],
            R[3] * spec[o + 3] + R[4] * spec[o + 4] + R[5] * spec[o + 5],
            R[3] * spec[o + 6] + R[4] * spec[o + 7] + R[5] * spec[o + 8],
            R[6] * spec[o] + R[7] * spec[o + 1] + R[8] * spec[o + 2],
            R[6] * spec[o + 3] + R[7] * spec[o + 4] + R[8] * spec[o + 5],
            R[6] * spec[o + 6] + R[7] * spec[o + 7] + R[8] * spec[o + 8])


@njit(cache=True, fastmath=CONTRACT, inline="always")
def rotation_log(R):
    """log(R) (3,): the rotation vector u with exp([u]x) = R, R (9,) row by row; accurate near 0 and near pi."""
    c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    c = min(1.0, max(-1.0, c))
    s0, s1, s2 = 0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1])     # sin(t) * axis
    s = np.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    t = np.arctan2(s, c)
    if c > -0.9:                                                   # t < ~2.69: from the skew part
        k = t / s if s > 1e-300 else 1.0
        return k * s0, k * s1, k * s2
    # near pi: the axis from the symmetric part, (R + R^T)/2 = c E + (1 - c) n n^T, its sign from the skew part
    d0, d1, d2 = (R[0] - c) / (1.0 - c), (R[4] - c) / (1.0 - c), (R[8] - c) / (1.0 - c)
    if d0 >= d1 and d0 >= d2:
        n0 = np.sqrt(max(d0, 0.0))
        n1, n2 = 0.5 * (R[1] + R[3]) / ((1.0 - c) * n0), 0.5 * (R[2] + R[6]) / ((1.0 - c) * n0)
    elif d1 >= d2:
        n1 = np.sqrt(max(d1, 0.0))
        n0, n2 = 0.5 * (R[1] + R[3]) / ((1.0 - c) * n1), 0.5 * (R[5] + R[7]) / ((1.0 - c) * n1)
    else:
        n2 = np.sqrt(max(d2, 0.0))
        n0, n1 = 0.5 * (R[2] + R[6]) / ((1.0 - c) * n2), 0.5 * (R[5] + R[7]) / ((1.0 - c) * n2)
    if n0 * s0 + n1 * s1 + n2 * s2 < 0.0:
        n0, n1, n2 = -n0, -n1, -n2
    return t * n0, t * n1, t * n2


@njit(cache=True, fastmath=CONTRACT)
def contact_rows(bodies, work, W, L, spec):
    """For every contact: its rows of J a_0 + gamma into L[:, m] (the frame's classical acceleration at a_0 plus
    the Baumgarte terms, in its reference), its unit wrenches X^T into W of its body (world frame), the columns of
    its rows zeroed in W along its support and its bit set in the supports' cmask."""
    nc, m, Kp, Kd = int(spec[0]), int(spec[1]), spec[2], spec[3]
    for k in range(bodies.shape[0]):
        work[k].cmask = 0
    for i in range(nc):
        o = HEADER + i * CONTACT_SIZE
        k, rows, first, local = int(spec[o]), int(spec[o + 1]), int(spec[o + 2]), int(spec[o + 3]) == LOCAL
        j = k
        while j >= 0:                                              # the support: zeroed columns, cmask bit i
            work[j].cmask |= 1 << i
            for r in range(6):
                for c in range(first, first + rows):
                    W[j, r, c] = 0.0
            j = bodies[j].parent
        w = work[k]
        R, (p0, p1, p2) = frame_pose(w, spec, o)
        V = w.V                                                    # the body's world twist, frame's velocity:
        pd0, pd1, pd2 = cross(V[3], V[4], V[5], p0, p1, p2)        # pdot = v_0 + w x p
        pd0, pd1, pd2 = V[0] + pd0, V[1] + pd1, V[2] + pd2
        al0, al1, al2 = w.ab[0] + w.Ac[0], w.ab[1] + w.Ac[1], w.ab[2] + w.Ac[2]   # the world acceleration at a_0
        aw0, aw1, aw2 = w.ab[3] + w.Ac[3], w.ab[4] + w.Ac[4], w.ab[5] + w.Ac[5]
        x0, x1, x2 = cross(aw0, aw1, aw2, p0, p1, p2)              # classical: [a_v + a_w x p + w x pdot; a_w]
        y0, y1, y2 = cross(V[3], V[4], V[5], pd0, pd1, pd2)
        c0, c1, c2 = al0 + x0 + y0, al1 + x1 + y1, al2 + x2 + y2
        e0, e1, e2, e3, e4, e5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0     # Baumgarte: Kp e + Kd [pdot; w]
        if spec[o + 16] != 0.0:
            e0, e1, e2 = p0 - spec[o + 26], p1 - spec[o + 27], p2 - spec[o + 28]
            if rows == 6:                                          # log(R R_t^T)
                e3, e4, e5 = rotation_log(times_transpose(R, spec, o + 17))
        z = (c0 + Kp * e0 + Kd * pd0, c1 + Kp * e1 + Kd * pd1, c2 + Kp * e2 + Kd * pd2,
             aw0 + Kp * e3 + Kd * V[3], aw1 + Kp * e4 + Kd * V[4], aw2 + Kp * e5 + Kd * V[5])
        if local:                                                  # into the frame's axes: R^T
            u0, u1, u2 = R[0] * z[0] + R[3] * z[1] + R[6] * z[2], R[1] * z[0] + R[4] * z[1] + R[7] * z[2], \
                R[2] * z[0] + R[5] * z[1] + R[8] * z[2]
            u3, u4, u5 = R[0] * z[3] + R[3] * z[4] + R[6] * z[5], R[1] * z[3] + R[4] * z[4] + R[7] * z[5], \
                R[2] * z[3] + R[5] * z[4] + R[8] * z[5]
            z = (u0, u1, u2, u3, u4, u5)
        for r in range(rows):
            L[first + r, m] = z[r]
        for r in range(3):                                         # unit force along axis u at p: [u; p x u];
            if local:                                              # unit torque: [0; u]
                u0, u1, u2 = R[r], R[3 + r], R[6 + r]
            else:
                u0, u1, u2 = 1.0 if r == 0 else 0.0, 1.0 if r == 1 else 0.0, 1.0 if r == 2 else 0.0
            m0, m1, m2 = cross(p0, p1, p2, u0, u1, u2)
            c = first + r
            W[k, 0, c], W[k, 1, c], W[k, 2, c], W[k, 3, c], W[k, 4, c], W[k, 5, c] = u0, u1, u2, m0, m1, m2
            if rows == 6:
                c = first + 3 + r
                W[k, 0, c], W[k, 1, c], W[k, 2, c], W[k, 3, c], W[k, 4, c], W[k, 5, c] = 0.0, 0.0, 0.0, u0, u1, u2


@njit(cache=True, fastmath=CONTRACT)
def delassus(bodies, work, W, L, spec, m):
    """L[:m, :m] <- the upper triangle of J M^-1 J^T = sum_j K_j^T D_j^-1 K_j, K_j = S_j^T W_j, inward over the
    contacts' supports, carrying W_p += (E - G_j S_j^T) W_j (module docstring).  K_j^T and D_j^-1 K_j^T of a
    body are kept in L[:, m + 2 : m + 8] and L[:, m + 8 : m + 14]."""
    nc = int(spec[0])
    for r in range(m):
        for c in range(m):
            L[r, c] = 0.0
    K, Y = m + 2, m + 8
    for j in range(bodies.shape[0] - 1, -1, -1):
        mask = work[j].cmask
        if mask == 0:
            continue
        b, w = bodies[j], work[j]
        n, S, G, Di = b.nvj, w.S, w.Gk, w.Dki
        for i in range(nc):                                        # K^T and D^-1 K^T, active columns
            if not (mask >> i) & 1:
                continue
            o = HEADER + i * CONTACT_SIZE
            for c in range(int(spec[o + 2]), int(spec[o + 2] + spec[o + 1])):
                for s in range(n):
                    L[c, K + s] = (S[0, s] * W[j, 0, c] + S[1, s] * W[j, 1, c] + S[2, s] * W[j, 2, c]
                                   + S[3, s] * W[j, 3, c] + S[4, s] * W[j, 4, c] + S[5, s] * W[j, 5, c])
                for s in range(n):
                    x = 0.0
                    for t in range(n):
                        x += Di[s, t] * L[c, K + t]
                    L[c, Y + s] = x
        for i in range(nc):                                        # upper triangle: rows of i, columns of i2 >= i
            if not (mask >> i) & 1:
                continue
            o = HEADER + i * CONTACT_SIZE
            for i2 in range(i, nc):
                if not (mask >> i2) & 1:
                    continue
                o2 = HEADER + i2 * CONTACT_SIZE
                for c in range(int(spec[o + 2]), int(spec[o + 2] + spec[o + 1])):
                    for c2 in range(int(spec[o2 + 2]), int(spec[o2 + 2] + spec[o2 + 1])):
                        x = 0.0
                        for s in range(n):
                            x += L[c, K + s] * L[c2, Y + s]
                        L[c, c2] += x
        p = b.parent
        if p < 0:
            continue
        for i in range(nc):                                        # W_p += W_j - G K_j
            if not (mask >> i) & 1:
                continue
            o = HEADER + i * CONTACT_SIZE
            for c in range(int(spec[o + 2]), int(spec[o + 2] + spec[o + 1])):
                for r in range(6):
                    x = W[j, r, c]
                    for s in range(n):
                        x -= G[r, s] * L[c, K + s]
                    W[p, r, c] += x


@njit(cache=True, fastmath=CONTRACT)
def solve_forces(L, m, mu, f):
    """f <- -(A + mu E)^-1 L[:m, m] by a Cholesky factor of A + mu E, A = L[:m, :m] (its upper triangle; the
    factor U^T U overwrites it).  False when a pivot is not positive against the diagonal's scale (a redundant
    or singular set)."""
    scale = 0.0
    for i in range(m):
        L[i, i] += mu
        scale = max(scale, abs(L[i, i]))
    for i in range(m):                                             # U^T U, U upper, in place
        d = L[i, i]
        for k in range(i):
            d -= L[k, i] * L[k, i]
        if not d > 1e-12 * scale:
            return False
        d = np.sqrt(d)
        L[i, i] = d
        for j in range(i + 1, m):
            x = L[i, j]
            for k in range(i):
                x -= L[k, i] * L[k, j]
            L[i, j] = x / d
    for i in range(m):                                             # U^T y = -rhs
        x = -L[i, m]
        for k in range(i):
            x -= L[k, i] * f[k]
        f[i] = x / L[i, i]
    for i in range(m - 1, -1, -1):                                 # U f = y
        x = f[i]
        for k in range(i + 1, m):
            x -= L[i, k] * f[k]
        f[i] = x / L[i, i]
    return True


@njit(cache=True, fastmath=CONTRACT)
def add_contact_accelerations(bodies, work, W, spec, f, a):
    """a += M^-1 J^T f: qddot_j = D_j^-1 S_j^T (W_j f) - G_j^T A_p, A_j = A_p + S_j qddot_j, outward."""
    nc = int(spec[0])
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        n, S, G, mask = b.nvj, w.S, w.Gk, w.cmask
        if b.parent >= 0:
            Ap = work[b.parent].dA
            a0, a1, a2, a3, a4, a5 = Ap[0], Ap[1], Ap[2], Ap[3], Ap[4], Ap[5]
        else:
            a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        w0, w1, w2, w3, w4, w5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0       # W_j f
        if mask != 0:
            for i in range(nc):
                if (mask >> i) & 1:
                    o = HEADER + i * CONTACT_SIZE
                    for c in range(int(spec[o + 2]), int(spec[o + 2] + spec[o + 1])):
                        x = f[c]
                        w0, w1, w2 = w0 + W[k, 0, c] * x, w1 + W[k, 1, c] * x, w2 + W[k, 2, c] * x
                        w3, w4, w5 = w3 + W[k, 3, c] * x, w4 + W[k, 4, c] * x, w5 + W[k, 5, c] * x
        y, qdd = w.dA, w.Fn                                        # S^T W_j f, until dA is written; qddot_j
        for s in range(n):                                         # (Fn: free once a_0 is formed)
            y[s] = S[0, s] * w0 + S[1, s] * w1 + S[2, s] * w2 + S[3, s] * w3 + S[4, s] * w4 + S[5, s] * w5
        for s in range(n):                                         # all of qddot_j from A_p, before A_j: G^T S
            x = -(G[0, s] * a0 + G[1, s] * a1 + G[2, s] * a2 + G[3, s] * a3 + G[4, s] * a4 + G[5, s] * a5)
            for t in range(n):                                     # = E - D^-1 diag(armature) is not diagonal
                x += w.Dki[s, t] * y[t]
            qdd[s] = x
        for s in range(n):
            x = qdd[s]
            a[b.iv + s] += x
            a0, a1, a2 = a0 + S[0, s] * x, a1 + S[1, s] * x, a2 + S[2, s] * x
            a3, a4, a5 = a3 + S[3, s] * x, a4 + S[4, s] * x, a5 + S[5, s] * x
        w.dA[0], w.dA[1], w.dA[2], w.dA[3], w.dA[4], w.dA[5] = a0, a1, a2, a3, a4, a5


@njit(cache=True)
def constrained_dynamics(bodies, work, W, L, gravity, q, v, tau, spec, a, f):
    """(a, f) of the KKT system (module docstring).  0, an error code of kinematics, or ERR_REDUNDANT."""
    status = check_inputs((q, v, tau))
    if status != 0:
        return status
    status = outward_pass(bodies, work, q, v, True)
    if status != 0:
        return status
    status = factor(bodies, work)
    if status != 0:
        return status
    free_acceleration(bodies, work, gravity, v, tau, a)
    m = int(spec[1])
    contact_rows(bodies, work, W, L, spec)
    delassus(bodies, work, W, L, spec, m)
    if not solve_forces(L, m, spec[4], f):
        return ERR_REDUNDANT
    add_contact_accelerations(bodies, work, W, spec, f, a)
    return 0
