"""Load time and memory against size, and memory over many loads (issue 13).

    python benchmarks/bench_loading.py [--sizes 100 300 1000 3000 10000] [--loads 10000]

Size: for chains and stars of n links (test/random_urdf.tree_urdf: inertial, visual and collision geometry, limits),
each in a fresh interpreter in which the kernels have already run (the issue's worst case: loading used to run them
on example arrays of nv x 10 nb): load_urdf's wall time (best of 3); the peak resident memory the first load adds
(Linux VmHWM, reset before it: the parse's transient objects included); what the robot keeps, traced by
tracemalloc, without its workspace (16 kB a body, reserved at load and paged in when a kernel runs: "work"); and
what is left when it is dropped with the garbage collector off (a reference cycle would keep all of it).

Loads: load_urdf of arm7 --loads times after 500 loads of warm-up; resident memory growth (the issue saw 10-19 kB a
load).  Linux only (/proc).
"""
import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SIZE = """
import gc, sys, time, tracemalloc
sys.path.insert(0, {test!r})
import numpy as np
import robot_dynamics as rd
from random_urdf import tree_urdf


def resident():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20


def peak():
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")) / 1024


warm = rd.load_urdf({arm!r}, floating_base=True)
q, v = warm.random_state(0)
for name in ("mass_matrix", "gravity_vector", "com_jacobian", "inverse_mass_matrix", "christoffel_symbols"):
    getattr(warm, name)(q)
warm.dynamics(q, v, v, v), warm.state_derivatives(q, v), warm.forward_dynamics_derivatives(q, v, v)
text = tree_urdf({n}, {shape!r})
gc.collect()
base = resident()
open("/proc/self/clear_refs", "w").write("5")                       # VmHWM := VmRSS
robot = rd.load_urdf(text)
added = peak() - base
times = []
for _ in range(3):
    start = time.perf_counter()
    rd.load_urdf(text)
    times.append(time.perf_counter() - start)
del robot
gc.collect()
gc.disable()                                                          # a reference cycle would keep the robot
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
robot = rd.load_urdf(text)
work = robot._work.nbytes                                             # reserved, paged in when kernels run
kept = tracemalloc.get_traced_memory()[0] - before - work
del robot
left = tracemalloc.get_traced_memory()[0] - before
print(f"{{min(times):.3f}} {{added:.1f}} {{kept / 2**20:.1f}} {{work / 2**20:.1f}} {{left / 2**20:.2f}} "
      f"{{len(text) / 2**20:.2f}}")
"""

LOADS = """
import gc
import robot_dynamics as rd


def resident():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20


robot = rd.load_urdf({arm!r})
q, v = robot.random_state(0)
robot.dynamics(q, v, v, v)
for _ in range(500):
    rd.load_urdf({arm!r})
gc.collect()
base = resident()
marks = []
for i in range({loads}):
    rd.load_urdf({arm!r})
    if (i + 1) % ({loads} // 5) == 0:
        marks.append(f"{{i + 1}}: {{resident() - base:+.2f}} MB")
print(", ".join(marks))
"""


def run(script):
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
    if result.returncode:
        raise RuntimeError(result.stderr[-3000:])
    return result.stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000, 3000, 10000])
    parser.add_argument("--loads", type=int, default=10000)
    args = parser.parse_args()
    arm = str(ROOT / "urdf" / "arm7.urdf")
    print(f"{'links':>6} {'shape':>5} {'MB text':>8} {'load s':>7} {'us/link':>8} {'peak +MB':>9} {'robot MB':>9} "
          f"{'work MB':>8} {'left MB':>8}")
    for n in args.sizes:
        for shape in ("chain", "star"):
            seconds, added, kept, work, left, size = map(float, run(SIZE.format(
                test=str(ROOT / "test"), arm=arm, n=n, shape=shape)).split())
            print(f"{n:>6} {shape:>5} {size:>8.2f} {seconds:>7.3f} {seconds / n * 1e6:>8.1f} {added:>9.1f} "
                  f"{kept:>9.1f} {work:>8.1f} {left:>8.2f}", flush=True)
    print(f"resident memory over {args.loads} load_urdf(arm7) after 500 of warm-up: "
          + run(LOADS.format(arm=arm, loads=args.loads)))


if __name__ == "__main__":
    main()
