"""Drives: what lies between a joint's motor and its link, per coordinate of v, with Pinocchio's names.

    armature   (nv,)  reflected rotor inertia, I_m N^2 for a motor of inertia I_m behind a reduction N (kg m^2, or
                      kg for a prismatic joint): M(q) + diag(armature) wherever M is, armature * a in the inverse
                      dynamics (Pinocchio 4.1's model.armature, MuJoCo's joint armature, Drake's rotor inertia)
    damping    (nv,)  viscous friction coefficient, N m s/rad (Pinocchio's model.damping, MuJoCo's damping)
    friction   (nv,)  Coulomb friction torque, N m (Pinocchio's model.friction, MuJoCo's frictionloss)

The friction torque, without a friction model (model=None), is viscous plus Coulomb,
    tau_f(v) = damping v + friction tanh(v / COULOMB_VELOCITY),
the sign of v smoothed over COULOMB_VELOCITY (0.01 rad/s, m/s) so that a controller or a simulator never chatters
at a velocity reversal (identification fits the sign itself: friction.py says why).  With a friction model
(friction.py: offset, sigmoid, stribeck) tau_f is the model's, and damping and friction are the model's viscous
coefficient and Coulomb level (Pinocchio's names; friction.py says what they are for each model): a model and the
damping, friction beside it never disagree.  A viscous or Coulomb model given to the drives is their own law: it
becomes damping and friction, and no model.

A free joint's six rows are zero unless given.  Armature is constant: it adds to M and not to C, Mdot or the
Christoffel symbols.  The joint torque a drive needs is the rigid body's plus the friction torque,
    tau = (M(q) + diag(armature)) a + C(q, v) v + g(q) + tau_f(v),
tau_f the friction model's (robot.friction_torque).  A mimic joint has no coordinate of its own: its drive is its
master's (a transmission that couples several joints is refused by name where it is read).
"""
from dataclasses import dataclass

import numpy as np

# The largest armature, damping or friction entry a model takes: as model.MAX_PARAMETER bounds the inertias.
MAX_DRIVE = 1e60
FIELDS = ("armature", "damping", "friction")
COULOMB_VELOCITY = 0.01       # rad/s (m/s): the width of the smoothed Coulomb sign (module docstring)


def smooth_sign(v):
    """tanh(v / COULOMB_VELOCITY): the sign of v, smoothed (module docstring)."""
    return np.tanh(v / COULOMB_VELOCITY)


def smooth_sign_slope(v):
    """d smooth_sign / dv = (1 - tanh(v / COULOMB_VELOCITY)^2) / COULOMB_VELOCITY."""
    return (1.0 - np.tanh(v / COULOMB_VELOCITY) ** 2) / COULOMB_VELOCITY


@dataclass(frozen=True, eq=False)
class Drives:
    """The drives of a robot's nv coordinates (module docstring); arrays are read-only."""
    armature: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    model: object = None          # a friction model (friction.py); None: viscous + Coulomb of damping, friction

    def torque(self, v):
        """tau_f(v) (module docstring, or the friction model's): v (..., nv) -> (..., nv)."""
        if self.model is not None:
            return self.model.torque(v)
        return self.damping * v + self.friction * smooth_sign(v)

    def slope(self, v):
        """d tau_f_i / d v_i (..., nv), the diagonal of d tau_f / dv (each drive's friction depends on its own
        velocity alone): the model's velocity_derivative, else one central difference of its torque."""
        if self.model is None:
            return self.damping + self.friction * smooth_sign_slope(v)
        derivative = getattr(self.model, "velocity_derivative", None)
        if derivative is not None:
            return derivative(v)
        step = 1e-6 * np.maximum(1.0, np.abs(v))
        return (self.model.torque(v + step) - self.model.torque(v - step)) / (2.0 * step)

    @property
    def frictionless(self):
        """True when tau_f is zero: no damping, no Coulomb friction and no friction model (armature aside)."""
        return self.model is None and not (self.damping.any() or self.friction.any())

    @property
    def rigid(self):
        """True when every entry is zero and no friction model is set: the rigid-body robot."""
        return self.frictionless and not self.armature.any()

    @classmethod
    def zero(cls, nv):
        return cls(*(_frozen(np.zeros(nv)) for _ in FIELDS))

    def replaced(self, names, model=None, joints_from=0, **values):
        """Drives with some of armature, damping, friction replaced: each (nv,) finite, >= 0 and at most MAX_DRIVE,
        else a ValueError naming it and the coordinate (names: the coordinates' names, for that message).  A
        number is every joint coordinate's, from index joints_from on (6 with a floating base: its six rows stay
        zero).

        model: a friction model object (friction.py) of nv coordinates, whose damping and friction become the
        drives' (then damping and friction must not be given; any other object with torque(v) leaves them as they
        are); None keeps the present model.  A viscous or
        Coulomb model is the drives' own law: the drives keep its damping and friction and no model, so that
        every file that holds damping and friction (URDF <dynamics>, drive_files) holds them.  Drives with a model
        take damping and friction only through a new model (friction.CoulombFriction(damping, friction) returns
        them to viscous + Coulomb)."""
        nv = len(self.armature)
        given = [name for name in ("damping", "friction") if values.get(name) is not None]
        if model is not None:
            if given:
                raise ValueError(f"{given[0]}: give it through the friction model ({type(model).__name__}), not "
                                 "beside it")
            if not callable(getattr(model, "torque", None)):
                raise ValueError(f"model: a friction model (robot_dynamics.friction; anything with torque(v)), got "
                                 f"{model!r}")
            if hasattr(model, "damping"):                         # friction.py's: damping and friction its own
                if len(model.damping) != nv:
                    raise ValueError(f"model: a friction model of {nv} coordinates, got {len(model.damping)}")
                values = {**values, "damping": model.damping, "friction": model.friction}
            own = getattr(model, "plain", False)                  # viscous or Coulomb: damping, friction alone
        elif given and self.model is not None:
            raise ValueError(f"{given[0]}: these drives' friction model ({type(self.model).__name__}) holds damping "
                             f"and friction; give a new model (friction.CoulombFriction(damping, friction) for "
                             f"viscous + Coulomb alone)")
        fields = {name: getattr(self, name) for name in FIELDS}
        for name, value in values.items():
            if value is None:
                continue
            array = np.array(value, dtype=float)
            if array.ndim == 0:
                array = np.where(np.arange(nv) >= joints_from, array, 0.0)
            if array.shape != (nv,):
                raise ValueError(f"{name}: expected a number or an array of shape ({nv},) (one per coordinate of "
                                 f"v), got shape {array.shape}")
            bad = ~((array >= 0.0) & (array <= MAX_DRIVE))
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"{name}[{i}] (coordinate '{names[i]}') = {float(array[i])!r}: a drive's {name} "
                                 f"must be a finite number between 0 and {MAX_DRIVE:g}")
            fields[name] = _frozen(array)
        if model is None:
            return Drives(**fields, model=self.model)
        return Drives(**fields, model=None if own else model)


def _frozen(array):
    array = np.array(array, dtype=float)
    array.flags.writeable = False
    return array
