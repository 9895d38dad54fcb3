"""ROS 2 launch file: dynamics_node, optionally robot_state_publisher.

    ros2 launch robot_dynamics dynamics.launch.py
    ros2 launch robot_dynamics dynamics.launch.py urdf:=quadruped floating_base:=true namespace:=robot1
    ros2 launch robot_dynamics dynamics.launch.py urdf:=package://my_description/urdf/robot.urdf.xacro \
        xacro_args:="prefix:=r1_ use_gripper:=true" frame_prefix:=robot1/ use_robot_state_publisher:=true

Arguments: ``ros2 launch robot_dynamics dynamics.launch.py --show-args`` (robot_dynamics.ros.launch_plan.
DYNAMICS_ARGUMENTS). Every package, file and argument is resolved (a .xacro file expanded) before any node
starts: a missing robot_state_publisher, a bad path or a bad argument ends the launch with that message and no
process. Without the ``launch`` package (pip-installed ROS 2), run launch_scripts/dynamics.py instead.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from robot_dynamics.ros.launch_plan import DYNAMICS_ARGUMENTS, dynamics_plan


def _nodes(context):
    args = {name: LaunchConfiguration(name).perform(context) for name in DYNAMICS_ARGUMENTS}
    specs = dynamics_plan(args)                  # raises, naming every fault, before any Node exists
    return [Node(**spec) for spec in specs]


def generate_launch_description():
    """The arguments, then the nodes, made once every argument and package has resolved (launch_plan)."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, (default, text) in DYNAMICS_ARGUMENTS.items()]
        + [OpaqueFunction(function=_nodes)])
