"""M, C, g, the CoM and its Jacobian (paper 002, eqs. (6a)-(6c), (7)), summed per subtree.

With the world-frame axes S of kinematics.py, J_k = Ad_{0,k}^-1 [S_i]_{i in anc(k)} and eq. (6) becomes
    M = sum_k J_k^T Lambda_k J_k                              -> M_ij = S_i^T Ic_d S_j
    C = sum_k J_k^T [Psi_k J_k + Lambda_k Jdot_k]            -> C_ij = S_i^T (-Bc_d S_j + Ic_d Sdot_j)
    g = sum_k J_k^T Lambda_k Ad_{0,k}^-1 gamma_0             -> g_i  = S_i^T Ic_i gamma_0
    J_com = (1/m) P^T Lambda J                               -> J_com[:, i] = (Ic_i S_i)_linear / m
for every pair of coordinates i, j of which one (owned by body d) lies in the subtree of the other, where
Ic_d = sum of Lambda_k^w = Ad^-T Lambda_k Ad^-1 over the subtree of d (the composite inertia), and
Bc_d = sum of adj(V_k)^T Lambda_k^w over the same subtree.  The C form follows from Psi_k J_k + Lambda_k Jdot_k =
Ad^-1 (-adj(V_k)^T Lambda^w_k S + Lambda^w_k Sdot) in world coordinates: the Lambda adj terms of eq. (6b) cancel
against those of eq. (28).  C is exactly eq. (6b), so Mdot = C + C^T holds (remark 5).  Each coordinate pair
costs one 6-vector product: the cost grows with the depth of the tree, not with the square of the DoFs.
M carries the drives' armature on its diagonal (drives.py: M + diag(armature), as Pinocchio's crba); C, g, the CoM
and J_com do not (a constant armature adds nothing to Mdot, hence to C).
reference.py sums eqs. (6a)-(6c) and (7) over the bodies as they stand, with J_k formed explicitly.

Each quantity has its own function below, run after `outward_pass` and `composites`; the entry points at the end
compute one quantity each, and bundle.dynamics all of them from one pass.
"""
import numpy as np
from numba import njit

from ..model import FREE
from .kinematics import checked_pass
from .operators import (CONTRACT, ad_transpose_times, add_adj_transpose_inertia, cross, dot6, matrix_times,
                        matrix_transpose_times, negative, spatial_inertia_times, store6, subtract,
                        transform_parameters)

WORK = [
    ("pic", np.float64, (10,)),                                   # composite (subtree) parameters, world frame
    ("Bc", np.float64, (6, 6)),                                   # composite sum of adj(V_k)^T Lambda_k^w
    ("F", np.float64, (6,)),                                      # Ic_k S_s for the coordinate s of k at hand
    ("G", np.float64, (6,)),                                      # -Bc_k S_s + Ic_k Sdot_s        (C, eq. (6b))
    ("H", np.float64, (6,)),                                      # -Bc_k^T S_s                    (C, eq. (6b))
]


@njit(cache=True)                # no FMA: g alone and the bundle form the first moments alike (bit for bit)
def composites(bodies, work, with_inertia, with_c):
    """pic_k (and with_c, Bc_k) summed over the subtree of k: each body's own world terms, then a backward pass.
    Without inertia only the mass and first moment (pic[:4]) are formed: all that g, the CoM and J_com need."""
    nb = bodies.shape[0]
    n = 10 if with_inertia else 4
    for k in range(nb):
        w, pi = work[k], bodies[k].pi
        if with_inertia:
            transform_parameters(pi, w.R0, w.p0, w.pic)
        else:
            w.pic[0] = pi[0]
            for r in range(3):
                w.pic[1 + r] = w.R0[r, 0] * pi[1] + w.R0[r, 1] * pi[2] + w.R0[r, 2] * pi[3] + pi[0] * w.p0[r]
        if with_c:
            w.Bc[:, :] = 0.0
            add_adj_transpose_inertia(w.pic, w.V, w.Bc)
    for k in range(nb - 1, -1, -1):
        par = bodies[k].parent
        if par >= 0:
            for r in range(n):
                work[par].pic[r] += work[k].pic[r]
            if with_c:
                for r in range(6):
                    for c in range(6):
                        work[par].Bc[r, c] += work[k].Bc[r, c]


