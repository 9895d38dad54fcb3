"""The Christoffel symbols of M (papers 001 and 004) and the Coriolis matrix they give, C_ij = sum_k Gamma_ijk v_k.

What Gamma is.  Gamma_ijk = M(X_i, nabla_{X_k} X_j): the Levi-Civita connection of the kinetic-energy metric M, in
the frame of the coordinate directions X_i -- the tangent directions of `integrate`, d/de f(integrate(q, e e_i)).
Koszul's formula gives it from M:
    Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)
              + 1/2 (M(X_i, [X_k, X_j]) - M(X_j, [X_k, X_i]) - M(X_k, [X_j, X_i])).
The first line is the textbook Christoffel symbol of the first kind (paper 004, eq. (9.13); paper 001, eq. (52),
whose free index is the last).  The brackets of coordinate directions vanish, except between two coordinates of
one free or planar joint: those move the joint by q exp(e Xi_c) (left-invariant fields of SE(3) or SE(2)), and
[X_a, X_b] = X_{adj(Xi_a) Xi_b}, the se(3) bracket -- its structure constants.  So for joints of one coordinate
(every fixed-base arm, hand, leg) Gamma is the textbook symbol; with a free base or a planar joint it carries
the second line, without which no Christoffel form of the true dynamics exists: a free rigid body, whose M is
constant in body coordinates, has textbook symbols zero but a gyroscopic C v = v x* (Lambda v).

What it gives.  C(q, v) = sum_k Gamma_ijk v_k (Robot.coriolis_matrix(q, v, kind="christoffel")) has
    Mdot = C + C^T                      (the connection preserves M),
    C(q, v) v = paper 002's C(q, v) v   (Coriolis and centrifugal torques, Euler-Poincare for a free base),
    C(q, v) w - C(q, w) v = M [v, w]    (no torsion; [v, w] the bracket of the two velocities as directions,
                                          zero unless two coordinates of one free or planar joint meet).
Without free or planar joints the last line is the textbook symmetry C(q, v) w = C(q, w) v (Gamma_ijk =
Gamma_ikj).  With them no Gamma can keep that symmetry, Mdot = C + C^T and the true C v at once: the first two
fix Gamma as the textbook symbol (the classical uniqueness argument), which misses the free body's gyroscopic
term; this module keeps the last two and the torsion identity.

Closed form (world frame, the notation of matrices.py: S_x the world axis of coordinate x, Ic_D the composite
inertia of D's subtree, Bc_D = sum over that subtree of adj(V_b)^T Lambda_b^w, [a, b] = adj(a) b, <a, b>_D =
a^T Ic_D b).  The metric is the bodies' one pulled back through the poses, so the connection is each body's
left-invariant one, nabla_x y = 1/2 ([x, y] - Lambda^-1 (adj(x)^T Lambda y + adj(y)^T Lambda x)), plus the rate of
the body Jacobian's columns: the column of coordinate j in body b turns by [S_j, S_k] along direction k when k's
body lies between j's (strictly below it) and b (paper 001, Prop. 1, eq. (53)).  Every term needs i, j, k on one
path from the root; summed over the bodies b of the subtree of the deepest of their bodies, D:
    Gamma_ijk = 1/2 (sigma_jk <S_i, [S_j, S_k]>_D + <[S_i, S_j], S_k>_D + <[S_i, S_k], S_j>_D),
    sigma_jk = +1 if k's body is strictly below j's, -1 otherwise (the same body, or above)      (1)
-- paper 001's eqs. (55)-(57) (its three cases are the orderings of i, j, k), for trees and multi-DoF joints.
Summed over k with the twists V_b = sum of S_k v_k over b's path:
    C_ij = S_i^T (Ic_D Sdot_j - 1/2 (Bc_D + Bc_D^T) S_j) + 1/2 [S_i, S_j]^T h_D                  (2)
with D the deeper of i's and j's bodies, Sdot_j = adj(V_J) S_j and h_D = sum over D's subtree of Lambda_b^w V_b,
the subtree's momentum.  Paper 002's C_ij = S_i^T (Ic_D Sdot_j - Bc_D S_j) differs from it by the skew
N_ij = 1/2 S_i^T (Bc_D - Bc_D^T) S_j + 1/2 [S_i, S_j]^T h_D, with N v = 0.  Per body, (2) is the rigid body's
1/2 (V x* Lambda w + w x* Lambda V - Lambda (V x w)), the factorization of Echeandia and Wensing's Algorithm 1
(arXiv:2010.01033), which iDynTree's fixed-base C implements; Pinocchio's computeCoriolisMatrix is this same C,
fixed and floating base, to round-off (test_christoffel).  (2) costs O(n d) like paper 002's C, (1) O(n d^2) for
its O(n d^2) nonzero entries.
The drives' armature (drives.py), constant and on M's diagonal, changes neither Gamma nor C: for joints of one
coordinate Gamma is then the Levi-Civita connection of M + diag(armature) too (its derivatives vanish); on a free or
planar joint's coordinates, whose directions do not commute, Gamma stays the rigid bodies', the convention of
Pinocchio and MuJoCo (armature in M alone), under which Mdot = C + C^T and the power balance still hold.
"""
import numpy as np
from numba import njit

