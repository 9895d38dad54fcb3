"""The QoS profiles the dynamics node and its tools share.

Four kinds of traffic, four profiles:

- ``STATE_QOS`` for the state streams the node reads (joint states, odometry, the Slotine-Li reference):
  BEST_EFFORT, keep-last 1, so the node always works on the newest sample and a late one is dropped, never queued.
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
