"""Writing into a URDF's text: corrected inertials (identification, payloads) and drives, with not one other
character of the file changed (comments, order, quoting and layout kept) -- the file stays the user's."""
from __future__ import annotations

import re

import numpy as np

from ..spatial import inertia_matrix
from .text import MAX_MAGNITUDE, URDFError, read_robot

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
        mass, com, inertia = inertial_values(name, pi_by_link[name])
        if inertial is not None:
            s, _, e = inertial
            indent = _indentation(text, s)
            child = re.search(r"\n([ \t]*)<", text[s:e])
            block = inertial_xml(mass, com, inertia, indent, None if child is None else child.group(1), newline)
            edits.append((s, e, block))
        elif mass or np.any(inertia):
            link_indent = _indentation(text, start)
            unit = link_indent or "  "
            block = inertial_xml(mass, com, inertia, link_indent + unit, link_indent + 2 * unit, newline)
            if text[start:end].endswith("/>"):
                tag = text[start:end - 2]
                edits.append((start, end, f"{tag}>{newline}{link_indent}{unit}{block}{newline}{link_indent}</link>"))
            else:
                edits.append((end, end, f"{newline}{link_indent}{unit}{block}"))
    return _edited(text, edits)


def _spans(text: str, tag: str, child: str, names_wanted) -> tuple[list, list]:
    """(names, _element_spans) of the <tag> elements of a URDF text; ValueError for a wanted name it lacks."""
    names = [element.get("name") for element in read_robot(text).iterchildren(tag)]
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


def inertial_values(link: str, pi) -> tuple:
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


def inertial_xml(mass, com, inertia, indent, child_indent, newline) -> str:
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
