"""The Viewer: a robot drawn by viser at a configuration q -- its visuals (visuals.py), every frame, each body's
CoM and equivalent-inertia box, the whole robot's CoM and its ground projection, joint sliders with M's condition
number and g, second sets of inertia boxes (show_parameters) and force arrows (show_wrench, show_contacts)."""
import numpy as np
from scipy.spatial.transform import Rotation

from ..contact_sets import contact_list
from ..loading import joint_limits
from .visuals import model_visuals, shape

BODY_COLOUR = (70, 130, 220)
WARNING_COLOUR = (230, 40, 30)
COM_COLOUR = (20, 20, 20)
FORCE_COLOUR, TORQUE_COLOUR = (230, 120, 0), (150, 0, 200)
COMPARISON_COLOURS = ((40, 180, 80), (220, 180, 0), (0, 190, 190))


def equivalent_box(pi):
    """The uniform solid box with the mass and inertia of each body, and whether a solid can have that inertia.

    pi: (n, 10) [m, m c, I_xx, I_yy, I_zz, I_xy, I_xz, I_yz] about the body origin -> (centre (n, 3), rotation
    (n, 3, 3), sides (n, 3), physical (n,)).  I_c = I_O - m (|c|^2 1 - c c^T) (parallel axes), I_c = R diag(J) R^T,
    and a box of sides a: J_i = m (a_j^2 + a_k^2) / 12, so a_i^2 = 6 (J_j + J_k - J_i) / m.  physical: m > 0 and
    every a_i^2 > 0 (J positive and the triangle inequality J_j + J_k > J_i); sides of others are clipped to
    1e-3 of the largest so they can still be drawn.
    """
    pi = np.asarray(pi, dtype=float).reshape(-1, 10)
    m = pi[:, 0]
    mass = np.where(m > 0.0, m, 1.0)
    c = pi[:, 1:4] / mass[:, None]
    I_O = np.empty((len(pi), 3, 3))
    I_O[:, [0, 1, 2], [0, 1, 2]] = pi[:, 4:7]
    I_O[:, 0, 1] = I_O[:, 1, 0] = pi[:, 7]
    I_O[:, 0, 2] = I_O[:, 2, 0] = pi[:, 8]
    I_O[:, 1, 2] = I_O[:, 2, 1] = pi[:, 9]
    shift = np.einsum("n,nij->nij", np.einsum("ni,ni->n", c, c), np.broadcast_to(np.eye(3), I_O.shape))
    I_c = I_O - mass[:, None, None] * (shift - np.einsum("ni,nj->nij", c, c))
    J, R = np.linalg.eigh(I_c)
    R[:, :, 2] *= np.sign(np.linalg.det(R))[:, None]
    squares = 6.0 * (J.sum(axis=1, keepdims=True) - 2.0 * J) / mass[:, None]
    physical = (m > 0.0) & (squares > 0.0).all(axis=1)
    largest = np.sqrt(np.maximum(squares.max(axis=1, keepdims=True), 1e-12))
    sides = np.maximum(np.sqrt(np.maximum(squares, 0.0)), 1e-3 * largest)
    return c, R, sides, physical


def _wxyz(R):
    """Quaternions [w, x, y, z] of rotations (..., 3, 3) -> (..., 4)."""
    return np.roll(Rotation.from_matrix(R.reshape(-1, 3, 3)).as_quat(), 1, axis=-1).reshape(*R.shape[:-2], 4)


