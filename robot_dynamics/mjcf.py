"""MJCF (MuJoCo's XML) -> the robot model of model.py, through MuJoCo's own compiler.

MJCF's meaning -- default classes and childclass, <include>, angle units, euler sequences, every orientation form,
inertias from geoms and meshes, fromto -- is what MuJoCo's compiler makes of it, so the `mujoco` package compiles
the file (compile_mjcf) and the compiled MjModel is converted (model_from_mujoco): its bodies become the links and
joints of a urdf.URDFDescription, which model.build_model turns into bodies as for a URDF.  From the MjModel
(arrays named as MuJoCo's, body b, joint j, site s):

- body_pos[b], body_quat[b] (w, x, y, z) place body b in its parent's frame at qpos = qpos0; a body without joints
  is welded to its parent (merged into the moving ancestor, its frame kept);
- hinge and slide joints j of a body, in order, move its frame: X_b = X_0 T_1 ... T_n, T_j = Tr(p_j) Rot(a_j,
  qpos_j - qpos0_j) Tr(-p_j) for a hinge at jnt_pos p_j about jnt_axis a_j, T_j = Tr(a_j (qpos_j - qpos0_j)) for a
  slide (MuJoCo's mj_kinematics; qpos0 is the joint's ref), T_j = Tr(p_j) Rot(quat0_j)^T Rot(quat_j) Tr(-p_j)
  for a ball joint (qpos [qw, qx, qy, qz]; qvel the angular velocity in the body frame, as ours).  Each joint is a
  link of its own at its anchor, named
  "<body>:<joint>", its placement turned by -qpos0_j so that our joint coordinate is MuJoCo's qpos_j itself; the
  last one is the body's own link (named as the body) when its anchor is the body's origin, else the body's frame
  is fixed to it at -p_n.  The joints before the last carry no mass (links between joints of one body);
- a free joint (its body a child of the world) places its body in the world: qpos = [x, y, z, qw, qx, qy, qz],
  qvel = [linear velocity in the world frame, angular velocity in the body frame].  Ours (Pinocchio's free flyer)
  is q = [x, y, z, qx, qy, qz, qw], v = [linear; angular], both in the body frame: MujocoCoordinates maps them.
  A model whose one free joint carries every moving body is a floating-base robot (its free joint the base);
  other free joints are FREE joints of the tree;
- body_mass, body_ipos, body_iquat, body_inertia (the principal moments about the centre of mass, in the axes
  body_iquat gives) -> the link's Inertial;
- sites and bodies are frames, named as in the model (an unnamed body "body<b>", joint "<body>_joint<k>", site
  "site<s>"; a site named as a body, which MuJoCo allows, is the frame "<site>_site", with a MJCFWarning);
- dof_armature, dof_damping, dof_frictionloss, plus gear^2 times the armature and damping of an actuator driving a
  joint (MuJoCo adds them to M and to the passive forces), are the drives' armature, damping and friction;
- opt.gravity is the gravity (zero when the model disables gravity);
- with mimic=True, an active linear <equality><joint> coupling is a mimic joint (couplings).

What the model cannot hold is a MJCFWarning naming the element -- tendons, other equality constraints, actuator
activation dynamics, joint springs, gravity compensation, fluid forces, nonlinear damping, flexes, mocap bodies,
plugins -- or a MJCFError where M, C or g would be wrong: tendons with armature, and the armature or damping of an
actuator with a transmission other than a joint.
"""
import dataclasses
import os
import warnings

import numpy as np

from .model import FREE, build_model
from .spatial import axis_angle_rotation, quaternion_rotation
from .urdf import Inertial, Joint, Link, Mimic, URDFDescription, is_xml_text

_EYE, _ZERO = np.eye(3), np.zeros(3)


class MJCFError(ValueError):
    """An MJCF that MuJoCo cannot compile, or whose dynamics the library cannot represent; names the element."""


class MJCFWarning(UserWarning):
    """An MJCF element the library leaves out (it changes no M, C or g): named in the message."""


