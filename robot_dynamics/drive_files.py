"""Drives in files: a drives YAML file read and written, a URDF's <dynamics> written back, ROS 2 parameters.

The drives (drives.py: armature, damping, friction per coordinate of v) come from the URDF (urdf/: <dynamics> and
the motor inertias of transmissions); a drives file gives what the URDF lacks or corrects it,
``load_urdf(path, drives="drives.yaml")`` or ``robot.with_drives(**read_drives("drives.yaml", robot))``.  Its
format, one row per joint:

```yaml
# robot_dynamics drives: one row per joint (any of armature, damping, friction; or motor_inertia with reduction)
joints:
  panda_joint1: {armature: 0.3, damping: 0.2, friction: 0.8}
  panda_joint2: {motor_inertia: 1.2e-4, reduction: 100, damping: 0.1}   # armature = motor_inertia reduction^2
```

- A row is named by a coordinate of robot.coordinate_names: a 1-DoF joint's name; ``<joint>[k]`` for the k-th
  coordinate of a planar joint; ``base_linear_x`` .. ``base_angular_z`` for a floating base's six.  A mimic joint
  of a robot loaded with mimic=True has no coordinate, and no row (give its master's).
- armature (kg m^2, or kg for a prismatic joint), damping (N m s/rad, N s/m), friction (N m, N): finite numbers
  >= 0.  motor_inertia I_m (>= 0) and reduction N (a finite non-zero number) come together and give armature =
  I_m N^2, in place of an armature in the same row.
- A field a row names replaces the URDF's value for that coordinate; every other value stays the URDF's.
- Numbers are YAML numbers, or strings that are URDF numbers (xs:double): PyYAML reads ``1e-3`` (no dot) as a
  string, and it is taken as 0.001.
- Anything else -- another top-level key than ``joints``, an unknown key in a row, a coordinate the robot lacks, a
  joint named twice, a bad value -- is a ValueError naming the file, the joint and the key.

write_drives writes such a file that reads back to the same drives exactly; write_urdf_dynamics writes damping
and friction into a URDF's <dynamics> elements (a URDF has no place for armature: the drives file carries it);
drives_parameters and write_drives_parameters give the drives as ROS 2 parameters (``drives.joints``,
``drives.armature``, ``drives.damping``, ``drives.friction``: lists in the order of ``drives.joints``).  A robot
with a friction model (drives.Drives.model) is refused by the writers: these files hold viscous and Coulomb
coefficients only.  PyYAML (``pip install pyyaml``; ROS's python3-yaml) reads and writes the YAML.
"""
import functools
import importlib
import math
import os
import re

import numpy as np

from .drives import FIELDS, MAX_DRIVE
from .urdf import DOUBLE, is_xacro, rewrite_dynamics

KEYS = FIELDS + ("motor_inertia", "reduction")
HEADER = ("# robot_dynamics drives: one row per joint (any of armature, damping, friction; or motor_inertia with "
          "reduction)\n")
ROS_NODE = "/**"                          # a ROS 2 params file's section that every node reads
_URDF_NUMBER = re.compile(DOUBLE)


def read_drives(source, robot):
    """The drives of ``robot`` with a drives file's rows in place (module docstring).

    source: the path of a drives YAML file, or its content as a mapping ({"joints": {...}}).
    -> {"armature": (nv,), "damping": (nv,), "friction": (nv,)}, for robot.with_drives(**...).
    ValueError naming the file, the joint and the key at fault.
    """
    return drive_values(source, robot.model)


