"""The table of quantities: a row per Robot method that computes arrays from a state.

From a row, robot.py derives the method -- its single-state fast path straight into the kernel's C entry point
(compiled.fast_kernel: the kernel and its result checks; overlapping outputs are refused before), the same path
for the methods written in Python (CHECKED: the kernel within all its checks), its batch path through the compiled
parallel loop (compiled.batch_loop), its `out=` checks and its error messages -- and test/api/test_in_place.py the list
of methods it checks.  Adding a quantity is one algorithm module (its kernel:
kernel(bodies, work, *arrays, [gravity,] *inputs, *outputs) -> status, see kinematics.ERR_*) plus one row
here.  A per-body quantity an algorithm keeps goes into its module's WORK fields; an array sized by the robot
(an (nv, nv) factor, say) is one of workspace.ARRAYS, named by the row.

Shapes are tuples of ints and the names "nq", "nv", "nb" (bodies) and "ny" (10 nb); an output of shape () is a
scalar per state.  Inputs named q* have nq entries, the others nv.
"""
from dataclasses import dataclass

from ..compiled import batch_loop, checked_kernels
from . import (bundle, centroidal, christoffel, contacts, diagonalized, dynamics_derivatives, energy, frames,
               global_factorization, innovations, kinematics, matrices, momentum, newton_euler, regressor,
               state_derivatives, time_derivatives)
from .kinematics import ERR_OVERFLOW, ERR_OVERLAP


@dataclass(frozen=True)
class Quantity:
    name: str                 # the Robot method
    kernel: object            # the compiled entry point (a numba dispatcher)
    inputs: tuple             # names of the state arguments, in order
    outputs: tuple            # (name, shape) of each result
    gravity: bool             # the kernel takes the gravity vector after the workspace (and the arrays)
    doc: str
    arrays: tuple = ()        # names of per-robot arrays (workspace.ARRAYS) the kernel takes after the workspace
    matrices: tuple = ()      # inputs that are (nv, k) matrices per state, k free (their Robot method is written
                              # by hand on the row's kernel and loop)
    wrenches: bool = False    # the method takes f_ext= and reference= (external wrenches on frames), handed to
                              # Robot._<name>_with_wrenches when given
    kinds: tuple = ()         # (kind, row name) pairs when the method computes its quantity several ways: it takes
                              # kind=, the first pair's (this row) by default, and hands the others to their rows
    unbounded: tuple = ()     # outputs that divide by a quantity of the state (M^-1, articulated inertias, the total
                              # mass): checked for overflow at every call; the others only when an input entry
                              # exceeds compiled.SAFE_MAGNITUDE (they cannot overflow below it)

    @property
    def shapes(self):
        return tuple(shape for _, shape in self.outputs)


