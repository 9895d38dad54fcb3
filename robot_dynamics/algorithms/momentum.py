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
from .operators import (CONTRACT, ad_inv_times, ad_inv_transpose_times, cross, forced, spatial_inertia_times,
                        store6)
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


@forced
def momentum_block(x, R, p, W):
    """W <- Ad_{0,k}^-T A(x) for a body-frame twist x = [a; b]: A's columns (eqs. (10)-(12)) are m -> [a; 0],
    h_j -> [b x e_j; e_j x a], inertia -> [0; b-bar column], each mapped to the world as a wrench (the inertia
    columns pure moments)."""
    a0, a1, a2, b0, b1, b2 = x[0], x[1], x[2], x[3], x[4], x[5]
    to_world_wrench(R, p, W, 0, a0, a1, a2, 0.0, 0.0, 0.0)
    for j in range(3):
        f0, f1, f2 = cross_unit(b0, b1, b2, j)                     # b x e_j
        k0, k1, k2 = cross_unit(a0, a1, a2, j)                     # a x e_j = -(e_j x a)
        to_world_wrench(R, p, W, 1 + j, f0, f1, f2, -k0, -k1, -k2)
    for j in range(6):
        l0, l1, l2 = bar_column(j, b0, b1, b2)
        to_world_wrench(R, p, W, 4 + j, 0.0, 0.0, 0.0, l0, l1, l2)


@njit(cache=True, fastmath=CONTRACT)
def momentum_regressor(bodies, work, gravity, q, v, Y_p, Y_h):
    """Y_p, Y_h (nv, 10 nb) with Y_p pi = M(q) v (the rigid bodies' M) and Y_h pi = C(q, v)^T v - g(q) (module
    docstring): for body k, W = Ad_{0,k}^-T A(v_k) (momentum_block) and G = Ad_{0,k}^-T A(gamma_k), then for each
    coordinate i of k and its ancestors Y_p[i, 10k:10k+10] = S_i^T W and Y_h[i, 10k:10k+10] = Sdot_i^T W - S_i^T G,
    in one walk.  gamma_k = Ad_{0,k}^-1 [c; 0], c = -gravity, has no angular part, so G's inertia columns are zero,
    its mass column is [c; p x c] and its first moments' [0; R e_j x c] (R e_j x R a = R (e_j x a), R a = c); W's
    inertia columns are pure moments."""
    status = checked_pass(bodies, work, (q, v), q, v, True)
    if status != 0:
        return status
    Y_p[:, :] = 0.0
    Y_h[:, :] = 0.0
    c0, c1, c2 = -gravity[0], -gravity[1], -gravity[2]
    for k in range(bodies.shape[0]):
        w = work[k]
        R, p, W = w.R0, w.p0, w.W
        store6(w.v_k, ad_inv_times(R, p, w.V))                     # v_k = Ad_{0,k}^-1 V_k
        momentum_block(w.v_k, R, p, W)                             # Ad^-T A(v_k): body k's world momentum
        m0, m1, m2 = cross(p[0], p[1], p[2], c0, c1, c2)           # G's mass column [c; m]
        x0, x1, x2 = cross(R[0, 0], R[1, 0], R[2, 0], c0, c1, c2)  # its first moments' [0; x], [0; y], [0; z]
        y0, y1, y2 = cross(R[0, 1], R[1, 1], R[2, 1], c0, c1, c2)
        z0, z1, z2 = cross(R[0, 2], R[1, 2], R[2, 2], c0, c1, c2)
        o = 10 * k
        a = k
        while a >= 0:
            ba, wa = bodies[a], work[a]
            S, D = wa.S, wa.Sd                                     # the axes S_i and their rates Sdot_i
            for t in range(ba.nvj):
                s0, s1, s2, s3, s4, s5 = S[0, t], S[1, t], S[2, t], S[3, t], S[4, t], S[5, t]
                d0, d1, d2, d3, d4, d5 = D[0, t], D[1, t], D[2, t], D[3, t], D[4, t], D[5, t]
                rp, rh = Y_p[ba.iv + t], Y_h[ba.iv + t]
                for i in range(4):
                    rp[o + i] += (s0 * W[0, i] + s1 * W[1, i] + s2 * W[2, i]
                                  + s3 * W[3, i] + s4 * W[4, i] + s5 * W[5, i])
                    rh[o + i] += (d0 * W[0, i] + d1 * W[1, i] + d2 * W[2, i]
                                  + d3 * W[3, i] + d4 * W[4, i] + d5 * W[5, i])
                rh[o] -= s0 * c0 + s1 * c1 + s2 * c2 + s3 * m0 + s4 * m1 + s5 * m2
                rh[o + 1] -= s3 * x0 + s4 * x1 + s5 * x2
                rh[o + 2] -= s3 * y0 + s4 * y1 + s5 * y2
                rh[o + 3] -= s3 * z0 + s4 * z1 + s5 * z2
                for i in range(4, 10):
                    rp[o + i] += s3 * W[3, i] + s4 * W[4, i] + s5 * W[5, i]
                    rh[o + i] += d3 * W[3, i] + d4 * W[4, i] + d5 * W[5, i]
            a = ba.parent
    return 0
