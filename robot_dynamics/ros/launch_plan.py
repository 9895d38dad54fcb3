"""What the launch files and the plain launch scripts start, resolved before anything starts (no ``launch`` import).

A plan is a list of node specs, each a dict of the keyword arguments of ``launch_ros.actions.Node`` (package,
executable, name, namespace, parameters, remappings, output). :func:`dynamics_plan` and :func:`closed_loop_plan`
resolve everything first -- every package the nodes come from (through the ament index), the URDF (a path, a
bundled robot's name or ``package://pkg/path``; a ``.xacro`` file expanded with its xacro arguments) and every
argument -- and raise :class:`LaunchError` naming every fault before a single process exists. The launch files
(``ros2 launch robot_dynamics dynamics.launch.py``) turn the specs into ``Node`` actions; the plain scripts
(launch_scripts/, for pip-installed ROS 2 without ``launch``) turn them into command lines with
:func:`command_line`, passing the parameters in a YAML parameter file, as launch_ros does, so that any URDF
text reaches the node intact.
"""
import math
import os
import sys
from pathlib import Path

from robot_dynamics.ros.outputs import switch_help, switches

PACKAGE = "robot_dynamics"
CONTROLLERS = {"adaptive": "adaptive_controller_node", "computed_torque": "computed_torque_node"}
# the module that runs each executable (python -m ...), for the plain scripts
MODULES = {"dynamics_node": ["robot_dynamics.ros.dynamics_node"], "sim_node": ["robot_dynamics.ros.sim_node"],
           "computed_torque_node": ["robot_dynamics.ros.computed_torque_node"],
           "adaptive_controller_node": ["robot_dynamics.ros.adaptive_controller_node"]}
TRUE, FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")

DYNAMICS_ARGUMENTS = {
    "urdf": ("arm7", "URDF or xacro file: a path, package://pkg/path, or a bundled robot (arm7, quadruped, ...)"),
    "xacro_args": ("", "arguments of a .xacro urdf, 'name:=value name2:=value2'"),
    "namespace": ("", "namespace of every node and topic (e.g. robot1)"),
    "frame_prefix": ("", "prefix of the robot's frames, as robot_state_publisher's (e.g. robot1/)"),
    "use_sim_time": ("false", "use the /clock topic"),
    "floating_base": ("false", "true: the root link is a free body whose state comes from odom"),
    "mimic": ("false", "true: mimic joints follow their masters"),
    "gravity": ("0.0 0.0 -9.81", "gravity in the world frame, three numbers [m/s^2]"),
    "drives_file": ("", "a drives YAML file (armature, damping, friction per joint) over the URDF's"),
    **{switch: ("false", switch_help(switch)) for switch in switches()},     # publish_regressor, ... (outputs.py)
    "use_robot_state_publisher": ("false", "publish the description with robot_state_publisher; the node reads "
                                           "it from the robot_description topic"),
}
CLOSED_LOOP_ARGUMENTS = {
    **{k: DYNAMICS_ARGUMENTS[k] for k in ("urdf", "xacro_args", "namespace", "frame_prefix", "use_sim_time",
                                          "gravity")},
    "controller": ("adaptive", "adaptive or computed_torque"),
    "dynamics_node": ("true", "also run dynamics_node"),
    "rate": ("1000.0", "simulator states per simulated second"),
    "real_time_factor": ("1.0", "0: as fast as the loop goes"),
    "lockstep": ("false", "the simulator waits for each command"),
    "payload_body": ("", "body carrying a payload the controller does not know"),
    "payload_mass": ("1.0", "payload mass [kg] (with payload_body)"),
}


class LaunchError(ValueError):
    """A launch that cannot start: every fault found, before any process was started."""


def flag(name, value, faults):
    """The boolean of argument ``name``'s text ``value``; a fault appended to ``faults`` unless true or false."""
    text = str(value).strip().lower()
    if text not in TRUE + FALSE:
        faults.append(f"argument {name}:={value} is not true or false")
    return text in TRUE