def _mujoco():
    try:
        import mujoco
    except ImportError as error:
        raise MJCFError("reading MJCF needs the mujoco package (pip install mujoco)") from error
    return mujoco


def compile_mjcf(source):
    """The MjModel that MuJoCo compiles from an MJCF file path or XML text (str or bytes); MJCFError with MuJoCo's
    message when it cannot (an <include> or a mesh of XML text is looked up from the working directory)."""
    mujoco = _mujoco()
    text = is_xml_text(source)
    origin = "MJCF text" if text else f"MJCF file '{os.fsdecode(source)}'"
    try:
        if text:
            return mujoco.MjModel.from_xml_string(source.decode() if isinstance(source, bytes) else source)
        return mujoco.MjModel.from_xml_path(os.fsdecode(source))
    except ValueError as error:
        raise MJCFError(f"{origin}: {error}") from None


def _rotation(wxyz):
    """Rotation matrix of MuJoCo's quaternion [w, x, y, z] (spatial.quaternion_rotation takes [x, y, z, w])."""
    return quaternion_rotation(np.asarray(wxyz, dtype=float)[[1, 2, 3, 0]])


class _Names:
    """The names of a model's bodies, joints and sites, with fallbacks for unnamed ones (module docstring)."""

    def __init__(self, mujoco, m):
        def name(kind, i):
            return mujoco.mj_id2name(m, kind, i) or ""
        obj = mujoco.mjtObj
        self.body = [name(obj.mjOBJ_BODY, b) or f"body{b}" for b in range(m.nbody)]
        self.joint = []
        for j in range(m.njnt):
            b = m.jnt_bodyid[j]
            fallback = f"{self.body[b]}_joint" + (str(j - m.body_jntadr[b]) if m.body_jntnum[b] > 1 else "")
            self.joint.append(name(obj.mjOBJ_JOINT, j) or fallback)
        sites = [name(obj.mjOBJ_SITE, s) or f"site{s}" for s in range(m.nsite)]
        bodies = set(self.body)
        self.renamed = [site for site in sites if site in bodies]     # MuJoCo's sites and bodies: two namespaces
        self.site = [f"{site}_site" if site in bodies else site for site in sites]
        self.model = bytes(m.names[:m.names.index(0)]).decode() if m.nnames else ""


def _fixed(parent, child, R, p):
    """A fixed joint placing link `child` at rotation R, position p in link `parent`."""
    return Joint(f"{child}_fixed", "fixed", parent, child, R, np.asarray(p, dtype=float), np.array([1.0, 0, 0]), None)


def _body_joints(mujoco, m, names, b):
    """(joints, links) that hang body b and its frame below its parent's frame (module docstring)."""
    parent = names.body[m.body_parentid[b]]
    R0, p0 = _rotation(m.body_quat[b]), m.body_pos[b].astype(float)
    adr, n = m.body_jntadr[b], m.body_jntnum[b]
    if n == 0:
        return [_fixed(parent, names.body[b], R0, p0)], []
    JT = mujoco.mjtJoint
    if m.jnt_type[adr] == JT.mjJNT_FREE:                # alone in its body: MuJoCo allows 6 dofs per body
        return [Joint(names.joint[adr], "floating", parent, names.body[b], _EYE, _ZERO, np.array([1.0, 0, 0]),
                      None)], []
    joints, links = [], []
    link, R, p, anchor = parent, R0, p0, _ZERO
    for j in range(adr, adr + n):
        hinge, ball = m.jnt_type[j] == JT.mjJNT_HINGE, m.jnt_type[j] == JT.mjJNT_BALL
        a, ref = m.jnt_axis[j] / np.linalg.norm(m.jnt_axis[j]), float(m.qpos0[m.jnt_qposadr[j]])
        p_j = m.jnt_pos[j].astype(float) if hinge or ball else _ZERO
        p = p + R @ (p_j - anchor)                 # Tr(-p_{j-1}) Tr(p_j): from the last anchor to this one
        last = j == adr + n - 1
        child = names.body[b] if last and not p_j.any() else f"{names.body[b]}:{names.joint[j]}"
        # turned back by qpos0 so that the joint coordinate is qpos itself: X_0 T(qpos - qpos0)
        if ball:                                   # X_0 Rot(qpos0)^T Rot(qpos)
            start = m.jnt_qposadr[j]
            R_j, p_out, kind = R @ _rotation(m.qpos0[start:start + 4]).T, p, "ball"
        else:
            R_j = R @ axis_angle_rotation(a, -ref) if hinge else R
            p_out, kind = (p, "revolute") if hinge else (p - ref * (R @ a), "prismatic")
        joints.append(Joint(names.joint[j], kind, link, child, R_j, p_out, a, None))
        if not last:
            links.append(Link(child, None))
        link, R, p, anchor = child, _EYE, _ZERO, p_j
    if link != names.body[b]:
        joints.append(_fixed(link, names.body[b], _EYE, -anchor))
    return joints, links


