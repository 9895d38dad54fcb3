"""Plain numpy transcriptions of the algorithms the compiled kernels write out element by element: the reference
the kernels are tested against, one readable line per equation, in the symbols of the papers.

Written as Featherstone's spatial_v2 writes HandC.m, ID.m and FDab.m: bodies numbered parent before child
(parent[k] < k), so that every algorithm is a forward loop and, where it needs one, a backward loop.  Nothing is
compiled and nothing is optimized; every product is a plain 6x6 or 6xn matrix product of the operators of
spatial.py.  Each function takes the RobotModel and one state and returns new arrays.

Notation (paper 002): twists and wrenches [linear; angular] in body coordinates, body frames at the joint.
    T_{p,k} = T_tree T_J(q)      body k's frame in its parent's frame (the world's for a root body)
    Ad_inv_pk = Ad^-1_{p,k}      twists of the parent into body k;  Ad_inv_0k = Ad^-1_{0,k} from the world
    Xi_k (6, nv)                 the joint's motion subspace in the columns of its coordinates (paper 002,
                                 eq. (27)), mult Xi_k for a mimic joint, which shares its master's columns
    xi_k = Xi_k v                the joint's twist, body k relative to its parent, in body k (eq. (26))
    J_k, Jdot_k (6, nv)          body Jacobian, V_k = J_k v the body twist, and its time derivative
    Lam_k (6, 6), pi_k (10,)     body inertia at the body origin and its ten parameters (eq. (9))
    gamma_0 = [-gravity; 0]      the world's fictitious acceleration that brings in the weights (footnote 1)
    armature (nv,)               the drives' reflected rotor inertias (drives.py), model.drives.armature: on M's
                                 diagonal, armature a in the inverse dynamics, in each joint's D of the ABA
"""
import numpy as np

from ..model import BALL, FREE, PLANAR, PRISMATIC, REVOLUTE
from ..spatial import ad_inv, adj, axis_angle_rotation, momentum_matrix, quaternion_rotation


def joint_placement(body, q):
    """(R, p) of T_{p,k} = T_tree T_J(q), body k's frame in its parent's frame (kinematics.placement).

    body: one record of RobotModel.bodies, q: (nq,)  ->  R (3, 3), p (3,)
    A revolute joint turns by mult q + offset about its axis, a prismatic one slides mult q + offset along it;
    a planar joint q = [x, y, theta] moves by x e1 + y e2 in its plane (e1, e2 the first columns of Xi) and turns
    by theta about the normal; a free joint q = [x, y, z, qx, qy, qz, qw] and a ball joint q = [qx, qy, qz, qw]
    (the quaternions used normalized).
    """
    i, jtype, axis = body["iq"], body["jtype"], body["axis"]
    if jtype == REVOLUTE:
        R_J, p_J = axis_angle_rotation(axis, body["mult"] * q[i] + body["offset"]), np.zeros(3)
    elif jtype == PRISMATIC:
        R_J, p_J = np.eye(3), (body["mult"] * q[i] + body["offset"]) * axis
    elif jtype == PLANAR:
        R_J = axis_angle_rotation(axis, q[i + 2])
        p_J = q[i] * body["Xi"][:3, 0] + q[i + 1] * body["Xi"][:3, 1]
    elif jtype == FREE:
        quat = q[i + 3:i + 7]
        R_J, p_J = quaternion_rotation(quat / np.linalg.norm(quat)), q[i:i + 3]
    elif jtype == BALL:
        quat = q[i:i + 4]
        R_J, p_J = quaternion_rotation(quat / np.linalg.norm(quat)), np.zeros(3)
    else:
        raise ValueError(f"unknown joint type {jtype}")
    return body["R_tree"] @ R_J, body["p_tree"] + body["R_tree"] @ p_J


def body_poses(model, q):
    """T_{0,k} of every body, by T_{0,k} = T_{0,p} T_{p,k} (paper 002, section VI: Ad^-1_{0,k} = Ad^-1_{p,k}
    Ad^-1_{0,p}).  q: (nq,)  ->  R_0k (nb, 3, 3), p_0k (nb, 3)"""
    nb = model.nbodies
    R_0k, p_0k = np.zeros((nb, 3, 3)), np.zeros((nb, 3))
    for k, body in enumerate(model.bodies):
        R_pk, p_pk = joint_placement(body, q)
        p = body["parent"]
        R_0p, p_0p = (np.eye(3), np.zeros(3)) if p < 0 else (R_0k[p], p_0k[p])
        R_0k[k], p_0k[k] = R_0p @ R_pk, p_0p + R_0p @ p_pk
    return R_0k, p_0k


def motion_subspace(model, k):
    """Xi_k (6, nv): body k's joint axes (mult times them for a mimic joint) in the columns of its coordinates,
    zero elsewhere, so that xi_k = Xi_k v (paper 002, eq. (27))."""
    body = model.bodies[k]
    Xi = np.zeros((6, model.nv))
    Xi[:, body["iv"]:body["iv"] + body["nvj"]] = body["mult"] * body["Xi"][:, :body["nvj"]]
    return Xi


