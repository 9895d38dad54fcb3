"""Time per Viewer.update(q) on example-robot-data's talos (floating base, 53 visual meshes, 60 frames): must stay under
33 ms to follow joint states at 30 Hz.  Also as a ratio to robot.dynamics(q, v, v_r, a_r, out=d) in this process.

    python benchmarks/bench_view.py [--updates 300]

No browser is connected (the server still builds and queues every message); a connected page adds the websocket's
sending, done on viser's own thread.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from oracle import erd_path  # noqa: E402


def times(call, n):
    out = np.empty(n)
    for i in range(n):
        start = time.perf_counter()
        call(i)
        out[i] = time.perf_counter() - start
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=300)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        viewer = rd.view(erd_path("talos_full_v2.urdf"), floating_base=True, port=8140)
    robot, rng = viewer.robot, np.random.default_rng(0)
    qs = [robot.random_configuration(rng) for _ in range(16)]
    v = np.zeros(robot.nv)
    d = robot.dynamics(qs[0], v, v, v)
    times(lambda i: viewer.update(qs[i % 16]), 20)
    update = times(lambda i: viewer.update(qs[i % 16]), args.updates)
    dynamics = times(lambda i: robot.dynamics(qs[i % 16], v, v, v, out=d), 2000)
    viewer.close()
    print(f"talos: nq {robot.nq}, {len(viewer.meshes)} meshes, {len(viewer.links)} frames")
    print(f"update(q): median {np.median(update) * 1e3:.2f} ms, p99 {np.percentile(update, 99) * 1e3:.2f} ms "
          f"(30 Hz budget 33.3 ms: {'keeps up' if np.percentile(update, 99) < 1 / 30 else 'FALLS BEHIND'})")
    print(f"ratio to robot.dynamics(q, v, v_r, a_r, out=d): median {np.median(update) / np.median(dynamics):.0f}x, "
          f"p99 {np.percentile(update, 99) / np.percentile(dynamics, 99):.0f}x")


if __name__ == "__main__":
    main()
