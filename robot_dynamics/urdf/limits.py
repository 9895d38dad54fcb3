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
    lower, upper, velocity, effort = limits = unbounded(robot)
    missing = "joint '{}' of the robot is not in the URDF given for its limits"
    for i, joint in one_coordinate_joints(robot, elements, lambda name: URDFError(missing.format(name))):
        where = f"joint '{joint.name}'"
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
    return limits


def unbounded(robot) -> Limits:
    """Limits over the joint coordinates of ``robot`` (a free base's 6 left out), every entry unbounded."""
    n = robot.nv - (6 if robot.floating_base else 0)
    return Limits(np.full(n, -np.inf), np.full(n, np.inf), np.full(n, np.inf), np.full(n, np.inf))


def one_coordinate_joints(robot, names, missing):
    """(i, joint) for every joint of ``robot`` with one coordinate of its own, i its index among the joint
    coordinates (a free base's 6 left out), in order; ``missing(name)`` is raised for a joint that owns
    coordinates and is not in ``names`` (those of the file); joints of several coordinates (planar, ball) have no
    limits in URDF's sense and are passed over."""
    offset = 6 if robot.floating_base else 0
    for joint in robot.model.joints:
        if joint.mimic is not None or joint.idx_v < offset:
            continue
        if joint.name not in names:
            raise missing(joint.name)
        if joint.nv == 1:
            yield joint.idx_v - offset, joint