QUANTITIES = (
    Quantity("mass_matrix", matrices.mass_matrix, ("q",), (("M", ("nv", "nv")),), False,
             "M(q) = sum_k J_k^T Lambda_k J_k (paper 002, eq. (6a)).  q: (..., nq) -> (..., nv, nv)"),
    Quantity("coriolis_matrix", matrices.coriolis_matrix, ("q", "v"), (("C", ("nv", "nv")),), False,
             "C(q, v) of paper 002, eq. (6b): C v holds the Coriolis and centrifugal torques, Mdot = C + C^T.\n\n"
             "q: (..., nq), v: (..., nv) -> (..., nv, nv)\n\n"
             "kind: \"paper002\" (the default, above) or \"christoffel\": C_ij = sum_k Gamma_ijk v_k of the\n"
             "Christoffel symbols (christoffel_symbols), in O(n d) like the default -- the same C v and\n"
             "Mdot = C + C^T, another matrix, and the one Pinocchio's computeCoriolisMatrix returns.  Without free\n"
             "or planar joints it is the textbook (Lagrangian) C, with C(q, v) w = C(q, w) v; with them,\n"
             "C(q, v) w - C(q, w) v = M [v, w] (see christoffel_symbols).",
             kinds=(("paper002", "coriolis_matrix"), ("christoffel", "_christoffel_coriolis_matrix"))),
    Quantity("gravity_vector", matrices.gravity_vector, ("q",), (("g", ("nv",)),), True,
             "g(q) = sum_k J_k^T Lambda_k Ad^-1_{0,k} gamma_0 (paper 002, eq. (6c)).  q: (..., nq) -> (..., nv)"),
    Quantity("com_position", matrices.com_position, ("q",), (("com", (3,)),), False,
             "Centre of mass of the moving bodies in the world frame.  q: (..., nq) -> (..., 3)",
             unbounded=("com",)),
    Quantity("com_jacobian", matrices.com_jacobian, ("q",), (("J_com", (3, "nv")),), False,
             "J_com = (1/m) P^T Lambda J (paper 002, eq. (7)): CoM velocity = J_com v.  q: (..., nq) -> (..., 3, nv)",
             unbounded=("J_com",)),
    Quantity("regressor", regressor.regressor, ("q", "v", "v_ref", "a_ref"), (("Y", ("nv", "ny")),), True,
             "Slotine-Li Y(q, v, v_r, a_r) with Y pi = M a_r + C(q, v) v_r + g (paper 002, eq. (16)).\n\n"
             "q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  (..., nv, 10 nbodies), columns in body_names order."),
    Quantity("momentum_regressor", momentum.momentum_regressor, ("q", "v"),
             (("Y_p", ("nv", "ny")), ("Y_h", ("nv", "ny"))), True,
             "(Y_p, Y_h) with Y_p pi = M(q) v, the generalized momentum (paper 002, Prop. 1), and Y_h pi =\n"
             "C(q, v)^T v - g(q), so that d/dt (Y_p pi) = tau + Y_h pi along any motion (Mdot = C + C^T): a\n"
             "torque-prediction regressor without accelerations (composite adaptation, momentum observers).\n\n"
             "q: (..., nq), v: (..., nv)  ->  2 x (..., nv, 10 nbodies), columns in body_names order."),
    Quantity("inverse_dynamics", newton_euler.inverse_dynamics, ("q", "v", "a"), (("tau", ("nv",)),), True,
             "tau = M a + C v + g by the recursive Newton-Euler algorithm, O(n).  (..., nq), (..., nv) x2 -> "
             "(..., nv)\n\n"
             "f_ext: external wrenches on the robot, {frame (a name of frame_names or its index): wrench\n"
             "[force; torque] (6,) or (..., 6)}, given in `reference` as frame_jacobian's: \"local\" (the\n"
             "default, Pinocchio's fext: the frame's axes, torque about its origin), \"world\" (a spatial wrench:\n"
             "world axes, torque about the world origin) or \"local_world_aligned\" (world axes, torque about the\n"
             "frame's origin: a contact force at a foot).  Then tau = M a + C v + g - sum_f J_f^T w_f.", wrenches=True),
    Quantity("forward_dynamics", newton_euler.forward_dynamics, ("q", "v", "tau"), (("a", ("nv",)),), True,
             "a = M^-1 (tau - C v - g) by the articulated-body algorithm, O(n) (with coupled mimic joints: by a\n"
             "Cholesky factor of M).  (..., nq), (..., nv) x2 -> (..., nv)\n\n"
             "f_ext, reference: external wrenches as for inverse_dynamics: a = FD(q, v, tau + sum_f J_f^T w_f).",
             wrenches=True, unbounded=("a",)),
    Quantity("body_placements", kinematics.body_placements, ("q",), (("T", ("nb", 4, 4)),), False,
             "T_{0,k} of every body: (..., nbodies, 4, 4) homogeneous transforms, body frames in the world."),
    Quantity("kinetic_energy", energy.kinetic_energy, ("q", "v"), (("T", ()),), False,
             "1/2 v^T M(q) v, summed body by body: 1/2 sum_k v_k^T Lambda_k v_k.  -> (...,)"),
    Quantity("potential_energy", energy.potential_energy, ("q",), (("U", ()),), True,
             "-m gravity . com, zero with the CoM at the world origin.  -> (...,)"),
    Quantity("inverse_dynamics_derivatives", dynamics_derivatives.inverse_dynamics_derivatives, ("q", "v", "a"),
             (("dtau_dq", ("nv", "nv")), ("dtau_dv", ("nv", "nv")), ("M", ("nv", "nv"))), True,
             "(dtau/dq, dtau/dv, M) of tau = ID(q, v, a); q-derivatives along the tangent directions of integrate\n"
             "(Pinocchio's computeRNEADerivatives).  (..., nq), (..., nv) x2 -> 3 x (..., nv, nv)"),
    Quantity("forward_dynamics_derivatives", dynamics_derivatives.forward_dynamics_derivatives, ("q", "v", "tau"),
             (("da_dq", ("nv", "nv")), ("da_dv", ("nv", "nv")), ("M_inv", ("nv", "nv"))), True,
             "(da/dq, da/dv, M^-1) of a = FD(q, v, tau); q-derivatives along the tangent directions of integrate\n"
             "(Pinocchio's computeABADerivatives).  (..., nq), (..., nv) x2 -> 3 x (..., nv, nv)",
             arrays=("lam", "H", "X"),
             unbounded=("da_dq", "da_dv", "M_inv")),
    Quantity("gravity_derivative", time_derivatives.gravity_derivative, ("q", "v"), (("g_dot", ("nv",)),), True,
             "dg/dt = dg/dq v along q' = v (paper 002, Prop. 6), in O(n): the g_dot of time_derivatives alone.\n"
             "q: (..., nq), v: (..., nv) -> (..., nv)"),
    Quantity("_state_derivatives", state_derivatives.state_derivatives, ("q", "v"),
             (("dM_dq", ("nv", "nv", "nv")), ("dC_dq", ("nv", "nv", "nv")), ("dC_dv", ("nv", "nv", "nv")),
              ("dg_dq", ("nv", "nv")), ("dJcom_dq", (3, "nv", "nv"))), True,
             "(dM_dq, dC_dq, dC_dv, dg_dq, dJcom_dq) at (q, v) (paper 002, Prop. 5).",
             unbounded=("dJcom_dq",)),
    # Robot.time_derivatives (a TimeDerivatives, with Y_dot when references are given) is written on these two:
    Quantity("_time_derivatives", time_derivatives.time_derivatives, ("q", "v", "a"),
             (("M_dot", ("nv", "nv")), ("C_dot", ("nv", "nv")), ("g_dot", ("nv",)), ("J_com_dot", (3, "nv"))), True,
             "(M_dot, C_dot, g_dot, J_com_dot) along q' = v, v' = a (paper 002, Prop. 6).",
             unbounded=("J_com_dot",)),
    Quantity("_time_derivatives_with_regressor", time_derivatives.time_derivatives_with_regressor,
             ("q", "v", "a", "v_ref", "a_ref", "j_ref"),
             (("M_dot", ("nv", "nv")), ("C_dot", ("nv", "nv")), ("g_dot", ("nv",)), ("J_com_dot", (3, "nv")),
              ("Y_dot", ("nv", "ny"))), True,
             "(M_dot, C_dot, g_dot, J_com_dot, Y_dot) along q' = v, v' = a, v_r' = a_r, a_r' = j_r.",
             unbounded=("J_com_dot",)),
    Quantity("inverse_mass_matrix", innovations.inverse_mass_matrix, ("q",), (("M_inv", ("nv", "nv")),), False,
             "M(q)^-1 = [I - H psi K]^* D^-1 [I - H psi K] (paper 003, eq. (4.1d)), in O(n^2) without forming M\n"
             "(Pinocchio's computeMinverse).  q: (..., nq) -> (..., nv, nv)", arrays=("BV",),
             unbounded=("M_inv",)),
    # Robot.innovations (an Innovations) and Robot.solve_mass_matrix are written on these two:
    Quantity("_innovations", innovations.innovations, ("q",),
             (("L", ("nv", "nv")), ("D", ("nv", "nv")), ("L_inv", ("nv", "nv"))), False,
             "(L, D, L^-1) of M = L D L^T (paper 003, eqs. (4.1b), (4.1c)).",
             unbounded=("L", "D", "L_inv")),
    Quantity("_solve_mass_matrix", innovations.solve_mass_matrix, ("q", "x"), (("out", ("nv", "k")),), False,
             "M^-1 x for x (nv, k): one factorization, O(n) per column.", matrices=("x",),
             unbounded=("out",)),
    Quantity("from_diagonalized", diagonalized.from_diagonalized, ("q", "nu"), (("v", ("nv",)),), False,
             "qdot = l^T nu = [I - H psi K]^T D^-1/2 nu: the joint velocities of the diagonalized velocities nu\n"
             "(paper 003, Table 2, right column), O(n).  q: (..., nq), nu: (..., nv) -> (..., nv)",
             unbounded=("v",)),
    # Robot.diagonalized (a Diagonalized) is written on this one:
    Quantity("_diagonalized", diagonalized.diagonalized, ("q", "v", "tau"),
             (("nu", ("nv",)), ("epsilon", ("nv",)), ("coriolis", ("nv",))), True,
             "(nu, epsilon, C(theta, nu)) of paper 003's diagonalized equations at (q, v, tau).",
             unbounded=("nu", "epsilon", "coriolis")),
    # Robot.dynamics (a Dynamics, with Y when references are given) is written by hand on these two:
    Quantity("_dynamics", bundle.dynamics, ("q", "v"),
             (("M", ("nv", "nv")), ("C", ("nv", "nv")), ("g", ("nv",)), ("com", (3,)), ("J_com", (3, "nv"))),
             True, "M, C, g, com and J_com from one outward pass.",
             unbounded=("com", "J_com")),
    Quantity("_dynamics_with_regressor", bundle.dynamics_with_regressor, ("q", "v", "v_ref", "a_ref"),
             (("M", ("nv", "nv")), ("C", ("nv", "nv")), ("g", ("nv",)), ("com", (3,)), ("J_com", (3, "nv")),
              ("Y", ("nv", "ny"))), True, "M, C, g, com, J_com and Y from one outward pass.",
             unbounded=("com", "J_com")),
    # Robot.global_factorization (a GlobalFactorization of (6 nb, .) matrices) views these blocked arrays:
    Quantity("_global_factorization", global_factorization.global_factorization, ("q", "v"),
             (("S", ("nb", 6, "nv")), ("G", ("nb", 6, "nb", 6)), ("Gamma", ("nb", 6, "nb", 6)),
              ("J", ("nb", 6, "nb", 6)), ("ad_Gamma", ("nb", 6, "nb", 6)), ("C_bar", ("nb", 6, "nb", 6))), False,
             "Ploen's S, G, Gamma, J, ad_Gamma, C_bar at (q, v), blocked by body (paper 000, eqs. (19)-(37))."),
    # The Christoffel symbols of M and the C they give, coriolis_matrix(kind="christoffel") (christoffel.py):
    Quantity("christoffel_symbols", christoffel.christoffel_symbols, ("q",), (("Gamma", ("nv", "nv", "nv")),),
             False,
             "Gamma_ijk(q), the Christoffel symbols of the first kind of M, with C_ij = sum_k Gamma_ijk v_k the\n"
             "C of coriolis_matrix(q, v, kind=\"christoffel\"), in closed form (paper 001, eqs. (52)-(57)).\n\n"
             "Gamma_ijk = M(X_i, nabla_{X_k} X_j), the Levi-Civita connection of M in the frame of the tangent\n"
             "directions X_i of integrate.  Without free or planar joints (any fixed-base arm, hand or leg) this is\n"
             "the textbook Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) (paper 004, eq. (9.13)),\n"
             "symmetric in j, k.  A free (floating) base or planar joint moves along the non-commuting directions\n"
             "of SE(3) or SE(2), and Gamma adds their brackets [X_a, X_b] (the structure constants of se(3)):\n"
             "  + 1/2 (M(X_i, [X_k, X_j]) - M(X_j, [X_k, X_i]) - M(X_k, [X_j, X_i])),\n"
             "so that C = Gamma v still has Mdot = C + C^T and gives the Coriolis and centrifugal torques C v, and\n"
             "Gamma_ijk - Gamma_ikj = M(X_i, [X_k, X_j]) (no symmetric Gamma can do both there: a free rigid body's\n"
             "textbook symbols are zero, its gyroscopic torque is not).\n\n"
             "q: (..., nq) -> (..., nv, nv, nv), Gamma[..., i, j, k]."),
    Quantity("_christoffel_coriolis_matrix", christoffel.coriolis_matrix, ("q", "v"), (("C", ("nv", "nv")),), False,
             "C(q, v) = sum_k Gamma_ijk v_k, coriolis_matrix(q, v, kind=\"christoffel\")."),
    # A frame's pose, Jacobian, twist and classical acceleration bias (frames.py).  Their input `frame` is the
    # frames.FRAME_SIZE array of one frame and reference, the same for every state of a batch: Robot.frame_placement,
    # frame_jacobian, frame_velocity and frame_acceleration_bias are written by hand on these rows' kernels and
    # loops (they take the frame's name and the reference).
    Quantity("_frame_placement", frames.frame_placement, ("q", "frame"), (("T", (4, 4)),), False,
             "T_{0,f} (4, 4) of a frame."),
    Quantity("_frame_jacobian", frames.frame_jacobian, ("q", "frame"), (("J", (6, "nv")),), False,
             "J_f (6, nv) of a frame in its reference."),
    Quantity("_frame_velocity", frames.frame_velocity, ("q", "v", "frame"), (("V", (6,)),), False,
             "V_f = J_f v (6,) of a frame in its reference."),
    Quantity("_frame_acceleration_bias", frames.frame_acceleration_bias, ("q", "v", "frame"), (("A", (6,)),),
             False, "Jdot_f v (6,), the classical acceleration of a frame at zero joint accelerations."),
    # Centroidal dynamics (centroidal.py).
    Quantity("centroidal_momentum_matrix", centroidal.centroidal_momentum_matrix, ("q",), (("A_G", (6, "nv")),),
             False,
             "A_G (6, nv), the centroidal momentum matrix: h_G = A_G v is the robot's linear momentum and its angular\n"
             "momentum about its centre of mass, [linear; angular] in world axes; column s = X_G^* Ic_j S_s, the\n"
             "composite inertia of the subtree that coordinate s moves times its world axis, moment moved to the CoM\n"
             "(Orin, Goswami, Lee 2013; Pinocchio's computeCentroidalMap).  q: (..., nq) -> (..., 6, nv)",
             unbounded=("A_G",)),
    Quantity("centroidal_momentum_bias", centroidal.centroidal_momentum_bias, ("q", "v"), (("Adot_v", (6,)),),
             False,
             "Adot_G v (6,): the rate of the centroidal momentum at zero joint accelerations, so that\n"
             "d/dt h_G = A_G a + Adot_G v (Pinocchio's computeCentroidalMapTimeVariation dAg @ v): the sum of the\n"
             "bodies' Newton-Euler forces at qddot = 0, without gravity.  q: (..., nq), v: (..., nv) -> (..., 6)",
             unbounded=("Adot_v",)),
    Quantity("centroidal_inertia", centroidal.centroidal_inertia, ("q",), (("I_G", (6, 6)),), False,
             "I_G (6, 6) = [[m E, 0], [0, I_c]]: the whole robot's composite inertia about its centre of mass, world\n"
             "axes (Pinocchio's data.Ig); I_G^-1 h_G is the robot's average spatial velocity.  q: (..., nq) ->\n"
             "(..., 6, 6)", unbounded=("I_G",)),
    # Contact-constrained dynamics (contacts.py): Robot.constrained_dynamics and task_space_dynamics are written by
    # hand on this row's kernel and loop (its input `contacts` is the contact set's spec array, the same for every
    # state of a batch; its arrays are sized by the contact set).
    Quantity("_constrained_dynamics", contacts.constrained_dynamics, ("q", "v", "tau", "contacts"),
             (("a", ("nv",)), ("forces", ("m",))), True, "(a, forces) of the KKT system of the contacts.",
             arrays=("CW", "CL"), unbounded=("a", "forces")),
)

# Each kernel within its checks (compiled.checked_kernels): overlapping outputs refused, non-finite results reported.
CHECKED = checked_kernels({row.name: (row.kernel, tuple(1 + (x in row.matrices) for x in row.inputs),
                                      tuple(max(len(shape), 1) for shape in row.shapes),
                                      tuple(name in row.unbounded for name, _ in row.outputs))
                           for row in QUANTITIES}, ERR_OVERFLOW, ERR_OVERLAP)

# The compiled loop over a batch of states of each quantity: one loop for all (compiled.batch_loop), which calls the
# quantity's C entry point (compiled.entry: its kernel within its checks) for each state.
PARALLEL = {row.name: batch_loop for row in QUANTITIES}