def jacobians(model, q, v):
    """Body Jacobians J_k and their time derivatives Jdot_k along (q, v), by the outward recursion of paper 002,
    section VI (J_p = Jdot_p = 0 for a root body).  The adj_{p,k} of eq. (28) is adj(xi_k), the joint's twist:
    d/dt Ad^-1_{p,k} = -adj(xi_k) Ad^-1_{p,k}, Xi_k being constant.

    q: (nq,), v: (nv,)  ->  J (nb, 6, nv), Jdot (nb, 6, nv)
    """
    nb, nv = model.nbodies, model.nv
    J, Jdot = np.zeros((nb, 6, nv)), np.zeros((nb, 6, nv))
    for k, body in enumerate(model.bodies):
        p = body["parent"]
        J_p, Jdot_p = (np.zeros((6, nv)), np.zeros((6, nv))) if p < 0 else (J[p], Jdot[p])
        Ad_inv_pk = ad_inv(*joint_placement(body, q))
        Xi = motion_subspace(model, k)
        xi = Xi @ v                                                        # eq. (26)
        J[k] = Ad_inv_pk @ J_p + Xi                                        # eq. (27)
        Jdot[k] = Ad_inv_pk @ Jdot_p - adj(xi) @ Ad_inv_pk @ J_p           # eq. (28)
    return J, Jdot


def _gamma_0(model):
    """gamma_0 = [-gravity; 0] (6,), the world's spatial gravitational acceleration (paper 002, footnote 1)."""
    return np.concatenate([-model.gravity, np.zeros(3)])


def _world_to_body(model, q):
    """Ad^-1_{0,k} (nb, 6, 6) of every body."""
    return np.array([ad_inv(R, p) for R, p in zip(*body_poses(model, q))])


def mass_matrix(model, q):
    """M = sum_k J_k^T Lam_k J_k (paper 002, eq. (6a)) + diag(armature).  q: (nq,)  ->  (nv, nv)"""
    J, _ = jacobians(model, q, np.zeros(model.nv))
    return sum(J[k].T @ model.Lam[k] @ J[k] for k in range(model.nbodies)) + np.diag(model.drives.armature)


def coriolis_matrix(model, q, v):
    """C = sum_k J_k^T (Psi_k J_k + Lam_k Jdot_k), Psi_k = Lam_k adj(V_k) - adj(V_k)^T Lam_k, V_k = J_k v
    (paper 002, eqs. (3), (6b)).  q: (nq,), v: (nv,)  ->  (nv, nv)"""
    J, Jdot = jacobians(model, q, v)
    C = np.zeros((model.nv, model.nv))
    for k in range(model.nbodies):
        Lam, adj_k = model.Lam[k], adj(J[k] @ v)
        Psi = Lam @ adj_k - adj_k.T @ Lam                                  # eq. (3)
        C += J[k].T @ (Psi @ J[k] + Lam @ Jdot[k])                         # eq. (6b)
    return C


def gravity_vector(model, q):
    """g = sum_k J_k^T Lam_k Ad^-1_{0,k} gamma_0 (paper 002, eq. (6c)).  q: (nq,)  ->  (nv,)"""
    J, _ = jacobians(model, q, np.zeros(model.nv))
    Ad_inv_0k = _world_to_body(model, q)
    gamma_0 = _gamma_0(model)
    return sum(J[k].T @ model.Lam[k] @ Ad_inv_0k[k] @ gamma_0 for k in range(model.nbodies))


def com_position(model, q):
    """Centre of mass of the bodies in the world, sum_k m_k (p_0k + R_0k c_k) / m.  q: (nq,)  ->  (3,)"""
    R_0k, p_0k = body_poses(model, q)
    pi = model.pi
    first_moment = sum(pi[k, 0] * p_0k[k] + R_0k[k] @ pi[k, 1:4] for k in range(model.nbodies))
    return first_moment / pi[:, 0].sum()


def com_jacobian(model, q):
    """J_com = (1/m) P^T Lam J = (1/m) sum_k P_k^T Lam_k J_k, where P_k, the first three columns of Ad^-1_{0,k},
    carries a world linear vector into body k (paper 002, eq. (7)).  q: (nq,)  ->  (3, nv)"""
    J, _ = jacobians(model, q, np.zeros(model.nv))
    P = _world_to_body(model, q)[:, :, :3]
    return sum(P[k].T @ model.Lam[k] @ J[k] for k in range(model.nbodies)) / model.pi[:, 0].sum()


