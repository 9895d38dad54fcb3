"""The generalized momentum p = M(q) v, its regressor p = Y_p(q, v) pi and its rate pdot = tau + Y_h(q, v) pi,
Y_h pi = C^T v - g.

The drives' armature (drives.py) is in p: p = dT/dv = (M + diag(armature)) v, each rotor's momentum armature_i v_i
with the links', as the kinetic energy (energy.py) has it.  Its rate is still tau + C^T v - g, since the armature
is constant: d/dt (diag(armature) v) = diag(armature) a is part of tau.  The regressors are the rigid bodies'
alone, linear in pi: Y_p pi = M v without the armature (p = Y_p pi + armature v: the armature's columns, diag(v),
live with the drives' parameters, as in regressor.py), and Y_h pi = C^T v - g holds with or without it.

The generalized momentum is linear in the inertial parameters (paper 002, Prop. 1): p = sum_k J_k^T Lambda_k v_k
with Lambda_k v_k = A(v_k) pi_k (eqs. (8)-(12)), v_k = J_k v the body's twist in its own frame.  In world
coordinates, h_k = Ad_{0,k}^-T A(v_k) pi_k is body k's spatial momentum and p_i = S_i^T sum_{k in subtree(i)} h_k,
S_i the world axis of coordinate i (kinematics.py).

Its rate needs no acceleration.  Each body obeys Lambda_k vdot_k - adj(v_k)^T Lambda_k v_k = F_k (paper 002,
eq. (2)), the net wrench of its joints and gravity, and sum_k J_k^T F_k = tau - g, so

    pdot = sum_k (Jdot_k + adj(v_k) J_k)^T Lambda_k v_k + tau - g = tau + C^T v - g,

C^T v being unique although C is not (Mdot = C + C^T and C v are: C^T v = Mdot v - C v).  In world coordinates
Ad_{0,k} (Jdot_k + adj(v_k) J_k) holds the rates Sdot_i = adj(V) S_i of the world axes, the kinematic pass's Sd, so

    (C^T v)_i = Sdot_i^T sum_{k in subtree(i)} h_k,     g_i = S_i^T sum_{k in subtree(i)} Ad_{0,k}^-T A(gamma_k) pi_k,

gamma_k = Ad_{0,k}^-1 [-gravity; 0] as in the regressor (regressor.py).  For a fixed base C^T v = dT/dq, the
kinetic energy's gradient.  The momentum observer (De Luca & Mattone 2003) and composite adaptation filter
pdot = tau + Y_h pi instead of differentiating velocities.
"""
from numba import njit

from .kinematics import checked_pass
from .operators import ad_inv_times, ad_inv_transpose_times, spatial_inertia_times, store6
from .regressor import bar_column, cross_unit, to_world_wrench

WORK = []                    # none of its own: it works in the regressor's block W and twist v_k (regressor.WORK)


@njit(cache=True)
def momentum(bodies, work, q, v, p):
    """p = M(q) v (paper 002, Prop. 1): p_i = S_i^T sum_{k in subtree(i)} h_k, h_k = Ad_{0,k}^-T Lambda_k v_k
    body k's spatial momentum in world coordinates (module docstring) -- one outward pass, then each body's
    momentum added to the rows of its joint and its ancestors' (O(n d), d the depth), M never formed; plus the
    rotors' armature_i v_i."""
    status = checked_pass(bodies, work, (q, v), q, v, True)             # with the twists V_k
    if status != 0:
        return status
    p[:] = 0.0
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        x = ad_inv_times(w.R0, w.p0, w.V)                                      # v_k, the twist in body k's frame
        f = spatial_inertia_times(b.pi, x[0], x[1], x[2], x[3], x[4], x[5])    # Lambda_k v_k
        h = ad_inv_transpose_times(w.R0, w.p0, f[0], f[1], f[2], f[3], f[4], f[5])   # in world coordinates
        a = k
        while a >= 0:
            ba, wa = bodies[a], work[a]
            for t in range(ba.nvj):
                S = wa.S[:, t]
                p[ba.iv + t] += S[0] * h[0] + S[1] * h[1] + S[2] * h[2] + S[3] * h[3] + S[4] * h[4] + S[5] * h[5]
            a = ba.parent
        for t in range(b.nvj):                                                 # + armature v
            p[b.iv + t] += b.armature[t] * v[b.iv + t]
    return 0


@njit(cache=True)
def momentum_block(x, R, p, W):
    """W <- Ad_{0,k}^-T A(x) for a body-frame twist x = [a; b]: A's columns (eqs. (10)-(12)) are m -> [a; 0],
    h_j -> [b x e_j; e_j x a], inertia -> [0; b-bar column], each mapped to the world as a wrench."""
    a0, a1, a2, b0, b1, b2 = x[0], x[1], x[2], x[3], x[4], x[5]
    to_world_wrench(R, p, W, 0, a0, a1, a2, 0.0, 0.0, 0.0)
    for j in range(3):
        f0, f1, f2 = cross_unit(b0, b1, b2, j)                     # b x e_j
        k0, k1, k2 = cross_unit(a0, a1, a2, j)                     # a x e_j = -(e_j x a)
        to_world_wrench(R, p, W, 1 + j, f0, f1, f2, -k0, -k1, -k2)
    for j in range(6):
        l0, l1, l2 = bar_column(j, b0, b1, b2)
        to_world_wrench(R, p, W, 4 + j, 0.0, 0.0, 0.0, l0, l1, l2)


@njit(cache=True)
def add_block_rows(bodies, work, k, W, Y, rate, sign):
    """Y[i, 10k:10k+10] += sign (S_i or, with rate, Sdot_i)^T W for every coordinate i of body k and its ancestors."""
    c0 = 10 * k
    a = k
    while a >= 0:
        ba, wa = bodies[a], work[a]
        for t in range(ba.nvj):
            S = wa.Sd[:, t] if rate else wa.S[:, t]
            row = Y[ba.iv + t]
            for i in range(10):
                row[c0 + i] += sign * (S[0] * W[0, i] + S[1] * W[1, i] + S[2] * W[2, i]
                                       + S[3] * W[3, i] + S[4] * W[4, i] + S[5] * W[5, i])
        a = ba.parent


@njit(cache=True)
def momentum_regressor(bodies, work, gravity, q, v, Y_p, Y_h):
    """Y_p, Y_h (nv, 10 nb) with Y_p pi = M(q) v (the rigid bodies' M) and Y_h pi = C(q, v)^T v - g(q) (module
    docstring)."""
    status = checked_pass(bodies, work, (q, v), q, v, True)
    if status != 0:
        return status
    Y_p[:, :] = 0.0
    Y_h[:, :] = 0.0
    for k in range(bodies.shape[0]):
        w = work[k]
        store6(w.v_k, ad_inv_times(w.R0, w.p0, (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)))
        momentum_block(w.v_k, w.R0, w.p0, w.W)                     # Ad^-T A(gamma_k): g_i = S_i^T W pi_k
        add_block_rows(bodies, work, k, w.W, Y_h, False, -1.0)
        store6(w.v_k, ad_inv_times(w.R0, w.p0, w.V))               # v_k = Ad_{0,k}^-1 V_k
        momentum_block(w.v_k, w.R0, w.p0, w.W)                     # Ad^-T A(v_k): body k's world momentum
        add_block_rows(bodies, work, k, w.W, Y_p, False, 1.0)      # p_i = S_i^T W pi_k
        add_block_rows(bodies, work, k, w.W, Y_h, True, 1.0)       # (C^T v)_i = Sdot_i^T W pi_k
    return 0
