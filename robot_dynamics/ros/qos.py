"""The QoS profiles the dynamics node and its tools share.

Four kinds of traffic, five profiles:

- ``STATE_QOS`` for the state streams the node reads (joint states, odometry, the Slotine-Li reference):
  BEST_EFFORT, keep-last 1, so the node always works on the newest sample and a late one is dropped, never queued.
- ``OBSERVED_STATE_QOS`` for the joint states of a node that starts with the momentum observer on
  (``publish_external_torque``): BEST_EFFORT, keep-last 10. The observer integrates every joint state (a dropped
  one is a tick whose torque it never sees, and a late collision verdict), so a burst of up to ten joint states
  while the node is held up (10 ms at 1 kHz: the scheduler, a neighbour on the machine) is queued and answered in
  order, not dropped (bench_ros_node.py at 1 kHz: 98.5-99.3 %, the relay 96.5-98.5 %; 97.2-98.1 % with depth 1); the
  price is a late answer after such a burst (p99 latency ~10 ms). ``qos_overrides./<ns>/joint_states.subscription
  .depth`` sets either depth.
- ``OUTPUT_QOS`` for everything the node publishes: RELIABLE, keep-last 1, so a slow consumer sees the newest
  result and never makes the node wait.
- ``LATCHED_QOS`` for an output published only when it changes (``~/collision``): RELIABLE + TRANSIENT_LOCAL,
  depth 1, so a subscriber that starts late still receives the present value;
- ``DESCRIPTION_QOS`` for ``robot_description``: RELIABLE + TRANSIENT_LOCAL, depth 1, the profile of
  robot_state_publisher, so a subscriber that starts late still receives the last description.
"""
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

STATE_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=1,
    reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE,
)
OBSERVED_STATE_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=10,
    reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE,
)
OUTPUT_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=1,
    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE,
)
LATCHED_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=1,
    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
DESCRIPTION_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=1,
    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
