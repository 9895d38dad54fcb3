"""Kinetic and potential energy, body by body: T = 1/2 sum_k v_k^T Lambda_k v_k + 1/2 sum_i armature_i v_i^2 with
v_k = Ad_{0,k}^-1 V_k the body's twist in its own frame (paper 002, eq. (2): the kinetic energy of one body) and
the second sum the drives' rotors (drives.py; as Pinocchio 4.1's computeKineticEnergy, and what the power balance
d/dt (T + U) = v^T tau needs once the forward dynamics carry the armature), and U = -gravity . sum_k m_k c_k^w
(c_k^w = p_{0,k} + R_{0,k} c_k, the body's CoM in the world).  Independent of M: 1/2 v^T M v = T is a test."""
from numba import njit

from .kinematics import checked_pass
from .operators import ad_inv_times, rotate, spatial_inertia_times


@njit(cache=True)
def kinetic_energy(bodies, work, q, v, T):
    """T[0] <- the kinetic energy at (q, v)."""
    status = checked_pass(bodies, work, (q, v), q, v, True)
    if status != 0:
        return status
    T[0] = 0.0
    for k in range(bodies.shape[0]):
        w = work[k]
        v0, v1, v2, v3, v4, v5 = ad_inv_times(w.R0, w.p0, w.V)
        l0, l1, l2, l3, l4, l5 = spatial_inertia_times(bodies[k].pi, v0, v1, v2, v3, v4, v5)
        T[0] += 0.5 * (v0 * l0 + v1 * l1 + v2 * l2 + v3 * l3 + v4 * l4 + v5 * l5)
        b = bodies[k]
        for t in range(b.nvj):                                     # the rotors: 1/2 armature v^2
            T[0] += 0.5 * (b.armature[t] * v[b.iv + t] * v[b.iv + t])
    return 0


@njit(cache=True)
def potential_energy(bodies, work, gravity, q, U):
    """U[0] <- the potential energy at q, zero with the CoM at the world origin."""
    status = checked_pass(bodies, work, (q,), q, q, False)
    if status != 0:
        return status
    U[0] = 0.0
    for k in range(bodies.shape[0]):
        w, pi = work[k], bodies[k].pi
        h0, h1, h2 = rotate(w.R0, pi[1], pi[2], pi[3])             # m c^w = m p0 + R0 (m c)
        U[0] -= (gravity[0] * (pi[0] * w.p0[0] + h0) + gravity[1] * (pi[0] * w.p0[1] + h1)
                 + gravity[2] * (pi[0] * w.p0[2] + h2))
    return 0
