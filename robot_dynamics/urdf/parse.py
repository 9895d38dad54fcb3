"""URDF (file path, XML text or .xacro) -> validated plain data (urdf/description.py).

The parser reads what dynamics needs -- the link/joint tree, joint origins and axes, inertials, mimic couplings
and the drives (joint <dynamics> and the motor inertias of transmissions) -- and checks it, so that every later
layer may assume a well-formed single tree with physical inertias. Geometry, materials, gazebo and sensor tags
are never read.

Conventions follow the URDF spec (http://wiki.ros.org/urdf/XML):

- ``<origin xyz rpy>`` gives the child frame in the parent frame, with R = Rz(yaw) @ Ry(pitch) @ Rx(roll);
- ``<inertial><origin>`` places the centre-of-mass frame in the link frame; ``<inertia>`` is about the CoM,
  in the axes of that frame;
- ``<axis xyz>`` (default 1 0 0) is expressed in the joint frame, which is the child link frame;
- ``<dynamics damping friction>`` (default 0 0): the joint's viscous coefficient (N m s/rad, N s/m) and Coulomb
  friction (N m, N), Pinocchio's model.damping and model.friction (drives.py).
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

from ..spatial import rpy_rotation
from .description import Inertial, Joint, Link, Mimic, URDFDescription
from .text import (URDFError, URDFWarning, attribute_float, attribute_floats, attribute_vector, check_size,
                   read_robot)
from .transmissions import parse_transmissions

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
ONE_DOF_TYPES = ("revolute", "continuous", "prismatic")
AXIS_TYPES = ONE_DOF_TYPES + ("planar",)  # urdfdom ignores <axis> of fixed and floating joints

# Tolerance of the inertia checks (kg m^2): rounding of the printed decimals, relative to the trace (URDF exporters
# print ~6 significant digits, which moves a principal moment by up to ~5e-6 tr I), plus a floor that treats as
# zero any inertia below that of the link's mass spread over one micrometre (files print "1e-18"-style noise).
INERTIA_RTOL = 1e-5
INERTIA_FLOOR_LENGTH = 1e-6


def parse_urdf(source: str | bytes | os.PathLike, *, strict_inertia: bool = False,
               xacro_args=None) -> URDFDescription:
    """Parse and validate a URDF.

    Parameters
    ----------
    source : str, bytes or path-like
        The URDF XML itself (a str/bytes whose first non-blank character is '<') or the path of a file; a path
        ending in ``.xacro`` is expanded first (see :func:`expand_xacro`).
    strict_inertia : bool
        Every inertia must be physically consistent: positive semi-definite principal moments obeying the
        triangle inequality I1 + I2 >= I3, within a rounding tolerance (see INERTIA_RTOL).  A violation is a
        URDFError when strict, otherwise a URDFWarning naming the link: 15 of the 69 example-robot-data files
        carry such placeholder or hand-typed inertias, and Pinocchio loads them all.
    xacro_args : mapping or iterable of "name:=value", optional
        The arguments of a ``.xacro`` file (``<xacro:arg>``); refused for any other source.

    Returns
    -------
    URDFDescription

    Raises
    ------
    URDFError
        For unreadable or malformed input, any DTD entity declaration, and every violation of the URDF spec
        that dynamics depends on: links/joints (duplicates, dangling names, several parents, cycles, several
        roots), numbers (unparsable, non-finite, negative mass, zero axis, unphysical inertia) and mimic joints.
    """
    robot = read_robot(source, xacro_args)
    check_size(robot)
    links: dict[str, Link] = {}
    for element in robot.iterchildren("link"):
        link = _parse_link(element)
        if link.name in links:
            raise URDFError(f"duplicate link name '{link.name}'")
        links[link.name] = link
    _check_inertias(links, strict_inertia)
    joints = [_parse_joint(element) for element in robot.iterchildren("joint")]
    if not links:
        if joints:
            raise URDFError(f"the <robot> has no <link>, but joints ('{joints[0].name}', ...) that need them")
        return URDFDescription(robot.get("name", ""), {}, [], "")   # an empty robot (ur3.urdf): nothing moves
    names: set[str] = set()
    for joint in joints:
        if joint.name in names:
            raise URDFError(f"duplicate joint name '{joint.name}'")
        names.add(joint.name)
    root = _check_tree(links, joints)
    _check_mimics(joints)
    joints = parse_transmissions(robot, joints)
    return URDFDescription(robot.get("name", ""), links, joints, root)


def _parse_link(element) -> Link:
    name = element.get("name")
    if not name:
        raise URDFError(f"<link> on line {element.sourceline} has no name attribute")
    inertial = element.find("inertial")
    return Link(name, None if inertial is None else _parse_inertial(inertial, name))


def _parse_inertial(element, link: str) -> Inertial:
    """URDF spec <inertial>: origin (CoM frame), mass value, inertia ixx..izz about the CoM; all default 0."""
    where = f"link '{link}'"
    origin = element.find("origin")
    com = attribute_vector(origin, "xyz", 3, where)
    rpy = attribute_floats(origin, "rpy", 3, where)
    mass = attribute_float(element.find("mass"), "value", where)
    if mass < 0:
        raise URDFError(f"{where}: negative mass {mass:g}")
    inertia = element.find("inertia")
    ixx, ixy, ixz, iyy, iyz, izz = (attribute_float(inertia, key, where)
                                    for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if any(rpy):
        R = rpy_rotation(rpy)
        I = R @ I @ R.T
    return Inertial(float(mass), frozen(com), frozen(I))


def _check_inertias(links: dict[str, Link], strict: bool) -> None:
    """Physical consistency of every inertia, in document order: principal moments I1 <= I2 <= I3 with I1 >= 0 and
    I1 + I2 >= I3 (the eigenvalues of all links at once).

    The triangle inequality is the whole condition: it says that the second moment of mass tr(I)/2 - I is positive
    semi-definite, and it implies I1 >= 0; both are checked for a clearer message.
    """
    massive = [link for link in links.values() if link.inertial is not None]
    if not massive:
        return
    moments = np.linalg.eigvalsh(np.array([link.inertial.inertia for link in massive]))      # (n, 3), ascending
    mass = np.array([link.inertial.mass for link in massive])
    tol = INERTIA_RTOL * np.abs(moments.sum(axis=1)) + mass * INERTIA_FLOOR_LENGTH**2
    I1, I2, I3 = moments.T
    for i in np.flatnonzero((I1 < -tol) | (I1 + I2 < I3 - tol)):
        where = f"link '{massive[i].name}'"
        principal = f"principal moments {I1[i]:.6g}, {I2[i]:.6g}, {I3[i]:.6g}"
        if I1[i] < -tol[i]:
            problem = f"{where}: inertia is not positive semi-definite ({principal})"
        else:
            problem = f"{where}: inertia violates the triangle inequality I1 + I2 >= I3 ({principal})"
        if strict:
            raise URDFError(problem)
        warnings.warn(problem + "; loaded as given (strict_inertia=True refuses it)", URDFWarning,
                      stacklevel=4)                                # points at the caller of load_urdf


def _parse_joint(element) -> Joint:
    """URDF spec <joint>: name, type, parent/child link, origin (default identity), axis (default 1 0 0), mimic."""
    name = element.get("name")
    if not name:
        raise URDFError(f"<joint> on line {element.sourceline} has no name attribute")
    where = f"joint '{name}'"
    kind = element.get("type")
    if not kind:
        raise URDFError(f"{where} has no type attribute")
    if kind not in JOINT_TYPES:
        raise URDFError(f"{where} has unknown type '{kind}' (URDF types: {', '.join(JOINT_TYPES)})")
    parent, child = (_link_reference(element, tag, where) for tag in ("parent", "child"))
    origin = element.find("origin")
    rpy = attribute_floats(origin, "rpy", 3, where)
    rotation = rpy_rotation(rpy) if any(rpy) else np.eye(3)
    translation = attribute_vector(origin, "xyz", 3, where)
    axis = np.array([1.0, 0.0, 0.0])
    if kind in AXIS_TYPES:
        axis_element = element.find("axis")
        if axis_element is not None:
            axis = attribute_vector(axis_element, "xyz", 3, where, default=axis)
        norm = math.hypot(*axis)
        if norm == 0:
            raise URDFError(f"{where}: <axis xyz> is the zero vector")
        axis = axis / norm
    # a fixed joint has no coordinate to couple or damp: its <mimic> and <dynamics> are vacuous and ignored, as
    # urdfdom and Pinocchio do
    if kind == "fixed":
        return Joint(name, kind, parent, child, frozen(rotation), frozen(translation), frozen(axis), None)
    mimic = _parse_mimic(element.find("mimic"), where)
    damping, friction = _parse_dynamics(element.find("dynamics"), where)
    return Joint(name, kind, parent, child, frozen(rotation), frozen(translation), frozen(axis), mimic, damping,
                 friction)


def _link_reference(element, tag: str, where: str) -> str:
    reference = element.find(tag)
    link = None if reference is None else reference.get("link")
    if not link:
        raise URDFError(f"{where} has no <{tag} link=...>")
    return link


def _parse_mimic(element, where: str) -> Mimic | None:
    """URDF spec <mimic joint multiplier offset>: multiplier defaults to 1, offset to 0."""
    if element is None:
        return None
    master = element.get("joint")
    if not master:
        raise URDFError(f"{where}: <mimic> has no joint attribute")
    multiplier = attribute_floats(element, "multiplier", 1, where, default=(1.0,))[0]
    offset = attribute_float(element, "offset", where)
    return Mimic(master, float(multiplier), float(offset))


def _parse_dynamics(element, where: str) -> tuple[float, float]:
    """URDF spec <dynamics damping friction>: both default to 0 and may not be negative (other attributes, such as
    Gazebo's, are not read)."""
    values = tuple(attribute_float(element, key, where) for key in ("damping", "friction"))
    for key, value in zip(("damping", "friction"), values):
        if value < 0:
            raise URDFError(f"{where}: <dynamics {key}=\"{element.get(key)}\"> is negative")
    return values


def _check_tree(links: dict[str, Link], joints: list[Joint]) -> str:
    """Check that the joints make the links one tree; return its root link.  O(links + joints)."""
    parent_joint: dict[str, Joint] = {}
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise URDFError(f"joint '{joint.name}': {role} link '{link}' does not exist")
        if joint.child in parent_joint:
            raise URDFError(f"link '{joint.child}' has two parents: joints "
                            f"'{parent_joint[joint.child].name}' and '{joint.name}'")
        parent_joint[joint.child] = joint
    # Each link has at most one parent, so walking up from a link ends at a root or enters a loop.  A link is
    # walked from once: `ends` remembers where every link already walked through leads (its root, or None).
    ends: dict[str, str | None] = {}
    for start in links:
        path, link = [], start
        while link not in ends and link in parent_joint:
            ends[link] = ""                              # on the current path
            path.append(link)
            link = parent_joint[link].parent
        if ends.get(link) == "":                         # back on the current path: a loop
            loop = path[path.index(link):]
            names = ", ".join(f"'{parent_joint[name].name}'" for name in loop)
            raise URDFError(f"kinematic loop through joints {names}")
        end = ends.get(link, link)                       # a walked link's end, or the root reached
        for name in path:
            ends[name] = end
    roots = [link for link in links if link not in parent_joint]
    if len(roots) > 1:
        raise URDFError("several root links (a URDF is one tree): " + ", ".join(f"'{r}'" for r in roots))
    return roots[0]


def _check_mimics(joints: list[Joint]) -> None:
    """A mimic joint and its master are 1-DoF, and the master is not itself a mimic joint (no chains)."""
    by_name = {joint.name: joint for joint in joints}
    for joint in joints:
        if joint.mimic is None:
            continue
        if joint.type not in ONE_DOF_TYPES:
            raise URDFError(f"joint '{joint.name}' of type '{joint.type}' has a <mimic>; only "
                            f"{', '.join(ONE_DOF_TYPES)} joints may mimic")
        master = by_name.get(joint.mimic.joint)
        if master is None:     # harmless while mimic joints are independent DoFs; load_urdf(mimic=True) refuses it
            continue
        if master.type not in ONE_DOF_TYPES:
            raise URDFError(f"joint '{joint.name}' mimics joint '{master.name}' of type '{master.type}'; "
                            f"the master must be {', '.join(ONE_DOF_TYPES)}")
        if master.mimic is not None:
            raise URDFError(f"joint '{joint.name}' mimics joint '{master.name}', which itself mimics "
                            f"'{master.mimic.joint}' (mimic chains are not supported)")


def frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array