from .matrices import composite_product, prepared
from .operators import (CONTRACT, ad_inv_times, ad_inv_transpose_times, add, adj_times, dot6, force_cross,
                        matrix_times, matrix_transpose_times, spatial_inertia_times, store6, subtract)

WORK = [                                                        # world frame, per body b
    ("hc", np.float64, (6,)),                                   # h_b: momentum of b's subtree, sum Lambda^w V
    ("Fc", np.float64, (6, 6)),                                 # Ic_D S of b's own coordinates, D at hand in (1)
]


@njit(cache=True, fastmath=CONTRACT)
def composite_momenta(bodies, work):
    """h_b = sum over b's subtree of Lambda_k^w V_k = Ad^-T (Lambda_k (Ad^-1 V_k)), then summed inward.  Needs the
    outward pass with rates."""
    nb = bodies.shape[0]
    for k in range(nb):
        w = work[k]
        x = ad_inv_times(w.R0, w.p0, w.V)                                   # the body's twist in its frame
        f = spatial_inertia_times(bodies[k].pi, x[0], x[1], x[2], x[3], x[4], x[5])
        store6(w.hc, ad_inv_transpose_times(w.R0, w.p0, f[0], f[1], f[2], f[3], f[4], f[5]))
    for k in range(nb - 1, -1, -1):
        p = bodies[k].parent
        if p >= 0:
            for r in range(6):
                work[p].hc[r] += work[k].hc[r]


@njit(cache=True, fastmath=CONTRACT)
def christoffel_coriolis_terms(bodies, work, C):
    """C of eq. (2) into the zeroed C: for s of body j and t of j or an ancestor, with F = Ic_j S_s,
    B = (Bc_j + Bc_j^T) S_s and X = S_s x* h_j (so that [S_t, S_s]^T h_j = S_t^T X):
        C_ts = S_t^T G,  G = Ic_j Sdot_s + (X - B) / 2,   and, t above s,
        C_st = H^T S_t + F^T Sdot_t,  H = -(B + X) / 2
    (matrices.coriolis_matrix_terms with its G and H replaced)."""
    for j in range(bodies.shape[0]):
        bj, wj = bodies[j], work[j]
        h = wj.hc
        for s in range(bj.nvj):
            cs = bj.iv + s
            S = wj.S[:, s]
            F = composite_product(wj, S)
            B = add(matrix_times(wj.Bc, S), matrix_transpose_times(wj.Bc, S))
            X = force_cross(S, h[0], h[1], h[2], h[3], h[4], h[5])
            D = composite_product(wj, wj.Sd[:, s])
            G = (D[0] + 0.5 * (X[0] - B[0]), D[1] + 0.5 * (X[1] - B[1]), D[2] + 0.5 * (X[2] - B[2]),
                 D[3] + 0.5 * (X[3] - B[3]), D[4] + 0.5 * (X[4] - B[4]), D[5] + 0.5 * (X[5] - B[5]))
            H = (-0.5 * (B[0] + X[0]), -0.5 * (B[1] + X[1]), -0.5 * (B[2] + X[2]), -0.5 * (B[3] + X[3]),
                 -0.5 * (B[4] + X[4]), -0.5 * (B[5] + X[5]))
            a = j
            while a >= 0:
                ba, wa = bodies[a], work[a]
                for t in range(ba.nvj):
                    ct = ba.iv + t
                    St = wa.S[:, t]
                    C[ct, cs] += dot6(St, G)
                    if a != j:
                        C[cs, ct] += dot6(H, St) + dot6(F, wa.Sd[:, t])
                a = ba.parent