@njit(cache=True, fastmath=CONTRACT, inline="always")
def composite_product(w, x):
    """Ic x, the composite inertia of w's subtree (its pic) times the 6-vector x, as a tuple."""
    return spatial_inertia_times(w.pic, x[0], x[1], x[2], x[3], x[4], x[5])


@njit(cache=True, fastmath=CONTRACT)
def composite_times(w, x, out):
    """out <- Ic x (composite_product, called rather than inlined: it is used in many places)."""
    store6(out, composite_product(w, x))


@njit(cache=True, fastmath=CONTRACT)
def mass_matrix_terms(bodies, work, M):
    """M (eq. (6a)) into the zeroed M: M_ts = S_t^T Ic_j S_s for s of body j and t of j or an ancestor, and the
    drives' armature on the diagonal."""
    for j in range(bodies.shape[0]):
        bj, wj = bodies[j], work[j]
        for s in range(bj.nvj):
            cs = bj.iv + s
            F = composite_product(wj, wj.S[:, s])                  # Ic_j S_s, kept in registers
            a = j                                                  # j itself, then its ancestors
            while a >= 0:
                ba, wa = bodies[a], work[a]
                if ba.jtype == FREE:                               # S_a = Ad_{0,a} (Xi = E_6): all six S_t^T F
                    y0, y1, y2, y3, y4, y5 = ad_transpose_times(wa.R0, wa.p0, F)   # in one transform, not six
                    i = ba.iv                                                      # products
                    M[i, cs] += y0
                    M[i + 1, cs] += y1
                    M[i + 2, cs] += y2
                    M[i + 3, cs] += y3
                    M[i + 4, cs] += y4
                    M[i + 5, cs] += y5
                    if a != j:
                        M[cs, i] += y0
                        M[cs, i + 1] += y1
                        M[cs, i + 2] += y2
                        M[cs, i + 3] += y3
                        M[cs, i + 4] += y4
                        M[cs, i + 5] += y5
                else:
                    for t in range(ba.nvj):
                        ct = ba.iv + t
                        x = dot6(wa.S[:, t], F)
                        M[ct, cs] += x
                        if a != j:
                            M[cs, ct] += x
                a = ba.parent
            M[cs, cs] += bj.armature[s]                            # + diag(armature) (drives.py)


@njit(cache=True, fastmath=CONTRACT)
def coriolis_matrix_terms(bodies, work, C):
    """C (eq. (6b)) into the zeroed C: for s of body j and t of j or an ancestor, with F = Ic_j S_s,
    G = -Bc_j S_s + Ic_j Sdot_s and H = -Bc_j^T S_s:  C_ts = S_t^T G and, t above s, C_st = H^T S_t + F^T Sdot_t."""
    for j in range(bodies.shape[0]):
        bj, wj = bodies[j], work[j]
        for s in range(bj.nvj):
            cs = bj.iv + s
            S = wj.S[:, s]
            composite_times(wj, S, wj.F)                                     # F = Ic S
            store6(wj.G, subtract(composite_product(wj, wj.Sd[:, s]), matrix_times(wj.Bc, S)))   # G
            store6(wj.H, negative(matrix_transpose_times(wj.Bc, S)))         # H = -Bc^T S
            a = j
            while a >= 0:
                ba, wa = bodies[a], work[a]
                for t in range(ba.nvj):
                    ct = ba.iv + t
                    St = wa.S[:, t]
                    C[ct, cs] += dot6(St, wj.G)
                    if a != j:
                        C[cs, ct] += dot6(wj.H, St) + dot6(wj.F, wa.Sd[:, t])
                a = ba.parent


