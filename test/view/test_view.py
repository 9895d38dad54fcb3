"""The browser view (issue 40): a headless Chromium opens the page of rd.view on a small arm (an STL file beside
its URDF, primitives), the scene holds one mesh per <visual> and one frame per <link> as lxml counts them, the
canvas is not blank and changes when update(q) or a slider moves the robot.  The equivalent-inertia box is
checked against trimesh's mass properties of a solid box; an unresolvable mesh, a port in use and
`import robot_dynamics` without viser are checked without a browser."""
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pytest
from lxml import etree

import robot_dynamics as rd

MISSING = [m for m in ("viser", "trimesh", "collada", "playwright") if importlib.util.find_spec(m) is None]
CHROMIUM = shutil.which("chromium")
needs_view = pytest.mark.skipif(bool(MISSING), reason=f"the view extra is not installed (missing {MISSING}): "
                                                      f"pip install -e '.[view]'")
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install -y chromium)")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def test_import_does_not_load_viser():
    """`import robot_dynamics` imports neither the viewer nor viser; rd.view loads the viewer when first used."""
    code = ("import sys, robot_dynamics as rd; "
            "assert not {'viser', 'trimesh', 'robot_dynamics.viewer'} & set(sys.modules), 'loaded'; "
            "assert rd.view.__module__ == 'robot_dynamics.viewer'")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))


@needs_view
def test_equivalent_box_of_a_solid_box():
    """A uniform box (sides 0.1, 0.3, 0.5, density 700), rotated and offset: trimesh integrates its mass, CoM and
    inertia about the CoM; the body's parameters about the origin follow by Steiner's theorem written here; the
    equivalent box has the box's sides, centre and axes.  An inertia (1, 1, 3) breaks the triangle inequality."""
    import trimesh
    from robot_dynamics.viewer import equivalent_box
    sides = np.array([0.1, 0.3, 0.5])
    T = trimesh.transformations.random_rotation_matrix(np.random.default_rng(2).random(3))
    T[:3, 3] = [0.2, -0.1, 0.4]
    box = trimesh.creation.box(extents=sides, transform=T)
    box.density = 700.0
    m, c, I_c = box.mass, box.center_mass, box.moment_inertia
    I_O = I_c + m * (c @ c * np.eye(3) - np.outer(c, c))
    pi = np.r_[m, m * c, I_O[0, 0], I_O[1, 1], I_O[2, 2], I_O[0, 1], I_O[0, 2], I_O[1, 2]]
    centre, R, found, physical = equivalent_box(np.array([pi, [1.0, 0, 0, 0, 1.0, 1.0, 3.0, 0, 0, 0]]))
    order = np.argsort(found[0])
    assert physical.tolist() == [True, False]
    np.testing.assert_allclose(found[0][order], sides, rtol=1e-9)
    np.testing.assert_allclose(centre[0], T[:3, 3], atol=1e-12)
    np.testing.assert_allclose(np.abs(R[0][:, order].T @ T[:3, :3]), np.eye(3), atol=1e-9)
    assert np.linalg.det(R[0]) == pytest.approx(1.0)


BAD_MESH = """<robot name="r"><link name="base"><visual><geometry><mesh filename="package://nowhere/x.stl"/>
</geometry></visual><visual><geometry><box size="0.1 0.2 0.3"/></geometry></visual>
<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="2" effort="1" velocity="1"/></joint>
<link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="3" ixy="0" ixz="0" iyz="0"/></inertial>
</link></robot>"""


@needs_view
def test_unresolvable_mesh_port_in_use_and_impossible_inertia():
    """A mesh that no folder holds is a warning naming it, drawn as a placeholder (2 meshes for 2 visuals); a port
    in use gives the next free one; the body whose inertia no solid has is named; the slider keeps its limits and
    follows update(q) within them; a q of the wrong shape is a ValueError that leaves the view's q."""
    from robot_dynamics.viewer import ViewWarning
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        viewer = rd.view(BAD_MESH, port=port)
    try:
        assert [str(w.message) for w in caught if w.category is ViewWarning] == [
            "link 'base': mesh 'package://nowhere/x.stl' not found; drawn as a placeholder sphere"]
        assert len(viewer.meshes) == 2 and viewer.impossible == ["arm"]
        assert viewer.server.get_port() > port and viewer.url.endswith(str(viewer.server.get_port()))
        assert (viewer.sliders["j"].min, viewer.sliders["j"].max) == (-1.0, 2.0)
        viewer.update(np.array([0.5]))
        assert viewer.sliders["j"].value == 0.5
        viewer.update(np.array([5.0]))                 # the slider at its limit, the view's q where update put it
        assert viewer.sliders["j"].value == 2.0 and viewer.q.tolist() == [5.0]
        with pytest.raises(ValueError, match="shape"):
            viewer.update(np.zeros(3))
        assert viewer.q.tolist() == [5.0]
    finally:
        viewer.close()
        taken.close()


def _pixels(viewer):
    """The page's picture as Chromium renders it (viser's get_render: the page's own WebGL canvas), (240, 320, 4)."""
    client = next(iter(viewer.server.get_clients().values()))
    return client.get_render(240, 320, transport_format="png").astype(float)


def _changed(viewer, before, what):
    """The canvas's pixels once they differ from `before` (the page redraws when its next frame comes)."""
    found = []
    _until(lambda: found.append(_pixels(viewer)) or np.abs(found[-1] - before).mean() > 0.5, what, seconds=120.0)
    return found[-1]


