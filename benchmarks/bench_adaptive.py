"""Adaptive control of arms carrying an unknown payload, in MuJoCo (issue 25): the figures behind the default.

    python benchmarks/bench_adaptive.py [--arms panda ur5 arm7 xarm7] [--duration 30] [--sweep] [--jobs 2]

Each arm (test/mujoco_twin.ARMS: a payload 3-10x its last link, off its axis) is simulated by MuJoCo at 1 kHz
(RK4, contacts and limits off) under each controller, from estimates 30 % low (0.7 pi_URDF, the payload unknown),
tracking three sines per joint.  Per arm and controller the table gives the RMS tracking error of the first second
and of seconds 6-8 (the tests' 8 s run) with their ratio, the last two seconds of the run, the payload body's mass
estimate and its error at 8 s and at the end, the smallest eigenvalue of any body's pseudo-inertia over the run
(< 0: unphysical), and the share of ticks whose step was bounded or gains capped.  Beside each arm: computed
torque with the description's model (kp 100, kd 20) over seconds 6-8, and the condition number of the payload
body's ten columns of the filtered momentum regressor W over the run (columns scaled to unit norm): how well the
motion excites the payload's parameters.

Controllers:
- today: SlotineLi as the default was before issue 25 (Lambda 5, K_D = 10 diag M_hat(q0), Gamma =
  InertiaMetric(pi_hat0).gain(3), projected);
- gradient: the new gains and payload prior, a fixed gain (law="gradient", no prediction term), projected;
- gradient + prediction: the same with the torque-prediction term (prediction 30 s);
- natural: the log-det metric of the estimate alone (law="natural", no prediction), the step bounded;
- least squares, projected / barrier (prediction 100): the default's law weighing the prediction error 3x more,
  with InertiaMetric.project in place of the barrier, and with the barrier: a projection in another metric than
  the gain's;
- default: RelativeGains().slotine_li (least squares, prediction 30 s, barrier);
- default, links known: the default from the description's own parameters (only the payload unknown);
- payload only, links known: the same with adapt="payload" (the links kept as the description has them).

``--sweep`` adds, per arm, Lambda, kd and gamma of the default scaled by 0.1 and 10 at 1 kHz and 250 Hz (8 s):
the largest |tau|, the smallest pseudo-inertia eigenvalue, the RMS error of seconds 6-8, and whether MuJoCo ran
the whole time.
"""
import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
from mujoco_twin import ARMS, scenario  # noqa: E402
from robot_dynamics.controllers import (CompositeSlotineLi, ComputedTorque, InertiaMetric, MomentumFilter,  # noqa: E402
                                        RelativeGains, SlotineLi, gain_matrix, pseudo_inertia)


class ProjectedLeastSquares(CompositeSlotineLi):
    """The default's least-squares law with InertiaMetric.project (the reference metric) instead of the barrier:
    a projection in a metric other than Omega's."""

    def _stepped(self, pi_hat, step):
        return self.metric.project(pi_hat + step), False


def controllers(sc):
    """name -> a fresh controller for the scenario."""
    nominal = sc.nominal
    pi_hat0 = 0.7 * nominal.parameters
    q0 = sc.reference(0.0).q

    def today():
        model = nominal.with_parameters(pi_hat0)
        K_D = gain_matrix(10.0 * np.diag(model.mass_matrix(q0)), nominal.nv)
        metric = InertiaMetric(pi_hat0)
        return SlotineLi(model, 5.0, K_D, metric.gain(3.0), pi_hat=pi_hat0, projection=metric.project)

    def projected_least_squares():
        gains = RelativeGains(prediction=100.0, barrier=0.0)
        return ProjectedLeastSquares(nominal, *gains.rates(), pi_hat0, gains.reference(nominal, pi_hat0),
                                     prediction=gains.prediction, barrier=gains.barrier)

    return {
        "today": today,
        "gradient": lambda: RelativeGains(law="gradient", prediction=0.0).slotine_li(nominal, pi_hat0),
        "gradient + prediction": lambda: RelativeGains(law="gradient", prediction=30.0).slotine_li(nominal, pi_hat0),
        "natural": lambda: RelativeGains(law="natural", prediction=0.0).slotine_li(nominal, pi_hat0),
        "least squares, projected*": projected_least_squares,
        "least squares, barrier*": lambda: RelativeGains(prediction=100.0).slotine_li(nominal, pi_hat0),
        "default": lambda: RelativeGains().slotine_li(nominal, pi_hat0),
        "default, links known": lambda: RelativeGains().slotine_li(nominal, nominal.parameters),
        "payload only, links known": lambda: RelativeGains(adapt="payload").slotine_li(nominal, nominal.parameters),
    }


