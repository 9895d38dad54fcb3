#!/usr/bin/env python3
"""Start a closed loop: sim_node, dynamics_node and a controller (adaptive or computed torque), with parameters.

A plain Python launch script for pip-installed ROS 2 (no ``launch`` package needed)::

    python launch_scripts/closed_loop.py                                  # arm7, adaptive, real time
    python launch_scripts/closed_loop.py --controller computed_torque
    python launch_scripts/closed_loop.py --payload-body link7 --payload-mass 2.0 --lockstep --real-time-factor 0
    python launch_scripts/closed_loop.py --urdf my_arm.urdf --no-dynamics-node --controller-param kd:=20.0

All nodes read the same URDF (``--urdf``: a path or a bundled name) and run in ``--namespace``: sim_node
simulates it (plus the payload, which the controller does not know) and publishes ``joint_states``;
dynamics_node answers every joint state with M, C, g, ...; the controller (``computed_torque_node`` or
``adaptive_controller_node``) sends efforts on ``effort_controller/commands`` once it has a reference, e.g.::

    ros2 topic pub --once /adaptive_controller_node/joint_references trajectory_msgs/msg/JointTrajectoryPoint \\
        "{positions: [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8]}"

``--sim-param`` and ``--controller-param NAME:=VALUE`` (repeatable) pass any other parameter of the node.
``--sim-time`` makes sim_node publish /clock and the other nodes use it. SIGINT or SIGTERM to this script stops
every node, the controller first, so that its last command, zero effort, reaches the simulator (Ctrl-C in a
terminal signals every node at once). If a node exits on its own, the others are stopped and the script returns
that node's exit code.
"""
import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_TREE = HERE.parent if (HERE.parent / "robot_dynamics" / "__init__.py").is_file() else None
if SOURCE_TREE is not None:                     # run from a checkout: its package, not an installed one
    sys.path.insert(0, str(SOURCE_TREE))

from robot_dynamics.ros.launch_plan import plain_script_refusal  # noqa: E402
from robot_dynamics.ros.processes import interrupt, node_environment, resolve_urdf, stop  # noqa: E402

CONTROLLERS = {"adaptive": "adaptive_controller_node", "computed_torque": "computed_torque_node"}


def generate_launch_description():
    """``ros2 launch`` pointed at this plain script: say which launch file to use."""
    plain_script_refusal("closed_loop.py", "closed_loop.launch.py")


def _flag(value):
    return str(bool(value)).lower()


def node_commands(args, urdf_path):
    """``{node name: command line}`` of the nodes to start, the controller last (it stops first)."""
    common = ["-r", f"__ns:={args.namespace}", "-p", f"urdf_path:={urdf_path}"]
    command_topic = []                          # the default, effort_controller/commands, follows the namespace
    sim_time = ["-p", f"use_sim_time:={_flag(args.sim_time)}"]               # the simulator keeps the wall clock
    sim = [*common, *command_topic, "-p", f"rate:={args.rate!r}", "-p", f"real_time_factor:={args.real_time_factor!r}",
           "-p", f"lockstep:={_flag(args.lockstep)}", "-p", f"publish_clock:={_flag(args.sim_time)}"]
    if args.payload_body:
        sim += ["-p", f"payload_body:={args.payload_body}", "-p", f"payload_mass:={args.payload_mass!r}",
                "-p", "payload_com:=[" + ",".join(repr(c) for c in args.payload_com) + "]"]
    if args.initial_positions:
        sim += ["-p", "initial_positions:=[" + ",".join(repr(x) for x in args.initial_positions) + "]"]
    commands = {"sim_node": ["robot_dynamics.ros.sim_node", "--ros-args", *sim, *_params(args.sim_param)]}
    if args.dynamics_node:
        commands["dynamics_node"] = ["robot_dynamics.ros.dynamics_node", "--ros-args", *common, *sim_time]
    controller = CONTROLLERS[args.controller]
    commands[controller] = [f"robot_dynamics.ros.{controller}", "--ros-args", *common, *sim_time,
                            *command_topic, *_params(args.controller_param)]
    return {name: [sys.executable, "-m", *command] for name, command in commands.items()}


def _params(assignments):
    return [x for assignment in assignments for x in ("-p", assignment)]


def parse_args(argv):
    """The script's options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--urdf", default="arm7", help="URDF path or bundled name (default: arm7)")
    parser.add_argument("--controller", choices=sorted(CONTROLLERS), default="adaptive")
    parser.add_argument("--namespace", default="/")
    parser.add_argument("--rate", type=float, default=1000.0, help="simulator states per simulated second")
    parser.add_argument("--real-time-factor", type=float, default=1.0, help="0: as fast as the loop goes")
    parser.add_argument("--lockstep", action="store_true", help="the simulator waits for each command")
    parser.add_argument("--sim-time", action="store_true", help="publish /clock; the other nodes use it")
    parser.add_argument("--payload-body", default="", help="body carrying a payload the controller does not know")
    parser.add_argument("--payload-mass", type=float, default=1.0, help="kg (with --payload-body)")
    parser.add_argument("--payload-com", type=float, nargs=3, default=(0.0, 0.0, 0.0), metavar=("X", "Y", "Z"),
                        help="payload centre of mass in the body frame [m]")
    parser.add_argument("--initial-positions", type=float, nargs="+", metavar="Q", help="joint positions at t = 0")
    parser.add_argument("--no-dynamics-node", dest="dynamics_node", action="store_false")
    parser.add_argument("--sim-param", action="append", default=[], metavar="NAME:=VALUE")
    parser.add_argument("--controller-param", action="append", default=[], metavar="NAME:=VALUE")
    return parser.parse_args(argv)


def main(argv=None):
    """Start the closed loop's nodes, wait for Ctrl-C or SIGTERM, stop them."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, interrupt)
    commands = node_commands(args, resolve_urdf(args.urdf))
    env = node_environment(SOURCE_TREE)
    processes = {}
    code = 0
    try:
        for name, command in commands.items():
            processes[name] = subprocess.Popen(command, env=env)
        while all(p.poll() is None for p in processes.values()):
            time.sleep(0.2)
        name, process = next((n, p) for n, p in processes.items() if p.poll() is not None)
        print(f"closed_loop.py: {name} exited with code {process.returncode}; stopping the others", file=sys.stderr)
        code = process.returncode
    except KeyboardInterrupt:
        pass
    finally:
        for process in reversed(list(processes.values())):
            stop(process)
    return code


if __name__ == "__main__":
    sys.exit(main())
