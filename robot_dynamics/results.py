"""What the Robot methods return when a quantity has several parts: dataclasses of arrays, each of which can be
handed back as `out=` to receive the next state's results in place.

RESULT_TYPES says which registry rows return which class (quantity.Quantity builds them, and takes them as `out`):
the row's outputs fill the class's fields in order, any further field stays None (Dynamics without the regressor's Y).
"""
from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)            # not frozen: building a frozen one costs ~1 us, a tenth of a small arm's call
class Dynamics:
    """What one pass of paper 002 gives: tau = M a + C v + g; Y pi = M a_r + C v_r + g when references are given.

    M, C: (..., nv, nv); g: (..., nv); com: (..., 3); J_com: (..., 3, nv); Y: (..., nv, 10 nbodies) or None.
    A Dynamics can be handed back as dynamics(..., out=d) to receive the next state's results in place.
    """
    M: np.ndarray
    C: np.ndarray
    g: np.ndarray
    com: np.ndarray
    J_com: np.ndarray
    Y: np.ndarray | None = None


@dataclass(slots=True)
class TimeDerivatives:
    """d/dt of M, C(q, v), g, J_com (and the regressor Y) along a motion (Robot.time_derivatives): Mdot = C + C^T.

    M_dot, C_dot: (..., nv, nv); g_dot: (..., nv); J_com_dot: (..., 3, nv); Y_dot: (..., nv, 10 nb) or None.
    """
    M_dot: np.ndarray
    C_dot: np.ndarray
    g_dot: np.ndarray
    J_com_dot: np.ndarray
    Y_dot: np.ndarray | None = None


@dataclass(slots=True)
class StateDerivatives:
    """Derivatives of M, C(q, v), g and J_com with respect to q (tangent directions of integrate) and v, the last
    index the direction (Robot.state_derivatives, paper 002, Prop. 5).

    dM_dq, dC_dq, dC_dv: (..., nv, nv, nv); dg_dq: (..., nv, nv); dJcom_dq: (..., 3, nv, nv).
    """
    dM_dq: np.ndarray
    dC_dq: np.ndarray
    dC_dv: np.ndarray
    dg_dq: np.ndarray
    dJcom_dq: np.ndarray


@dataclass(slots=True)
class ParameterDerivatives:
    """d/dpi of M, C(q, v) and g at one state, the last index over robot.parameters (paper 002, Prop. 2): M, C and g
    are linear in pi, so M = dM_dpi @ pi.  dM_dpi, dC_dpi: (..., nv, nv, 10 nb); dg_dpi: (..., nv, 10 nb)."""
    dM_dpi: np.ndarray
    dC_dpi: np.ndarray
    dg_dpi: np.ndarray


@dataclass(slots=True)
class Innovations:
    """The innovations factorization M = L D L^T (paper 003, eqs. (4.1b), (4.1c); Robot.innovations).

    L = [I + H phi K]: unit triangular over the tree -- L_ij != 0 (i != j) only where coordinate i belongs to a
    strict ancestor of the body of j, i.e. upper triangular in our parent-before-child order (the paper numbers
    links from the tip, where it is lower triangular; Pinocchio's U D U^T).  D: block diagonal, one block per joint
    (6 x 6 for a free joint, 1 x 1 for a revolute or prismatic one), the articulated joint inertias.
    L_inv = [I - H psi K] = L^-1.  All (..., nv, nv).
    """
    L: np.ndarray
    D: np.ndarray
    L_inv: np.ndarray


@dataclass(slots=True)
class Diagonalized:
    """The diagonalized equations of motion nu_dot + C(theta, nu) = epsilon (paper 003, sections 5 and 7;
    Robot.diagonalized), with M = m m^T, m = L D^1/2 (innovations; D^1/2 the Cholesky factor of a multi-DoF block):

    nu = m^T qdot (..., nv): 1/2 nu^T nu is the kinetic energy.  epsilon = m^-1 (tau - g(q)) (..., nv), or None
    without tau (paper 003's robot has no gravity: its T is our tau - g).  coriolis = C(theta, nu) (..., nv), with
    nu^T C = 0: the Coriolis forces do no work in these coordinates.
    """
    nu: np.ndarray
    epsilon: np.ndarray | None
    coriolis: np.ndarray


