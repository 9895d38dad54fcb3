"""Compiled kernels from a read-only installation: they are cached in the user's cache directory, the first run
says on stderr that it compiles, and a second run loads them silently.  (Timing goals are in
benchmarks/startup.py, not here.)
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


@pytest.mark.parametrize("numba_cache_dir", [False, True], ids=["default", "NUMBA_CACHE_DIR"])
def test_a_changed_kernel_source_gets_a_new_cache_directory(tmp_path, monkeypatch, numba_cache_dir):
    """numba validates a cached kernel against its own file only; kernel_cache names the cache directory after a
    hash of every kernel source, so that editing a callee (kinematics.py) cannot leave a caller loading stale
    code -- and nothing is deleted.  Kernels decorated inside the context cache there, beside the package or,
    when the user set NUMBA_CACHE_DIR (as Docker images and clusters do), under that directory; numba's setting
    is restored after it.  Both cases are set here, whatever the environment running the tests says."""
    import importlib.util
    import numba
    from robot_dynamics.calls import cache

    package, sources = tmp_path / "package", tmp_path / "src"
    user_dir = tmp_path / "user-numba-cache"
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(user_dir) if numba_cache_dir else "")
    package.mkdir()
    sources.mkdir()
    callee, kernel = sources / "callee.py", package / "kernel_module.py"
    callee.write_text("# a callee\n")
    kernel.write_text("from numba import njit\n\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    files = [callee, kernel]
    setting = numba.config.CACHE_DIR

    def load():
        with cache.kernel_cache(package, files):
            spec = importlib.util.spec_from_file_location("kernel_module", kernel)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        assert numba.config.CACHE_DIR == setting
        assert module.twice(21) == 42
        return cache._cache_dir

    first = load()
    assert first.parent == (user_dir if numba_cache_dir else package / "__pycache__")
    assert list(first.rglob("*.nbi")), "cached in the hashed folder"
    assert load() == first, "unchanged sources: the same folder"
    callee.write_text("# a callee, edited\n")
    second = load()
    assert second != first and list(second.rglob("*.nbi")), "a changed callee: a new folder, compiled afresh"
    assert list(first.rglob("*.nbi")), "the old folder is left as it was"


def test_compile_removes_only_the_folders_older_sources_left_beside_the_package(tmp_path, monkeypatch):
    """remove_stale (robot-dynamics compile) deletes the hashed folders beside the package but the one in use --
    older sources of that very package left them -- and nothing in a shared place (NUMBA_CACHE_DIR, the user's
    cache: other installations' folders), nor anything not named like a kernel folder."""
    import importlib.util
    import numba
    from robot_dynamics.calls import cache

    for name, value in (("_in_use", set()), ("_beside", set()), ("_cache_dir", cache._cache_dir)):
        monkeypatch.setattr(cache, name, value)
    package, shared = tmp_path / "package", tmp_path / "shared-numba-cache"
    package.mkdir()
    kernel = package / "kernel_module.py"
    kernel.write_text("from numba import njit\n\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n")

    def load(cache_dir):
        monkeypatch.setattr(numba.config, "CACHE_DIR", cache_dir)
        with cache.kernel_cache(package, [kernel]) as directory:
            spec = importlib.util.spec_from_file_location("kernel_module", kernel)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        assert module.twice(21) == 42
        return directory

    current, in_shared = load(""), load(str(shared))
    assert current.parent == package / "__pycache__" and in_shared.parent == shared
    old, other_install = package / "__pycache__" / (cache.PREFIX + "0" * 16), shared / (cache.PREFIX + "1" * 16)
    for folder in (old / "sub", other_install):
        folder.mkdir(parents=True)
        (folder / "kernel.nbc").write_bytes(b"x" * 1000)
    unrelated = package / "__pycache__" / "kernel_module.cpython-311.pyc.d"
    unrelated.mkdir()
    not_a_folder = package / "__pycache__" / (cache.PREFIX + "2" * 16)
    not_a_folder.write_text("a file")

    assert cache.remove_stale() == [(old, 1000)]
    assert not old.exists()
    assert list(current.rglob("*.nbi")) and list(in_shared.rglob("*.nbi")), "the folders in use are kept"
    assert other_install.exists() and unrelated.exists() and not_a_folder.exists()
    assert cache.remove_stale() == []


def test_the_controllers_ticks_cache_under_a_hash_of_their_callees():
    """A tick links configuration.lie_difference, inertia's projection and dense's Cholesky into its machine code,
    and numba checks a cache against the tick's own file: controllers/ caches its ticks in a folder named after a
    hash of those callees' sources too (an edited lie_difference once ran stale inside the ticks), and leaves the
    kernels' folder -- where generated modules go, what cache_is_cold reads -- as the kernels set it."""
    import robot_dynamics.algorithms  # noqa: F401  (the kernels' folder first, as any user's import does)
    from robot_dynamics.calls import cache
    kernels = cache._cache_dir
    from robot_dynamics import controllers
    from robot_dynamics.controllers import _composite_tick, _ct_tick, _osc_tick, _slotine_tick

    package = Path(controllers.__file__).parent.parent
    hashed = {p.resolve() for p in controllers._SOURCES}
    for name in ("configuration.py", "inertia.py", "dense.py", "simd.py", "spatial.py", "controllers/_ct_tick.py",
                 "algorithms/kinematics.py", "calls/generated.py"):
        assert (package / name).resolve() in hashed, name
    for tick in (_ct_tick.space_difference, _osc_tick.osc_tick, _slotine_tick.sl_tick, _composite_tick.tick):
        folder = Path(tick._cache._cache_path)
        assert any(part.startswith("robot_dynamics-kernels-") for part in folder.parts), folder
        assert kernels is None or kernels not in folder.parents, "not the kernels' folder"
    assert cache._cache_dir == kernels


def test_a_controllers_tick_entry_caches_beside_its_tick():
    """The C entry of a tick (a cfunc linking the whole tick) is built by the first controller, after
    controllers/'s import: it must be cached in the ticks' hashed folder, or an edited tick would be loaded stale
    from a cache checked against the entry's file alone (a changed _composite_tick.tick once ran its old code)."""
    from robot_dynamics import load_urdf
    from robot_dynamics.bundled import bundled_urdf
    from robot_dynamics.calls.native import FAST_CALLS
    from robot_dynamics.controllers import CompositeSlotineLi, ComputedTorque, _composite_call, _ct_tick

    if not FAST_CALLS:
        pytest.skip("no C extension: the ticks are called through their compiled overloads, no cfunc is built")
    ComputedTorque(load_urdf(bundled_urdf("arm7")), 100.0, 20.0)
    CompositeSlotineLi.compile_tick()              # without a robot (a first run's worker builds it so)
    for entry, tick in ((_ct_tick.ct_entry, _ct_tick.ct_tick), (_composite_call.cs_entry, _composite_call.cs_tick)):
        folder = Path(tick._cache._cache_path)
        assert Path(_ct_tick._cfuncs[entry]._cache._cache_path) == folder, (entry, folder)
        assert any(part.startswith("robot_dynamics-kernels-") for part in folder.parts), folder
