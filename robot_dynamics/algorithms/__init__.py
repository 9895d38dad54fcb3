"""Layer 3: one module per published algorithm or family, compiled with numba (see calls/cache.py for the cache).

The kernel modules are imported here (through the registry, which imports them all), inside `kernel_cache`, so
that numba caches them in a folder keyed by a hash of every module of this package but reference.py (plain
numpy) and registry.py (the table: it defines no kernel, and the checks it generates are cached under a hash of
their own source), of model.py (the body record), of dense.py and simd.py (the small linear algebra a kernel
calls, and the four-lane values it is written with) and of calls/compiling.py, generated.py and batch.py (the
compiled checks, the generated C entry points, the batch loop): a change to any callee invalidates every caller."""
from pathlib import Path

from .. import model
from ..calls import batch, generated    # noqa: F401  first: their own kernels (the batch loop...) cache apart
from ..calls.cache import kernel_cache

_HERE = Path(__file__).parent
SOURCES = [p for p in _HERE.glob("*.py") if p.name not in ("reference.py", "registry.py")] + [
    Path(model.__file__), _HERE.parent / "dense.py", _HERE.parent / "simd.py",
    *(_HERE.parent / "calls" / name for name in ("compiling.py", "generated.py", "batch.py"))]

with kernel_cache(_HERE, SOURCES):
    from . import registry                                                            # noqa: F401
