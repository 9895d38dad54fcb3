"""The controllers' ticks against another revision's, in one process: what a change did to them, paired.

    python benchmarks/ab_controllers.py --base REV [--robots arm7 panda solo12] [--rounds 40]

Timings from separate processes differ by 10-30 % on a shared 2-core VM (its speed drifts within minutes), more
than most changes to a tick.  Here both revisions run in one process, taking turns: the base revision is exported
by ``git archive`` with its C extension built (once per revision, kept in the temporary directory with its numba
cache: its first run compiles it), renamed ``robot_dynamics_base``, and imported beside the working tree's package.
Per robot and call (bench_controllers.calls: the same trajectory and constructors for both), after BLOCK ticks of
warm-up, --rounds rounds of BLOCK ticks each, base and current alternating which goes first; printed: both medians
and the median over rounds of the per-round ratio current / base, with its 10th-90th percentiles (a change is real
where that band excludes 1).
"""
import argparse
import importlib
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_controllers as bench  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NAME = "robot_dynamics_base"
BLOCK = 60


def base_package(rev):
    """The package at git revision rev, importable as robot_dynamics_base (exported, built and renamed once)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    home = Path(tempfile.gettempdir()) / "robot_dynamics_ab" / sha[:12]
    if not (home / NAME / "__init__.py").exists():
        source = home / "source"
        source.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=source, check=True,
                       capture_output=True)
        staging = home / "staging"
        for path in (source / "robot_dynamics").rglob("*"):
            target = staging / path.relative_to(source / "robot_dynamics")
            if path.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                if path.suffix == ".py":
                    target.write_text(re.sub(r"\brobot_dynamics\b", NAME, path.read_text()))
                else:
                    target.write_bytes(path.read_bytes())
        staging.rename(home / NAME)                 # whole or not at all: a failed copy is redone
    sys.path.insert(0, str(home))
    return importlib.import_module(NAME), sha


def paired(base, current, rounds):
    """(base median us, current median us, per-round ratios current / base) of two calls taking turns."""
    times = ([], [])
    clock = time.perf_counter_ns
    for k in range(BLOCK):                          # warm-up: the first ticks (a controller's start, caches)
        base(k)
        current(k)
    for r in range(1, rounds + 1):
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            call, row = (base, current)[which], []
            for k in range(r * BLOCK, (r + 1) * BLOCK):
                start = clock()
                call(k)
                row.append(clock() - start)
            times[which].append(np.median(row) * 1e-3)
    b, c = np.array(times[0]), np.array(times[1])
    return float(np.median(b)), float(np.median(c)), c / b


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the git revision to compare against (e.g. HEAD~3)")
    parser.add_argument("--robots", nargs="+", default=["arm7", "panda", "solo12"], choices=["arm7", "panda", "solo12"])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args(argv)
    package, sha = base_package(args.base)
    print(f"base {args.base} ({sha[:12]}) against the working tree; µs per tick, median of {args.rounds} rounds of "
          f"{BLOCK} ticks; ratio current / base per round: median (p10-p90)")
    count = (args.rounds + 1) * BLOCK
    for (name, robot, frame), (_, old, _) in zip(bench.robots(args.robots), bench.robots(args.robots, package)):
        ticks = bench.Ticks(robot, frame, count, np.random.default_rng(0))
        current, base = bench.calls(robot, frame, ticks), bench.calls(old, frame, ticks, package)
        print(f"\n{name}\n| call | base | current | ratio (p10-p90) |\n|---|---:|---:|---:|")
        for call in current:
            if not (callable(current[call]) and callable(base[call])):
                continue
            b, c, ratio = paired(base[call], current[call], args.rounds)
            low, mid, high = np.percentile(ratio, [10, 50, 90])
            print(f"| {call} | {b:.1f} | {c:.1f} | {mid:.3f} ({low:.3f}-{high:.3f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
