"""Reading a URDF's XML: a path, XML text (any UTF encoding) or a .xacro file -> the lxml <robot> element, parsed
hardened (no entities, DTDs or network); the bounds of what a URDF may describe; and the readers of its numbers
(xs:double attributes and element texts), each a URDFError naming the element at fault."""
from __future__ import annotations

import codecs
import functools
import os
import re

import numpy as np
from lxml import etree

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
PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False, huge_tree=False
)


class URDFWarning(UserWarning):
    """A URDF that loads but describes something physically impossible (e.g. an inertia breaking I1 + I2 >= I3)."""


class URDFError(ValueError):
    """Bad URDF; the message always names the element at fault (link/joint name, attribute)."""


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


def read_robot(source, xacro_args=None) -> etree._Element:
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
        robot = etree.fromstring(text, PARSER)
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
    check_size(read_robot(source))


def check_size(robot) -> None:
    """At most MAX_LINKS links and MAX_JOINTS joints (counted before any is read)."""
    for tag, limit in (("link", MAX_LINKS), ("joint", MAX_JOINTS)):
        count = sum(1 for _ in robot.iterchildren(tag))
        if count > limit:
            raise URDFError(f"the <robot> has {count} <{tag}> elements; robot_dynamics loads at most {limit}")


def element_tag(element) -> str:
    """An element's tag as written, with its prefix: drake:rotor_inertia rather than {http://drake.mit.edu}..."""
    local = etree.QName(element).localname
    tag = f"{element.prefix}:{local}" if element.prefix else local
    return f'param name="{element.get("name")}"' if tag == "param" else tag


def text_float(element, where: str) -> float:
    """The number that is the text of an element (<mechanicalReduction>50</mechanicalReduction>): an xs:double of
    magnitude at most MAX_MAGNITUDE, else a URDFError naming the element."""
    text = element.text or ""
    if _NUMBER.fullmatch(text) and -MAX_MAGNITUDE <= float(text) <= MAX_MAGNITUDE:
        return float(text)
    raise URDFError(f"{where}: <{element_tag(element)}>{excerpt(text.strip())}</...> is not a number of magnitude at "
                    f"most {MAX_MAGNITUDE:g} (xs:double: ASCII digits, as 1.5e-3)")


def attribute_vector(element, attribute: str, n: int, where: str, default=None) -> np.ndarray:
    """(n,) finite floats from a whitespace-separated attribute; `default` (zeros if None) when it is absent."""
    return np.array(attribute_floats(element, attribute, n, where, default))


def attribute_float(element, attribute: str, where: str) -> float:
    """One number (0 when absent), as attribute_floats(element, attribute, 1, where)[0], faster on the common
    case."""
    text = element.get(attribute) if element is not None else None
    if text is None:
        return 0.0
    if _NUMBER.fullmatch(text):
        value = float(text)
        if -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
            return value
    return attribute_floats(element, attribute, 1, where)[0]


def attribute_floats(element, attribute: str, n: int, where: str, default=None) -> list[float]:
    """_numbers as a list: n xs:double numbers of magnitude at most MAX_MAGNITUDE, else a URDFError naming them."""
    text = None if element is None else element.get(attribute)
    if text is None:
        return [0.0] * n if default is None else [float(x) for x in default]
    if _more_than(n).match(text):               # counted before anything is split or converted: O(n) of what is kept
        raise URDFError(f"{where}: <{element.tag} {attribute}=\"{excerpt(text)}\"> has more than {n} numbers "
                        f"({len(text):,} characters)")
    if _NUMBER_LIST.fullmatch(text):
        values = [float(token) for token in text.split()]     # no NaN: the grammar has none (1e999 is inf)
        if len(values) == n and -MAX_MAGNITUDE <= min(values) and max(values) <= MAX_MAGNITUDE:
            return values
    culprit = f"{where}: <{element.tag} {attribute}=\"{excerpt(text)}\">"
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


def excerpt(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width] + "..."
