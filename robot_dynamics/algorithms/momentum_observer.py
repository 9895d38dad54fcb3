"""The generalized-momentum observer's compiled parts (De Luca & Mattone 2003; Haddadin, De Luca & Albu-Schaeffer,
T-RO 2017): the momentum and the torque-free part of its rate in one call, and the observer's exact discrete steps.

momentum_rate: p = M(q) v and h = C(q, v)^T v - g(q) together, so that pdot = tau + h along any motion.  momentum.py
writes both as regressor products, p = Y_p pi and h = Y_h pi, walking every body's ancestors (O(n d)).  Summed over
subtrees instead they take two passes, O(n).  In world coordinates (momentum.py's docstring; S_i the world axis of
coordinate i, Sdot_i = adj(V_b) S_i its rate, kinematics.py):

    p_i = S_i^T H_i + armature_i v_i,       h_i = Sdot_i^T H_i - S_i^T G_i,

H_i = sum_{k in subtree(i)} Ad_{0,k}^-T Lambda_k v_k the spatial momentum of the bodies coordinate i moves (paper
002, Prop. 1, eqs. (8)-(12): Lambda_k v_k = A(v_k) pi_k), and G_i = sum_k Ad_{0,k}^-T Lambda_k Ad_{0,k}^-1 gamma_0
their weight, gamma_0 = [-gravity; 0] (paper 002, eq. (6c)).  Lambda_k [a; 0] = [m_k a; m c_k x a] in body k's
frame, so in the world G_i = [m_i a; c_i x a] with a = -gravity, m_i the subtree's mass and c_i = sum_k (m_k p_k +
R_k m c_k) its first moment about the world origin: four numbers per body, summed inward with H.  C^T v is unique
although C is not (C^T v = Mdot v - C v), so h is the same for paper 002's C and for the Christoffel C
(christoffel.py, Pinocchio's computeCoriolisMatrix).  The drives' armature is in p and not in h (momentum.py's
docstring: it is constant).

The observer.  With an external joint torque tau_ext the momentum obeys pdot = tau + s + tau_ext, s = h - tau_f(v)
(tau_f the drives' friction).  The residual r = K (p - p(0) - int_0^t (tau + s + r)), K = diag(k_i) > 0, obeys

    rdot = K (pdot - tau - s - r) = K (tau_ext - r):                                                        (O1)

a first-order low-pass of tau_ext at the bandwidths k_i, without accelerations.  Over a tick [t_0, t_0 + dt] the
momentum's change Delta p = p(t_0 + dt) - p(t_0) gives the tick's mean external torque exactly,

    u = Delta p / dt - tau - int s / dt,    int s = dt (s(t_0) + s(t_0 + dt)) / 2 + O(dt^3)               (O2)

tau held over the tick (the controller's zero-order hold: exact), s by the trapezoidal rule.  (O1) is linear: with
tau_ext equal to its mean u over the tick (a step between two ticks, constant within each), its solution is

    r(t_0 + dt) = a r(t_0) + (1 - a) u,     a = exp(-k dt),                                                 (O3)

per coordinate, whatever dt -- no Euler step, stable for any gain.  observer_step is (O2)-(O3) for one tick,
observer_steps for every tick of a log.
"""
import numpy as np
from numba import njit

from .kinematics import checked_pass
from .operators import (CONTRACT, ad_inv_times, ad_inv_transpose_times, cross, dot6, rotate, spatial_inertia_times,
                        store6)

WORK = [                                                  # world frame, per body k, summed over k's subtree
    ("hm", np.float64, (6,)),                             # H_k, the spatial momentum
    ("mcw", np.float64, (4,)),                            # [c_k; m_k]: the first moment and the mass
]
ERR_TAU, ERR_RESIDUAL = 1, 2                              # observer_step's status: tau or r not finite


