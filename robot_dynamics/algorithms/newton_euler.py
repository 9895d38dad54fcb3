"""Recursive Newton-Euler inverse dynamics in body coordinates, O(n) (paper 001, eqs. (22)-(27); paper 004,
eqs. (9.53)-(9.57)), written in paper 002's [linear; angular] order.

    outward:  v_k = Ad^-1_{p,k} v_p + xi_k
              a_k = Ad^-1_{p,k} a_p + Xi_k qddot + adj(v_k) xi_k         (a_world = gamma_0 = [-gravity; 0])
              f_k = Lambda_k a_k - adj(v_k)^T Lambda_k v_k               paper 002, eq. (2)
    inward:   tau_k = Xi_k^T f_k,   f_p += Ad^-T_{p,k} f_k
It shares nothing with the closed-form matrices but the joint kinematics, so tau = M a + C v + g is a real check.
"""
import numpy as np
from numba import njit

from .kinematics import ad_inv_apply, ad_inv_transpose_apply, adj_apply, adj_transpose_apply, joint_twist, placement


@njit(cache=True)
def rnea(kin, Lam, gravity, q, v, a, tau, work):
    """tau = M(q) a + C(q, v) v + g(q), written into tau (nv,).  work: (R_pk, p_pk, v_k, a_k, f_k) scratch."""
    R_pk, p_pk, vb, ab, f = work
    nb = kin.parent.shape[0]
    gamma0 = np.zeros(6)
    gamma0[:3] = -gravity
    for k in range(nb):
        R, p = placement(kin, k, q)
        R_pk[k], p_pk[k] = R, p
        xi = joint_twist(kin, k, v)
        acc = joint_twist(kin, k, a)
        par = kin.parent[k]
        v_par = np.zeros(6) if par < 0 else vb[par]
        a_par = gamma0 if par < 0 else ab[par]
        vb[k] = ad_inv_apply(R, p, v_par) + xi
        ab[k] = ad_inv_apply(R, p, a_par) + acc + adj_apply(vb[k], xi)
        f[k] = Lam[k] @ ab[k] - adj_transpose_apply(vb[k], Lam[k] @ vb[k])
    tau[:] = 0.0
    for k in range(nb - 1, -1, -1):
        for c in range(kin.nvj[k]):
            tau[kin.iv[k] + c] += kin.mult[k] * (kin.Xi[k, :, c] @ f[k])
        par = kin.parent[k]
        if par >= 0:
            f[par] += ad_inv_transpose_apply(R_pk[k], p_pk[k], f[k])


def rnea_workspace(nb):
    return np.zeros((nb, 3, 3)), np.zeros((nb, 3)), np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nb, 6))