def regressor(model, q, v, v_ref, a_ref):
    """Slotine-Li Y with Y pi = M a_ref + C v_ref + g (paper 002, remark 4 and eq. (16)):
        Y = J^T blkdiag(A(alpha_k) - adj(V_k)^T A(J_k v_ref)),
        alpha_k = J_k a_ref + adj(V_k) J_k v_ref + Jdot_k v_ref + gamma_k,   gamma_k = Ad^-1_{0,k} gamma_0,
    A(.) the momentum matrix of eqs. (8)-(12), body k's block in columns 10k .. 10k + 9.

    q: (nq,), v, v_ref, a_ref: (nv,)  ->  (nv, 10 nb)
    """
    J, Jdot = jacobians(model, q, v)
    Ad_inv_0k = _world_to_body(model, q)
    gamma_0 = _gamma_0(model)
    Y = np.zeros((model.nv, 10 * model.nbodies))
    for k in range(model.nbodies):
        adj_k, u = adj(J[k] @ v), J[k] @ v_ref
        alpha = J[k] @ a_ref + adj_k @ u + Jdot[k] @ v_ref + Ad_inv_0k[k] @ gamma_0        # remark 4
        Y[:, 10 * k:10 * k + 10] = J[k].T @ (momentum_matrix(alpha) - adj_k.T @ momentum_matrix(u))   # eq. (16)
    return Y


def inverse_dynamics(model, q, v, a):
    """tau = M a + C v + g by the recursive Newton-Euler algorithm (Featherstone's ID.m; paper 001, eqs.
    (22)-(27), in the body coordinates of paper 002), plus armature a.  q: (nq,), v, a: (nv,)  ->  (nv,)"""
    nb, gamma_0 = model.nbodies, _gamma_0(model)
    Ad_inv_pk, Xi = np.zeros((nb, 6, 6)), np.zeros((nb, 6, model.nv))
    V, A, f = np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nb, 6))
    for k, body in enumerate(model.bodies):
        p = body["parent"]
        V_p, A_p = (np.zeros(6), gamma_0) if p < 0 else (V[p], A[p])
        Ad_inv_pk[k], Xi[k] = ad_inv(*joint_placement(body, q)), motion_subspace(model, k)
        xi = Xi[k] @ v
        V[k] = Ad_inv_pk[k] @ V_p + xi                                     # paper 002, eq. (26)
        A[k] = Ad_inv_pk[k] @ A_p + Xi[k] @ a + adj(V[k]) @ xi             # its time derivative
        f[k] = model.Lam[k] @ A[k] - adj(V[k]).T @ model.Lam[k] @ V[k]     # paper 002, eq. (2)
    tau = model.drives.armature * a                                        # the rotors
    for k in range(nb - 1, -1, -1):
        tau += Xi[k].T @ f[k]
        p = model.bodies[k]["parent"]
        if p >= 0:
            f[p] += Ad_inv_pk[k].T @ f[k]                                  # the joint's reaction on the parent
    return tau


def forward_dynamics(model, q, v, tau):
    """a = M^-1 (tau - C v - g) by the articulated-body algorithm (Featherstone's FDab.m; paper 003, Algorithm
    8.1), for models without mimic joints (each body owns its coordinates).  q: (nq,), v, tau: (nv,)  ->  (nv,)

    S_k = Xi_k restricted to body k's own columns; IA_k, pA_k: articulated inertia and bias force.
    """
    if any(j.mimic is not None for j in model.joints):
        raise ValueError("the articulated-body algorithm needs every body to own its coordinates (no mimic joints)")
    nb, gamma_0 = model.nbodies, _gamma_0(model)
    Ad_inv_pk, S, dofs = [], [], []
    V, c, IA, pA = np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nb, 6, 6)), np.zeros((nb, 6))
    for k, body in enumerate(model.bodies):
        p = body["parent"]
        Ad_inv_pk.append(ad_inv(*joint_placement(body, q)))
        S.append(body["Xi"][:, :body["nvj"]])
        dofs.append(slice(body["iv"], body["iv"] + body["nvj"]))
        vJ = S[k] @ v[dofs[k]]
        V[k] = Ad_inv_pk[k] @ (np.zeros(6) if p < 0 else V[p]) + vJ        # paper 002, eq. (26)
        c[k] = adj(V[k]) @ vJ
        IA[k] = model.Lam[k]
        pA[k] = -adj(V[k]).T @ model.Lam[k] @ V[k]                         # paper 002, eq. (2)
    U, d, u = [None] * nb, [None] * nb, [None] * nb
    for k in range(nb - 1, -1, -1):
        U[k] = IA[k] @ S[k]
        d[k] = S[k].T @ U[k] + np.diag(model.drives.armature[dofs[k]])    # the joint's rotors
        u[k] = tau[dofs[k]] - S[k].T @ pA[k]
        p = model.bodies[k]["parent"]
        if p >= 0:
            Ia = IA[k] - U[k] @ np.linalg.solve(d[k], U[k].T)
            pa = pA[k] + Ia @ c[k] + U[k] @ np.linalg.solve(d[k], u[k])
            IA[p] += Ad_inv_pk[k].T @ Ia @ Ad_inv_pk[k]
            pA[p] += Ad_inv_pk[k].T @ pa
    qdd, A = np.zeros(model.nv), np.zeros((nb, 6))
    for k, body in enumerate(model.bodies):
        p = body["parent"]
        A[k] = Ad_inv_pk[k] @ (gamma_0 if p < 0 else A[p]) + c[k]
        qdd[dofs[k]] = np.linalg.solve(d[k], u[k] - U[k].T @ A[k])
        A[k] += S[k] @ qdd[dofs[k]]
    return qdd