def description_from_mujoco(m, mimic=False, names=None):
    """The urdf.URDFDescription of a compiled MjModel (module docstring): root link "world", links in MuJoCo's body
    order (parent before child, as its qpos), every site a link fixed to its body; with `mimic`, the joints that
    couplings() finds are mimic joints.  names: the model's _Names, when already made."""
    mujoco = _mujoco()
    names = names or _Names(mujoco, m)
    mimics = couplings(m, names) if mimic else {}
    links = {"world": Link("world", None)}
    joints = []
    for b in range(1, m.nbody):
        body_joints, joint_links = _body_joints(mujoco, m, names, b)
        joints += [dataclasses.replace(joint, mimic=mimics[joint.name]) if joint.name in mimics else joint
                   for joint in body_joints]
        for link in joint_links + [Link(names.body[b], _inertial(m, b))]:
            _add(links, link)
    for s in range(m.nsite):
        _add(links, Link(names.site[s], None))
        joints.append(_fixed(names.body[m.site_bodyid[s]], names.site[s], _rotation(m.site_quat[s]), m.site_pos[s]))
    return URDFDescription(names.model, links, joints, "world")


def couplings(m, names=None):
    """{joint: urdf.Mimic} of the model's active joint equalities that are linear, y - y0 = c0 + c1 (x - x0) (y the
    position of joint1, x of joint2, y0 and x0 their qpos0; polycoef c2..c4 zero): as our joint coordinates are
    qpos, y = c1 x + (y0 + c0 - c1 x0), a mimic of multiplier c1 and that offset.  The master of a mimic must not
    itself be a mimic (MJCFError naming both)."""
    mujoco = _mujoco()
    names = names or _Names(mujoco, m)
    found = {}
    for e in _coupling_ids(mujoco, m):
        j1, j2 = m.eq_obj1id[e], m.eq_obj2id[e]
        c0, c1 = m.eq_data[e, 0], m.eq_data[e, 1]
        y0, x0 = m.qpos0[m.jnt_qposadr[j1]], m.qpos0[m.jnt_qposadr[j2]]
        if names.joint[j1] in found:
            raise MJCFError(f"joint '{names.joint[j1]}' is coupled by two equality constraints (to "
                            f"'{found[names.joint[j1]].joint}' and '{names.joint[j2]}')")
        found[names.joint[j1]] = Mimic(names.joint[j2], float(c1), float(y0 + c0 - c1 * x0))
    for joint, coupling in found.items():
        if coupling.joint in found:
            raise MJCFError(f"joint '{joint}' is coupled to joint '{coupling.joint}', which is itself coupled to "
                            f"'{found[coupling.joint].joint}' (load with mimic=False, or couple both to one joint)")
    return found


