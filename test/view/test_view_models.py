"""The view of every bundled robot and of an MJCF (issue 40), without a browser: the scene holds one frame per
link and one mesh per visual as xml.etree counts them, and an MJCF's geoms are where and as large as MuJoCo puts
them (geom_xpos, geom_xmat after mj_kinematics; geom_aabb, the box MuJoCo bounds each geom with)."""
import importlib.util
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import robot_dynamics as rd
from robot_dynamics.bundled import bundled_names, bundled_urdf

pytestmark = pytest.mark.skipif(importlib.util.find_spec("viser") is None,
                                reason="the view extra is not installed: pip install -e '.[view]'")

MJCF = """<mujoco model="shapes">
  <asset><mesh name="tet" vertex="0 0 0  0.2 0 0  0 0.1 0  0 0 0.3"/><material name="red" rgba="1 0 0 1"/></asset>
  <worldbody>
    <geom type="plane" size="0 0 0.1"/>
    <body name="upper" pos="0 0 1" euler="0 30 0">
      <joint name="hinge" type="hinge" axis="0 1 1"/>
      <geom type="mesh" mesh="tet" pos="0.1 0.2 0.3" euler="10 20 30"/>
      <geom type="capsule" size="0.05 0.2" quat="0.9 0.1 0.3 0.2" rgba="0.2 0.3 0.9 1"/>
      <geom type="box" size="0.1 0.2 0.3" group="3"/>
      <geom type="sphere" size="0.3" rgba="0 0 0 0"/>
      <body pos="0.3 0 0.1">
        <joint type="slide" axis="1 0 0"/>
        <geom type="ellipsoid" size="0.1 0.2 0.3" pos="0 0.1 0" material="red"/>
        <geom type="cylinder" fromto="0 0 0 0.2 0.1 0.3" size="0.04"/>
        <geom type="box" size="0.05 0.1 0.15" pos="0.2 0 0" euler="45 0 10"/>
        <geom type="sphere" size="0.07" pos="0 0 -0.2"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def _world_pose(viewer, handle):
    """The world placement (4, 4) of a scene node, composed from its ancestors' poses (/bodies/k, links/NAME)."""
    nodes = {h.name: h for h in (*viewer.bodies, *viewer.links)}
    T, path = np.eye(4), ""
    for part in handle.name.strip("/").split("/"):
        path += "/" + part
        node = nodes.get(path, handle if path == handle.name else None)
        if node is not None:
            local = np.eye(4)
            local[:3, :3] = Rotation.from_quat(np.roll(node.wxyz, -1)).as_matrix()
            local[:3, 3] = node.position
            T = T @ local
    return T


@pytest.mark.parametrize("name", bundled_names())
def test_every_bundled_robot_opens(name):
    """One frame per <link>, one mesh per <visual>, no impossible inertia and no warning."""
    path = bundled_urdf(name)
    urdf = ET.parse(path).getroot()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        viewer = rd.view(path)
    try:
        assert len(viewer.links) == len(viewer.axes) == len(urdf.findall("link"))
        assert len(viewer.meshes) == len(urdf.findall("link/visual"))
        assert viewer.impossible == [] and len(viewer.sliders) == viewer.robot.nv
    finally:
        viewer.close()


def test_mjcf_geoms_are_where_mujoco_puts_them():
    """The geoms MuJoCo's viewer shows (groups 0-2, not transparent: 7 of the 9 written) are drawn, each at
    MuJoCo's world placement at a random configuration, its shape as large as MuJoCo's bounding box of it; every
    body is a frame; the ellipsoid takes its material's colour."""
    import mujoco
    import trimesh
    from robot_dynamics.viewer import mjcf_visuals
    from robot_dynamics.viewer.visuals import shape
    root = ET.fromstring(MJCF)
    shown = [g for g in root.iter("geom") if int(g.get("group", 0)) < 3 and not g.get("rgba", "").endswith(" 0")]
    m = mujoco.MjModel.from_xml_string(MJCF)
    ids = [i for i in range(m.ngeom) if m.geom_group[i] < 3 and m.geom_rgba[i, 3] > 0]
    assert len(shown) == len(ids) == 7
    viewer = rd.view(MJCF)
    try:
        assert len(viewer.meshes) == len(shown)
        assert {"world", "upper", "body2"} <= {h.name.rsplit("/", 1)[1] for h in viewer.links}
        q = np.array([0.7, -0.15])
        viewer.update(q)
        d = mujoco.MjData(m)
        d.qpos[:] = q
        mujoco.mj_kinematics(m, d)
        for handle, i in zip(viewer.meshes, ids):
            T = _world_pose(viewer, handle)
            np.testing.assert_allclose(T[:3, 3], d.geom_xpos[i], atol=1e-12)
            np.testing.assert_allclose(T[:3, :3], d.geom_xmat[i].reshape(3, 3), atol=1e-12)
        for visual, i in zip(mjcf_visuals(m), ids):
            if visual.kind == "plane":
                assert visual.size.tolist() == [4.0, 4.0]           # an infinite plane as the ground grid
                continue
            bounds = shape(visual, trimesh).bounds
            # an icosphere's vertices lie on the sphere, none on the axes: its box is within 1 % of the sphere's;
            # MuJoCo keeps a mesh's vertices in float32 (1e-7 relative)
            tolerance = {"sphere": 0.01 * visual.size.max(), "ellipsoid": 0.01 * visual.size.max(),
                         "mesh": 1e-7 * np.abs(m.geom_aabb[i]).max()}.get(visual.kind, 1e-12)
            np.testing.assert_allclose(bounds.mean(axis=0), m.geom_aabb[i, :3], atol=tolerance)
            np.testing.assert_allclose((bounds[1] - bounds[0]) / 2, m.geom_aabb[i, 3:], atol=tolerance)
        assert mjcf_visuals(m)[3].kind == "ellipsoid" and mjcf_visuals(m)[3].rgba == (1.0, 0.0, 0.0, 1.0)
    finally:
        viewer.close()


@pytest.mark.parametrize("name, floating_base", [("panda.urdf", False), ("solo12.urdf", True)])
def test_example_robot_data_meshes_are_resolved(name, floating_base):
    """example-robot-data's panda (DAE) and solo12 (STL), their meshes named by package://: every <visual> drawn
    from its file (a ViewWarning, an unresolved mesh, would be an error here), one frame per <link>."""
    from oracle import erd_path
    path = erd_path(name)
    urdf = ET.parse(path).getroot()
    from robot_dynamics.viewer import ViewWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=ViewWarning)
        viewer = rd.view(path, floating_base=floating_base)
    try:
        assert len(viewer.meshes) == len(urdf.findall("link/visual"))
        assert len(viewer.links) == len(urdf.findall("link"))
    finally:
        viewer.close()
