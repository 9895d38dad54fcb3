"""The public face of the library: a Robot wraps a frozen RobotModel and validates every input once.

Every state argument may carry leading batch dimensions: q (..., nq), v (..., nv) -> results (..., .).
The methods that compute arrays from a state are derived from the table algorithms/registry.py (see _method):
each takes `out=`, goes straight into its compiled kernel for a single state of float64 arrays, and runs a batch
in the compiled parallel loop.
"""
import functools
import linecache
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .algorithms.kinematics import ERR_INPUT, ERR_OVERFLOW, ERR_OVERLAP, ERR_QUAT, ERR_SINGULAR
from .algorithms.registry import CHECKED, PARALLEL, QUANTITIES
from .algorithms.workspace import ARRAYS, EXAMPLES, workspace
from .compiled import (FAST_CALLS, Contiguous, compiled, entry, fast_call, layout, loop_signature, overlapping,
                       resolve, signature, thread_count)
from .configuration import ConfigurationSpace
from .memory import ResultPool
from .model import BODY, build_model
from .urdf import MAX_LINKS, URDFError, parse_urdf


_ND, _F64, _empty = np.ndarray, np.dtype(np.float64), np.empty
_ROWS = {row.name: row for row in QUANTITIES}
_VECTOR_INPUTS = ("v", "a", "tau", "v_ref", "a_ref", "j_ref", "nu")        # the nv-wide inputs of the registry's rows


@functools.cache
def _signatures(name):
    """The argument types of the kernel of registry row `name`, the same for every robot: its body records and
    workspace, its per-robot arrays (workspace.EXAMPLES: the arrays themselves are made by __getattr__), gravity,
    and the inputs and outputs -- all C-contiguous: a kernel that knows its arrays' layout when it is compiled
    zeroes and walks them up to 2x faster than one that reads their strides (the regressor batch of 1024 states:
    1.9 -> 1.65 us a state on solo12, 6.2 -> 5.0 on g1).  Views of other strides are copied in and out around the
    kernel (_Contiguous, _run_batch, and _fastcall.c hands them to the method written in Python).  Computed once
    per process: numba's typeof of a record array takes ~0.7 ms."""
    row = _ROWS[name]
    arrays = tuple(EXAMPLES[x] for x in row.arrays)
    constants = (np.zeros(3),) if row.gravity else ()
    return signature(np.zeros(1, dtype=BODY), workspace(1), *arrays, *constants,
                     *(np.zeros((2,) * (1 + (x in row.matrices))) for x in row.inputs),
                     *(np.zeros((2,) * max(len(s), 1)) for s in row.shapes))


@functools.cache
def _loop_types():
    """The argument types of the batch loop (compiled.batch_loop), the same for every row: it calls the rows' C
    entry points."""
    return loop_signature(np.zeros(1, dtype=BODY), workspace(1)[None])


def _dense(inputs, outputs):
    """C-contiguous stand-ins for a kernel's inputs and outputs, as (inputs, outputs) tuples: each array itself if it
    is C-contiguous, else a copy (an input) or a new array (an output, which the kernel writes whole).  None when
    some array was replaced and an output's extent overlaps an input's or another output's: the kernel's own check
    (np.may_share_memory's bounds) would not see that overlap among the stand-ins."""
    dense_inputs = tuple(x if x.flags.c_contiguous else np.ascontiguousarray(x) for x in inputs)
    dense_outputs = tuple(x if x.flags.c_contiguous else _empty(x.shape) for x in outputs)
    given = tuple(inputs) + tuple(outputs)
    if any(x is not y for x, y in zip(dense_inputs + dense_outputs, given)) and any(
            np.may_share_memory(x, y) for i, x in enumerate(outputs) for y in given[:len(inputs) + i]):
        return None
    return dense_inputs, dense_outputs


def _copy_back(outputs, dense_outputs):
    """Copy the results from the stand-ins of _dense into the outputs they replaced."""
    for x, y in zip(outputs, dense_outputs):
        if x is not y:
            x[...] = y


class _Contiguous:
    """The checked kernel of registry row `row` (registry.CHECKED), compiled for C-contiguous arrays (_signatures)
    -- or loaded from the cache -- at its first call, callable with views of any strides: the inputs and outputs
    that are not C-contiguous are replaced (_dense), and the results copied back once the kernel has succeeded;
    ERR_OVERLAP, nothing computed, when the caller's outputs overlap (what the kernel's own check returns)."""

    __slots__ = ("kernel", "name", "n_inputs", "first", "front")

    def __init__(self, row):
        self.kernel, self.name, self.n_inputs = None, row.name, len(row.inputs)
        self.first = -(len(row.inputs) + len(row.shapes))   # where the inputs start among the kernel's arguments
        # what the methods call: with the C extension a compiled.Contiguous, which checks the layout in C (0.3 us
        # less a call) and calls this object only for the first call and for strided arrays
        self.front = self if Contiguous is None else Contiguous(self, -self.first)

    def _resolve(self):
        self.kernel = compiled(CHECKED[self.name], _signatures(self.name))
        if self.front is not self:
            self.front.kernel = self.kernel

    def __call__(self, *args):
        if self.kernel is None:
            self._resolve()
        for x in args[self.first:]:                       # a loop: all() of a generator costs 0.1 us more
            if not x.flags.c_contiguous:
                break
        else:
            return self.kernel(*args)
        k = len(args) + self.first
        inputs, outputs = args[k:k + self.n_inputs], args[k + self.n_inputs:]
        dense = _dense(inputs, outputs)
        if dense is None:
            return ERR_OVERLAP
        status = self.kernel(*args[:k], *dense[0], *dense[1])
        if status == 0:
            _copy_back(outputs, dense[1])
        return status


def _merged_batch(x, batch_ndim, B):
    """A view of x with its batch_ndim leading dimensions merged into one of size B; None if that needs a copy."""
    y = x.reshape((B,) + x.shape[batch_ndim:])
    return y if np.may_share_memory(x, y) else None     # a copy is new memory


def _fits(x, shape):
    """x can receive a result of this shape in place (the fast test; _checked_out says what is wrong)."""
    return type(x) is _ND and x.dtype is _F64 and x.shape == shape and x.flags.writeable


def _checked_out(out, shape, name="out"):
    """out, if it can receive a result of this shape in place; else a ValueError naming it."""
    if not (isinstance(out, np.ndarray) and out.dtype == _F64 and out.shape == shape and out.flags.writeable):
        got = (f"a {'read-only ' if not out.flags.writeable else ''}{out.dtype} array of shape {out.shape}"
               if isinstance(out, np.ndarray) else type(out).__name__)
        raise ValueError(f"{name} must be a writeable float64 array of shape {shape}, got {got}")
    return out


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


def load_urdf(source, floating_base=False, gravity=(0.0, 0.0, -9.81), mimic=False, strict_inertia=False,
              xacro_args=None):
    """Robot of a URDF file path or XML string.

    floating_base: put a free 6-DoF joint between the world and the root link (Pinocchio's free flyer).
    gravity: (3,) in the world frame.  mimic: False -> mimic joints are independent DoFs (Pinocchio's default);
    True -> a mimic joint follows its master, q = multiplier q_master + offset, and is not a DoF.
    strict_inertia: refuse physically impossible inertias (not PSD, or I1 + I2 < I3) instead of loading them with
    a URDFWarning; many published URDFs carry such placeholder inertias, and Pinocchio loads them.
    A path ending in ``.xacro`` is expanded with the xacro package and ``xacro_args`` ({name: value} or
    ["name:=value", ...]).  Raises URDFError (a ValueError) naming the element at fault.
    """
    try:
        description = parse_urdf(source, strict_inertia=strict_inertia, xacro_args=xacro_args)
        return Robot(build_model(description, floating_base=floating_base, gravity=gravity, mimic=mimic))
    except MemoryError:                             # a ValueError, as for any other description it cannot load
        pass
    raise URDFError(f"out of memory while loading the URDF (robot_dynamics loads at most {MAX_LINKS} links, in "
                    f"memory linear in their number)")   # outside the handler: the failed load's frames are freed


