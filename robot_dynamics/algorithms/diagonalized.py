"""The diagonalized equations of motion (paper 003, sections 3, 5 and 7): nu_dot + C(theta, nu) = epsilon.

With the innovations factorization M = L D L^T of innovations.py and a factor D = R R^T of each joint's block
(R = sqrt(D) for a 1-DoF joint, the lower Cholesky factor for a free or planar one), m = L R and l = m^-1
(eq. (5.1)) make M = m m^T and M^-1 = l^T l (eq. (5.2)), and
    nu      = m^T qdot = R^T (qdot_k + G_k^T V_p)                     (Table 2, eq. (5.3); V_p the parent's twist)
    qdot    = l^T nu:  qdot_k = R^-T nu_k - G_k^T V_p                 (Table 2, right: the reciprocal recursion)
    epsilon = l (tau - g) = R^-1 [I - H psi K] (tau - g)              (Table 3; paper 003's robot has no gravity, so
                                                                       its T is our tau - g(q))
    C(theta, nu) = l C qdot - mdot^T qdot = epsilon - nu_dot            (section 7: unique, whatever C is chosen)
Since mdot m^T + m mdot^T = Mdot and qdot^T C qdot = 1/2 qdot^T Mdot qdot, nu^T C(theta, nu) = 0: the Coriolis
forces do no work on nu, and the kinetic energy is 1/2 nu^T nu.

mdot^T qdot, with everything in world coordinates (innovations.py) and d/dt along qdot:
    (mdot^T qdot)_k = Rdot^T (qdot_k + G^T V_p) + R^T (Gdot^T V_p + G^T W_p),   W_p = sum over the ancestors a of
p of Sdot_a qdot_a; Gdot = (Udot - G Ddot) D^-1 with U = P S, Udot = Pdot S + P Sdot, Ddot = Sdot^T U + S^T Udot,
and the articulated inertia's rate from the Riccati recursion differentiated (paper 003, eqs. (6.4)-(6.5)):
Pdot_k = Lambdadot_k + sum over children c of (Pdot_c - Gdot_c U_c^T - G_c Udot_c^T), Lambdadot = -(adj(V)^T
Lambda + Lambda adj(V)) for a world-frame inertia carried by its body.  Rdot = R Phi(R^-1 Ddot R^-T), Phi the lower
triangle with half its diagonal (the rate of a Cholesky factor).  C qdot comes from Newton-Euler in world
coordinates: f_k = Lambda_k W_k - adj(V_k)^T Lambda_k V_k, (C qdot)_k = S_k^T (sum of f over k's subtree).
With the drives' armature (drives.py) M is M + diag(armature) throughout: innovations.factor puts it into D, and
being constant it leaves Ddot, Pdot and C qdot as they are.
"""
import numpy as np
from numba import njit

from ..dense import cholesky_into
from .innovations import factored
from .kinematics import ERR_SINGULAR
from .operators import CONTRACT, bias_force, inertia_rate, spatial_inertia_times, store_inertia

WORK = [
    ("Rc", np.float64, (6, 6)), ("Rci", np.float64, (6, 6)),      # R (D = R R^T, lower) and R^-1
    ("dP", np.float64, (6, 6)), ("dU", np.float64, (6, 6)),       # Pdot (accumulated), Udot
    ("dD", np.float64, (6, 6)), ("dG", np.float64, (6, 6)),       # Ddot, Gdot
    ("dR", np.float64, (6, 6)),                                   # Rdot
    ("dL", np.float64, (10,)),                                    # the parameters of Lambdadot
    ("Wv", np.float64, (6,)),                                     # W_k = sum of Sdot qdot up to k
    ("Nf", np.float64, (6,)),                                     # Newton-Euler wrench of k's subtree (C qdot)
    ("Ng", np.float64, (6,)),                                     # gravity wrench of k's subtree (g)
    ("Fe", np.float64, (6,)), ("Fq", np.float64, (6,)),           # psi-filtered forces of tau - g and of C qdot
    ("xe", np.float64, (6,)), ("xc", np.float64, (6,)),           # [I - H psi K] (tau - g), [I - H psi K] C qdot
]


