"""The outward kinematic pass of paper 002, section VI: T_{0,k}, v_k, J_k and Jdot_k for every body.

Every quantity is in body coordinates, twists [linear; angular].  J_k (6 x nv) is non-zero only in the columns
of body k's support (its ancestors' and its own coordinates), and only those columns are ever touched.
"""
import numpy as np
from numba import njit

from ..model import FREE, PLANAR, PRISMATIC, REVOLUTE
from ..spatial import axis_angle_rotation, quaternion_rotation


@njit(cache=True)
def joint_transform(kin, k, q):
    """(R_J, p_J): the motion of body k's joint at q, child frame in the joint frame."""
    i, t = kin.iq[k], kin.jtype[k]
    if t == REVOLUTE:
        return axis_angle_rotation(kin.axis[k], kin.mult[k] * q[i] + kin.offset[k]), np.zeros(3)
    if t == PRISMATIC:
        return np.eye(3), kin.axis[k] * (kin.mult[k] * q[i] + kin.offset[k])
    if t == PLANAR:                                    # q = [x, y, theta]: translate in (e1, e2), turn about n
        return axis_angle_rotation(kin.axis[k], q[i + 2]), q[i] * kin.Xi[k, :3, 0] + q[i + 1] * kin.Xi[k, :3, 1]
    return quaternion_rotation(q[i + 3:i + 7]), q[i:i + 3].copy()   # FREE: [x, y, z, qx, qy, qz, qw]


@njit(cache=True)
def placement(kin, k, q):
    """T_{p,k} = T_tree,k T_J(q): body k's frame in its parent's frame.  -> R (3, 3), p (3,)"""
    R_J, p_J = joint_transform(kin, k, q)
    R_tree = kin.R_tree[k]
    return R_tree @ R_J, kin.p_tree[k] + R_tree @ p_J


@njit(cache=True)
def joint_twist(kin, k, v):
    """xi_k = Xi_k qdot_joint, the relative twist of body k in its own frame (paper 002, eq. (26))."""
    xi = np.zeros(6)
    for c in range(kin.nvj[k]):
        xi += kin.Xi[k, :, c] * (kin.mult[k] * v[kin.iv[k] + c])
    return xi


@njit(cache=True)
def ad_inv_apply(R, p, x):
    """Ad^-1_{p,k} x = [R^T (x_v - p x x_w); R^T x_w] without forming the 6x6 matrix."""
    y = np.empty(6)
    w = x[3:]
    d = x[:3] - np.cross(p, w)
    y[:3] = R.T @ d
    y[3:] = R.T @ w
    return y


@njit(cache=True)
def ad_inv_transpose_apply(R, p, f):
    """Ad^-T_{p,k} f: a wrench in the child frame k expressed in the parent frame p."""
    y = np.empty(6)
    fv = R @ f[:3]
    y[:3] = fv
    y[3:] = R @ f[3:] + np.cross(p, fv)
    return y


@njit(cache=True)
def adj_apply(s, x):
    """adj(s) x = [s_w x x_v + s_v x x_w; s_w x x_w], the Lie bracket [s, x] (paper 002, appendix)."""
    y = np.empty(6)
    y[:3] = np.cross(s[3:], x[:3]) + np.cross(s[:3], x[3:])
    y[3:] = np.cross(s[3:], x[3:])
    return y


@njit(cache=True)
def adj_transpose_apply(s, f):
    """adj(s)^T f = [-s_w x f_v; -s_v x f_v - s_w x f_w] (the dual of the Lie bracket, -ad*)."""
    y = np.empty(6)
    y[:3] = -np.cross(s[3:], f[:3])
    y[3:] = -np.cross(s[:3], f[:3]) - np.cross(s[3:], f[3:])
    return y


@njit(cache=True)
def outward_pass(kin, q, v, with_jdot, R_pk, p_pk, R0, p0, vb, J, Jdot):
    """Fill, for every body k (parent before child), paper 002 section VI:

    R_pk, p_pk (nb, 3, 3), (nb, 3)  T_{p,k}
    R0, p0     (nb, 3, 3), (nb, 3)  T_{0,k} = T_{0,p} T_{p,k}           (remark 6: only R_{0,k} is needed for g)
    vb         (nb, 6)              v_k = Ad^-1_{p,k} v_p + xi_k         eq. (26)
    J          (nb, 6, nv)          J_k = Ad^-1_{p,k} J_p + Xi_k          eq. (27)
    Jdot       (nb, 6, nv)          Jdot_k = Ad^-1 Jdot_p - adj(xi_k) Ad^-1 J_p   eq. (28), if with_jdot
    J and Jdot must be zero outside each body's support columns on entry; inside them they are overwritten.
    """
    kin_parent, support, nsup = kin.parent, kin.support, kin.nsup
    for k in range(kin_parent.shape[0]):
        R, p = placement(kin, k, q)
        R_pk[k], p_pk[k] = R, p
        xi = joint_twist(kin, k, v)
        for s in range(nsup[k]):
            J[k, :, support[k, s]] = 0.0
            Jdot[k, :, support[k, s]] = 0.0
        par = kin_parent[k]
        if par < 0:
            R0[k], p0[k] = R, p
            vb[k] = xi
        else:
            R0[k] = R0[par] @ R
            p0[k] = p0[par] + R0[par] @ p
            vb[k] = ad_inv_apply(R, p, vb[par]) + xi
            for s in range(nsup[par]):
                c = support[par, s]
                J[k, :, c] = ad_inv_apply(R, p, J[par, :, c])                       # eq. (27)
                if with_jdot:
                    Jdot[k, :, c] = ad_inv_apply(R, p, Jdot[par, :, c]) - adj_apply(xi, J[k, :, c])  # eq. (28)
        for c in range(kin.nvj[k]):                                              # + Xi_k, constant
            J[k, :, kin.iv[k] + c] += kin.mult[k] * kin.Xi[k, :, c]
