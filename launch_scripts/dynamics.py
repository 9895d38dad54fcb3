#!/usr/bin/env python3
"""Start dynamics_node with parameters; optionally publish a URDF on robot_description first.

A plain Python launch script for pip-installed ROS 2 (no ``launch`` package needed)::

    python launch_scripts/dynamics.py --urdf arm7
    python launch_scripts/dynamics.py --urdf quadruped --floating-base --publish-description
    python launch_scripts/dynamics.py --urdf my_robot.urdf --publish-regressor -- -r joint_states:=/my/joints

``--urdf`` takes a path, ``package://pkg/path`` or the name of a bundled URDF (``arm7``, ``quadruped``, ...);
a ``.xacro`` file is expanded by the node (``-- -p xacro_args:="[name:=value]"``). Without
``--publish-description`` the node reads the file itself (``urdf_path``). With it, this script publishes the
file on ``robot_description`` (RELIABLE + TRANSIENT_LOCAL, as robot_state_publisher does) before starting the
node, which then takes its description from the topic: the stack runs without robot_state_publisher.
Arguments after ``--`` are appended to the node's ``--ros-args``. Ctrl-C stops both.
"""
import argparse
import signal
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_TREE = HERE.parent if (HERE.parent / "robot_dynamics" / "__init__.py").is_file() else None
if SOURCE_TREE is not None:                     # run from a checkout: its package, not an installed one
    sys.path.insert(0, str(SOURCE_TREE))

from robot_dynamics.ros.launch_plan import plain_script_refusal  # noqa: E402
from robot_dynamics.ros.processes import interrupt, node_environment, resolve_urdf, stop  # noqa: E402,F401


def generate_launch_description():
    """``ros2 launch`` pointed at this plain script: say which launch file to use."""
    plain_script_refusal("dynamics.py", "dynamics.launch.py")


def node_command(args, urdf_path):
    """The command line that starts dynamics_node with the parameters in ``args``."""
    gravity = ",".join(repr(float(g)) for g in args.gravity)
    ros_args = ["-r", f"__ns:={args.namespace}",
                "-p", f"floating_base:={str(args.floating_base).lower()}",
                "-p", f"gravity:=[{gravity}]",
                "-p", f"publish_regressor:={str(args.publish_regressor).lower()}",
                "-p", f"odom_topic:={args.odom_topic}"]
    if not args.publish_description:
        ros_args += ["-p", f"urdf_path:={urdf_path}"]
    return [sys.executable, "-m", "robot_dynamics.ros.dynamics_node", "--ros-args", *ros_args, *args.ros_args]


def publish_description(xml, namespace):
    """Publish ``xml`` once on ``<namespace>/robot_description``, transient local; returns the node that holds it.

    The DDS layer keeps the message and hands it to every subscriber that joins later, so the node need not
    be spun; it must only stay alive.
    """
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    from std_msgs.msg import String

    from robot_dynamics.ros.qos import DESCRIPTION_QOS

    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("robot_description_publisher", namespace=namespace)
    node.create_publisher(String, "robot_description", DESCRIPTION_QOS).publish(String(data=xml))
    node.get_logger().info(f"published robot_description ({len(xml)} characters, transient local)")
    return node


def parse_args(argv):
    """The script's options; what follows ``--`` goes to the node as ROS arguments (``args.ros_args``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--urdf", default="arm7", help="URDF path or bundled name (default: arm7)")
    parser.add_argument("--publish-description", action="store_true",
                        help="publish the URDF on robot_description (transient local) instead of passing urdf_path")
    parser.add_argument("--floating-base", action="store_true", help="the root link is a free body (odom)")
    parser.add_argument("--gravity", type=float, nargs=3, default=(0.0, 0.0, -9.81), metavar=("X", "Y", "Z"))
    parser.add_argument("--publish-regressor", action="store_true", help="publish ~/regressor")
    parser.add_argument("--odom-topic", default="odom")
    parser.add_argument("--namespace", default="/")
    ros_args = []
    if "--" in argv:
        split = argv.index("--")
        argv, ros_args = argv[:split], argv[split + 1:]
    args = parser.parse_args(argv)
    args.ros_args = ros_args
    return args


def main(argv=None):
    """Start the node (and the description publisher), wait for Ctrl-C or SIGTERM, stop them."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, interrupt)
    urdf_path = resolve_urdf(args.urdf)
    if args.publish_description:
        from robot_dynamics.ros.launch_plan import resolve_description
        faults = []
        xml, _ = resolve_description(str(urdf_path), "", faults)
        if faults:
            raise SystemExit("dynamics.py: " + "; ".join(faults))
    publisher = publish_description(xml, args.namespace) if args.publish_description else None
    node = subprocess.Popen(node_command(args, urdf_path), env=node_environment(SOURCE_TREE))
    try:
        return node.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop(node)
        if publisher is not None:
            import rclpy
            publisher.destroy_node()
            rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
