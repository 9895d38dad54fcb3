"""The public face of the library: Robot, every method written here with its signature and docstring.

Each method that computes from a state hands its arguments -- positionally, `out` last -- to the entry of its
quantity in the registry (algorithms/registry.py), `self._calls.<row>`: calls/'s one call protocol (one state
in C straight into the compiled kernel, strided views, batches on all cores, `out=` and overlap checks, errors that
name the culprit); a method marked `@forwards(row, ...)` does nothing else, and with the C extension makes that
hand-over in C (methods.forwards).  Every state argument may carry leading batch dimensions: q (..., nq),
v (..., nv) -> results (..., .).  `out`: a writeable float64 array of the result's shape (any strides), a tuple of
them, or the result's dataclass, that receives the result and is returned -- no allocation per call; an `out` that
shares memory with an input or another out is a ValueError.
"""
import numpy as np

from . import composed
from .calls.checks import check_vector, finite, scalar
from .calls.engine import Engine
from .calls.methods import Calls, Constant, forwards
from .contact_sets import Contact, ContactDynamics, contact_list
from .mimic import CoupledCalls
from .results import (Diagonalized, Dynamics, GlobalFactorization, Innovations, ParameterDerivatives,
                      StateDerivatives, TaskSpaceDynamics, TimeDerivatives)

__all__ = ["Contact", "Diagonalized", "Dynamics", "GlobalFactorization", "Innovations", "ParameterDerivatives",
           "Robot", "StateDerivatives", "TaskSpaceDynamics", "TimeDerivatives", "contact_list"]

_NO_GAINS, _NO_DAMPING = (0.0, 0.0), 0.0       # constrained_dynamics' defaults, told by identity first
_FRAME_DOC = """
    frame: a link name of robot.frame_names (every URDF link, those merged into a body by fixed joints included)
    or its index there.  reference: Pinocchio's reference frames -- "local" (LOCAL, the default: the frame's own
    axes, about its origin), "world" (WORLD: the world's axes, about the world origin -- the spatial twist) or
    "local_world_aligned" (LOCAL_WORLD_ALIGNED: the world's axes, about the frame's origin).  Twists are
    [linear; angular].  The kernel walks the frame's support only (its body and that body's ancestors)."""
_WRENCH_DOC = """
    f_ext: external wrenches on the robot, {frame (a name of frame_names or its index): wrench [force; torque] (6,)
    or (..., 6)}, given in `reference` as frame_jacobian's: "local" (the default, Pinocchio's fext: the frame's
    axes, torque about its origin), "world" (a spatial wrench: world axes, torque about the world origin) or
    "local_world_aligned" (world axes, torque about the frame's origin: a contact force at a foot)."""