class Robot:
    """M(q), C(q, v), g(q), the CoM Jacobian and the Slotine-Li regressor of a tree of rigid bodies (paper 002).

    Threads: a single state is computed within one compiled call, which holds the GIL (the C calls of
    compiled.fast_call as well), so threads that share a Robot take turns and never see each other's scratch
    workspace.  A batch runs on numba's threads outside the GIL, in per-thread workspaces of the Robot: two
    batches of one Robot take turns on its lock (two Robots of one model run at once).  For speed on several
    cores, pass a batch.

    A method's first single state runs in Python; it then installs its C call under its name on this robot
    (robot.mass_matrix is a _fastcall.Call from then on: the same arguments, results and errors, ~0.7 us less).
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
        self._space = ConfigurationSpace(model)
        self._q_shape, self._v_shape = (model.nq,), (model.nv,)
        self._bodies = model.bodies.copy()          # kernels take writable arrays; the model stays frozen
        self._work = workspace(model.nbodies)
        self._thread_work = None                    # a workspace per thread of a batch (_per_thread), made once
        self._batch_lock = threading.Lock()         # one batch at a time in those workspaces (class docstring)
        self._results = ResultPool()                # memory for batches' results, reused once dropped (memory.py)
        self._weightless = None                     # the same robot without gravity (parameter_derivatives)
        if any(j.mimic is not None for j in model.joints):
            self.__class__ = _coupled(type(self))   # ABA does not apply to joints coupled by mimics
        sizes = {"nq": model.nq, "nv": model.nv, "nb": model.nbodies, "ny": 10 * model.nbodies}
        self._shapes = {row.name: tuple(tuple(sizes.get(n, n) for n in shape) for shape in row.shapes)
                        for row in QUANTITIES}
        # Per row: its per-robot arrays (_a<name>), the output shape(s) its fast path allocates (_shape_<name>),
        # and its checked kernel (_k<name>, registry.CHECKED, made by __getattr__) and batch loop (_p<name>: the
        # one compiled.batch_loop), resolved (loaded, or compiled on first use) for the argument types of
        # _signatures and _loop_types, the same for every robot.
        for row in QUANTITIES:
            shapes = self._shapes[row.name]
            setattr(self, "_shape_" + row.name, shapes[0] if len(shapes) == 1 else shapes)
            resolve(self, "_p" + row.name, PARALLEL[row.name], _loop_types)

    def __getattr__(self, name):
        """The per-robot arrays of a row (_a<row name>), made when first asked for: a robot allocates the (nv, 3 nv)
        or (nb, nv, 6) arrays of a quantity only if that quantity is computed; and its checked kernel for arrays of
        any strides (_k<row name>, a _Contiguous)."""
        row = _ROWS.get(name[2:]) if name.startswith(("_a", "_k")) else None
        if row is None:
            raise AttributeError(f"'Robot' object has no attribute {name!r}")
        if name.startswith("_k"):
            value = _Contiguous(row).front
        else:
            value = tuple(ARRAYS[x](self.model) for x in row.arrays)
        setattr(self, name, value)
        return value

    def __repr__(self):
        base = "floating" if self.floating_base else "fixed"
        return f"<Robot '{self.model.name}': {self.nbodies} bodies, nq={self.nq}, nv={self.nv}, {base} base>"

    # ---- the single-state calls in C (compiled.fast_call) -------------------------------------------------------
    def _install(self, name, row, frames=None, references=True, **options):
        """Robot.<name> of this robot called in C from now on (an instance attribute that shadows the class's
        method), unless a subclass overrides the method (a robot coupled by mimics): True if installed.  Its
        methods call this at their first single state, and then call the Call: a Call is made only for what a
        robot computes, and every single state of float64 arrays is computed by the one compiled entry point
        (the Python path's kernel is another compilation of the same code: equal to round-off, not bitwise)."""
        if getattr(type(self), name, None) is not _GENERATED[name]:
            return False
        self.__dict__[name] = self._fast_call(name, row, frames, references, **options)
        return True

    def _install_dynamics(self, want_y):
        """_install for dynamics, a kernel at a time (a cold cache compiles each for seconds: only when used): the
        Call of (q, v) or of (q, v, v_ref, a_ref), whichever comes first, and the other one when it is first asked
        for, the Call of (q, v) holding the other as its `extended`.  True if a Call was installed now."""
        fields = ("M", "C", "g", "com", "J_com", "Y")
        rows = _ROWS["_dynamics"], _ROWS["_dynamics_with_regressor"]
        call = self.__dict__.get("dynamics")
        if call is None:
            return self._install("dynamics", rows[want_y], result_type=Dynamics, fields=fields)
        if want_y and call.inputs == 2 and call.extended is None:
            call.extended = self._fast_call("dynamics", rows[1], result_type=Dynamics, fields=fields)
            return True
        if not want_y and call.inputs == 4:                     # the regressor's Call came first
            self.__dict__["dynamics"] = self._fast_call("dynamics", rows[0], result_type=Dynamics, fields=fields,
                                                        extended=call)
            return True
        return False

    def _fast_call(self, name, row, frames=None, references=True, shapes=None, **options):
        """The _fastcall.Call of registry row `row` for this robot, handing what it does not take to Robot.<name>;
        shapes: its outputs' shapes, if not those of the row."""
        inputs = tuple(self.nq if x[0] == "q" else self.nv for x in row.inputs if x not in ("frame", "contacts"))
        fixed = (self._bodies, self._work, *getattr(self, "_a" + row.name), *((self.gravity,) if row.gravity else ()))
        return fast_call(row.name, _signatures(row.name), fixed, inputs,
                         shapes or self._shapes[row.name], _GENERATED[name], self, frames, references, **options)

    def _install_contacts(self, key, spec, m):
        """_install for constrained_dynamics with the contact set whose elements are those of the tuple `key` (its
        spec array and m rows): the Call computes that set from now on (one set at a time, the last one given in
        Python).  True if the Call is to be called now; False if it already had this set (a call it handed back:
        an error to raise or arguments it does not take) or the method is overridden."""
        call = self.__dict__.get("constrained_dynamics")
        if call is None:
            if getattr(type(self), "constrained_dynamics", None) is not _GENERATED["constrained_dynamics"]:
                return False
            call = self.__dict__["constrained_dynamics"] = self._fast_call(
                "constrained_dynamics", _ROWS["_constrained_dynamics"], shapes=(self._v_shape, (0,)), contacts=True)
        elif call.contacts is not None and len(call.contacts) == len(key) and all(
                x is y for x, y in zip(call.contacts, key)):
            return False
        call.remember(key, spec, m)
        return True

    # ---- models that differ in parameters or gravity -------------------------------------------------------
    def with_parameters(self, pi):
        """The same kinematics with other inertial parameters pi: (10 nbodies,)."""
        pi = self._vector(pi, "pi", 10 * self.nbodies)
        return Robot(self.model.with_parameters(pi))

    def with_gravity(self, gravity):
        """The same robot under another gravity vector (3,), world frame."""
        return Robot(self.model.with_gravity(self._vector(gravity, "gravity", 3)))

    # ---- configurations --------------------------------------------------------------------------------------
    def neutral(self):
        """A valid q: zero joint positions, identity orientations.  -> (nq,)"""
        return self._space.neutral()

    def random_configuration(self, rng=None):
        """A random valid q (angles in [-pi, pi], positions in [-0.5, 0.5], uniform rotations).  -> (nq,)"""
        return self._space.random(np.random.default_rng(rng))

    def random_state(self, rng=None):
        """(q, v): a random configuration and a standard normal velocity."""
        rng = np.random.default_rng(rng)
        return self._space.random(rng), rng.normal(size=self.nv)

    def integrate(self, q, v, dt=1.0):
        """q (+) v dt on the configuration manifold (SE(3) exponential for a free joint).  -> (..., nq)"""
        q, v, shape = self._batch(q=q, v=v)
        dt = self._scalar(dt, "dt")
        out = np.array([self._space.integrate(qi, vi * dt) for qi, vi in zip(q, v)])
        return _finite(out, "integrate", "v dt").reshape(shape + (self.nq,))

    def difference(self, q0, q1):
        """v with integrate(q0, v) = q1.  -> (..., nv)"""
        q0, q1, shape = self._batch(q0=q0, q1=q1)
        out = np.array([self._space.difference(a, b) for a, b in zip(q0, q1)])
        return _finite(out, "difference", "q1 - q0").reshape(shape + (self.nv,))

    # ---- the dynamics of paper 002 ---------------------------------------------------------------------------
    # Every method takes one state or a batch, and an optional `out`: a writeable float64 array of the result's
    # shape (any strides) that receives the result and is returned -- no allocation per call.  An `out` that
    # shares memory with an input or another out is a ValueError.  A single state of float64 arrays goes straight
    # to the compiled kernel within its checks (registry.CHECKED: inputs finite, outputs finite -- float64
    # overflow is a ValueError -- and not overlapping); anything else is validated and converted by `_batch`
    # first.  The methods of the registry's rows (mass_matrix, coriolis_matrix, ...) are made after the class (see
    # _method); those below wrap rows whose several results make a dataclass.
    def dynamics(self, q, v, v_ref=None, a_ref=None, out=None):
        """M, C, g, com, J_com and, when v_ref and a_ref are given, the Slotine-Li Y, from one outward pass.

        q: (..., nq), v, v_ref, a_ref: (..., nv)  ->  Dynamics (see its docstring for shapes).
        out: a Dynamics of such arrays (with Y exactly when v_ref is given) to write into and return.
        """
        if (v_ref is None) != (a_ref is None):
            raise ValueError("give both v_ref and a_ref for the regressor, or neither")
        want_y = v_ref is not None
        if out is not None:
            if type(out) is not Dynamics:
                raise ValueError(f"out must be a Dynamics (as returned by dynamics()), got {type(out).__name__}")
            if (out.Y is not None) != want_y:
                raise ValueError("out.Y must be an array exactly when v_ref and a_ref are given"
                                 + (" (out.Y is None)" if want_y else " (out.Y is not None)"))
        qs, vs = self._q_shape, self._v_shape
        if (type(q) is _ND and q.dtype is _F64 and q.shape == qs and type(v) is _ND and v.dtype is _F64
                and v.shape == vs and (not want_y or (type(v_ref) is _ND and v_ref.dtype is _F64 and v_ref.shape == vs
                                                      and type(a_ref) is _ND and a_ref.dtype is _F64
                                                      and a_ref.shape == vs))):
            if FAST_CALLS and self._install_dynamics(want_y):                # the C call from now on
                return self.dynamics(q, v, v_ref, a_ref, out=out) if want_y else self.dynamics(q, v, out=out)
            if out is None:
                nn = self._shape_mass_matrix
                out = Dynamics(_empty(nn), _empty(nn), _empty(vs), _empty(3), _empty(self._shape_com_jacobian),
                               _empty(self._shape_regressor) if want_y else None)
            elif not (_fits(out.M, nn := self._shape_mass_matrix) and _fits(out.C, nn) and _fits(out.g, vs)
                      and _fits(out.com, (3,)) and _fits(out.J_com, self._shape_com_jacobian)
                      and (not want_y or _fits(out.Y, self._shape_regressor))):
                self._check_outs(_ROWS["_dynamics_with_regressor" if want_y else "_dynamics"], (), _fields(out),
                                 "out.")
            if want_y:
                status = self._k_dynamics_with_regressor(self._bodies, self._work, self.gravity, q, v, v_ref, a_ref,
                                                         out.M, out.C, out.g, out.com, out.J_com, out.Y)
            else:
                status = self._k_dynamics(self._bodies, self._work, self.gravity, q, v, out.M, out.C, out.g, out.com,
                                          out.J_com)
            if status:
                self._failed(status, _ROWS["_dynamics_with_regressor" if want_y else "_dynamics"],
                             (q, v, v_ref, a_ref) if want_y else (q, v), _fields(out), "out.")
            return out
        row = _ROWS["_dynamics_with_regressor" if want_y else "_dynamics"]
        arrays = self._batched(row, (q, v, v_ref, a_ref)[:len(row.inputs)], None if out is None else _fields(out),
                               "out.")
        return Dynamics(*arrays) if out is None else out

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
        da_dq, da_dv, M_inv = self.forward_dynamics_derivatives(q, v, tau)
        nv, batch = self.nv, da_dq.shape[:-2]
        A, B, E = np.zeros(batch + (2 * nv, 2 * nv)), np.zeros(batch + (2 * nv, nv)), np.eye(nv)
        if dt is None:
            A[..., :nv, nv:] = E
            A[..., nv:, :nv], A[..., nv:, nv:], B[..., nv:, :] = da_dq, da_dv, M_inv
            return A, B
        dt = float(dt)
        v_next = np.asarray(v, dtype=float) + dt * self.forward_dynamics(q, v, tau)
        w = (dt * v_next).reshape(-1, nv)
        Jq, Jw = (np.array(x).reshape(batch + (nv, nv)) for x in zip(*map(self.integrate_jacobians, w)))
        A[..., nv:, :nv], A[..., nv:, nv:] = dt * da_dq, E + dt * da_dv
        A[..., :nv, :nv] = Jq + dt * Jw @ A[..., nv:, :nv]
        A[..., :nv, nv:] = dt * Jw @ A[..., nv:, nv:]
        B[..., nv:, :] = dt * M_inv
        B[..., :nv, :] = dt * Jw @ B[..., nv:, :]
        return _finite(A, "linearize", "dt"), _finite(B, "linearize", "dt")

    def parameter_derivatives(self, q, v, out=None):
        """dM/dpi, dC/dpi, dg/dpi at (q, v) (paper 002, Prop. 2), read off the regressor, of which they are the
        columns: with Y0 the regressor without gravity, dM_dpi[:, j] = Y0(q, v, 0, e_j), dC_dpi[:, j] =
        Y0(q, v, e_j, 0) and dg_dpi = Y(q, v, 0, 0) -- 2 nv + 1 states of one batched regressor call each.
        (..., nq), (..., nv) -> ParameterDerivatives; out: a ParameterDerivatives to fill."""
        if out is not None and type(out) is not ParameterDerivatives:
            raise ValueError(f"out must be a ParameterDerivatives, got {type(out).__name__}")
        given = (q, v)
        q, v, batch = self._batch(q=q, v=v)
        B, nv, ny = q.shape[0], self.nv, 10 * self.nbodies
        if out is not None:
            for name, shape in (("dM_dpi", (nv, nv, ny)), ("dC_dpi", (nv, nv, ny)), ("dg_dpi", (nv, ny))):
                _checked_out(getattr(out, name), batch + shape, "out." + name)
            self._overlapping(("q", "v"), given, (out.dM_dpi, out.dC_dpi, out.dg_dpi),
                              ("out.dM_dpi", "out.dC_dpi", "out.dg_dpi"))
        if self._weightless is None:
            self._weightless = Robot(self.model.with_gravity(np.zeros(3)))
        E, Z = np.eye(nv), np.zeros((nv, nv))
        Y0 = self._weightless.regressor(np.repeat(q, 2 * nv, axis=0), np.repeat(v, 2 * nv, axis=0),
                                        np.tile(np.vstack([Z, E]), (B, 1)), np.tile(np.vstack([E, Z]), (B, 1)))
        Y0 = Y0.reshape(B, 2, nv, nv, ny).transpose(1, 0, 3, 2, 4)          # [kind, state, i, j, p]
        g = self.regressor(q, v, np.zeros((B, nv)), np.zeros((B, nv)))
        if out is None:
            return ParameterDerivatives(Y0[0].reshape(batch + (nv, nv, ny)), Y0[1].reshape(batch + (nv, nv, ny)),
                                        g.reshape(batch + (nv, ny)))
        out.dM_dpi[...] = Y0[0].reshape(batch + (nv, nv, ny))
        out.dC_dpi[...] = Y0[1].reshape(batch + (nv, nv, ny))
        out.dg_dpi[...] = g.reshape(batch + (nv, ny))
        return out

    def integrate_jacobians(self, w):
        """(d/dq, d/dw) of integrate(q, w) in tangent coordinates, as Pinocchio's dIntegrate (they do not depend on
        q): identity blocks for 1-DoF joints, Ad(exp(-w_j)) and the right Jacobian of exp for free and planar
        joints.  w: (nv,) -> (nv, nv), (nv, nv)"""
        Jq, Jw = self._space.integrate_jacobians(self._vector(w, "w", self.nv))
        return _finite(Jq, "integrate_jacobians", "w"), _finite(Jw, "integrate_jacobians", "w")

    def state_derivatives(self, q, v, out=None):
        """dM/dq, dC/dq, dC/dv, dg/dq and dJ_com/dq at (q, v), the last index the direction (paper 002, Prop. 5);
        q-directions are the tangent directions of integrate, d/de f(integrate(q, e e_i)) at e = 0 (Pinocchio's).

        q: (..., nq), v: (..., nv)  ->  StateDerivatives (see its docstring); out: a StateDerivatives to fill.
        """
        if out is not None and type(out) is not StateDerivatives:
            raise ValueError(f"out must be a StateDerivatives, got {type(out).__name__}")
        result = self._state_derivatives(q, v, out=None if out is None else (out.dM_dq, out.dC_dq, out.dC_dv,
                                                                              out.dg_dq, out.dJcom_dq))
        return StateDerivatives(*result) if out is None else out

    def innovations(self, q, out=None):
        """L, D and L^-1 of the innovations factorization M = L D L^T (paper 003, Identity 4.1, Algorithm 4.1),
        from the articulated-body inertias, without forming M.  q: (..., nq) -> Innovations (see its docstring);
        out: an Innovations to fill."""
        if out is not None and type(out) is not Innovations:
            raise ValueError(f"out must be an Innovations, got {type(out).__name__}")
        result = self._innovations(q, out=None if out is None else (out.L, out.D, out.L_inv))
        return Innovations(*result) if out is None else out

    def diagonalized(self, q, v, tau=None, out=None):
        """nu, epsilon and C(theta, nu) of the diagonalized equations nu_dot + C(theta, nu) = epsilon (paper 003,
        eqs. (1.3)-(1.4), (5.1)-(5.3), (7.1)): decoupled, unit-inertia joint equations for control design, in O(n).
        q: (..., nq), v, tau: (..., nv) -> Diagonalized (see its docstring); out: a Diagonalized to fill (with
        epsilon exactly when tau is given)."""
        if out is not None:
            if type(out) is not Diagonalized:
                raise ValueError(f"out must be a Diagonalized, got {type(out).__name__}")
            if (out.epsilon is None) != (tau is None):
                raise ValueError("out.epsilon must be an array exactly when tau is given")
        with_tau, vs = tau is not None, self._v_shape
        if (type(q) is _ND and q.dtype is _F64 and q.shape == self._q_shape and type(v) is _ND and v.dtype is _F64
                and v.shape == vs and (not with_tau or (type(tau) is _ND and tau.dtype is _F64 and tau.shape == vs))):
            if (FAST_CALLS and with_tau and "diagonalized" not in self.__dict__        # (q, v) alone: in Python
                    and self._install("diagonalized", _ROWS["_diagonalized"], result_type=Diagonalized,
                                      fields=("nu", "epsilon", "coriolis"))):
                return self.diagonalized(q, v, tau, out=out)                       # the C call from now on
            if out is None:
                out = Diagonalized(_empty(vs), _empty(vs) if with_tau else None, _empty(vs))
            elif not (_fits(out.nu, vs) and _fits(out.coriolis, vs) and (not with_tau or _fits(out.epsilon, vs))):
                self._check_outs(_ROWS["_diagonalized"], (), (out.nu, out.epsilon if with_tau else _empty(vs),
                                                               out.coriolis), "out.")
            tau, epsilon = (tau, out.epsilon) if with_tau else (np.zeros(vs), _empty(vs))
            status = self._k_diagonalized(self._bodies, self._work, self.gravity, q, v, tau, out.nu, epsilon,
                                          out.coriolis)
            if status:
                self._failed(status, _ROWS["_diagonalized"], (q, v, tau), (out.nu, epsilon, out.coriolis), "out.")
            return out
        if not with_tau:
            tau = np.zeros(np.shape(v))
        outs = None
        if out is not None:
            outs = (out.nu, out.epsilon if with_tau else np.empty(np.shape(out.nu)), out.coriolis)
        nu, epsilon, coriolis = self._diagonalized(q, v, tau, out=outs)
        if out is not None:
            return out
        return Diagonalized(nu, epsilon if with_tau else None, coriolis)

    def solve_mass_matrix(self, q, x, out=None):
        """M(q)^-1 x without forming M: one articulated-body factorization (paper 003, Algorithm 4.1), then O(n)
        per right-hand side (eq. (4.1d) applied to x).  q: (..., nq); x: (..., nv) or (..., nv, k) -> the shape of
        x; out: an array of that shape to write into."""
        q, row = np.asarray(q), _ROWS["_solve_mass_matrix"]
        batch = q.shape[:-1]
        x = np.array(x, dtype=float) if not (type(x) is _ND and x.dtype is _F64) else x
        nv = self.nv
        if x.shape == batch + (nv,):
            X = x[..., None]
        elif x.ndim == len(batch) + 2 and x.shape[:-1] == batch + (nv,):
            X = x
        else:
            raise ValueError(f"x must have shape {batch + (nv,)} or {batch + (nv,)[:-1]}(..., {nv}, k) for q of "
                             f"batch shape {batch}, got {x.shape}")
        result = _empty(x.shape) if out is None else _checked_out(out, x.shape)
        target = result[..., None] if X is not x else result
        if q.shape == self._q_shape and q.dtype is _F64:
            status = self._k_solve_mass_matrix(self._bodies, self._work, q, X, target)
            if status:
                self._failed(status, row, (q, X), (target,))
            return result
        Q, batch = self._batch(False, q=q)
        B, k = Q.shape[0], X.shape[-1]
        Xf = X.reshape((B, nv, k))
        Tf = _merged_batch(target, len(batch), B) if target.shape[:len(batch)] == batch else None
        if Tf is None and out is not None:
            self._overlapping(row.inputs, (Q, Xf), (target,), ("out",))
        work_out = Tf if Tf is not None else _empty((B, nv, k))
        status = self._run_batch(row, (Q, Xf), (work_out,))
        if status.any() and status[0] == ERR_OVERLAP:
            self._overlapping(row.inputs, (Q, Xf), (target,), ("out",))
            Tf, work_out = None, _empty((B, nv, k))
            status = self._run_batch(row, (Q, Xf), (work_out,))
        if status.any():
            i = np.flatnonzero(status)[0]
            self._raise(status[i], row, (Q[i], Xf[i]))
        if Tf is None:
            target[...] = work_out.reshape(target.shape)
        return result

    def time_derivatives(self, q, v, a, v_ref=None, a_ref=None, j_ref=None, out=None):
        """d/dt of M(q), C(q, v), g(q) and J_com(q) along q' = v (on the Lie group for a floating base), v' = a
        (paper 002, Prop. 6); with v_ref, a_ref, j_ref also of the Slotine-Li regressor along v_ref' = a_ref,
        a_ref' = j_ref: Y_dot pi = M_dot a_r + M j_r + C_dot v_r + C a_r + g_dot.

        q: (..., nq), v, a (and v_ref, a_ref, j_ref): (..., nv)  ->  TimeDerivatives (see its docstring).
        out: a TimeDerivatives of such arrays (with Y_dot exactly when references are given) to write into.
        """
        refs = (v_ref, a_ref, j_ref)
        with_y = v_ref is not None
        if any((x is None) == with_y for x in refs):
            raise ValueError("give v_ref, a_ref and j_ref for Y_dot, or none of them")
        arrays = None
        if out is not None:
            if type(out) is not TimeDerivatives:
                raise ValueError(f"out must be a TimeDerivatives, got {type(out).__name__}")
            if (out.Y_dot is not None) != with_y:
                raise ValueError("out.Y_dot must be an array exactly when v_ref, a_ref and j_ref are given")
            arrays = (out.M_dot, out.C_dot, out.g_dot, out.J_com_dot) + ((out.Y_dot,) if with_y else ())
        if with_y:
            result = self._time_derivatives_with_regressor(q, v, a, v_ref, a_ref, j_ref, out=arrays)
        else:
            result = self._time_derivatives(q, v, a, out=arrays)
        return TimeDerivatives(*result) if out is None else out

    # ---- plumbing ---------------------------------------------------------------------------------------------
    def _raise(self, status, row, inputs=()):
        """The ValueError of a kernel's status code (kinematics.ERR_*) for the quantity `row` at the state `inputs`
        (one state's arrays, in the order of row.inputs)."""
        if status == ERR_OVERFLOW:
            sizes = [float(np.max(np.abs(x), initial=0.0)) for x in inputs]
            culprit = (f": {row.inputs[int(np.argmax(sizes))]} holds {max(sizes):.3g}" if sizes else "")
            raise ValueError(f"{row.name.lstrip('_')} overflows float64 at this state (a result is not finite)"
                             f"{culprit}")
        if status == ERR_OVERLAP:
            raise ValueError(f"an out of {row.name.lstrip('_')} overlaps an input or another out")
        if status == ERR_QUAT:
            iq = [j.idx_q for j in self.model.joints if j.type in ("free", "floating")]
            where = ", ".join(f"q[{i + 3}:{i + 7}]" for i in iq)
            raise ValueError(f"{where} is a zero quaternion; expected [qx, qy, qz, qw] of non-zero norm")
        if status == ERR_SINGULAR:
            raise ValueError("the mass matrix is singular at this q: a joint moves a subtree without mass or "
                             "inertia, so the forward dynamics is undefined")
        raise ValueError(f"{row.inputs[int(status) - ERR_INPUT]} contains non-finite values (NaN or inf)")

    def _check_outs(self, row, batch, outs, prefix=""):
        """Each of outs can receive its output of `row` for this batch shape, else a ValueError naming it: out, or
        out[i] for a tuple of outputs, or prefix + the output's name (out.M of a Dynamics)."""
        n = len(row.outputs)
        if not isinstance(outs, (tuple, list)) or len(outs) != n:
            raise ValueError(f"out must be a tuple of {n} arrays ({', '.join(name for name, _ in row.outputs)}), "
                             f"got {type(outs).__name__}")
        for i, ((name, _), shape, x) in enumerate(zip(row.outputs, self._shapes[row.name], outs)):
            _checked_out(x, batch + shape, prefix + name if prefix else f"out[{i}]" if n > 1 else "out")

    def _failed(self, status, row, inputs, outputs, prefix=""):
        """After a single state's kernel returned `status`: its ValueError, or -- when the outputs' extents overlap
        but no element is shared (interleaved views) -- the results computed into new arrays and copied in."""
        if status != ERR_OVERLAP:
            self._raise(status, row, inputs)
        self._overlapping(row.inputs, inputs, outputs, self._out_names(row, prefix))   # raises on shared memory
        fresh = [_empty(x.shape) for x in outputs]
        constants = (self.gravity,) if row.gravity else ()
        status = getattr(self, "_k" + row.name)(self._bodies, self._work, *getattr(self, "_a" + row.name),
                                                *constants, *inputs, *fresh)
        if status:
            self._raise(status, row, inputs)
        for x, y in zip(outputs, fresh):
            x[...] = y

    @staticmethod
    def _out_names(row, prefix=""):
        """How the outputs of `row` are named in messages: out, out[i] of a tuple, or prefix + name (out.M)."""
        n = len(row.outputs)
        return [prefix + name if prefix else f"out[{i}]" if n > 1 else "out" for i, (name, _) in enumerate(row.outputs)]

    @staticmethod
    def _overlapping(input_names, inputs, outputs, names):
        """A ValueError when an output shares memory with an input or another output (np.shares_memory); True when
        some extents overlap without a shared element (np.may_share_memory), False when none do.  Arrays only: a
        list given as an input is copied before it is read."""
        maybe = False
        for i, x in enumerate(outputs):
            others = list(zip(input_names, inputs)) + list(zip(names[i + 1:], outputs[i + 1:]))
            for name, y in others:
                if not (isinstance(y, np.ndarray) and np.may_share_memory(x, y)):
                    continue
                try:
                    shared = np.shares_memory(x, y, max_work=100_000)
                except np.exceptions.TooHardError:
                    shared = True
                if shared:
                    raise ValueError(f"{names[i]} shares memory with {name}: an out must not overlap the inputs "
                                     f"or another out (results would overwrite what is still to be read)")
                maybe = True
        return maybe

    def _batched(self, row, states, outs, prefix=""):
        """The quantity `row` for validated states (any batch shape, or one state given as lists, other dtypes...)
        by its compiled parallel loop.  outs: None (new arrays) or a list of arrays, one per output, to receive
        the results; returns the list of results."""
        *flat, batch = self._batch(False, **dict(zip(row.inputs, states)))
        B, nd, shapes = flat[0].shape[0], len(batch), self._shapes[row.name]
        if outs is None:
            results = [self._results.empty(batch + s) for s in shapes]
        else:
            results = outs
            self._check_outs(row, batch, results, prefix)
        targets = [_merged_batch(x, nd, B) for x in results]
        if any(x is None for x in targets):         # views whose batch dimensions do not merge: computed apart,
            if outs is not None:                    # copied in (an out sharing memory with an input is refused)
                self._overlapping(row.inputs, flat, results, self._out_names(row, prefix))
            targets = [_empty((B,) + s) for s in shapes]
        status = self._run_batch(row, flat, targets)
        if status.any() and status[0] == ERR_OVERLAP:   # extents overlap: refused if memory is shared, else
            self._overlapping(row.inputs, flat, results, self._out_names(row, prefix))   # computed apart
            targets = [_empty((B,) + s) for s in shapes]
            status = self._run_batch(row, flat, targets)
        if status.any():
            i = np.flatnonzero(status)[0]
            self._raise(status[i], row, [x[i] for x in flat])
        for x, y in zip(results, targets):
            if not np.may_share_memory(x, y):
                x[...] = y.reshape(x.shape)
        return results

    def _run_batch(self, row, flat, targets):
        """The status codes of the compiled parallel loop of `row` over the states `flat` into `targets`.

        The loop takes C-contiguous arrays (_signatures): arrays of other strides are replaced (_dense), and the
        results copied back once every state has succeeded; status[0] is ERR_OVERLAP, and nothing computed, when
        the byte extents of the caller's targets overlap the inputs' or each other's (compiled.overlapping)."""
        status = np.zeros(flat[0].shape[0], dtype=np.int64)
        outs = [x if x.ndim > 1 else x[:, None] for x in targets]
        dense = _dense(flat, outs)
        if dense is None or (status.shape[0] > 0 and overlapping(*dense)):
            status[0] = ERR_OVERLAP
            return status
        kernel = entry(row.name, _signatures(row.name))
        with self._batch_lock:                      # the loop leaves the GIL; its workspaces are the Robot's
            works, arrays = self._per_thread(row)
            plan = layout(self.nbodies, arrays, (self.gravity,) if row.gravity else (), dense[0] + dense[1])
            addresses = _empty((works.shape[0], plan[0]), dtype=np.int64)
            getattr(self, "_p" + row.name)(kernel, self._bodies, works, plan, addresses, status)
        if not status.any():
            _copy_back(outs, dense[1])
        return status

    def _per_thread(self, row):
        """The workspaces of a batch's threads (thread_count, made once, larger when more threads are set), and
        copies of the per-robot arrays of `row` for each: (threads, nbodies) records, (threads, ...) arrays."""
        threads = thread_count()
        if self._thread_work is None or self._thread_work.shape[0] < threads:
            self._thread_work = np.repeat(self._work[None], threads, axis=0)
            self._thread_arrays = {}
        arrays = self._thread_arrays.get(row.name)
        if arrays is None:
            count = self._thread_work.shape[0]
            arrays = self._thread_arrays[row.name] = tuple(np.repeat(x[None], count, axis=0)
                                                           for x in getattr(self, "_a" + row.name))
        return self._thread_work, arrays

    @staticmethod
    def _scalar(x, name):
        try:
            x = float(x)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a finite number, got {x!r}") from None
        if not math.isfinite(x):
            raise ValueError(f"{name} must be a finite number, got {x}")
        return x

    def _vector(self, x, name, n):
        x = np.array(x, dtype=float)
        if x.shape != (n,) or not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be a finite array of shape ({n},), got shape {x.shape}"
                             + ("" if x.shape != (n,) else " with non-finite values"))
        return x

    def _batch(self, checked=True, **arrays):
        """Validate named arrays, q-like ones (names starting with q) of width nq, others nv; flatten the batch.

        checked=False leaves finiteness and zero quaternions to the compiled kernel, which reports them (and uses
        a non-unit quaternion normalized, as for one state): float64 arrays are then taken without a copy.
        Returns the flattened (B, width) arrays followed by the common leading shape.
        """
        out, shape = [], None
        for name, x in arrays.items():
            width, what = (self.nq, "nq") if name.startswith("q") else (self.nv, "nv")
            if checked or type(x) is not _ND or x.dtype is not _F64:
                try:
                    x = np.array(x, dtype=float)
                except (TypeError, ValueError):
                    raise ValueError(f"{name} must be a numeric array of shape (..., {what}={width})") from None
            if x.ndim == 0 or x.shape[-1] != width:
                raise ValueError(f"{name} must have shape (..., {what}={width}), got {x.shape}")
            if shape is None:
                shape = x.shape[:-1]
            elif x.shape[:-1] != shape:
                raise ValueError(f"{name} has batch shape {x.shape[:-1]}, expected {shape} like "
                                 f"{next(iter(arrays))}")
            if checked:
                if not np.all(np.isfinite(x)):
                    raise ValueError(f"{name} contains non-finite values (NaN or inf)")
                if width == self.nq and name.startswith("q"):
                    self._space.normalize(x, name)
            out.append(x.reshape(int(np.prod(shape)), width))
        return (*out, shape)


