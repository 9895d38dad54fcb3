"""Layer 2: the twist/inertia model of paper 002 as a frozen record array indexed by body (parent before child).

A body is what one moving joint carries: its URDF child link plus every link hung below it by fixed joints
(masses and inertias combined, paper 002 eq. (9), frames kept in `frames`). Body k has

    parent[k]          parent body, -1 for the world; parent[k] < k
    jtype[k]           REVOLUTE (also URDF continuous), PRISMATIC, PLANAR, FREE or BALL
    R_tree[k], p_tree[k]   the joint frame in the parent body frame (constant placement)
    axis[k]            unit joint axis (revolute, prismatic; the plane normal of a planar joint)
    Xi[k]              (6, 6), first nvj[k] columns: the constant motion subspace Xi_k (paper 002, eq. (27))
    iq[k], iv[k]       where the joint's coordinates start in q and v (a mimic joint shares its master's)
    mult[k], offset[k] q_joint = mult q[iq] + offset for 1-DoF joints (1, 0 unless the joint mimics another)
    pi[k]              (10,) inertial parameters [m, m c, Ixx, Iyy, Izz, Ixy, Ixz, Iyz] about the body origin
    Lam[k]             (6, 6) constant body inertia Lambda_k
    RA[k], RA2[k], Ra[k]   R_tree [a]x, R_tree [a]x^2 and R_tree a for the axis a: a revolute joint's
                       T_{p,k} rotation is R_tree + sin(theta) RA + (1 - cos(theta)) RA2 (Rodrigues), a prismatic
                       joint's translation p_tree + d Ra
    armature[k]        (6,), first nvj[k] entries: the armature of the joint's coordinates (drives.py; zero for a
                       mimic joint, whose coordinate is its master's)

Free joints follow Pinocchio's free-flyer convention: q = [x, y, z, qx, qy, qz, qw], v = [linear; angular] in
the child frame, so that Xi = E_6 is constant (paper 002, remark 7).  Planar joints take q = [x, y, theta]
(positions along e1, e2 of the plane, angle about the normal) and v = [vx, vy, w] in the child frame.  Ball
joints (MJCF's ball, Pinocchio's spherical) take a unit quaternion q = [qx, qy, qz, qw] and v the angular velocity
in the child frame: Xi = [0; E_3], constant as a free joint's.
"""
from dataclasses import dataclass, field
import warnings

import numpy as np

from .drives import Drives
from .urdf import MAX_MAGNITUDE, URDFDescription, URDFError, URDFWarning

REVOLUTE, PRISMATIC, PLANAR, FREE, BALL = 0, 1, 2, 3, 4

# The largest |pi_k| entry a model takes (with_parameters).  A URDF within urdf.MAX_MAGNITUDE and MAX_LINKS gives
# at most ~1e52 (1e5 links of 1e12 kg merged into one body 1e17 m away: I ~ 1e5 1e12 (1e17)^2); with pi within
# this bound and the gravity within MAX_MAGNITUDE, no quantity overflows at a state of moderate size.
MAX_PARAMETER = 1e60
_URDF_TYPES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC, "planar": PLANAR,
               "floating": FREE, "ball": BALL}               # ball: from MJCF (no URDF type has it)
_NQ = {REVOLUTE: 1, PRISMATIC: 1, PLANAR: 3, FREE: 7, BALL: 4}
_NV = {REVOLUTE: 1, PRISMATIC: 1, PLANAR: 3, FREE: 6, BALL: 3}
BASE_COORDINATES = ("base_linear_x", "base_linear_y", "base_linear_z",
                    "base_angular_x", "base_angular_y", "base_angular_z")