def _coupling_ids(mujoco, m):
    """The equality constraints that couplings() turns into mimic joints: active, of two hinge or slide joints,
    linear."""
    scalar = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    return [e for e in range(m.neq) if m.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT and m.eq_active0[e]
            and m.eq_obj2id[e] >= 0 and not np.any(m.eq_data[e, 2:5])
            and int(m.jnt_type[m.eq_obj1id[e]]) in scalar and int(m.jnt_type[m.eq_obj2id[e]]) in scalar]


def _add(links, link):
    if link.name in links:
        raise MJCFError(f"two frames named '{link.name}' (a body, site or '<body>:<joint>' of the model): rename one")
    links[link.name] = link


def _inertial(m, b):
    """Body b's mass, centre of mass and rotational inertia about it, in the body frame."""
    R = _rotation(m.body_iquat[b])
    return Inertial(float(m.body_mass[b]), m.body_ipos[b].astype(float), R @ np.diag(m.body_inertia[b]) @ R.T)


def model_from_mujoco(m, gravity=None, mimic=False):
    """RobotModel of a compiled mujoco.MjModel (module docstring).  gravity: (3,), None for the model's.  mimic:
    False -> every joint is a coordinate and the joint equalities are left out (a MJCFWarning); True -> a linear
    coupling of two joints (couplings) makes joint1 a mimic of joint2 (model.build_model), with joint1's armature
    and damping reflected onto joint2's coordinate (times c1^2) and its frictionloss (times |c1|)."""
    mujoco = _mujoco()
    names = _Names(mujoco, m)
    _check_supported(mujoco, m, names, _coupling_ids(mujoco, m) if mimic else [])
    if gravity is None:
        disabled = m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY
        gravity = np.zeros(3) if disabled else m.opt.gravity.copy()
    model = build_model(description_from_mujoco(m, mimic, names), gravity=gravity, mimic=mimic)
    roots = np.flatnonzero(model.parent < 0)
    if len(roots) == 1 and model.bodies["jtype"][0] == FREE:     # one free joint carries every moving body
        joints = (dataclasses.replace(model.joints[0], type="free"),) + model.joints[1:]
        model = dataclasses.replace(model, floating_base=True, root_link=model.body_names[0], joints=joints)
    return model.with_drives(*_drives(mujoco, m, names, model))


def _drives(mujoco, m, names, model):
    """(armature, damping, friction), each (nv,) in our order: the dofs' and, for an actuator with a joint
    transmission of gear g, g^2 times its armature and damping (as MuJoCo adds them)."""
    dof_armature, dof_damping = m.dof_armature.copy(), m.dof_damping.copy()
    for u in range(m.nactuator):
        if not (m.actuator_armature[u] or m.actuator_damping[u]):
            continue
        if int(m.actuator_trntype[u]) not in (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT):
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, u) or f"actuator{u}"
            raise MJCFError(f"actuator '{name}' has armature or damping through a transmission other than a joint, "
                            f"which robot_dynamics cannot represent")
        dof, gear = m.jnt_dofadr[m.actuator_trnid[u, 0]], m.actuator_gear[u, 0]
        dof_armature[dof] += gear ** 2 * m.actuator_armature[u]
        dof_damping[dof] += gear ** 2 * m.actuator_damping[u]
    drives = np.zeros((3, model.nv))
    by_name = {joint.name: joint for joint in model.joints}
    for j, name in enumerate(names.joint):                # a mimic's drives onto its master's coordinate, reflected
        joint, d = by_name[name], m.jnt_dofadr[j]
        n = {int(mujoco.mjtJoint.mjJNT_FREE): 6, int(mujoco.mjtJoint.mjJNT_BALL): 3}.get(int(m.jnt_type[j]), 1)
        c = model.bodies["mult"][joint.body]
        drives[:, joint.idx_v:joint.idx_v + n] += (np.array([dof_armature, dof_damping, m.dof_frictionloss])[:, d:d + n]
                                                   * np.array([[c * c], [c * c], [abs(c)]]))
    return drives