class Robot:
    """M(q), C(q, v), g(q), the CoM Jacobian and the Slotine-Li regressor of a tree of rigid bodies (paper 002).

    Threads: a single state is computed within one compiled call, which holds the GIL, so threads that share a
    Robot take turns and never see each other's scratch workspace.  A batch runs on numba's threads outside the
    GIL, in per-thread workspaces of the Robot: two batches of one Robot take turns on its lock (two Robots of one
    model run at once).  For speed on several cores, pass a batch.
    """

    def __init__(self, model):
        self.model = model
        self.nq, self.nv, self.nbodies = model.nq, model.nv, model.nbodies
        self.joint_names = model.joint_names
        self.body_names = list(model.body_names)
        self.root_link = model.root_link
        self.floating_base = model.floating_base
        self.gravity = np.array(model.gravity, dtype=float)
        self.parameters = model.pi.reshape(-1).copy()
        self.parameters.flags.writeable = False
        self.total_mass = float(model.pi[:, 0].sum())
        self._engine = Engine(model)
        # the entry of each quantity (methods.Calls); joints coupled by mimics have no articulated-body recursion
        self._calls = (CoupledCalls if self._engine.coupled else Calls)(
            self._engine, routes={"_constrained_dynamics": ContactDynamics})
        self._weightless = None                     # the same robot without gravity (parameter_derivatives)

    def __repr__(self):
        base = "floating" if self.floating_base else "fixed"
        return f"<Robot '{self.model.name}': {self.nbodies} bodies, nq={self.nq}, nv={self.nv}, {base} base>"

    # ---- models that differ in parameters or gravity -------------------------------------------------------------
    def with_parameters(self, pi):
        """The same kinematics with other inertial parameters pi: (10 nbodies,)."""
        return Robot(self.model.with_parameters(check_vector("pi", pi, 10 * self.nbodies)))

    def with_gravity(self, gravity):
        """The same robot under another gravity vector (3,), world frame."""
        return Robot(self.model.with_gravity(check_vector("gravity", gravity, 3)))

    # ---- drives (drives.py) --------------------------------------------------------------------------------------
    @property
    def armature(self):
        """(nv,) reflected rotor inertias, added to M's diagonal wherever M is (Pinocchio's model.armature)."""
        return self.model.drives.armature

    @property
    def damping(self):
        """(nv,) viscous friction coefficients (Pinocchio's model.damping)."""
        return self.model.drives.damping

    @property
    def friction(self):
        """(nv,) Coulomb friction torques (Pinocchio's model.friction)."""
        return self.model.drives.friction

    @property
    def coordinate_names(self):
        """A name per coordinate of v (model.RobotModel.coordinate_names)."""
        return self.model.coordinate_names

    def with_drives(self, armature=None, damping=None, friction=None, model=None):
        """The same robot with other drives: armature, damping, friction each (nv,) or a number for every joint
        coordinate (a floating base's six rows stay zero; None keeps the present one), model a friction model
        (drives.py; None keeps the present one)."""
        return Robot(self.model.with_drives(armature, damping, friction, model))

    def friction_torque(self, v, out=None):
        """tau_f(v), the torque the drives' friction takes (drives.Drives.torque): v (..., nv) -> (..., nv)."""
        v, shape = self._engine.batch(v=v)
        tau = finite(self.model.drives.torque(v), "friction_torque", "v").reshape(shape + (self.nv,))
        if out is None:
            return tau
        out[...] = tau
        return out

    # ---- configurations ------------------------------------------------------------------------------------------
    def neutral(self):
        """A valid q: zero joint positions, identity orientations.  -> (nq,)"""
        return self._engine.space.neutral()

    def random_configuration(self, rng=None):
        """A random valid q (angles in [-pi, pi], positions in [-0.5, 0.5], uniform rotations).  -> (nq,)"""
        return self._engine.space.random(np.random.default_rng(rng))

    def random_state(self, rng=None):
        """(q, v): a random configuration and a standard normal velocity."""
        rng = np.random.default_rng(rng)
        return self._engine.space.random(rng), rng.normal(size=self.nv)

    def integrate(self, q, v, dt=1.0):
        """q (+) v dt on the configuration manifold (SE(3) exponential for a free joint, SO(3) for a ball joint).
        -> (..., nq)"""
        q, v, shape = self._engine.batch(checked=False, q=q, v=v)
        return self._engine.space.integrate(q, v, scalar(dt, "dt")).reshape(shape + (self.nq,))

    def difference(self, q0, q1):
        """v with integrate(q0, v) = q1.  -> (..., nv)"""
        q0, q1, shape = self._engine.batch(checked=False, q0=q0, q1=q1)
        return self._engine.space.differences(q0, q1).reshape(shape + (self.nv,))

    def integrate_jacobians(self, w):
        """(d/dq, d/dw) of integrate(q, w) in tangent coordinates, as Pinocchio's dIntegrate (they do not depend on
        q): identity blocks for 1-DoF joints, Ad(exp(-w_j)) and the right Jacobian of exp for free, ball and planar
        joints.  w: (nv,) -> (nv, nv), (nv, nv)"""
        Jq, Jw = self._engine.space.integrate_jacobians(check_vector("w", w, self.nv))
        return finite(Jq, "integrate_jacobians", "w"), finite(Jw, "integrate_jacobians", "w")

    # ---- paper 002: one outward pass -----------------------------------------------------------------------------
    @forwards("_dynamics", "q", "v", Constant(None))
    def dynamics(self, q, v, v_ref=None, a_ref=None, out=None):
        """M, C, g, com, J_com and, when v_ref and a_ref are given, the Slotine-Li Y, from one outward pass.

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  Dynamics (see its docstring for shapes).
        out: a Dynamics of such arrays (with Y exactly when v_ref is given) to write into and return.
        """
        if v_ref is None and a_ref is None:
            if out is not None and type(out) is Dynamics and out.Y is not None:
                raise ValueError("out.Y must be an array exactly when v_ref and a_ref are given (out.Y is not None)")
            return self._calls["_dynamics"](q, v, out)
        if v_ref is None or a_ref is None:
            raise ValueError("give both v_ref and a_ref for the regressor, or neither")
        if out is not None and type(out) is Dynamics and out.Y is None:
            raise ValueError("out.Y must be an array exactly when v_ref and a_ref are given (out.Y is None)")
        return self._calls["_dynamics_with_regressor"](q, v, v_ref, a_ref, out)

    @forwards("mass_matrix", "q", "out")
    def mass_matrix(self, q, out=None):
        """M(q) = sum_k J_k^T Lambda_k J_k (paper 002, eq. (6a)) + diag(armature) (the drives' rotor inertias,
        drives.py).  q: (..., nq) -> (..., nv, nv)"""
        return self._calls["mass_matrix"](q, out)

    @forwards("coriolis_matrix", "q", "v", "out")
    def coriolis_matrix(self, q, v, out=None, kind="paper002"):
        """C(q, v) of paper 002, eq. (6b): C v holds the Coriolis and centrifugal torques, Mdot = C + C^T.

        q: (..., nq), v: (..., nv) -> (..., nv, nv)

        kind: "paper002" (the default, above) or "christoffel": C_ij = sum_k Gamma_ijk v_k of the Christoffel
        symbols (christoffel_symbols), in O(n d) like the default -- the same C v and Mdot = C + C^T, another
        matrix, and the one Pinocchio's computeCoriolisMatrix returns.  Without free or planar joints it is the
        textbook (Lagrangian) C, with C(q, v) w = C(q, w) v; with them, C(q, v) w - C(q, w) v = M [v, w] (see
        christoffel_symbols).
        """
        if kind == "paper002":
            return self._calls["coriolis_matrix"](q, v, out)
        if kind == "christoffel":
            return self._calls["_christoffel_coriolis_matrix"](q, v, out)
        raise ValueError(f"kind must be one of 'paper002', 'christoffel', got {kind!r}")

    @forwards("gravity_vector", "q", "out")
    def gravity_vector(self, q, out=None):
        """g(q) = sum_k J_k^T Lambda_k Ad^-1_{0,k} gamma_0 (paper 002, eq. (6c)).  q: (..., nq) -> (..., nv)"""
        return self._calls["gravity_vector"](q, out)

    @forwards("com_position", "q", "out")
    def com_position(self, q, out=None):
        """Centre of mass of the moving bodies in the world frame.  q: (..., nq) -> (..., 3)"""
        return self._calls["com_position"](q, out)

    @forwards("com_jacobian", "q", "out")
    def com_jacobian(self, q, out=None):
        """J_com = (1/m) P^T Lambda J (paper 002, eq. (7)): CoM velocity = J_com v.  q: (..., nq) -> (..., 3, nv)"""
        return self._calls["com_jacobian"](q, out)

    @forwards("regressor", "q", "v", "v_ref", "a_ref", "out")
    def regressor(self, q, v, v_ref, a_ref, out=None):
        """Slotine-Li Y(q, v, v_r, a_r) with Y pi = M a_r + C(q, v) v_r + g (paper 002, eq. (16)).

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  (..., nv, 10 nbodies), columns in body_names order.
        """
        return self._calls["regressor"](q, v, v_ref, a_ref, out)

    @forwards("momentum", "q", "v", "out")
    def momentum(self, q, v, out=None):
        """p = M(q) v, the generalized momentum (paper 002, Prop. 1), in O(n d) without forming M: the sum of the
        bodies' spatial momenta projected on the joint axes, plus the rotors' armature v.
        q: (..., nq), v: (..., nv) -> (..., nv)"""
        return self._calls["momentum"](q, v, out)

    @forwards("momentum_rate", "q", "v", "out")
    def momentum_rate(self, q, v, out=None):
        """(p, h): the generalized momentum p = M(q) v (with the armature, as momentum) and h = C(q, v)^T v - g(q),
        the rate p takes without applied torques -- pdot = tau + h along any motion (Mdot = C + C^T) -- from one
        outward and one inward pass, O(n), M and C never formed (algorithms/momentum_observer.py): a momentum
        observer's tick in one call (observers.py).  q: (..., nq), v: (..., nv) -> (..., nv), (..., nv)"""
        return self._calls["momentum_rate"](q, v, out)

    @forwards("momentum_regressor", "q", "v", "out")
    def momentum_regressor(self, q, v, out=None):
        """(Y_p, Y_h) with Y_p pi = M(q) v, the generalized momentum (paper 002, Prop. 1), and Y_h pi =
        C(q, v)^T v - g(q), so that d/dt (Y_p pi) = tau + Y_h pi along any motion (Mdot = C + C^T): a
        torque-prediction regressor without accelerations (composite adaptation, momentum observers).  Linear in
        the bodies' parameters alone: with drives, p = Y_p pi + armature v (friction.drive_regressor's columns).

        q: (..., nq), v: (..., nv)  ->  2 x (..., nv, 10 nbodies), columns in body_names order.
        """
        return self._calls["momentum_regressor"](q, v, out)

    @forwards("kinetic_energy", "q", "v", "out")
    def kinetic_energy(self, q, v, out=None):
        """1/2 v^T M(q) v, summed body by body: 1/2 sum_k v_k^T Lambda_k v_k + 1/2 v^T diag(armature) v (the
        rotors', as Pinocchio 4.1).  q: (..., nq), v: (..., nv) -> (...,)"""
        return self._calls["kinetic_energy"](q, v, out)

    @forwards("potential_energy", "q", "out")
    def potential_energy(self, q, out=None):
        """-m gravity . com, zero with the CoM at the world origin.  q: (..., nq) -> (...,)"""
        return self._calls["potential_energy"](q, out)

    @forwards("body_placements", "q", "out")
    def body_placements(self, q, out=None):
        """T_{0,k} of every body: homogeneous transforms, body frames in the world.  q: (..., nq) -> (..., nbodies,
        4, 4)"""
        return self._calls["body_placements"](q, out)

    # ---- Newton-Euler and the articulated-body algorithm ---------------------------------------------------------
    @forwards("inverse_dynamics", "q", "v", "a", "out")
    def inverse_dynamics(self, q, v, a, out=None, f_ext=None, reference="local"):
        """tau = M a + C v + g by the recursive Newton-Euler algorithm, O(n).  (..., nq), (..., nv) x2 -> (..., nv)

        With f_ext, tau = M a + C v + g - sum_f J_f^T w_f.
        """
        if f_ext is None:
            return self._calls["inverse_dynamics"](q, v, a, out)
        external = composed.external_torques(self, q, f_ext, reference)    # checked before anything is written
        tau = self._calls["inverse_dynamics"](q, v, a, out)
        tau -= external
        return tau

    inverse_dynamics.__doc__ += _WRENCH_DOC

    @forwards("forward_dynamics", "q", "v", "tau", "out")
    def forward_dynamics(self, q, v, tau, out=None, f_ext=None, reference="local"):
        """a = M^-1 (tau - C v - g) by the articulated-body algorithm, O(n) (with coupled mimic joints: by a
        Cholesky factor of M).  (..., nq), (..., nv) x2 -> (..., nv)

        With f_ext, a = FD(q, v, tau + sum_f J_f^T w_f).
        """
        if f_ext is None:
            return self._calls["forward_dynamics"](q, v, tau, out)
        try:
            tau = np.array(tau, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"tau must be a numeric array of shape (..., nv={self.nv})") from None
        if tau.shape[-1:] != (self.nv,):
            raise ValueError(f"tau must have shape (..., nv={self.nv}), got {tau.shape}")
        return self._calls["forward_dynamics"](q, v, tau + composed.external_torques(self, q, f_ext, reference), out)

    forward_dynamics.__doc__ += _WRENCH_DOC

    # ---- derivatives ---------------------------------------------------------------------------------------------
    @forwards("inverse_dynamics_derivatives", "q", "v", "a", "out")
    def inverse_dynamics_derivatives(self, q, v, a, out=None):
        """(dtau/dq, dtau/dv, M) of tau = ID(q, v, a); q-derivatives along the tangent directions of integrate
        (Pinocchio's computeRNEADerivatives).  (..., nq), (..., nv) x2 -> 3 x (..., nv, nv)"""
        return self._calls["inverse_dynamics_derivatives"](q, v, a, out)

    @forwards("forward_dynamics_derivatives", "q", "v", "tau", "out")
    def forward_dynamics_derivatives(self, q, v, tau, out=None):
        """(da/dq, da/dv, M^-1) of a = FD(q, v, tau); q-derivatives along the tangent directions of integrate
        (Pinocchio's computeABADerivatives).  (..., nq), (..., nv) x2 -> 3 x (..., nv, nv)"""
        return self._calls["forward_dynamics_derivatives"](q, v, tau, out)

    @forwards("_state_derivatives", "q", "v", "out")
    def state_derivatives(self, q, v, out=None):
        """dM/dq, dC/dq, dC/dv, dg/dq and dJ_com/dq at (q, v), the last index the direction (paper 002, Prop. 5);
        q-directions are the tangent directions of integrate, d/de f(integrate(q, e e_i)) at e = 0 (Pinocchio's).

        q: (..., nq), v: (..., nv)  ->  StateDerivatives (see its docstring); out: a StateDerivatives to fill.
        """
        return self._calls["_state_derivatives"](q, v, out)

    @forwards("_time_derivatives", "q", "v", "a", Constant(None))
    def time_derivatives(self, q, v, a, v_ref=None, a_ref=None, j_ref=None, out=None):
        """d/dt of M(q), C(q, v), g(q) and J_com(q) along q' = v (on the Lie group for a floating base), v' = a
        (paper 002, Prop. 6); with v_ref, a_ref, j_ref also of the Slotine-Li regressor along v_ref' = a_ref,
        a_ref' = j_ref: Y_dot pi = M_dot a_r + M j_r + C_dot v_r + C a_r + g_dot.

        q: (..., nq), v, a (and v_ref, a_ref, j_ref): (..., nv)  ->  TimeDerivatives (see its docstring).
        out: a TimeDerivatives of such arrays (with Y_dot exactly when references are given) to write into.
        """
        with_y = v_ref is not None
        if (a_ref is not None) != with_y or (j_ref is not None) != with_y:
            raise ValueError("give v_ref, a_ref and j_ref for Y_dot, or none of them")
        if out is not None and type(out) is TimeDerivatives and (out.Y_dot is not None) != with_y:
            raise ValueError("out.Y_dot must be an array exactly when v_ref, a_ref and j_ref are given")
        if with_y:
            return self._calls["_time_derivatives_with_regressor"](q, v, a, v_ref, a_ref, j_ref, out)
        return self._calls["_time_derivatives"](q, v, a, out)

    @forwards("gravity_derivative", "q", "v", "out")
    def gravity_derivative(self, q, v, out=None):
        """dg/dt = dg/dq v along q' = v (paper 002, Prop. 6), in O(n): the g_dot of time_derivatives alone.
        q: (..., nq), v: (..., nv) -> (..., nv)"""
        return self._calls["gravity_derivative"](q, v, out)

    def parameter_derivatives(self, q, v, out=None):
        """dM/dpi, dC/dpi, dg/dpi at (q, v) (paper 002, Prop. 2), read off the regressor, of which they are the
        columns: with Y0 the regressor without gravity, dM_dpi[:, j] = Y0(q, v, 0, e_j), dC_dpi[:, j] =
        Y0(q, v, e_j, 0) and dg_dpi = Y(q, v, 0, 0) -- 2 nv + 1 states of one batched regressor call each.
        (..., nq), (..., nv) -> ParameterDerivatives; out: a ParameterDerivatives to fill."""
        if self._weightless is None:
            self._weightless = self.with_gravity(np.zeros(3))
        return composed.parameter_derivatives(self, self._weightless, self._engine, q, v, out)

    def linearize(self, q, v, tau, dt=None):
        """(A, B) of the dynamics linearized at (q, v, tau), for LQR and MPC: x = (dq, v) with dq in the tangent
        space at q (q + dq = integrate(q, dq)), u = tau.

        Continuous time (dt None): dx/dt = A dx + B du with A = [[0, E], [da/dq, da/dv]], B = [[0], [M^-1]].
        Discrete time (dt given): one semi-implicit Euler step, v+ = v + dt a, q+ = integrate(q, dt v+), with dq+
        in the tangent space at the nominal q+:  A = [[Jq + dt^2 Jw da/dq, dt Jw (E + dt da/dv)],
        [dt da/dq, E + dt da/dv]],  B = [[dt^2 Jw M^-1], [dt M^-1]], where Jq, Jw = integrate_jacobians(dt v+).
        These feed scipy.linalg.solve_continuous_are / solve_discrete_are as they are.
        (..., nq), (..., nv) x2 -> (..., 2 nv, 2 nv), (..., 2 nv, nv)
        """
        return composed.linearize(self, q, v, tau, dt)

    # ---- paper 003: the innovations factorization ----------------------------------------------------------------
    @forwards("inverse_mass_matrix", "q", "out")
    def inverse_mass_matrix(self, q, out=None):
        """M(q)^-1 = [I - H psi K]^* D^-1 [I - H psi K] (paper 003, eq. (4.1d)), in O(n^2) without forming M
        (Pinocchio's computeMinverse).  q: (..., nq) -> (..., nv, nv)"""
        return self._calls["inverse_mass_matrix"](q, out)

    @forwards("_solve_mass_matrix", "q", "x", "out")
    def solve_mass_matrix(self, q, x, out=None):
        """M(q)^-1 x without forming M: one articulated-body factorization (paper 003, Algorithm 4.1), then O(n)
        per right-hand side (eq. (4.1d) applied to x).  q: (..., nq); x: (..., nv) or (..., nv, k) -> the shape of
        x; out: an array of that shape to write into."""
        return self._calls["_solve_mass_matrix"](q, x, out)

    @forwards("_innovations", "q", "out")
    def innovations(self, q, out=None):
        """L, D and L^-1 of the innovations factorization M = L D L^T (paper 003, Identity 4.1, Algorithm 4.1),
        from the articulated-body inertias, without forming M.  q: (..., nq) -> Innovations (see its docstring);
        out: an Innovations to fill."""
        return self._calls["_innovations"](q, out)

    def diagonalized(self, q, v, tau=None, out=None):
        """nu, epsilon and C(theta, nu) of the diagonalized equations nu_dot + C(theta, nu) = epsilon (paper 003,
        eqs. (1.3)-(1.4), (5.1)-(5.3), (7.1)): decoupled, unit-inertia joint equations for control design, in O(n).
        q: (..., nq), v, tau: (..., nv) -> Diagonalized (see its docstring); out: a Diagonalized to fill (with
        epsilon exactly when tau is given)."""
        if out is not None and type(out) is Diagonalized and (out.epsilon is None) != (tau is None):
            raise ValueError("out.epsilon must be an array exactly when tau is given")
        if tau is not None:
            return self._calls["_diagonalized"](q, v, tau, out)
        if out is not None and type(out) is not Diagonalized:
            raise ValueError(f"out must be a Diagonalized, got {type(out).__name__}")
        into = None if out is None else Diagonalized(out.nu, np.empty(np.shape(out.nu)), out.coriolis)
        d = self._calls["_diagonalized"](q, v, np.zeros(np.shape(v)), into)
        d.epsilon = None
        return d if out is None else out

    @forwards("from_diagonalized", "q", "nu", "out")
    def from_diagonalized(self, q, nu, out=None):
        """qdot = l^T nu = [I - H psi K]^T D^-1/2 nu: the joint velocities of the diagonalized velocities nu
        (paper 003, Table 2, right column), O(n).  q: (..., nq), nu: (..., nv) -> (..., nv)"""
        return self._calls["from_diagonalized"](q, nu, out)

    # ---- paper 000: Ploen's global matrix form; paper 001: the Christoffel symbols --------------------------------
    def global_factorization(self, q, v, out=None):
        """Ploen's global matrix form at (q, v): the operators S, G, Gamma, J, ad_Gamma and C_bar with
        M = S^T G^T J G S and the passive C = S^T G^T (J G ad_Gamma Gamma + C_bar) G S (paper 000, eqs. (19)-(38),
        for trees and floating bases; see GlobalFactorization).  Papers 000, 001 and 004 order twists [angular;
        linear] and number bodies 1..n from the base: here twists are [linear; angular] (paper 002, Pinocchio) and
        the blocks follow robot.body_names (parent before child); the operators are translated, e.g. Ploen's J_i =
        [[I - m r~^2, m r~], [-m r~, m E]] is our Lambda_k = [[m E, -(m c)~], [(m c)~, I_o]].  This C is passive
        like coriolis_matrix and gives the same C v, but is another matrix (GlobalFactorization.coriolis_matrix).

        q: (..., nq), v: (..., nv)  ->  GlobalFactorization (see its docstring for shapes).
        out: a GlobalFactorization of such arrays to write into and return.
        """
        return composed.global_factorization(self, self._calls, q, v, out)

    @forwards("christoffel_symbols", "q", "out")
    def christoffel_symbols(self, q, out=None):
        """Gamma_ijk(q), the Christoffel symbols of the first kind of M, with C_ij = sum_k Gamma_ijk v_k the C of
        coriolis_matrix(q, v, kind="christoffel"), in closed form (paper 001, eqs. (52)-(57)).

        Gamma_ijk = M(X_i, nabla_{X_k} X_j), the Levi-Civita connection of M in the frame of the tangent directions
        X_i of integrate.  Without free or planar joints (any fixed-base arm, hand or leg) this is the textbook
        Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) (paper 004, eq. (9.13)), symmetric in j, k.  A free
        (floating) base or planar joint moves along the non-commuting directions of SE(3) or SE(2), and Gamma adds
        their brackets [X_a, X_b] (the structure constants of se(3)):
          + 1/2 (M(X_i, [X_k, X_j]) - M(X_j, [X_k, X_i]) - M(X_k, [X_j, X_i])),
        so that C = Gamma v still has Mdot = C + C^T and gives the Coriolis and centrifugal torques C v, and
        Gamma_ijk - Gamma_ikj = M(X_i, [X_k, X_j]) (no symmetric Gamma can do both there: a free rigid body's
        textbook symbols are zero, its gyroscopic torque is not).

        q: (..., nq) -> (..., nv, nv, nv), Gamma[..., i, j, k].
        """
        return self._calls["christoffel_symbols"](q, out)

    # ---- centroidal dynamics -------------------------------------------------------------------------------------
    @forwards("centroidal_momentum_matrix", "q", "out")
    def centroidal_momentum_matrix(self, q, out=None):
        """A_G (6, nv), the centroidal momentum matrix: h_G = A_G v is the robot's linear momentum and its angular
        momentum about its centre of mass, [linear; angular] in world axes; column s = X_G^* Ic_j S_s, the
        composite inertia of the subtree that coordinate s moves times its world axis, moment moved to the CoM
        (Orin, Goswami, Lee 2013; Pinocchio's computeCentroidalMap).  q: (..., nq) -> (..., 6, nv)"""
        return self._calls["centroidal_momentum_matrix"](q, out)

    @forwards("centroidal_momentum_bias", "q", "v", "out")
    def centroidal_momentum_bias(self, q, v, out=None):
        """Adot_G v (6,): the rate of the centroidal momentum at zero joint accelerations, so that
        d/dt h_G = A_G a + Adot_G v (Pinocchio's computeCentroidalMapTimeVariation dAg @ v): the sum of the
        bodies' Newton-Euler forces at qddot = 0, without gravity.  q: (..., nq), v: (..., nv) -> (..., 6)"""
        return self._calls["centroidal_momentum_bias"](q, v, out)

    @forwards("centroidal_inertia", "q", "out")
    def centroidal_inertia(self, q, out=None):
        """I_G (6, 6) = [[m E, 0], [0, I_c]]: the whole robot's composite inertia about its centre of mass, world
        axes (Pinocchio's data.Ig); I_G^-1 h_G is the robot's average spatial velocity.  q: (..., nq) ->
        (..., 6, 6)"""
        return self._calls["centroidal_inertia"](q, out)

    # ---- frames --------------------------------------------------------------------------------------------------
    @property
    def frame_names(self):
        """Every URDF link of the robot, depth first from the root link: each is a frame (frame_placement, ...)."""
        return list(self.model.frames)

    @forwards("_frame_placement", "q", "frame", Constant("local"), "out")
    def frame_placement(self, q, frame, out=None):
        """T_{0,f}: the pose of a frame in the world, a 4x4 homogeneous transform.  q: (..., nq) -> (..., 4, 4)

        frame: a link name of robot.frame_names (every URDF link, those merged into a body by fixed joints
        included) or its index there."""
        return self._calls["_frame_placement"](q, frame, "local", out)

    @forwards("_frame_jacobian", "q", "frame", "reference", "out")
    def frame_jacobian(self, q, frame, reference="local", out=None):
        """J_f: the frame's twist in `reference` is J_f v (world axes of the support's joints, paper 002, eq. (27)
        unrolled; Pinocchio's computeFrameJacobian).  q: (..., nq) -> (..., 6, nv)
        """
        return self._calls["_frame_jacobian"](q, frame, reference, out)

    @forwards("_frame_velocity", "q", "v", "frame", "reference", "out")
    def frame_velocity(self, q, v, frame, reference="local", out=None):
        """V_f = J_f v: the frame's twist [linear; angular] in `reference` (Pinocchio's getFrameVelocity).
        q: (..., nq), v: (..., nv) -> (..., 6)
        """
        return self._calls["_frame_velocity"](q, v, frame, reference, out)

    @forwards("_frame_acceleration_bias", "q", "v", "frame", "reference", "out")
    def frame_acceleration_bias(self, q, v, frame, reference="local", out=None):
        """Jdot_f v: the frame's classical acceleration at zero joint accelerations (Pinocchio's
        getFrameClassicalAcceleration after forwardKinematics with a = 0), so that the classical acceleration at a
        is J_f a + Jdot_f v -- what task-space control subtracts.  In "local_world_aligned" it is
        [d^2 p / dt^2; d w / dt] of the frame origin p and angular velocity w (world axes); in "local" the same
        rotated into the frame's axes; in "world" the spatial acceleration A_0 plus [w x v_0; 0], v_0 the linear
        part of the spatial twist, as Pinocchio.  q: (..., nq), v: (..., nv) -> (..., 6)
        """
        return self._calls["_frame_acceleration_bias"](q, v, frame, reference, out)

    frame_jacobian.__doc__ += _FRAME_DOC
    frame_velocity.__doc__ += _FRAME_DOC
    frame_acceleration_bias.__doc__ += _FRAME_DOC

    # ---- contacts and task space ---------------------------------------------------------------------------------
    @forwards("_constrained_dynamics", "q", "v", "tau", "contacts", "out")
    def constrained_dynamics(self, q, v, tau, contacts, baumgarte=_NO_GAINS, damping=_NO_DAMPING, out=None):
        """(a, forces): the forward dynamics of the robot held by contacts, from the KKT system
            M a + C v + g = tau + J^T forces,    J a + Jdot v = -(Kp e + Kd J v),
        J (m, nv) the contacts' rows of their frames' Jacobians (3 for a point, 6 for a surface, in the contact's
        reference), Jdot v their classical acceleration bias (frame_acceleration_bias), e their position error to
        their targets (zero without one), (Kp, Kd) = baumgarte.  Solved in O(n) per contact row through the
        innovations factorization of M (paper 003, eq. (4.1d); algorithms/contacts.py), without forming M: the
        forces from (J M^-1 J^T + damping E) forces = -(J a_0 + Jdot v + Kp e + Kd J v), a_0 = forward_dynamics(q,
        v, tau) (Pinocchio's constraintDynamics; forwardDynamics with J and gamma).

        contacts: a list of frame names (point contacts) or Contact(frame, kind="point" | "surface",
        reference="local_world_aligned" | "local", target=None) (see Contact), or a mapping {frame: "point" |
        "surface"} (never read as its keys alone).  damping: 0 (the default) refuses a redundant or singular set
        with a ValueError; > 0 gives damped least-squares forces and J a + Jdot v off the Baumgarte law by
        damping * forces.  A set of joints coupled by mimics is solved with a Cholesky factor of M.

        q: (..., nq), v, tau: (..., nv)  ->  a (..., nv), forces (..., m): each contact's 3 or 6 rows in the list's
        order, [force] or [force; torque] on the robot in the contact's reference.  out: a tuple (a, forces).
        """
        if (baumgarte is _NO_GAINS and damping is _NO_DAMPING) or (
                type(baumgarte) is tuple and baumgarte == (0.0, 0.0) and type(damping) is float and damping == 0.0):
            return self._calls["_constrained_dynamics"](q, v, tau, contacts, out)   # the set last given: in C
        return self._calls.quantity("_constrained_dynamics").solve(q, v, tau, contacts, baumgarte, damping, out)

    def task_space_dynamics(self, q, v, frame, reference="local_world_aligned", position_only=False, damping=0.0,
                            out=None):
        """Lambda, eta, J, J_bar and N of one frame's motion (see TaskSpaceDynamics): Lambda xddot + eta = F, the
        task-space form of M a + C v + g = tau for tau = J^T F (paper 004, eqs. (9.98)-(9.99): Lambda = J^-T M J^-1,
        eta = J^-T h - Lambda Jdot J^-1 V for a square J; with J^-T the dynamically consistent J_bar^T for a
        redundant arm).  M^-1 J^T takes one solve per row (solve_mass_matrix: O(n), no M formed), eta the
        unactuated acceleration a_0 = forward_dynamics(q, v, 0): eta = -Lambda (J a_0 + Jdot v).

        frame: a name of robot.frame_names or its index.  reference: frame_jacobian's, "local_world_aligned" by
        default (the world's axes at the frame: Cartesian control).  position_only: the 3 linear rows only.
        damping: added to J M^-1 J^T before inverting; 0 (the default) refuses a singular configuration (a
        ValueError), > 0 gives the damped Lambda of a configuration near one.
        q: (..., nq), v: (..., nv) -> TaskSpaceDynamics (see its docstring for shapes); out: one to fill.
        """
        return composed.task_space_dynamics(self, self._engine.frames, q, v, frame, reference, position_only, damping,
                                            out)
