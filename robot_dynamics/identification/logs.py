"""Logs in (npz, CSV, ROS 2 bags) and identified parameters out (YAML, JSON, ROS 2 params, a corrected URDF).

A log is a Log: t (N,) seconds, q (N, nq), v, a, tau (N, nv) or None, and joint_names, the joints in the order of
the columns (a floating base's 7 position and 6 velocity coordinates come first, before the joints).

CSV logs have a header row naming their columns, in any order:

    t                                          time [s]
    q_<joint>, v_<joint>, a_<joint>            position, velocity, acceleration of a 1-DoF joint
    tau_<joint>                                its measured effort [N m or N]
    base_x base_y base_z base_qx base_qy base_qz base_qw      floating base: position, unit quaternion (world)
    base_vx base_vy base_vz base_wx base_wy base_wz            its twist [linear; angular] in the base frame
    base_dvx base_dvy base_dvz base_dwx base_dwy base_dwz      its derivative
    base_fx base_fy base_fz base_mx base_my base_mz            the wrench on the base (zero for a free body)

Every joint has a q_ column; v_, a_ and tau_ columns are given for every joint or for none.  ROS 2 bags (a bag
directory, or its .db3 or .mcap file) are read with rosbags, without ROS: the sensor_msgs/msg/JointState messages of
one topic give t (header stamp; the recording time where the stamp is zero), q (position), v (velocity) and tau
(effort), each message's columns matched to the joints by name.
"""
import json
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..friction import moving_coordinates
from ..model import build_model
from ..spatial import PARAMETER_NAMES, parameters_from_inertial, transform_parameters
from ..urdf import is_xacro, parse_urdf, rewrite_inertials
from . import optional
from .least_squares import friction_names

BASE_COLUMNS = {"q": ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw"),
                "v": ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz"),
                "a": ("base_dvx", "base_dvy", "base_dvz", "base_dwx", "base_dwy", "base_dwz"),
                "tau": ("base_fx", "base_fy", "base_fz", "base_mx", "base_my", "base_mz")}
KINDS = ("q", "v", "a", "tau")
ROS_NODE = "/**/adaptive_controller_node"      # matches the node in any namespace (a bare name matches only '/')


class Log(NamedTuple):
    """A robot's log: t (N,) [s], q (N, nq), v, a, tau (N, nv) or None, joint_names in the order of the columns
    (after the floating base's 7 position and 6 velocity coordinates, when q has 7 more columns than joints)."""
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray | None
    a: np.ndarray | None
    tau: np.ndarray | None
    joint_names: list


# --- logs in and out --------------------------------------------------------------------------------------------

