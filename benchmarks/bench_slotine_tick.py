"""SlotineLi.update per tick against the dynamics it is built on (issue 37, item 1).

    python benchmarks/bench_slotine_tick.py [--ticks 4000]

On the bundled arm7 and example-robot-data's panda (fingers fixed, rigid), in one process: the median and p99 of
SlotineLi.update with the InertiaMetric projection (gain InertiaMetric(pi).gain(30), every body's estimate off by
up to 30 %), of the same with the robot's viscous and Coulomb drives adapted (drives="coulomb": the numpy path),
of robot.regressor(q, v, v_r, a_r, out=Y) alone, and of robot.dynamics(q, v, v_r, a_r, out=d) -- M, C, g, J_com
and Y in one pass, the unit of the ratios.  The calls alternate over 64 states near a moving reference, each timed
alone (perf_counter_ns), so that the machine's load falls on all of them alike.
"""
import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from oracle import erd_path  # noqa: E402
from robot_dynamics.bundled import bundled_urdf  # noqa: E402
from robot_dynamics.controllers import InertiaMetric, SlotineLi  # noqa: E402


def robots():
    panda = re.sub(r'(<joint name="panda_finger_joint\d" type=")prismatic', r"\1fixed",
                   erd_path("panda.urdf").read_text())
    for name, urdf in (("arm7", bundled_urdf("arm7")), ("panda", panda)):
        yield name, rd.load_urdf(urdf).with_drives(armature=0.0, damping=0.0, friction=0.0)


def states(robot, rng, n=64):
    """(q, v, q_d, v_d, a_d) near a reference."""
    out = []
    for _ in range(n):
        q_d, v_d = robot.random_state(rng)
        out.append((robot.integrate(q_d, 0.05 * rng.normal(size=robot.nv)), v_d + 0.1 * rng.normal(size=robot.nv),
                    q_d, v_d, rng.normal(size=robot.nv)))
    return out


def timed(calls, ticks):
    """{name: per-call times (s)} of the calls, alternating, each tick on the next state."""
    times = {name: np.empty(ticks) for name in calls}
    clock = time.perf_counter_ns
    for k in range(ticks):
        for name, call in calls.items():
            start = clock()
            call(k)
            times[name][k] = clock() - start
    return {name: t * 1e-9 for name, t in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ticks", type=int, default=4000)
    args = parser.parse_args()
    print(f"per call, median and p99 of {args.ticks} alternating ticks (us); ratio = median / dynamics' median")
    print(f"{'robot':<7}{'call':<34}{'median':>9}{'p99':>9}{'p99/med':>9}{'ratio':>8}")
    for name, robot in robots():
        rng = np.random.default_rng(0)
        metric = InertiaMetric(robot.parameters)
        pi_hat = robot.parameters * np.repeat(rng.uniform(0.7, 1.3, robot.nbodies), 10)
        data = states(robot, rng)
        projected = SlotineLi(robot, 5.0, 20.0, metric.gain(30.0), pi_hat=pi_hat, projection=metric.project)
        plain = SlotineLi(robot, 5.0, 20.0, metric.gain(30.0), pi_hat=pi_hat)
        driven = robot.with_drives(damping=0.3, friction=0.4)
        adapted = SlotineLi(driven, 5.0, 20.0, metric.gain(30.0), pi_hat=pi_hat, projection=metric.project,
                            drives="coulomb")
        sl = [projected.sliding(*x) for x in data]
        d = robot.dynamics(*data[0][:2], sl[0].v_r, sl[0].a_r)
        Y = np.empty_like(d.Y)
        n = len(data)
        calls = {"robot.dynamics(q, v, v_r, a_r, out=d)":
                 lambda k: robot.dynamics(data[k % n][0], data[k % n][1], sl[k % n].v_r, sl[k % n].a_r, out=d),
                 "robot.regressor(..., out=Y)":
                 lambda k: robot.regressor(data[k % n][0], data[k % n][1], sl[k % n].v_r, sl[k % n].a_r, out=Y),
                 "SlotineLi.update, projected": lambda k: projected.update(*data[k % n], 1e-3),
                 "SlotineLi.update, no projection": lambda k: plain.update(*data[k % n], 1e-3),
                 "  + drives adapted (coulomb)": lambda k: adapted.update(*data[k % n], 1e-3)}
        timed(calls, 200)                                   # warm: compiled kernels loaded, caches filled
        times = timed(calls, args.ticks)
        unit = np.median(times["robot.dynamics(q, v, v_r, a_r, out=d)"])
        for call, t in times.items():
            median, p99 = np.median(t), np.percentile(t, 99)
            print(f"{name:<7}{call:<34}{median * 1e6:9.1f}{p99 * 1e6:9.1f}{p99 / median:9.2f}{median / unit:8.2f}")


if __name__ == "__main__":
    main()
