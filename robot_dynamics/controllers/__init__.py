"""Layer 4: controllers, reference trajectories and a simulator, on plain numpy arrays (no ROS).

- computed_torque: ComputedTorque, tau = M (a_d + K_d edot + K_p e) + C v + g
- adaptive: SlotineLi, tau = Y pi_hat - K_D s, pi_hat_dot = -Gamma Y^T s, with a physical-consistency projection;
  RelativeGains, its default gains and set-up; TrackingRecord, what its closed loop reports
- task_space: OperationalSpace, tau = J^T (Lambda xddot_cmd + eta) + N^T tau_0 for one frame, with a null-space
  posture task
- trajectories: PiecewiseTrajectory (JointTrajectory contents), quintic_waypoints, SumOfSines
- simulator: Simulator (RK4 / semi-implicit Euler on the configuration manifold), with_payload
"""
from .adaptive import (InertiaMetric, RelativeGains, SlotineLi, TrackingRecord, excitation_gain,
                       parameters_from_pseudo_inertia, pseudo_inertia)
from .computed_torque import ComputedTorque, gain_matrix, tracking_error
from .simulator import Rollout, Simulator, payload_parameters, with_payload
from .task_space import OperationalSpace
from .trajectories import PiecewiseTrajectory, Reference, SumOfSines, quintic_waypoints

__all__ = [
    "ComputedTorque", "InertiaMetric", "OperationalSpace", "PiecewiseTrajectory", "Reference", "RelativeGains",
    "Rollout", "Simulator", "SlotineLi", "SumOfSines", "TrackingRecord", "excitation_gain", "gain_matrix",
    "parameters_from_pseudo_inertia", "payload_parameters", "pseudo_inertia", "quintic_waypoints",
    "tracking_error", "with_payload",
]
