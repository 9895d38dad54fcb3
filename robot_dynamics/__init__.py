"""robot_dynamics: M(q), a passivity-preserving C(q, v), g(q), the CoM Jacobian and the Slotine-Li regressor of
URDF robots with fixed or floating bases, after Garofalo, Ott and Albu-Schaeffer (paper 002).

    import robot_dynamics as rd
    robot = rd.load_urdf("panda.urdf")
    d = robot.dynamics(q, v, v_ref, a_ref)        # d.M, d.C, d.g, d.com, d.J_com, d.Y
"""
from .robot import (Contact, Diagonalized, Dynamics, GlobalFactorization, Innovations, ParameterDerivatives, Robot,
                    StateDerivatives, TaskSpaceDynamics, TimeDerivatives, load_urdf)
from .spatial import PARAMETER_NAMES
from .urdf import URDFError, URDFWarning

__all__ = ["Contact", "Diagonalized", "Dynamics", "GlobalFactorization", "Innovations", "PARAMETER_NAMES",
           "ParameterDerivatives", "Robot", "StateDerivatives", "TaskSpaceDynamics", "TimeDerivatives", "URDFError",
           "URDFWarning", "load_urdf"]
__version__ = "0.1.0"