def number(name, value, faults):
    """The float of argument ``name``'s text ``value``; a fault appended to ``faults`` unless a finite number."""
    try:
        x = float(value)
    except ValueError:
        faults.append(f"argument {name}:={value} is not a number")
        return 0.0
    if not math.isfinite(x):
        faults.append(f"argument {name}:={value} is not finite")
    return x


def numbers(name, value, count, faults):
    """``count`` floats from ``value`` ("1 2 3", "[1, 2, 3]"); a fault appended to ``faults`` otherwise."""
    try:
        xs = [float(x) for x in str(value).replace(",", " ").replace("[", " ").replace("]", " ").split()]
    except ValueError:
        xs = []
    if len(xs) != count or not all(math.isfinite(x) for x in xs):
        faults.append(f"argument {name}:={value} is not {count} finite numbers")
    return xs


def require_packages(packages):
    """The install prefix of every package in ``packages``; LaunchError naming all the missing ones."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    prefixes, missing = {}, []
    for package in packages:
        try:
            prefixes[package] = get_package_prefix(package)
        except (PackageNotFoundError, OSError):
            missing.append(package)
    if missing:
        raise LaunchError(f"package(s) {', '.join(repr(p) for p in missing)} not found in the ament index "
                          f"(AMENT_PREFIX_PATH='{os.environ.get('AMENT_PREFIX_PATH', '')}'): install them (rosdep "
                          "install --from-paths src --ignore-src) and source the workspace; no node was started")
    return prefixes


def resolve_description(urdf, xacro_args, faults):
    """``(xml, path)`` of the ``urdf`` argument, a .xacro file expanded with ``xacro_args`` ("a:=1 b:=2")."""
    from robot_dynamics.ros.description import resolve_urdf_path
    from robot_dynamics.urdf import URDFError, expand_xacro, is_xacro
    try:
        path = resolve_urdf_path(urdf)
        if is_xacro(path):
            return expand_xacro(path, xacro_args.split()), path
        if xacro_args.strip():
            faults.append(f"argument xacro_args given, but urdf:={urdf} is not a .xacro file")
        return path.read_text(encoding="utf-8"), path
    except (URDFError, ValueError, OSError) as err:
        faults.append(f"argument urdf:={urdf}: {err}")
        return None, None


def _check(faults):
    if faults:
        raise LaunchError("cannot launch: " + "; ".join(faults) + "; no node was started")


def _common(namespace, use_sim_time):
    return {"namespace": namespace.strip("/"), "output": "screen"}, {"use_sim_time": use_sim_time}


def dynamics_plan(args, packages=True):
    """The node specs of dynamics.launch.py for the string arguments ``args`` (defaults: DYNAMICS_ARGUMENTS).

    dynamics_node gets the expanded description as its ``robot_description`` parameter, or, with
    use_robot_state_publisher, robot_state_publisher gets it and the node reads the topic. ``packages=False``
    skips the ament-index check (the plain script runs the nodes with ``python -m``).
    """
    a = {name: default for name, (default, _) in DYNAMICS_ARGUMENTS.items()}
    a.update(args)
    unknown = sorted(set(args) - set(DYNAMICS_ARGUMENTS))
    faults = [f"unknown argument(s) {unknown}"] if unknown else []
    use_rsp = flag("use_robot_state_publisher", a["use_robot_state_publisher"], faults)
    use_sim_time = flag("use_sim_time", a["use_sim_time"], faults)
    params = {"floating_base": flag("floating_base", a["floating_base"], faults),
              "mimic": flag("mimic", a["mimic"], faults),
              "gravity": numbers("gravity", a["gravity"], 3, faults),
              **{switch: flag(switch, a[switch], faults) for switch in switches()},
              "frame_prefix": a["frame_prefix"], "drives_file": a["drives_file"]}
    xml, _ = resolve_description(a["urdf"], a["xacro_args"], faults)
    _check(faults)
    if packages:
        require_packages([PACKAGE] + (["robot_state_publisher"] if use_rsp else []))
    common, sim_time = _common(a["namespace"], use_sim_time)
    params.update(sim_time)
    if not use_rsp:
        params["robot_description"] = xml
    specs = [dict(package=PACKAGE, executable="dynamics_node", name="dynamics_node",
                  parameters=[params], **common)]
    if use_rsp:
        specs.append(dict(package="robot_state_publisher", executable="robot_state_publisher",
                          name="robot_state_publisher", parameters=[{"robot_description": xml,
                                                                     "frame_prefix": a["frame_prefix"], **sim_time}],
                          **common))
    return specs


def closed_loop_plan(args, packages=True):
    """The node specs of closed_loop.launch.py: sim_node, dynamics_node (optional) and a controller, the
    controller last (a runner stops it first, so its last command, zero effort, reaches the simulator)."""
    a = {name: default for name, (default, _) in CLOSED_LOOP_ARGUMENTS.items()}
    a.update(args)
    unknown = sorted(set(args) - set(CLOSED_LOOP_ARGUMENTS))
    faults = [f"unknown argument(s) {unknown}"] if unknown else []
    if a["controller"] not in CONTROLLERS:
        faults.append(f"argument controller:={a['controller']} is not one of {sorted(CONTROLLERS)}")
    use_sim_time = flag("use_sim_time", a["use_sim_time"], faults)
    with_dynamics = flag("dynamics_node", a["dynamics_node"], faults)
    gravity = numbers("gravity", a["gravity"], 3, faults)
    sim = {"rate": number("rate", a["rate"], faults),
           "real_time_factor": number("real_time_factor", a["real_time_factor"], faults),
           "lockstep": flag("lockstep", a["lockstep"], faults), "publish_clock": use_sim_time,
           "frame_prefix": a["frame_prefix"], "gravity": gravity}
    if a["payload_body"]:
        sim.update(payload_body=a["payload_body"], payload_mass=number("payload_mass", a["payload_mass"], faults))
    xml, _ = resolve_description(a["urdf"], a["xacro_args"], faults)
    _check(faults)
    if packages:
        require_packages([PACKAGE])
    common, sim_time = _common(a["namespace"], use_sim_time)
    description = {"robot_description": xml, "gravity": gravity}
    specs = [dict(package=PACKAGE, executable="sim_node", name="sim_node",
                  parameters=[{**sim, "robot_description": xml}], **common)]       # the simulator keeps wall time
    if with_dynamics:
        specs.append(dict(package=PACKAGE, executable="dynamics_node", name="dynamics_node",
                          parameters=[{**description, "frame_prefix": a["frame_prefix"], **sim_time}], **common))
    controller = CONTROLLERS[a["controller"]]
    specs.append(dict(package=PACKAGE, executable=controller, name=controller,
                      parameters=[{**description, **sim_time}], **common))
    return specs


def write_parameters(spec, path):
    """Write the spec's parameters as a ROS parameter file (``/**: ros__parameters: ...``) at ``path``."""
    import yaml
    merged = {}
    for params in spec.get("parameters", []):
        merged.update(params)
    Path(path).write_text(yaml.safe_dump({"/**": {"ros__parameters": merged}}, default_flow_style=None))
    return path


def command_line(spec, params_file, extra_ros_args=()):
    """The command that runs ``spec`` without launch: ``python -m <module> --ros-args -r __ns:=... -r __node:=...
    --params-file <params_file>``, the parameters written there first."""
    write_parameters(spec, params_file)
    ros_args = ["-r", f"__node:={spec['name']}", "--params-file", str(params_file)]
    if spec.get("namespace"):
        ros_args = ["-r", f"__ns:=/{spec['namespace']}"] + ros_args
    for old, new in spec.get("remappings", []):
        ros_args += ["-r", f"{old}:={new}"]
    return [sys.executable, "-m", *MODULES[spec["executable"]], "--ros-args", *ros_args, *extra_ros_args]


def plain_script_refusal(script, launch_file):
    """What a plain script's ``generate_launch_description`` raises when ``ros2 launch`` is pointed at it."""
    raise LaunchError(f"{script} is a plain Python script (python {script} --help), not a launch file: "
                      f"ros2 launch robot_dynamics {launch_file}")
