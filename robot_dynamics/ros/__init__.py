"""ROS 2 adapters of robot_dynamics: the only package that imports rclpy.

Modules
-------
dynamics_node
    ``dynamics_node``: robot_description in; M, C, C v, g, the CoM, its Jacobian and the Slotine-Li regressor out.
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
