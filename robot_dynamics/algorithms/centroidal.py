"""Centroidal dynamics: the centroidal momentum matrix A_G, with h_G = A_G v, its bias Adot_G v, and the centroidal
composite inertia (Orin, Goswami and Lee, "Centroidal dynamics of a humanoid robot", Auton. Robots 35, 2013;
Pinocchio's computeCentroidalMap, computeCentroidalMapTimeVariation and data.Ig).

h_G = [l; k_G] (6,): the robot's linear momentum l = m cdot and its angular momentum about the centre of mass c,
both in world axes, [linear; angular] as everywhere here.  With the world-frame quantities of kinematics.py and
matrices.py (every body's inertia Lambda_k^w seen from the world origin, its world twist V_k = sum S qdot over its
support), the momentum about the world origin is h_0 = sum_k Lambda_k^w V_k (paper 002, Prop. 1, eq. (8), summed
over the bodies), and collecting the coordinates,
    h_0 = sum_j sum_s (Ic_j S_s) qdot_s,       Ic_j the composite inertia of j's subtree (matrices.composites),
so that column s of body j of A_0 is Ic_j S_s -- the subtree's momentum when coordinate s alone moves at unit
rate.  Moving the moment point from the origin to c is the wrench shift X_G^* = [[E, 0], [-[c]x, E]]:
    A_G = X_G^* A_0,   column by column [l; k_0 - c x l].
The time derivative at zero joint accelerations: h_0 is conserved but for the forces on the bodies, so
d/dt h_0 = sum_k F_k with F_k = Lambda_k^w A_k + V_k x* Lambda_k^w V_k (the world-frame Newton-Euler force of
body k, A_k = sum Sdot qdot over its support, eq. (28) unrolled: its spatial acceleration at qddot = 0), and
since cdot x l = cdot x m cdot = 0,
    Adot_G v = d/dt h_G |_(qddot = 0) = [ldot; kdot_0 - c x ldot],   (ldot, kdot_0) = sum_k F_k.
The centroidal inertia I_G = [[m E, 0], [0, I_c]] is the whole robot's composite inertia about c (world axes):
the average spatial velocity of the robot is I_G^-1 h_G.
The drives' armature (drives.py) is not in h_G, A_G or I_G: the links' momentum alone, as Pinocchio's
computeCentroidalMap (a rotor's spin about its own axis is not counted as the robot's momentum).
"""
import numpy as np
from numba import njit

from .innovations import pose
from .kinematics import ERR_QUAT, check_inputs, checked_pass, placement
from .matrices import composites
from .operators import CONTRACT, bias_force, cross, spatial_inertia_times, transform_parameters

WORK = [
    ("pG", np.float64, (10,)),                                    # the body's own parameters, world frame
    ("AG", np.float64, (6,)),                                     # A_k = sum Sdot qdot, world frame
    ("Ic", np.float64, (10,)),                                    # Lambda_k^w, then the composite Ic_k (A_G)
]


@njit(cache=True, inline="always")
def centre(bodies, work):
    """(m, c0, c1, c2): the total mass and the centre of mass from the roots' composites (the origin if
    massless), as com_terms."""
    m, h0, h1, h2 = 0.0, 0.0, 0.0, 0.0
    for k in range(bodies.shape[0]):
        if bodies[k].parent < 0:
            x = work[k].pic
            m, h0, h1, h2 = m + x[0], h0 + x[1], h1 + x[2], h2 + x[3]
    if m > 0.0:
        return m, h0 / m, h1 / m, h2 / m
    return m, 0.0, 0.0, 0.0


@njit(cache=True, fastmath=CONTRACT)
def centroidal_map(bodies, work, q, A):
    """A <- A_G (6, nv) in one outward and one inward pass: the outward pass of innovations.pose (T_{0,k} and the
    world axes S, no rates) with each body's Lambda_k^w, then, tips to root, the composite Ic_j complete (its
    children's added) and column s of body j, Ic_j S_s (summed over the bodies a coordinate moves: a mimic joint's
    column adds into its master's); the moment moved to the centre of mass at the end, k_G = k_0 - c x l.
    0 or ERR_QUAT."""
    nb, nv = bodies.shape[0], A.shape[1]
    for k in range(nb):                                            # T_{0,k}, S and Lambda_k^w
        b, w = bodies[k], work[k]
        x = 0.0
        if b.nvj == 1:
            x = q[b.iq]
        elif placement(b, w, q) != 0:
            return ERR_QUAT
        pose(b, w, work[max(b.parent, 0)], x)
        transform_parameters(b.pi, w.Rm, w.pm, w.Ic)
    for r in range(6):
        for c in range(nv):
            A[r, c] = 0.0
    m, h0, h1, h2 = 0.0, 0.0, 0.0, 0.0
    for j in range(nb - 1, -1, -1):                                # Ic_j: Lambda_j^w and its children's Ic
        bj, wj = bodies[j], work[j]
        I, i = wj.Ic, bj.iv
        if bj.nvj == 1:                                            # h_0 column: Ic_j S (paper 002, Prop. 1)
            S = wj.Sm
            l0, l1, l2, k0, k1, k2 = spatial_inertia_times(I, S[0], S[1], S[2], S[3], S[4], S[5])
            A[0, i], A[1, i], A[2, i] = A[0, i] + l0, A[1, i] + l1, A[2, i] + l2
            A[3, i], A[4, i], A[5, i] = A[3, i] + k0, A[4, i] + k1, A[5, i] + k2
        else:
            S = wj.S
            for s in range(bj.nvj):
                l0, l1, l2, k0, k1, k2 = spatial_inertia_times(I, S[0, s], S[1, s], S[2, s], S[3, s], S[4, s],
                                                               S[5, s])
                A[0, i + s], A[1, i + s], A[2, i + s] = A[0, i + s] + l0, A[1, i + s] + l1, A[2, i + s] + l2
                A[3, i + s], A[4, i + s], A[5, i + s] = A[3, i + s] + k0, A[4, i + s] + k1, A[5, i + s] + k2
        if bj.parent >= 0:
            P = work[bj.parent].Ic
            P[0], P[1], P[2], P[3], P[4] = P[0] + I[0], P[1] + I[1], P[2] + I[2], P[3] + I[3], P[4] + I[4]
            P[5], P[6], P[7], P[8], P[9] = P[5] + I[5], P[6] + I[6], P[7] + I[7], P[8] + I[8], P[9] + I[9]
        else:                                                      # the roots' composites: mass, first moment
            m, h0, h1, h2 = m + I[0], h0 + I[1], h1 + I[2], h2 + I[3]
    c0, c1, c2 = (h0 / m, h1 / m, h2 / m) if m > 0.0 else (0.0, 0.0, 0.0)     # the centre of mass (as centre)
    for c in range(nv):                                            # A_G = X_G^* A_0: k_G = k_0 - c x l
        x0, x1, x2 = cross(c0, c1, c2, A[0, c], A[1, c], A[2, c])
        A[3, c], A[4, c], A[5, c] = A[3, c] - x0, A[4, c] - x1, A[5, c] - x2
    return 0


