"""The table of quantities: what each quantity the kernels compute is -- its kernel, inputs, outputs and their
shapes, the per-robot arrays it needs, and the errors it can report.

A Robot method (robot.py) hands its arguments to its row's entry (methods.Calls), which gives every row the same
protocol: one state in C straight into the kernel's C entry point (generated.fast_kernel: the kernel and its result
checks), strided views through CHECKED (the kernel within all its checks), batches through the one compiled
parallel loop (batch.batch_loop), `out=` checks and error messages.  Adding a quantity is one algorithm module
(its kernel: kernel(bodies, work, *arrays, [gravity,] *inputs, *outputs) -> status, see kinematics.ERR_*), one row
here and one method in robot.py (test/api/test_in_place.py lists the methods it checks from the rows).  A
per-body quantity an algorithm keeps goes into its module's WORK fields; an array sized by the robot
(an (nv, nv) factor, say) is one of workspace.ARRAYS, named by the row.

Shapes are tuples of ints and the names "nq", "nv", "nb" (bodies) and "ny" (10 nb); an output of shape () is a
scalar per state.  Inputs named q* have nq entries, the others nv.
"""
from dataclasses import dataclass

from ..calls.generated import checked_kernels
from . import (bundle, centroidal, christoffel, contacts, diagonalized, dynamics_derivatives, energy, frames,
               global_factorization, innovations, kinematics, matrices, momentum, momentum_observer, newton_euler,
               regressor, state_derivatives, time_derivatives)
from .kinematics import ERR_OVERFLOW, ERR_OVERLAP


@dataclass(frozen=True)
class Row:
    """One quantity of the table: its kernel, inputs, outputs and checks (calls.quantity.Quantity is the route of one
    row for one robot, and the Robot method of the row's name hands over to it)."""

    name: str                 # the quantity (a Robot method's name, or _<name> for a part of one)
    kernel: object            # the kernel (a numba dispatcher)
    inputs: tuple             # names of its inputs, in order: the state's (q* nq wide, the others nv) and a constant
                              # input the same for every state of a batch, "frame" (frames.FRAME_SIZE) or "contacts"
                              # (contacts.py's spec)
    outputs: tuple            # (name, shape) of each result
    gravity: bool             # the kernel takes the gravity vector after the workspace (and the arrays)
    arrays: tuple = ()        # names of per-robot arrays (workspace.ARRAYS) the kernel takes after the workspace
    matrices: tuple = ()      # inputs that are (nv, k) matrices per state, k free
    unbounded: tuple = ()     # outputs that divide by a quantity of the state (M^-1, articulated inertias, the total
                              # mass): checked for overflow at every call; the others only when an input entry
                              # exceeds compiling.SAFE_MAGNITUDE (they cannot overflow below it)
    errors: tuple = ()        # (status, message) of the kernel's own status codes, beyond kinematics.ERR_*

    @property
    def shapes(self):
        return tuple(shape for _, shape in self.outputs)

    @property
    def state(self):
        """The inputs that vary from state to state (all but a constant input)."""
        return tuple(x for x in self.inputs if x not in ("frame", "contacts"))