def read_log(path, robot=None, topic=None):
    """The Log in the file ``path``: .npz (arrays t, q, v, a, tau, joint_names; v, a, tau optional), .csv (the
    columns of the module docstring) or a ROS 2 bag (a directory, .db3 or .mcap; JointState on ``topic``, default
    /joint_states).

    With ``robot`` the columns are reordered to robot.joint_names (joints the robot lacks are dropped) and a
    ValueError names any joint of the robot missing from the log.  ValueError for any unreadable or inconsistent
    content, naming the file and the column; FileNotFoundError for a missing file.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"log '{path}' does not exist")
    if topic is not None and not _is_bag(path):
        raise ValueError(f"log '{path}': a topic is only read from a ROS 2 bag")
    if _is_bag(path):
        log = _read_bag(path, topic or "/joint_states", robot)
    elif path.suffix == ".npz":
        log = _read_npz(path)
    elif path.suffix == ".csv":
        log = _read_csv(path)
    else:
        raise ValueError(f"log '{path}': unknown format (.npz, .csv, or a ROS 2 bag: a directory, .db3 or .mcap)")
    _check(log, path)
    return log if robot is None else _reordered(log, robot, path)


def write_log(path, log):
    """Write the Log ``log`` to ``path``: .npz (the arrays, joint_names) or .csv (the columns of the module
    docstring, numbers to 17 significant digits: they read back exactly)."""
    path = Path(path)
    _check(log, path)
    if path.suffix == ".npz":
        arrays = {kind: getattr(log, kind) for kind in ("t",) + KINDS if getattr(log, kind) is not None}
        with open(path, "wb") as file:
            np.savez(file, joint_names=np.array(log.joint_names, dtype=str), **arrays)
    elif path.suffix == ".csv":
        header, columns = ["t"], [log.t[:, None]]
        floating = _floating(log)
        for kind in KINDS:
            x = getattr(log, kind)
            if x is not None:
                header += (list(BASE_COLUMNS[kind]) if floating else []) + [f"{kind}_{j}" for j in log.joint_names]
                columns.append(x)
        np.savetxt(path, np.hstack(columns), fmt="%.17g", delimiter=",", header=",".join(header), comments="")
    else:
        raise ValueError(f"log '{path}': write .npz or .csv")


def _is_bag(path):
    return path.is_dir() or path.suffix in (".db3", ".mcap")


def _floating(log):
    """Whether the log carries a floating base: 7 position columns more than joints."""
    return log.q.shape[1] == len(log.joint_names) + 7


def _check(log, path):
    """Shapes agree, numbers are finite, t increases; else a ValueError naming the file and the array."""
    t = np.asarray(log.t)
    if t.ndim != 1 or len(t) == 0:
        raise ValueError(f"log '{path}': t must be a non-empty 1-D array, got shape {t.shape}")
    nj = len(log.joint_names)
    if len(set(log.joint_names)) != nj:
        raise ValueError(f"log '{path}': joint names repeat: {list(log.joint_names)}")
    widths = {"q": (nj, nj + 7), "v": (nj, nj + 6), "a": (nj, nj + 6), "tau": (nj, nj + 6)}
    floating = np.ndim(log.q) == 2 and log.q.shape[1] == nj + 7
    for kind in KINDS:
        x = getattr(log, kind)
        if x is None and kind == "q":
            raise ValueError(f"log '{path}': no positions q")
        if x is None:
            continue
        width = widths[kind][floating]
        if np.shape(x) != (len(t), width):
            raise ValueError(f"log '{path}': {kind} has shape {np.shape(x)}, expected ({len(t)}, {width}) for "
                             f"{len(t)} samples of {nj} joints{' and a floating base' if floating else ''}")
        bad = np.argwhere(~np.isfinite(x))
        if len(bad):
            raise ValueError(f"log '{path}': {kind} has a non-finite value at sample {bad[0][0]}, column "
                             f"{bad[0][1]}")
    bad = np.flatnonzero(~np.isfinite(t) | (np.diff(t, prepend=-np.inf) <= 0))
    if len(bad):
        k = bad[0]
        raise ValueError(f"log '{path}': t must increase strictly; it does not at sample {k} (t = {t[k]!r})")


def _reordered(log, robot, path):
    """The log's columns in robot.joint_names order (a floating base's coordinates first)."""
    names = robot.joint_names
    base = 6 if robot.floating_base else 0
    multi = [j.name for j in robot.model.joints if j.mimic is None and j.idx_v >= base and j.nv != 1]
    if multi:
        raise ValueError(f"logs hold 1-DoF joints; joint '{multi[0]}' of robot '{robot.model.name}' has "
                         f"several coordinates")
    missing = [name for name in names if name not in log.joint_names]
    if missing:
        raise ValueError(f"log '{path}' has no column for joint" + "s" * (len(missing) > 1) + " "
                         + ", ".join(f"'{name}'" for name in missing) + f" of robot '{robot.model.name}'")
    if _floating(log) != robot.floating_base:
        raise ValueError(f"log '{path}' {'has' if _floating(log) else 'lacks'} floating-base columns, robot "
                         f"'{robot.model.name}' has a {'floating' if robot.floating_base else 'fixed'} base")
    columns = np.array([log.joint_names.index(name) for name in names], dtype=int)

    def take(x, nb):
        return None if x is None else np.hstack([x[:, :nb], x[:, nb + columns]])

    return Log(log.t, take(log.q, 7 if base else 0), take(log.v, base), take(log.a, base), take(log.tau, base),
               list(names))


def _read_npz(path):
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except (OSError, ValueError) as error:
        raise ValueError(f"log '{path}': not a readable .npz file ({error})") from None
    for key in ("t", "q", "joint_names"):
        if key not in arrays:
            raise ValueError(f"log '{path}' has no array '{key}' (it holds {', '.join(sorted(arrays))})")
    unknown = sorted(set(arrays) - {"t", "joint_names", *KINDS})
    if unknown:
        raise ValueError(f"log '{path}': unknown array" + "s" * (len(unknown) > 1) + " "
                         + ", ".join(f"'{key}'" for key in unknown) + " (t, q, v, a, tau, joint_names)")
    if arrays["joint_names"].dtype.kind != "U" or arrays["joint_names"].ndim != 1:
        raise ValueError(f"log '{path}': joint_names must be a 1-D array of strings")
    return Log(*(np.asarray(arrays[key], dtype=float) if key in arrays else None for key in ("t",) + KINDS),
               [str(name) for name in arrays["joint_names"]])


def _read_csv(path):
    with open(path, newline="") as file:
        header = [column.strip() for column in file.readline().strip().split(",")]
    try:
        data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except ValueError as error:
        raise ValueError(f"log '{path}': not a table of numbers under its header ({error})") from None
    if data.shape[1] != len(header):
        raise ValueError(f"log '{path}': {len(header)} columns named in the header, {data.shape[1]} in the rows")
    if len(set(header)) != len(header):
        raise ValueError(f"log '{path}': column '{next(c for c in header if header.count(c) > 1)}' repeats")
    column = dict(zip(header, data.T))
    if "t" not in column:
        raise ValueError(f"log '{path}' has no column 't' (the time in seconds)")
    joints = list(dict.fromkeys(c.partition("_")[2] for c in header if c.partition("_")[0] in KINDS))
    base = {c for names in BASE_COLUMNS.values() for c in names}
    floating = any(c in base for c in header)
    unknown = [c for c in header if c != "t" and c not in base and c.partition("_")[0] not in KINDS]
    if unknown:
        raise ValueError(f"log '{path}': column '{unknown[0]}' is none of t, q_<joint>, v_<joint>, a_<joint>, "
                         f"tau_<joint> and the floating base's base_x .. base_mz")
    arrays = {}
    for kind in KINDS:
        names = (list(BASE_COLUMNS[kind]) if floating else []) + [f"{kind}_{j}" for j in joints]
        present = [c for c in names if c in column]
        if (present or kind == "q") and len(present) < len(names):
            missing = next(c for c in names if c not in column)
            raise ValueError(f"log '{path}' has no column '{missing}' (its other {kind} columns are there)")
        arrays[kind] = np.column_stack([column[c] for c in names]) if present else None
    return Log(column["t"], arrays["q"], arrays["v"], arrays["a"], arrays["tau"], joints)


def _read_bag(path, topic, robot):
    """JointState messages of ``topic`` in the bag at ``path``, columns in robot.joint_names order (or those of
    the first message)."""
    optional("rosbags.highlevel", f"reading the ROS 2 bag '{path}'")
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    if robot is not None and robot.floating_base:
        raise ValueError(f"bag '{path}': JointState carries joints only; log a floating base as CSV or npz")
    try:
        reader = AnyReader([path], default_typestore=get_typestore(Stores.ROS2_HUMBLE))
        reader.open()
    except Exception as error:                 # rosbags raises its own errors, and sqlite3's, for a bad bag
        raise ValueError(f"bag '{path}': cannot be read ({type(error).__name__}: {error})") from None
    try:
        connections = [c for c in reader.connections if c.topic == topic]
        states = sorted({c.topic for c in reader.connections if c.msgtype == "sensor_msgs/msg/JointState"})
        if not connections or connections[0].msgtype != "sensor_msgs/msg/JointState":
            raise ValueError(f"bag '{path}' has no sensor_msgs/msg/JointState topic '{topic}' (its JointState "
                             f"topics: {', '.join(states) or 'none'})")
        names = None if robot is None else list(robot.joint_names)
        t, fields = [], {"position": [], "velocity": [], "effort": []}
        for connection, recorded, raw in reader.messages(connections=connections):
            msg = reader.deserialize(raw, connection.msgtype)
            names = list(msg.name) if names is None else names
            index = {name: i for i, name in enumerate(msg.name)}
            stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            t.append(stamp if stamp else 1e-9 * recorded)
            missing = [name for name in names if name not in index]
            if missing:
                raise ValueError(f"bag '{path}': the message at t = {t[-1]!r} s on '{topic}' has no joint "
                                 f"'{missing[0]}'")
            columns = [index[name] for name in names]
            for field, values in fields.items():
                data = np.asarray(getattr(msg, field), dtype=float)
                if len(data) and len(data) != len(msg.name):
                    raise ValueError(f"bag '{path}': the message at t = {t[-1]!r} s has {len(data)} {field} for "
                                     f"{len(msg.name)} joints")
                values.append(data[columns] if len(data) else None)
    finally:
        reader.close()
    if not t:
        raise ValueError(f"bag '{path}' has no message on '{topic}'")
    arrays = {}
    for field, values in fields.items():
        given = [x is not None for x in values]
        if any(given) and not all(given):
            raise ValueError(f"bag '{path}': the message at t = {t[given.index(False)]!r} s has no {field}, "
                             f"others have")
        arrays[field] = np.array(values) if all(given) else None
    return Log(np.array(t), arrays["position"], arrays["velocity"], None, arrays["effort"], names)


# --- parameters out and in --------------------------------------------------------------------------------------

def save_parameters(path, robot, result_or_pi, friction=None):
    """Write identified parameters to ``path``, YAML (.yaml, .yml) or JSON (.json), floats that read back exactly.

    result_or_pi: an Identification (its parameters, drives, base parameters with their standard deviations,
    residual RMS per joint and condition number are written) or pi (10 nbodies,); friction: (n_f, 2) [F_v, F_c]
    per joint, when pi is given.  The file holds robot, body_names, parameters {body: {m, mcx, ..., Iyz}} and,
    when known, armature {joint: value}, friction_model (its name) and friction {joint: {viscous, coulomb, and
    the model's other parameters by their friction.py names}} (viscous, coulomb: the model's damping and friction,
    friction.py), and identification.
    """
    path = Path(path)
    dump = parameter_dumper(path)
    result = result_or_pi if hasattr(result_or_pi, "base_values") else None      # an Identification
    pi = _parameters_array(robot, result.parameters if result is not None else result_or_pi)
    document = {"robot": robot.model.name, "body_names": list(robot.body_names), "parameters": {
        body: dict(zip(PARAMETER_NAMES, map(float, row))) for body, row in zip(robot.body_names, pi.reshape(-1, 10))}}
    joints = friction_names(robot)
    if result is not None and result.armature is not None:
        document["armature"] = dict(zip(joints, map(float, result.armature)))
    if result is not None and result.model is not None:
        document["friction_model"] = result.model.name
        document["friction"] = _model_parameters(robot, result.model)
    elif friction is not None:
        friction = np.asarray(friction, dtype=float)
        if friction.shape != (len(joints), 2):
            raise ValueError(f"friction must be ({len(joints)}, 2) [F_v, F_c] per joint, got shape {friction.shape}")
        document["friction"] = {joint: {"viscous": float(fv), "coulomb": float(fc)}
                                for joint, (fv, fc) in zip(joints, friction)}
    if result is not None:
        document["identification"] = {
            "method": result.method, "n_samples": int(result.n_samples), "condition": float(result.condition),
            "base_parameters": [{"name": n, "value": float(x), "std": float(s)}
                                for n, x, s in zip(result.base.names, result.base_values, result.base_std)],
            "residual_rms": dict(zip(coordinate_names(robot), map(float, result.residual_rms)))}
        if result.held:
            document["identification"]["held_at_prior"] = list(result.held)
    with open(path, "w") as file:
        dump(document, file)


def _model_parameters(robot, model):
    """{joint: {viscous, coulomb, other parameters}} of a friction model (friction.py) on the moving coordinates."""
    fields = [name for name in (*model.coefficients, *model.nonlinear) if name not in ("damping", "friction")]
    document = {}
    for i, joint in zip(moving_coordinates(robot), friction_names(robot)):
        entry = {"viscous": float(model.damping[i]), "coulomb": float(model.friction[i])}
        entry.update({name: float(getattr(model, name)[i]) for name in fields})
        document[joint] = entry
    return document


def save_ros_parameters(path, robot, pi, drives=None):
    """A ROS 2 params file giving adaptive_controller_node (in any namespace) ``initial_parameters`` = pi, for
    ``--ros-args --params-file path``; drives: a dict of further parameters of the node by their full names (the
    drives', from drive_files.drives_parameters: "drives.armature", ...), written nested ({drives: {armature:
    ...}}) as ROS 2 params files write a parameter's namespaces, or None."""
    yaml = optional("yaml", f"writing the ROS 2 params file '{path}'")

    pi = _parameters_array(robot, pi)
    parameters = {"initial_parameters": [float(x) for x in pi]}
    for name, value in (drives or {}).items():
        *namespaces, last = name.split(".")
        section = parameters
        for namespace in namespaces:
            section = section.setdefault(namespace, {})
        section[last] = value
    with open(path, "w") as file:
        yaml.safe_dump({ROS_NODE: {"ros__parameters": parameters}}, file, default_flow_style=None, width=120)


