"""Layer 4: controllers, reference trajectories and a simulator, on plain numpy arrays (no ROS).

- computed_torque: ComputedTorque, tau = M (a_d + K_d edot + K_p e) + C v + g
- adaptive: SlotineLi, tau = Y pi_hat - K_D s, pi_hat_dot = -Gamma Y^T s, with a physical-consistency projection
  (the pseudo-inertia and its metrics, exported here, live in robot_dynamics/inertia.py); TrackingRecord, what an
  adaptive loop reports
- composite: CompositeSlotineLi, the default adaptive controller (tracking plus torque-prediction errors, a
  least-squares gain, a log-det barrier), RelativeGains, its settings from a bandwidth and a rated payload, and
  MomentumFilter, the filtered momentum regressor W with W pi = the filtered torque
- task_space: OperationalSpace, tau = J^T (Lambda xddot_cmd + eta) + N^T tau_0 for one frame, with a null-space
  posture task
- trajectories: PiecewiseTrajectory (JointTrajectory contents), quintic_waypoints, SumOfSines
- simulator: Simulator (RK4 / semi-implicit Euler on the configuration manifold), with_payload
"""
from ..inertia import InertiaMetric, log_det_divergence, log_det_metric, parameters_from_pseudo_inertia, pseudo_inertia
from .adaptive import SlotineLi, TrackingRecord, excitation_gain
from .composite import CompositeSlotineLi, MomentumFilter, RelativeGains
from .computed_torque import ComputedTorque, gain_matrix, tracking_error
from .simulator import Rollout, Simulator, payload_parameters, with_payload
from .task_space import OperationalSpace
from .trajectories import PiecewiseTrajectory, Reference, SumOfSines, quintic_waypoints

__all__ = [
    "CompositeSlotineLi", "ComputedTorque", "InertiaMetric", "MomentumFilter", "OperationalSpace",
    "PiecewiseTrajectory", "Reference", "RelativeGains", "Rollout", "Simulator", "SlotineLi", "SumOfSines",
    "TrackingRecord", "excitation_gain", "gain_matrix", "log_det_divergence", "log_det_metric",
    "parameters_from_pseudo_inertia", "payload_parameters", "pseudo_inertia", "quintic_waypoints",
    "tracking_error", "with_payload",
]
