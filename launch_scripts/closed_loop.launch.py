"""ROS 2 launch file: a closed loop of sim_node, dynamics_node and a controller (adaptive or computed torque).

    ros2 launch robot_dynamics closed_loop.launch.py
    ros2 launch robot_dynamics closed_loop.launch.py controller:=computed_torque namespace:=robot1
    ros2 launch robot_dynamics closed_loop.launch.py payload_body:=link7 payload_mass:=2.0 use_sim_time:=true

All nodes read the same URDF (``urdf``: a path, package://pkg/path or a bundled robot; a .xacro file is expanded
with ``xacro_args``) and run in ``namespace``: sim_node simulates it (plus the payload, unknown to the controller)
and publishes joint_states; the controller answers each with efforts on effort_controller/commands (relative:
inside the namespace) once it has a reference, e.g.::

    ros2 topic pub --once /robot1/adaptive_controller_node/joint_references \
        trajectory_msgs/msg/JointTrajectoryPoint "{positions: [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8]}"

Every package, file and argument is resolved before any node starts. Arguments: ``--show-args``
(robot_dynamics.ros.launch_plan.CLOSED_LOOP_ARGUMENTS). Without ``launch``: launch_scripts/closed_loop.py.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from robot_dynamics.ros.launch_plan import CLOSED_LOOP_ARGUMENTS, closed_loop_plan


def _nodes(context):
    args = {name: LaunchConfiguration(name).perform(context) for name in CLOSED_LOOP_ARGUMENTS}
    specs = closed_loop_plan(args)               # raises, naming every fault, before any Node exists
    return [Node(**spec) for spec in specs]


def generate_launch_description():
    """The arguments, then the nodes, made once every argument and package has resolved (launch_plan)."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, (default, text) in CLOSED_LOOP_ARGUMENTS.items()]
        + [OpaqueFunction(function=_nodes)])