def load_parameters(path, robot):
    """pi (10 nbodies,) in robot.body_names order from a file of save_parameters (YAML or JSON) or of
    save_ros_parameters.  ValueError naming the bodies missing from the file or unknown to the robot, a missing
    or non-numeric parameter, or a ROS params file of the wrong length."""
    path = Path(path)
    load = _loader(path)
    try:
        with open(path) as file:
            document = load(file)
    except OSError:
        raise
    except Exception as error:                  # yaml.YAMLError, json.JSONDecodeError
        raise ValueError(f"parameters file '{path}' cannot be parsed: {error}") from None
    if not isinstance(document, dict):
        raise ValueError(f"parameters file '{path}' holds no mapping")
    if "parameters" not in document:
        return _ros_parameters(document, path, robot)
    bodies = document["parameters"]
    if not isinstance(bodies, dict):
        raise ValueError(f"parameters file '{path}': 'parameters' must map body names to their parameters")
    missing = [b for b in robot.body_names if b not in bodies]
    unknown = [b for b in bodies if b not in robot.body_names]
    if missing or unknown:
        problems = ([f"no parameters for bod{'ies' if len(missing) > 1 else 'y'} " + ", ".join(map(repr, missing))]
                    if missing else [])
        problems += [f"bod{'ies' if len(unknown) > 1 else 'y'} " + ", ".join(map(repr, unknown))
                     + f" not in robot '{robot.model.name}'"] if unknown else []
        raise ValueError(f"parameters file '{path}': " + "; ".join(problems))
    pi = np.empty((robot.nbodies, 10))
    for k, body in enumerate(robot.body_names):
        values = bodies[body]
        for i, name in enumerate(PARAMETER_NAMES):
            value = values.get(name) if isinstance(values, dict) else None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
                raise ValueError(f"parameters file '{path}': body '{body}' needs a finite number '{name}', got "
                                 f"{value!r}")
            pi[k, i] = value
        extra = sorted(set(values) - set(PARAMETER_NAMES))
        if extra:
            raise ValueError(f"parameters file '{path}': body '{body}' has unknown parameter '{extra[0]}' "
                             f"(names: {', '.join(PARAMETER_NAMES)})")
    return pi.ravel()


