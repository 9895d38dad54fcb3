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

The observer.  With an external joint torque tau_ext the momentum obeys pdot = tau + s - tau_c + tau_ext, s = h -
D v - tau_m (D the drives' damping, tau_m a friction model's torque, if any) and tau_c the drives' Coulomb friction of
level F.  The residual r = K (p - p(0) - int_0^t (tau + s - tau_c + r)), K = diag(k_i) > 0, obeys

    rdot = K (pdot - tau - s + tau_c - r) = K (tau_ext - r):                                                 (O1)

a first-order low-pass of tau_ext at the bandwidths k_i, without accelerations.  Over a tick [t_0, t_0 + dt] the
momentum's change Delta p = p(t_0 + dt) - p(t_0) gives the tick's mean external torque exactly,

    u = w + mean tau_c,   w = Delta p / dt - tau - int s / dt,   int s = dt (s(t_0) + s(t_0 + dt)) / 2 + O(dt^3)  (O2)

tau held over the tick (the controller's zero-order hold: exact), s by the trapezoidal rule.  The Coulomb friction is
F sign(v) while the joint slides -- taken as the drives' F tanh(v / width) (drives.py), by the trapezoidal rule, when
both ends of the tick are at |v| >= width with one sign -- but anything in [-F, F] while it sticks (Coulomb's law is
set-valued at v = 0: the friction balances whatever else acts, up to F).  A tick with an end at |v| < width, or
a reversal, may hold a stick, and its momentum only says that u lies in [w - F, w + F]: of those the observer
takes the one nearest its last estimate,

    u = clamp(r(t_0), w - F, w + F),                                                                        (O2')

so a joint that sticks moves r only by what friction cannot explain (an external torque of more than F beyond it),
and r keeps the torque it had found.  (O1) is linear: with tau_ext equal to its mean u over the tick (a step between
two ticks, constant within each), its solution is

    r(t_0 + dt) = a r(t_0) + (1 - a) u,     a = exp(-k dt),                                                 (O3)

per coordinate, whatever dt -- no Euler step, stable for any gain.  observer_tick is (O2)-(O3) for one tick,
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
def residual(p, p_last, s, s_last, v, v_last, tau, friction, width, dt, gain, r_last):
    """r_i after one tick of dt, (O2)-(O3) (module docstring), for one coordinate: p, s, v at the tick's end,
    p_last, s_last, v_last at its start, tau held over it, friction the Coulomb level F, width the velocity below
    which the joint may stick (drives.COULOMB_VELOCITY), gain k, r_last the residual at its start."""
    w = (p - p_last) / dt - tau - 0.5 * (s + s_last)                                          # (O2)
    if friction == 0.0:
        u = w
    elif v * v_last > 0.0 and abs(v) >= width and abs(v_last) >= width:                    # sliding: (O2)
        u = w + 0.5 * friction * (np.tanh(v / width) + np.tanh(v_last / width))
    else:                                                                                   # may stick: (O2')
        u = min(max(r_last, w - friction), w + friction)
    return r_last - (r_last - u) * -np.expm1(-gain * dt)                                    # (O3)


P, S, P_LAST, S_LAST, V_LAST, R, GAIN, DAMPING, FRICTION = range(9)    # the rows of observer_tick's state
ERR_DT, ERR_TAU, ERR_RESIDUAL = 1, 2, 3                                  # observer_tick's status


@njit(cache=True)
def observer_tick(state, tau, v, dt, width, r):
    """One tick of the observer (module docstring) on its state (9, nv), rows P, S, P_LAST, S_LAST, V_LAST, R, GAIN,
    DAMPING, FRICTION: p and h at the tick's end (momentum_rate's), p, s and v at its start, r, the k_i, the drives'
    damping D and Coulomb level F (zeros where they are not subtracted here).  S -= D v, then r (nv,) <- (O2)-(O3),
    and the state moves to the tick's end.  Returns 0, ERR_DT for a dt not finite and positive, ERR_TAU for a
    non-finite tau, ERR_RESIDUAL for a residual that would overflow -- changing nothing of the state but S then."""
    if not (dt > 0.0 and dt < np.inf):
        return ERR_DT
    n = r.shape[0]
    for i in range(n):
        if not np.isfinite(tau[i]):
            return ERR_TAU
    p, s = state[P], state[S]
    for i in range(n):
        s[i] -= state[DAMPING, i] * v[i]
        r[i] = residual(p[i], state[P_LAST, i], s[i], state[S_LAST, i], v[i], state[V_LAST, i], tau[i],
                        state[FRICTION, i], width, dt, state[GAIN, i], state[R, i])
        if not np.isfinite(r[i]):
            return ERR_RESIDUAL
    for i in range(n):
        state[R, i], state[P_LAST, i], state[S_LAST, i], state[V_LAST, i] = r[i], p[i], s[i], v[i]
    return 0


@njit(cache=True)
def observer_steps(P, S, V, tau, t, gain, friction, width, r):
    """r[k] (K, nv) for k = 1 .. K-1 from r[0], each tick as observer_tick's: P, S, V (K, nv) the samples' p, s (h
    with the damping and any friction model's torque subtracted) and v, tau (K, nv) with tau[k - 1] held over tick k,
    t (K,) increasing, gain, friction (nv,) the k_i and the Coulomb levels F (observer_tick's state rows).  The ticks
    may differ in length."""
    n = r.shape[1]
    for k in range(1, r.shape[0]):
        dt = t[k] - t[k - 1]
        for i in range(n):
            r[k, i] = residual(P[k, i], P[k - 1, i], S[k, i], S[k - 1, i], V[k, i], V[k - 1, i], tau[k - 1, i],
                               friction[i], width, dt, gain[i], r[k - 1, i])
