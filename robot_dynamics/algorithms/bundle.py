"""Everything `Robot.dynamics` returns from one outward pass (paper 002, section VI): M, C, g, the CoM and J_com
(matrices.py) and, with references, the Slotine-Li regressor (regressor.py), which reuses the pass's rates.  M
includes the drives' armature (matrices.mass_matrix_terms); Y pi does not (regressor.py)."""
from numba import njit

from .matrices import (com_jacobian_terms, com_terms, coriolis_matrix_terms, gravity_terms, mass_matrix_terms,
                       prepared)
from .regressor import regressor_after_pass


@njit(cache=True, inline="always")
def _all_matrices(bodies, work, gravity, inputs, q, v, M, C, g, com, J_com):
    status = prepared(bodies, work, inputs, q, v, True, True)
    if status == 0:
        M[:, :] = 0.0
        C[:, :] = 0.0
        mass_matrix_terms(bodies, work, M)
        coriolis_matrix_terms(bodies, work, C)
        gravity_terms(bodies, work, gravity, g)
        com_terms(bodies, work, com)
        com_jacobian_terms(bodies, work, J_com)
    return status


@njit(cache=True)
def dynamics(bodies, work, gravity, q, v, M, C, g, com, J_com):
    """M, C, g, com and J_com at one state."""
    return _all_matrices(bodies, work, gravity, (q, v), q, v, M, C, g, com, J_com)


@njit(cache=True)
def dynamics_with_regressor(bodies, work, gravity, q, v, v_ref, a_ref, M, C, g, com, J_com, Y):
    """M, C, g, com, J_com and Y(q, v, v_ref, a_ref) at one state."""
    status = _all_matrices(bodies, work, gravity, (q, v, v_ref, a_ref), q, v, M, C, g, com, J_com)
    if status == 0:
        regressor_after_pass(bodies, work, gravity, v_ref, a_ref, Y)
    return status
