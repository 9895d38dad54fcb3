"""Drives from transmissions.  A transmission gives a joint armature I_m N^2 (drives.py) when it states the inertia
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

import dataclasses
import warnings

from lxml import etree

from .description import Joint
from .text import URDFError, URDFWarning, attribute_float, element_tag, text_float


def parse_transmissions(robot, joints: list[Joint]) -> list[Joint]:
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
        tags = ", ".join(f"<{element_tag(e)}>" for e in given)
        raise URDFError(f"{where} gives {len(given)} motor inertias ({tags}); give one")
    if ros1:
        inertia = text_float(ros1[0], where)
        actuator = ros1[0].getparent()
        reduction = actuator.find("mechanicalReduction")
        if reduction is None:
            reduction = element.find("mechanicalReduction")          # pre-Hydro: beside <actuator>
        reduction = 1.0 if reduction is None else text_float(reduction, where)
    elif ros2:
        inertia = text_float(ros2[0], where)
        joint = element.find("joint")
        reduction = None if joint is None else joint.find("mechanical_reduction")
        reduction = 1.0 if reduction is None else text_float(reduction, where)
    else:
        if drake[0].get("value") is None:
            raise URDFError(f"{where}: <drake:rotor_inertia> has no value attribute")
        inertia = attribute_float(drake[0], "value", where)
        ratios = list(_drake_children(drake[0].getparent(), "gear_ratio"))
        if ratios and ratios[0].get("value") is None:
            raise URDFError(f"{where}: <drake:gear_ratio> has no value attribute")
        reduction = attribute_float(ratios[0], "value", where) if ratios else 1.0
    if inertia < 0:
        raise URDFError(f"{where}: the motor inertia <{element_tag(given[0])}> {inertia:g} is negative")
    return inertia, reduction


def _drake_children(element, name: str):
    """The children <drake:name> of an element (the prefix drake, whatever namespace it is bound to)."""
    return (e for e in element if isinstance(e.tag, str) and e.prefix == "drake" and etree.QName(e).localname == name)
