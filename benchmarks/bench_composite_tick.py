"""CompositeSlotineLi.update (the default adaptive controller, RelativeGains().slotine_li) per tick, against
robot.dynamics(q, v, v_r, a_r, out=d) in the same process (issue 37: <= 6x, p99 <= 3x its median).

    python benchmarks/bench_composite_tick.py [--ticks 2000]

On the bundled arm7 and example-robot-data's panda with its fingers fixed (its URDF's drives kept): a tick along
a slow motion (dt = 1 ms), the two calls alternated; medians and p99 in us, and the ratio of the medians.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from mujoco_twin import prepared_urdf  # noqa: E402
from oracle import erd_path  # noqa: E402
from robot_dynamics.bundled import bundled_urdf  # noqa: E402
from robot_dynamics.controllers import RelativeGains  # noqa: E402


def robots():
    panda = Path(tempfile.mkdtemp()) / "panda.urdf"
    panda.write_text(prepared_urdf(erd_path("panda.urdf"), ("panda_finger_joint1", "panda_finger_joint2")))
    return {"arm7": rd.load_urdf(bundled_urdf("arm7")), "panda": rd.load_urdf(panda)}


def measure(robot, ticks, dt=1e-3):
    """(update times, dynamics times) in us over `ticks` ticks."""
    controller = RelativeGains().slotine_li(robot, 0.7 * robot.parameters)
    rng = np.random.default_rng(0)
    q0, zero = robot.random_configuration(rng), np.zeros(robot.nv)
    phase = rng.uniform(0, 2 * np.pi, robot.nv)
    d = robot.dynamics(q0, zero, zero, zero)
    update, dynamics = np.empty(ticks), np.empty(ticks)
    for k in range(-50, ticks):                       # 50 ticks to warm up
        t = k * dt
        q, v = q0 + 0.1 * np.sin(t + phase), 0.1 * np.cos(t + phase)
        start = time.perf_counter()
        controller.update(q, v, q0, zero, zero, dt if k > -50 else 0.0)
        middle = time.perf_counter()
        robot.dynamics(q, v, v, zero, out=d)
        end = time.perf_counter()
        if k >= 0:
            update[k], dynamics[k] = (middle - start) * 1e6, (end - middle) * 1e6
    return update, dynamics


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'robot':<7}{'update':>9}{'p99':>9}{'dynamics':>10}{'p99':>8}{'ratio':>7}{'p99/median':>12}   (us)")
    for name, robot in robots().items():
        update, dynamics = measure(robot, args.ticks)
        u, u99, d, d99 = np.median(update), np.percentile(update, 99), np.median(dynamics), np.percentile(dynamics, 99)
        print(f"{name:<7}{u:9.1f}{u99:9.1f}{d:10.1f}{d99:8.1f}{u / d:7.1f}{u99 / u:12.1f}")


if __name__ == "__main__":
    main()
