"""Payload identification (issue 28, item 3) on MuJoCo logs: the done-when figures.

    python benchmarks/bench_payload.py [--arms panda ur5] [--seeds 10] [--duration 10]

Done when: with 0.5-3 kg off-axis payloads and 10 s of excitation, mass within 2 % and CoM within 5 mm
noise-free; within 5 % / 1 cm with 1 % torque noise.

Each arm of test/mujoco_twin.ARMS (panda: the payload bolted to panda_hand, a link fixed to panda_link7 at 45
degrees; ur5: to wrist_3_link) carries in turn a box of 0.5, 1.5 and 3 kg whose CoM is off the link's axis
(PAYLOADS), and is simulated by MuJoCo (RK4 at 1 kHz) along three sines per joint, tracked by computed torque with
the description's model (mujoco_twin.payload_log).  rd.identify_payload then sees, per row:

- exact: v and a as measured (MuJoCo's qvel and qacc), torques noise-free;
- filtered: t, q and tau only, v and a from q (signals.derivatives, 10 Hz; 0.2 s left out at either end);
- 1 % measured / 1 % filtered: q through a 16-bit encoder, torque noise of 1 % of each joint's range (simulated.
  Noise's convention), over --seeds draws: the largest error over the draws;
- static / static 1 %: 12 random poses at rest (MuJoCo's gravity torques), each held 0.5 s at 1 kHz: mass and CoM
  only (the inertia is not identified).

Columns: mass error (% of the mass), CoM error (mm, largest coordinate), inertia error (the largest entry of the
inertia about the CoM, % of the true one's largest; "-" when not identified), the reported standard deviations of
the mass (%) and of the CoM (mm, largest), for the noisy rows the ratio of the estimates' spread over the draws to
the reported standard deviation (mass; CoM's largest), the condition number of the payload's column-scaled
regressor, and whether the done-when bound holds (2 % / 5 mm without noise, 5 % / 1 cm with).
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from mujoco_twin import ARMS, Payload, box_inertia, payload_log, with_sensor_noise  # noqa: E402

# mass (kg), CoM (m, in the link's frame), box sides (m)
PAYLOADS = ((0.5, (0.03, -0.02, 0.06), (0.06, 0.05, 0.04)),
            (1.5, (0.05, 0.03, 0.09), (0.10, 0.08, 0.06)),
            (3.0, (-0.04, 0.06, 0.12), (0.15, 0.10, 0.08)))
POSES, HELD = 12, 500


def errors(result, payload):
    """(mass error %, CoM error mm, inertia error % or nan)."""
    mass = 100 * abs(result.mass - payload.mass) / payload.mass
    com = 1000 * np.abs(result.com - np.asarray(payload.com)).max()
    inertia = (100 * np.abs(result.inertia - payload.inertia).max() / np.abs(payload.inertia).max()
               if not result.not_identified else np.nan)
    return mass, com, inertia


def row(results, payload, noisy):
    """The table's cells of one case: the worst errors over the results, their reported stds, the spread ratio."""
    e = np.array([errors(r, payload) for r in results])
    worst = e.max(axis=0)
    r0 = results[0]
    mass_std = 100 * np.mean([r.mass_std for r in results]) / payload.mass
    com_std = 1000 * np.mean([r.com_std.max() for r in results])
    spread = "-"
    if len(results) > 2:
        estimates = np.array([[r.mass, *r.com] for r in results])
        reported = np.mean([[r.mass_std, *r.com_std] for r in results], axis=0)
        ratio = np.std(estimates, axis=0, ddof=1) / reported
        spread = f"{ratio[0]:.2f}; {ratio[1:].max():.2f}"
    bound = (5.0, 10.0) if noisy else (2.0, 5.0)
    ok = "yes" if worst[0] < bound[0] and worst[1] < bound[1] else "NO"
    inertia = "-" if np.isnan(worst[2]) else f"{worst[2]:.3g}"
    return [f"{worst[0]:.2g}", f"{worst[1]:.2g}", inertia, f"{mass_std:.2g}", f"{com_std:.2g}", spread,
            f"{r0.condition:.3g}", ok]


def cases(name, payload, seeds, duration):
    """The rows of one arm and payload."""
    L = payload_log(name, payload, duration=duration)
    link = payload.link

    def identify(q, tau, v=None, a=None, t=None):
        return rd.identify_payload(L.nominal, q, v, a, tau, link, t=t)

    noisy = [with_sensor_noise(L.q, L.tau, rng=seed) for seed in range(seeds)]
    rng = np.random.default_rng(0)
    Q = np.array([L.nominal.random_configuration(rng) for _ in range(POSES)])
    tau = np.array([L.twin.bias(q, np.zeros(L.nominal.nv)) for q in Q])
    Q, tau = np.repeat(Q, HELD, axis=0), np.repeat(tau, HELD, axis=0)
    zero = np.zeros_like(tau)
    yield "exact", row([identify(L.q, L.tau, L.v, L.a)], payload, False)
    yield "filtered", row([identify(L.q, L.tau, t=L.t)], payload, False)
    yield "1 % measured", row([identify(q, t_, L.v, L.a) for q, t_ in noisy], payload, True)
    yield "1 % filtered", row([identify(q, t_, t=L.t) for q, t_ in noisy], payload, True)
    yield "static", row([identify(Q, tau, zero, zero)], payload, False)
    yield "static 1 %", row([identify(Q, with_sensor_noise(Q, tau, resolution=0, rng=seed)[1], zero, zero)
                             for seed in range(seeds)], payload, True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arms", nargs="+", default=["panda", "ur5"], choices=sorted(ARMS))
    parser.add_argument("--seeds", type=int, default=10, help="noise draws per noisy case (default 10)")
    parser.add_argument("--duration", type=float, default=10.0, help="s of excitation (default 10)")
    args = parser.parse_args(argv)
    header = ["arm", "payload", "case", "mass err %", "CoM err mm", "I_c err %", "mass std %", "CoM std mm",
              "spread/std", "cond", "done-when"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for name in args.arms:
        link = ARMS[name][2]
        for mass, com, size in PAYLOADS:
            payload = Payload(link, mass, com, box_inertia(mass, size))
            label = f"{mass:g} kg at ({', '.join(f'{1000 * c:g}' for c in com)}) mm"
            for case, cells in cases(name, payload, args.seeds, args.duration):
                print("| " + " | ".join([f"{name} ({link})", label, case] + cells) + " |", flush=True)


if __name__ == "__main__":
    main()