def _finite(x, what, culprit):
    """x, if all finite; else the ValueError of a result that overflows float64 (ERR_OVERFLOW's, for results
    computed in Python)."""
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} overflows float64 at this state (a result is not finite): {culprit} too large")
    return x


def _fields(d):
    """M, C, g, com, J_com (and Y when present) of a Dynamics."""
    return [d.M, d.C, d.g, d.com, d.J_com] + ([] if d.Y is None else [d.Y])


# ---- the methods of the registry's rows ------------------------------------------------------------------------
# Written from one template, so that each has its own signature (q, v, ..., out=None) and a fast path without a
# Python loop over its arguments (a generic *args path costs ~0.35 us a call, a third of a small arm's M).
_TEMPLATE = """
def {name}(self, {args}, out=None{kind_arg}):
    {kind_check}if {fast}:
        if _fast and {name!r} not in self.__dict__ and self._install({name!r}, row):
            return self.{name}({args}, out)                # the C call from now on
        {allocate}
        status = self._k{name}(self._bodies, self._work, {arrays}{constants}{args}, {out_args})
        if status:
            self._failed(status, row, ({args},), ({out_args},))
        return {result}
    {batch}
"""


# A row's method is called in C (compiled.fast_call) once it has computed a single state in Python: every row
# whose inputs are the state's vectors; the frame methods by their table of frames (_frame_method_q, _qv).
_FAST = {row.name: FAST_CALLS and not row.matrices and all(x[0] == "q" or x in _VECTOR_INPUTS for x in row.inputs)
         for row in QUANTITIES}