@njit(cache=True, fastmath=CONTRACT)
def christoffel_terms(bodies, work, Gamma):
    """Gamma of eq. (1) into Gamma, zeroed here: every ordered triple of coordinates (i, j, k) on D's path whose
    deepest body is D, for each body D.  With F_x = Ic_D S_x and, per pair (i, j), Z = [S_i, S_j],
    X = S_j x* F_i, Y = S_i x* F_j (so that <S_i, [S_j, S_k]> = -X^T S_k and <[S_i, S_k], S_j> = -Y^T S_k):
        Gamma_ijk = 1/2 (Z^T F_k - (Y + sigma_jk X)^T S_k),  two products per triple."""
    Gamma[:, :, :] = 0.0
    for D in range(bodies.shape[0]):
        wD = work[D]
        a = D
        while a >= 0:                                           # F_x = Ic_D S_x along D's path
            for c in range(bodies[a].nvj):
                store6(work[a].Fc[:, c], composite_product(wD, work[a].S[:, c]))
            a = bodies[a].parent
        a1 = D
        while a1 >= 0:                                          # i: D's path
            b1, w1 = bodies[a1], work[a1]
            for c1 in range(b1.nvj):
                i = b1.iv + c1
                Si, Fi = w1.S[:, c1], w1.Fc[:, c1]
                a2 = D
                while a2 >= 0:                                  # j: D's path
                    b2, w2 = bodies[a2], work[a2]
                    for c2 in range(b2.nvj):
                        j = b2.iv + c2
                        Sj, Fj = w2.S[:, c2], w2.Fc[:, c2]
                        Z = adj_times(Si, Sj)
                        X = force_cross(Sj, Fi[0], Fi[1], Fi[2], Fi[3], Fi[4], Fi[5])
                        Y = force_cross(Si, Fj[0], Fj[1], Fj[2], Fj[3], Fj[4], Fj[5])
                        below, other = add(Y, X), subtract(Y, X)        # sigma_jk = +1, -1
                        a3 = D
                        while a3 >= 0:                          # k: D's path, or only D if neither i nor j is D's
                            b3, w3 = bodies[a3], work[a3]
                            W = below if a3 > a2 else other             # on one path, deeper bodies come later
                            for c3 in range(b3.nvj):
                                Gamma[i, j, b3.iv + c3] += 0.5 * (dot6(Z, w3.Fc[:, c3]) - dot6(W, w3.S[:, c3]))
                            if a1 != D and a2 != D:
                                break
                            a3 = b3.parent
                    a2 = b2.parent
            a1 = b1.parent


# ---- entry points ---------------------------------------------------------------------------------------------
@njit(cache=True)
def christoffel_symbols(bodies, work, q, Gamma):
    status = prepared(bodies, work, (q,), q, q, False, True)
    if status == 0:
        christoffel_terms(bodies, work, Gamma)
    return status


@njit(cache=True)
def coriolis_matrix(bodies, work, q, v, C):
    status = prepared(bodies, work, (q, v), q, v, True, True)
    if status == 0:
        composite_momenta(bodies, work)
        C[:, :] = 0.0
        christoffel_coriolis_terms(bodies, work, C)
    return status