class MujocoCoordinates:
    """Our coordinates against MuJoCo's, for a robot converted from the MjModel `model` (from_mujoco): to drive
    the library from an MjData (q, v = coordinates.to_robot(data.qpos, data.qvel)) and MuJoCo from the library
    (data.qfrc_applied[:] = coordinates.force_to_mujoco(q, tau)).

    Hinge and slide joints have the same numbers in both (our joint coordinate is qpos itself, not qpos - ref).
    A ball joint: q = [qx, qy, qz, qw] where qpos = [qw, qx, qy, qz], and the same angular velocity (child frame).
    A free joint of body rotation R: q = [x, y, z, qx, qy, qz, qw] where qpos = [x, y, z, qw, qx, qy, qz], and
    v = [R^T v_0; w] where qvel = [v_0; w] (v_0 the body origin's velocity in the world frame, w the angular
    velocity in the body frame in both), so qvel = T(q) v with T = diag(R, E, ..., E) on the free joint's rows.
    A mimic joint (mimic=True) has no coordinate of ours: qpos = c q_master + offset, qvel = c v_master, so that T
    has c in the master's column.  Generalized forces keep the power, tau . v = f . qvel: tau = T^T f (f = R tau on
    a free joint's linear rows, none on a mimic's).  Every method takes leading batch dimensions.
    """

    def __init__(self, robot, model):
        mujoco = _mujoco()
        by_name = {joint.name: joint for joint in robot.model.joints}
        q_ours, q_theirs, v_ours, v_theirs, self._free, mimics = [], [], [], [], [], []
        for j, name in enumerate(_Names(mujoco, model).joint):
            joint, a, d = by_name.get(name), model.jnt_qposadr[j], model.jnt_dofadr[j]
            if joint is None:
                raise ValueError(f"joint '{name}' of the MjModel is not a joint of robot '{robot.model.name}': give "
                                 f"the MjModel the robot was converted from")
            if joint.mimic is not None:
                k = joint.body
                mimics.append((a, d, joint.idx_q, joint.idx_v, robot.model.bodies["mult"][k],
                               robot.model.bodies["offset"][k]))
                continue
            if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                q_theirs += [a, a + 1, a + 2, a + 4, a + 5, a + 6, a + 3]    # [x, y, z, qx, qy, qz, qw]
                v_theirs += range(d, d + 6)
                self._free.append((joint.idx_q, joint.idx_v, d))
            elif model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
                q_theirs += [a + 1, a + 2, a + 3, a]                         # [qx, qy, qz, qw]
                v_theirs += range(d, d + 3)                                  # the body frame's in both
            else:
                q_theirs.append(a)
                v_theirs.append(d)
            q_ours += range(joint.idx_q, joint.idx_q + joint.nq)
            v_ours += range(joint.idx_v, joint.idx_v + joint.nv)
        if len(q_ours) != robot.nq or len(v_ours) != robot.nv:
            raise ValueError(f"robot '{robot.model.name}' has coordinates that the MjModel lacks")
        self._q = (np.array(q_ours, dtype=np.int64), np.array(q_theirs, dtype=np.int64))
        self._v = (np.array(v_ours, dtype=np.int64), np.array(v_theirs, dtype=np.int64))
        # mimic joints: columns qpos, qvel adresses, master's q and v indices, multiplier, offset
        self._mimic = tuple(np.array(column) for column in zip(*mimics)) if mimics else None
        self.nq, self.nv, self.mj_nq, self.mj_nv = robot.nq, robot.nv, model.nq, model.nv

    def to_robot(self, qpos, qvel):
        """(q, v) of MuJoCo's (qpos, qvel).  (..., model.nq), (..., model.nv) -> (..., nq), (..., nv)"""
        qpos, qvel = np.asarray(qpos, dtype=float), np.asarray(qvel, dtype=float)
        q = np.empty(qpos.shape[:-1] + (self.nq,))
        q[..., self._q[0]] = qpos[..., self._q[1]]
        return q, self._rotated(q, qvel, self._v, self.nv, transpose=True)

    def to_mujoco(self, q, v):
        """(qpos, qvel) of our (q, v).  (..., nq), (..., nv) -> (..., model.nq), (..., model.nv)"""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        qpos = np.empty(q.shape[:-1] + (self.mj_nq,))
        qpos[..., self._q[1]] = q[..., self._q[0]]
        qvel = self._rotated(q, v, self._v[::-1], self.mj_nv, transpose=False)
        if self._mimic is not None:
            a, d, iq, iv, c, offset = self._mimic
            qpos[..., a] = c * q[..., iq] + offset
            qvel[..., d] = c * v[..., iv]
        return qpos, qvel

    def force_to_mujoco(self, q, tau):
        """A MuJoCo generalized force f (for qfrc_applied) equal in power to our tau at q, zero on mimic joints.
        (..., nq), (..., nv) -> (..., model.nv)"""
        f = self._rotated(np.asarray(q, dtype=float), tau, self._v[::-1], self.mj_nv, transpose=False)
        if self._mimic is not None:
            f[..., self._mimic[1]] = 0.0
        return f

    def force_from_mujoco(self, q, force):
        """Our tau = T^T f of MuJoCo's generalized force f (qfrc_*) at q.  (..., nq), (..., model.nv) -> (..., nv)"""
        force = np.asarray(force, dtype=float)
        tau = self._rotated(np.asarray(q, dtype=float), force, self._v, self.nv, transpose=True)
        if self._mimic is not None:
            _, d, _, iv, c, _ = self._mimic
            np.add.at(np.moveaxis(tau, -1, 0), iv, np.moveaxis(c * force[..., d], -1, 0))
        return tau

    def _rotated(self, q, x, columns, n, transpose):
        """x moved to the other side (columns: (to, from) index arrays), the linear rows of each free joint turned
        by R^T (transpose: MuJoCo's to ours) or R, R the rotation of the joint's quaternion in q; n entries, those
        that no column reaches zero."""
        x = np.asarray(x, dtype=float)
        y = np.zeros(np.broadcast_shapes(q.shape[:-1], x.shape[:-1]) + (n,))
        y[..., columns[0]] = x[..., columns[1]]
        for iq, iv, d in self._free:
            R = _rotations(q[..., iq + 3:iq + 7])
            rows = slice(iv, iv + 3) if transpose else slice(d, d + 3)
            y[..., rows] = np.einsum("...ji,...j->...i" if transpose else "...ij,...j->...i", R, y[..., rows])
        return y


