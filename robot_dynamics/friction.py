"""Joint friction models: the torque tau_f(v) a drive's friction takes, one law per coordinate of v.

A model is a small frozen object whose fields are (nv,) arrays, an entry per coordinate of v (a floating base's six
entries zero).  Each law is a sum of basis functions B_i(v) weighted by linear coefficients c_i, some basis
functions shaped by nonlinear parameters:

    model       tau_f(v), per coordinate                                          linear c_i        nonlinear
    viscous     F_v v                                                             F_v               -
    coulomb     F_v v + F_c s(v)                                                  F_v, F_c          -
    offset      F_v v + F_c s(v) + F_o                                            F_v, F_c, F_o     -
    sigmoid     F_v v + phi1 / (1 + e^(-phi2 (v + phi3))) - phi1 / (1 + e^(-phi2 phi3))
                                                                                  F_v, phi1         phi2, phi3
    stribeck    F_v v + (F_c + (F_s - F_c) e^(-(v / v_s)^2)) s(v)                 F_v, F_c, F_s     v_s

with the fields damping = F_v, friction = F_c, offset = F_o, static = F_s, stribeck_velocity = v_s, phi1..3.

s(v) is the sign of v.  In ``torque`` (what a controller or a simulator applies: Drives.torque, robot.
friction_torque) it is tanh(v / COULOMB_VELOCITY), continuous, so that nothing chatters at a velocity reversal; in
the regressor columns of identification (``drive_regressor``, smooth=False) it is the exact sign.  The exact sign
because the smoothing width is a numerical device of the simulator and the controller, not a property of the
drive: fitting tanh(v / 0.01) would make the estimated F_c depend on that choice (every sample with |v| of a few
hundredths of a rad/s sees a smaller column), whereas the Coulomb law that datasheets, URDF <dynamics friction>,
Pinocchio and MuJoCo (frictionloss) mean is F_c sign(v).  Beyond 10 COULOMB_VELOCITY (0.1 rad/s) the two differ
by less than 5e-9 F_c (1 - tanh(x) < 2 e^(-2x)).

The offset model is asymmetric Coulomb friction on a moving joint: a level F_c+ for v > 0 and -F_c- for v < 0 is,
for every v != 0,

    F_c s(v) + F_o    with    F_c = (F_c+ + F_c-) / 2,   F_o = (F_c+ - F_c-) / 2.

At rest the offset model gives F_o, so F_o also takes whatever is constant on a joint (a torque sensor's bias, a
cable's or a spring's preload); a constant is not friction, hence "on a moving joint".

The sigmoid is Gaz, Cognetti, Oliva, Robuffo Giordano and De Luca ("Dynamic identification of the Franka Emika
Panda robot with retrieval of feasible parameters using penalty-based optimization", IEEE RA-L 4(4), 2019), with
a viscous term F_v v added (F_v = 0 is their law).  tau_f(0) = 0; as v -> +-inf the sigmoid tends to the levels
phi1 (1 - sigma(phi2 phi3)) and -phi1 sigma(phi2 phi3) (sigma(x) = 1 / (1 + e^-x)): an asymmetric Coulomb
friction reached smoothly over a velocity width of about 4 / phi2, centred at v = -phi3.

The Stribeck model (Armstrong-Helouvry, Dupont, Canudas de Wit, "A survey of models, analysis tools and
compensation methods for the control of machines with friction", Automatica 30(7), 1994, with the Gaussian
exponent): the breakaway level F_s at v = 0 falls to the Coulomb level F_c over the Stribeck velocity v_s.

Pinocchio's names, for every model: ``damping`` is the viscous coefficient F_v and ``friction`` the Coulomb
level, F_c for coulomb, offset (the mean of its two levels) and stribeck (the level away from zero velocity), phi1 / 2
for the sigmoid (the mean of its two levels), 0 for viscous -- what robot.damping and robot.friction show and what
URDF <dynamics> can hold.  A viscous or Coulomb model given to a robot's drives is the drives' own law: it becomes
their damping and friction, with no model (drives.py).

``drive_regressor`` gives the columns of the drives' part of the joint torque: armature a (the drives' armature
enters tau as diag(armature) a) and the linear coefficients of a friction model, for identification and for
Slotine-Li adaptation.
"""
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from .drives import MAX_DRIVE, smooth_sign, smooth_sign_slope


