"""Drives in a sampled loop (issue 37, item 2): computed torque, the momentum observer and the default adaptive
controller on MuJoCo's xArm7 with exactly its URDF's drives.

    python benchmarks/bench_sampled_drives.py [--duration 2] [--adaptive] [--adaptive-duration 8]

example-robot-data's xarm7.urdf declares <dynamics damping="2..10" friction="1"/> and no armature; MuJoCo (test/
mujoco_twin.driven_arm: RK4 at 0.1 ms, ten steps per 1-kHz control tick, contacts and limits off) carries exactly
those drives, damping as dof_damping and friction as dof_frictionloss made a hard constraint at the step (mujoco_twin.
MujocoTwin's docstring: solimp d 0.9999, solref timeconst 2 steps).  First the check that it is the URDF's law,
by a route of its own: the arm held by MuJoCo's qfrc_bias, a torque delta on one joint, the joint's steady speed
against (delta - F) / D (zero below F), for this plant, for MuJoCo's defaults (soft: solref 20 ms, solimp 0.9) at
0.1 ms and at 1 ms; then the friction the plant applies while the arm tracks (qfrc_constraint against the motion
over F, mean per speed band, per joint).

The reference: three sines per joint about home (mujoco_twin.motion, seed 0).  The table: the RMS tracking error
(rad) over the last second of --duration s, per controller's drive handling, for K_p 100 / K_d 20 and K_p 400 / K_d
40, control at 1 kHz and 250 Hz (the torque held over each period); "diverged" when MuJoCo's state went unstable.
Rows:

    rigid                 the rigid plant and model (no <dynamics> anywhere): the sampled loop's own error
    friction=False        ComputedTorque(robot, ..., friction=False): the drives ignored
    default               ComputedTorque(robot, ...): tau_f(v_d) + D Lambda e (computed_torque's docstring)
    measured, bounded     ComputedTorque(robot, ..., friction="measured", dt=period)
    measured, tau_f(v)    friction=False plus robot.friction_torque(v): the measured-velocity law of earlier releases

Then the momentum observer (k = 100 rad/s, 1 kHz) on that plant, the arm tracking under the default computed torque
(K_p 400, K_d 40: mujoco_twin.observed_run; its joints stick for 10-20 ms at velocity reversals): the largest
|r - J^T F| / |J^T F| from 50 ms after a force (10 N on link5, 20 N on link7, 5 cm off its centre of mass) is
stepped on, and the phantom torque, the largest |r| over 2 s of free motion over the median |J^T F| of the 20 N.

--adaptive adds the default adaptive controller (RelativeGains().slotine_li(robot, pi_hat0, q0): the URDF's model
with its drives, an unknown 1.5 kg tool on link7, mujoco_twin.scenario's) on the plant with the drives: the RMS error
over the first second and the last 2 s of --adaptive-duration s and their ratio, for the default gains and each of
Lambda, kd, gamma x 0.1 and x 10, at 1 kHz and 250 Hz (~1 s of wall time per simulated second: minutes).
"""
import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
from mujoco_twin import (PLANT_STEP, MujocoTwin, driven_arm, motion, observed_run, prepared_urdf,  # noqa: E402
                         pushed_speed, rms, scenario, tracking_errors)
from oracle import erd_path  # noqa: E402
from robot_dynamics.controllers import ComputedTorque, RelativeGains  # noqa: E402
from robot_dynamics.observers import MomentumObserver  # noqa: E402

GAINS = ((100.0, 20.0), (400.0, 40.0))
PERIODS = (1e-3, 4e-3)


def laws(arm, K_p, K_d, period):
    """(row name, plant, torque(t, q, v, r)) for each row of the table."""
    def ct(model, **options):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = ComputedTorque(model, K_p, K_d, **options)
        return lambda t, q, v, r: c.torque(q, v, r.q, r.v, r.a)

    ignored = ct(arm.robot, friction=False)
    yield "rigid", arm.rigid_twin, ct(arm.rigid)
    yield "friction=False", arm.twin, ignored
    yield "default", arm.twin, ct(arm.robot)
    yield "measured, bounded", arm.twin, ct(arm.robot, friction="measured", dt=period)
    yield "measured, tau_f(v)", arm.twin, lambda t, q, v, r: ignored(t, q, v, r) + arm.robot.friction_torque(v)