@njit(cache=True, fastmath=CONTRACT)
def cholesky_factors(bodies, work, one_dof):
    """R (lower, D = R R^T) and R^-1 of every joint block D_k (innovations.factor has formed D) -- of the 1-DoF
    joints only if one_dof (else factor_rates does them in its pass).  False if not positive definite."""
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        n, D, R, Ri = b.nvj, w.Dk, w.Rc, w.Rci
        if n == 1:                                                 # R = sqrt(D)
            if not one_dof:
                continue
            if not D[0, 0] > 0.0:
                return False
            R[0, 0] = np.sqrt(D[0, 0])
            Ri[0, 0] = 1.0 / R[0, 0]
            continue
        if not cholesky_into(D[:n, :n], R[:n, :n]):
            return False
        for i in range(n):
            for j in range(n):
                Ri[i, j] = 0.0
        for j in range(n):                                         # R^-1 by forward substitution
            Ri[j, j] = 1.0 / R[j, j]
            for i in range(j + 1, n):
                s = 0.0
                for c in range(j, i):
                    s += R[i, c] * Ri[c, j]
                Ri[i, j] = -s / R[i, i]
    return True


@njit(cache=True, fastmath=CONTRACT)
def factor_rates(bodies, work):
    """Pdot, Udot, Ddot, Gdot and Rdot of every body along qdot (the module docstring), inward, and R, R^-1 of
    the 1-DoF joints; needs the outward pass with rates (V, Sdot), innovations.factor and cholesky_factors of the
    other joints."""
    nb = bodies.shape[0]
    for k in range(nb):                        # Lambdadot = -(adj(V)^T Lambda + Lambda adj(V)), from the rate of
        w = work[k]                            # its ten parameters (operators.inertia_rate), not a 6x6 product
        inertia_rate(w.pw, w.V, w.dL)
        store_inertia(w.dL, w.dP)
    for k in range(nb - 1, -1, -1):
        b, w = bodies[k], work[k]
        n, S, Sd, P, dP, U, G = b.nvj, w.S, w.Sd, w.Pk, w.dP, w.HU, w.Gk
        if n == 1:                                                 # written out: one column, D and R scalars
            dd = 0.0
            for r in range(6):
                x = 0.0
                for j in range(6):
                    x += dP[r, j] * S[j, 0] + P[r, j] * Sd[j, 0]
                w.dU[r, 0] = x
                dd += Sd[r, 0] * U[r, 0] + S[r, 0] * x
            w.dD[0, 0] = dd
            dinv = w.Dki[0, 0]
            for r in range(6):
                w.dG[r, 0] = (w.dU[r, 0] - G[r, 0] * dd) * dinv
            if b.parent >= 0:                                      # Pdot_p += Pdot - Gdot U^T - G Udot^T:
                dPp = work[b.parent].dP                            # symmetric (the rate of P - U D^-1 U^T),
                for r in range(6):                                 # its lower triangle, then mirrored
                    gd, g = w.dG[r, 0], G[r, 0]
                    for c in range(r + 1):
                        x = dPp[r, c] + dP[r, c] - gd * U[c, 0] - g * w.dU[c, 0]
                        dPp[r, c] = x
                        dPp[c, r] = x
            r = np.sqrt(w.Dk[0, 0])                                # R = sqrt(D) (D > 0: innovations.factor),
            w.Rc[0, 0], w.Rci[0, 0] = r, 1.0 / r                   # here rather than in cholesky_factors
            w.dR[0, 0] = 0.5 * dd / r
            continue
        for c in range(n):                                         # Udot = Pdot S + P Sdot
            for r in range(6):
                s = 0.0
                for j in range(6):
                    s += dP[r, j] * S[j, c] + P[r, j] * Sd[j, c]
                w.dU[r, c] = s
        for i in range(n):                                         # Ddot = Sdot^T U + S^T Udot
            for c in range(n):
                s = 0.0
                for r in range(6):
                    s += Sd[r, i] * U[r, c] + S[r, i] * w.dU[r, c]
                w.dD[i, c] = s
        T = w.GJk                                                  # scratch
        for r in range(6 if b.parent >= 0 else 0):                 # Gdot = (Udot - G Ddot) D^-1 (a root's is
            for i in range(n):                                     # not used: no parent to carry it)
                t = w.dU[r, i]
                for j in range(n):
                    t -= G[r, j] * w.dD[j, i]
                T[r, i] = t
            for c in range(n):
                s = 0.0
                for i in range(n):
                    s += T[r, i] * w.Dki[i, c]
                w.dG[r, c] = s
        if b.parent >= 0:                                          # Pdot_p += Pdot - Gdot U^T - G Udot^T
            dPp = work[b.parent].dP
            for r in range(6):
                for c in range(6):
                    s = dP[r, c]
                    for i in range(n):
                        s -= w.dG[r, i] * U[c, i] + G[r, i] * w.dU[c, i]
                    dPp[r, c] += s
        # Rdot = R Phi(R^-1 Ddot R^-T)
        Ri, R = w.Rci, w.Rc
        for i in range(n):                                         # X = R^-1 Ddot R^-T (symmetric), in two steps
            for c in range(n):
                s = 0.0
                for a in range(i + 1):                             # R^-1 is lower triangular
                    s += Ri[i, a] * w.dD[a, c]
                T[i, c] = s
        for i in range(n):
            for j in range(n):
                s = 0.0
                for c in range(j + 1):
                    s += T[i, c] * Ri[j, c]
                w.dR[i, j] = s
        for i in range(n):                                         # Phi(X): lower triangle, half diagonal
            w.dR[i, i] *= 0.5
            for j in range(i + 1, n):
                w.dR[i, j] = 0.0
        for i in range(n):                                         # R Phi(X), through the scratch
            for j in range(n):
                s = 0.0
                for c in range(j, i + 1):                          # both lower triangular
                    s += R[i, c] * w.dR[c, j]
                T[i, j] = s
        for i in range(n):
            for j in range(n):
                w.dR[i, j] = T[i, j]