_GENERATED = {}                                  # method name -> the function _method (or a frame method) made


def _unknown_kind(row, kind):
    raise ValueError(f"kind must be one of {', '.join(repr(k) for k, _ in row.kinds)}, got {kind!r}") from None


def _method(row):
    """Robot.<row.name>: the compiled kernel for one state of float64 arrays, else the compiled batch loop.  One
    output: an array (a float for a scalar), into `out` if given; several: a tuple, into the tuple `out`.  A row
    with kinds takes kind= (its own by default, tested by identity first: the default path stays as fast) and
    hands another kind (or its own, named by an equal string) to the method of that kind's row."""
    name, n = row.name, len(row.outputs)
    shape_of = {x: "self._q_shape" if x.startswith("q") else "self._v_shape" for x in row.inputs}
    fields = dict(name=name, args=", ".join(row.inputs), constants="self.gravity, " if row.gravity else "",
                  arrays="".join(f"self._a{name}[{i}], " for i in range(len(row.arrays))),
                  fast=" and ".join(f"type({x}) is _ND and {x}.dtype is _F64 and {x}.shape == {shape_of[x]}"
                                    for x in row.inputs), kind_arg="", kind_check="")
    if row.wrenches:
        fields.update(kind_arg=', f_ext=None, reference="local"',
                      kind_check=f"if f_ext is not None:\n        return self._{name}_with_wrenches("
                                 f"{fields['args']}, out, f_ext, reference)\n    ")
    if row.kinds:
        fields.update(kind_arg=", kind=_default",
                      kind_check="if kind is not _default:\n        try:\n            other = _kinds[kind]\n"
                                 "        except (KeyError, TypeError):\n            _unknown_kind(row, kind)\n"
                                 f"        return getattr(self, other)({fields['args']}, out)\n    ")
    if n > 1:                                                      # a tuple of arrays
        fits = " and ".join(f"_fits(out[{i}], S[{i}])" for i in range(n))
        fields.update(allocate=f"S = self._shape_{name}\n        if out is None:\n            out = ("
                               + ", ".join(f"_empty(S[{i}])" for i in range(n)) + ")\n"
                               + f"        elif not (type(out) is tuple and len(out) == {n} and {fits}):\n"
                               + "            self._check_outs(row, (), out)",
                      out_args=", ".join(f"out[{i}]" for i in range(n)), result="tuple(out)",
                      batch=f"return tuple(self._batched(row, ({fields['args']},), None if out is None else out))")
    elif row.shapes == ((),):                                      # a scalar: its kernel writes into a 1-vector
        fields.update(allocate="result = _empty(()) if out is None else _checked_out(out, ())",
                      out_args="result[None]", result="result[()] if out is None else result",
                      batch=f"return self._batched(row, ({fields['args']},), None if out is None else [out])[0]")
    else:
        fields.update(allocate=f"out = _empty(self._shape_{name}) if out is None else "
                               f"_checked_out(out, self._shape_{name})",
                      out_args="out", result="out",
                      batch=f"return self._batched(row, ({fields['args']},), None if out is None else [out])[0]")
    source = _TEMPLATE.format(**fields)
    filename = f"<robot_dynamics.robot: {name} from the registry>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"_ND": _ND, "_F64": _F64, "_empty": _empty, "_checked_out": _checked_out, "_fits": _fits,
                 "row": row, "_kinds": dict(row.kinds), "_unknown_kind": _unknown_kind,
                 "_default": row.kinds[0][0] if row.kinds else None, "_fast": _FAST.get(name, False)}
    exec(compile(source, filename, "exec"), namespace)
    method = _GENERATED[name] = namespace[name]
    method.__doc__, method.__qualname__, method.__module__ = row.doc, f"Robot.{name}", __name__
    return method


