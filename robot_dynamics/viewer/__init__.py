"""A 3D view of a robot in the browser (issue 40), on viser: the model's visuals (a URDF's meshes and primitives,
an MJCF's geoms), every frame, each body's CoM and equivalent-inertia box, the whole robot's CoM and its ground
projection, joint sliders with M's condition number and g, a second set of inertia boxes (show_parameters) and
force arrows (show_wrench, show_contacts).

    import robot_dynamics as rd
    viewer = rd.view("panda.urdf")                 # prints http://127.0.0.1:8080
    viewer.update(q)

An optional extra (``pip install -e ".[view]"``: viser, trimesh, pycollada): `import robot_dynamics` does not
import this package (named viewer so that it does not shadow rd.view), rd.view loads it on first use.

    visuals.py  what a URDF or MJCF draws (Visual), meshes resolved, each shape's trimesh
    scene.py    the Viewer: the scene, the panel, update(q), show_parameters, show_wrench, show_contacts
"""
from ..loading import load
from ..robot import Robot
from .scene import Viewer, equivalent_box
from .visuals import ViewWarning, Visual, mjcf_visuals, model_visuals, read_visuals, resolve_mesh

__all__ = ["view", "Viewer", "ViewWarning", "Visual", "equivalent_box", "mjcf_visuals", "model_visuals",
           "read_visuals", "resolve_mesh"]


def view(robot, q=None, port=8080, host="127.0.0.1", source=None, **load_options):
    """A Viewer of `robot` at q (the neutral configuration when None) serving a page on http://host:port (the next
    free port when taken), whose URL it prints.

    robot: a Robot, or a URDF path, .xacro path or MJCF path or text (loaded with rd.load and load_options).  The
    visuals come from the model file: the path given, or `source` for a Robot (a URDF or MJCF path or text, or the
    compiled mujoco.MjModel it came from); without one, only its frames and inertias are drawn.
    """
    if not isinstance(robot, Robot):
        source = robot
        robot = load(robot, **load_options)
    viewer = Viewer(robot, q, source=source, host=host, port=port)
    print(f"robot_dynamics view: {viewer.url}")
    return viewer
