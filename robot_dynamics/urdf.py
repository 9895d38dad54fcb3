"""URDF (file path or XML text) -> validated plain data; the only XML code in robot_dynamics.

The parser reads what dynamics needs -- the link/joint tree, joint origins and axes, inertials and mimic
couplings -- and checks it, so that every later layer may assume a well-formed single tree with physical
inertias. Geometry, materials, transmissions, gazebo and sensor tags are never read.

Conventions follow the URDF spec (http://wiki.ros.org/urdf/XML):

- ``<origin xyz rpy>`` gives the child frame in the parent frame, with R = Rz(yaw) @ Ry(pitch) @ Rx(roll);
- ``<inertial><origin>`` places the centre-of-mass frame in the link frame; ``<inertia>`` is about the CoM,
  in the axes of that frame;
- ``<axis xyz>`` (default 1 0 0) is expressed in the joint frame, which is the child link frame.
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np
from lxml import etree

from .spatial import rpy_rotation

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
ONE_DOF_TYPES = ("revolute", "continuous", "prismatic")
AXIS_TYPES = ONE_DOF_TYPES + ("planar",)  # urdfdom ignores <axis> of fixed and floating joints

# Tolerance of the inertia checks (kg m^2): rounding of the printed decimals, relative to the trace (URDF exporters
# print ~6 significant digits, which moves a principal moment by up to ~5e-6 tr I), plus a floor that treats as
# zero any inertia below that of the link's mass spread over one micrometre (files print "1e-18"-style noise).
INERTIA_RTOL = 1e-5
INERTIA_FLOOR_LENGTH = 1e-6

# Hardened: no entity expansion, no DTD loading or validation, no network, libxml2's size limits kept.
_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False
)


class URDFWarning(UserWarning):
    """A URDF that loads but describes something physically impossible (e.g. an inertia breaking I1 + I2 >= I3)."""


class URDFError(ValueError):
    """Bad URDF; the message always names the element at fault (link/joint name, attribute)."""


@dataclass(frozen=True, eq=False)
class Inertial:
    """Mass properties of one link (URDF spec ``<inertial>``).

    mass: >= 0 (massless allowed); com: (3,) centre of mass in the link frame; inertia: (3, 3) rotational
    inertia about the CoM in the link-frame axes, i.e. R @ I_urdf @ R.T with R from ``<inertial><origin rpy>``.
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray


@dataclass(frozen=True)
class Link:
    """A URDF ``<link>``: its name and its inertial, None when the link has no ``<inertial>``."""

    name: str
    inertial: Inertial | None


