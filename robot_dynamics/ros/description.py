"""What every node of the package shares about the robot it serves and the messages it cannot use.

The robot description follows the MoveIt pattern: the string parameter ``robot_description``; if empty, the
file named by ``urdf_path``; if both are empty, the ``robot_description`` topic (see qos.DESCRIPTION_QOS).
How often a node reloads it is the node's choice (dynamics_node on every change, the controllers and the
simulator once).
"""
import math
import warnings

from rcl_interfaces.msg import ParameterDescriptor

import robot_dynamics as rd

WARN_PERIOD = 2.0                 # s, throttle of each kind of warning


def describe(text, read_only=False, dynamic_typing=False):
    """The ParameterDescriptor of a node parameter."""
    return ParameterDescriptor(description=text, read_only=read_only, dynamic_typing=dynamic_typing)


def valid_gravity(gravity):
    """True for the value of a ``gravity`` parameter: three finite doubles."""
    return len(gravity) == 3 and all(isinstance(g, float) and math.isfinite(g) for g in gravity)


def description_from_parameters(robot_description, urdf_path):
    """``(xml, source)`` from the two parameters: the XML itself, else the text of the file; ``(None, None)``
    when both are empty (the node then listens to the topic).  OSError when the file cannot be read."""
    if robot_description:
        return robot_description, "parameter robot_description"
    if urdf_path:
        with open(urdf_path, encoding="utf-8") as f:
            return f.read(), f"urdf_path '{urdf_path}'"
    return None, None


def load_robot(logger, xml, floating_base, gravity):
    """``rd.load_urdf(xml, ...)``, with every URDFWarning (a description the library loads as given, such as an
    impossible inertia) logged as a warning of the node.  URDFError (a ValueError) when the XML is refused."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", rd.URDFWarning)
        robot = rd.load_urdf(xml, floating_base=floating_base, gravity=tuple(gravity))
    for warning in caught:
        logger.warning(f"robot description: {warning.category.__name__}: {warning.message}")
    return robot


class SkipsBadMessages:
    """Mixin for a node with a ``skipped`` collections.Counter: ``_skip(err)`` counts a message that cannot be
    used (a conversions.BadMessage) under its kind of fault and logs it, throttled per kind."""

    def _skip(self, err):
        self.skipped[err.kind] += 1
        loggers = self.__dict__.setdefault("_kind_loggers", {})
        logger = loggers.get(err.kind)
        if logger is None:
            logger = loggers[err.kind] = self.get_logger().get_child(err.kind)
        logger.warning(f"skipped: {err}", throttle_duration_sec=WARN_PERIOD)
