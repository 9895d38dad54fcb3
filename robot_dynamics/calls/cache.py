"""Where the compiled kernels are cached.

numba checks a cached kernel against its own source file only, so a kernel whose callee in another module has
changed would load stale machine code.  `kernel_cache` therefore gives numba (through its documented setting
numba.config.CACHE_DIR, for the duration of the kernels' import only) a directory named after a hash of every
kernel source: editing any of them starts a new directory, and importing deletes nothing.  The directory lies beside
the package when that is writable, else in the user's cache directory (a read-only site-packages).  Beside the
package, every other such directory was left by older sources of that very package: `remove_stale` (which
`robot-dynamics compile` runs) deletes those, never one elsewhere (NUMBA_CACHE_DIR or the user's cache may be
shared by other installations).  The first use on a machine compiles for tens of seconds and says so on stderr,
once.  Generated modules (the C entry points and checks of generated.py) are written there too
(`generated_module`), so that numba caches them as well.
"""
import atexit
import contextlib
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numba

_cache_dir = None
_announced = False
PREFIX = "robot_dynamics-kernels-"
_in_use = set()                 # the directories kernel_cache chose in this process
_beside = set()                 # those of them in a package's own __pycache__ (remove_stale's only places)


def _writable(directory):
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def kernel_cache(package_dir, sources, generated=True):
    """numba caches the kernels defined (decorated) within this context in a directory named after the hash of
    the files `sources`: beside the package (package_dir/__pycache__) when writable, else in the user cache; the
    context gives that directory (None when none is writable).  With `generated` (the kernels' own context,
    algorithms/__init__) it is also where generated modules go and what cache_is_cold looks at; controllers/
    caches its compiled ticks under a hash of their own and their callees' sources without it."""
    global _cache_dir
    digest = hashlib.sha256(b"".join(Path(s).read_bytes() for s in sorted(map(str, sources)))).hexdigest()[:16]
    name = f"{PREFIX}{digest}"
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    base = Path(numba.config.CACHE_DIR) if numba.config.CACHE_DIR else None
    directory = next((candidate / name for candidate in ([base] if base else [Path(package_dir) / "__pycache__", user])
                      if _writable(candidate / name)), None)
    if generated and directory is not None:
        _cache_dir = directory
    if directory is not None:
        _in_use.add(directory)
        if directory.parent == Path(package_dir) / "__pycache__":
            _beside.add(directory)
    with cached_in(directory):
        yield directory


@contextlib.contextmanager
def cached_in(directory):
    """numba caches what is compiled within this context (a function decorated or a cfunc built) in `directory`
    (as it is: numba's own choice where None).  A cfunc built later than its module's import -- a controller's
    tick entry, built by its first controller -- takes the directory its module was imported in (kernel_cache's),
    or it would be cached against its own file only and load stale machine code after a callee's change."""
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(directory) if directory else previous
    try:
        yield
    finally:
        numba.config.CACHE_DIR = previous


def remove_stale():
    """Delete the kernel cache directories that older sources left beside the package: in each package's own
    __pycache__ where this process caches (kernel_cache), every folder named PREFIX + a hash but the ones in use.
    Nothing under NUMBA_CACHE_DIR or in the user's cache, which other installations may share.  A process still
    running the older sources keeps the machine code it has loaded.  Returns [(path, bytes)] of what was
    deleted."""
    removed = []
    for folder in sorted({directory.parent for directory in _beside}):
        for old in sorted(folder.glob(PREFIX + "*")):
            if old in _in_use or not old.is_dir():
                continue
            size = sum(f.stat().st_size for f in old.rglob("*") if f.is_file())
            shutil.rmtree(old, ignore_errors=True)
            if not old.exists():
                removed.append((old, size))
    return removed


def cache_is_cold():
    """True when the kernel cache holds no compiled kernel yet: this machine's first run."""
    return not (_cache_dir and any(_cache_dir.rglob("*.nbi")))


def announce_if_cold():
    """Say once per process, on stderr, that the kernels are being compiled when their cache is empty."""
    global _announced
    if not _announced and cache_is_cold():
        print("robot_dynamics: compiling the dynamics kernels for this machine (once; later runs load them from "
              "numba's cache)...", file=sys.stderr, flush=True)
    _announced = True


_scratch = None                 # a temporary directory for generated modules when the cache directory is read-only


def generated_module(name, source, namespace):
    """(module, cacheable): the module of `source`, run with `namespace` among its globals and registered in
    sys.modules (numba's cache imports a compiled function's module by name when it loads it back) -- a file in the
    kernels' cache directory named after its hash and written once (numba dates its cache by the file; a reader can
    open it), or, without a writable one, in a temporary directory of this process, which numba does not cache."""
    global _scratch
    stem, suffix = os.path.splitext(name)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    for cacheable in (True, False):
        if cacheable and _cache_dir is None:
            continue
        if not cacheable and _scratch is None:
            _scratch = Path(tempfile.mkdtemp(prefix="robot_dynamics-generated-"))
            atexit.register(shutil.rmtree, _scratch, True)
        path = (_cache_dir if cacheable else _scratch) / f"{stem}_{digest}{suffix}"
        try:
            if not path.exists():
                temporary = path.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(source)
                os.replace(temporary, path)        # atomic: another process never reads half a file
            break
        except OSError:
            if not cacheable:
                raise
    name = f"robot_dynamics_generated_{stem}_{digest}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        module.__dict__.update(namespace)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module, cacheable