@njit(cache=True, fastmath=CONTRACT)
def momentum_rate(bodies, work, gravity, q, v, p, h):
    """p = M(q) v (with the armature) and h = C(q, v)^T v - g(q) (module docstring): one outward pass, each body's
    momentum and first moment, then one inward pass summing them over subtrees and projecting them on the axes."""
    status = checked_pass(bodies, work, (q, v), q, v, True)             # poses, axes S, twists V_k, rates Sdot
    if status != 0:
        return status
    nb = bodies.shape[0]
    for k in range(nb):
        b, w = bodies[k], work[k]
        x = ad_inv_times(w.R0, w.p0, w.V)                                      # v_k, the twist in body k's frame
        f = spatial_inertia_times(b.pi, x[0], x[1], x[2], x[3], x[4], x[5])    # Lambda_k v_k, eq. (8)
        store6(w.hm, ad_inv_transpose_times(w.R0, w.p0, f[0], f[1], f[2], f[3], f[4], f[5]))
        m = b.pi[0]
        c0, c1, c2 = rotate(w.R0, b.pi[1], b.pi[2], b.pi[3])                 # R_k m c_k
        w.mcw[0], w.mcw[1], w.mcw[2], w.mcw[3] = m * w.p0[0] + c0, m * w.p0[1] + c1, m * w.p0[2] + c2, m
    p[:] = 0.0
    h[:] = 0.0
    a0, a1, a2 = -gravity[0], -gravity[1], -gravity[2]
    for k in range(nb - 1, -1, -1):                                            # children before parents
        b, w = bodies[k], work[k]
        H, c = w.hm, w.mcw
        n0, n1, n2 = cross(c[0], c[1], c[2], a0, a1, a2)
        G = (c[3] * a0, c[3] * a1, c[3] * a2, n0, n1, n2)                    # G_k = [m a; c x a]
        for t in range(b.nvj):
            i = b.iv + t                                                       # += : mimic bodies share a coordinate
            p[i] += dot6(w.S[:, t], H) + b.armature[t] * v[i]
            h[i] += dot6(w.Sd[:, t], H) - dot6(w.S[:, t], G)
        if b.parent >= 0:
            wp = work[b.parent]
            for r in range(6):
                wp.hm[r] += H[r]
            for r in range(4):
                wp.mcw[r] += c[r]
    return 0


@njit(cache=True, inline="always")
def tick(p, s, tau, dt, p_last, s_last, a, c, r_last, i):
    """r_i after one tick, (O2)-(O3) with c = (1 - a) / dt: a r + c (Delta p - dt (tau + (s + s_last) / 2))."""
    return a * r_last + c * (p[i] - p_last[i] - dt * (tau[i] + 0.5 * (s[i] + s_last[i])))


@njit(cache=True)
def observer_step(p, s, tau, dt, a, c, p_last, s_last, r, v, damping, friction, width):
    """One tick of the observer (module docstring): r <- (O3), then p_last, s_last <- p, s.  All (nv,); a, c the
    tick's weights exp(-k dt) and (1 - a) / dt; first s -= damping v + friction tanh(v / width), the drives'
    viscous and Coulomb friction (drives.py; zeros when the observer subtracts a friction model itself).  Returns
    0, ERR_TAU for a non-finite tau or ERR_RESIDUAL for a residual that would overflow, changing nothing then but
    this tick's s."""
    n = r.shape[0]
    for i in range(n):
        if not np.isfinite(tau[i]):
            return ERR_TAU
    for i in range(n):
        s[i] -= damping[i] * v[i] + friction[i] * np.tanh(v[i] / width)
    for i in range(n):
        if not np.isfinite(tick(p, s, tau, dt, p_last, s_last, a[i], c[i], r[i], i)):
            return ERR_RESIDUAL
    for i in range(n):
        r[i] = tick(p, s, tau, dt, p_last, s_last, a[i], c[i], r[i], i)
        p_last[i], s_last[i] = p[i], s[i]
    return 0


@njit(cache=True)
def observer_steps(P, S, tau, t, gain, r):
    """r[k] (K, nv) for k = 1 .. K-1 from r[0], each tick as observer_step: P, S (K, nv) the samples' p and s, tau
    (K, nv) with tau[k - 1] held over tick k, t (K,) increasing, gain (nv,) the k_i.  The weights are computed
    per tick, so the ticks may differ in length."""
    n = r.shape[1]
    for k in range(1, r.shape[0]):
        dt = t[k] - t[k - 1]
        for i in range(n):
            a = np.exp(-gain[i] * dt)
            c = -np.expm1(-gain[i] * dt) / dt
            r[k, i] = tick(P[k], S[k], tau[k - 1], dt, P[k - 1], S[k - 1], a, c, r[k - 1, i], i)
