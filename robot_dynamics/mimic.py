"""The entries of a robot whose joints are coupled by mimics (load_urdf(mimic=True)).

The articulated-body recursions (ABA, the innovations factorization) do not apply to coupled joints: forward
dynamics, M^-1 and M^-1 x go through a Cholesky factor of M, and the quantities built on those recursions say why
they are not available.  CoupledCalls is the strategy a Robot with such joints uses in place of methods.Calls: the
same entries by the same names, these overridden.
"""
import types
import weakref

import numpy as np

from .algorithms.kinematics import ERR_SINGULAR
from .calls.checks import checked_out, finite, refuse_shared
from .calls.kernels import ROWS
from .calls.methods import Calls

_empty = np.empty


def _no_innovations(*args, **kwargs):
    raise ValueError("the innovations factorization (and the diagonalized dynamics) does not cover joints "
                     "coupled by mimics (load with mimic=False; inverse_mass_matrix and solve_mass_matrix work "
                     "on such robots, through a Cholesky factor of M)")


def _no_derivatives(*args, **kwargs):
    # state_derivatives' directions turn one body's subtree each; a mimic coordinate turns several (it gave wrong
    # numbers, 0.1-0.7 relative against central differences, before it was refused)
    raise ValueError("the dynamics derivatives do not cover joints coupled by mimics (load with mimic=False: "
                     "the mimic joints become independent coordinates, and the chain rule through "
                     "q_full = G q_reduced gives the reduced derivatives)")


class CoupledCalls(Calls):
    """methods.Calls with the articulated-body rows replaced (see the module's docstring): their entries are the
    methods below (or refusals), bound to a weak proxy of the Calls, which hold them (no reference cycle)."""

    REFUSED = {"_innovations": _no_innovations, "_diagonalized": _no_innovations,
               "from_diagonalized": _no_innovations, "inverse_dynamics_derivatives": _no_derivatives,
               "forward_dynamics_derivatives": _no_derivatives, "_state_derivatives": _no_derivatives}
    REPLACED = ("inverse_mass_matrix", "_solve_mass_matrix", "forward_dynamics")

    def __missing__(self, name):
        if name in self.REFUSED:
            value = self[name] = self.REFUSED[name]
        elif name in self.REPLACED:
            value = self[name] = types.MethodType(getattr(type(self), name.lstrip("_")), weakref.proxy(self))
        else:
            value = super().__missing__(name)
        return value

    def inverse_mass_matrix(self, q, out=None):
        """M^-1 from a Cholesky factor of M."""
        from scipy.linalg import cho_factor, cho_solve      # here: importing scipy.linalg takes ~0.25 s
        M = self["mass_matrix"](q, None)
        out = _empty(M.shape) if out is None else checked_out(out, M.shape)
        refuse_shared(("q",), (q,), (out,), ("out",))
        E = np.eye(self.engine.nv)
        try:
            M_inv = np.array([cho_solve(cho_factor(m), E) for m in M.reshape(-1, *E.shape)])
        except np.linalg.LinAlgError:
            raise self.engine.error(ERR_SINGULAR, ROWS["inverse_mass_matrix"]) from None
        out[...] = finite(M_inv, "inverse_mass_matrix", "q").reshape(M.shape)
        return out

    def solve_mass_matrix(self, q, x, out=None):
        """M^-1 x from a Cholesky factor of M."""
        from scipy.linalg import cho_factor, cho_solve
        nv = self.engine.nv
        M = self["mass_matrix"](q, None)
        batch = M.shape[:-2]
        x = np.asarray(x, dtype=float)
        if not (x.shape == batch + (nv,) or (x.ndim == len(batch) + 2 and x.shape[:-1] == batch + (nv,))):
            raise ValueError(f"x must have shape {batch + (nv,)} or (..., {nv}, k) for q of batch shape {batch}, "
                             f"got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("x contains non-finite values (NaN or inf)")
        out = _empty(x.shape) if out is None else checked_out(out, x.shape)
        refuse_shared(("q", "x"), (q, x), (out,), ("out",))
        Ms = M.reshape(-1, nv, nv)
        xs = x.reshape((len(Ms), nv, -1))
        try:
            solved = np.array([cho_solve(cho_factor(m), b) for m, b in zip(Ms, xs)])
        except np.linalg.LinAlgError:
            raise self.engine.error(ERR_SINGULAR, ROWS["_solve_mass_matrix"]) from None
        out[...] = finite(solved, "solve_mass_matrix", "x").reshape(x.shape)
        return out

    def forward_dynamics(self, q, v, tau, out=None):
        """a = M^-1 (tau - C v - g) through a Cholesky factor of M."""
        from scipy.linalg import cho_factor, cho_solve
        e = self.engine
        given = (q, v, tau)
        q, v, tau, shape = e.batch(q=q, v=v, tau=tau)
        out = _empty(shape + e.v_shape) if out is None else checked_out(out, shape + e.v_shape)
        refuse_shared(("q", "v", "tau"), given, (out,), ("out",))
        d = self["_dynamics"](q, v, None)
        bias = np.einsum("...ij,...j->...i", d.C, v) + d.g
        try:
            a = np.array([cho_solve(cho_factor(M), t - b) for M, t, b in zip(d.M, tau, bias)])
        except np.linalg.LinAlgError:
            raise e.error(ERR_SINGULAR, ROWS["forward_dynamics"]) from None
        out[...] = finite(a, "forward_dynamics", "tau").reshape(out.shape)
        return out
