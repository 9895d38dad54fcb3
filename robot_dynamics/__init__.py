"""robot_dynamics: M(q), a passivity-preserving C(q, v), g(q), the CoM Jacobian and the Slotine-Li regressor of
URDF robots with fixed or floating bases, after Garofalo, Ott and Albu-Schaeffer (paper 002).

    import robot_dynamics as rd
    robot = rd.load_urdf("panda.urdf")
    d = robot.dynamics(q, v, v_ref, a_ref)        # d.M, d.C, d.g, d.com, d.J_com, d.Y
"""
from .loading import from_mujoco, load, load_mjcf, load_urdf
from .mjcf import MJCFError, MJCFWarning, MujocoCoordinates
from .robot import (Contact, Diagonalized, Dynamics, GlobalFactorization, Innovations, ParameterDerivatives, Robot,
                    StateDerivatives, TaskSpaceDynamics, TimeDerivatives)
from .spatial import PARAMETER_NAMES
from .urdf import URDFError, URDFWarning

__all__ = ["Contact", "Diagonalized", "Dynamics", "GlobalFactorization", "Innovations", "MJCFError", "MJCFWarning",
           "MujocoCoordinates", "PARAMETER_NAMES", "ParameterDerivatives", "Robot", "StateDerivatives",
           "TaskSpaceDynamics", "TimeDerivatives", "URDFError", "URDFWarning", "from_mujoco", "load", "load_mjcf",
           "load_urdf"]
__version__ = "0.1.0"

# Identification (issue 15) loads on first use: scipy.optimize, Dask and rosbags stay out of `import robot_dynamics`.
_IDENTIFICATION = ("identify", "identify_payload", "base_parameters", "excitation_trajectory", "read_log",
                   "save_parameters", "load_parameters", "write_corrected_urdf")


def __getattr__(name):
    if name in _IDENTIFICATION:
        from . import identification
        return getattr(identification, name)
    if name == "view":                              # the viewer (issue 40): viser loads on first use only
        from .viewer import view
        return view
    if name == "joint_limits":
        from .loading import joint_limits
        return joint_limits
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
