"""ROS 2 launch file for a full ROS 2 install (colcon build): dynamics_node, optionally robot_state_publisher.

    ros2 launch robot_dynamics dynamics.launch.py
    ros2 launch robot_dynamics dynamics.launch.py urdf:=quadruped floating_base:=true
    ros2 launch robot_dynamics dynamics.launch.py urdf:=/path/to/robot.urdf use_robot_state_publisher:=true

``urdf`` is a path or the name of a URDF bundled in share/robot_dynamics/urdf. By default the node gets the
XML as its ``robot_description`` parameter; with ``use_robot_state_publisher:=true`` robot_state_publisher
publishes it on the ``robot_description`` topic (transient local) and the node takes it from there.
(pip-installed ROS 2 has no ``launch`` package: use launch_scripts/dynamics.py instead.)
"""
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

ARGUMENTS = {
    "urdf": ("arm7", "URDF path, or the name of a bundled URDF (arm7, quadruped, humanoid, ...)"),
    "floating_base": ("false", "true: the root link is a free body whose state comes from odom_topic"),
    "gravity": ("0.0 0.0 -9.81", "gravity in the world frame, three numbers [m/s^2]"),
    "odom_topic": ("odom", "nav_msgs/Odometry of the floating base"),
    "publish_regressor": ("false", "publish ~/regressor once a ~/reference has arrived"),
    "use_robot_state_publisher": ("false", "publish the description with robot_state_publisher"),
}


def _urdf_path(name):
    path = Path(name)
    if path.is_file():
        return path
    bundled = Path(get_package_share_directory("robot_dynamics")) / "urdf"
    return bundled / (name if name.endswith(".urdf") else name + ".urdf")


def _nodes(context):
    def arg(name):
        return LaunchConfiguration(name).perform(context)

    xml = _urdf_path(arg("urdf")).read_text()
    use_rsp = arg("use_robot_state_publisher").lower() == "true"
    params = {
        "floating_base": arg("floating_base").lower() == "true",
        "gravity": [float(g) for g in arg("gravity").replace(",", " ").split()],
        "odom_topic": arg("odom_topic"),
        "publish_regressor": arg("publish_regressor").lower() == "true",
    }
    if not use_rsp:
        params["robot_description"] = xml
    nodes = [Node(package="robot_dynamics", executable="dynamics_node", name="dynamics_node",
                  parameters=[params], output="screen")]
    if use_rsp:
        nodes.append(Node(package="robot_state_publisher", executable="robot_state_publisher",
                          parameters=[{"robot_description": xml}], output="screen"))
    return nodes


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, (default, text) in ARGUMENTS.items()]
        + [OpaqueFunction(function=_nodes)])
