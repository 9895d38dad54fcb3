"""Start-up time: import + load_urdf + first dynamics() call, cold (empty numba cache) and warm; then every method.

    python benchmarks/startup.py [--every | --after-compile] [--jobs 2]

Runs fresh interpreters with NUMBA_CACHE_DIR pointing at a new empty folder (cold: compiles every kernel, the
batch kernel included), then again with the same folder (warm: loads them).  Prints wall times and the stderr.

With ``--every`` (issue 26): in a new empty cache, one process calling every public method once (each on one
state and a batch, robot_dynamics.precompile.CALLS) -- the cold start of a user who calls them all; then, in
another empty cache, ``robot-dynamics compile --jobs N``; and after it, a fresh process timing the first calls of
each method (loading a robot and its kernels from the cache), the slowest printed: a method's figure is the
slowest of its calls' first (each of its CALLS on one state, then on a batch: what one call of a user costs at
most, not the sum over the variants a user may never call).  ``--after-compile``: only the latter two, every
method's first call listed.
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import time; t0 = time.perf_counter()
import numpy as np, robot_dynamics as rd
robot = rd.load_urdf({urdf!r}, floating_base=True)
q, v = robot.random_state(0)
robot.dynamics(q, v, v, v)
t1 = time.perf_counter()
robot.dynamics(np.stack([q, q]), np.stack([v, v]), np.stack([v, v]), np.stack([v, v]))
t2 = time.perf_counter()
print(f"in-process: import + load_urdf + first dynamics() {{t1 - t0:.3f}} s; + first batch {{t2 - t0:.3f}} s")
"""


def run(env):
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(urdf=str(ROOT / "urdf" / "quadruped.urdf"))],
                         env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, out.stdout.strip(), out.stderr.strip()


EVERY = """
import sys
import time
t0 = time.perf_counter()
import robot_dynamics as rd
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.precompile import TASKS, run_task
t1 = time.perf_counter()
rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)      # the loader's own first use, not a method's
t2 = time.perf_counter()
times = [run_task(name, each=True) for name in TASKS]              # each call's first, one state or a batch
print(" ".join(f"{name}={max(seconds):.3f}" for name, seconds in times))
print(f"import {t1 - t0:.3f} s, first load_urdf {t2 - t1:.3f} s", file=sys.stderr)
"""


def every(jobs, cold=True):
    """The --every figures (module docstring); without `cold` (--after-compile), only compile and the first calls
    after it, with every method's first call listed (the README's list)."""
    import os
    import resource
    if cold:
        with tempfile.TemporaryDirectory() as cache:
            t0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run([sys.executable, "-c", EVERY], env=dict(os.environ, NUMBA_CACHE_DIR=cache),
                                 capture_output=True, text=True, check=True)
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime
            print(f"cold, one process calling every method once: {time.perf_counter() - t0:.1f} s wall, "
                  f"{cpu:.1f} s cpu")
            slowest = sorted((pair.split("=") for pair in out.stdout.split()), key=lambda p: -float(p[1]))[:6]
            print("  slowest first calls: " + ", ".join(f"{name} {float(s):.1f} s" for name, s in slowest))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "compile", "--jobs", str(jobs)], env=env,
                       capture_output=True, text=True, check=True)
        print(f"robot-dynamics compile --jobs {jobs}, empty cache: {time.perf_counter() - t0:.1f} s wall")
        out = subprocess.run([sys.executable, "-c", EVERY], env=env, capture_output=True, text=True, check=True)
        times = sorted(((name, float(s)) for name, s in (p.split("=") for p in out.stdout.split())),
                       key=lambda p: -p[1])
        print(f"  then a fresh process: {out.stderr.strip().splitlines()[-1]} (numba's target made ready: "
              f"compiling.prepare_target); first call of each method: slowest {times[0][0]} {times[0][1]:.3f} s, "
              f"median {times[len(times) // 2][1]:.3f} s, total {sum(t for _, t in times):.2f} s "
              f"({len(times)} methods)")
        if not cold:
            print("  " + ", ".join(f"{name} {seconds:.3f}" for name, seconds in times))


def main():
    import argparse
    import os
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--every", action="store_true", help="also every method, cold and after compile")
    parser.add_argument("--after-compile", action="store_true",
                        help="only robot-dynamics compile in an empty cache and every method's first call after it")
    parser.add_argument("--jobs", type=int, default=2, help="processes of robot-dynamics compile (--every)")
    args = parser.parse_args()
    if args.after_compile:
        every(args.jobs, cold=False)
        return
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold", "warm", "warm"):
            wall, stdout, stderr = run(env)
            print(f"{label}: {wall:.2f} s wall | {stdout} | stderr: {stderr or '(nothing)'}")
    if args.every:
        every(args.jobs)


if __name__ == "__main__":
    main()
