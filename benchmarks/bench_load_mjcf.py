"""Loading an MJCF against loading the same robot's URDF, and the converted robot's dynamics (issue 38).

    python benchmarks/bench_load_mjcf.py [--robots humanoid ...] [--loads 200] [--ticks 2000]

The MJCF is MuJoCo's own of the bundled URDF (compiled with the URDF's <mujoco> extension, fusestatic off, and
written by mj_saveLastXML): load_mjcf (MuJoCo's compile and the conversion) against load_urdf, alternating, the
median of the per-pair ratios; then robot.dynamics(q, v, v_r, a_r, out=d) of the two robots, alternating ticks,
median and p99 of each and their median ratio (the same kernels: about 1).
"""
import argparse
import tempfile
import time
from pathlib import Path

import mujoco
import numpy as np

import robot_dynamics as rd
from robot_dynamics.bundled import bundled_urdf

EXTENSION = '<mujoco><compiler discardvisual="true" fusestatic="false"/></mujoco>'


def mjcf_of(urdf):
    """MuJoCo's MJCF text of a URDF file."""
    text = Path(urdf).read_text()
    head = text.index(">", text.index("<robot")) + 1
    model = mujoco.MjModel.from_xml_string(text[:head] + EXTENSION + text[head:])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.xml"
        mujoco.mj_saveLastXML(str(path), model)
        return path.read_text()


def timed(function, *args):
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robots", nargs="+", default=["humanoid", "arm7"])
    parser.add_argument("--loads", type=int, default=200)
    parser.add_argument("--ticks", type=int, default=2000)
    args = parser.parse_args()
    for name in args.robots:
        urdf = bundled_urdf(name)
        mjcf = mjcf_of(urdf)
        pairs = np.array([(timed(rd.load_mjcf, mjcf), timed(rd.load_urdf, urdf)) for _ in range(args.loads)])
        ours, theirs = rd.load_mjcf(mjcf), rd.load_urdf(urdf)
        print(f"{name} ({ours.nbodies} moving bodies): load_mjcf {1e3 * np.median(pairs[:, 0]):.2f} ms, load_urdf "
              f"{1e3 * np.median(pairs[:, 1]):.2f} ms, ratio (median of pairs) "
              f"{np.median(pairs[:, 0] / pairs[:, 1]):.2f}")
        q, v = theirs.random_state(np.random.default_rng(0))
        v_r, a_r = v + 0.1, v - 0.2
        results = [robot.dynamics(q, v, v_r, a_r) for robot in (ours, theirs)]
        ticks = np.empty((args.ticks, 2))
        for i in range(args.ticks):
            for k, (robot, d) in enumerate(zip((ours, theirs), results)):
                start = time.perf_counter()
                robot.dynamics(q, v, v_r, a_r, out=d)
                ticks[i, k] = time.perf_counter() - start
        print(f"  dynamics(out=d): from MJCF {1e6 * np.median(ticks[:, 0]):.1f} us (p99 "
              f"{1e6 * np.percentile(ticks[:, 0], 99):.1f}), from URDF {1e6 * np.median(ticks[:, 1]):.1f} us (p99 "
              f"{1e6 * np.percentile(ticks[:, 1], 99):.1f}), ratio {np.median(ticks[:, 0] / ticks[:, 1]):.2f}")


if __name__ == "__main__":
    main()
