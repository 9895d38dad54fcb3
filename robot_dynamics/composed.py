"""Quantities a Robot composes in Python from its compiled ones: external wrenches as joint torques, the
task-space dynamics of a frame, Ploen's operators as (6 nb)-square matrices, the parameter derivatives and the
linearized dynamics.  Each function takes the Robot first; robot.py's methods of the same names document them.
"""
import numpy as np

from .calls.checks import checked_out, finite, refuse_shared
from .results import GlobalFactorization, ParameterDerivatives, TaskSpaceDynamics

_PLOEN_FIELDS = ("S", "G", "Gamma", "J", "ad_Gamma", "C_bar")


def external_torques(robot, q, f_ext, reference):
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
        total = total + (w[..., None, :] @ robot.frame_jacobian(q, frame, reference))[..., 0, :]     # w^T J
    return total


def task_space_dynamics(robot, frames, q, v, frame, reference, position_only, damping, out):
    """Robot.task_space_dynamics (frames: the robot's frames.FrameTable): M^-1 J^T by one solve per row
    (solve_mass_matrix: O(n), no M formed), eta from the unactuated acceleration a_0 = forward_dynamics(q, v, 0):
    eta = -Lambda (J a_0 + Jdot v)."""
    if out is not None and type(out) is not TaskSpaceDynamics:
        raise ValueError(f"out must be a TaskSpaceDynamics, got {type(out).__name__}")
    mu = float(damping) if isinstance(damping, (int, float, np.floating, np.integer)) else np.nan
    if not (np.isfinite(mu) and mu >= 0):
        raise ValueError(f"damping must be a finite non-negative number, got {damping!r}")
    k = 3 if position_only else 6
    J = robot.frame_jacobian(q, frame, reference)[..., :k, :]
    batch, nv = J.shape[:-2], robot.nv
    if frames.array(frame, reference)[0] < 0:
        raise ValueError(f"frame {frame!r} is fixed to the world: it has no task-space dynamics")
    MJt = robot.solve_mass_matrix(q, np.swapaxes(J, -1, -2))                 # M^-1 J^T (..., nv, k)
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
    a0 = robot.forward_dynamics(q, v, np.zeros(batch + (nv,)))
    xddot0 = (J @ a0[..., None])[..., 0] + robot.frame_acceleration_bias(q, v, frame, reference)[..., :k]
    eta = -(Lam @ xddot0[..., None])[..., 0]                                # Lambda (J M^-1 h - Jdot v)
    J_bar = MJt @ Lam
    N = np.eye(nv) - J_bar @ J
    if out is None:
        return TaskSpaceDynamics(Lam, eta, J, J_bar, N)
    for name, x in (("Lambda", Lam), ("eta", eta), ("J", J), ("J_bar", J_bar), ("N", N)):
        checked_out(getattr(out, name), x.shape, "out." + name)[...] = x
    return out


def global_factorization(robot, calls, q, v, out):
    """Robot.global_factorization: the row's blocked arrays (nb, 6, nb, 6) seen as (6 nb, 6 nb) matrices."""
    nb, nv = robot.nbodies, robot.nv
    arrays = None
    if out is not None:
        if type(out) is not GlobalFactorization:
            raise ValueError(f"out must be a GlobalFactorization, got {type(out).__name__}")
        batch = np.shape(q)[:-1]
        arrays = []
        for name in _PLOEN_FIELDS:      # each (..., 6 nb, .) array seen by body blocks: splitting an axis is a view
            x = checked_out(getattr(out, name), batch + ((6 * nb, nv) if name == "S" else (6 * nb, 6 * nb)),
                            "out." + name)
            arrays.append(x.reshape(batch + ((nb, 6, nv) if name == "S" else (nb, 6, nb, 6))))
    result = calls["_global_factorization"](q, v, None if arrays is None else tuple(arrays))
    if out is not None:
        return out
    batch = result[0].shape[:-3]
    return GlobalFactorization(result[0].reshape(batch + (6 * nb, nv)),
                               *(x.reshape(batch + (6 * nb, 6 * nb)) for x in result[1:]))


def parameter_derivatives(robot, weightless, engine, q, v, out):
    """Robot.parameter_derivatives: 2 nv + 1 states of one batched regressor call each (weightless: the robot
    without gravity)."""
    if out is not None and type(out) is not ParameterDerivatives:
        raise ValueError(f"out must be a ParameterDerivatives, got {type(out).__name__}")
    given = (q, v)
    q, v, batch = engine.batch(q=q, v=v)
    B, nv, ny = q.shape[0], robot.nv, 10 * robot.nbodies
    if out is not None:
        for name, shape in (("dM_dpi", (nv, nv, ny)), ("dC_dpi", (nv, nv, ny)), ("dg_dpi", (nv, ny))):
            checked_out(getattr(out, name), batch + shape, "out." + name)
        refuse_shared(("q", "v"), given, (out.dM_dpi, out.dC_dpi, out.dg_dpi),
                      ("out.dM_dpi", "out.dC_dpi", "out.dg_dpi"))
    E, Z = np.eye(nv), np.zeros((nv, nv))
    Y0 = weightless.regressor(np.repeat(q, 2 * nv, axis=0), np.repeat(v, 2 * nv, axis=0),
                              np.tile(np.vstack([Z, E]), (B, 1)), np.tile(np.vstack([E, Z]), (B, 1)))
    Y0 = Y0.reshape(B, 2, nv, nv, ny).transpose(1, 0, 3, 2, 4)          # [kind, state, i, j, p]
    g = robot.regressor(q, v, np.zeros((B, nv)), np.zeros((B, nv)))
    if out is None:
        return ParameterDerivatives(Y0[0].reshape(batch + (nv, nv, ny)), Y0[1].reshape(batch + (nv, nv, ny)),
                                    g.reshape(batch + (nv, ny)))
    out.dM_dpi[...] = Y0[0].reshape(batch + (nv, nv, ny))
    out.dC_dpi[...] = Y0[1].reshape(batch + (nv, nv, ny))
    out.dg_dpi[...] = g.reshape(batch + (nv, ny))
    return out


def linearize(robot, q, v, tau, dt):
    """Robot.linearize: (A, B) from forward_dynamics_derivatives (and, in discrete time, integrate_jacobians)."""
    da_dq, da_dv, M_inv = robot.forward_dynamics_derivatives(q, v, tau)
    nv, batch = robot.nv, da_dq.shape[:-2]
    A, B, E = np.zeros(batch + (2 * nv, 2 * nv)), np.zeros(batch + (2 * nv, nv)), np.eye(nv)
    if dt is None:
        A[..., :nv, nv:] = E
        A[..., nv:, :nv], A[..., nv:, nv:], B[..., nv:, :] = da_dq, da_dv, M_inv
        return A, B
    dt = float(dt)
    v_next = np.asarray(v, dtype=float) + dt * robot.forward_dynamics(q, v, tau)
    w = (dt * v_next).reshape(-1, nv)
    Jq, Jw = (np.array(x).reshape(batch + (nv, nv)) for x in zip(*map(robot.integrate_jacobians, w)))
    A[..., nv:, :nv], A[..., nv:, nv:] = dt * da_dq, E + dt * da_dv
    A[..., :nv, :nv] = Jq + dt * Jw @ A[..., nv:, :nv]
    A[..., :nv, nv:] = dt * Jw @ A[..., nv:, nv:]
    B[..., nv:, :] = dt * M_inv
    B[..., :nv, :] = dt * Jw @ B[..., nv:, :]
    return finite(A, "linearize", "dt"), finite(B, "linearize", "dt")
