"""URDF in and out: the only XML code of robot_dynamics (MJCF aside, mjcf.py), by job.

- text.py: a path, XML text or .xacro -> the hardened lxml <robot> element; the bounds of a URDF's numbers and
  counts; the readers of its numbers; URDFError and URDFWarning;
- description.py: the parsed URDF as plain frozen data (links, joints, inertials, mimics, drives);
- parse.py: parse_urdf, the validated tree (the URDF spec's conventions are in its docstring);
- transmissions.py: the motor inertias of SimpleTransmissions, as joint armature;
- limits.py: the joint limits, over a loaded robot's coordinates;
- write.py: corrected inertials and drives written into the user's URDF text, nothing else changed.

Geometry, materials, gazebo and sensor tags are never read.
"""
from .description import Inertial, Joint, Link, Mimic, URDFDescription
from .limits import Limits, joint_limits
from .parse import AXIS_TYPES, INERTIA_FLOOR_LENGTH, INERTIA_RTOL, JOINT_TYPES, ONE_DOF_TYPES, parse_urdf
from .text import (DOUBLE, MAX_JOINTS, MAX_LINKS, MAX_MAGNITUDE, URDFError, URDFWarning, check_xml, expand_xacro,
                   is_xacro, is_xml_text, xacro_mappings)
from .write import inertial_values, inertial_xml, rewrite_dynamics, rewrite_inertials

__all__ = ["AXIS_TYPES", "DOUBLE", "INERTIA_FLOOR_LENGTH", "INERTIA_RTOL", "JOINT_TYPES", "MAX_JOINTS", "MAX_LINKS",
           "MAX_MAGNITUDE", "ONE_DOF_TYPES", "Inertial", "Joint", "Limits", "Link", "Mimic", "URDFDescription",
           "URDFError", "URDFWarning", "check_xml", "expand_xacro", "inertial_values", "inertial_xml", "is_xacro",
           "is_xml_text", "joint_limits", "parse_urdf", "rewrite_dynamics", "rewrite_inertials", "xacro_mappings"]
