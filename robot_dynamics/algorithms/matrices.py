"""M, C, g, the CoM and its Jacobian, and the Slotine-Li regressor from one outward pass (paper 002, II-III).

    M = sum_k J_k^T Lambda_k J_k                                                  eq. (6a)
    C = sum_k J_k^T [(Lambda_k adj_k - adj_k^T Lambda_k) J_k + Lambda_k Jdot_k]   eq. (6b)
    g = sum_k J_k^T Lambda_k Ad^-1_{0,k} gamma_0                                  eq. (6c)
    J_com = (1/m) P^T Lambda J                                                   eq. (7)
    Y = J^T blkdiag(A(alpha_k) - adj_k^T A(J_k qdot_r))                           eq. (16)
with adj_k = adj(v_k), gamma_0 = [-gravity; 0] and alpha_k = J_k qddot_r + adj_k J_k qdot_r + Jdot_k qdot_r
+ gamma_k (remark 4).  Each body adds its terms only in the rows and columns of its support.
"""
import numpy as np
from numba import njit

from ..spatial import adj, momentum_matrix, skew
from .kinematics import adj_apply, outward_pass

WANT_C, WANT_Y = 1, 2


@njit(cache=True)
def _support_block(J, k, cols, n):
    """J_k restricted to its support columns: (6, n)."""
    out = np.empty((6, n))
    for s in range(n):
        out[:, s] = J[k, :, cols[s]]
    return out


@njit(cache=True)
def dynamics_pass(kin, Lam, pi, gravity, q, v, v_ref, a_ref, want, M, C, g, com, J_com, Y, work):
    """One outward pass, then each body's terms of eqs. (6), (7), (16) added in place.

    q (nq,), v, v_ref, a_ref (nv,); want: bit set of WANT_C, WANT_Y.  Outputs (zeroed here):
    M, C (nv, nv), g (nv,), com (3,), J_com (3, nv), Y (nv, 10 nb).  work: the tuple made by `workspace`.
    """
    R_pk, p_pk, R0, p0, vb, J, Jdot = work
    with_jdot = want != 0
    M[:] = 0.0
    C[:] = 0.0
    g[:] = 0.0
    com[:] = 0.0
    J_com[:] = 0.0
    Y[:] = 0.0
    outward_pass(kin, q, v, with_jdot, R_pk, p_pk, R0, p0, vb, J, Jdot)
    gamma0 = -gravity
    mass = 0.0
    for k in range(kin.parent.shape[0]):
        n = kin.nsup[k]
        cols = kin.support[k, :n]
        Jk = _support_block(J, k, cols, n)
        L = Lam[k]
        LJ = L @ Jk
        gamma = np.zeros(6)
        gamma[:3] = R0[k].T @ gamma0                                 # gamma_k = Ad^-1_{0,k} gamma_0
        Mk = Jk.T @ LJ                                               # eq. (6a)
        gk = Jk.T @ (L @ gamma)                                      # eq. (6c)
        m, h = pi[k, 0], pi[k, 1:4]
        mass += m
        com += m * p0[k] + R0[k] @ h
        Jc = R0[k] @ (m * Jk[:3] - skew(h) @ Jk[3:])                 # eq. (7): R_0k [m E, -(m c)~] J_k
        if want & WANT_C:
            A = adj(vb[k])
            Psi = L @ A - A.T @ L                                    # eq. (3), skew-symmetric
            Ck = Jk.T @ (Psi @ Jk + L @ _support_block(Jdot, k, cols, n))   # eq. (6b)
        if want & WANT_Y:
            Jdk = _support_block(Jdot, k, cols, n)
            u = np.zeros(6)                                          # J_k qdot_r
            alpha = gamma.copy()                                     # alpha_k, remark 4
            for s in range(n):
                u += Jk[:, s] * v_ref[cols[s]]
                alpha += Jk[:, s] * a_ref[cols[s]] + Jdk[:, s] * v_ref[cols[s]]
            alpha += adj_apply(vb[k], u)
            B = momentum_matrix(alpha) - adj(vb[k]).T @ momentum_matrix(u)   # eq. (16), one block
            Yk = Jk.T @ B
        for a in range(n):
            ca = cols[a]
            g[ca] += gk[a]
            for d in range(3):
                J_com[d, ca] += Jc[d, a]
            for b in range(n):
                M[ca, cols[b]] += Mk[a, b]
            if want & WANT_C:
                for b in range(n):
                    C[ca, cols[b]] += Ck[a, b]
            if want & WANT_Y:
                for j in range(10):
                    Y[ca, 10 * k + j] += Yk[a, j]
    if mass > 0.0:
        com /= mass
        J_com /= mass
    return mass


def workspace(nb, nv):
    """Scratch arrays of the outward pass: R_pk, p_pk, R0, p0, v_k, J_k, Jdot_k (J's zero off-support)."""
    return (np.zeros((nb, 3, 3)), np.zeros((nb, 3)), np.zeros((nb, 3, 3)), np.zeros((nb, 3)), np.zeros((nb, 6)),
            np.zeros((nb, 6, nv)), np.zeros((nb, 6, nv)))