def _until(condition, what, seconds=60.0):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


ARM = """<robot name="arm"><material name="grey"><color rgba="0.6 0.6 0.6 1"/></material>
<link name="base"><visual><geometry><mesh filename="base.stl" scale="0.5 0.5 1"/></geometry><material name="grey"/>
</visual><inertial><mass value="2"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
</link>
<joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.2"/>
<axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="10" velocity="1"/></joint>
<link name="upper"><visual><origin xyz="0 0 0.25"/><geometry><cylinder radius="0.04" length="0.5"/></geometry>
</visual><visual><origin xyz="0 0 0.5"/><geometry><sphere radius="0.06"/></geometry></visual>
<inertial><origin xyz="0 0 0.25"/><mass value="1"/><inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0"
iyz="0"/></inertial></link>
<joint name="tool" type="fixed"><parent link="upper"/><child link="tool"/><origin xyz="0 0 0.5"/></joint>
<link name="tool"><visual><geometry><box size="0.1 0.05 0.05"/></geometry></visual></link></robot>"""


@pytest.fixture(scope="module")
def arm_page(tmp_path_factory):
    """A small arm's view (an STL file beside its URDF, primitives, a fixed tool link) and a headless Chromium page
    showing it.  A light scene: the browser renders it in software, and panda's 135,000 triangles took it ~30 s
    longer (their files are resolved and counted without a browser: test_view_models)."""
    import trimesh
    from playwright.sync_api import sync_playwright
    folder = tmp_path_factory.mktemp("arm")
    trimesh.creation.box(extents=(0.3, 0.3, 0.1)).export(folder / "base.stl")
    (folder / "arm.urdf").write_text(ARM)
    viewer = rd.view(folder / "arm.urdf")
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        browser = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
                                                       viewport={"width": 320, "height": 240})
        page = browser.new_page()
        page.goto(viewer.url)
        _until(lambda: viewer.server.get_clients(), "the page to connect")
        yield viewer, page, folder / "arm.urdf"
        browser.close()
    viewer.close()


@needs_view
@needs_browser
def test_page_shows_the_robot_and_follows_update_and_sliders(arm_page):
    """One mesh per <visual> (the STL file found beside the URDF), one frame per <link>, a canvas that is not
    blank; update(q) changes the picture; pressing End on the joint's slider puts the joint at its upper limit in
    the viewer's q, and changes the picture again."""
    viewer, page, path = arm_page
    urdf = etree.parse(str(path)).getroot()
    assert len(viewer.meshes) == len(urdf.findall("link/visual")) == 4
    assert len(viewer.links) == len(viewer.axes) == len(urdf.findall("link"))
    assert all(h.position is not None for h in viewer.links) and viewer.impossible == []
    page.wait_for_selector("canvas")
    first = _pixels(viewer)
    assert first.std() > 5.0, "the canvas is blank"
    viewer.update(np.array([1.0]))
    second = _changed(viewer, first, "the picture to change after update(q)")
    slider = page.get_by_role("slider").first
    slider.focus()
    slider.press("End")
    _until(lambda: viewer.q[0] == pytest.approx(1.5), "the slider to move the shoulder")
    _changed(viewer, second, "the picture to change after the slider")


@needs_view
def test_command_serves_the_page():
    """`robot-dynamics view quadruped --floating-base` prints the page's URL, whose HTTP GET returns viser's page."""
    import urllib.request
    command = [sys.executable, "-m", "robot_dynamics.cli", "view", "quadruped", "--floating-base", "--port", "8131"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        line = next(line for line in process.stdout if line.startswith("robot-dynamics view: "))   # after viser's
        assert line.startswith("robot-dynamics view: http://127.0.0.1:"), line
        url = line.split()[2]
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200 and b"<html" in response.read().lower()
    finally:
        process.terminate()
        process.wait(timeout=30)


@needs_view
def test_comparisons_and_arrows_check_their_input():
    """show_parameters names the bodies of a second parameter set that no solid can have (one body's inertia
    made (1, 1, 3)); show_wrench and show_contacts refuse a wrong frame, shape or force count with a ValueError."""
    with pytest.warns(UserWarning, match="x.stl"):     # URDF text: a relative mesh path has no folder to start from
        viewer = rd.view(BAD_MESH.replace('filename="package://nowhere/x.stl"', 'filename="x.stl"'), port=8132)
    try:
        pi = viewer.robot.parameters.reshape(-1, 10).copy()
        assert viewer.show_parameters(pi, "same") == ["arm"]
        pi[0, 4:7] = [1.0, 1.0, 1.5]
        assert viewer.show_parameters(pi, "fixed") == []
        viewer.show_wrench("arm", np.arange(6.0))
        viewer.show_contacts(["arm"], [0.0, 0.0, 9.81])
        viewer.update(np.array([0.5]))
        for call, match in ((lambda: viewer.show_wrench("nowhere", np.zeros(6)), "no frame"),
                            (lambda: viewer.show_wrench("arm", np.zeros(3)), "shape"),
                            (lambda: viewer.show_contacts(["arm"], np.zeros(6)), "take 3"),
                            (lambda: viewer.show_parameters(np.zeros((2, 10)), "long"), "1 x 10")):
            with pytest.raises(ValueError, match=match):
                call()
    finally:
        viewer.close()