def drive_values(source, model):
    """read_drives on a model.RobotModel (load_urdf applies a drives file before it makes the Robot)."""
    document, origin = _document(source)
    if not isinstance(document, dict) or set(document) != {"joints"}:
        keys = ", ".join(f"'{key}'" for key in document) if isinstance(document, dict) else type(document).__name__
        raise ValueError(f"{origin}: expected one top-level key 'joints' (a mapping of joint names to their "
                         f"drives), got {keys or 'nothing'}")
    rows = document["joints"] or {}
    if not isinstance(rows, dict):
        raise ValueError(f"{origin}: 'joints' must map joint names to their drives, got {type(rows).__name__}")
    names = model.coordinate_names
    index = {name: i for i, name in enumerate(names)}
    values = {name: np.array(getattr(model.drives, name)) for name in FIELDS}
    for joint, row in rows.items():
        where = f"{origin}: joint '{joint}'"
        if joint not in index:
            raise ValueError(f"{where}: {_no_coordinate(model, joint)}")
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a mapping of {', '.join(KEYS)}, got {row!r}")
        unknown = [key for key in row if key not in KEYS]
        if unknown:
            raise ValueError(f"{where}: unknown key '{unknown[0]}' (keys: {', '.join(KEYS)})")
        row = {key: _number(value, f"{where}, key '{key}'") for key, value in row.items()}
        for key in FIELDS + ("motor_inertia",):
            if key in row and row[key] < 0:
                raise ValueError(f"{where}, key '{key}': {row[key]!r} is negative")
        if ("motor_inertia" in row) != ("reduction" in row):
            given, missing = ("motor_inertia", "reduction") if "motor_inertia" in row else ("reduction",
                                                                                            "motor_inertia")
            raise ValueError(f"{where}: key '{given}' needs '{missing}' (armature = motor_inertia reduction^2; "
                             f"reduction 1 for a direct drive)")
        if "motor_inertia" in row:
            if "armature" in row:
                raise ValueError(f"{where}: key 'armature' and keys 'motor_inertia', 'reduction' both give the "
                                 f"armature; give one")
            if row["reduction"] == 0:
                raise ValueError(f"{where}, key 'reduction': 0 is no reduction (the motor would not move the joint)")
            row["armature"] = row["motor_inertia"] * row["reduction"] ** 2
        for key in FIELDS:
            if key in row:
                if not row[key] <= MAX_DRIVE:
                    raise ValueError(f"{where}, key '{key}': {row[key]!r} is beyond {MAX_DRIVE:g} (drives.MAX_DRIVE)")
                values[key][index[joint]] = row[key]
    return values


def write_drives(robot, path):
    """Write the drives of ``robot`` to the drives YAML file ``path``: a row per coordinate of v (module docstring)
    with its armature, damping and friction, numbers that read back exactly (read_drives(path, robot) gives
    robot.armature, robot.damping, robot.friction)."""
    drives = _coefficients(robot, path)
    rows = {name: {field: float(getattr(drives, field)[i]) for field in FIELDS}
            for i, name in enumerate(robot.coordinate_names)}
    text = _yaml().safe_dump({"joints": rows}, default_flow_style=None, sort_keys=False, width=1 << 16)
    with open(path, "w") as file:
        file.write(HEADER + text)


def write_urdf_dynamics(urdf_path, out_path, robot):
    """Write to ``out_path`` the URDF ``urdf_path`` with each 1-DoF joint's <dynamics damping friction> those of
    ``robot``, every other character unchanged (urdf.rewrite_dynamics).

    A mimic joint of a robot loaded with mimic=True keeps its <dynamics> (it has no coordinate).  Armature has no
    place in a URDF (write_drives carries it).  ValueError when ``robot`` has a joint the URDF lacks ("no joint
    named ... in the URDF"), a non-zero damping or friction on a coordinate of a planar joint or a floating base
    (a URDF's <dynamics> is read for 1-DoF joints only), or a value beyond the bound of URDF numbers
    (urdf.MAX_MAGNITUDE); a xacro file is refused (expand it first).
    """
    drives = _coefficients(robot, out_path)
    if is_xacro(os.fspath(urdf_path)):
        raise ValueError(f"'{urdf_path}' is a xacro file: expand it first (xacro robot.urdf.xacro > robot.urdf) and "
                         f"write the URDF")
    with open(urdf_path, "rb") as file:
        text = file.read().decode("utf-8")
    values = {}
    for joint in robot.model.joints:
        if joint.mimic is not None:
            continue
        rows = slice(joint.idx_v, joint.idx_v + joint.nv)
        if joint.nv > 1:                                 # a planar joint or the floating base
            if drives.damping[rows].any() or drives.friction[rows].any():
                raise ValueError(f"joint '{joint.name}' ({joint.type}) has damping or friction, which a URDF's "
                                 f"<dynamics> cannot hold (it is read for 1-DoF joints only): write_drives keeps "
                                 f"them")
            continue
        values[joint.name] = (float(drives.damping[rows][0]), float(drives.friction[rows][0]))
    text = rewrite_dynamics(text, values)                 # ValueError for a joint the URDF lacks
    with open(out_path, "w", encoding="utf-8", newline="") as file:
        file.write(text)