@njit(cache=True, fastmath=CONTRACT)
def diagonalized_terms(bodies, work, gravity, v, tau, nu, epsilon, coriolis):
    """nu, epsilon and C(theta, nu) (the module docstring), after the outward pass with rates, factor,
    cholesky_factors and factor_rates."""
    nb = bodies.shape[0]
    for k in range(nb):                                            # outward: W, nu, and the Newton-Euler wrenches
        b, w = bodies[k], work[k]
        n, p = b.nvj, b.parent
        for r in range(6):
            w.Wv[r] = 0.0 if p < 0 else work[p].Wv[r]
        for i in range(n):
            for r in range(6):
                w.Wv[r] += w.Sd[r, i] * v[b.iv + i]
        f = spatial_inertia_times(w.pw, w.Wv[0], w.Wv[1], w.Wv[2], w.Wv[3], w.Wv[4], w.Wv[5])
        e = bias_force(w.pw, w.V)
        gx = spatial_inertia_times(w.pw, -gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
        for r in range(6):
            w.Nf[r] = f[r] + e[r]
            w.Ng[r] = gx[r]
            w.Fe[r], w.Fq[r] = 0.0, 0.0
        for i in range(n):                                         # y = qdot + G^T V_p;  nu = R^T y
            y = v[b.iv + i]
            z = 0.0                                                # Gdot^T V_p + G^T W_p
            if p >= 0:
                wp = work[p]
                for r in range(6):
                    y += w.Gk[r, i] * wp.V[r]
                    z += w.dG[r, i] * wp.V[r] + w.Gk[r, i] * wp.Wv[r]
            w.xe[i], w.xc[i] = y, z                                # (scratch until the inward pass)
        for i in range(n):
            s, t = 0.0, 0.0
            for j in range(n):
                s += w.Rc[j, i] * w.xe[j]
                t += w.dR[j, i] * w.xe[j] + w.Rc[j, i] * w.xc[j]
            nu[b.iv + i] = s
            coriolis[b.iv + i] = -t                                # - mdot^T qdot; l C qdot is added below
    for k in range(nb - 1, -1, -1):                                # inward: C qdot, tau - g, and [I - H psi K]
        b, w = bodies[k], work[k]
        n, S = b.nvj, w.S
        for i in range(n):                                         # (C qdot)_k = S^T Nf, g_k = S^T Ng
            cq = 0.0
            for r in range(6):
                cq += S[r, i] * w.Nf[r]
            w.xc[i] = cq - (S[0, i] * w.Fq[0] + S[1, i] * w.Fq[1] + S[2, i] * w.Fq[2] + S[3, i] * w.Fq[3]
                            + S[4, i] * w.Fq[4] + S[5, i] * w.Fq[5])
        for i in range(n):
            gk = 0.0
            for r in range(6):
                gk += S[r, i] * w.Ng[r]
            w.xe[i] = (tau[b.iv + i] - gk) - (S[0, i] * w.Fe[0] + S[1, i] * w.Fe[1] + S[2, i] * w.Fe[2]
                                              + S[3, i] * w.Fe[3] + S[4, i] * w.Fe[4] + S[5, i] * w.Fe[5])
        if b.parent >= 0:
            wp = work[b.parent]
            for r in range(6):
                s, t = w.Fe[r], w.Fq[r]
                for i in range(n):
                    s += w.Gk[r, i] * w.xe[i]
                    t += w.Gk[r, i] * w.xc[i]
                wp.Fe[r] += s
                wp.Fq[r] += t
                wp.Nf[r] += w.Nf[r]
                wp.Ng[r] += w.Ng[r]
        for i in range(n):                                         # epsilon = R^-1 xe; C += R^-1 xc
            s, t = 0.0, 0.0
            for j in range(i + 1):
                s += w.Rci[i, j] * w.xe[j]
                t += w.Rci[i, j] * w.xc[j]
            epsilon[b.iv + i] = s
            coriolis[b.iv + i] += t
    return 0


@njit(cache=True, fastmath=CONTRACT)
def from_diagonalized_terms(bodies, work, nu, v):
    """qdot = l^T nu = [I - H psi K]^T R^-T nu (Table 2, right column), outward, after factor and cholesky_factors:
    qdot_k = R^-T nu_k - G^T A_p, A_k = A_p + S qdot_k (A: the twists V being rebuilt)."""
    for k in range(bodies.shape[0]):
        b, w = bodies[k], work[k]
        n, p = b.nvj, b.parent
        for i in range(n):
            s = 0.0
            for j in range(i, n):
                s += w.Rci[j, i] * nu[b.iv + j]
            if p >= 0:
                for r in range(6):
                    s -= w.Gk[r, i] * work[p].Wv[r]
            v[b.iv + i] = s
        for r in range(6):
            x = 0.0 if p < 0 else work[p].Wv[r]
            for i in range(n):
                x += w.S[r, i] * v[b.iv + i]
            w.Wv[r] = x


# ---- entry points -------------------------------------------------------------------------------------------
@njit(cache=True)
def cholesky_factored(bodies, work, inputs, q, v, with_rates):
    """innovations.factored, then the joints' R = D^1/2 (cholesky_factors; with rates, factor_rates does the
    1-DoF joints'): 0 or the first error's code."""
    status = factored(bodies, work, inputs, q, v, with_rates)
    if status == 0 and not cholesky_factors(bodies, work, not with_rates):
        status = ERR_SINGULAR
    return status


@njit(cache=True)
def diagonalized(bodies, work, gravity, q, v, tau, nu, epsilon, coriolis):
    """nu, epsilon = l (tau - g) and C(theta, nu) at (q, v, tau)."""
    status = cholesky_factored(bodies, work, (q, v, tau), q, v, True)
    if status != 0:
        return status
    factor_rates(bodies, work)
    return diagonalized_terms(bodies, work, gravity, v, tau, nu, epsilon, coriolis)


@njit(cache=True)
def from_diagonalized(bodies, work, q, nu, v):
    """qdot of nu at q."""
    status = cholesky_factored(bodies, work, (q, nu), q, q, False)
    if status == 0:
        from_diagonalized_terms(bodies, work, nu, v)
    return status