def table(duration):
    arm = driven_arm()
    reference = motion(arm, 0)
    columns = [(K_p, K_d, period) for K_p, K_d in GAINS for period in PERIODS]
    print(f"\nRMS tracking error (rad) over the last 1 s of {duration:g} s, MuJoCo xArm7 with its URDF's drives")
    heads = [f"Kp {K_p:g} {1 / period:g} Hz" for K_p, _, period in columns]
    print(f"{'drives in the controller':<22}" + "".join(f"{head:>18}" for head in heads))
    rows = {}
    for K_p, K_d, period in columns:
        for name, twin, torque in laws(arm, K_p, K_d, period):
            t, e = tracking_errors(twin, reference, torque, duration, period)
            rows.setdefault(name, []).append(rms(t, e, duration - 1.0, duration))
    for name, errors in rows.items():
        print(f"{name:<22}" + "".join(f"{e:>18.3g}" if np.isfinite(e) else f"{'diverged':>18}" for e in errors))
    ratio = np.array(rows["friction=False"]) / np.array(rows["default"])
    print(f"{'friction=False/default':<22}" + "".join(f"{x:>18.1f}" for x in ratio))


def observer():
    arm = driven_arm()
    print("\nthe momentum observer (100 rad/s) on MuJoCo's xArm7 with its URDF's drives")
    print(f"{'observer model':<24}{'link5 10 N':>12}{'link7 20 N':>12}{'phantom':>10}")
    for label, model in (("URDF drives", arm.robot), ("damping only", arm.robot.with_drives(friction=0.0))):
        driven = arm._replace(robot=model)
        free = np.linalg.norm(observed_run(driven, motion(arm, 2), 2.0, MomentumObserver(model, 100.0),
                                           period=PERIODS[0]).r, axis=1)
        errors, scale = [], None
        for link, newtons in ((arm.mid, 10.0), (arm.last, 20.0)):
            error, scale = force_error(driven, model, link, newtons)
            errors.append(error)
        print(f"{label:<24}{errors[0]:>12.3f}{errors[1]:>12.3f}{free.max() / scale:>10.3f}")


def force_error(arm, model, link, newtons, offset=(0.03, 0.04, 0.02)):
    """(max |r - J^T F| / |J^T F| from 50 ms after the step, the median |J^T F|) for a force stepped on at 0.5 s."""
    f, twin = newtons * np.array([0.6, -0.64, 0.48]), arm.twin
    log = observed_run(arm, motion(arm, 4), 1.0, MomentumObserver(model, 100.0), force=(link, f, offset, 0.5, 1.0),
                       period=PERIODS[0])
    settled = np.flatnonzero(log.t >= 0.55 - 1e-9)
    expected = np.empty((len(settled), model.nv))
    for i, k in enumerate(settled):
        twin.set_state(log.q[k], log.v[k])
        expected[i] = twin.jacobian(log.q[k], link, twin.body_point(link, offset))[:3].T @ f
    size = np.linalg.norm(expected, axis=1)
    return np.max(np.linalg.norm(log.r[settled] - expected, axis=1) / size), np.median(size)


def plant():
    """The push check and the friction applied while tracking (module docstring)."""
    arm = driven_arm()
    print("MuJoCo's xArm7 held by qfrc_bias, one joint pushed by delta: steady speed (rad/s), last fifth of 0.6 s")
    robot, deltas = arm.robot, (0.5, 1.5, 3.0)
    plants = (("this plant (hard, 0.1 ms)", arm.twin), ("soft, 0.1 ms", soft(arm, PLANT_STEP)),
              ("soft, 1 ms", soft(arm, 1e-3)))
    print(f"{'joint':<8}{'plant':<28}" + "".join(f"{f'delta {x:g} F':>14}" for x in deltas))
    for j in (0, 4, 6):
        F, D = robot.friction[j], robot.damping[j]
        print(f"{robot.coordinate_names[j]:<8}{'(delta - F) / D':<28}"
              + "".join(f"{max(x - 1, 0) * F / D:>14.4f}" for x in deltas))
        for label, twin in plants:
            speeds = [pushed_speed(twin, arm.home, j, x * F, 0.6) for x in deltas]
            cells = [f"{v:>14.4f}" if np.isfinite(v) and abs(v) < 1e3 else f"{'diverged':>14}" for v in speeds]
            print(f"{'':<8}{label:<28}" + "".join(cells), flush=True)
    applied_friction(arm)


def soft(arm, dt):
    """MuJoCo's model of the arm with its drives and MuJoCo's default soft friction loss, stepping at dt."""
    twin = MujocoTwin(prepared_urdf(erd_path("xarm7.urdf")), arm.robot, dt, damping=arm.robot.damping)
    twin.set_frictionloss(arm.robot.friction, soft=True)
    return twin