for _row in QUANTITIES:
    if not _row.name.startswith("_dynamics") and not _row.matrices:   # Robot.dynamics and rows with matrix inputs
        setattr(Robot, _row.name, _method(_row))                        # (solve_mass_matrix) are written by hand


# ---- robots whose joints are coupled by mimics ------------------------------------------------------------------
class _Coupled:
    """The methods of a Robot with joints coupled by mimics (load_urdf(mimic=True)): the articulated-body recursions
    (ABA, the innovations factorization) do not apply, so forward dynamics and M^-1 go through a Cholesky factor of
    M, and the methods built on them say why they are not available.  Robot.__init__ gives such a robot a subclass
    of its class with these methods first (_coupled): methods of a class rather than bound methods stored on the
    instance, which would hold the robot in a reference cycle."""

    def _no_innovations(self, *args, **kwargs):
        raise ValueError("the innovations factorization (and the diagonalized dynamics) does not cover joints "
                         "coupled by mimics (load with mimic=False; inverse_mass_matrix and solve_mass_matrix work "
                         "on such robots, through a Cholesky factor of M)")

    def inverse_mass_matrix(self, q, out=None):
        """M^-1 from a Cholesky factor of M: the articulated-body recursion does not apply to coupled joints."""
        from scipy.linalg import cho_factor, cho_solve
        M = self.mass_matrix(q)
        out = _empty(M.shape) if out is None else _checked_out(out, M.shape)
        self._overlapping(("q",), (q,), (out,), ("out",))
        E = np.eye(self.nv)
        try:
            M_inv = np.array([cho_solve(cho_factor(m), E) for m in M.reshape(-1, self.nv, self.nv)])
        except np.linalg.LinAlgError:
            self._raise(ERR_SINGULAR, _ROWS["inverse_mass_matrix"])
        out[...] = _finite(M_inv, "inverse_mass_matrix", "q").reshape(M.shape)
        return out

    def solve_mass_matrix(self, q, x, out=None):
        """M^-1 x from a Cholesky factor of M (coupled joints)."""
        from scipy.linalg import cho_factor, cho_solve
        M = self.mass_matrix(q)
        batch = M.shape[:-2]
        x = np.asarray(x, dtype=float)
        if not (x.shape == batch + (self.nv,) or (x.ndim == len(batch) + 2 and x.shape[:-1] == batch + (self.nv,))):
            raise ValueError(f"x must have shape {batch + (self.nv,)} or (..., {self.nv}, k) for q of batch shape "
                             f"{batch}, got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("x contains non-finite values (NaN or inf)")
        out = _empty(x.shape) if out is None else _checked_out(out, x.shape)
        self._overlapping(("q", "x"), (q, x), (out,), ("out",))
        Ms, xs = M.reshape(-1, self.nv, self.nv), x.reshape((len(M.reshape(-1, self.nv, self.nv)), self.nv, -1))
        try:
            solved = np.array([cho_solve(cho_factor(m), b) for m, b in zip(Ms, xs)])
        except np.linalg.LinAlgError:
            self._raise(ERR_SINGULAR, _ROWS["_solve_mass_matrix"])
        out[...] = _finite(solved, "solve_mass_matrix", "x").reshape(x.shape)
        return out

    def _no_derivatives(self, *args, **kwargs):
        raise ValueError("the dynamics derivatives do not cover joints coupled by mimics (load with mimic=False: "
                         "the mimic joints become independent coordinates, and the chain rule through "
                         "q_full = G q_reduced gives the reduced derivatives)")

    def forward_dynamics(self, q, v, tau, out=None, f_ext=None, reference="local"):
        """Forward dynamics through a Cholesky factor of M: ABA does not apply to joints coupled by mimics."""
        if f_ext is not None:
            return self._forward_dynamics_with_wrenches(q, v, tau, out, f_ext, reference)
        from scipy.linalg import cho_factor, cho_solve       # here: importing scipy.linalg takes ~0.25 s
        given = (q, v, tau)
        q, v, tau, shape = self._batch(q=q, v=v, tau=tau)
        out = _empty(shape + self._v_shape) if out is None else _checked_out(out, shape + self._v_shape)
        self._overlapping(("q", "v", "tau"), given, (out,), ("out",))
        d = self.dynamics(q, v)
        bias = np.einsum("...ij,...j->...i", d.C, v) + d.g
        try:
            a = np.array([cho_solve(cho_factor(M), t - b) for M, t, b in zip(d.M, tau, bias)])
        except np.linalg.LinAlgError:
            self._raise(ERR_SINGULAR, _ROWS["forward_dynamics"])
        out[...] = _finite(a, "forward_dynamics", "tau").reshape(out.shape)
        return out

    # state_derivatives' directions turn one body's subtree each; a mimic coordinate turns several (it gave
    # wrong numbers, 0.1-0.7 relative against central differences, before it was refused)
    inverse_dynamics_derivatives = forward_dynamics_derivatives = state_derivatives = _no_derivatives
    innovations = diagonalized = from_diagonalized = _no_innovations


@functools.cache
def _coupled(cls):
    """cls (Robot or a subclass) with the methods of _Coupled first, under cls's name."""
    return type(cls.__name__, (_Coupled, cls), {"__module__": cls.__module__, "__doc__": cls.__doc__})


# ---- Ploen's global matrix form (paper 000): GlobalFactorization and Robot.global_factorization ----------------
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


_PLOEN_FIELDS = ("S", "G", "Gamma", "J", "ad_Gamma", "C_bar")


def _global_factorization(self, q, v, out=None):
    """Ploen's global matrix form at (q, v): the operators S, G, Gamma, J, ad_Gamma and C_bar with
    M = S^T G^T J G S and the passive C = S^T G^T (J G ad_Gamma Gamma + C_bar) G S (paper 000, eqs. (19)-(38),
    for trees and floating bases; see GlobalFactorization).  Papers 000, 001 and 004 order twists [angular; linear]
    and number bodies 1..n from the base: here twists are [linear; angular] (paper 002, Pinocchio) and the blocks
    follow robot.body_names (parent before child); the operators are translated, e.g. Ploen's J_i =
    [[I - m r~^2, m r~], [-m r~, m E]] is our Lambda_k = [[m E, -(m c)~], [(m c)~, I_o]].  This C is passive like
    coriolis_matrix and gives the same C v, but is another matrix (GlobalFactorization.coriolis_matrix).

    q: (..., nq), v: (..., nv)  ->  GlobalFactorization (see its docstring for shapes).
    out: a GlobalFactorization of such arrays to write into and return.
    """
    nb, nv = self.nbodies, self.nv
    arrays = None
    if out is not None:
        if type(out) is not GlobalFactorization:
            raise ValueError(f"out must be a GlobalFactorization, got {type(out).__name__}")
        batch = np.shape(q)[:-1]
        arrays = []
        for name in _PLOEN_FIELDS:      # each (..., 6 nb, .) array seen by body blocks: splitting an axis is a view
            x = _checked_out(getattr(out, name), batch + ((6 * nb, nv) if name == "S" else (6 * nb, 6 * nb)),
                             "out." + name)
            arrays.append(x.reshape(batch + ((nb, 6, nv) if name == "S" else (nb, 6, nb, 6))))
    result = self._global_factorization(q, v, out=None if arrays is None else tuple(arrays))
    if out is not None:
        return out
    batch = result[0].shape[:-3]
    return GlobalFactorization(result[0].reshape(batch + (6 * nb, nv)),
                               *(x.reshape(batch + (6 * nb, 6 * nb)) for x in result[1:]))


_global_factorization.__name__ = "global_factorization"
_global_factorization.__qualname__ = "Robot.global_factorization"
Robot.global_factorization = _global_factorization
# ---- end of Ploen's global matrix form ---------------------------------------------------------------------------


# ---- frames, frame Jacobians and external wrenches (issue 14; algorithms/frames.py) ----------------------------
from .algorithms.frames import FRAME_SIZE, REFERENCES, frame_array  # noqa: E402  (this block's own import)

for _name in ("_frame_placement", "_frame_jacobian", "_frame_velocity", "_frame_acceleration_bias"):
    delattr(Robot, _name)       # made from their rows as for nv-wide inputs: their methods are written below
_FRAME_DOC = """
    frame: a link name of robot.frame_names (every URDF link, those merged into a body by fixed joints included)
    or its index there.  reference: Pinocchio's reference frames -- "local" (LOCAL, the default: the frame's own
    axes, about its origin), "world" (WORLD: the world's axes, about the world origin -- the spatial twist) or
    "local_world_aligned" (LOCAL_WORLD_ALIGNED: the world's axes, about the frame's origin).  Twists are
    [linear; angular].  The kernel walks the frame's support only (its body and that body's ancestors)."""


def _frame_names(self):
    """Every URDF link of the robot, depth first from the root link: each is a frame (frame_placement, ...)."""
    return list(self.model.frames)


def _frame(self, frame, reference):
    """The frames.FRAME_SIZE array of `frame` (a name of frame_names or its index) in `reference`, from a table
    made at the first call; a ValueError naming the close matches of an unknown name."""
    if self._frame_rows is None:                # {name or index: its arrays in REFERENCES' order (their codes)},
        self._frame_rows = {}                   # which the C calls look up as well
        for i, (name, f) in enumerate(self.model.frames.items()):
            self._frame_rows[name] = self._frame_rows[i] = tuple(frame_array(f.body, ref, f.R, f.p)
                                                                 for ref in REFERENCES)
    try:
        return self._frame_rows[frame][REFERENCES[reference]]
    except (KeyError, TypeError):
        pass
    if not isinstance(reference, str) or reference not in REFERENCES:
        raise ValueError(f"reference must be one of {', '.join(map(repr, REFERENCES))}, got {reference!r}")
    names = list(self.model.frames)
    if isinstance(frame, str):
        import difflib
        close = difflib.get_close_matches(frame, names, n=5, cutoff=0.6)
        raise ValueError(f"unknown frame {frame!r}: " + (f"did you mean {', '.join(map(repr, close))}?" if close
                         else f"robot.frame_names lists the {len(names)} frames"))
    if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool):
        if -len(names) <= frame < 0:
            return self._frame_rows[int(frame) + len(names)][REFERENCES[reference]]
        raise ValueError(f"frame index {frame} is out of range for {len(names)} frames")
    raise ValueError(f"frame must be a frame name (robot.frame_names) or its index, got {type(frame).__name__}")