def _ros_parameters(document, path, robot):
    """initial_parameters of the one node section of a ROS 2 params file."""
    found = [(node, section["ros__parameters"]["initial_parameters"]) for node, section in document.items()
             if isinstance(section, dict) and isinstance(section.get("ros__parameters"), dict)
             and "initial_parameters" in section["ros__parameters"]]
    if len(found) != 1:
        raise ValueError(f"parameters file '{path}' has neither 'parameters' (save_parameters) nor one node's "
                         f"ros__parameters: initial_parameters (a ROS 2 params file); it has {len(found)}")
    node, values = found[0]
    pi = np.asarray(values, dtype=float) if isinstance(values, list) else np.empty(0)
    if pi.shape != (10 * robot.nbodies,) or not np.all(np.isfinite(pi)):
        raise ValueError(f"parameters file '{path}': {node} initial_parameters must be {10 * robot.nbodies} finite "
                         f"numbers (10 per body of robot '{robot.model.name}'), got {len(values)}")
    return pi


def parameter_dumper(path):
    """dump(document, file) for a parameters file: YAML for .yaml/.yml, JSON for .json (identify's and
    identify_payload's writers); another suffix is a ValueError."""
    if path.suffix in (".yaml", ".yml"):
        yaml = optional("yaml", f"writing the YAML file '{path}'")
        return lambda document, file: yaml.safe_dump(document, file, sort_keys=False)
    if path.suffix == ".json":
        return lambda document, file: (json.dump(document, file, indent=1), file.write("\n"))
    raise ValueError(f"parameters file '{path}': write .yaml, .yml or .json")