def _rotations(xyzw):
    """(..., 3, 3) rotations of the quaternions (..., 4) [qx, qy, qz, qw], normalized first (as MuJoCo does)."""
    unit = np.reshape(xyzw / np.linalg.norm(xyzw, axis=-1, keepdims=True), (-1, 4))
    return np.array([quaternion_rotation(x) for x in unit]).reshape(np.shape(xyzw)[:-1] + (3, 3))


def _check_supported(mujoco, m, names, couplings=()):
    """A MJCFWarning naming each element the model leaves out (module docstring); couplings: the equality
    constraints that became mimic joints."""
    def named(kind, ids, fallback):
        return ", ".join(f"'{mujoco.mj_id2name(m, kind, int(i)) or f'{fallback}{i}'}'" for i in ids)
    obj = mujoco.mjtObj
    left_out = []
    inertial = np.flatnonzero(m.tendon_armature)
    if len(inertial):
        raise MJCFError(f"tendons {named(obj.mjOBJ_TENDON, inertial, 'tendon')} have armature, an inertia along the "
                        f"tendon that robot_dynamics cannot represent (M would be wrong)")
    if m.ntendon:
        left_out.append(f"tendons {named(obj.mjOBJ_TENDON, range(m.ntendon), 'tendon')} (their forces)")
    equalities = sorted(set(range(m.neq)) - set(couplings))
    if equalities:
        left_out.append(f"equality constraints {named(obj.mjOBJ_EQUALITY, equalities, 'equality')} (the tree is "
                        f"loaded unconstrained; mimic=True makes a linear coupling of two joints a mimic joint)")
    dynamic = np.flatnonzero(m.actuator_dyntype != mujoco.mjtDyn.mjDYN_NONE)
    if len(dynamic):
        left_out.append(f"the activation dynamics of actuators {named(obj.mjOBJ_ACTUATOR, dynamic, 'actuator')}")
    springs = np.flatnonzero(m.jnt_stiffness)
    if len(springs):
        left_out.append(f"the springs of joints {named(obj.mjOBJ_JOINT, springs, 'joint')} (stiffness)")
    nonlinear = np.flatnonzero(np.any(m.dof_dampingpoly, axis=1))
    if len(nonlinear):
        left_out.append(f"the nonlinear damping (dampingpoly) of dofs {', '.join(map(str, nonlinear))}")
    nonlinear = np.flatnonzero(np.any(m.actuator_dampingpoly, axis=1))
    if len(nonlinear):
        left_out.append(f"the nonlinear damping (dampingpoly) of actuators "
                        f"{named(obj.mjOBJ_ACTUATOR, nonlinear, 'actuator')}")
    compensated = np.flatnonzero(m.body_gravcomp)
    if len(compensated):
        left_out.append(f"the gravity compensation of bodies {named(obj.mjOBJ_BODY, compensated, 'body')}")
    if m.opt.density or m.opt.viscosity:
        left_out.append("fluid forces (option density, viscosity)")
    mocap = np.flatnonzero(m.body_mocapid >= 0)
    if len(mocap):
        left_out.append(f"mocap bodies {named(obj.mjOBJ_BODY, mocap, 'body')} (fixed where the model puts them)")
    if m.nflex:
        left_out.append(f"{m.nflex} flex(es)")
    if m.nplugin:
        left_out.append(f"{m.nplugin} plugin(s)")
    messages = [f"robot_dynamics leaves out {what}" for what in left_out]
    if names.renamed:
        messages.append("sites named as bodies are the frames " + ", ".join(f"'{site}_site'" for site in names.renamed))
    for message in messages:
        warnings.warn(f"MJCF '{names.model}': {message}", MJCFWarning, stacklevel=4)