@dataclass(frozen=True)
class Mimic:
    """URDF ``<mimic>``: q = multiplier * q[joint] + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True, eq=False)
class Joint:
    """A URDF ``<joint>``.

    rotation: (3, 3) and translation: (3,) place the joint (= child) frame in the parent link frame at q = 0.
    axis: (3,) unit vector in the joint frame; (1, 0, 0) for fixed and floating joints, whose axis is unused.
    mimic: None for fixed joints, whose <mimic> is vacuous (talos_reduced has such joints).
    """

    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    mimic: Mimic | None


@dataclass(frozen=True)
class URDFDescription:
    """A parsed URDF: one tree of links, joints in document order, and its unique root link."""

    name: str
    links: dict[str, Link]
    joints: list[Joint]
    root: str

    def children(self, link: str) -> list[Joint]:
        """Joints whose parent is `link`, in document order."""
        return [joint for joint in self.joints if joint.parent == link]


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
    robot = _read_robot(source, xacro_args)
    links: dict[str, Link] = {}
    for element in robot.iterchildren("link"):
        link = _parse_link(element, strict_inertia)
        if link.name in links:
            raise URDFError(f"duplicate link name '{link.name}'")
        links[link.name] = link
    joints = [_parse_joint(element) for element in robot.iterchildren("joint")]
    if not links:
        if joints:
            raise URDFError(f"the <robot> has no <link>, but joints ('{joints[0].name}', ...) that need them")
        return URDFDescription(robot.get("name", ""), {}, [], "")   # an empty robot (ur3.urdf): nothing moves
    names = [joint.name for joint in joints]
    for name in names:
        if names.count(name) > 1:
            raise URDFError(f"duplicate joint name '{name}'")
    root = _check_tree(links, joints)
    _check_mimics(joints)
    return URDFDescription(robot.get("name", ""), links, joints, root)


def is_xacro(source) -> bool:
    """True for the path of a xacro file (its name ends in ``.xacro``, as ``robot.urdf.xacro``)."""
    if isinstance(source, (str, bytes)) and source.lstrip()[:1] in ("<", b"<"):
        return False
    return os.fsdecode(source).endswith(".xacro")


def xacro_mappings(xacro_args) -> dict[str, str]:
    """``{name: value}`` of xacro arguments given as a mapping or as ``"name:=value"`` strings (xacro's CLI)."""
    if xacro_args is None:
        return {}
    if isinstance(xacro_args, str):
        xacro_args = xacro_args.split()
    if hasattr(xacro_args, "items"):
        return {str(name): str(value) for name, value in xacro_args.items()}
    mappings = {}
    for item in xacro_args:
        name, sep, value = str(item).partition(":=")
        if not sep or not name.strip():
            raise URDFError(f"xacro argument '{item}' is not of the form name:=value")
        mappings[name.strip()] = value
    return mappings


def expand_xacro(path: str | os.PathLike, xacro_args=None) -> str:
    """The URDF XML that the xacro file ``path`` expands to, with ``xacro_args`` (see :func:`xacro_mappings`).

    Uses the ``xacro`` package (PyPI ``xacro``, or ROS's), as ``xacro path name:=value ...`` does: ``$(find
    pkg)`` and ``package://`` resolve through the ament index.  URDFError when xacro is not installed, the file
    cannot be read or the expansion fails.
    """
    path = os.fsdecode(path)
    mappings = xacro_mappings(xacro_args)
    try:
        import xacro
    except ImportError as error:
        raise URDFError(f"'{path}' is a xacro file and the xacro package is not installed (pip install xacro, "
                        f"or apt install ros-<distro>-xacro)") from error
    if not os.path.isfile(path):
        raise URDFError(f"cannot read xacro file '{path}': No such file")
    try:
        return xacro.process_file(path, mappings=mappings).toxml()
    except Exception as error:  # xacro raises XacroException, but also NameError, KeyError, ... on bad input
        raise URDFError(f"xacro file '{path}': {type(error).__name__}: {error}") from error


def _read_robot(source, xacro_args=None) -> etree._Element:
    """The <robot> element of `source`, parsed without entities, DTDs or network access."""
    if is_xacro(source):
        text = expand_xacro(source, xacro_args).encode()
        origin = f"xacro file '{os.fsdecode(source)}'"
    elif xacro_args:
        raise URDFError("xacro_args given for a source that is not a .xacro file")
    elif isinstance(source, (str, bytes)) and source.lstrip()[:1] in ("<", b"<"):
        text = source.encode() if isinstance(source, str) else source
        origin = "URDF text"
    else:
        path = os.fsdecode(source)
        try:
            with open(path, "rb") as file:
                text = file.read()
        except (OSError, ValueError) as error:  # ValueError: a NUL byte in the path
            reason = getattr(error, "strerror", None) or error
            raise URDFError(f"cannot read URDF file '{path}': {reason}") from error
        origin = f"URDF file '{path}'"
    if b"<!ENTITY" in text:  # refused before libxml2 sees it; the DTD check below covers other encodings
        raise URDFError(f"{origin}: entity declarations are not allowed in a URDF")
    try:
        robot = etree.fromstring(text, _PARSER)
    except etree.XMLSyntaxError as error:
        raise URDFError(f"{origin}: malformed XML: {error}") from error
    dtd = robot.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise URDFError(f"{origin}: entity declarations are not allowed in a URDF")
    if robot.tag != "robot":
        raise URDFError(f"{origin}: the root element is <{robot.tag}>, not <robot>")
    return robot


def _parse_link(element, strict_inertia: bool) -> Link:
    name = element.get("name")
    if not name:
        raise URDFError(f"<link> on line {element.sourceline} has no name attribute")
    inertial = element.find("inertial")
    return Link(name, None if inertial is None else _parse_inertial(inertial, name, strict_inertia))


def _parse_inertial(element, link: str, strict_inertia: bool) -> Inertial:
    """URDF spec <inertial>: origin (CoM frame), mass value, inertia ixx..izz about the CoM; all default 0."""
    where = f"link '{link}'"
    origin = element.find("origin")
    com = _numbers(origin, "xyz", 3, where)
    R = rpy_rotation(_numbers(origin, "rpy", 3, where))
    mass = _numbers(element.find("mass"), "value", 1, where)[0]
    if mass < 0:
        raise URDFError(f"{where}: negative mass {mass:g}")
    inertia = element.find("inertia")
    ixx, ixy, ixz, iyy, iyz, izz = (
        _numbers(inertia, key, 1, where)[0] for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    )
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    _check_inertia(I, mass, where, strict_inertia)
    return Inertial(float(mass), _frozen(com), _frozen(R @ I @ R.T))


def _check_inertia(I: np.ndarray, mass: float, where: str, strict: bool) -> None:
    """Physical consistency: principal moments I1 <= I2 <= I3 with I1 >= 0 and I1 + I2 >= I3.

    The triangle inequality is the whole condition: it says that the second moment of mass tr(I)/2 - I is positive
    semi-definite, and it implies I1 >= 0; both are checked for a clearer message.
    """
    I1, I2, I3 = np.linalg.eigvalsh(I)
    tol = INERTIA_RTOL * abs(I1 + I2 + I3) + mass * INERTIA_FLOOR_LENGTH**2
    moments = f"principal moments {I1:.6g}, {I2:.6g}, {I3:.6g}"
    problem = None
    if I1 < -tol:
        problem = f"{where}: inertia is not positive semi-definite ({moments})"
    elif I1 + I2 < I3 - tol:
        problem = f"{where}: inertia violates the triangle inequality I1 + I2 >= I3 ({moments})"
    if problem and strict:
        raise URDFError(problem)
    if problem:
        warnings.warn(problem + "; loaded as given (strict_inertia=True refuses it)", URDFWarning,
                      stacklevel=6)                                # points at the caller of load_urdf


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
    rotation = rpy_rotation(_numbers(origin, "rpy", 3, where))
    translation = _numbers(origin, "xyz", 3, where)
    axis = np.array([1.0, 0.0, 0.0])
    if kind in AXIS_TYPES:
        axis_element = element.find("axis")
        if axis_element is not None:
            axis = _numbers(axis_element, "xyz", 3, where, default=axis)
        norm = np.linalg.norm(axis)
        if norm == 0:
            raise URDFError(f"{where}: <axis xyz> is the zero vector")
        axis = axis / norm
    # a fixed joint has no coordinate to couple: its <mimic> is vacuous and ignored, as urdfdom and Pinocchio do
    mimic = None if kind == "fixed" else _parse_mimic(element.find("mimic"), where)
    return Joint(name, kind, parent, child, _frozen(rotation), _frozen(translation), _frozen(axis), mimic)


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
    multiplier = _numbers(element, "multiplier", 1, where, default=(1.0,))[0]
    offset = _numbers(element, "offset", 1, where)[0]
    return Mimic(master, float(multiplier), float(offset))


def _numbers(element, attribute: str, n: int, where: str, default=None) -> np.ndarray:
    """(n,) finite floats from a whitespace-separated attribute; `default` (zeros if None) when it is absent."""
    text = None if element is None else element.get(attribute)
    if text is None:
        return np.zeros(n) if default is None else np.array(default, dtype=float)
    culprit = f"{where}: <{element.tag} {attribute}=\"{text}\">"
    try:
        values = np.array([float(token) for token in text.split()])
    except ValueError:
        raise URDFError(f"{culprit} is not a list of numbers") from None
    if values.shape != (n,):
        raise URDFError(f"{culprit} has {values.size} numbers, expected {n}")
    if not np.all(np.isfinite(values)):
        raise URDFError(f"{culprit} has a non-finite number")
    return values


def _check_tree(links: dict[str, Link], joints: list[Joint]) -> str:
    """Check that the joints make the links one tree; return its root link."""
    parent_joint: dict[str, Joint] = {}
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise URDFError(f"joint '{joint.name}': {role} link '{link}' does not exist")
        if joint.child in parent_joint:
            raise URDFError(f"link '{joint.child}' has two parents: joints "
                            f"'{parent_joint[joint.child].name}' and '{joint.name}'")
        parent_joint[joint.child] = joint
    for start in links:  # each link has at most one parent, so walking up either ends at a root or loops
        path, link = [], start
        while link in parent_joint and link not in path:
            path.append(link)
            link = parent_joint[link].parent
        if link in path:
            loop = path[path.index(link):]
            names = ", ".join(f"'{parent_joint[name].name}'" for name in loop)
            raise URDFError(f"kinematic loop through joints {names}")
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


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array