def _loader(path):
    if path.suffix in (".yaml", ".yml"):
        return optional("yaml", f"reading the YAML file '{path}'").safe_load
    if path.suffix == ".json":
        return json.load
    raise ValueError(f"parameters file '{path}': read .yaml, .yml or .json")


def _parameters_array(robot, pi):
    pi = np.asarray(pi, dtype=float).ravel()
    if pi.shape != (10 * robot.nbodies,) or not np.all(np.isfinite(pi)):
        raise ValueError(f"parameters must be {10 * robot.nbodies} finite numbers (10 per body of robot "
                         f"'{robot.model.name}'), got {pi.size}")
    return pi


def coordinate_names(robot):
    """A name per row of tau (per velocity coordinate): a floating base's wrench base_fx .. base_mz, then each
    joint's name (joint[k] for a joint of several: least_squares.friction_names)."""
    return (list(BASE_COLUMNS["tau"]) if robot.floating_base else []) + friction_names(robot)


# --- corrected URDF ---------------------------------------------------------------------------------------------

def write_corrected_urdf(urdf_path, out_path, robot, pi):
    """Write to ``out_path`` the URDF ``urdf_path`` with the <inertial> blocks that give ``robot`` the parameters
    pi (10 nbodies,), every character outside those blocks unchanged (urdf.rewrite_inertials).

    Body k is its link plus the links fixed to it (paper 002, eq. (9)): those keep their <inertial>, and the
    body's own link receives pi_k less their contribution, so that the file loads to exactly pi.  ValueError when
    ``robot`` is not the URDF's (other bodies), or a link would need a negative mass (say, identified by ordinary
    least squares: identify physically consistent parameters instead).
    """
    urdf_path = Path(urdf_path)
    if is_xacro(os.fspath(urdf_path)):
        raise ValueError(f"'{urdf_path}' is a xacro file: expand it first (xacro {urdf_path.name} > robot.urdf) and "
                         f"correct the URDF")
    text = urdf_path.read_bytes().decode("utf-8")
    description = parse_urdf(text)
    model = build_model(description, floating_base=robot.floating_base)
    if model.body_names != tuple(robot.body_names):
        raise ValueError(f"robot '{robot.model.name}' (bodies {', '.join(robot.body_names)}) is not the robot of "
                         f"'{urdf_path}' (bodies {', '.join(model.body_names)})")
    pi = _parameters_array(robot, pi).reshape(-1, 10).copy()
    for name, link in description.links.items():
        frame = model.frames.get(name)
        if link.inertial is None or frame is None or frame.body < 0 or name == model.body_names[frame.body]:
            continue
        i = link.inertial
        pi[frame.body] -= transform_parameters(parameters_from_inertial(i.mass, i.com, i.inertia), frame.R, frame.p)
    corrected = rewrite_inertials(text, dict(zip(model.body_names, pi)))
    Path(out_path).write_bytes(corrected.encode("utf-8"))
