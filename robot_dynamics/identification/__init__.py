"""Identification of a robot's inertial parameters (and its drives' armature and friction) from its own logs.

tau = Y(q, v, v, a) pi is linear in pi (paper 002, eq. (16) with v_r = v, a_r = a), so logs of (q, v, a, tau) give
pi by least squares: on the base parameters (base.py, least_squares.py), or physically consistent on the full pi
(consistent.py), from in-memory arrays or chunk by chunk with Dask (scale_out.py); nonlinear friction models by
variable projection (friction_fit.py) and the choice between friction models by held-out RMS (comparison.py);
excitation trajectories that make the stacked regressor well conditioned (excitation.py); a payload on a robot
whose own model is trusted (payload.py); logs in (npz, CSV, ROS 2 bags) and parameters out (logs.py); the command
line (command.py).

Modules load when one of their names is first used, so `import robot_dynamics` does not import scipy.optimize,
Dask or rosbags.
"""
import importlib

_WHERE = {
    "NormalEquations": "least_squares", "normal_equations": "least_squares", "stacked_regressor": "least_squares",
    "friction_columns": "least_squares", "friction_joints": "least_squares",
    "BaseParameters": "base", "base_parameters": "base", "column_names": "base",
    "Identification": "estimate", "identify": "estimate", "solve_normal_equations": "estimate",
    "derivatives": "signals", "interior": "signals", "interior_derivatives": "signals",
    "FourierTrajectory": "excitation", "excitation_trajectory": "excitation",
    "Noise": "simulated", "simulate_log": "simulated",
    "FRICTION_MODELS": "least_squares", "FrictionComparison": "comparison", "compare_friction_models": "comparison",
    "dask_normal_equations": "scale_out",
    "Log": "logs", "read_log": "logs", "write_log": "logs", "save_parameters": "logs", "load_parameters": "logs",
    "save_ros_parameters": "logs", "coordinate_names": "logs", "write_corrected_urdf": "logs",
    "PayloadIdentification": "payload", "identify_payload": "payload", "save_payload": "payload",
    "write_payload_urdf": "payload",
}
__all__ = sorted(_WHERE)


def optional(module, purpose):
    """importlib.import_module(module), or an ImportError naming what needs it and the extra that installs it:
    Dask, rosbags and PyYAML come with ``pip install 'robot_dynamics[identify]'``, not with the library."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"{purpose} needs {module.split('.')[0]}, which is not installed: "
                          "pip install 'robot_dynamics[identify]' (or pip install -e '.[identify]')") from error


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("." + _WHERE[name], __name__), name)
    globals()[name] = value
    return value
