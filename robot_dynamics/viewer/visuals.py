"""What the view draws of a model file: the <visual>s of a URDF (read_visuals, resolve_mesh) or the geoms of an
MJCF as MuJoCo compiled them (mjcf_visuals), each a Visual in its link's frame, and its trimesh (shape)."""
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lxml import etree

from ..loading import is_mjcf
from ..mjcf import body_names, compile_mjcf
from ..spatial import quaternion_rotation, rpy_rotation
from ..urdf import is_xml_text


class ViewWarning(UserWarning):
    """Something of the model the view cannot draw (an unresolvable or unreadable mesh, a height field): drawn as a
    placeholder."""


@dataclass
class Visual:
    """One shape drawn on a link: its pose in the link (4, 4), its kind ("mesh", "box", "cylinder", "sphere",
    "capsule", "ellipsoid", "plane"), the geometry's numbers (a mesh's scale (3,), a box's sides (3,), a
    cylinder's or capsule's [radius, length between its ends' centres], a sphere's [radius], an ellipsoid's radii
    (3,), a plane's sides (2,)), a mesh file's resolved path (None when unresolvable) and its URDF filename, or an
    MJCF mesh's (vertices (nv, 3), faces (nf, 3)) as data, an RGBA or None."""
    link: str
    pose: np.ndarray
    kind: str
    size: np.ndarray
    path: str | None = None
    filename: str | None = None
    rgba: tuple | None = None
    data: tuple | None = None


def model_visuals(source):
    """The Visuals of a model file: an MJCF (path, text or compiled mujoco.MjModel: mjcf_visuals) or a URDF (path,
    .xacro path or text: read_visuals); none for None."""
    if source is None:
        return []
    if hasattr(source, "geom_type"):
        return mjcf_visuals(source)
    return mjcf_visuals(compile_mjcf(source)) if is_mjcf(source) else read_visuals(source)


def read_visuals(source):
    """The <visual>s of every link of a URDF (path or .xacro path; XML text resolves no relative mesh path), their
    meshes' files resolved (resolve_mesh) and materials' colours (a link's own or the <robot>'s named one)."""
    from ..urdf.text import read_robot
    robot = read_robot(source)
    base = None if is_xml_text(source) else Path(os.fsdecode(source)).resolve().parent
    named = {m.get("name"): _rgba(m) for m in robot.iterchildren("material")}
    visuals = []
    for link in robot.iterchildren("link"):
        for element in link.iterchildren("visual"):
            geometry = element.find("geometry")
            shape = None if geometry is None else next(geometry.iterchildren(etree.Element), None)
            if shape is None:
                continue
            material = element.find("material")
            rgba = None if material is None else (_rgba(material) or named.get(material.get("name")))
            visual = Visual(link.get("name"), _origin(element.find("origin")), shape.tag, np.ones(3), rgba=rgba)
            if shape.tag == "mesh":
                visual.filename = shape.get("filename", "")
                visual.size = np.array([float(s) for s in shape.get("scale", "1 1 1").split()])
                visual.path = resolve_mesh(visual.filename, base)
            elif shape.tag == "box":
                visual.size = np.array([float(s) for s in shape.get("size", "0 0 0").split()])
            elif shape.tag == "cylinder":
                visual.size = np.array([float(shape.get("radius", 0)), float(shape.get("length", 0))])
            elif shape.tag == "sphere":
                visual.size = np.array([float(shape.get("radius", 0))])
            else:
                continue
            visuals.append(visual)
    return visuals


def resolve_mesh(filename, base):
    """The file a URDF mesh filename names, or None: ``file://`` and absolute paths as they are, relative ones from
    the URDF's folder `base`; ``package://PKG/rest`` as ROS resolves it -- share/PKG of AMENT_PREFIX_PATH, a
    ROS_PACKAGE_PATH folder -- or, without ROS, from the nearest folder above the URDF named PKG or holding PKG."""
    if filename.startswith("file://"):
        filename = filename[len("file://"):]
    candidates = []
    if filename.startswith("package://"):
        package, _, rest = filename[len("package://"):].partition("/")
        for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
            candidates.append(Path(prefix) / "share" / package / rest)
        for folder in filter(None, os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep)):
            candidates.append(Path(folder) / package / rest)
        for folder in ([base, *base.parents] if base is not None else []):
            candidates.append((folder if folder.name == package else folder / package) / rest)
    elif os.path.isabs(filename):
        candidates.append(Path(filename))
    elif base is not None:
        candidates.append(base / filename)
    return next((str(c) for c in candidates if c.is_file()), None)


# mjtGeom: plane, hfield, sphere, capsule, ellipsoid, cylinder, box, mesh, sdf (MuJoCo's enum order)
MJCF_KINDS = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf")
DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)              # MuJoCo's geom rgba when none is given
PLANE_SIDE = 4.0                                 # m, drawn for an infinite plane (size 0), the ground grid's side


