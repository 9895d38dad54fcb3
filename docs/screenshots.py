"""The README's pictures of the view (issue 40): each robot's page rendered by a headless Chromium into docs/.

    python docs/screenshots.py [NAME ...]     # bundled names (arm7, humanoid, ...) and panda, talos, solo12

Needs the view extra and the test extra (example-robot-data, playwright) and Debian's chromium.  Each robot is
shown at a seeded random configuration within its limits, the camera placed from the bodies' extent; the picture
is the page's own WebGL canvas (viser's get_render), as test/view reads it.
"""
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test"))
import robot_dynamics as rd  # noqa: E402
from robot_dynamics.bundled import bundled_urdf  # noqa: E402

FLOATING = {"quadruped", "humanoid", "talos", "solo12"}
THIRD_PARTY = {"panda": "panda.urdf", "talos": "talos_full.urdf", "solo12": "solo12.urdf"}
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]


def source(name):
    """The URDF path of a bundled name or of example-robot-data's robot."""
    if name in THIRD_PARTY:
        from oracle import erd_path
        return erd_path(THIRD_PARTY[name])
    return Path(bundled_urdf(name))


def configuration(robot, path, seed=0):
    """A seeded configuration within the joint limits (the middle of each range, moved by up to a quarter of it;
    an unbounded joint by up to 0.5 rad), a free base at the origin."""
    limits = rd.joint_limits(path, robot)
    low, high = np.asarray(limits.lower, float), np.asarray(limits.upper, float)
    bounded = np.isfinite(low) & np.isfinite(high)
    middle = np.where(bounded, 0.5 * (low + high), 0.0)
    half = np.where(bounded, 0.25 * (high - low), 0.5)
    joints = middle + half * np.random.default_rng(seed).uniform(-1.0, 1.0, size=low.shape)
    q = robot.neutral()
    q[len(q) - len(joints):] = joints
    return q


def shoot(name, out, size=(600, 900)):
    """Render `name`'s page into `out` (PNG)."""
    from playwright.sync_api import sync_playwright
    from PIL import Image
    path = source(name)
    robot = rd.load_urdf(path, floating_base=name in FLOATING)
    q = configuration(robot, path)
    viewer = rd.view(robot, q, source=path)
    points = robot.body_placements(q)[..., :3, 3]
    centre, reach = 0.5 * (points.min(axis=0) + points.max(axis=0)), max(np.ptp(points, axis=0).max(), 0.3)
    try:
        with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
            browser = p.chromium.launch_persistent_context(profile, executable_path=shutil.which("chromium"),
                                                           headless=True, args=FLAGS,
                                                           viewport={"width": size[1], "height": size[0]})
            browser.new_page().goto(viewer.url)
            end = time.monotonic() + 60
            while not viewer.server.get_clients():
                if time.monotonic() > end:
                    raise RuntimeError(f"{name}: the page did not connect")
                time.sleep(0.05)
            client = next(iter(viewer.server.get_clients().values()))
            time.sleep(1.0)                                  # the client's camera is set up
            client.camera.position = tuple(centre + reach * np.array([1.1, -1.1, 0.7]))
            client.camera.look_at = tuple(centre)
            time.sleep(2.0)                                  # meshes arrive and the page redraws
            Image.fromarray(client.get_render(*size, transport_format="png")).save(out)
            browser.close()
    finally:
        viewer.close()


def main(names):
    for name in names or ["arm7", "humanoid", "planar_2link", "quadruped", "torso_two_arm"]:
        out = ROOT / "docs" / f"view_{name}.png"
        shoot(name, out)
        print(f"{name}: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