@dataclass(slots=True)
class GlobalFactorization:
    """Ploen's operators at (q, v) (Robot.global_factorization; paper 000, section 3.2, Prop. 1), nb = nbodies,
    block k = body k (robot.body_names order, parent before child), twists [linear; angular]:

    S (..., 6 nb, nv): joint motion subspaces, block-diagonal (a free joint's block is the 6x6 identity; a mimic
    joint's block sits in its master's column, times the multiplier).  G (..., 6 nb, 6 nb): twist propagation,
    block (k, a) = Ad^-1_{a,k} for a = k (identity) or an ancestor of k, zero elsewhere.  Gamma (..., 6 nb, 6 nb):
    block (k, parent) = Ad^-1_{p,k}, G = (I - Gamma)^-1.  J (..., 6 nb, 6 nb): the body inertias Lambda_k on the
    diagonal.  ad_Gamma (..., 6 nb, 6 nb): -adj(S_k v_k) on the diagonal.  C_bar (..., 6 nb, 6 nb): the
    skew-symmetric C_bar_k of Prop. 1 on the diagonal, C_bar_k V_k = -adj(V_k)^T Lambda_k V_k.

    The stacked body twists are G S v; mass_matrix(), coriolis_matrix() and mass_matrix_dot() multiply the
    operators out as eqs. (36), (37) and (28) -- dense products for study and checks, not for speed.
    """
    S: np.ndarray
    G: np.ndarray
    Gamma: np.ndarray
    J: np.ndarray
    ad_Gamma: np.ndarray
    C_bar: np.ndarray

    def mass_matrix(self):
        """M = S^T G^T J G S (paper 000, eq. (36)).  -> (..., nv, nv)"""
        GS = self.G @ self.S
        return _transpose(GS) @ self.J @ GS

    def coriolis_matrix(self):
        """C = S^T G^T (J G ad_Gamma Gamma + C_bar) G S (paper 000, eq. (37)): Mdot - 2 C is skew.  -> (..., nv, nv)"""
        GS = self.G @ self.S
        return _transpose(GS) @ (self.J @ self.G @ self.ad_Gamma @ self.Gamma + self.C_bar) @ GS

    def mass_matrix_dot(self):
        """Mdot = N + N^T, N = S^T G^T J G ad_Gamma Gamma G S (paper 000, eqs. (27)-(28)).  -> (..., nv, nv)"""
        GS = self.G @ self.S
        N = _transpose(GS) @ self.J @ self.G @ self.ad_Gamma @ self.Gamma @ GS
        return N + _transpose(N)


def _transpose(x):
    return np.swapaxes(x, -1, -2)


@dataclass(slots=True)
class TaskSpaceDynamics:
    """The dynamics of one frame's motion x (Robot.task_space_dynamics; paper 004, eqs. (9.98)-(9.99), for redundant
    robots as Khatib's operational-space formulation):  Lambda xddot + eta = F,  with tau = J^T F + N^T tau_0.

    Lambda (..., k, k) = (J M^-1 J^T)^-1, the task-space inertia; eta (..., k) = Lambda (J M^-1 (C v + g) - Jdot v),
    the task-space bias; J (..., k, nv) the frame's Jacobian rows; J_bar (..., nv, k) = M^-1 J^T Lambda, the
    dynamically consistent generalized inverse (J J_bar = E); N (..., nv, nv) = E - J_bar J, the null-space
    projector: joint torques N^T tau_0 do not accelerate the frame (J M^-1 N^T = 0).  k = 6 ([linear; angular]) or
    3 (position only).  xddot = J a + Jdot v is the frame's classical acceleration in the reference.
    """
    Lambda: np.ndarray
    eta: np.ndarray
    J: np.ndarray
    J_bar: np.ndarray
    N: np.ndarray


# registry row -> its result class; the row's outputs fill the class's fields in order
RESULT_TYPES = {"_dynamics": Dynamics, "_dynamics_with_regressor": Dynamics, "_time_derivatives": TimeDerivatives,
                "_time_derivatives_with_regressor": TimeDerivatives, "_state_derivatives": StateDerivatives,
                "_innovations": Innovations, "_diagonalized": Diagonalized}