def applied_friction(arm, duration=2.0, period=PERIODS[0]):
    """MuJoCo's friction force against the motion over the URDF's level, mean per speed band, per joint, the arm
    tracking under the default computed torque (K_p 400, K_d 40) at 1 kHz."""
    twin, robot = arm.twin, arm.robot
    controller, reference = ComputedTorque(robot, 400.0, 40.0), motion(arm, 2)
    mj, m, d = twin.mj, twin.model, twin.data
    mj.mj_resetData(m, d)
    twin.set_state(reference(0.0).q, reference(0.0).v)
    every = int(round(period / twin.dt))
    V, F = [], []
    for k in range(int(round(duration / period))):
        q, v = twin.state()
        r = reference(k * period)
        d.qfrc_applied[twin.dadr] = controller.torque(q, v, r.q, r.v, r.a)
        for _ in range(every):
            mj.mj_step(m, d)
            V.append(d.qvel[twin.dadr].copy()), F.append(d.qfrc_constraint[twin.dadr].copy())
    V, F = np.array(V), -np.array(F) * np.sign(V) / robot.friction
    bands = ((1e-4, 0.01), (0.01, 0.05), (0.05, 0.2), (0.2, 1.0), (1.0, np.inf))
    print("\nwhile tracking: MuJoCo's frictionloss against the motion / the URDF's friction, mean by speed (rad/s), "
          "and the share of the steps a joint sticks (|v| < 1e-4); M_ii at home")
    print(f"{'joint':<8}{'M_ii':>10}" + "".join(f"{f'{lo:g}-{hi:g}':>13}" for lo, hi in bands) + f"{'sticks':>9}")
    M = np.diag(robot.mass_matrix(arm.home))
    for j, name in enumerate(robot.coordinate_names):
        cells = []
        for lo, hi in bands:
            band = (np.abs(V[:, j]) >= lo) & (np.abs(V[:, j]) < hi)
            cells.append(f"{F[band, j].mean():>13.3f}" if band.any() else f"{'-':>13}")
        print(f"{name:<8}{M[j]:>10.2e}" + "".join(cells) + f"{np.mean(np.abs(V[:, j]) < 1e-4):>9.3f}")


def adaptive(duration):
    print(f"\nthe default adaptive controller, unknown 1.5 kg tool on link7, MuJoCo xArm7 with its URDF's drives:"
          f" RMS error (rad), first 1 s and last 2 s of {duration:g} s")
    print(f"{'gains':<16}{'rate':>8}{'first 1 s':>12}{'last 2 s':>12}{'ratio':>8}")
    for period in PERIODS:
        sc = scenario("xarm7", dt=PLANT_STEP, friction=True)
        for label, gains in [("default", RelativeGains())] + [
                (f"{name} x {factor:g}", scaled(name, factor)) for name in ("Lambda", "kd", "gamma")
                for factor in (0.1, 10.0)]:
            controller = gains.slotine_li(sc.nominal, sc.nominal.parameters, sc.reference(0.0).q)

            def torque(t, q, v, r):
                return controller.update(q, v, r.q, r.v, r.a, period if t > 0 else 0.0)

            t, e = tracking_errors(sc.twin, sc.reference, torque, duration, period)
            first, last = rms(t, e, 0.0, 1.0), rms(t, e, duration - 2.0, duration)
            shown = f"{last:>12.3g}" if np.isfinite(last) else f"{'diverged':>12}"
            print(f"{label:<16}{1 / period:>7g}Hz{first:>12.3g}{shown}{first / last:>8.1f}", flush=True)


def scaled(name, factor):
    """RelativeGains with Lambda, kd (from the default bandwidth's 2 pi 2 rad/s) or gamma scaled by factor."""
    rate = 2 * np.pi * RelativeGains().bandwidth
    value = {"Lambda": rate, "kd": rate, "gamma": RelativeGains().gamma}[name] * factor
    return RelativeGains(**{name: value})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=2.0, help="seconds of each computed-torque loop")
    parser.add_argument("--adaptive", action="store_true", help="the adaptive controller's sweep as well")
    parser.add_argument("--adaptive-duration", type=float, default=8.0, help="seconds of each adaptive loop")
    args = parser.parse_args()
    plant()
    table(args.duration)
    observer()
    if args.adaptive:
        adaptive(args.adaptive_duration)


if __name__ == "__main__":
    main()
