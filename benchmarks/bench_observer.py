"""The momentum observer (issue 28, items 1, 2, 5): its speed, and its figures in MuJoCo.

    python benchmarks/bench_observer.py [--arms panda ur5] [--free 60] [--replay 1000000] [--runs 3]

Speed (the bundled 7-DoF arm7 and panda, its fingers fixed): MomentumObserver.update per call -- one compiled call
for p = M v and h = C^T v - g (Robot.momentum_rate), one for the discrete step -- rigid and with the drives'
viscous and Coulomb friction (in the compiled step); Robot.momentum_rate alone; Pinocchio computing the same
in one process (crba then M v, computeCoriolisMatrix then C^T v, computeGeneralizedGravity) and the ratio.  Then
replay of a log of --replay samples of random states (one batched kernel call, one compiled loop), in seconds.

MuJoCo (test/mujoco_twin.observed_arm: RK4 at 1 kHz, computed torque tracking three sines per joint, panda with
its URDF's joint damping, ur5 with a random armature and damping), the observer at 100 rad/s, its detector
calibrated (the defaults: margin 2, floor 1e-3 N m) on 5 s of another motion without contact:
- free motion for --free seconds: false alarms at the calibrated thresholds, max |r_i| / threshold_i, and the same
  for thresholds from the margin alone (floor 1e-12): how far the log's largest residual generalizes;
- per arm, link (mid: fewer than six joints below it; last) and magnitude (10 N, 30 N), --runs force directions
  (random, seeded): a force stepped on at 0.5 s for 0.5 s at a point 5 cm off the link's centre of mass (test_
  observer's); the largest |r - J^T F| / |J^T F| from 5 / k after the step (J from MuJoCo's mj_jac at the point),
  the wrench at the last link's frame likewise (its Jacobian has full rank there), the detection latency, and
  whether the isolated body was the link's at every tick the force was seen.
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from mujoco_twin import motion, observed_arm, observed_run  # noqa: E402
from robot_dynamics.bundled import bundled_urdf  # noqa: E402
from robot_dynamics.observers import MomentumObserver  # noqa: E402

GAIN = 100.0
OFFSET = np.array([0.03, 0.04, 0.02])


def per_call(fn, n, rounds=5):
    """Best of rounds, in us per call."""
    best = np.inf
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def speed(n=20000):
    import pinocchio as pin
    from oracle import PinocchioTwin, erd_path
    from mujoco_twin import prepared_urdf

    print(f"update per call (best of 5 x {n}), us")
    print(f"{'robot':<8}{'update':>10}{'+friction':>11}{'momentum_rate':>15}{'Pinocchio':>11}{'ratio':>8}")
    fixed = ("panda_finger_joint1", "panda_finger_joint2")
    panda = Path(tempfile.mkdtemp()) / "panda.urdf"
    panda.write_text(prepared_urdf(erd_path("panda.urdf"), fixed))
    for name, path in (("arm7", bundled_urdf("arm7")), ("panda", panda)):
        robot = rd.load_urdf(path).with_drives(damping=0.0, friction=0.0)
        twin = PinocchioTwin(robot, path)
        rng = np.random.default_rng(0)
        q, v = robot.random_state(rng)
        tau = rng.normal(size=robot.nv)
        times = []
        for drives in (robot, robot.with_drives(damping=0.5, friction=0.3)):
            observer = MomentumObserver(drives, GAIN)
            observer.update(q, v, tau, 1e-3)
            times.append(per_call(lambda: observer.update(q, v, tau, 1e-3), n))
        out = (np.empty(robot.nv), np.empty(robot.nv))
        ours = per_call(lambda: robot.momentum_rate(q, v, out=out), n)
        model, data, qp, vp = twin.model, twin.data, twin.q(q), twin.v(v)

        def pinocchio():
            M = pin.crba(model, data, qp)
            p = M @ vp                          # crba fills the upper triangle; p is not checked here, only timed
            h = pin.computeCoriolisMatrix(model, data, qp, vp).T @ vp - pin.computeGeneralizedGravity(model, data, qp)
            return p, h

        theirs = per_call(pinocchio, n)
        print(f"{name:<8}{times[0]:>10.2f}{times[1]:>11.2f}{ours:>15.2f}{theirs:>11.2f}{theirs / times[0]:>8.1f}")


def replay_speed(samples):
    robot = rd.load_urdf(bundled_urdf("arm7"))
    rng = np.random.default_rng(1)
    q = np.array([robot.random_configuration(rng) for _ in range(1000)])
    Q = np.tile(q, (samples // 1000, 1))
    V, TAU = rng.normal(size=(2, len(Q), robot.nv))
    t = np.arange(len(Q)) * 1e-3
    observer = MomentumObserver(robot, GAIN)
    observer.replay(t[:2000], Q[:2000], V[:2000], TAU[:2000])              # the kernels loaded
    start = time.perf_counter()
    observer.replay(t, Q, V, TAU)
    print(f"\nreplay of {len(Q):,} samples (arm7): {time.perf_counter() - start:.2f} s")


def free_motion(arm, detector, duration):
    log = observed_run(arm, motion(arm, seed=2), duration, MomentumObserver(arm.robot, GAIN))
    alarms = int(detector.replay(log.r)[0].any(axis=1).sum())
    return log, alarms, np.max(np.abs(log.r) / detector.thresholds)


def force_run(arm, detector, link, newtons, direction):
    robot, twin = arm.robot, arm.twin
    f = newtons * direction
    log = observed_run(arm, motion(arm, seed=4), 1.3, MomentumObserver(robot, GAIN), force=(link, f, OFFSET, 0.5, 1.0))
    on = (log.t >= 0.5 - 1e-9) & (log.t < 1.0 - 1e-9)
    settled = on & (log.t >= 0.5 + 5 / GAIN - 1e-9)
    expected, wrenches = np.zeros((len(log.t), robot.nv)), np.zeros((len(log.t), 6))
    for k in np.flatnonzero(on):
        twin.set_state(log.q[k], log.v[k])
        x, origin = twin.body_point(link, OFFSET), twin.data.body(link).xpos.copy()
        expected[k] = twin.jacobian(log.q[k], link, x)[:3].T @ f
        wrenches[k] = np.concatenate([f, np.cross(x - origin, f)])
    torque_error = np.max(np.linalg.norm(log.r - expected, axis=1)[settled] / np.linalg.norm(expected[settled], axis=1))
    estimate = MomentumObserver(robot, GAIN).wrench(log.q[settled], link, residual=log.r[settled])
    wrench_error = np.max(np.linalg.norm(estimate.wrench - wrenches[settled], axis=1)
                          / np.linalg.norm(wrenches[settled], axis=1))
    full_rank = bool(np.all(estimate.singular_values[:, 5] > 1e-3))
    detector.reset()
    flags, touched = detector.replay(log.r)
    detected = flags.any(axis=1)
    seen = np.r_[False, on[:-1]]
    k_seen = int(np.argmax(seen))
    latency = (int(np.argmax(detected[k_seen:])) + 1) * twin.dt if detected[k_seen:].any() else np.inf
    isolated = {detector.isolate(x) for x in touched[seen]} == {(robot.body_names[robot.model.frames[link].body],)}
    false_before = bool(detected[:k_seen].any())
    return torque_error, wrench_error if full_rank else np.nan, latency, isolated and not false_before


def mujoco_figures(name, free, runs):
    arm = observed_arm(name)
    calibration = observed_run(arm, motion(arm, seed=1), 5.0)
    observer = MomentumObserver(arm.robot, GAIN)
    detector = observer.calibrate(calibration.t, calibration.q, calibration.v, calibration.tau)
    margin_only = observer.calibrate(calibration.t, calibration.q, calibration.v, calibration.tau, floor=1e-12)
    log, alarms, headroom = free_motion(arm, detector, free)
    alarms_margin = int(margin_only.replay(log.r)[0].any(axis=1).sum())
    ratio_margin = np.max(np.abs(log.r) / margin_only.thresholds)
    print(f"\n{name}: thresholds (N m) {np.array2string(detector.thresholds, precision=4)}; margin alone "
          f"{np.array2string(margin_only.thresholds, precision=2)}")
    print(f"  {free:.0f} s free motion (max |tau| {np.max(np.abs(log.tau)):.1f} N m, max |r| "
          f"{np.max(np.abs(log.r)):.2e} N m): {alarms} false alarm ticks at the calibrated thresholds (max "
          f"|r_i| / threshold_i {headroom:.3f}); with the margin alone {alarms_margin} ({ratio_margin:.2f})")
    rng = np.random.default_rng(5)
    print(f"  {'link':<14}{'N':>4}{'runs':>6}{'max |r - J^T F| %':>19}{'max wrench err %':>18}"
          f"{'latency ms (max)':>18}{'isolated right':>16}")
    for link in (arm.mid, arm.last):
        for newtons in (10.0, 30.0):
            rows = []
            for _ in range(runs):
                direction = rng.normal(size=3)
                rows.append(force_run(arm, detector, link, newtons, direction / np.linalg.norm(direction)))
            torque, wrench, latency, right = (np.array(x, dtype=float) for x in zip(*rows))
            wrench_text = "n/a (rank < 6)" if np.all(np.isnan(wrench)) else f"{100 * np.nanmax(wrench):.2f}"
            print(f"  {link:<14}{newtons:>4.0f}{runs:>6}{100 * np.max(torque):>19.2f}{wrench_text:>18}"
                  f"{1e3 * np.max(latency):>18.0f}{f'{int(right.sum())}/{runs}':>16}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arms", nargs="+", default=["panda", "ur5"])
    parser.add_argument("--free", type=float, default=60.0, help="seconds of free motion")
    parser.add_argument("--replay", type=int, default=1_000_000, help="samples replayed")
    parser.add_argument("--runs", type=int, default=3, help="force directions per link and magnitude")
    args = parser.parse_args()
    speed()
    replay_speed(args.replay)
    for name in args.arms:
        mujoco_figures(name, args.free, args.runs)


if __name__ == "__main__":
    main()