def _frame_batched(self, row, states, F, out):
    """The frame quantity `row` for a batch of states by its compiled parallel loop, the frame array F (the same
    for every state) passed as a batch of stride 0."""
    *flat, batch = self._batch(False, **dict(zip(row.inputs[:-1], states)))
    B, shape = flat[0].shape[0], self._shapes[row.name][0]
    result = self._results.empty(batch + shape) if out is None else _checked_out(out, batch + shape)
    target = _merged_batch(result, len(batch), B)
    if target is None:                              # views whose batch dimensions do not merge: computed apart,
        if out is not None:                         # copied in (an out sharing memory with an input is refused)
            self._overlapping(row.inputs[:-1], flat, [result], ["out"])
        target = _empty((B,) + shape)
    frames = np.lib.stride_tricks.as_strided(F, (B, FRAME_SIZE), (0, F.strides[0]))
    status = self._run_batch(row, (*flat, frames), [target])
    if status.any() and status[0] == ERR_OVERLAP:   # extents overlap: refused if memory is shared, else computed
        self._overlapping(row.inputs[:-1], flat, [result], ["out"])                                   # apart
        target = _empty((B,) + shape)
        status = self._run_batch(row, (*flat, frames), [target])
    if status.any():
        i = np.flatnonzero(status)[0]
        self._raise(status[i], row, [x[i] for x in flat] + [F])
    if not np.may_share_memory(result, target):
        result[...] = target.reshape(result.shape)
    return result


def _frame_method_q(name, doc, public=None):
    """Robot.<name>(q, frame, reference="local", out=None) on the row _<name>; installed in C (_install) under the
    name `public` when given (a method without reference= that calls this one), else under `name`."""
    row = _ROWS["_" + name]
    kernel, shape = "_k_" + name, "_shape__" + name
    installed = public or name

    def method(self, q, frame, reference="local", out=None):
        F = self._frame(frame, reference)
        if type(q) is _ND and q.dtype is _F64 and q.shape == self._q_shape:
            if (FAST_CALLS and installed not in self.__dict__
                    and self._install(installed, row, self._frame_rows, public is None)):
                return getattr(self, installed)(q, frame, *((reference,) if public is None else ()), out)
            S = getattr(self, shape)
            out = _empty(S) if out is None else _checked_out(out, S)
            status = getattr(self, kernel)(self._bodies, self._work, q, F, out)
            if status:
                self._failed(status, row, (q, F), (out,))
            return out
        return self._frame_batched(row, (q,), F, out)

    method.__name__, method.__qualname__, method.__doc__ = name, "Robot." + name, doc + _FRAME_DOC
    return method


def _frame_method_qv(name, doc):
    """Robot.<name>(q, v, frame, reference="local", out=None) on the row _<name>."""
    row = _ROWS["_" + name]
    kernel, shape = "_k_" + name, "_shape__" + name

    def method(self, q, v, frame, reference="local", out=None):
        F = self._frame(frame, reference)
        if (type(q) is _ND and q.dtype is _F64 and q.shape == self._q_shape and type(v) is _ND and v.dtype is _F64
                and v.shape == self._v_shape):
            if FAST_CALLS and name not in self.__dict__ and self._install(name, row, self._frame_rows):
                return getattr(self, name)(q, v, frame, reference, out)            # the C call from now on
            S = getattr(self, shape)
            out = _empty(S) if out is None else _checked_out(out, S)
            status = getattr(self, kernel)(self._bodies, self._work, q, v, F, out)
            if status:
                self._failed(status, row, (q, v, F), (out,))
            return out
        return self._frame_batched(row, (q, v), F, out)

    method.__name__, method.__qualname__, method.__doc__ = name, "Robot." + name, doc + _FRAME_DOC
    return method


def _external_torques(self, q, f_ext, reference):
    """sum_f J_f^T w_f over the wrenches w_f of f_ext ({frame: (..., 6)}) given in `reference`, (..., nv): the
    joint torques by which the wrenches act (the power w_f . V_f = w_f . J_f v needs w_f and V_f in one reference,
    whichever it is)."""
    if not hasattr(f_ext, "items"):
        raise ValueError(f"f_ext must map frame names to wrenches [force; torque], got {type(f_ext).__name__}")
    batch, total = np.shape(q)[:-1], 0.0
    for frame, wrench in f_ext.items():
        try:
            w = np.array(wrench, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"f_ext[{frame!r}] must be a numeric wrench [force; torque] of shape (..., 6)") from None
        if w.shape not in ((6,), batch + (6,)):
            raise ValueError(f"f_ext[{frame!r}] must be a finite wrench [force; torque] of shape (6,) or "
                             f"{batch + (6,)}, got shape {w.shape}")
        if not np.isfinite(w).all():
            raise ValueError(f"f_ext[{frame!r}] must be a finite wrench [force; torque], got non-finite values")
        total = total + (w[..., None, :] @ self.frame_jacobian(q, frame, reference))[..., 0, :]     # w^T J
    return total


def _inverse_dynamics_with_wrenches(self, q, v, a, out, f_ext, reference):
    """inverse_dynamics with external wrenches: tau = ID(q, v, a) - sum_f J_f^T w_f."""
    external = self._external_torques(q, f_ext, reference)
    tau = self.inverse_dynamics(q, v, a, out)
    tau -= external
    return tau


def _forward_dynamics_with_wrenches(self, q, v, tau, out, f_ext, reference):
    """forward_dynamics with external wrenches: a = FD(q, v, tau + sum_f J_f^T w_f) (ABA, or the Cholesky factor
    of M for coupled joints)."""
    try:
        tau = np.array(tau, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"tau must be a numeric array of shape (..., nv={self.nv})") from None
    if tau.shape[-1:] != self._v_shape:
        raise ValueError(f"tau must have shape (..., nv={self.nv}), got {tau.shape}")
    return self.forward_dynamics(q, v, tau + self._external_torques(q, f_ext, reference), out)


