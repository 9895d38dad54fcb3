"""The workspace of a Robot: one record per body holding the fields every algorithm module declares in its WORK
list -- what that module's kernels keep per body (Pinocchio's Data, owned per algorithm).  One record array
rather than one per module, so that a kernel takes a single workspace argument (each array argument costs
~50 ns to pass from Python).  A field name belongs to one module only.

Arrays sized by the robot rather than by the body (ARRAYS) are allocated per Robot from the model's sizes, when a
kernel whose registry row names them first runs, and handed to it after the workspace (a batch gives each thread
its own)."""
import numpy as np

from . import (centroidal, christoffel, contacts, diagonalized, dynamics_derivatives, frames, innovations, kinematics,
               matrices, momentum, momentum_observer, newton_euler, regressor, state_derivatives, time_derivatives)

MODULES = (kinematics, matrices, regressor, momentum, momentum_observer, newton_euler, dynamics_derivatives,
           time_derivatives, state_derivatives, innovations, diagonalized, christoffel, frames, centroidal, contacts)


def _union(modules):
    fields, owner = [], {}
    for module in modules:
        for field in module.WORK:
            if field[0] in owner:
                raise TypeError(f"workspace field {field[0]!r} of {module.__name__} is already {owner[field[0]]}'s")
            owner[field[0]] = module.__name__
            fields.append(field)
    return np.dtype(fields, align=True)


WORK = _union(MODULES)


def workspace(nbodies):
    """A zeroed workspace for a robot of nbodies bodies: (nbodies,) records of dtype WORK."""
    return np.zeros(nbodies, dtype=WORK)


def _coordinate_parents(model):
    """lam (nv,): the coordinate before each on its path to the root -- the previous one of a multi-DoF joint, else
    the last of the parent body's (Featherstone's lambda for coordinates); -1 at the root."""
    lam = np.full(model.nv, -1, dtype=np.int64)
    last = {}
    for k, b in enumerate(model.bodies):
        for c in range(b["nvj"]):
            lam[b["iv"] + c] = b["iv"] + c - 1 if c else last.get(b["parent"], -1)
        last[k] = b["iv"] + b["nvj"] - 1
    return lam


CONTACT_ROWS = 12                       # the contact rows CW and CL first have room for (four point contacts)
ARRAYS = {                              # name -> the array of a model, for the kernels that take it
    "lam": _coordinate_parents,                                   # (nv,) int64, read only
    "H": lambda model: np.zeros((model.nv, model.nv)),            # (nv, nv): room for a factor of M
    "X": lambda model: np.zeros((model.nv, 3 * model.nv)),        # (nv, 3 nv): right-hand sides, solved at once
    "BV": lambda model: np.zeros((model.nbodies, model.nv, 6)),   # (nb, nv, 6): a 6-vector per body and coordinate
    # contacts.py: (nb, 6, C) unit wrenches W_j and (C, C + EXTRA) the Delassus matrix and its right-hand sides, for
    # up to C contact rows (Robot.constrained_dynamics makes them larger for a larger contact set)
    "CW": lambda model: np.zeros((model.nbodies, 6, CONTACT_ROWS)),
    "CL": lambda model: np.zeros((CONTACT_ROWS, CONTACT_ROWS + contacts.EXTRA)),
}
# An array of each kind's type (dtype, dimensions) with one element per axis: Robot resolves its kernels on these
# and allocates the arrays themselves only when a kernel that takes them first runs.
EXAMPLES = {"lam": np.zeros(1, dtype=np.int64), "H": np.zeros((1, 1)), "X": np.zeros((1, 1)), "BV": np.zeros((1, 1, 1)),
            "CW": np.zeros((1, 1, 1)), "CL": np.zeros((1, 1))}
