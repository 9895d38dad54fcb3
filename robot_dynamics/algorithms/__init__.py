"""Layer 3: one module per published algorithm or family, compiled with numba (see compiled.py for the cache).

The kernel modules are imported here, inside `kernel_cache`, so that numba caches them in a directory keyed by
a hash of all their sources (a change to any callee invalidates every caller)."""
from pathlib import Path

from .. import model
from ..compiled import kernel_cache

_HERE = Path(__file__).parent
_KERNELS = ("operators", "kinematics", "matrices", "regressor", "newton_euler", "bundle", "energy", "workspace",
            "registry")

with kernel_cache(_HERE, [_HERE / f"{name}.py" for name in _KERNELS] + [Path(model.__file__),
                                                                       Path(__file__).parent.parent / "compiled.py"]):
    from . import registry, workspace                                                 # noqa: F401 (and the rest)
