"""The compiled entry points behind Robot's methods: each validates its inputs (finite, unit-able quaternions),
runs only the passes its result needs, and returns 0 or an error code (kinematics.ERR_*).

    dynamics     outward pass with rates -> composites -> M, C, g, com, J_com -> (references) -> Y
    mass_matrix  outward pass (poses only) -> composite inertias -> M
    ...
Outputs are written in place into arrays the caller allocated (zeroed here).  Robot resolves every entry point
for arrays of any strides (numba layout 'A'), so that a caller's views pass without a copy and all entry points
share one compiled copy of each pass.  `dynamics_batch` runs many states in parallel, one workspace per thread.
"""
from numba import njit, prange

from .kinematics import ERR_AREF, ERR_Q, ERR_V, ERR_VREF, all_finite, outward_pass, scratch, workspace
from .matrices import accumulate, composites
from .newton_euler import aba, rnea
from .regressor import reference_recursion, regressor_blocks


@njit(cache=True)
def _zero(x):
    x[:] = 0.0


@njit(cache=True)
def _check(q, v, v_ref, a_ref):
    if not all_finite(q):
        return ERR_Q
    if not all_finite(v):
        return ERR_V
    if not all_finite(v_ref):
        return ERR_VREF
    if not all_finite(a_ref):
        return ERR_AREF
    return 0


@njit(cache=True)
def _matrices(bodies, work, gravity, q, v, M, C, g, com, J_com):
    """Those of M, C (from q and v), g, com and J_com that are not empty, at one state.  The wanted set is read
    from the sizes at run time, not passed as constants, so that numba compiles one _matrices for all callers."""
    want_m, want_c = M.size > 0, C.size > 0
    want_g = g.size > 0 or com.size > 0 or J_com.size > 0
    if not all_finite(q):
        return ERR_Q
    if want_c and not all_finite(v):
        return ERR_V
    status = outward_pass(bodies, work, q, v, want_c)
    if status != 0:
        return status
    composites(bodies, work, want_m or want_c, want_c)
    _zero(M)
    _zero(C)
    _zero(g)
    _zero(com)
    _zero(J_com)
    accumulate(bodies, work, gravity, want_m, want_c, want_g, M, C, g, com, J_com)
    return 0


@njit(cache=True)
def dynamics(bodies, work, gravity, q, v, v_ref, a_ref, want_y, M, C, g, com, J_com, Y):
    """M, C, g, com, J_com and (want_y) Y at one state, from one outward pass (paper 002, section VI)."""
    status = _check(q, v, v_ref, a_ref)
    if status == 0:
        status = _matrices(bodies, work, gravity, q, v, M, C, g, com, J_com)
    if status == 0 and want_y:                    # the outward pass above left the rates the regressor needs
        _regressor_after_pass(bodies, work, gravity, v_ref, a_ref, Y)
    return status


# One entry point per method, with as few arguments as it needs (each array costs ~30-60 ns to pass from
# Python).
@njit(cache=True)
def _nothing(work):
    """Empty views standing for what is not wanted (no allocation): a gravity (contiguous), and 1-D and 2-D
    outputs of layout 'A' -- the types Robot passes -- so that every entry point calls _matrices with the same
    argument types and numba compiles it (and all it calls) once."""
    sc = scratch(work)
    return sc.s3[:0], sc.s33[:0, 0], sc.s33[:0, :0]


@njit(cache=True)
def mass_matrix(bodies, work, q, M):
    no_gravity, none1, none2 = _nothing(work)
    return _matrices(bodies, work, no_gravity, q, q, M, none2, none1, none1, none2)


@njit(cache=True)
def coriolis_matrix(bodies, work, q, v, C):
    no_gravity, none1, none2 = _nothing(work)
    return _matrices(bodies, work, no_gravity, q, v, none2, C, none1, none1, none2)


@njit(cache=True)
def gravity_vector(bodies, work, gravity, q, g):
    """g(q) alone (eq. (6c)): poses, composite masses and first moments only."""
    none1, none2 = _nothing(work)[1:]
    return _matrices(bodies, work, gravity, q, q, none2, none2, g, none1, none2)


@njit(cache=True)
def com_position(bodies, work, q, com):
    """The centre of mass of the moving bodies, from the composite first moments."""
    no_gravity, none1, none2 = _nothing(work)
    return _matrices(bodies, work, no_gravity, q, q, none2, none2, none1, com, none2)


@njit(cache=True)
def com_jacobian(bodies, work, q, J_com):
    """J_com alone (eq. (7))."""
    no_gravity, none1, none2 = _nothing(work)
    return _matrices(bodies, work, no_gravity, q, q, none2, none2, none1, none1, J_com)


@njit(cache=True)
def body_placements(bodies, work, q, T):
    """T[k] <- T_{0,k}, the homogeneous pose of body k in the world, for every body (one outward pass)."""
    if not all_finite(q):
        return ERR_Q
    status = outward_pass(bodies, work, q, q, False)
    if status != 0:
        return status
    for k in range(bodies.shape[0]):
        w = work[k]
        for r in range(3):
            for c in range(3):
                T[k, r, c] = w.R0[r, c]
            T[k, r, 3] = w.p0[r]
            T[k, 3, r] = 0.0
        T[k, 3, 3] = 1.0
    return 0


@njit(cache=True)
def regressor(bodies, work, gravity, q, v, v_ref, a_ref, Y):
    """The Slotine-Li Y(q, v, v_ref, a_ref) alone (paper 002, eq. (16))."""
    status = _check(q, v, v_ref, a_ref)
    if status != 0:
        return status
    status = outward_pass(bodies, work, q, v, True)
    if status == 0:
        _regressor_after_pass(bodies, work, gravity, v_ref, a_ref, Y)
    return status


@njit(cache=True)
def _regressor_after_pass(bodies, work, gravity, v_ref, a_ref, Y):
    """Y (eq. (16)) from the poses, axes and rates an outward pass with rates left in work."""
    _zero(Y)
    reference_recursion(bodies, work, gravity, v_ref, a_ref)
    regressor_blocks(bodies, work, Y)


@njit(cache=True)
def inverse_dynamics(bodies, work, gravity, q, v, a, tau):
    """tau = M a + C v + g by Newton-Euler; a non-finite a is reported as ERR_AREF."""
    status = _check(q, v, v, a)
    return status if status != 0 else rnea(bodies, work, gravity, q, v, a, tau)


@njit(cache=True)
def forward_dynamics(bodies, work, gravity, q, v, tau, qdd):
    """qdd = M^-1 (tau - C v - g) by the articulated-body algorithm; a non-finite tau is reported as ERR_AREF."""
    status = _check(q, v, v, tau)
    return status if status != 0 else aba(bodies, work, gravity, q, v, tau, qdd)


@njit(cache=True, parallel=True)
def dynamics_batch(bodies, gravity, q, v, v_ref, a_ref, want_y, M, C, g, com, J_com, Y, status):
    """dynamics() for states q[i], v[i], ... in parallel; status[i] receives each state's code."""
    n = q.shape[0]
    chunks = min(n, 64)
    for c in prange(chunks):
        work = workspace(bodies.shape[0])
        for i in range(c * n // chunks, (c + 1) * n // chunks):
            status[i] = dynamics(bodies, work, gravity, q[i], v[i], v_ref[i], a_ref[i], want_y, M[i], C[i], g[i],
                                 com[i], J_com[i], Y[i if want_y else 0])