def _frame_placement(self, q, frame, out=None):
    """T_{0,f}: the pose of a frame in the world, a 4x4 homogeneous transform.  q: (..., nq) -> (..., 4, 4)

    frame: a link name of robot.frame_names (every URDF link, those merged into a body by fixed joints included)
    or its index there."""
    return self._frame_pose(q, frame, "local", out)


_frame_placement.__qualname__ = "Robot.frame_placement"
for _name, _value in {"_frame_rows": None,                                                  # Robot's own
                      "_frame": _frame, "_frame_batched": _frame_batched,
                      "_external_torques": _external_torques,
                      "_inverse_dynamics_with_wrenches": _inverse_dynamics_with_wrenches,
                      "_forward_dynamics_with_wrenches": _forward_dynamics_with_wrenches,
                      "_frame_pose": _frame_method_q("frame_placement", "", public="frame_placement")}.items():
    setattr(Robot, _name, _value)
Robot.frame_names = property(_frame_names)
Robot.frame_placement = _frame_placement
Robot.frame_jacobian = _frame_method_q("frame_jacobian", """J_f: the frame's twist in `reference` is J_f v (world
    axes of the support's joints, paper 002, eq. (27) unrolled; Pinocchio's computeFrameJacobian).
    q: (..., nq) -> (..., 6, nv)
""")
Robot.frame_velocity = _frame_method_qv("frame_velocity", """V_f = J_f v: the frame's twist [linear; angular] in
    `reference` (Pinocchio's getFrameVelocity).  q: (..., nq), v: (..., nv) -> (..., 6)
""")
Robot.frame_acceleration_bias = _frame_method_qv("frame_acceleration_bias", """Jdot_f v: the frame's classical
    acceleration at zero joint accelerations (Pinocchio's getFrameClassicalAcceleration after forwardKinematics
    with a = 0), so that the classical acceleration at a is J_f a + Jdot_f v -- what task-space control subtracts.
    In "local_world_aligned" it is [d^2 p / dt^2; d w / dt] of the frame origin p and angular velocity w (world
    axes); in "local" the same rotated into the frame's axes; in "world" the spatial acceleration A_0 plus
    [w x v_0; 0], v_0 the linear part of the spatial twist, as Pinocchio.  q: (..., nq), v: (..., nv) -> (..., 6)
""")
for _name in ("frame_placement", "frame_jacobian", "frame_velocity", "frame_acceleration_bias", "dynamics",
              "diagonalized"):
    _GENERATED[_name] = getattr(Robot, _name)
# ---- end of frames and external wrenches ------------------------------------------------------------------------


# ---- contacts, task-space dynamics (issue 14, items 3 and 4; algorithms/contacts.py) ---------------------------
from .algorithms import contacts as _contacts  # noqa: E402  (this block's own import)

delattr(Robot, "_constrained_dynamics")      # made from its row as for nv-wide inputs: its method is written below
_CONTACT_KINDS = {"point": 3, "surface": 6}
_CONTACT_REFERENCES = ("local_world_aligned", "local")


@dataclass(frozen=True)
class Contact:
    """A contact of Robot.constrained_dynamics: the frame `frame` (a name of robot.frame_names or its index) held

    - kind="point": its origin does not accelerate -- 3 rows, the linear ones of its Jacobian; its force (3,);
    - kind="surface": the frame does not accelerate at all -- 6 rows; its wrench [force; torque] (6,) about the
      frame's origin (a foot's sole, a gripper's grasp).

    reference: the axes of the rows and of the forces, "local_world_aligned" (the default: world axes at the frame's
    origin, e.g. a ground reaction with z up) or "local" (the frame's own axes), as frame_jacobian's.
    target: where the Baumgarte position term pulls the frame: a position (3,) for a point, a pose (4, 4) for a
    surface (its rotation error is log(R R_target^T)); None (the default): no position term.  A plain frame name
    in a contact list is Contact(name), a point contact.
    """
    frame: object
    kind: str = "point"
    reference: str = "local_world_aligned"
    target: object = None

    def __post_init__(self):
        if self.kind not in _CONTACT_KINDS:
            raise ValueError(f"Contact kind must be 'point' or 'surface', got {self.kind!r}")
        if self.reference not in _CONTACT_REFERENCES:
            raise ValueError(f"Contact reference must be 'local_world_aligned' or 'local', got {self.reference!r}")
        if self.target is not None:                 # kept as a tuple: a Contact is hashable (contact sets are cached)
            shape = (3,) if self.kind == "point" else (4, 4)
            try:
                t = np.array(self.target, dtype=float)
            except (TypeError, ValueError):
                t = None
            if t is None or t.shape != shape or not np.isfinite(t).all():
                raise ValueError(f"Contact target of a {self.kind} must be a finite array of shape {shape}")
            object.__setattr__(self, "target", tuple(t.ravel()))


def contact_list(contacts):
    """A contact set as a tuple of Contacts: a list (or tuple) of frame names (point contacts) and Contacts, or a
    mapping {frame: "point" | "surface"}; anything else, a single frame included, is a ValueError naming it."""
    if isinstance(contacts, Mapping):
        items = []
        for frame, kind in contacts.items():
            if kind not in _CONTACT_KINDS:
                raise ValueError(f"contacts[{frame!r}] must be 'point' or 'surface' (a mapping gives each frame's "
                                 f"kind), got {kind!r}")
            items.append(Contact(frame, kind))
        return tuple(items)
    if isinstance(contacts, (str, Contact)) or not hasattr(contacts, "__iter__"):
        raise ValueError(f"contacts must be a list of frame names or Contacts, or a mapping {{frame: 'point' | "
                         f"'surface'}}, got {type(contacts).__name__}")
    return tuple(c if isinstance(c, Contact) else Contact(c) for c in contacts)


def _contact_spec(self, contacts, baumgarte, damping):
    """(spec, m, items) of a contact set: the kernel's array (contacts.py), the number of rows and the Contacts;
    checked, cached by the set (when hashable), and the per-robot arrays grown to hold m rows."""
    contacts = tuple(contacts)
    items = list(contact_list(contacts))
    if len(items) > _contacts.MAX_CONTACTS:
        raise ValueError(f"at most {_contacts.MAX_CONTACTS} contacts, got {len(items)}")
    try:
        Kp, Kd = (float(x) for x in baumgarte)
    except (TypeError, ValueError):
        raise ValueError(f"baumgarte must be two gains (Kp, Kd), got {baumgarte!r}") from None
    if not (np.isfinite([Kp, Kd]).all() and Kp >= 0 and Kd >= 0):
        raise ValueError(f"baumgarte gains must be finite and non-negative, got {baumgarte!r}")
    mu = float(damping) if isinstance(damping, (int, float, np.floating, np.integer)) else np.nan
    if not (np.isfinite(mu) and mu >= 0):
        raise ValueError(f"damping must be a finite non-negative number, got {damping!r}")
    spec, m = [len(items), 0, Kp, Kd, mu], 0
    for c in items:
        F = self._frame(c.frame, "local")
        if F[0] < 0:
            raise ValueError(f"frame {c.frame!r} is fixed to the world: it cannot be a contact")
        rows = _CONTACT_KINDS[c.kind]
        target = np.zeros(12)
        if c.target is not None:
            t = np.array(c.target)
            target = np.concatenate([np.eye(3).ravel(), t]) if rows == 3 else \
                np.concatenate([t.reshape(4, 4)[:3, :3].ravel(), t.reshape(4, 4)[:3, 3]])
        spec += [F[0], rows, m, REFERENCES[c.reference], *F[2:14], float(c.target is not None), *target]
        m += rows
    spec[1] = m
    spec = np.array(spec, dtype=float)
    W, L = self._a_constrained_dynamics
    if W.shape[2] < m:                              # room for m rows, the batches' copies made anew, and the C
        self._a_constrained_dynamics = (np.zeros((self.nbodies, 6, m)), np.zeros((m, m + _contacts.EXTRA)))
        self.__dict__.pop("constrained_dynamics", None)            # call (which holds the old arrays) anew
        if self._thread_work is not None:
            self._thread_arrays.pop("_constrained_dynamics", None)
    if self._contact_specs is None:
        self._contact_specs = {}
    try:
        self._contact_specs[contacts, baumgarte, damping] = spec, m, items
    except TypeError:                               # unhashable: checked again at every call
        pass
    return spec, m, items


def _raise_contacts(self, status, inputs=()):
    """The ValueError of constrained_dynamics' status code at the state `inputs` (q, v, tau, spec)."""
    if status == _contacts.ERR_REDUNDANT:
        raise ValueError("the contact constraints are redundant or singular at this q (J M^-1 J^T is singular: "
                         "more rows than the robot can move independently, e.g. two contacts on one frame or a "
                         "surface on a body with fewer than 6 DoF below it); pass damping > 0 for damped "
                         "least-squares forces")
    self._raise(status, _ROWS["_constrained_dynamics"], inputs)


