"""The robots written for this project (urdf/ of the source tree; share/robot_dynamics/urdf once installed)."""
import os
import sys
from pathlib import Path


def _urdf_dirs():
    yield Path(__file__).resolve().parent.parent / "urdf"                 # a source checkout or editable install
    yield Path(sys.prefix) / "share" / "robot_dynamics" / "urdf"         # pip install (data_files)
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            yield Path(prefix) / "share" / "robot_dynamics" / "urdf"      # colcon / ament install


def bundled_names():
    """Names of the bundled robots, e.g. ['arm7', 'humanoid', ...]."""
    return sorted({p.stem for d in _urdf_dirs() if d.is_dir() for p in d.glob("*.urdf")})


def bundled_urdf(name):
    """Path of a bundled robot by name ('arm7' or 'arm7.urdf')."""
    stem = name[:-5] if name.endswith(".urdf") else name
    for d in _urdf_dirs():
        if (d / f"{stem}.urdf").is_file():
            return d / f"{stem}.urdf"
    raise FileNotFoundError(f"no bundled robot named '{name}'; bundled robots: {', '.join(bundled_names())}")