def sign(v, smooth):
    """s(v): tanh(v / COULOMB_VELOCITY) if smooth, else the exact sign (module docstring)."""
    return smooth_sign(v) if smooth else np.sign(v)


def logistic(x):
    """sigma(x) = 1 / (1 + e^-x), written as (1 + tanh(x / 2)) / 2, which never overflows."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@dataclass(frozen=True, eq=False)
class FrictionModel:
    """A friction law per coordinate of v (module docstring); its fields are (nv,) arrays, read-only.

    Class attributes: name; coefficients, the fields tau_f is linear in, in the order of the regressor's columns,
    and their symbols (column names); nonlinear, the fields that shape the basis functions, and their symbols;
    positive, the fields that must be > 0 (the others may take either sign: the physical levels are checked where
    a model becomes a robot's drives, drives.Drives.replaced); plain, the law is the drives' own without a model
    (viscous, coulomb), so that drives given it keep its damping and friction and no model (drives.py).  Every
    model has ``damping`` and ``friction`` (nv,), its viscous coefficient and Coulomb level (module docstring): a
    field or a property.
    """
    name: ClassVar[str] = ""
    plain: ClassVar[bool] = False
    coefficients: ClassVar[tuple] = ()
    symbols: ClassVar[tuple] = ()
    nonlinear: ClassVar[tuple] = ()
    nonlinear_symbols: ClassVar[tuple] = ()
    positive: ClassVar[tuple] = ()

    def __post_init__(self):
        n = None
        for field in fields(self):
            value = np.array(getattr(self, field.name), dtype=float)
            if value.ndim != 1 or (n is not None and len(value) != n):
                raise ValueError(f"{type(self).__name__}.{field.name}: expected an array of shape ({n or 'nv'},) "
                                 f"(one entry per coordinate of v), got shape {value.shape}")
            n = len(value)
            low = field.name in self.positive
            bad = ~((np.abs(value) <= MAX_DRIVE) & ((value > 0) if low else True))
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"{type(self).__name__}.{field.name}[{i}] = {float(value[i])!r}: must be a finite "
                                 f"number{' > 0' if low else ''} of magnitude at most {MAX_DRIVE:g}")
            value.flags.writeable = False
            object.__setattr__(self, field.name, value)

    @property
    def nv(self):
        return len(self.damping)

    def coefficient_values(self):
        """The linear coefficients c_i, in the order of ``coefficients``.  -> (k, nv)"""
        return np.array([getattr(self, name) for name in self.coefficients])

    def nonlinear_values(self):
        """The nonlinear parameters, in the order of ``nonlinear``.  -> (m, nv)"""
        return np.array([getattr(self, name) for name in self.nonlinear]).reshape(len(self.nonlinear), self.nv)

    @classmethod
    def from_values(cls, coefficients, nonlinear=()):
        """The model of linear coefficients (k, nv) and nonlinear parameters (m, nv), in the orders of
        ``coefficients`` and ``nonlinear``."""
        return cls(**dict(zip(cls.coefficients, coefficients)), **dict(zip(cls.nonlinear, nonlinear)))

    def torque(self, v):
        """tau_f(v) = sum_i c_i B_i(v), the sign smoothed (module docstring).  v: (..., nv)  ->  (..., nv)"""
        v = self._velocity(v)
        return np.einsum("...ki,ki->...i", self.basis(v, self.nonlinear_values(), smooth=True),
                         self.coefficient_values())

    def velocity_derivative(self, v):
        """d tau_f_i / d v_i of ``torque`` (the Jacobian d tau_f / dv is diagonal).  v: (..., nv)  ->  (..., nv)"""
        v = self._velocity(v)
        return np.einsum("...ki,ki->...i", self.basis_velocity_derivative(v, self.nonlinear_values()),
                         self.coefficient_values())

    def _velocity(self, v):
        v = np.asarray(v, dtype=float)
        if v.ndim == 0 or v.shape[-1] != self.nv:
            raise ValueError(f"v: expected shape (..., {self.nv}) for a {self.name} friction model of {self.nv} "
                             f"coordinates, got shape {v.shape}")
        return v

    @classmethod
    def basis(cls, v, nonlinear, smooth):
        """The basis functions B_i(v), one per linear coefficient, the sign smoothed or exact.

        v: (..., n); nonlinear: (m, n) the nonlinear parameters of the same coordinates  ->  (..., k, n)
        """
        raise NotImplementedError

    @classmethod
    def basis_velocity_derivative(cls, v, nonlinear):
        """d B_i / dv of the smoothed basis.  v: (..., n); nonlinear: (m, n)  ->  (..., k, n)"""
        raise NotImplementedError

    @classmethod
    def basis_nonlinear_derivatives(cls, v, nonlinear, smooth):
        """d B_i / d theta_l for each nonlinear parameter theta_l.  v: (..., n); nonlinear: (m, n)
        ->  (..., k, m, n)"""
        return np.zeros(np.shape(v)[:-1] + (len(cls.coefficients), len(cls.nonlinear), np.shape(v)[-1]))


@dataclass(frozen=True, eq=False)
class ViscousFriction(FrictionModel):
    """tau_f = F_v v (damping = F_v; friction = 0)."""
    damping: np.ndarray
    name: ClassVar[str] = "viscous"
    plain: ClassVar[bool] = True
    coefficients: ClassVar[tuple] = ("damping",)
    symbols: ClassVar[tuple] = ("Fv",)

    @property
    def friction(self):
        return np.zeros(self.nv)

    @classmethod
    def basis(cls, v, nonlinear=(), smooth=True):
        return v[..., None, :]

    @classmethod
    def basis_velocity_derivative(cls, v, nonlinear=()):
        return np.ones_like(v)[..., None, :]


@dataclass(frozen=True, eq=False)
class CoulombFriction(FrictionModel):
    """tau_f = F_v v + F_c s(v) (damping = F_v, friction = F_c): drives.Drives' law without a model."""
    damping: np.ndarray
    friction: np.ndarray
    name: ClassVar[str] = "coulomb"
    plain: ClassVar[bool] = True
    coefficients: ClassVar[tuple] = ("damping", "friction")
    symbols: ClassVar[tuple] = ("Fv", "Fc")

    @classmethod
    def basis(cls, v, nonlinear=(), smooth=True):
        return np.stack([v, sign(v, smooth)], axis=-2)

    @classmethod
    def basis_velocity_derivative(cls, v, nonlinear=()):
        return np.stack([np.ones_like(v), smooth_sign_slope(v)], axis=-2)


@dataclass(frozen=True, eq=False)
class OffsetFriction(FrictionModel):
    """tau_f = F_v v + F_c s(v) + F_o: asymmetric Coulomb friction on a moving joint (module docstring)."""
    damping: np.ndarray
    friction: np.ndarray
    offset: np.ndarray
    name: ClassVar[str] = "offset"
    coefficients: ClassVar[tuple] = ("damping", "friction", "offset")
    symbols: ClassVar[tuple] = ("Fv", "Fc", "Fo")

    @classmethod
    def basis(cls, v, nonlinear=(), smooth=True):
        return np.stack([v, sign(v, smooth), np.ones_like(v)], axis=-2)

    @classmethod
    def basis_velocity_derivative(cls, v, nonlinear=()):
        return np.stack([np.ones_like(v), smooth_sign_slope(v), np.zeros_like(v)], axis=-2)


@dataclass(frozen=True, eq=False)
class SigmoidFriction(FrictionModel):
    """tau_f = F_v v + phi1 (sigma(phi2 (v + phi3)) - sigma(phi2 phi3)) (Gaz et al. 2019 with F_v added; module
    docstring).  damping = F_v; friction = phi1 / 2, the mean of the two levels; phi2 > 0 (1 / (rad/s))."""
    damping: np.ndarray
    phi1: np.ndarray
    phi2: np.ndarray
    phi3: np.ndarray
    name: ClassVar[str] = "sigmoid"
    coefficients: ClassVar[tuple] = ("damping", "phi1")
    symbols: ClassVar[tuple] = ("Fv", "phi1")
    nonlinear: ClassVar[tuple] = ("phi2", "phi3")
    nonlinear_symbols: ClassVar[tuple] = ("phi2", "phi3")
    positive: ClassVar[tuple] = ("phi2",)

    @property
    def friction(self):
        return 0.5 * self.phi1

    @classmethod
    def basis(cls, v, nonlinear, smooth=True):
        phi2, phi3 = nonlinear
        return np.stack([v, logistic(phi2 * (v + phi3)) - logistic(phi2 * phi3)], axis=-2)

    @classmethod
    def basis_velocity_derivative(cls, v, nonlinear):
        phi2, phi3 = nonlinear
        s = logistic(phi2 * (v + phi3))
        return np.stack([np.ones_like(v), phi2 * s * (1.0 - s)], axis=-2)         # sigma' = sigma (1 - sigma)

    @classmethod
    def basis_nonlinear_derivatives(cls, v, nonlinear, smooth=True):
        phi2, phi3 = nonlinear
        s, s0 = logistic(phi2 * (v + phi3)), logistic(phi2 * phi3)
        ds, ds0 = s * (1.0 - s), s0 * (1.0 - s0)
        d = np.zeros(v.shape[:-1] + (2, 2, v.shape[-1]))
        d[..., 1, 0, :] = ds * (v + phi3) - ds0 * phi3                                  # d / d phi2
        d[..., 1, 1, :] = (ds - ds0) * phi2                                             # d / d phi3
        return d


@dataclass(frozen=True, eq=False)
class StribeckFriction(FrictionModel):
    """tau_f = F_v v + (F_c + (F_s - F_c) e^(-(v / v_s)^2)) s(v) (module docstring).  damping = F_v,
    friction = F_c (away from zero velocity), static = F_s (breakaway), stribeck_velocity = v_s > 0."""
    damping: np.ndarray
    friction: np.ndarray
    static: np.ndarray
    stribeck_velocity: np.ndarray
    name: ClassVar[str] = "stribeck"
    coefficients: ClassVar[tuple] = ("damping", "friction", "static")
    symbols: ClassVar[tuple] = ("Fv", "Fc", "Fs")
    nonlinear: ClassVar[tuple] = ("stribeck_velocity",)
    nonlinear_symbols: ClassVar[tuple] = ("vs",)
    positive: ClassVar[tuple] = ("stribeck_velocity",)

    @classmethod
    def basis(cls, v, nonlinear, smooth=True):
        e = np.exp(-(v / nonlinear[0]) ** 2)
        s = sign(v, smooth)
        return np.stack([v, s * (1.0 - e), s * e], axis=-2)     # F_c s (1 - e) + F_s s e = (F_c + (F_s - F_c) e) s

    @classmethod
    def basis_velocity_derivative(cls, v, nonlinear):
        v_s = nonlinear[0]
        e = np.exp(-(v / v_s) ** 2)
        de = -2.0 * v / v_s**2 * e
        s, ds = smooth_sign(v), smooth_sign_slope(v)
        return np.stack([np.ones_like(v), ds * (1.0 - e) - s * de, ds * e + s * de], axis=-2)

    @classmethod
    def basis_nonlinear_derivatives(cls, v, nonlinear, smooth=True):
        v_s = nonlinear[0]
        e = np.exp(-(v / v_s) ** 2)
        de = 2.0 * v**2 / v_s**3 * e                                                    # d e / d v_s
        s = sign(v, smooth)
        d = np.zeros(v.shape[:-1] + (3, 1, v.shape[-1]))
        d[..., 1, 0, :] = -s * de
        d[..., 2, 0, :] = s * de
        return d


# The coefficients that are >= 0 for a drive that only dissipates (and that drives.Drives checks as damping and
# friction): an identification's write-back raises a negative one, which noise can give a frictionless joint, to 0.
PHYSICAL = ("damping", "friction", "phi1", "static")

MODELS = {cls.name: cls for cls in (ViscousFriction, CoulombFriction, OffsetFriction, SigmoidFriction,
                                    StribeckFriction)}


def model_class(model):
    """The friction model class of a name ("viscous", ...), a class or a model object; None for None or "none"."""
    if model is None or (isinstance(model, str) and model == "none"):
        return None
    if isinstance(model, str):
        if model not in MODELS:
            raise ValueError(f"unknown friction model {model!r}: one of {', '.join(['none', *MODELS])}")
        return MODELS[model]
    cls = model if isinstance(model, type) else type(model)
    if not (isinstance(cls, type) and issubclass(cls, FrictionModel) and cls is not FrictionModel):
        raise ValueError(f"a friction model is a name ({', '.join(MODELS)}), a class or an object of "
                         f"robot_dynamics.friction, not {model!r}")
    return cls


def moving_coordinates(robot):
    """Coordinates of v that carry a drive: every joint coordinate, not the six of a floating base.  -> (n_f,)"""
    return np.arange(6 if robot.floating_base else 0, robot.nv)


def drive_column_names(robot, armature=True, model="coulomb"):
    """Names of drive_regressor's columns: "Ia_<coordinate>" for each armature, then "<symbol>_<coordinate>" for
    each linear coefficient of the model (its ``symbols``: Fv, Fc, Fo, phi1, Fs), coefficient by coefficient.
    -> list of p strings"""
    cls = model_class(model)
    names = [robot.coordinate_names[i] for i in moving_coordinates(robot)]
    columns = [f"Ia_{name}" for name in names] if armature else []
    for symbol in (cls.symbols if cls is not None else ()):
        columns += [f"{symbol}_{name}" for name in names]
    return columns


def drive_physical(robot, armature=True, model="coulomb"):
    """Which of drive_regressor's columns (drive_column_names) hold a coefficient that is >= 0 for a drive that
    only dissipates: the armatures and the PHYSICAL coefficients (an offset's sign is free).  -> (p,) bool"""
    cls = model_class(model)
    n = len(moving_coordinates(robot))
    kinds = ([True] if armature else []) + [name in PHYSICAL for name in (cls.coefficients if cls else ())]
    return np.repeat(np.array(kinds, dtype=bool), n)


def drive_parameters(robot, armature=True, model="coulomb"):
    """theta_d of the robot's drives in drive_regressor's column order (drive_column_names): the armatures of the
    moving coordinates, then each linear coefficient of ``model`` (a linear model's name or class) as the robot's
    drives give it -- its own model's field of that name when it has one (an offset model's offset), else the
    Pinocchio-named damping and friction, else zero.  -> (p,)"""
    cls = model_class(model)
    joints = moving_coordinates(robot)
    if cls is not None and cls.nonlinear:
        raise ValueError(f"drive_parameters: the {cls.name} model is nonlinear: its columns depend on parameters "
                         "that are not in theta_d (use viscous, coulomb or offset)")
    own = robot.model.drives.model
    parts = [robot.armature[joints]] if armature else []
    for name in (cls.coefficients if cls is not None else ()):
        value = getattr(own, name, None) if own is not None else None
        if value is None:
            value = getattr(robot.model.drives, name, None)
        parts.append(np.zeros(len(joints)) if value is None else np.asarray(value, dtype=float)[joints])
    return np.concatenate(parts) if parts else np.zeros(0)


def drive_regressor(robot, v, a=None, armature=True, model="coulomb", nonlinear=None, smooth=False, out=None):
    """Y_d with the drives' torque diag(armature) a + tau_f(v) = Y_d theta_d, theta_d = [armature of each moving
    coordinate; each linear coefficient of the model, coordinate by coordinate] (drive_column_names' order).

    v: (..., nv); a: (..., nv), needed with armature; armature: the columns diag(a) (the armature of joint i
    multiplies a_i: tau is linear in it); model: None, a name ("viscous", "coulomb", "offset": every parameter
    linear; "sigmoid", "stribeck" with ``nonlinear``), a model class, or a model object (its nonlinear parameters
    shape the columns); nonlinear: (m, nv) a nonlinear model's nonlinear parameters (``nonlinear`` order), when
    model is a name or a class; smooth: the sign as ``torque`` smooths it (True) or exact (False, identification;
    module docstring).  The rows of a floating base's six coordinates are zero.  -> (..., nv, p)

    Identification takes v and a measured.  Slotine-Li adaptation (tau = Y(q, v, v_r, a_r) pi_hat + Y_d theta_d,
    theta_d adapted by -Gamma Y_d^T s with s = v - v_r) takes a = a_r, for the armature as for the rigid body's
    inertia, and v = v_r with smooth=True: every model here is a non-decreasing function of v (for F_v, F_c >= 0,
    F_s >= F_c >= 0, phi1 >= 0), so the torque the model misses between v and v_r, tau_f(v) - tau_f(v_r), has
    the sign of s and only dissipates in the Lyapunov function's derivative; the reference is also smooth where
    the measured v is noisy, and an exact sign of a noisy v would chatter.
    """
    cls = model_class(model)
    n = robot.nv
    v = np.asarray(v, dtype=float)
    if v.ndim == 0 or v.shape[-1] != n:
        raise ValueError(f"v: expected shape (..., {n}), got shape {v.shape}")
    joints = moving_coordinates(robot)
    n_f = len(joints)
    k = len(cls.coefficients) if cls is not None else 0
    p = (n_f if armature else 0) + k * n_f
    shape = v.shape[:-1] + (n, p)
    if out is None:
        out = np.zeros(shape)
    else:
        if np.shape(out) != shape:
            raise ValueError(f"out: expected shape {shape}, got {np.shape(out)}")
        out[...] = 0.0
    i = np.arange(n_f)
    if armature:
        if a is None:
            raise ValueError("a is required for the armature columns (armature=True)")
        a = np.asarray(a, dtype=float)
        if a.shape != v.shape:
            raise ValueError(f"a: expected the shape of v, {v.shape}, got {a.shape}")
        out[..., joints, i] = a[..., joints]
    if cls is not None:
        B = cls.basis(v[..., joints], _nonlinear_of(cls, model, nonlinear, n)[:, joints], smooth)   # (..., k, n_f)
        start = n_f if armature else 0
        for c in range(k):
            out[..., joints, start + c * n_f + i] = B[..., c, :]
    return out


def _nonlinear_of(cls, model, nonlinear, nv):
    """The nonlinear parameters (m, nv) that shape a model's columns: the object's own, or ``nonlinear``."""
    if isinstance(model, FrictionModel):
        if nonlinear is not None:
            raise ValueError("nonlinear: a friction model object carries its own nonlinear parameters")
        if model.nv != nv:
            raise ValueError(f"the friction model has {model.nv} coordinates, the robot {nv}")
        return model.nonlinear_values()
    m = len(cls.nonlinear)
    if m and nonlinear is None:
        raise ValueError(f"the {cls.name} model is nonlinear in {', '.join(cls.nonlinear)}: give them "
                         f"(nonlinear=, shape ({m}, {nv})) or a {cls.__name__} object")
    if not m:
        if nonlinear is not None and np.size(nonlinear):
            raise ValueError(f"nonlinear: the {cls.name} model has no nonlinear parameters")
        return np.zeros((0, nv))
    values = np.array(nonlinear, dtype=float)
    if values.shape != (m, nv) or not np.all(np.isfinite(values)):
        raise ValueError(f"nonlinear: expected finite values of shape ({m}, {nv}) ({', '.join(cls.nonlinear)} per "
                         f"coordinate), got shape {values.shape}")
    return values
