"""Model files and models -> Robot: a URDF (load_urdf), an MJCF (load_mjcf) or a compiled mujoco.MjModel
(from_mujoco), either file told by its extension or root element (load, is_mjcf), and the joint limits the file
gives (joint_limits)."""
import os
import re

from .drive_files import drive_values
from .mjcf import compile_mjcf, model_from_mujoco
from .mjcf import joint_limits as mjcf_joint_limits
from .model import build_model
from .robot import Robot
from .urdf import MAX_LINKS, URDFError, is_xml_text, parse_urdf
from .urdf import joint_limits as urdf_joint_limits


def load_urdf(source, floating_base=False, gravity=(0.0, 0.0, -9.81), mimic=False, strict_inertia=False,
              xacro_args=None, drives=None):
    """Robot of a URDF file path or XML string.

    floating_base: put a free 6-DoF joint between the world and the root link (Pinocchio's free flyer).
    gravity: (3,) in the world frame.  mimic: False -> mimic joints are independent DoFs (Pinocchio's default);
    True -> a mimic joint follows its master, q = multiplier q_master + offset, and is not a DoF.
    strict_inertia: refuse physically impossible inertias (not PSD, or I1 + I2 < I3) instead of loading them with
    a URDFWarning; many published URDFs carry such placeholder inertias, and Pinocchio loads them.
    A path ending in ``.xacro`` is expanded with the xacro package and ``xacro_args`` ({name: value} or
    ["name:=value", ...]).  Raises URDFError (a ValueError) naming the element at fault.
    The drives (robot.armature, damping, friction) are the URDF's -- joint <dynamics>, and the motor inertias of
    transmissions (urdf/transmissions.py) -- and then those of ``drives``: the path of a drives YAML file or its
    content as a mapping (drive_files.py), each field a row names replacing the URDF's (a ValueError naming the
    file, the joint and the key at fault).
    """
    try:
        description = parse_urdf(source, strict_inertia=strict_inertia, xacro_args=xacro_args)
        model = build_model(description, floating_base=floating_base, gravity=gravity, mimic=mimic)
        if drives is not None:
            model = model.with_drives(**drive_values(drives, model))
        return Robot(model)
    except MemoryError:                             # a ValueError, as for any other description it cannot load
        pass
    raise URDFError(f"out of memory while loading the URDF (robot_dynamics loads at most {MAX_LINKS} links, in "
                    f"memory linear in their number)")   # outside the handler: the failed load's frames are freed


def from_mujoco(model, gravity=None, mimic=False, drives=None):
    """Robot of a compiled mujoco.MjModel (mjcf.py says how each of its elements maps): a free joint that carries
    every moving body is the floating base, bodies and sites are frames, the dofs' armature, damping and frictionloss
    are the drives.  gravity: (3,), None for the model's opt.gravity.  mimic: False -> every joint is a DoF and
    equality constraints are left out (a MJCFWarning); True -> a linear coupling of two joints (an MJCF <equality>
    <joint>) makes the first a mimic of the second, as load_urdf's mimic.  drives: as load_urdf's, replacing the
    model's.  MJCFError (a ValueError) naming an element the library cannot represent (a tendon's armature); a
    MJCFWarning naming each element it leaves out (tendons, equality constraints, ...).  Our q and v differ from
    MuJoCo's qpos and qvel at a free joint: mjcf.MujocoCoordinates maps them."""
    robot_model = model_from_mujoco(model, gravity=gravity, mimic=mimic)
    if drives is not None:
        robot_model = robot_model.with_drives(**drive_values(drives, robot_model))
    return Robot(robot_model)


def load_mjcf(source, gravity=None, mimic=False, drives=None):
    """Robot of an MJCF file path or XML string, compiled by MuJoCo (the `mujoco` package) and converted by
    from_mujoco (gravity, mimic, drives: its).  MJCFError (a ValueError) with MuJoCo's message when it cannot
    compile."""
    return from_mujoco(compile_mjcf(source), gravity=gravity, mimic=mimic, drives=drives)


MJCF_SUFFIXES, URDF_SUFFIXES = (".xml", ".mjcf"), (".urdf", ".xacro")


def is_mjcf(source):
    """Whether source is MJCF: XML text whose root element is <mujoco>, or a path ending in one of MJCF_SUFFIXES."""
    if is_xml_text(source):
        text = source.decode(errors="ignore") if isinstance(source, bytes) else source
        root = re.search(r"<(?![?!])\s*([^\s/>]+)", text)
        return root is not None and root.group(1) == "mujoco"
    return os.path.splitext(os.fsdecode(source))[1].lower() in MJCF_SUFFIXES


def joint_limits(source, robot):
    """The joint limits (urdf.Limits: lower, upper, velocity, effort over robot's coordinates, a free base's left
    out) of the model file or text ``robot`` was loaded from: a URDF's <limit> tags (urdf.joint_limits) or an
    MJCF's ranges (mjcf.joint_limits, which also takes a compiled mujoco.MjModel), told as `load` tells them."""
    if hasattr(source, "jnt_range") or is_mjcf(source):
        return mjcf_joint_limits(source, robot)
    return urdf_joint_limits(source, robot)


def load(source, **options):
    """Robot of a URDF (``.urdf``, ``.xacro``) or MJCF (``.xml``, ``.mjcf``) file, told by its extension, or of XML
    text, told by its root element (<robot> or <mujoco>); options go to load_urdf or load_mjcf."""
    if not is_xml_text(source):
        suffix = os.path.splitext(os.fsdecode(source))[1].lower()
        if suffix not in URDF_SUFFIXES + MJCF_SUFFIXES:
            raise ValueError(f"'{os.fsdecode(source)}': a model file ends in .urdf or .xacro (URDF), .xml or .mjcf "
                             f"(MJCF)")
    return load_mjcf(source, **options) if is_mjcf(source) else load_urdf(source, **options)
