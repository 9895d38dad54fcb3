"""relay_node: the bare rclpy baseline of dynamics_node: receive a joint state, publish an array, nothing else.

It subscribes to ``joint_states`` and publishes ``~/mass_matrix`` with the same QoS as dynamics_node, but
instead of computing M it copies the received positions into the head of a ``rows x rows`` Float64MultiArray
(``rows`` = 0: the positions alone). Measured side by side with dynamics_node (benchmarks/bench_ros_node.py),
the difference in latency is the cost of the dynamics.

Run: ``python -m robot_dynamics.ros.relay_node --ros-args -p rows:=7``.
"""
import sys

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics.ros.conversions import as_float_array, multiarray_layout, set_multiarray_data
from robot_dynamics.ros.qos import OUTPUT_QOS, STATE_QOS
from robot_dynamics.ros.runner import run


class RelayNode(Node):
    """Receive ``joint_states``, publish the positions as (the head of) a ``rows x rows`` matrix.

    Parameters
    ----------
    node_name : str
        Default name, overridden by ``--ros-args -r __node:=...``.
    **kwargs
        Passed to :class:`rclpy.node.Node`.
    """

    def __init__(self, node_name="relay_node", **kwargs):
        super().__init__(node_name, **kwargs)
        rows = self.declare_parameter("rows", 0, ParameterDescriptor(
            description="Size of the published square matrix (the positions fill its head); 0: the positions "
                        "as a vector.", read_only=True)).value
        self._buffer = np.zeros(rows * rows)
        self._msg = Float64MultiArray(layout=multiarray_layout((rows, rows))) if rows else Float64MultiArray()
        self._pub = self.create_publisher(Float64MultiArray, "~/mass_matrix", OUTPUT_QOS)
        self.create_subscription(JointState, "joint_states", self._on_joint_state, STATE_QOS)

    def _on_joint_state(self, msg):
        position = as_float_array(msg.position)
        if self._buffer.size:
            n = min(position.size, self._buffer.size)
            self._buffer[:n] = position[:n]
            set_multiarray_data(self._msg, self._buffer)
        else:
            self._msg.layout = multiarray_layout(position.shape)
            set_multiarray_data(self._msg, position)
        self._pub.publish(self._msg)


def main(args=None):
    """Console entry point: ``python -m robot_dynamics.ros.relay_node --ros-args -p rows:=N``."""
    return run(RelayNode, args)


if __name__ == "__main__":
    sys.exit(main())
