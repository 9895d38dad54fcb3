"""The joint limits a URDF gives (<limit lower upper velocity effort>), over a loaded robot's coordinates."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .text import URDFError, attribute_floats, read_robot


class Limits(NamedTuple):
    """Joint limits over a robot's joint velocity coordinates (robot.nv, less the 6 of a floating base), in order.

    lower, upper: (n,) positions (rad or m), -inf/+inf for continuous and planar joints and where the URDF gives
    none; velocity, effort: (n,) the URDF's ``<limit velocity effort>``, +inf where it gives none.
    """
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


def joint_limits(source, robot) -> Limits:
    """The ``<limit lower upper velocity effort>`` of every joint of ``robot`` that owns coordinates, read from the
    URDF ``source`` (path, XML text or .xacro path) that ``robot`` was loaded from.

    An attribute the URDF leaves out is unbounded (+-inf), not urdfdom's 0; a continuous joint's position is
    unbounded whatever it says.  URDFError naming the joint when the URDF lacks one of the robot's joints or
    its limit is unreadable or has lower > upper or a negative velocity or effort.
    """
    elements = {element.get("name"): element for element in read_robot(source).iterchildren("joint")}
    offset = 6 if robot.floating_base else 0
    n = robot.nv - offset
    lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    velocity, effort = np.full(n, np.inf), np.full(n, np.inf)
    for joint in robot.model.joints:
        if joint.mimic is not None or joint.idx_v < offset:
            continue
        if joint.name not in elements:
            raise URDFError(f"joint '{joint.name}' of the robot is not in the URDF given for its limits")
        if joint.nv != 1:                                  # planar: no limits in URDF's sense
            continue
        i, where = joint.idx_v - offset, f"joint '{joint.name}'"
        limit = elements[joint.name].find("limit")
        values = {key: np.inf if limit is None or limit.get(key) is None else attribute_floats(limit, key, 1, where)[0]
                  for key in ("lower", "upper", "velocity", "effort")}
        if joint.type != "continuous":
            lower[i] = -values["lower"] if values["lower"] == np.inf else values["lower"]
            upper[i] = values["upper"]
        velocity[i], effort[i] = values["velocity"], values["effort"]
        if lower[i] > upper[i] or velocity[i] < 0 or effort[i] < 0:
            raise URDFError(f"{where}: <limit lower=\"{lower[i]:g}\" upper=\"{upper[i]:g}\" velocity="
                            f"\"{velocity[i]:g}\" effort=\"{effort[i]:g}\"> needs lower <= upper and velocity, "
                            f"effort >= 0")
    return Limits(lower, upper, velocity, effort)
