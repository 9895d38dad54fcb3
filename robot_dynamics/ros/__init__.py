"""ROS 2 adapters of robot_dynamics: the only package that imports rclpy.

Modules
-------
dynamics_node
    ``dynamics_node``: robot_description in; M, C, C v, g, the CoM, its Jacobian and the Slotine-Li regressor out
    (``lifecycle_node``: the same as a managed node).
outputs, publishing
    dynamics_node's outputs, a row each (topic, message, shape from the registry, value), and their publishers.
inputs, dynamics_parameters
    dynamics_node's state from its input messages; its own parameters.
hotswap
    The robot description of every node: loaded, checked, swapped in, refused, set back (with description.py and
    loader.py).
robot_node, controller_node, computed_torque_node, adaptive_controller_node, sim_node
    The nodes that serve one robot, loaded once: the controllers (their shared base, one module each) and the
    simulator.
relay_node
    The bare rclpy baseline (receive, publish) that benchmarks/bench_ros_node.py measures beside dynamics_node.
conversions
    Messages <-> numpy arrays (Float64MultiArray layout, JointState merging, Odometry, references).
qos
    The QoS profiles of state streams, outputs and robot_description.

ROS 2 from pip (``pip install 'robot_dynamics[ros]'``, Kilted wheels ``ros-rclpy``, ``ros-rmw-fastrtps-cpp``,
the message packages) needs no sourced setup file: the wheel ``ros-wheels-bootstrapper`` installs a ``.pth``
hook that, at the start of every Python process of that environment, sets ``LD_LIBRARY_PATH`` to the wheels'
libraries and re-executes the interpreter once. Fast DDS (``rmw_fastrtps_cpp``) is the only middleware the
wheels bring, and the default. Set ``ROS_DOMAIN_ID`` to keep runs apart and
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` to keep discovery on this machine; both are read when rclpy
initialises its context, so set them before starting the node (or before ``rclpy.init()``).
Importing this package imports rclpy; ``import robot_dynamics`` alone does not.
"""
