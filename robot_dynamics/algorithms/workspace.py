"""The workspace of a Robot: one record per body holding the fields every algorithm module declares in its WORK
list -- what that module's kernels keep per body (Pinocchio's Data, owned per algorithm).  One record array
rather than one per module, so that a kernel takes a single workspace argument (each array argument costs
~50 ns to pass from Python).  A field name belongs to one module only.

Arrays sized by the robot rather than by the body (ARRAYS) are allocated per Robot from the model's sizes and
handed to the kernels whose registry row names them, after the workspace (a batch gives each thread its own)."""
import numpy as np

from . import (christoffel, dynamics_derivatives, kinematics, matrices, newton_euler, regressor, state_derivatives,
               time_derivatives)

MODULES = (kinematics, matrices, regressor, newton_euler, dynamics_derivatives, time_derivatives, state_derivatives,
           christoffel)


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


ARRAYS = {                              # name -> the array of a model, for the kernels that take it
    "lam": _coordinate_parents,                                   # (nv,) int64, read only
    "H": lambda model: np.zeros((model.nv, model.nv)),            # (nv, nv): room for a factor of M
    "X": lambda model: np.zeros((model.nv, 3 * model.nv)),        # (nv, 3 nv): right-hand sides, solved at once
}