def joint_limits(source, robot):
    """The joint limits of an MJCF -- a path, XML text or a compiled mujoco.MjModel -- over the coordinates of
    ``robot`` loaded from it, as urdf.joint_limits gives a URDF's (a urdf.Limits, the 6 coordinates of a free
    joint left out).

    lower, upper: a limited hinge's or slide's ``range`` as MuJoCo compiled it (radians whatever <compiler
    angle>; the robot's coordinate is qpos itself, model_from_mujoco), -inf/+inf for an unlimited joint and for
    a ball joint's three coordinates (its range is a cone, not a box); velocity: +inf (MJCF has no velocity
    limit); effort: the smaller magnitude of a limited ``actuatorfrcrange`` (what the actuators may apply in
    both directions), else +inf.  MJCFError naming a joint of the robot that the MJCF lacks."""
    from .urdf.limits import one_coordinate_joints, unbounded
    mujoco = _mujoco()
    m = source if hasattr(source, "jnt_range") else compile_mjcf(source)
    ids = {name: j for j, name in enumerate(_Names(mujoco, m).joint)}
    lower, upper, velocity, effort = limits = unbounded(robot)
    missing = "joint '{}' of the robot is not in the MJCF given for its limits"
    for i, joint in one_coordinate_joints(robot, ids, lambda name: MJCFError(missing.format(name))):
        j = ids[joint.name]
        if m.jnt_limited[j]:
            lower[i], upper[i] = m.jnt_range[j]
        if m.jnt_actfrclimited[j]:
            effort[i] = np.abs(m.jnt_actfrcrange[j]).min()
    return limits


def body_names(m):
    """The frame name of each body of a compiled MjModel, by body id (module docstring: an unnamed body is
    "body<b>", the world body "world")."""
    return _Names(_mujoco(), m).body
