"""Compiled kernels from a read-only installation: they are cached in the user's cache directory, the first run
says on stderr that it compiles, and a second run loads them silently.  (Timing goals are in
benchmarks/startup.py, not here.)
"""
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from types import SimpleNamespace


ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import sys, numpy as np, robot_dynamics as rd
assert rd.__file__.startswith(sys.argv[1]), rd.__file__
robot = rd.load_urdf(sys.argv[2])
q, v = robot.random_state(0)
d = robot.dynamics(q, v, v, v)
print(repr(float(np.abs(d.Y @ robot.parameters - d.M @ v - d.C @ v - d.g).max())))
"""


def run(site, home):
    env = {k: x for k, x in os.environ.items() if not k.startswith(("NUMBA_CACHE_DIR", "XDG_CACHE_HOME"))}
    env.update(PYTHONPATH=str(site), HOME=str(home))
    # As root, permissions are not enforced; in a new user namespace root keeps ownership but loses the
    # capability to override them, so the read-only folder really is read-only for the run.
    prefix = ["unshare", "--user"] if os.geteuid() == 0 else []
    return subprocess.run(prefix + [sys.executable, "-c", SCRIPT, str(site), str(ROOT / "urdf" / "arm7.urdf")],
                          env=env, cwd=home, capture_output=True, text=True, timeout=240)


def test_read_only_install_caches_in_user_directory(tmp_path):
    site, home = tmp_path / "site", tmp_path / "home"
    shutil.copytree(ROOT / "robot_dynamics", site / "robot_dynamics",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    home.mkdir()
    for path in [site, *site.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        cold, warm = run(site, home), run(site, home)
    finally:
        for path in [site, *site.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count("compiling the dynamics kernels") == 1, cold.stderr
    assert float(cold.stdout) < 1e-10
    assert warm.returncode == 0 and "compiling" not in warm.stderr, warm.stderr
    assert float(warm.stdout) < 1e-10
    cached = list((home / ".cache" / "numba").rglob("*.nbi"))
    assert cached, "numba's index files are in the user cache directory"
    assert not list(site.rglob("*.nbi")) and not list(site.rglob("*.nbc")), "nothing written beside the package"


def test_a_changed_kernel_source_empties_the_cache(tmp_path):
    """numba validates a cached kernel against its own file only; clear_stale_cache fingerprints every kernel
    source, so that editing a callee (kinematics.py) cannot leave a caller (entry_points) loading stale code."""
    from robot_dynamics.algorithms import entry_points
    from robot_dynamics.compiled import clear_stale_cache

    assert Path(entry_points.dynamics._cache._cache_path).is_dir(), "the mechanism sees numba's cache folder"
    cache, sources = tmp_path / "cache", tmp_path / "src"
    sources.mkdir()
    for name in ("kinematics.py", "entry_points.py"):
        (sources / name).write_text(f"# {name}\n")
    dispatcher = SimpleNamespace(_cache=SimpleNamespace(_cache_path=str(cache)))
    files = sorted(sources.glob("*.py"))
    clear_stale_cache(dispatcher, files)                       # first use: records the fingerprint
    (cache / "entry_points.dynamics-1.py311.nbi").write_text("index")
    (cache / "entry_points.dynamics-1.py311.1.nbc").write_text("code")
    (cache / "entry_points.cpython-311.pyc").write_text("bytecode")
    clear_stale_cache(dispatcher, files)                       # unchanged sources: the cache stays
    assert len(list(cache.glob("*.nb?"))) == 2
    (sources / "kinematics.py").write_text("# kinematics.py, edited\n")
    clear_stale_cache(dispatcher, files)                       # a callee changed: the cache goes
    assert not list(cache.glob("*.nb?")) and (cache / "entry_points.cpython-311.pyc").exists()
    clear_stale_cache(dispatcher, files)
    fingerprint = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()
    assert (cache / "robot_dynamics-sources.sha256").read_text() == fingerprint