QUANTITIES = (
    # paper 002's matrices, each on its own (matrices.py)
    Row("mass_matrix", matrices.mass_matrix, ("q",), (("M", ("nv", "nv")),), False),
    Row("coriolis_matrix", matrices.coriolis_matrix, ("q", "v"), (("C", ("nv", "nv")),), False),
    Row("gravity_vector", matrices.gravity_vector, ("q",), (("g", ("nv",)),), True),
    Row("com_position", matrices.com_position, ("q",), (("com", (3,)),), False, unbounded=("com",)),
    Row("com_jacobian", matrices.com_jacobian, ("q",), (("J_com", (3, "nv")),), False, unbounded=("J_com",)),
    # the regressors (regressor.py, momentum.py)
    Row("regressor", regressor.regressor, ("q", "v", "v_ref", "a_ref"), (("Y", ("nv", "ny")),), True),
    Row("momentum", momentum.momentum, ("q", "v"), (("p", ("nv",)),), False),
    Row("momentum_regressor", momentum.momentum_regressor, ("q", "v"),
             (("Y_p", ("nv", "ny")), ("Y_h", ("nv", "ny"))), True),
    # p = M v and h = C^T v - g at once, pdot = tau + h: a momentum observer's tick (momentum_observer.py)
    Row("momentum_rate", momentum_observer.momentum_rate, ("q", "v"), (("p", ("nv",)), ("h", ("nv",))), True),
    # recursive Newton-Euler and the articulated-body algorithm (newton_euler.py)
    Row("inverse_dynamics", newton_euler.inverse_dynamics, ("q", "v", "a"), (("tau", ("nv",)),), True),
    Row("forward_dynamics", newton_euler.forward_dynamics, ("q", "v", "tau"), (("a", ("nv",)),), True,
             unbounded=("a",)),
    Row("body_placements", kinematics.body_placements, ("q",), (("T", ("nb", 4, 4)),), False),
    Row("kinetic_energy", energy.kinetic_energy, ("q", "v"), (("T", ()),), False),
    Row("potential_energy", energy.potential_energy, ("q",), (("U", ()),), True),
    # derivatives (dynamics_derivatives.py, state_derivatives.py, time_derivatives.py)
    Row("inverse_dynamics_derivatives", dynamics_derivatives.inverse_dynamics_derivatives, ("q", "v", "a"),
             (("dtau_dq", ("nv", "nv")), ("dtau_dv", ("nv", "nv")), ("M", ("nv", "nv"))), True),
    Row("forward_dynamics_derivatives", dynamics_derivatives.forward_dynamics_derivatives, ("q", "v", "tau"),
             (("da_dq", ("nv", "nv")), ("da_dv", ("nv", "nv")), ("M_inv", ("nv", "nv"))), True,
             arrays=("lam", "H", "X"), unbounded=("da_dq", "da_dv", "M_inv")),
    Row("gravity_derivative", time_derivatives.gravity_derivative, ("q", "v"), (("g_dot", ("nv",)),), True),
    Row("_state_derivatives", state_derivatives.state_derivatives, ("q", "v"),
             (("dM_dq", ("nv", "nv", "nv")), ("dC_dq", ("nv", "nv", "nv")), ("dC_dv", ("nv", "nv", "nv")),
              ("dg_dq", ("nv", "nv")), ("dJcom_dq", (3, "nv", "nv"))), True, unbounded=("dJcom_dq",)),
    Row("_time_derivatives", time_derivatives.time_derivatives, ("q", "v", "a"),
             (("M_dot", ("nv", "nv")), ("C_dot", ("nv", "nv")), ("g_dot", ("nv",)), ("J_com_dot", (3, "nv"))), True,
             unbounded=("J_com_dot",)),
    Row("_time_derivatives_with_regressor", time_derivatives.time_derivatives_with_regressor,
             ("q", "v", "a", "v_ref", "a_ref", "j_ref"),
             (("M_dot", ("nv", "nv")), ("C_dot", ("nv", "nv")), ("g_dot", ("nv",)), ("J_com_dot", (3, "nv")),
              ("Y_dot", ("nv", "ny"))), True, unbounded=("J_com_dot",)),
    # the innovations factorization and what it gives (innovations.py, diagonalized.py; paper 003)
    Row("inverse_mass_matrix", innovations.inverse_mass_matrix, ("q",), (("M_inv", ("nv", "nv")),), False,
             arrays=("BV",), unbounded=("M_inv",)),
    Row("_innovations", innovations.innovations, ("q",),
             (("L", ("nv", "nv")), ("D", ("nv", "nv")), ("L_inv", ("nv", "nv"))), False,
             unbounded=("L", "D", "L_inv")),
    Row("_solve_mass_matrix", innovations.solve_mass_matrix, ("q", "x"), (("out", ("nv", "k")),), False,
             matrices=("x",), unbounded=("out",)),
    Row("from_diagonalized", diagonalized.from_diagonalized, ("q", "nu"), (("v", ("nv",)),), False,
             unbounded=("v",)),
    Row("_diagonalized", diagonalized.diagonalized, ("q", "v", "tau"),
             (("nu", ("nv",)), ("epsilon", ("nv",)), ("coriolis", ("nv",))), True,
             unbounded=("nu", "epsilon", "coriolis")),
    # M, C, g, com and J_com (and Y) from one outward pass (bundle.py)
    Row("_dynamics", bundle.dynamics, ("q", "v"),
             (("M", ("nv", "nv")), ("C", ("nv", "nv")), ("g", ("nv",)), ("com", (3,)), ("J_com", (3, "nv"))),
             True, unbounded=("com", "J_com")),
    Row("_dynamics_with_regressor", bundle.dynamics_with_regressor, ("q", "v", "v_ref", "a_ref"),
             (("M", ("nv", "nv")), ("C", ("nv", "nv")), ("g", ("nv",)), ("com", (3,)), ("J_com", (3, "nv")),
              ("Y", ("nv", "ny"))), True, unbounded=("com", "J_com")),
    # Ploen's operators, blocked by body (global_factorization.py; paper 000)
    Row("_global_factorization", global_factorization.global_factorization, ("q", "v"),
             (("S", ("nb", 6, "nv")), ("G", ("nb", 6, "nb", 6)), ("Gamma", ("nb", 6, "nb", 6)),
              ("J", ("nb", 6, "nb", 6)), ("ad_Gamma", ("nb", 6, "nb", 6)), ("C_bar", ("nb", 6, "nb", 6))), False),
    # the Christoffel symbols of M and the C they give (christoffel.py; paper 001)
    Row("christoffel_symbols", christoffel.christoffel_symbols, ("q",), (("Gamma", ("nv", "nv", "nv")),),
             False),
    Row("_christoffel_coriolis_matrix", christoffel.coriolis_matrix, ("q", "v"), (("C", ("nv", "nv")),), False),
    # a frame's pose, Jacobian, twist and classical acceleration bias (frames.py)
    Row("_frame_placement", frames.frame_placement, ("q", "frame"), (("T", (4, 4)),), False),
    Row("_frame_jacobian", frames.frame_jacobian, ("q", "frame"), (("J", (6, "nv")),), False),
    Row("_frame_velocity", frames.frame_velocity, ("q", "v", "frame"), (("V", (6,)),), False),
    Row("_frame_acceleration_bias", frames.frame_acceleration_bias, ("q", "v", "frame"), (("A", (6,)),),
             False),
    # centroidal dynamics (centroidal.py)
    Row("centroidal_momentum_matrix", centroidal.centroidal_momentum_matrix, ("q",), (("A_G", (6, "nv")),),
             False, unbounded=("A_G",)),
    Row("centroidal_momentum_bias", centroidal.centroidal_momentum_bias, ("q", "v"), (("Adot_v", (6,)),),
             False, unbounded=("Adot_v",)),
    Row("centroidal_inertia", centroidal.centroidal_inertia, ("q",), (("I_G", (6, 6)),), False,
             unbounded=("I_G",)),
    # contact-constrained dynamics (contacts.py): its arrays are sized by the contact set
    Row("_constrained_dynamics", contacts.constrained_dynamics, ("q", "v", "tau", "contacts"),
             (("a", ("nv",)), ("forces", ("m",))), True, arrays=("CW", "CL"), unbounded=("a", "forces"),
             errors=((contacts.ERR_REDUNDANT,
                      "the contact constraints are redundant or singular at this q (J M^-1 J^T is singular: more "
                      "rows than the robot can move independently, e.g. two contacts on one frame or a surface on "
                      "a body with fewer than 6 DoF below it); pass damping > 0 for damped least-squares "
                      "forces"),)),
)

# Each kernel within its checks (generated.checked_kernels): overlapping outputs refused, non-finite results reported.
CHECKED = checked_kernels({row.name: (row.kernel, tuple(1 + (x in row.matrices) for x in row.inputs),
                                      tuple(max(len(shape), 1) for shape in row.shapes),
                                      tuple(name in row.unbounded for name, _ in row.outputs))
                           for row in QUANTITIES}, ERR_OVERFLOW, ERR_OVERLAP)