@njit(cache=True)
def centroidal_momentum_matrix(bodies, work, q, A):
    status = check_inputs((q,))
    return status if status != 0 else centroidal_map(bodies, work, q, A)


@njit(cache=True, fastmath=CONTRACT)
def centroidal_momentum_bias(bodies, work, q, v, out):
    """out <- Adot_G v (6,): sum_k F_k at qddot = 0 (no gravity), its moment moved to the centre of mass."""
    status = checked_pass(bodies, work, (q, v), q, v, True)
    if status != 0:
        return status
    m, h0, h1, h2 = 0.0, 0.0, 0.0, 0.0
    f0, f1, f2, f3, f4, f5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        transform_parameters(b.pi, w.R0, w.p0, w.pG)              # Lambda_k^w
        A = w.AG
        for r in range(6):                                         # A_k = A_p + Sdot_k qdot_k
            A[r] = 0.0 if b.parent < 0 else work[b.parent].AG[r]
        for c in range(b.nvj):
            s = v[b.iv + c]
            for r in range(6):
                A[r] += w.Sd[r, c] * s
        l0, l1, l2, l3, l4, l5 = spatial_inertia_times(w.pG, A[0], A[1], A[2], A[3], A[4], A[5])
        g0, g1, g2, g3, g4, g5 = bias_force(w.pG, w.V)           # V x* Lambda V
        f0, f1, f2, f3, f4, f5 = f0 + l0 + g0, f1 + l1 + g1, f2 + l2 + g2, f3 + l3 + g3, f4 + l4 + g4, f5 + l5 + g5
        x = w.pG
        m, h0, h1, h2 = m + x[0], h0 + x[1], h1 + x[2], h2 + x[3]
    c0, c1, c2 = (h0 / m, h1 / m, h2 / m) if m > 0.0 else (0.0, 0.0, 0.0)
    x0, x1, x2 = cross(c0, c1, c2, f0, f1, f2)
    out[0], out[1], out[2], out[3], out[4], out[5] = f0, f1, f2, f3 - x0, f4 - x1, f5 - x2
    return 0


@njit(cache=True)
def centroidal_inertia(bodies, work, q, I):
    """I <- I_G (6, 6) = [[m E, 0], [0, I_c]]: the composite inertia of the whole robot about its centre of mass,
    world axes (the roots' composites, their rotational inertia moved from the origin to c by the parallel-axis
    theorem I_c = I_0 - m (|c|^2 E - c c^T))."""
    status = checked_pass(bodies, work, (q,), q, q, False)
    if status != 0:
        return status
    composites(bodies, work, True, False)
    m, c0, c1, c2 = centre(bodies, work)
    i00, i11, i22, i01, i02, i12 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for k in range(bodies.shape[0]):
        if bodies[k].parent < 0:
            x = work[k].pic
            i00, i11, i22, i01, i02, i12 = i00 + x[4], i11 + x[5], i22 + x[6], i01 + x[7], i02 + x[8], i12 + x[9]
    cc = c0 * c0 + c1 * c1 + c2 * c2
    for r in range(6):
        for c in range(6):
            I[r, c] = 0.0
    I[0, 0], I[1, 1], I[2, 2] = m, m, m
    I[3, 3], I[4, 4], I[5, 5] = i00 - m * (cc - c0 * c0), i11 - m * (cc - c1 * c1), i22 - m * (cc - c2 * c2)
    I[3, 4] = I[4, 3] = i01 + m * c0 * c1
    I[3, 5] = I[5, 3] = i02 + m * c0 * c2
    I[4, 5] = I[5, 4] = i12 + m * c1 * c2
    return 0
