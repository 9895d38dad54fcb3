"""The workspace of a Robot: one record per body holding the fields every algorithm module declares in its WORK
list -- what that module's kernels keep per body (Pinocchio's Data, owned per algorithm).  One record array
rather than one per module, so that a kernel takes a single workspace argument (each array argument costs
~50 ns to pass from Python).  A field name belongs to one module only."""
import numpy as np

from . import dynamics_derivatives, kinematics, matrices, newton_euler, regressor

MODULES = (kinematics, matrices, regressor, newton_euler, dynamics_derivatives)


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
