"""What every node of the package shares about the robot it serves.

The robot description follows the MoveIt pattern: the string parameter ``robot_description``; if empty, the
file named by ``urdf_path``; if both are empty, the ``robot_description`` topic (see qos.DESCRIPTION_QOS), to
which the node is then subscribed while it waits. ``urdf_path`` is a file path, ``package://pkg/path`` (the
package's share directory from the ament index), ``file:///path`` or the name of a bundled robot (``arm7``);
a path ending in ``.xacro`` is expanded with xacro and the parameter ``xacro_args`` (``["name:=value", ...]``).
Either may be MJCF instead of URDF (issue 38): a ``robot_description`` whose root element is ``<mujoco>``, a
``urdf_path`` ending in ``.xml`` or ``.mjcf`` (loaded from its path, so its ``<include>`` files and meshes are
found beside it), compiled by MuJoCo and converted as ``rd.load_mjcf`` does: its free joint, if any, is the
floating base (the parameter ``floating_base`` must say the same), its armature, damping and frictionloss the
drives; the parameter ``gravity`` applies, as for a URDF (MJCF's ``<option gravity>`` is not read).
A description given by parameter that cannot be read, does not parse or has no degree of freedom stops the
node at start-up with that message (exit code 2), as robot_state_publisher does.
Loading it, swapping it in and refusing it, the same for every node: robot_dynamics.ros.hotswap (dynamics_node
on every change, the controllers and the simulator once). This module does not import rclpy: the loader's child
process (robot_dynamics.ros.loader) uses it.
"""
import math
import os
import warnings
from pathlib import Path

import numpy as np

import robot_dynamics as rd
from robot_dynamics.bundled import bundled_names, bundled_urdf
from robot_dynamics.loading import is_mjcf
from robot_dynamics.urdf import expand_xacro, is_xacro

WARN_PERIOD = 2.0                 # s, throttle of each kind of warning


class TooLarge(ValueError):
    """A description that does not fit in the memory at hand (a MemoryError while loading it)."""


def describe(text, read_only=False, dynamic_typing=False):
    """The ParameterDescriptor of a node parameter."""
    from rcl_interfaces.msg import ParameterDescriptor     # here: the description loader process runs without ROS
    return ParameterDescriptor(description=text, read_only=read_only, dynamic_typing=dynamic_typing)


def valid_gravity(gravity):
    """True for the value of a ``gravity`` parameter: three finite doubles."""
    return len(gravity) == 3 and all(isinstance(g, float) and math.isfinite(g) for g in gravity)