class Viewer:
    """A robot drawn in the browser at a configuration q; rd.view makes one.

    source: the model file its visuals come from (visuals.model_visuals: a URDF or MJCF path or text, a compiled
    mujoco.MjModel), and its sliders' limits; None: frames and inertias only.  Attributes: `url` the page's
    address, `q` (nq,) the configuration drawn, `wrenches` {frame: (w (6,), reference)} the arrows drawn,
    `parameters` {label: pi (nb, 10)} the parameter sets drawn by show_parameters, `arrows`, `meshes`, `links`,
    `axes`, `bodies` the scene's handles, `sliders` {joint: slider}, `impossible` the bodies no solid can be."""

    def __init__(self, robot, q=None, source=None, host="127.0.0.1", port=8080, label=None):
        import viser
        self.robot, self.source = robot, source
        self.server = viser.ViserServer(host=host, port=port, label=label, verbose=False)
        self.url = f"http://{host}:{self.server.get_port()}"
        self.wrenches, self.arrows, self.parameters = {}, {}, {}
        self.q = np.array(robot.neutral() if q is None else q, dtype=float)
        scene = self.server.scene
        scene.add_grid("/ground", width=4.0, height=4.0, cell_size=0.1)
        # Only the bodies move (one node each, placed at every update); a link is a fixed child of its body's node
        # (or of the world's), as fixed joints merge it (model.frames), and its visuals and axes are its children.
        scene.add_frame("/world", show_axes=False)
        self.bodies = [scene.add_frame(f"/bodies/{k}", show_axes=False) for k in range(robot.nbodies)]
        self._link_nodes = {}
        for name in robot.frame_names:
            frame = robot.model.frames[name]
            parent = f"/bodies/{frame.body}" if frame.body >= 0 else "/world"
            self._link_nodes[name] = f"{parent}/links/{name}"
        self.links = [scene.add_frame(self._link_nodes[name], show_axes=False, wxyz=_wxyz(np.asarray(f.R)),
                                      position=f.p) for name, f in robot.model.frames.items()]
        self.axes = [scene.add_frame(f"{self._link_nodes[name]}/axes", axes_length=0.1, axes_radius=0.004)
                     for name in robot.model.frames]
        self.meshes = self._add_meshes(model_visuals(source))
        self.impossible = self._add_inertias(robot.parameters.reshape(-1, 10), "urdf", BODY_COLOUR, 0.35)
        self.com = scene.add_icosphere("/com", radius=0.03, color=COM_COLOUR)
        self.com_ground = scene.add_cylinder("/com_ground", radius=0.04, height=0.002, color=COM_COLOUR)
        self._add_panel()
        self.update(self.q)
        self._aim_camera()

    def _add_meshes(self, visuals):
        import trimesh
        handles = []
        for i, visual in enumerate(visuals):
            if visual.link not in self._link_nodes:
                continue
            mesh = shape(visual, trimesh)
            if visual.rgba is not None:
                mesh.visual = trimesh.visual.ColorVisuals(mesh, face_colors=np.array(visual.rgba) * 255)
            handles.append(self.server.scene.add_mesh_trimesh(
                f"{self._link_nodes[visual.link]}/visual_{i}", mesh, wxyz=_wxyz(visual.pose[:3, :3]),
                position=visual.pose[:3, 3]))
        return handles

    def _add_inertias(self, pi, label, colour, opacity):
        """Each body's CoM (a sphere) and equivalent-inertia box (equivalent_box) under /bodies/k/label; the names
        of the bodies no solid can be, drawn in WARNING_COLOUR."""
        centre, R, sides, physical = equivalent_box(pi)
        wxyz = _wxyz(R)
        for k in range(self.robot.nbodies):
            shown = colour if physical[k] else WARNING_COLOUR
            self.server.scene.add_box(f"/bodies/{k}/{label}/box", dimensions=sides[k], color=shown,
                                      opacity=opacity, wxyz=wxyz[k], position=centre[k])
            self.server.scene.add_icosphere(f"/bodies/{k}/{label}/com", radius=0.012, color=shown,
                                            position=centre[k])
        return [self.robot.body_names[k] for k in np.flatnonzero(~physical)]

    def _add_panel(self):
        gui = self.server.gui
        frames = gui.add_checkbox("frames", initial_value=True)
        frames.on_update(lambda _: [setattr(a, "visible", frames.value) for a in self.axes])
        self.sliders, self._slid = {}, []
        offset = 6 if self.robot.floating_base else 0
        limits = joint_limits(self.source, self.robot) if self.source is not None else None
        for joint in self.robot.model.joints:
            if joint.mimic is not None or joint.idx_v < offset or joint.nv != 1 or joint.nq != 1:
                continue
            lower, upper = ((-np.pi, np.pi) if limits is None else
                            (limits.lower[joint.idx_v - offset], limits.upper[joint.idx_v - offset]))
            lower, upper = (-np.pi if np.isinf(lower) else lower), (np.pi if np.isinf(upper) else upper)
            slider = gui.add_slider(joint.name, min=float(lower), max=float(upper), step=(upper - lower) / 1000,
                                    initial_value=float(np.clip(self.q[joint.idx_q], lower, upper)))
            slider.on_update(lambda event, i=joint.idx_q: self._moved(event, i))
            self.sliders[joint.name] = slider
            self._slid.append((joint.idx_q, slider))
        text = "**No solid has the inertia of:** " + ", ".join(self.impossible) if self.impossible else ""
        self.warnings = gui.add_markdown(text)
        self.numbers = gui.add_markdown("")

    def _moved(self, event, index):
        """A slider moved in a page (event.client; None: update(q) moving it): its joint's coordinate to its value."""
        if event.client is None:
            return
        q = self.q.copy()
        q[index] = event.target.value
        self.update(q)

    def update(self, q):
        """Draw the robot at q (nq,): every link and body placed, the sliders, the CoM, the panel's cond(M) and g, the
        arrows of wrenches.  ValueError for a q of the wrong shape or not finite (the view keeps its q)."""
        q = np.asarray(q, dtype=float)
        if q.shape != (self.robot.nq,) or not np.isfinite(q).all():
            raise ValueError(f"update: q must be a finite array of shape ({self.robot.nq},), got shape {q.shape}")
        self.q = q.copy()
        bodies = self.robot.body_placements(q)
        com = self.robot.com_position(q)
        M, g = self.robot.mass_matrix(q), self.robot.gravity_vector(q)
        with self.server.atomic():
            for handle, wxyz, T in zip(self.bodies, _wxyz(bodies[:, :3, :3]), bodies):
                handle.wxyz, handle.position = wxyz, T[:3, 3]
            for index, slider in self._slid:
                slider.value = float(np.clip(q[index], slider.min, slider.max))
            self.com.position = com
            self.com_ground.position = (com[0], com[1], 0.0)
            self.numbers.content = (f"cond(M) = {np.linalg.cond(M):.3g}  \n"
                                    f"g = [{', '.join(f'{x:.3g}' for x in g)}]")
            for frame, (w, reference) in self.wrenches.items():
                self._draw_wrench(frame, w, reference)

    def _aim_camera(self):
        """The page's first view: at the CoM from a diagonal, far enough to see every link origin."""
        origins = np.array([self.robot.frame_placement(self.q, name)[:3, 3] for name in self.robot.frame_names])
        com = self.com.position
        reach = max(0.5, 2.5 * np.linalg.norm(origins - com, axis=1).max())
        self.server.initial_camera.look_at = com
        self.server.initial_camera.position = com + reach * np.array([0.7, 0.7, 0.45])

    def show_parameters(self, pi, label="identified"):
        """A second set of CoMs and equivalent-inertia boxes, of the parameters pi (n_bodies, 10) (an identified
        model, a payload estimate), beside the URDF's, each label in its own colour; drawing the same label again
        replaces them.  Returns the names of the bodies whose pi no solid can have."""
        pi = np.asarray(pi, dtype=float)
        if pi.size != 10 * self.robot.nbodies or not np.isfinite(pi).all():
            raise ValueError(f"show_parameters: pi must be finite with {self.robot.nbodies} x 10 entries, got "
                             f"shape {pi.shape}")
        self.parameters[label] = pi.reshape(-1, 10).copy()
        colour = COMPARISON_COLOURS[list(self.parameters).index(label) % len(COMPARISON_COLOURS)]
        return self._add_inertias(self.parameters[label], label, colour, 0.5)

    def show_wrench(self, frame, w, reference="local"):
        """Arrows of a wrench w = [force; torque] (6,) at a frame (a name of robot.frame_names or its index), in the
        frame's axes ("local") or the world's ("local_world_aligned"): the force in orange, the torque in purple,
        scaled so the robot's weight is 0.5 m (N m as N).  Redrawn at each update; w = None removes them."""
        name = frame if isinstance(frame, str) else self.robot.frame_names[frame]
        if name not in self.robot.frame_names:
            raise ValueError(f"show_wrench: no frame named {name!r}")
        if w is None:
            self.wrenches.pop(name, None)
            if name in self.arrows:
                self.arrows.pop(name).remove()
            return
        w = np.asarray(w, dtype=float)
        if w.shape != (6,) or not np.isfinite(w).all():
            raise ValueError(f"show_wrench: w must be a finite [force; torque] of shape (6,), got {w.shape}")
        if reference not in ("local", "local_world_aligned"):
            raise ValueError(f"show_wrench: reference must be 'local' or 'local_world_aligned', got {reference!r}")
        self._draw_wrench(name, w, reference)
        self.wrenches[name] = (w, reference)    # after its arrows: a reader of wrenches (another thread) finds them

    def show_contacts(self, contacts, forces):
        """Arrows of constrained_dynamics' contact forces: contacts as given to it (frame names, Contacts or a
        mapping), forces their forces stacked (3 for a point, 6 for a surface), each in its contact's axes."""
        contacts = contact_list(contacts)
        forces = np.asarray(forces, dtype=float).reshape(-1)
        rows = [3 if c.kind == "point" else 6 for c in contacts]
        if forces.size != sum(rows):
            raise ValueError(f"show_contacts: {len(contacts)} contacts take {sum(rows)} force entries, got "
                             f"{forces.size}")
        for contact, f in zip(contacts, np.split(forces, np.cumsum(rows)[:-1])):
            self.show_wrench(contact.frame, np.concatenate([f, np.zeros(6 - f.size)]), contact.reference)

    def _draw_wrench(self, name, w, reference):
        T = self.robot.frame_placement(self.q, name)
        R = T[:3, :3] if reference == "local" else np.eye(3)
        scale = 0.5 / max(self.robot.total_mass * np.linalg.norm(self.robot.gravity), 1e-9)
        start = T[:3, 3]
        points = np.array([[start, start + scale * R @ w[:3]], [start, start + scale * R @ w[3:]]])
        self.arrows[name] = self.server.scene.add_arrows(
            f"/wrenches/{name}", points, np.array([FORCE_COLOUR, TORQUE_COLOUR]), shaft_radius=0.006,
            head_radius=0.015, head_length=0.03)

    def close(self):
        """Stop serving the page."""
        self.server.stop()
