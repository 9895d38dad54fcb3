"""Start-up time: import + load_urdf + first dynamics() call, cold (empty numba cache) and warm.

    python benchmarks/startup.py

Runs fresh interpreters with NUMBA_CACHE_DIR pointing at a new empty folder (cold: compiles every kernel, the
batch kernel included), then again with the same folder (warm: loads them).  Prints wall times and the stderr.
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


def main():
    import os
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold", "warm", "warm"):
            wall, stdout, stderr = run(env)
            print(f"{label}: {wall:.2f} s wall | {stdout} | stderr: {stderr or '(nothing)'}")


if __name__ == "__main__":
    main()