@njit(cache=True, fastmath=CONTRACT)
def gravity_terms(bodies, work, gravity, g):
    """g (eq. (6c)): g_s = S_s^T Ic_j gamma_0 with gamma_0 = [-gravity; 0] (paper 002, footnote 1), summed over
    the bodies a coordinate moves (several, for a mimic joint)."""
    g[:] = 0.0
    for j in range(bodies.shape[0]):
        bj, wj = bodies[j], work[j]
        m, h = wj.pic[0], wj.pic[1:4]                              # Ic gamma_0 = [m gamma_v; h x gamma_v]
        f0, f1, f2 = -m * gravity[0], -m * gravity[1], -m * gravity[2]
        f3, f4, f5 = cross(h[0], h[1], h[2], -gravity[0], -gravity[1], -gravity[2])
        for s in range(bj.nvj):
            S = wj.S[:, s]
            g[bj.iv + s] += S[0] * f0 + S[1] * f1 + S[2] * f2 + S[3] * f3 + S[4] * f4 + S[5] * f5


@njit(cache=True)
def total_mass(bodies, work):
    """The mass of the moving bodies: the composite masses of the roots."""
    mass = 0.0
    for k in range(bodies.shape[0]):
        if bodies[k].parent < 0:
            mass += work[k].pic[0]
    return mass


@njit(cache=True)
def com_terms(bodies, work, com):
    """The centre of mass: the roots' composite first moments over the total mass (the origin if massless)."""
    mass = total_mass(bodies, work)
    for r in range(3):
        com[r] = 0.0
    for k in range(bodies.shape[0]):
        if bodies[k].parent < 0 and mass > 0.0:
            for r in range(3):
                com[r] += work[k].pic[1 + r] / mass


@njit(cache=True, fastmath=CONTRACT)
def com_jacobian_terms(bodies, work, J_com):
    """J_com (eq. (7)): column s of body j is the linear part of Ic_j S_s over the total mass (summed over the
    bodies a coordinate moves)."""
    mass = total_mass(bodies, work)
    J_com[:, :] = 0.0
    for j in range(bodies.shape[0]):
        bj, wj = bodies[j], work[j]
        for s in range(bj.nvj):
            composite_times(wj, wj.S[:, s], wj.F)
            for r in range(3):
                J_com[r, bj.iv + s] += wj.F[r] / mass if mass > 0.0 else 0.0


# ---- entry points: inputs checked, passes run, one quantity written --------------------------------------------
@njit(cache=True, inline="always")
def prepared(bodies, work, inputs, q, v, with_rates, with_inertia):
    """Inputs checked, the outward pass (with rates for C) and the composites (with inertias for M and C, with
    Bc for C) done.  0 or the first error's code."""
    status = checked_pass(bodies, work, inputs, q, v, with_rates)
    if status == 0:
        composites(bodies, work, with_inertia, with_rates)
    return status


@njit(cache=True)
def mass_matrix(bodies, work, q, M):
    status = prepared(bodies, work, (q,), q, q, False, True)
    if status == 0:
        M[:, :] = 0.0
        mass_matrix_terms(bodies, work, M)
    return status


@njit(cache=True)
def coriolis_matrix(bodies, work, q, v, C):
    status = prepared(bodies, work, (q, v), q, v, True, True)
    if status == 0:
        C[:, :] = 0.0
        coriolis_matrix_terms(bodies, work, C)
    return status


@njit(cache=True)
def gravity_vector(bodies, work, gravity, q, g):
    status = prepared(bodies, work, (q,), q, q, False, False)
    if status == 0:
        gravity_terms(bodies, work, gravity, g)
    return status


@njit(cache=True)
def com_position(bodies, work, q, com):
    status = prepared(bodies, work, (q,), q, q, False, False)
    if status == 0:
        com_terms(bodies, work, com)
    return status


@njit(cache=True)
def com_jacobian(bodies, work, q, J_com):
    status = prepared(bodies, work, (q,), q, q, False, False)
    if status == 0:
        com_jacobian_terms(bodies, work, J_com)
    return status