def mjcf_visuals(m):
    """The geoms of a compiled mujoco.MjModel that MuJoCo's viewer shows by default (geom_group 0, 1, 2) and that
    are not transparent, each on its body's frame (mjcf.body_names): geom_pos, geom_quat ([w, x, y, z]) in the
    body, geom_size as MuJoCo reads it per type -- a sphere's radius, a capsule's and cylinder's radius and half
    length, an ellipsoid's radii, a box's half sides, a plane's half sides (0: infinite) -- a mesh's vertices in
    the geom's frame (mesh_vert, MuJoCo having moved them there) and faces; the colour the geom's rgba, or its
    material's when the geom keeps the default."""
    names = body_names(m)
    visuals = []
    for i in range(m.ngeom):
        rgba = tuple(float(x) for x in m.geom_rgba[i])
        if m.geom_matid[i] >= 0 and rgba == DEFAULT_RGBA:
            rgba = tuple(float(x) for x in m.mat_rgba[m.geom_matid[i]])
        if m.geom_group[i] > 2 or rgba[3] == 0.0:
            continue
        pose = np.eye(4)
        pose[:3, :3] = quaternion_rotation(m.geom_quat[i][[1, 2, 3, 0]])      # MuJoCo's [w, x, y, z]
        pose[:3, 3] = m.geom_pos[i]
        kind, size = MJCF_KINDS[m.geom_type[i]], m.geom_size[i].astype(float)
        visual = Visual(names[m.geom_bodyid[i]], pose, kind, size, rgba=rgba)
        if kind in ("box", "plane"):
            visual.size = 2.0 * np.where(size > 0, size, PLANE_SIDE / 2)[:3 if kind == "box" else 2]
        elif kind in ("capsule", "cylinder"):
            visual.size = np.array([size[0], 2.0 * size[1]])
        elif kind == "sphere":
            visual.size = size[:1]
        elif kind == "mesh":
            mesh = m.geom_dataid[i]
            vertices = m.mesh_vert[m.mesh_vertadr[mesh]:m.mesh_vertadr[mesh] + m.mesh_vertnum[mesh]]
            faces = m.mesh_face[m.mesh_faceadr[mesh]:m.mesh_faceadr[mesh] + m.mesh_facenum[mesh]]
            visual.data, visual.size = (vertices.astype(float), faces.astype(int)), np.ones(3)
        elif kind != "ellipsoid":
            visual.filename = f"{kind} {i}"                  # hfield, sdf: a placeholder (shape)
        visuals.append(visual)
    return visuals


def _rgba(material):
    colour = material.find("color")
    if colour is None or colour.get("rgba") is None:
        return None
    return tuple(float(x) for x in colour.get("rgba").split())


def _origin(element):
    T = np.eye(4)
    if element is not None:
        T[:3, :3] = rpy_rotation([float(x) for x in element.get("rpy", "0 0 0").split()])
        T[:3, 3] = [float(x) for x in element.get("xyz", "0 0 0").split()]
    return T


def shape(visual, trimesh):
    """The trimesh of a visual, in its own frame: a mesh file scaled, an MJCF mesh, or a primitive (a capsule and a
    cylinder along z, a plane a 1 mm slab below z = 0); a placeholder sphere (and a ViewWarning naming the file
    or geom) for a mesh it cannot find or read and an MJCF height field or SDF."""
    if visual.kind == "box":
        return trimesh.creation.box(extents=visual.size)
    if visual.kind == "plane":
        return trimesh.creation.box(extents=(*visual.size, 1e-3), transform=_shifted(-5e-4))
    if visual.kind == "cylinder":
        return trimesh.creation.cylinder(radius=visual.size[0], height=visual.size[1])
    if visual.kind == "capsule":
        return trimesh.creation.capsule(radius=visual.size[0], height=visual.size[1])
    if visual.kind in ("sphere", "ellipsoid"):
        sphere = trimesh.creation.icosphere(radius=1.0, subdivisions=2)
        return sphere.apply_scale(visual.size[0] if visual.kind == "sphere" else visual.size)
    if visual.data is not None:
        return trimesh.Trimesh(*visual.data, process=False)
    reason = "not found" if visual.kind == "mesh" else "not drawn"
    if visual.path is not None:
        try:
            mesh = trimesh.load(visual.path, force="mesh")
            if len(mesh.faces):
                mesh.apply_scale(visual.size)
                return mesh
            reason = "no faces"
        except Exception as error:          # trimesh raises many kinds (ValueError, KeyError, ImportError, ...)
            reason = f"{type(error).__name__}: {error}"
    what = "mesh" if visual.kind == "mesh" else "geom"
    warnings.warn(f"link '{visual.link}': {what} '{visual.filename}' {reason}; drawn as a placeholder sphere",
                  ViewWarning, stacklevel=4)
    return trimesh.creation.icosphere(radius=0.03, subdivisions=1)


def _shifted(z):
    T = np.eye(4)
    T[2, 3] = z
    return T