def _constrained_dynamics(self, q, v, tau, contacts, baumgarte=(0.0, 0.0), damping=0.0, out=None):
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
    "surface"} (never read as its keys alone).  damping: 0 (the default) refuses a
    redundant or singular set with a ValueError; > 0 gives damped least-squares forces and J a + Jdot v off the
    Baumgarte law by damping * forces.  A set of joints coupled by mimics is solved with a Cholesky factor of M.

    q: (..., nq), v, tau: (..., nv)  ->  a (..., nv), forces (..., m): each contact's 3 or 6 rows in the list's
    order, [force] or [force; torque] on the robot in the contact's reference.  out: a tuple (a, forces) to fill.
    """
    if type(contacts) not in (tuple, list):     # a mapping, or what contact_list refuses: Contacts before any key
        contacts = contact_list(contacts)
    last = self._last_contacts                  # the contact set of the previous call, compared element by element
    plain = type(baumgarte) is tuple and type(damping) in (int, float)    # gains that compare as one bool
    try:                                        # (identical elements: no Contact.__hash__, ~0.1 us a contact)
        key = contacts if type(contacts) is tuple else tuple(contacts)
        if (plain and last is not None and last[0] == key and last[1] == baumgarte
                and last[2] == damping):
            spec, m, items = last[3]
        else:
            spec, m, items = self._contact_specs[key, baumgarte, damping]
            self._last_contacts = (key, baumgarte, damping, (spec, m, items))
    except (KeyError, TypeError):
        spec, m, items = self._contact_spec(contacts, baumgarte, damping)
    if isinstance(self, _Coupled):
        return self._constrained_dynamics_coupled(q, v, tau, spec, m, items, out)
    vs = self._v_shape
    if (type(q) is _ND and q.dtype is _F64 and q.shape == self._q_shape and type(v) is _ND and v.dtype is _F64
            and v.shape == vs and type(tau) is _ND and tau.dtype is _F64 and tau.shape == vs):
        if (FAST_CALLS and plain and type(contacts) in (tuple, list) and baumgarte == (0.0, 0.0) and damping == 0.0
                and self._install_contacts(key, spec, m)):                                  # the C call from now on
            return self.constrained_dynamics(q, v, tau, contacts, out=out)
        if out is None:
            out = (_empty(vs), _empty(m))
        elif not (type(out) is tuple and len(out) == 2 and _fits(out[0], vs) and _fits(out[1], (m,))):
            self._check_contact_outs(out, (), m)
        W, L = self._a_constrained_dynamics
        status = self._k_constrained_dynamics(self._bodies, self._work, W, L, self.gravity, q, v, tau, spec,
                                              out[0], out[1])
        if status == ERR_OVERLAP:               # extents overlap: refused if memory is shared, else computed apart
            self._overlapping(("q", "v", "tau"), (q, v, tau), out, ["out[0]", "out[1]"])
            fresh = (_empty(vs), _empty(m))
            status = self._k_constrained_dynamics(self._bodies, self._work, W, L, self.gravity, q, v, tau, spec,
                                                  *fresh)
            out[0][...], out[1][...] = fresh
        if status:
            self._raise_contacts(status, (q, v, tau, spec))
        return out
    row = _ROWS["_constrained_dynamics"]
    Q, V, T, batch = self._batch(False, q=q, v=v, tau=tau)
    B = Q.shape[0]
    if out is None:
        results = (_empty(batch + vs), _empty(batch + (m,)))
    else:
        results = self._check_contact_outs(out, batch, m)
    targets = [_merged_batch(x, len(batch), B) for x in results]
    names = ["out[0]", "out[1]"]
    if any(x is None for x in targets):         # views whose batch dimensions do not merge: computed apart
        if out is not None:
            self._overlapping(("q", "v", "tau"), (Q, V, T), results, names)
        targets = [_empty((B,) + x.shape[len(batch):]) for x in results]
    specs = np.lib.stride_tricks.as_strided(spec, (B, spec.shape[0]), (0, spec.strides[0]))
    status = self._run_batch(row, (Q, V, T, specs), targets)
    if status.any() and status[0] == ERR_OVERLAP:       # extents overlap: refused if memory is shared, else apart
        self._overlapping(("q", "v", "tau"), (Q, V, T), results, names)
        targets = [_empty((B,) + x.shape[len(batch):]) for x in results]
        status = self._run_batch(row, (Q, V, T, specs), targets)
    if status.any():
        i = np.flatnonzero(status)[0]
        self._raise_contacts(status[i], (Q[i], V[i], T[i], spec))
    for x, y in zip(results, targets):
        if not np.may_share_memory(x, y):
            x[...] = y.reshape(x.shape)
    return results if out is None else out


def _constrained_dynamics_coupled(self, q, v, tau, spec, m, items, out):
    """constrained_dynamics through a Cholesky factor of M (joints coupled by mimics: no innovations), the rows and
    Jdot v from the frame methods, e from frame_placement -- the KKT system of contacts.py written densely."""
    from scipy.linalg import cho_factor, cho_solve
    from scipy.spatial.transform import Rotation
    Q, V, T, batch = self._batch(q=q, v=v, tau=tau)
    results = (_empty(batch + self._v_shape), _empty(batch + (m,))) if out is None else \
        self._check_contact_outs(out, batch, m)
    self._overlapping(("q", "v", "tau"), (q, v, tau), results, ["out[0]", "out[1]"])
    Kp, Kd, mu = spec[2:5]
    A, F = results[0].reshape(-1, self.nv), results[1].reshape(-1, m)
    for i, (qi, vi, ti) in enumerate(zip(Q, V, T)):
        d = self.dynamics(qi, vi)
        J, gamma = [], []
        for c in items:
            rows = _CONTACT_KINDS[c.kind]
            Jc = self.frame_jacobian(qi, c.frame, c.reference)[:rows]
            e = np.zeros(rows)
            if c.target is not None:
                Tf, target = self.frame_placement(qi, c.frame), np.array(c.target)
                if rows == 3:
                    e = Tf[:3, 3] - target
                else:
                    target = target.reshape(4, 4)
                    e = np.concatenate([Tf[:3, 3] - target[:3, 3],
                                        Rotation.from_matrix(Tf[:3, :3] @ target[:3, :3].T).as_rotvec()])
                if c.reference == "local":
                    e = np.concatenate([Tf[:3, :3].T @ e[:3], Tf[:3, :3].T @ e[3:]])
            J.append(Jc)
            gamma.append(self.frame_acceleration_bias(qi, vi, c.frame, c.reference)[:rows] + Kp * e + Kd * Jc @ vi)
        J, gamma = np.vstack(J), np.concatenate(gamma)
        try:
            factor = cho_factor(d.M)
        except np.linalg.LinAlgError:
            self._raise(ERR_SINGULAR, _ROWS["forward_dynamics"])
        a0 = cho_solve(factor, ti - d.C @ vi - d.g)
        MJt = cho_solve(factor, J.T)
        delassus = J @ MJt + mu * np.eye(m)
        try:
            U = np.linalg.cholesky(delassus) if np.isfinite(delassus).all() else None
        except np.linalg.LinAlgError:
            U = None
        if U is None or not (np.diag(U) ** 2 > 1e-12 * np.abs(np.diag(delassus)).max()).all():
            self._raise_contacts(_contacts.ERR_REDUNDANT)
        F[i] = _finite(-cho_solve((U, True), J @ a0 + gamma), "constrained_dynamics", "tau")
        A[i] = _finite(a0 + MJt @ F[i], "constrained_dynamics", "tau")
    if not np.may_share_memory(A, results[0]):
        results[0][...] = A.reshape(results[0].shape)
        results[1][...] = F.reshape(results[1].shape)
    return results if out is None else out


def _check_contact_outs(self, out, batch, m):
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ValueError(f"out must be a tuple of 2 arrays (a, forces), got {type(out).__name__}")
    return (_checked_out(out[0], batch + self._v_shape, "out[0]"), _checked_out(out[1], batch + (m,), "out[1]"))


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


def _task_space_dynamics(self, q, v, frame, reference="local_world_aligned", position_only=False, damping=0.0,
                         out=None):
    """Lambda, eta, J, J_bar and N of one frame's motion (see TaskSpaceDynamics): Lambda xddot + eta = F, the
    task-space form of M a + C v + g = tau for tau = J^T F (paper 004, eqs. (9.98)-(9.99): Lambda = J^-T M J^-1,
    eta = J^-T h - Lambda Jdot J^-1 V for a square J; with J^-T the dynamically consistent J_bar^T for a
    redundant arm).  M^-1 J^T takes one solve per row (solve_mass_matrix: O(n), no M formed), eta the
    unactuated acceleration a_0 = forward_dynamics(q, v, 0): eta = -Lambda (J a_0 + Jdot v).

    frame: a name of robot.frame_names or its index.  reference: frame_jacobian's, "local_world_aligned" by default
    (the world's axes at the frame: Cartesian control).  position_only: the 3 linear rows only.  damping: added to
    J M^-1 J^T before inverting; 0 (the default) refuses a singular configuration (a ValueError), > 0 gives the
    damped Lambda of a configuration near one.
    q: (..., nq), v: (..., nv) -> TaskSpaceDynamics (see its docstring for shapes); out: one to fill.
    """
    if out is not None and type(out) is not TaskSpaceDynamics:
        raise ValueError(f"out must be a TaskSpaceDynamics, got {type(out).__name__}")
    mu = float(damping) if isinstance(damping, (int, float, np.floating, np.integer)) else np.nan
    if not (np.isfinite(mu) and mu >= 0):
        raise ValueError(f"damping must be a finite non-negative number, got {damping!r}")
    k = 3 if position_only else 6
    J = self.frame_jacobian(q, frame, reference)[..., :k, :]
    batch, nv = J.shape[:-2], self.nv
    if self._frame(frame, reference)[0] < 0:
        raise ValueError(f"frame {frame!r} is fixed to the world: it has no task-space dynamics")
    MJt = self.solve_mass_matrix(q, np.swapaxes(J, -1, -2))                # M^-1 J^T (..., nv, k)
    Lam_inv = J @ MJt + mu * np.eye(k)
    scale = np.abs(np.diagonal(Lam_inv, axis1=-2, axis2=-1)).max(axis=-1)
    try:
        U = np.linalg.cholesky(Lam_inv)
    except np.linalg.LinAlgError:
        U = None
    if U is None or not (np.diagonal(U, axis1=-2, axis2=-1) ** 2 > 1e-12 * scale[..., None]).all():
        raise ValueError(f"J M^-1 J^T of frame {frame!r} is singular at this q (a kinematic singularity, or a frame "
                         f"that its joints cannot move in all {k} directions); pass damping > 0")
    U_inv = np.linalg.inv(U)
    Lam = np.swapaxes(U_inv, -1, -2) @ U_inv
    a0 = self.forward_dynamics(q, v, np.zeros(batch + (nv,)))
    xddot0 = (J @ a0[..., None])[..., 0] + self.frame_acceleration_bias(q, v, frame, reference)[..., :k]
    eta = -(Lam @ xddot0[..., None])[..., 0]                              # Lambda (J M^-1 h - Jdot v)
    J_bar = MJt @ Lam
    N = np.eye(nv) - J_bar @ J
    if out is None:
        return TaskSpaceDynamics(Lam, eta, J, J_bar, N)
    for name, x in (("Lambda", Lam), ("eta", eta), ("J", J), ("J_bar", J_bar), ("N", N)):
        _checked_out(getattr(out, name), x.shape, "out." + name)[...] = x
    return out


_task_space_dynamics.__name__ = "task_space_dynamics"
_task_space_dynamics.__qualname__ = "Robot.task_space_dynamics"


_constrained_dynamics.__name__ = "constrained_dynamics"
_constrained_dynamics.__qualname__ = "Robot.constrained_dynamics"
for _name, _value in {"_contact_specs": None, "_last_contacts": None,
                      "_contact_spec": _contact_spec, "_raise_contacts": _raise_contacts,
                      "_check_contact_outs": _check_contact_outs,
                      "_constrained_dynamics_coupled": _constrained_dynamics_coupled,
                      "constrained_dynamics": _constrained_dynamics,
                      "task_space_dynamics": _task_space_dynamics}.items():
    setattr(Robot, _name, _value)
_GENERATED["constrained_dynamics"] = _constrained_dynamics
# ---- end of contacts and task-space dynamics ---------------------------------------------------------------------
