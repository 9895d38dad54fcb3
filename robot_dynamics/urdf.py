"""URDF (file path or XML text) -> validated plain data; the only XML code in robot_dynamics.

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

Drives from transmissions.  A transmission gives a joint armature I_m N^2 (drives.py) when it states the inertia
I_m of its motor's rotor; its reduction N alone changes no dynamics, so a transmission without a motor inertia is
not read at all (published files hold many, of every type, some naming joints that a reduced model dropped).  The
URDF spec has no motor inertia; the three forms read are:

- ROS 1 (``<type>transmission_interface/SimpleTransmission</type>``, or the pre-Hydro ``type`` attribute):
  ``<actuator><motorInertia>I_m</motorInertia><mechanicalReduction>N</mechanicalReduction></actuator>``, the
  inertia beside the reduction as urdfdom's maintainers placed it (ros/urdfdom issue 78); a pre-Hydro
  ``<mechanicalReduction>`` directly under ``<transmission>`` is read where the actuator has none;
- ros2_control (``<plugin>transmission_interface/SimpleTransmission</plugin>``, under ``<ros2_control>`` or the
  robot): ``<joint><mechanical_reduction>N</mechanical_reduction></joint>``, the reduction that ros2_control's
  SimpleTransmission applies, and ``<param name="motor_inertia">I_m</param>``, ros2_control's free parameters of a
  transmission (its parser has no motor inertia of its own);
- Drake (any SimpleTransmission): ``<actuator><drake:rotor_inertia value="I_m"/><drake:gear_ratio value="N"/>
  </actuator>`` (Drake's URDF parser; N defaults to 1, and Drake ignores ``mechanicalReduction``), with
  ``xmlns:drake="http://drake.mit.edu"`` declared.

N defaults to 1 in each form.  Only a SimpleTransmission of one joint and one actuator is read: a motor inertia in
any other (a DifferentialTransmission or FourBarLinkage couples two joints into a full reflected-inertia matrix; a
custom type has an unknown law) is a URDFWarning naming the transmission, and the robot loads without it -- give
the joints' armature in a drives file (drive_files.py) if a diagonal approximation will do.  Two motor inertias in
one transmission, two transmissions with motor inertias on one joint, a negative motor inertia or a joint the URDF
lacks are URDFErrors; a motor inertia on a fixed joint is a URDFWarning (as Drake), and it is dropped.
"""
from __future__ import annotations

import codecs
import dataclasses
import functools
import math
import os
import re
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from lxml import etree

from .spatial import inertia_matrix, rpy_rotation

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
ONE_DOF_TYPES = ("revolute", "continuous", "prismatic")
AXIS_TYPES = ONE_DOF_TYPES + ("planar",)  # urdfdom ignores <axis> of fixed and floating joints

# Tolerance of the inertia checks (kg m^2): rounding of the printed decimals, relative to the trace (URDF exporters
# print ~6 significant digits, which moves a principal moment by up to ~5e-6 tr I), plus a floor that treats as
# zero any inertia below that of the link's mass spread over one micrometre (files print "1e-18"-style noise).
INERTIA_RTOL = 1e-5
INERTIA_FLOOR_LENGTH = 1e-6

# Bounds of what a URDF may describe.  Every number read (masses in kg, lengths in m, inertias in kg m^2, angles,
# mimic multipliers and offsets) has |x| <= MAX_MAGNITUDE: with these, and at most MAX_LINKS links and MAX_JOINTS
# joints, no quantity of the model overflows float64 (test_finite_numbers checks a model at the bounds), while 1e12
# kg or m is far beyond any machine.  The counts bound the memory and time of a load (linear in the links).
MAX_MAGNITUDE = 1e12
MAX_LINKS = MAX_JOINTS = 100_000

