"""computed_torque_node: tau = M(q) (a_d + K_d edot + K_p e) + C(q, v) v + g(q) on every joint state.

Run it as ``computed_torque_node --ros-args -p urdf_path:=arm7.urdf`` (pip install), ``ros2 run robot_dynamics
computed_torque_node ...`` or ``python -m robot_dynamics.ros.computed_torque_node --ros-args ...``. Its topics,
clock and shared parameters: robot_dynamics.ros.controller_node.
"""
import sys

import numpy as np

from robot_dynamics.controllers import ComputedTorque, gain_matrix
from robot_dynamics.ros.controller_node import ControllerNode
from robot_dynamics.ros.description import describe
from robot_dynamics.ros.runner import run


class ComputedTorqueNode(ControllerNode):
    """``computed_torque_node``: tau = M(q) (a_d + K_d edot + K_p e) + C(q, v) v + g(q) with the described model.

    Parameters ``kp`` [1/s^2] and ``kd`` [1/s]: one number for every joint or one per joint (``joints`` order);
    with the exact model each joint's error obeys edd + kd ed + kp e = 0.
    """

    GAINS = ("kp", "kd")

    def __init__(self, node_name="computed_torque_node", **kwargs):
        self.controller = None
        super().__init__(node_name, **kwargs)

    def _declare_gains(self):
        self.declare_parameter("kp", 100.0, describe(
            "Stiffness [1/s^2]: one number, or one per joint in the order of joints.", dynamic_typing=True))
        self.declare_parameter("kd", 20.0, describe(
            "Damping [1/s]: one number, or one per joint in the order of joints.", dynamic_typing=True))

    def _prepare(self, robot):
        self.controller = ComputedTorque(robot, 0.0, 0.0)
        self._tau = np.empty(robot.nv)            # the torque of each state, model order
        self._set_gains()

    def _set_gains(self):
        c, nv = self.controller, self.controller.robot.nv
        c.K_p = gain_matrix(self._per_joint("kp", self.get_parameter("kp").value), nv)
        c.K_d = gain_matrix(self._per_joint("kd", self.get_parameter("kd").value), nv)

    def _torque(self, q, v, reference, dt):
        return self.controller.torque(q, v, *reference, out=self._tau)


def main(args=None):
    """Console entry point ``computed_torque_node --ros-args -p name:=value ...``."""
    return run(ComputedTorqueNode, args)


if __name__ == "__main__":
    sys.exit(main())