def package_share(package):
    """The share directory of ``package``: the ament index, else (for this package, pip-installed outside an
    ament prefix) the directory that holds its bundled URDFs.  ValueError when it is not found."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    try:
        return Path(get_package_share_directory(package))
    except (PackageNotFoundError, OSError):              # OSError: AMENT_PREFIX_PATH is not set
        if package == "robot_dynamics":
            return bundled_urdf(bundled_names()[0]).parent.parent
        prefixes = os.environ.get("AMENT_PREFIX_PATH", "")
        raise ValueError(f"package '{package}' not found in the ament index (AMENT_PREFIX_PATH='{prefixes}'; "
                         "source the workspace's install/setup.bash)") from None


def resolve_urdf_path(urdf_path):
    """The file that ``urdf_path`` names: a path, ``file://...``, ``package://pkg/rel`` or a bundled robot's name.

    ValueError naming the parameter when there is no such file.
    """
    if urdf_path.startswith("package://"):
        package, _, relative = urdf_path[len("package://"):].partition("/")
        path = package_share(package) / relative
    elif urdf_path.startswith("file://"):
        path = Path(urdf_path[len("file://"):])
    else:
        path = Path(urdf_path).expanduser()
        if not path.exists() and os.sep not in urdf_path:
            try:
                path = bundled_urdf(urdf_path)
            except FileNotFoundError:
                pass
    if not path.is_file():
        looked = f" {path}" if str(path) != urdf_path else ""
        raise ValueError(f"urdf_path '{urdf_path}': no such file{looked} (a path, package://pkg/path, file:///path or "
                         f"a bundled robot: {', '.join(bundled_names())})")
    return path


def description_from_parameters(robot_description, urdf_path, xacro_args=None):
    """``(xml, source)`` from the parameters: the XML itself, else the text of the file ``urdf_path`` (expanded
    with ``xacro_args`` when it is a .xacro file), or for an MJCF file its path; ``(None, None)`` when both are
    empty (the node then listens to the topic).  ValueError when the file cannot be found, read or expanded."""
    if robot_description:
        if xacro_args:
            raise ValueError("xacro_args applies to a .xacro urdf_path, not to robot_description")
        return robot_description, "parameter robot_description"
    if urdf_path:
        path = resolve_urdf_path(urdf_path)
        if is_xacro(path):
            return expand_xacro(path, xacro_args), f"urdf_path '{urdf_path}' (xacro)"
        if xacro_args:
            raise ValueError(f"xacro_args given, but urdf_path '{urdf_path}' is not a .xacro file")
        if is_mjcf(path):
            return str(path.resolve()), f"urdf_path '{urdf_path}' (MJCF)"
        try:
            return path.read_text(encoding="utf-8"), f"urdf_path '{urdf_path}'"
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"urdf_path '{urdf_path}': cannot read {path}: {err}") from err
    return None, None


def check_degrees_of_freedom(robot, source):
    """ValueError when ``robot`` has nothing to compute (nv = 0): a description without a moving joint (often a
    .xacro file read as plain XML, whose macros are not links)."""
    if robot.nv == 0:
        raise ValueError(f"the description from {source} has no joints (nv = 0): nothing to compute; is it a "
                         "xacro file? (a urdf_path ending in .xacro is expanded)")


def check_floating_base(robot, floating_base, source):
    """ValueError unless an MJCF's ``robot`` has a floating base (its free joint) exactly when the parameter
    ``floating_base`` asks for one."""
    if robot.floating_base != floating_base:
        has = "has a free joint (a floating base)" if robot.floating_base else "has no free joint (a fixed base)"
        raise ValueError(f"the MJCF from {source} {has}; set floating_base:={str(robot.floating_base).lower()} "
                         "(an MJCF's free joint is its floating base)")


def check_finite(robot, source, regressor=False):
    """ValueError unless M, C, g, the CoM and its Jacobian (and, with ``regressor``, the Slotine-Li Y) are finite
    at the neutral configuration with unit velocities (and unit references): a description whose numbers
    overflow (a mass of 1e308, an origin of 1e200) is refused before it serves a single answer."""
    q, ones = robot.neutral(), np.ones(robot.nv)
    d = robot.dynamics(q, ones, ones, ones) if regressor else robot.dynamics(q, ones)
    for name, value in (("M", d.M), ("C", d.C), ("g", d.g), ("com", d.com), ("J_com", d.J_com), ("Y", d.Y)):
        if value is not None and not np.isfinite(value).all():
            raise ValueError(f"the description from {source} gives a non-finite {name} at the neutral "
                             "configuration: some mass, inertia or origin is too large")


def load_robot(logger, xml, floating_base, gravity, mimic=False, source="robot_description", regressor=False,
               drives=""):
    """``rd.load_urdf(xml, ..., drives=drives or None)`` (drives: a drives file's path), or ``rd.load_mjcf`` for
    MJCF (``xml`` its text or its file's path), with every URDFWarning or MJCFWarning (a description the library
    loads as given, such as an impossible inertia; an MJCF element it leaves out) logged as a warning of
    ``logger``.  URDFError or MJCFError (ValueErrors) when the description is refused, ValueError when the robot
    has no degree of freedom, when an MJCF's free joint and ``floating_base`` disagree, when its quantities are not
    finite at the neutral configuration (:func:`check_finite`), TooLarge (a ValueError) when it does not fit in
    memory."""
    mjcf = is_mjcf(xml)
    if not mjcf and not xml.lstrip().startswith("<"):
        raise ValueError(f"the description from {source} is not XML: it starts with {xml.lstrip()[:40]!r}")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", rd.URDFWarning)
            warnings.simplefilter("always", rd.MJCFWarning)
            warnings.simplefilter("error", RuntimeWarning)          # numpy's overflow: a non-finite model
            if mjcf:
                robot = rd.load_mjcf(xml, gravity=tuple(gravity), mimic=mimic, drives=drives or None)
                check_floating_base(robot, floating_base, source)
            else:
                robot = rd.load_urdf(xml, floating_base=floating_base, gravity=tuple(gravity), mimic=mimic,
                                     drives=drives or None)
            check_degrees_of_freedom(robot, source)
            check_finite(robot, source, regressor)
    except MemoryError:
        raise TooLarge(f"the description from {source} does not fit in memory") from None
    except (RuntimeWarning, ArithmeticError) as err:
        raise ValueError(f"the description from {source} overflows: {err}: some mass, inertia or origin is too "
                         "large") from None
    for warning in caught:
        logger.warning(f"robot description: {warning.category.__name__}: {warning.message}")
    return robot