# xs:double, the type of URDF numbers (the XSD of the URDF spec): ASCII digits, optional sign, fraction and
# exponent; no '_' separators, no non-ASCII digits, no hexadecimal.  Attribute values are XML-whitespace separated.
DOUBLE = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMBER_LIST = re.compile(rf"[ \t\r\n]*(?:{DOUBLE}(?:[ \t\r\n]+{DOUBLE})*)?[ \t\r\n]*")
_NUMBER = re.compile(rf"[ \t\r\n]*{DOUBLE}[ \t\r\n]*")
_XML_SPACE = re.compile(r"[ \t\r\n]+")
_NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)   # xs:double's INF and NaN, any case

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
    damping, friction: the ``<dynamics>`` attributes, >= 0 (0 for fixed joints, whose <dynamics> is vacuous);
    armature: I_m N^2 of a transmission's motor (module docstring), >= 0.  A mimic joint's and a planar or floating
    joint's are dropped where the model is built, with a URDFWarning (model.build_model).
    """

    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    mimic: Mimic | None
    damping: float = 0.0
    friction: float = 0.0
    armature: float = 0.0


@dataclass(frozen=True)
class URDFDescription:
    """A parsed URDF: one tree of links, joints in document order, and its unique root link."""

    name: str
    links: dict[str, Link]
    joints: list[Joint]
    root: str

    def children(self, link: str) -> list[Joint]:
        """Joints whose parent is `link`, in document order."""
        return list(self._children.get(link, ()))

    @cached_property
    def _children(self) -> dict[str, list[Joint]]:
        """{link: its child joints in document order}, made once: children() in O(1) keeps model building linear."""
        children: dict[str, list[Joint]] = {}
        for joint in self.joints:
            children.setdefault(joint.parent, []).append(joint)
        return children


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
    _check_size(robot)
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
    joints = _parse_transmissions(robot, joints)
    return URDFDescription(robot.get("name", ""), links, joints, root)


def is_xml_text(source) -> bool:
    """True when `source` is XML text rather than a path: a str whose first character other than a byte-order mark
    and blanks is '<', or bytes that are such text in UTF-8, UTF-16 or UTF-32 (see _encoding)."""
    if isinstance(source, bytes):
        return is_xml_text(source[:512].decode(_encoding(source) or "utf-8-sig", errors="ignore"))
    if not isinstance(source, str):
        return False
    return source.removeprefix("\ufeff").lstrip(" \t\r\n")[:1] == "<"


def _encoding(data: bytes) -> str | None:
    """The encoding of XML bytes that are not UTF-8: UTF-32 or UTF-16 by their byte-order mark, else by where the
    NUL bytes of the first (ASCII) character fall, as XML 1.0 Appendix F; None for UTF-8, with or without a mark."""
    for bom, encoding in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                          (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return encoding
    head = data[:4].ljust(4, b"\xff")
    if head[:3] == b"\0\0\0" and head[3]:
        return "utf-32-be"
    if head[0] and head[1:] == b"\0\0\0":
        return "utf-32-le"
    if head[0] == 0 and head[1]:
        return "utf-16-be"
    if head[0] and head[1] == 0:
        return "utf-16-le"
    return None


def _utf8(text: str | bytes, origin: str) -> bytes:
    """XML text as UTF-8 bytes for libxml2, which cannot tell UTF-16 without a mark or an XML declaration: text in
    UTF-16 or UTF-32 is decoded here, and the encoding its declaration names (moot once decoded) made UTF-8."""
    if isinstance(text, bytes):
        encoding = _encoding(text)
        if encoding is None:
            return text
        try:
            text = text.decode(encoding)
        except UnicodeDecodeError as error:
            raise URDFError(f"{origin}: not valid {encoding.upper()} text ({error.reason} at byte "
                            f"{error.start})") from None
    text = re.sub(r"\A(\ufeff?[ \t\r\n]*<\?xml[^>]*?encoding[ \t\r\n]*=[ \t\r\n]*)(['\"])[^'\"]*\2",
                  r"\1\2UTF-8\2", text, count=1)
    return text.encode("utf-8", errors="surrogatepass")


def is_xacro(source) -> bool:
    """True for the path of a xacro file (its name ends in ``.xacro``, as ``robot.urdf.xacro``)."""
    if is_xml_text(source):
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
    elif is_xml_text(source):
        origin = "URDF text"
        text = _utf8(source, origin)
    else:
        path = os.fsdecode(source)
        try:
            with open(path, "rb") as file:
                text = file.read()
        except (OSError, ValueError) as error:  # ValueError: a NUL byte in the path
            reason = getattr(error, "strerror", None) or error
            shown = path if len(path) <= 200 and "\n" not in path else repr(path[:60]) + "..."
            raise URDFError(f"cannot read URDF file '{shown}': {reason} (URDF text must start with '<')") from error
        origin = f"URDF file '{path}'"
        text = _utf8(text, origin)
    if b"<!ENTITY" in text:  # refused before libxml2 sees it; the DTD check below covers other encodings
        raise URDFError(f"{origin}: entity declarations are not allowed in a URDF")
    try:
        robot = etree.fromstring(text, _PARSER)
    except etree.XMLSyntaxError as error:
        if any(entry.type_name == "ERR_NO_MEMORY" for entry in error.error_log):
            raise URDFError(f"{origin}: out of memory while parsing the XML") from None
        raise URDFError(f"{origin}: malformed XML: {error}") from error
    dtd = robot.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise URDFError(f"{origin}: entity declarations are not allowed in a URDF")
    if robot.tag != "robot":
        raise URDFError(f"{origin}: the root element is <{robot.tag}>, not <robot>")
    return robot


def check_xml(source) -> None:
    """The checks of a URDF's XML itself, before any link is read: readable, well-formed within libxml2's limits,
    no entity declarations, a <robot> root, at most MAX_LINKS links and MAX_JOINTS joints (URDFError naming the
    fault).  Cheap enough to refuse a description on the spot (a node's robot_description parameter: ros.hotswap)."""
    _check_size(_read_robot(source))


def _check_size(robot) -> None:
    """At most MAX_LINKS links and MAX_JOINTS joints (counted before any is read)."""
    for tag, limit in (("link", MAX_LINKS), ("joint", MAX_JOINTS)):
        count = sum(1 for _ in robot.iterchildren(tag))
        if count > limit:
            raise URDFError(f"the <robot> has {count} <{tag}> elements; robot_dynamics loads at most {limit}")


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
    com = _numbers(origin, "xyz", 3, where)
    rpy = _floats(origin, "rpy", 3, where)
    mass = _float(element.find("mass"), "value", where)
    if mass < 0:
        raise URDFError(f"{where}: negative mass {mass:g}")
    inertia = element.find("inertia")
    ixx, ixy, ixz, iyy, iyz, izz = (_float(inertia, key, where) for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if any(rpy):
        R = rpy_rotation(rpy)
        I = R @ I @ R.T
    return Inertial(float(mass), _frozen(com), _frozen(I))


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
    rpy = _floats(origin, "rpy", 3, where)
    rotation = rpy_rotation(rpy) if any(rpy) else np.eye(3)
    translation = _numbers(origin, "xyz", 3, where)
    axis = np.array([1.0, 0.0, 0.0])
    if kind in AXIS_TYPES:
        axis_element = element.find("axis")
        if axis_element is not None:
            axis = _numbers(axis_element, "xyz", 3, where, default=axis)
        norm = math.hypot(*axis)
        if norm == 0:
            raise URDFError(f"{where}: <axis xyz> is the zero vector")
        axis = axis / norm
    # a fixed joint has no coordinate to couple or damp: its <mimic> and <dynamics> are vacuous and ignored, as
    # urdfdom and Pinocchio do
    if kind == "fixed":
        return Joint(name, kind, parent, child, _frozen(rotation), _frozen(translation), _frozen(axis), None)
    mimic = _parse_mimic(element.find("mimic"), where)
    damping, friction = _parse_dynamics(element.find("dynamics"), where)
    return Joint(name, kind, parent, child, _frozen(rotation), _frozen(translation), _frozen(axis), mimic, damping,
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
    multiplier = _floats(element, "multiplier", 1, where, default=(1.0,))[0]
    offset = _float(element, "offset", where)
    return Mimic(master, float(multiplier), float(offset))


def _parse_dynamics(element, where: str) -> tuple[float, float]:
    """URDF spec <dynamics damping friction>: both default to 0 and may not be negative (other attributes, such as
    Gazebo's, are not read)."""
    values = tuple(_float(element, key, where) for key in ("damping", "friction"))
    for key, value in zip(("damping", "friction"), values):
        if value < 0:
            raise URDFError(f"{where}: <dynamics {key}=\"{element.get(key)}\"> is negative")
    return values


# --- transmissions: the motor inertias of the drives (module docstring) ------------------------------------------

def _parse_transmissions(robot, joints: list[Joint]) -> list[Joint]:
    """`joints` with the armature I_m N^2 of every SimpleTransmission that gives its motor's inertia (module
    docstring): the <transmission> elements of the robot and of its <ros2_control> elements, in document order."""
    by_name = {joint.name: joint for joint in joints}
    armature: dict[str, tuple[float, str]] = {}          # joint -> (I_m N^2, the transmission's name)
    elements = [*robot.iterchildren("transmission"),
                *(t for control in robot.iterchildren("ros2_control") for t in control.iterchildren("transmission"))]
    for element in elements:
        name = element.get("name") or f"on line {element.sourceline}"
        where = f"transmission '{name}'"
        found = _motor_inertia(element, where)
        if found is None:
            continue                                     # a reduction alone changes no dynamics: not read
        inertia, reduction = found
        kind = _transmission_type(element)
        joint_names = [j.get("name") for j in element.iterchildren("joint")]
        if "SimpleTransmission" not in kind or len(joint_names) != 1 or len(element.findall("actuator")) > 1:
            joint_list = ", ".join(f"'{j}'" for j in joint_names)
            warnings.warn(f"{where} (type '{kind}', joints {joint_list}) gives a motor inertia, but only a "
                          f"SimpleTransmission of one joint and one actuator is read: loaded without it (give the "
                          f"joints' armature in a drives file, drive_files.py)", URDFWarning, stacklevel=4)
            continue
        joint = by_name.get(joint_names[0])
        if joint is None:
            raise URDFError(f"{where} gives a motor inertia to joint '{joint_names[0]}', which the URDF does not have")
        if joint.type == "fixed":
            warnings.warn(f"{where} gives a motor inertia to the fixed joint '{joint.name}': dropped", URDFWarning,
                          stacklevel=4)
            continue
        if joint.name in armature:
            raise URDFError(f"joint '{joint.name}' has motor inertias in two transmissions, "
                            f"'{armature[joint.name][1]}' and '{name}'")
        armature[joint.name] = (inertia * reduction**2, name)
    return [dataclasses.replace(j, armature=armature[j.name][0]) if j.name in armature else j for j in joints]


def _transmission_type(element) -> str:
    """The type of a transmission: ROS 1's <type>, ros2_control's <plugin>, or the pre-Hydro type attribute."""
    for tag in ("type", "plugin"):
        child = element.find(tag)
        if child is not None:
            return (child.text or "").strip()
    return element.get("type", "")


def _motor_inertia(element, where: str) -> tuple[float, float] | None:
    """(I_m, N) of a transmission that gives its motor's inertia in one of the three forms of the module docstring,
    or None when it gives none."""
    actuators = list(element.iterchildren("actuator"))
    ros1 = [e for a in [*actuators, element] for e in a.iterchildren("motorInertia")]
    ros2 = [e for e in element.iterchildren("param") if e.get("name") == "motor_inertia"]
    drake = [e for a in actuators for e in _drake_children(a, "rotor_inertia")]
    given = ros1 + ros2 + drake
    if not given:
        return None
    if len(given) > 1:
        tags = ", ".join(f"<{_tag(e)}>" for e in given)
        raise URDFError(f"{where} gives {len(given)} motor inertias ({tags}); give one")
    if ros1:
        inertia = _text_float(ros1[0], where)
        actuator = ros1[0].getparent()
        reduction = actuator.find("mechanicalReduction")
        if reduction is None:
            reduction = element.find("mechanicalReduction")          # pre-Hydro: beside <actuator>
        reduction = 1.0 if reduction is None else _text_float(reduction, where)
    elif ros2:
        inertia = _text_float(ros2[0], where)
        joint = element.find("joint")
        reduction = None if joint is None else joint.find("mechanical_reduction")
        reduction = 1.0 if reduction is None else _text_float(reduction, where)
    else:
        if drake[0].get("value") is None:
            raise URDFError(f"{where}: <drake:rotor_inertia> has no value attribute")
        inertia = _float(drake[0], "value", where)
        ratios = list(_drake_children(drake[0].getparent(), "gear_ratio"))
        if ratios and ratios[0].get("value") is None:
            raise URDFError(f"{where}: <drake:gear_ratio> has no value attribute")
        reduction = _float(ratios[0], "value", where) if ratios else 1.0
    if inertia < 0:
        raise URDFError(f"{where}: the motor inertia <{_tag(given[0])}> {inertia:g} is negative")
    return inertia, reduction


def _drake_children(element, name: str):
    """The children <drake:name> of an element (the prefix drake, whatever namespace it is bound to)."""
    return (e for e in element if isinstance(e.tag, str) and e.prefix == "drake" and etree.QName(e).localname == name)


def _tag(element) -> str:
    """An element's tag as written, with its prefix: drake:rotor_inertia rather than {http://drake.mit.edu}..."""
    local = etree.QName(element).localname
    tag = f"{element.prefix}:{local}" if element.prefix else local
    return f'param name="{element.get("name")}"' if tag == "param" else tag


def _text_float(element, where: str) -> float:
    """The number that is the text of an element (<mechanicalReduction>50</mechanicalReduction>): an xs:double of
    magnitude at most MAX_MAGNITUDE, else a URDFError naming the element."""
    text = element.text or ""
    if _NUMBER.fullmatch(text) and -MAX_MAGNITUDE <= float(text) <= MAX_MAGNITUDE:
        return float(text)
    raise URDFError(f"{where}: <{_tag(element)}>{_excerpt(text.strip())}</...> is not a number of magnitude at "
                    f"most {MAX_MAGNITUDE:g} (xs:double: ASCII digits, as 1.5e-3)")


def _numbers(element, attribute: str, n: int, where: str, default=None) -> np.ndarray:
    """(n,) finite floats from a whitespace-separated attribute; `default` (zeros if None) when it is absent."""
    return np.array(_floats(element, attribute, n, where, default))


def _float(element, attribute: str, where: str) -> float:
    """One number (0 when absent), as _floats(element, attribute, 1, where)[0] but faster on the common case."""
    text = element.get(attribute) if element is not None else None
    if text is None:
        return 0.0
    if _NUMBER.fullmatch(text):
        value = float(text)
        if -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
            return value
    return _floats(element, attribute, 1, where)[0]


def _floats(element, attribute: str, n: int, where: str, default=None) -> list[float]:
    """_numbers as a list: n xs:double numbers of magnitude at most MAX_MAGNITUDE, else a URDFError naming them."""
    text = None if element is None else element.get(attribute)
    if text is None:
        return [0.0] * n if default is None else [float(x) for x in default]
    if _more_than(n).match(text):               # counted before anything is split or converted: O(n) of what is kept
        raise URDFError(f"{where}: <{element.tag} {attribute}=\"{_excerpt(text)}\"> has more than {n} numbers "
                        f"({len(text):,} characters)")
    if _NUMBER_LIST.fullmatch(text):
        values = [float(token) for token in text.split()]     # no NaN: the grammar has none (1e999 is inf)
        if len(values) == n and -MAX_MAGNITUDE <= min(values) and max(values) <= MAX_MAGNITUDE:
            return values
    culprit = f"{where}: <{element.tag} {attribute}=\"{_excerpt(text)}\">"
    tokens = _XML_SPACE.split(text.strip(" \t\r\n"))
    if not all(_NUMBER_LIST.fullmatch(t) or _NON_FINITE.fullmatch(t) for t in tokens):
        raise URDFError(f"{culprit} is not a list of numbers (xs:double: ASCII digits, as 1.5e-3)")
    values = [float(t) for t in tokens if t]
    if len(values) != n:
        raise URDFError(f"{culprit} has {len(values)} numbers, expected {n}")
    if not all(np.isfinite(values)):
        raise URDFError(f"{culprit} has a non-finite number")
    raise URDFError(f"{culprit} has a number beyond +-{MAX_MAGNITUDE:g}, the bound of URDF numbers "
                    f"(urdf.MAX_MAGNITUDE)")


@functools.lru_cache(maxsize=None)
def _more_than(n: int):
    """A pattern that matches the start of a text of more than n whitespace-separated tokens, and reads no further."""
    return re.compile(rf"[ \t\r\n]*(?:[^ \t\r\n]+[ \t\r\n]+){{{n}}}[^ \t\r\n]")


def _excerpt(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width] + "..."


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


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


# --- joint limits -----------------------------------------------------------------------------------------------

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
    elements = {element.get("name"): element for element in _read_robot(source).iterchildren("joint")}
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
        values = {key: np.inf if limit is None or limit.get(key) is None else _floats(limit, key, 1, where)[0]
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


# --- corrected inertials ----------------------------------------------------------------------------------------

# The markup of an XML document, one match per comment, CDATA section, processing instruction, DOCTYPE, end tag
# or start tag (whose quoted attribute values may hold '>'); the text between matches is character data.
_MARKUP = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!DOCTYPE(?:[^\[>]|\[.*?\])*>|</[^>]*>"
                     r"|<(?:[^>\"']|\"[^\"]*\"|'[^']*')*>", re.DOTALL)
_TAG_NAME = re.compile(r"</?([^\s/>]+)")


def _element_spans(text: str, tag: str, child: str) -> list[tuple]:
    """(start, head, end, first) of every <tag> child of the root element, in document order: the offsets of its
    start tag (start, head), the end of the element (of its end tag; head when self-closing) and (start, head, end)
    of its first <child> child, or None."""
    stack, spans = [], []                      # stack: (tag name, start, head) of the open elements
    for match in _MARKUP.finditer(text):
        token = match.group()
        if token.startswith(("<!", "<?")):
            continue
        if token.startswith("</"):
            name, start, head = stack.pop()
        else:
            name, start, head = _TAG_NAME.match(token).group(1), match.start(), match.end()
            if len(stack) == 1 and name == tag:
                spans.append([start, head, head, None])
            if not token.endswith("/>"):
                stack.append((name, start, head))
                continue
        # the element (name, start, head) ends at match.end(), a child of stack[-1]
        if len(stack) == 1 and name == tag:
            spans[-1][2] = match.end()
        elif len(stack) == 2 and name == child and stack[1][0] == tag and spans[-1][3] is None:
            spans[-1][3] = (start, head, match.end())
    return [tuple(span) for span in spans]


def rewrite_inertials(text: str, pi_by_link: dict) -> str:
    """The URDF ``text`` with the <inertial> of each link in ``pi_by_link`` written from its parameters, and not
    one other character changed.

    pi_by_link: {link name: (10,) pi = [m, m c, I_o (xx, yy, zz, xy, xz, yz)] about the link frame's origin, in
    its axes (spatial.PARAMETER_NAMES)}.  Each becomes <origin xyz="c" rpy="0 0 0"/>, <mass value="m"/> and
    <inertia> about the CoM, I_c = I_o - m (|c|^2 E - c c^T) (parallel axes), numbers printed to round-trip
    exactly.  The link's first <inertial> is replaced where its text stood, its indentation kept; a link without
    one gets one after its start tag when pi is not zero (a self-closing <link/> is opened and closed for it).
    ValueError naming the link for an unknown link, a non-finite pi, a negative mass or a first moment without
    mass (neither can be written in a URDF).
    """
    names, spans = _spans(text, "link", "inertial", pi_by_link)
    newline = "\r\n" if "\r\n" in text else "\n"
    edits = []                                     # (start, end, replacement), in document order
    for name, (start, end, _, inertial) in zip(names, spans):
        if name not in pi_by_link:
            continue
        mass, com, inertia = _inertial_of(name, pi_by_link[name])
        if inertial is not None:
            s, _, e = inertial
            indent = _indentation(text, s)
            child = re.search(r"\n([ \t]*)<", text[s:e])
            block = _inertial_xml(mass, com, inertia, indent, None if child is None else child.group(1), newline)
            edits.append((s, e, block))
        elif mass or np.any(inertia):
            link_indent = _indentation(text, start)
            unit = link_indent or "  "
            block = _inertial_xml(mass, com, inertia, link_indent + unit, link_indent + 2 * unit, newline)
            if text[start:end].endswith("/>"):
                tag = text[start:end - 2]
                edits.append((start, end, f"{tag}>{newline}{link_indent}{unit}{block}{newline}{link_indent}</link>"))
            else:
                edits.append((end, end, f"{newline}{link_indent}{unit}{block}"))
    return _edited(text, edits)


def _spans(text: str, tag: str, child: str, names_wanted) -> tuple[list, list]:
    """(names, _element_spans) of the <tag> elements of a URDF text; ValueError for a wanted name it lacks."""
    names = [element.get("name") for element in _read_robot(text).iterchildren(tag)]
    spans = _element_spans(text, tag, child)
    if len(spans) != len(names):
        raise URDFError(f"found {len(spans)} <{tag}> elements in the URDF text where the XML parser sees "
                        f"{len(names)}")
    unknown = sorted(set(names_wanted) - set(names))
    if unknown:
        raise ValueError(f"no {tag} named " + ", ".join(f"'{name}'" for name in unknown) + " in the URDF")
    return names, spans


def _edited(text: str, edits) -> str:
    """text with each (start, end, replacement) of edits, in document order and not overlapping, made."""
    for s, e, block in reversed(edits):
        text = text[:s] + block + text[e:]
    return text


def _decimal(x) -> str:
    """The shortest text that reads back to the same double; -0.0 -> 0.0."""
    return repr(float(x) + 0.0)


def _inertial_of(link: str, pi) -> tuple:
    """(mass, com (3,), inertia about the CoM (3, 3)) of the link parameters pi (10,), checked for a URDF."""
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (10,) or not np.all(np.isfinite(pi)):
        raise ValueError(f"link '{link}': the parameters must be 10 finite numbers, got {pi}")
    mass, h = pi[0], pi[1:4]
    if mass < 0:
        raise ValueError(f"link '{link}': mass {mass:g} kg is negative, which a URDF cannot hold (identify with "
                         f"physically consistent least squares)")
    if mass == 0 and np.any(h):
        raise ValueError(f"link '{link}': first moment m c = {h} without mass, which a URDF cannot hold")
    com = h / mass if mass > 0 else np.zeros(3)
    inertia = inertia_matrix(pi) - mass * (com @ com * np.eye(3) - np.outer(com, com))
    if not np.all(np.abs(np.concatenate([com, inertia.ravel()])) <= MAX_MAGNITUDE):
        raise ValueError(f"link '{link}': centre of mass {com} or inertia beyond the bound of URDF numbers")
    return mass, com, inertia


def _indentation(text: str, position: int) -> str:
    """The blanks between the start of the line and ``position``, or '' when other text precedes it there."""
    line = text[text.rfind("\n", 0, position) + 1:position]
    return line if line.strip(" \t") == "" else ""


def _inertial_xml(mass, com, inertia, indent, child_indent, newline) -> str:
    """An <inertial> element starting at an ``indent``-ed position, its children on lines of their own indented by
    ``child_indent``, or all on one line when that is None."""
    ixx, iyy, izz = inertia[0, 0], inertia[1, 1], inertia[2, 2]
    children = [f'<origin xyz="{" ".join(_decimal(x) for x in com)}" rpy="0 0 0"/>',
                f'<mass value="{_decimal(mass)}"/>',
                f'<inertia ixx="{_decimal(ixx)}" ixy="{_decimal(inertia[0, 1])}" ixz="{_decimal(inertia[0, 2])}" '
                f'iyy="{_decimal(iyy)}" iyz="{_decimal(inertia[1, 2])}" izz="{_decimal(izz)}"/>']
    if child_indent is None:
        return "<inertial>" + "".join(children) + "</inertial>"
    return ("<inertial>" + "".join(newline + child_indent + child for child in children) + newline + indent
            + "</inertial>")


# --- corrected drives -------------------------------------------------------------------------------------------

def rewrite_dynamics(text: str, values_by_joint: dict) -> str:
    """The URDF ``text`` with the <dynamics damping friction> of each joint in ``values_by_joint`` written, and not
    one other character changed.

    values_by_joint: {joint name: (damping, friction)}, finite and between 0 and MAX_MAGNITUDE (else a ValueError
    naming the joint).  In a joint's first <dynamics>, the value of each attribute is replaced where it stands (its
    quotes and the element's other attributes kept), and an attribute it lacks is added after the others when its
    value is not zero; a joint without one gets ``<dynamics damping="d" friction="f"/>`` as its last child, indented
    as its other children, when either value is not zero.  Numbers are printed to round-trip exactly.
    """
    names, spans = _spans(text, "joint", "dynamics", values_by_joint)
    newline = "\r\n" if "\r\n" in text else "\n"
    edits = []
    for name, (start, head, end, dynamics) in zip(names, spans):
        if name not in values_by_joint:
            continue
        values = _dynamics_of(name, values_by_joint[name])
        if dynamics is not None:
            s, h, _ = dynamics
            edits.append((s, h, _with_dynamics(text[s:h], values)))
        elif any(values):
            if head == end:
                raise URDFError(f"joint '{name}' is an empty element (a joint has a parent and a child)")
            close = text.rfind("</", head, end)                  # the joint's end tag
            element = f'<dynamics damping="{_decimal(values[0])}" friction="{_decimal(values[1])}"/>'
            line = text.rfind("\n", 0, close) + 1
            if line > head and text[line:close].strip(" \t") == "":      # </joint> on a line of its own
                child = re.search(r"\n([ \t]*)<", text[head:close])
                indent = child.group(1) if child else _indentation(text, start) + "  "
                edits.append((line, line, indent + element + newline))
            else:
                edits.append((close, close, element))
    return _edited(text, edits)


def _dynamics_of(joint: str, values) -> tuple[float, float]:
    """(damping, friction) as floats a URDF can hold, else a ValueError naming the joint."""
    damping, friction = (float(x) for x in values)
    if not (0 <= damping <= MAX_MAGNITUDE and 0 <= friction <= MAX_MAGNITUDE):
        raise ValueError(f"joint '{joint}': damping {damping!r} and friction {friction!r} must be finite numbers "
                         f"between 0 and {MAX_MAGNITUDE:g} (the bound of URDF numbers) to be written in a URDF")
    return damping, friction


def _with_dynamics(tag: str, values) -> str:
    """A <dynamics ...> start tag with its damping and friction attributes set to values (see rewrite_dynamics)."""
    for attribute, value in zip(("damping", "friction"), values):
        pattern = re.compile(rf"(?<=[ \t\r\n]){attribute}[ \t\r\n]*=[ \t\r\n]*(\"[^\"]*\"|'[^']*')")
        found = pattern.search(tag)
        if found:
            quote = found.group(1)[0]
            s, e = found.span(1)
            tag = tag[:s] + quote + _decimal(value) + quote + tag[e:]
        elif value:
            body = tag[:-2] if tag.endswith("/>") else tag[:-1]
            at = len(body.rstrip(" \t\r\n"))
            tag = tag[:at] + f' {attribute}="{_decimal(value)}"' + tag[at:]
    return tag