# One record per body: the whole model travels into a compiled kernel as a single array argument.
BODY = np.dtype([
    ("parent", np.int64), ("last", np.int64),        # parent index; the last body of k's subtree (k..last, preorder)
    ("jtype", np.int64), ("iq", np.int64), ("iv", np.int64), ("nvj", np.int64),
    ("mult", np.float64), ("offset", np.float64),
    ("R_tree", np.float64, (3, 3)), ("p_tree", np.float64, (3,)), ("axis", np.float64, (3,)),
    ("Xi", np.float64, (6, 6)), ("pi", np.float64, (10,)), ("Lam", np.float64, (6, 6)),
    ("RA", np.float64, (3, 3)), ("RA2", np.float64, (3, 3)), ("Ra", np.float64, (3,)),
    ("armature", np.float64, (6,)),                  # the drives' armature of the body's own coordinates (drives.py)
], align=True)


@dataclass(frozen=True)
class Frame:
    """A URDF link's frame: rigidly attached to `body` (-1: the world) at rotation R and position p."""
    body: int
    R: np.ndarray
    p: np.ndarray


@dataclass(frozen=True)
class JointInfo:
    """A joint that moves a body: its name, type and slices of q and v (shared with the master if mimic)."""
    name: str
    type: str
    body: int
    idx_q: int
    nq: int
    idx_v: int
    nv: int
    mimic: str | None = None


@dataclass(frozen=True, eq=False)
class RobotModel:
    """Immutable model: topology, placements, motion subspaces and inertias (see the module docstring)."""
    name: str
    nq: int
    nv: int
    body_names: tuple
    joints: tuple                 # JointInfo per body, in body order
    root_link: str
    floating_base: bool
    gravity: np.ndarray           # (3,) world frame
    bodies: np.ndarray            # (nb,) records of dtype BODY, read-only
    frames: dict = field(repr=False)
    drives: Drives = None         # armature, damping, friction per coordinate (drives.py); None: zero

    @property
    def pi(self):
        """(nb, 10) inertial parameters, paper 002 eq. (9)."""
        return self.bodies["pi"]

    @property
    def Lam(self):
        """(nb, 6, 6) body inertias Lambda_k."""
        return self.bodies["Lam"]

    @property
    def parent(self):
        return self.bodies["parent"]

    @property
    def nbodies(self):
        return len(self.body_names)

    @property
    def joint_names(self):
        """Joints that own coordinates, in the order of q (the floating base excluded, mimic joints excluded)."""
        return [j.name for j in self.joints if j.mimic is None and not (self.floating_base and j.body == 0)]

    @property
    def coordinate_names(self):
        """A name per coordinate of v: a floating base's six (base_linear_x .. base_angular_z), then each joint's
        name ("<joint>[k]" for a joint of several coordinates; mimic joints have none)."""
        names = list(BASE_COORDINATES) if self.floating_base else []
        for joint in self.joints:
            if joint.mimic is None and not (self.floating_base and joint.body == 0):
                names += [joint.name] if joint.nv == 1 else [f"{joint.name}[{k}]" for k in range(joint.nv)]
        return names

    def with_drives(self, armature=None, damping=None, friction=None, model=None):
        """The same robot with other drives (drives.py): each of armature, damping, friction (nv,), or a number for
        every joint coordinate (a floating base's six rows stay zero), None to keep the present one; model: a
        friction model (None keeps the present one)."""
        drives = (self.drives or Drives.zero(self.nv)).replaced(
            self.coordinate_names, model, 6 if self.floating_base else 0, armature=armature, damping=damping,
            friction=friction)
        bodies = self.bodies.copy()
        bodies["armature"] = 0.0
        for k, joint in enumerate(self.joints):
            if joint.mimic is None:
                bodies["armature"][k, :joint.nv] = drives.armature[joint.idx_v:joint.idx_v + joint.nv]
        bodies.flags.writeable = False
        return _replace(self, bodies=bodies, drives=drives)

    def with_parameters(self, pi):
        """The same kinematics with other inertial parameters.  pi: (10 * nbodies,) or (nbodies, 10), each entry
        finite and at most MAX_PARAMETER in magnitude (else a ValueError)."""
        pi = np.array(pi, dtype=float).reshape(self.nbodies, 10)
        if not np.all(np.abs(pi) <= MAX_PARAMETER):
            k, i = np.argwhere(~(np.abs(pi) <= MAX_PARAMETER))[0]
            raise ValueError(f"pi[{10 * k + i}] = {pi[k, i]:g} (body '{self.body_names[k]}') is not a finite number "
                             f"of magnitude at most {MAX_PARAMETER:g} (model.MAX_PARAMETER)")
        bodies = self.bodies.copy()
        bodies["pi"] = pi
        bodies["Lam"] = _body_inertias(bodies["pi"])
        bodies.flags.writeable = False
        return _replace(self, bodies=bodies)

    def with_gravity(self, gravity):
        """The same robot under another gravity vector (world frame).  gravity: (3,), see _gravity."""
        return _replace(self, gravity=_gravity(gravity))