def run(sc, controller, duration, dt=1e-3):
    """The closed loop in MuJoCo: (t, e, tau, pi_hat (K, 10 nb) or None, min eigenvalue, bounded share, q, v)."""
    estimates, eigenvalues, flagged = [], [], []

    def torque(t, q, v):
        r = sc.reference(t)
        if isinstance(controller, ComputedTorque):
            return controller.torque(q, v, r.q, r.v, r.a)
        try:
            tau = controller.update(q, v, r.q, r.v, r.a, dt if t > 0 else 0.0)
        except ValueError:                                   # refused: hold nothing, let the run end
            return np.full(sc.nominal.nv, np.nan)
        pi_hat = controller.pi_hat
        estimates.append(pi_hat)
        eigenvalues.append(np.min(np.linalg.eigvalsh(pseudo_inertia(pi_hat.reshape(-1, 10)))))
        status = getattr(controller, "status", None)
        flagged.append(bool(status and (status.step_limited or status.gains_capped)))
        return tau

    start = sc.reference(0.0)
    t, q, v, tau = sc.twin.run(start.q, start.v, torque, duration, control_period=dt)
    e = sc.reference(t).q - q
    return (t, e, tau, np.array(estimates) if estimates else None, min(eigenvalues, default=np.nan),
            float(np.mean(flagged)) if flagged else 0.0, q, v)


def rms(t, e, start, stop):
    window = (t >= start) & (t < stop)
    return float(np.sqrt(np.mean(np.sum(e[window] ** 2, axis=1)))) if np.any(window) else np.nan


def arm_table(name, duration):
    sc = scenario(name)
    k = sc.nominal.body_names.index(sc.body)
    true_mass = sc.truth.parameters[10 * k]
    t, e, tau, _, _, _, q, v = run(sc, ComputedTorque(sc.nominal, 100.0, 20.0), 8.0)
    computed_torque = rms(t, e, 6.0, 8.0)
    W, _ = MomentumFilter(sc.nominal, 2.0).replay(t, q, v, tau)
    columns = W[:, :, 10 * k:10 * k + 10].reshape(-1, 10)
    singular = np.linalg.svd(columns / np.linalg.norm(columns, axis=0), compute_uv=False)
    lines = [f"\n{name}: payload {sc.payload.mass:g} kg on {sc.body} (URDF {sc.nominal.parameters[10 * k]:.3f} kg, "
             f"true {true_mass:.3f} kg); computed torque with the URDF model, RMS 6-8 s: {computed_torque:.4f} rad; "
             f"condition number of the payload's columns of W: {singular[0] / singular[-1]:.3g}",
             f"  {'controller':<26}{'0-1 s':>9}{'6-8 s':>9}{'ratio':>7}{'last 2 s':>10}{'mass 8 s':>10}{'error':>8}"
             f"{'mass end':>10}{'error':>8}{'min eig':>10}{'flagged':>9}"]
    for label, make in controllers(sc).items():
        t, e, tau, pi_hat, min_eig, flagged, _, _ = run(sc, make(), duration)
        if len(t) < round(duration * 1000):                     # MuJoCo found the state unstable
            lines.append(f"  {label:<26}{rms(t, e, 0.0, 1.0):9.4f}   diverged: MuJoCo stopped at {t[-1]:.2f} s, the "
                         f"payload's mass estimate then {pi_hat[-1, 10 * k]:.3g} kg")
            continue
        first, mid, last = rms(t, e, 0.0, 1.0), rms(t, e, 6.0, 8.0), rms(t, e, duration - 2.0, duration)
        at8, end = pi_hat[7999, 10 * k], pi_hat[-1, 10 * k]
        lines.append(f"  {label:<26}{first:9.4f}{mid:9.4f}{first / mid:7.1f}{last:10.4f}{at8:10.3f}"
                     f"{(at8 - true_mass) / true_mass:+8.1%}{end:10.3f}{(end - true_mass) / true_mass:+8.1%}"
                     f"{min_eig:10.1e}{flagged:9.1%}")
    lines.append("  * prediction 100 s")
    return "\n".join(lines)


def sweep_table(name):
    sc = scenario(name)
    Lambda, kd = RelativeGains().rates()
    lines = [f"\n{name}: the default with one gain scaled, 8 s",
             f"  {'gain':<8}{'scale':>6}{'rate Hz':>9}{'max |tau|':>11}{'min eig':>10}{'6-8 s':>9}{'flagged':>9}  ran"]
    for gain in ("Lambda", "kd", "gamma"):
        for scale in (0.1, 10.0):
            for dt in (1e-3, 4e-3):
                gains = dict(Lambda=Lambda, kd=kd, gamma=RelativeGains().gamma)
                gains[gain] *= scale
                controller = RelativeGains(**gains).slotine_li(sc.nominal, 0.7 * sc.nominal.parameters)
                t, e, tau, _, min_eig, flagged, _, _ = run(sc, controller, 8.0, dt)
                ran = "all" if len(t) == round(8.0 / dt) else f"to {t[-1]:.2f} s"
                lines.append(f"  {gain:<8}{scale:6g}{1 / dt:9.0f}{np.max(np.abs(tau)):11.4g}{min_eig:10.1e}"
                             f"{rms(t, e, 6.0, 8.0):9.4f}{flagged:9.1%}  {ran}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per run (at least 8)")
    parser.add_argument("--sweep", action="store_true", help="also the gain sweep of the default")
    parser.add_argument("--jobs", type=int, default=2, help="arms simulated in parallel")
    args = parser.parse_args()
    with ProcessPoolExecutor(args.jobs) as pool:
        tables = [pool.submit(arm_table, name, max(args.duration, 8.0)) for name in args.arms]
        sweeps = [pool.submit(sweep_table, name) for name in args.arms] if args.sweep else []
        for future in tables + sweeps:
            print(future.result(), flush=True)


if __name__ == "__main__":
    main()