def drives_parameters(robot):
    """The drives of ``robot`` as ROS 2 parameters: {"drives.joints": coordinate names, "drives.armature": [...],
    "drives.damping": [...], "drives.friction": [...]}, lists in the order of drives.joints."""
    drives = _coefficients(robot, "ROS parameters")
    parameters = {"drives.joints": list(robot.coordinate_names)}
    parameters.update({f"drives.{field}": [float(x) for x in getattr(drives, field)] for field in FIELDS})
    return parameters


def write_drives_parameters(robot, path, node=ROS_NODE):
    """Write drives_parameters(robot) to the ROS 2 params file ``path`` (``--ros-args --params-file path``), in
    the section of ``node`` ("/**": every node; a node's name, as "/dynamics_node", for that node only):
    ``node: {ros__parameters: {drives: {joints: [...], armature: [...], ...}}}``."""
    parameters = {name.split(".", 1)[1]: value for name, value in drives_parameters(robot).items()}
    with open(path, "w") as file:
        _yaml().safe_dump({node: {"ros__parameters": {"drives": parameters}}}, file, default_flow_style=None,
                          sort_keys=False, width=120)


def _coefficients(robot, target):
    """The drives of ``robot``, refused when a friction model is set (these files hold coefficients only)."""
    drives = robot.model.drives
    if drives.model is not None:
        raise ValueError(f"robot '{robot.model.name}' has a friction model ({type(drives.model).__name__}), which "
                         f"{target} cannot hold: these files give viscous and Coulomb coefficients only")
    return drives


def _no_coordinate(model, joint):
    """Why a drives file's row names no coordinate of the model."""
    for info in model.joints:
        if info.name == joint and info.mimic is not None:
            return (f"a mimic joint of a robot loaded with mimic=True has no coordinate of its own: give its master "
                    f"'{info.mimic}' the drives")
        if info.name == joint and info.nv > 1:
            coordinates = ", ".join(f"'{joint}[{k}]'" for k in range(info.nv))
            return f"a {info.type} joint has {info.nv} coordinates: name them {coordinates}"
    return f"robot '{model.name}' has no such coordinate (robot.coordinate_names; a fixed joint has none)"


def _number(value, where):
    """A finite float of a YAML number, or of a string that is a URDF number (module docstring)."""
    if isinstance(value, str) and _URDF_NUMBER.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _document(source):
    """(the content of a drives file, its name for messages): source a path, or a mapping taken as the content."""
    if isinstance(source, dict):
        return source, "drives mapping"
    path = os.fspath(source)
    origin = f"drives file '{path}'"
    yaml = _yaml()
    try:
        with open(path) as file:
            return yaml.load(file, Loader=_loader()), origin
    except OSError as error:
        raise ValueError(f"cannot read {origin}: {error.strerror or error}") from error
    except yaml.YAMLError as error:
        raise ValueError(f"{origin} is not valid YAML: {error}") from None


def _yaml():
    try:
        return importlib.import_module("yaml")
    except ImportError as error:
        raise ImportError("drives files are YAML, read and written with PyYAML, which is not installed: pip install "
                          "pyyaml (or apt install python3-yaml)") from error


@functools.cache
def _loader():
    """yaml.SafeLoader that refuses a key given twice in one mapping (PyYAML keeps the last silently)."""
    yaml = _yaml()

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader, node):
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError("in a mapping", node.start_mark, f"key '{key}' given twice",
                                                        key_node.start_mark)
            seen.add(key if isinstance(key, str) else id(key_node))
        return loader.construct_mapping(node)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return Loader
