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

The compiled ticks (_ct_tick, _osc_tick, _slotine_tick, _composite_tick) call compiled functions of other modules
(configuration.lie_difference, inertia's projection, dense's Cholesky, the kernels' C entry points) and numba checks
a cached function against its own file only: they are imported inside calls.cache.kernel_cache, which caches them in
a folder named after a hash of this package's sources and of every module they reach, so that editing a callee
cannot leave a tick running its old machine code.
"""
from pathlib import Path

from ..algorithms import SOURCES as _KERNEL_SOURCES
from ..calls.cache import kernel_cache

_HERE = Path(__file__).parent
_SOURCES = [*_HERE.glob("*.py"), *_HERE.parent.joinpath("calls").glob("*.py"), *_KERNEL_SOURCES,
            *(_HERE.parent / f"{name}.py" for name in ("configuration", "inertia", "dense", "simd", "drives",
                                                       "spatial"))]

with kernel_cache(_HERE, _SOURCES, generated=False):
    from ..inertia import (InertiaMetric, log_det_divergence, log_det_metric, parameters_from_pseudo_inertia,
                           pseudo_inertia)
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