def _gravity(gravity):
    """gravity as a (3,) float array; a ValueError unless its entries are finite, of magnitude at most
    urdf.MAX_MAGNITUDE."""
    g = np.array(gravity, dtype=float).reshape(3)
    if not np.all(np.abs(g) <= MAX_MAGNITUDE):
        raise ValueError(f"gravity must be 3 finite numbers of magnitude at most {MAX_MAGNITUDE:g}, got {g}")
    return g


def _replace(model, **changes):
    fields = {name: getattr(model, name) for name in model.__dataclass_fields__}
    fields.update(changes)
    return RobotModel(**fields)


def _body_inertias(pi):
    """(nb, 6, 6) Lambda_k = [[m E, -(m c)~], [(m c)~, I_o]] of the (nb, 10) parameters (spatial.spatial_inertia for
    every body at once)."""
    pi = np.asarray(pi, dtype=float).reshape(-1, 10)
    L = np.zeros((len(pi), 6, 6))
    H = _skews(pi[:, 1:4])                            # (m c)~
    L[:, [0, 1, 2], [0, 1, 2]] = pi[:, :1]
    L[:, :3, 3:], L[:, 3:, :3] = -H, H
    L[:, 3:, 3:] = _inertia_matrices(pi)
    return L


def _skews(a):
    """a~ of every row of a: (n, 3) -> (n, 3, 3) (spatial.skew)."""
    S = np.zeros((len(a), 3, 3))
    S[:, 0, 1], S[:, 0, 2], S[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
    S[:, 1, 0], S[:, 2, 0], S[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
    return S


def _inertia_matrices(pi):
    """The (n, 3, 3) rotational inertias held in pi[:, 4:10] = (xx, yy, zz, xy, xz, yz) (spatial.inertia_matrix)."""
    return pi[:, [[4, 7, 8], [7, 5, 9], [8, 9, 6]]]


def _link_parameters(mass, com, inertia, R, p):
    """pi (n, 10) of n links in the frames of their bodies: spatial.parameters_from_inertial of each link's mass
    (n,), CoM (n, 3) and inertia about the CoM (n, 3, 3), then spatial.transform_parameters to the link frame's
    placement R (n, 3, 3), p (n, 3) in its body."""
    m = mass[:, None, None]
    I_o = inertia + m * (np.einsum("ni,ni->n", com, com)[:, None, None] * np.eye(3) - com[:, :, None] * com[:, None, :])
    h = np.einsum("nij,nj->ni", R, mass[:, None] * com)             # R (m c)
    P, H = _skews(p), _skews(h)
    I = R @ I_o @ R.transpose(0, 2, 1) - m * (P @ P) - P @ H - H @ P
    return np.column_stack([mass, h + mass[:, None] * p, I[:, 0, 0], I[:, 1, 1], I[:, 2, 2], I[:, 0, 1], I[:, 0, 2],
                            I[:, 1, 2]])


def _plane_basis(n):
    """Orthonormal e1, e2 spanning the plane normal to the unit n; (x, y) when n = z."""
    seed = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = seed - (seed @ n) * n
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


def _motion_subspaces(jtype, axis):
    """Xi_k in the child frame of every body, padded to (nb, 6, 6): revolute [0; a], prismatic [a; 0], planar
    [e1, e2, 0; 0, 0, a], free E_6, ball [0; E_3]."""
    Xi = np.zeros((len(jtype), 6, 6))
    revolute, prismatic = jtype == REVOLUTE, jtype == PRISMATIC
    Xi[revolute, 3:, 0] = axis[revolute]
    Xi[prismatic, :3, 0] = axis[prismatic]
    Xi[jtype == FREE] = np.eye(6)
    Xi[jtype == BALL, 3:, :3] = np.eye(3)
    for k in np.flatnonzero(jtype == PLANAR):
        e1, e2 = _plane_basis(axis[k])
        Xi[k, :3, 0], Xi[k, :3, 1], Xi[k, 3:, 2] = e1, e2, axis[k]
    return Xi


def build_model(desc: URDFDescription, floating_base=False, gravity=(0.0, 0.0, -9.81), mimic=False):
    """RobotModel of a parsed URDF.  Bodies are numbered depth first from the root, children in document order.

    Fixed joints merge their child into the moving ancestor (or into the world); with `mimic` a mimic joint
    gets a body but no coordinates: q_joint = multiplier q_master + offset.  The drives are the URDF's (urdf.Joint:
    damping, friction, armature) on the coordinate of each 1-DoF joint; those of a joint without a coordinate of
    its own -- a mimic joint with `mimic`, a planar or floating joint -- are dropped with a URDFWarning naming it,
    as Pinocchio 4.1 drops them (its URDF parser reads <dynamics> for revolute, continuous and prismatic joints,
    and none for a mimic joint).
    """
    gravity = _gravity(gravity)
    if not desc.root and floating_base:
        raise URDFError("the <robot> is empty (no links): there is no root link to put a floating base under")
    eye, zero = np.eye(3), np.zeros(3)
    parent, jtype, body_names, joint_of, R_tree, p_tree, axis = [], [], [], [], [], [], []

    def add_body(par, kind, link, joint, R, p, a):
        for column, value in zip((parent, jtype, body_names, joint_of, R_tree, p_tree, axis),
                                 (par, kind, link, joint, R, p, a)):
            column.append(value)

    if floating_base:
        add_body(-1, FREE, desc.root, None, eye, zero, zero)
    frames = {desc.root: Frame(0 if floating_base else -1, eye, zero)}
    stack = list(reversed(desc.children(desc.root))) if desc.root else []
    while stack:                                    # preorder: a body's subtree before its next sibling
        joint = stack.pop()
        f = frames[joint.parent]
        R = f.R @ joint.rotation                    # joint frame in the frame of the body holding the parent
        p = f.p + f.R @ joint.translation
        if joint.type == "fixed":
            frames[joint.child] = Frame(f.body, R, p)
        else:
            add_body(f.body, _URDF_TYPES[joint.type], joint.child, joint, R, p, joint.axis)
            frames[joint.child] = Frame(len(parent) - 1, eye, zero)
        stack.extend(reversed(desc.children(joint.child)))
    nb = len(parent)
    par, jtype = np.array(parent, dtype=np.int64), np.array(jtype, dtype=np.int64)

    # Coordinates: independent joints in body order; mimic joints (with mimic=True) reuse their master's.
    is_mimic = [mimic and j is not None and j.mimic is not None for j in joint_of]
    body_of_joint = {j.name: k for k, j in enumerate(joint_of) if j is not None}
    iq, iv = np.zeros(nb, dtype=np.int64), np.zeros(nb, dtype=np.int64)
    mult, offset = np.ones(nb), np.zeros(nb)
    nq = nv = 0
    for k in range(nb):
        if not is_mimic[k]:
            iq[k], iv[k] = nq, nv
            nq, nv = nq + _NQ[jtype[k]], nv + _NV[jtype[k]]
    infos = []
    for k, j in enumerate(joint_of):
        if is_mimic[k]:
            master = body_of_joint.get(j.mimic.joint)
            if master is None:
                raise URDFError(f"joint '{j.name}' mimics unknown joint '{j.mimic.joint}'")
            iq[k], iv[k] = iq[master], iv[master]
            mult[k], offset[k] = j.mimic.multiplier, j.mimic.offset
        infos.append(JointInfo(desc.root + "_root_joint" if j is None else j.name,
                               "free" if j is None else j.type, k, int(iq[k]), _NQ[jtype[k]], int(iv[k]),
                               _NV[jtype[k]], j.mimic.joint if is_mimic[k] else None))

    bodies = np.zeros(nb, dtype=BODY)
    bodies["parent"], bodies["jtype"], bodies["iq"], bodies["iv"] = par, jtype, iq, iv
    bodies["last"] = np.arange(nb)
    for k in range(nb - 1, 0, -1):                   # preorder: a subtree is k and the bodies up to its last
        if par[k] >= 0:
            bodies["last"][par[k]] = max(bodies["last"][par[k]], bodies["last"][k])
    bodies["nvj"] = [_NV[t] for t in jtype]
    bodies["mult"], bodies["offset"] = mult, offset
    bodies["R_tree"] = np.array(R_tree).reshape(nb, 3, 3)
    bodies["p_tree"] = np.array(p_tree).reshape(nb, 3)
    bodies["axis"] = np.array(axis, dtype=float).reshape(nb, 3)
    bodies["Xi"] = _motion_subspaces(jtype, bodies["axis"])
    A = _skews(bodies["axis"])                       # the joint's rotation generators in the parent frame
    bodies["RA"] = bodies["R_tree"] @ A
    bodies["RA2"] = bodies["RA"] @ A
    bodies["Ra"] = np.einsum("kij,kj->ki", bodies["R_tree"], bodies["axis"])

    # every link's inertia, in the frame of its body; links fixed to the world carry no dynamics
    placed = [(link.inertial, frames[link.name]) for link in desc.links.values()
              if link.inertial is not None and link.name in frames and frames[link.name].body >= 0]
    if placed:
        pi_links = _link_parameters(np.array([i.mass for i, _ in placed]), np.array([i.com for i, _ in placed]),
                                    np.array([i.inertia for i, _ in placed]), np.array([f.R for _, f in placed]),
                                    np.array([f.p for _, f in placed]))
        np.add.at(bodies["pi"], [f.body for _, f in placed], pi_links)   # paper 002, eq. (9): linear in the masses
    bodies["Lam"] = _body_inertias(bodies["pi"])
    bodies.flags.writeable = False
    model = RobotModel(desc.name, nq, nv, tuple(body_names), tuple(infos), desc.root, bool(floating_base),
                       gravity, bodies, frames, Drives.zero(nv))
    drives = np.zeros((3, nv))                       # armature, damping, friction of the URDF
    for k, j in enumerate(joint_of):
        values = (0.0, 0.0, 0.0) if j is None else (j.armature, j.damping, j.friction)
        if not any(values):
            continue
        given = ", ".join(f"{name} {value:g}" for name, value in zip(("armature", "damping", "friction"), values)
                          if value)
        if is_mimic[k] or jtype[k] not in (REVOLUTE, PRISMATIC):
            reason = (f"a mimic joint (mimic=True) has no coordinate of its own; its master '{j.mimic.joint}' "
                      f"would take multiplier^2 x armature and damping and |multiplier| x friction (a drives file, "
                      f"drive_files.py, can give them)" if is_mimic[k] else
                      f"a {j.type} joint takes no drives from a URDF (Pinocchio reads none either)")
            warnings.warn(f"joint '{j.name}': {given} dropped: {reason}", URDFWarning,
                          stacklevel=3)                                  # points at the caller of load_urdf
            continue
        drives[:, iv[k]] = values
    return model.with_drives(*drives) if drives.any() else model
