"""MuJoCo as an independent physics engine: the same URDF compiled by MuJoCo, joints mapped by name.

A URDF is prepared for MuJoCo by stripping its geometry (no mesh files needed, no contacts to compute), fixing
chosen joints (a gripper's fingers), optionally bolting a payload to a link by a fixed joint (MuJoCo keeps it a
body of its own; robot_dynamics merges it into its moving ancestor), and adding the extension
``<mujoco><compiler discardvisual="true" fusestatic="false"/></mujoco>`` after ``<robot>``. The compiled model has
contacts and joint limits disabled, RK4 at the given step, and zero dof damping, armature and friction loss unless
given (per joint, in our order: MuJoCo's dof_armature on M's diagonal, dof_damping a passive -damping v,
dof_frictionloss a Coulomb friction of that level -- a constraint force, which holds a joint at rest (stiction) up to
it, where robot_dynamics smooths the sign: drives.py).

MuJoCo's friction loss is a soft constraint (MuJoCo's documentation, "Computation"): per joint, with A = M^-1's
diagonal entry, the force is f = -clamp(d / A (a_0 + b v), -F, F), a_0 the joint's acceleration without it,
b = 2 / (d timeconst) and d its impedance.  MuJoCo's defaults (solref timeconst 20 ms, solimp d = 0.9) leak a tenth
of the torque that would stop the joint and ask only for a stop within 20 ms, whose force M b v is tiny on a light
joint: on xArm7's joint 7 (M_77 = 1.4e-4 kg m^2, F = 1 N m) it applies 10 % of F while sliding, and lets the joint
creep at 0.23 rad/s under half of F.  Here d = HARD_IMPEDANCE (0.9999) and timeconst = 2 steps, the least MuJoCo
allows (b = 1 / step): the joint stops within a step unless the rest of its torque exceeds F, and slides against
exactly F -- time-stepping Coulomb friction, the law the URDF states.  Checked independently (test_drives_sampled,
bench_sampled_drives): the arm held by qfrc_bias, a torque delta on one joint leaves it at rest below F and drives
it at (delta - F) / damping above; while tracking, every sliding joint's qfrc_constraint is F.
``MujocoTwin.mass_matrix`` / ``bias`` / ``forward_dynamics`` are mj_fullM, qfrc_bias and qacc in our joint order,
``jacobian`` MuJoCo's own Jacobian of a point on a body (mj_jac) and ``com`` the body's centre of mass (xipos), and
``run`` closes a controller's loop at the model's step with torques applied through ``qfrc_applied`` (zero-order
hold over each control period) and external forces on bodies through ``xfrc_applied``, as STYLE.md describes.
"""
import re
from typing import NamedTuple

import numpy as np
from lxml import etree

MUJOCO_EXTENSION = '<mujoco><compiler discardvisual="true" fusestatic="false"/></mujoco>'
WARNINGS = []             # MuJoCo's warnings (an unstable state, ...), kept here instead of its MUJOCO_LOG.TXT
HARD_IMPEDANCE = 0.9999   # solimp d of the friction loss: the share of the stopping torque applied (module docstring)
SOFT_SOLREF, SOFT_SOLIMP = (0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0)    # MuJoCo's defaults


class Payload(NamedTuple):
    """A rigid payload on ``link`` (a URDF link name): mass (kg), CoM (3,) in the link's frame, rotational
    inertia (3, 3) about the CoM."""

    link: str
    mass: float
    com: tuple
    inertia: np.ndarray

    def parameters(self):
        """pi (10,) about the link's origin: robot_dynamics.controllers.payload_parameters."""
        from robot_dynamics.controllers import payload_parameters
        return payload_parameters(self.mass, self.com, self.inertia)


def box_inertia(mass, size):
    """Rotational inertia (3, 3) about the centre of a solid box of side lengths size (3,)."""
    a, b, c = np.square(size)
    return mass / 12.0 * np.diag([b + c, a + c, a + b])


def prepared_urdf(source, fixed_joints=(), payload=None):
    """URDF text without visual and collision elements, the joints named in fixed_joints made fixed, and the
    payload (a Payload or None) added as a link ``payload`` fixed to its link."""
    text = open(source).read() if not str(source).lstrip().startswith("<") else str(source)
    root = etree.fromstring(text.encode())
    for element in root.xpath("//visual | //collision"):
        element.getparent().remove(element)
    for element in root.xpath("//transmission | //gazebo | //ros2_control"):
        element.getparent().remove(element)
    for joint in root.findall("joint"):
        if joint.get("name") in fixed_joints:
            joint.set("type", "fixed")
            for child in joint.findall("limit") + joint.findall("mimic") + joint.findall("axis"):
                joint.remove(child)
    if payload is not None:
        I = np.asarray(payload.inertia, dtype=float)
        link = etree.SubElement(root, "link", name="payload")
        inertial = etree.SubElement(link, "inertial")
        etree.SubElement(inertial, "origin", xyz=" ".join(map(repr, map(float, payload.com))), rpy="0 0 0")
        etree.SubElement(inertial, "mass", value=repr(float(payload.mass)))
        etree.SubElement(inertial, "inertia", **{key: repr(float(I[i, j])) for key, (i, j) in
                                                 (("ixx", (0, 0)), ("iyy", (1, 1)), ("izz", (2, 2)),
                                                  ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyz", (1, 2)))})
        joint = etree.SubElement(root, "joint", name="payload_joint", type="fixed")
        etree.SubElement(joint, "parent", link=payload.link)
        etree.SubElement(joint, "child", link="payload")
        etree.SubElement(joint, "origin", xyz="0 0 0", rpy="0 0 0")
    return etree.tostring(root, encoding="unicode")


class MujocoTwin:
    """MuJoCo's model of a URDF (text from prepared_urdf) and the map of our joints onto its dofs.

    robot: the robot_dynamics Robot of the same text (fixed base, every joint one dof); armature, damping,
    frictionloss: None (zero) or (nv,) per joint in our order, MuJoCo's dof_armature, dof_damping and
    dof_frictionloss (a URDF's <dynamics damping friction>, as MuJoCo reads them).
    """

    def __init__(self, urdf_text, robot, dt=1e-3, armature=None, damping=None, frictionloss=None):
        import mujoco
        self.mj = mujoco
        mujoco.set_mju_user_warning(WARNINGS.append)
        text = re.sub(r"(<robot\b[^>]*>)", r"\1" + MUJOCO_EXTENSION, urdf_text, count=1)
        self.model = mujoco.MjModel.from_xml_string(text)
        m = self.model
        m.opt.timestep = dt
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
        self.data = mujoco.MjData(m)
        self.robot = robot
        self.qadr = np.array([m.joint(name).qposadr[0] for name in robot.joint_names])
        self.dadr = np.array([m.joint(name).dofadr[0] for name in robot.joint_names])
        assert m.nv == robot.nv and sorted(self.dadr) == list(range(m.nv)), "every MuJoCo dof is one of ours"
        m.dof_damping[self.dadr] = 0.0 if damping is None else damping
        m.dof_armature[self.dadr] = 0.0 if armature is None else armature
        self.dt = dt
        self.set_frictionloss(frictionloss)

    def set_frictionloss(self, frictionloss, soft=False):
        """dof_frictionloss <- frictionloss (None: zero, or (nv,) in our order), as a hard constraint at the step
        (module docstring: solref timeconst 2 steps, solimp d = HARD_IMPEDANCE), or with soft, MuJoCo's default
        soft constraint (SOFT_SOLREF, SOFT_SOLIMP): a plant with less friction than the URDF states."""
        m = self.model
        m.dof_frictionloss[self.dadr] = 0.0 if frictionloss is None else frictionloss
        m.dof_solref[:] = SOFT_SOLREF if soft else (2 * self.dt, 1.0)
        m.dof_solimp[:] = SOFT_SOLIMP
        if not soft:
            m.dof_solimp[:, :2] = HARD_IMPEDANCE

    def set_state(self, q, v):
        self.data.qpos[self.qadr] = q
        self.data.qvel[self.dadr] = v
        self.mj.mj_forward(self.model, self.data)

    def state(self):
        return self.data.qpos[self.qadr].copy(), self.data.qvel[self.dadr].copy()

    def mass_matrix(self, q):
        """mj_fullM at q, in our joint order."""
        self.set_state(q, np.zeros(self.robot.nv))
        M = np.zeros((self.model.nv, self.model.nv))
        self.mj.mj_fullM(self.model, self.data, M)
        return M[np.ix_(self.dadr, self.dadr)]

    def bias(self, q, v):
        """qfrc_bias = C(q, v) v + g(q) at (q, v), in our joint order."""
        self.set_state(q, v)
        return self.data.qfrc_bias[self.dadr].copy()

    def forward_dynamics(self, q, v, tau):
        """qacc at (q, v) under the joint torques tau (qfrc_applied) and the dofs' passive damping, in our joint
        order: (M + diag(armature))^-1 (tau - damping v - C v - g)."""
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self.dadr] = tau
        self.set_state(q, v)
        qacc = self.data.qacc[self.dadr].copy()
        self.data.qfrc_applied[:] = 0.0
        return qacc

    def com(self, q, body):
        """MuJoCo's centre of mass (3,) of its body ``body`` (a URDF link name) at q, world frame: where
        xfrc_applied acts."""
        self.set_state(q, np.zeros(self.robot.nv))
        return self.data.body(body).xipos.copy()

    def body_point(self, body, offset):
        """The world position (3,) of the point at offset (3,) from body's centre of mass, in its body frame's axes,
        in the present state (during run, the simulation's)."""
        b = self.data.body(body)
        return b.xipos + b.xmat.reshape(3, 3) @ np.asarray(offset, dtype=float)

    def jacobian(self, q, body, point=None):
        """MuJoCo's Jacobian (6, nv) [jacp; jacr] of the point ``point`` (3,) (world frame; default the body's
        centre of mass) moving with its body ``body``, at q, columns in our joint order (mj_jac): the joint torque
        of a wrench [force; torque] in world axes applied there (xfrc_applied's convention) is its transpose
        times the wrench."""
        self.set_state(q, np.zeros(self.robot.nv))
        point = self.data.body(body).xipos if point is None else np.asarray(point, dtype=float)
        jacp, jacr = np.zeros((3, self.model.nv)), np.zeros((3, self.model.nv))
        self.mj.mj_jac(self.model, self.data, jacp, jacr, point, self.model.body(body).id)
        return np.vstack([jacp, jacr])[:, self.dadr]

    def run(self, q0, v0, torque, duration, control_period=None, forces=None):
        """Simulate from (q0, v0): torque(t, q, v) -> (nv,) once per control period (default the step), held.

        forces: None or a function t -> {body name: (6,) [force; torque] in world axes at the body's CoM} applied
        through xfrc_applied. Returns (t (K,), q (K, nv), v (K, nv), tau (K, nv)) at the control ticks, tau the
        torque applied from each tick on. Stops early (arrays shortened) if MuJoCo warns of an unstable state.
        """
        mj, m, d = self.mj, self.model, self.data
        every = 1 if control_period is None else int(round(control_period / self.dt))
        mj.mj_resetData(m, d)
        self.set_state(q0, v0)
        ticks = int(round(duration / (every * self.dt)))
        T, Q, V, TAU = [], [], [], []
        for k in range(ticks):
            t = k * every * self.dt
            q, v = self.state()
            tau = np.asarray(torque(t, q, v), dtype=float)
            T.append(t), Q.append(q), V.append(v), TAU.append(tau)
            d.qfrc_applied[:] = 0.0
            d.qfrc_applied[self.dadr] = tau
            for _ in range(every):
                if forces is not None:
                    d.xfrc_applied[:] = 0.0
                    for body, wrench in forces(d.time).items():
                        d.xfrc_applied[m.body(body).id] = wrench
                mj.mj_step(m, d)
            if d.warning[mj.mjtWarning.mjWARN_BADQACC].number > 0 or not np.all(np.isfinite(d.qvel)):
                break
        return np.array(T), np.array(Q), np.array(V), np.array(TAU)


# ---- the arms of the adaptive-control tests and benchmark: each with a payload 3-10x its last link ----------------

class Scenario(NamedTuple):
    """An arm with an unknown payload: its description as the controller reads it (nominal), the arm with the
    payload (truth, robot_dynamics) and MuJoCo's model of the latter (twin), the body carrying the payload (our
    body name), the payload, and a reference: three sines per joint (0.2, 0.35, 0.5 Hz), +-0.55-1.1 rad in all."""

    nominal: object
    truth: object
    twin: MujocoTwin
    body: str
    payload: Payload
    reference: object


# file (example-robot-data, or None for the bundled arm7), joints fixed, link carrying the payload, its mass (kg),
# CoM (m, in that link's frame, off its axis), home configuration
ARMS = {
    "panda": ("panda.urdf", ("panda_finger_joint1", "panda_finger_joint2"), "panda_hand", 4.5, (0.03, -0.02, 0.12),
              (0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8)),
    "ur5": ("ur5_robot.urdf", (), "wrist_3_link", 1.5, (0.03, 0.02, 0.06), (0.0, -1.2, 1.2, -1.5, -1.5, 0.0)),
    "arm7": (None, (), "tool", 5.0, (0.03, -0.02, 0.05), (0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8)),
    "xarm7": ("xarm7.urdf", (), "link7", 1.5, (0.02, 0.01, 0.05), (0.0, 0.3, 0.0, 0.9, 0.0, 0.6, 0.0)),
}


def scenario(name, dt=1e-3, seed=0, friction=False):
    """The Scenario of ARMS[name], MuJoCo stepping at dt; friction: MuJoCo's twin carries the URDF's Coulomb
    friction too (dof_frictionloss, hard at the step: MujocoTwin; xArm7 wants dt = PLANT_STEP then)."""
    import robot_dynamics as rd
    from oracle import erd_path
    from robot_dynamics.bundled import bundled_urdf
    from robot_dynamics.controllers import SumOfSines

    filename, fixed, link, mass, com, home = ARMS[name]
    source = bundled_urdf("arm7") if filename is None else erd_path(filename)
    payload = Payload(link, mass, com, box_inertia(mass, (0.08, 0.06, 0.05)))
    nominal = rd.load_urdf(prepared_urdf(source, fixed))
    text = prepared_urdf(source, fixed, payload)
    truth = rd.load_urdf(text)
    body = truth.body_names[truth.model.frames[link].body]              # the moving body the link is part of
    rng = np.random.default_rng(seed)
    n = nominal.nv
    amplitudes = rng.uniform(0.5, 1.0, (n, 1)) * np.array([0.6, 0.3, 0.2])
    reference = SumOfSines(np.array(home, dtype=float), amplitudes, 2 * np.pi * np.array([0.2, 0.35, 0.5]),
                           rng.uniform(0, 2 * np.pi, (n, 3)))
    twin = MujocoTwin(text, truth, dt, armature=truth.armature, damping=truth.damping,  # the URDF's drives (panda:
                      frictionloss=truth.friction if friction else None)                 # <dynamics damping>)
    return Scenario(nominal, truth, twin, body, payload, reference)


# ---- the arms of the momentum observer's tests and benchmark: known forces stepped onto links mid-motion ----------

class ObservedArm(NamedTuple):
    """An arm whose model is exact, drives included: the Robot (the observer's and the controller's model), MuJoCo's
    model of it (twin: the same armature and damping), its home configuration, and two links a force is put on:
    mid (fewer than six joints below it) and last (six or more: its wrench is observable)."""

    robot: object
    twin: MujocoTwin
    home: np.ndarray
    mid: str
    last: str


# ARMS' file, fixed joints and home; the links; the drives: None for the URDF's own (panda's <dynamics> damping), or
# a seed for a random armature (0.1-0.5 kg m^2) and damping (0.5-2 N m s/rad) on every joint
OBSERVED = {"panda": ("panda_link5", "panda_hand", None), "ur5": ("forearm_link", "wrist_3_link", 0)}


class Log(NamedTuple):
    """A closed-loop run at the control ticks: t (K,), q (K, nq), v (K, nv), tau (K, nv) the controller's torque
    from each tick on (a disturbance excluded), r (K, nv) the observer's residual computed online (or None)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    r: np.ndarray


def observed_arm(name, dt=1e-3):
    """The ObservedArm of ARMS[name] and OBSERVED[name], MuJoCo stepping at dt."""
    import robot_dynamics as rd
    from oracle import erd_path

    filename, fixed, _, _, _, home = ARMS[name]
    mid, last, seed = OBSERVED[name]
    text = prepared_urdf(erd_path(filename), fixed)
    robot = rd.load_urdf(text)
    if seed is not None:
        rng = np.random.default_rng(seed)
        robot = robot.with_drives(armature=rng.uniform(0.1, 0.5, robot.nv), damping=rng.uniform(0.5, 2.0, robot.nv))
    twin = MujocoTwin(text, robot, dt, armature=robot.armature, damping=robot.damping)
    return ObservedArm(robot, twin, np.array(home, dtype=float), mid, last)


def motion(arm, seed):
    """A reference about the arm's home: three sines per joint (0.2, 0.35, 0.5 Hz), +-0.55-1.1 rad in all, random
    amplitudes and phases of the seed."""
    from robot_dynamics.controllers import SumOfSines

    rng = np.random.default_rng(seed)
    n = arm.robot.nv
    amplitudes = rng.uniform(0.5, 1.0, (n, 1)) * np.array([0.6, 0.3, 0.2])
    return SumOfSines(arm.home, amplitudes, 2 * np.pi * np.array([0.2, 0.35, 0.5]), rng.uniform(0, 2 * np.pi, (n, 3)))


def observed_run(arm, reference, duration, observer=None, force=None, disturbance=None, period=None):
    """Computed torque (kp 400, kd 40, the model's friction compensated) tracking reference in MuJoCo, one tick per
    control period (MuJoCo's step unless given, a multiple of it); observer (a MomentumObserver or None) updated
    online at each tick with the torque of the tick before.

    force: None or (link, force (3,) in world axes, offset (3,), t_on, t_off): the force on the link's point at offset
    from its centre of mass (in its body frame's axes), put on from the first step at t_on to the last before t_off
    through xfrc_applied -- which acts at the centre of mass: the force with its moment about it, [f; (x - c) x f],
    the point x where the present step begins.  disturbance: None or a function t -> (nv,) joint torque added to
    the controller's through qfrc_applied and not in the Log's tau.
    """
    from robot_dynamics.controllers import ComputedTorque

    controller = ComputedTorque(arm.robot, 400.0, 40.0)
    twin = arm.twin
    dt = twin.dt if period is None else period
    residuals, last = [], []

    def torque(t, q, v):
        if observer is not None:
            r = observer.update(q, v, last[0], dt) if last else observer.start(q, v)
            residuals.append(r.copy())
        d = reference(t)
        tau = controller.torque(q, v, d.q, d.v, d.a)
        last[:] = [tau]
        return tau if disturbance is None else tau + disturbance(t)

    def forces(t):
        link, f, offset, t_on, t_off = force
        if not t_on - 1e-9 <= t < t_off - 1e-9:
            return {link: np.zeros(6)}
        lever = twin.body_point(link, offset) - twin.data.body(link).xipos
        return {link: np.concatenate([f, np.cross(lever, f)])}

    start = reference(0.0)
    t, q, v, tau = twin.run(start.q, start.v, torque, duration, forces=None if force is None else forces,
                            control_period=period)
    if disturbance is not None:
        tau = tau - np.array([disturbance(s) for s in t])
    return Log(t, q, v, tau, np.array(residuals) if observer is not None else None)


# ---- payload identification (issue 28): MuJoCo logs of an arm carrying a payload it does not model --------------

class PayloadLog(NamedTuple):
    """A log of an arm with a payload, simulated by MuJoCo: the arm's URDF text without the payload (urdf), the arm
    as that describes it (nominal, its drives included), the arm with the payload (truth, robot_dynamics) and
    MuJoCo's model of it (twin), the payload, and the samples at the control ticks: t (N,), q, v, a (MuJoCo's qacc
    at the tick, under the torque held from it), tau (N, nv)."""

    urdf: str
    nominal: object
    truth: object
    twin: MujocoTwin
    payload: Payload
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray


def payload_log(name, payload, duration=10.0, dt=1e-3, seed=0, armature=None, damping=None, bandwidth=5.0):
    """A PayloadLog of ARMS[name] (its file, fixed joints and home) carrying ``payload`` (a Payload), excited for
    ``duration`` s by three sines per joint about home (0.2, 0.5 and 0.8 Hz; amplitudes 0.3-0.5, 0.18-0.3 and
    0.12-0.2 rad), tracked by computed torque with the nominal model (which does not know the payload; bandwidth
    in Hz, critically damped), the torque held over each step dt of MuJoCo.  armature, damping: (nv,) the drives
    of the nominal arm, or None (the URDF's); MuJoCo's dof_armature and dof_damping are the nominal arm's (which
    has no Coulomb friction: MuJoCo's frictionloss is a constraint, not the same law)."""
    import robot_dynamics as rd
    from oracle import erd_path
    from robot_dynamics.bundled import bundled_urdf
    from robot_dynamics.controllers import SumOfSines

    filename, fixed, _, _, _, home = ARMS[name]
    source = bundled_urdf("arm7") if filename is None else erd_path(filename)
    urdf = prepared_urdf(source, fixed)
    nominal = rd.load_urdf(urdf)
    text = prepared_urdf(source, fixed, payload)
    truth = rd.load_urdf(text)
    nominal = nominal.with_drives(armature=armature, damping=damping)
    truth = truth.with_drives(armature=nominal.armature, damping=nominal.damping)
    assert not nominal.friction.any() and nominal.model.drives.model is None, "MuJoCo has no such friction"
    twin = MujocoTwin(text, truth, dt, nominal.armature, nominal.damping)
    rng = np.random.default_rng(seed)
    n = nominal.nv
    reference = SumOfSines(np.array(home, dtype=float), rng.uniform(0.6, 1.0, (n, 1)) * np.array([0.5, 0.3, 0.2]),
                           2 * np.pi * np.array([0.2, 0.5, 0.8]), rng.uniform(0, 2 * np.pi, (n, 3)))
    w = 2 * np.pi * bandwidth
    mj, m, d = twin.mj, twin.model, twin.data
    mj.mj_resetData(m, d)
    start = reference(0.0)
    twin.set_state(start.q, start.v)
    steps = int(round(duration / dt))
    t = dt * np.arange(steps)
    Q, V, A, TAU = (np.empty((steps, n)) for _ in range(4))
    for k in range(steps):
        q, v = twin.state()
        r = reference(t[k])
        tau = nominal.inverse_dynamics(q, v, r.a + 2 * w * (r.v - v) + w**2 * (r.q - q)) + nominal.friction_torque(v)
        d.qfrc_applied[:] = 0.0
        d.qfrc_applied[twin.dadr] = tau
        mj.mj_forward(m, d)                                  # qacc at (q, v) under tau: the logged acceleration
        Q[k], V[k], A[k], TAU[k] = q, v, d.qacc[twin.dadr], tau
        mj.mj_step(m, d)
    assert np.all(np.isfinite(d.qvel)), f"MuJoCo's {name} went unstable"
    return PayloadLog(urdf, nominal, truth, twin, payload, t, Q, V, A, TAU)


def with_sensor_noise(q, tau, torque=0.01, resolution=2 * np.pi / 2**16, rng=None):
    """(q, tau) as a 16-bit encoder (q rounded to the resolution) and a torque sensor (Gaussian noise of standard
    deviation ``torque`` times each joint's torque range, identification.simulated.Noise's convention) log them."""
    rng = np.random.default_rng(rng)
    return (np.round(q / resolution) * resolution if resolution else q,
            tau + rng.normal(size=tau.shape) * torque * np.ptp(tau, axis=0))


# ---- sampled drives (issue 37): an arm whose URDF declares damping and friction and no armature ------------------

class DrivenArm(NamedTuple):
    """An arm and MuJoCo's models of it with and without its URDF's drives: the Robot as the URDF says (robot:
    damping, Coulomb friction, no armature), the same without drives (rigid), MuJoCo with exactly those drives
    (twin: dof_damping and the constraint-based dof_frictionloss, hard at the step: MujocoTwin) and without
    (rigid_twin), the home configuration, and mid, last: links a force is put on (observed_run), as ObservedArm's."""

    robot: object
    rigid: object
    twin: MujocoTwin
    rigid_twin: MujocoTwin
    home: np.ndarray
    mid: str
    last: str


PLANT_STEP = 1e-4          # s: MuJoCo's step where it carries Coulomb friction, ten per 1-kHz control tick


def driven_arm(name="xarm7", dt=PLANT_STEP):
    """The DrivenArm of ARMS[name] (example-robot-data's xArm7: damping 2-10 N m s/rad, friction 1 N m), MuJoCo
    stepping at dt, the controllers at a multiple of it (tracking_errors' and observed_run's period).

    The step: a Coulomb friction F on a light joint stops it within F / (M_ii |v|) (joint 7: 0.14 ms at 1 rad/s), and
    its damping relaxes the velocity in M_ii / D (70 us), both shorter than a 1-kHz tick.  At 0.1 ms (RK4: D dt /
    M_77 = 1.4, within its stability bound 2.78) the closed loop of computed torque (K_p 400, K_d 40, 1 kHz) stays
    within 2e-6 rad of a 20-us plant's over 2 s; at 1 ms within 2.5e-4 with the damping implicit (MuJoCo's
    implicitfast), while RK4 diverges there as soon as joint 7 slides (D dt / M_77 = 14)."""
    import robot_dynamics as rd
    from oracle import erd_path

    filename, fixed, _, _, _, home = ARMS[name]
    text = prepared_urdf(erd_path(filename), fixed)
    robot = rd.load_urdf(text)
    assert not robot.model.drives.frictionless and not robot.armature.any(), f"{name}: drives without armature"
    twin = MujocoTwin(text, robot, dt, damping=robot.damping, frictionloss=robot.friction)
    assert np.max(robot.damping * dt / np.diag(robot.mass_matrix(np.array(home)))) < 2.0, "RK4 unstable: smaller dt"
    return DrivenArm(robot, robot.with_drives(damping=0.0, friction=0.0), twin, MujocoTwin(text, robot, dt),
                     np.array(home, dtype=float), "link5", "link7")


def pushed_speed(twin, q, joint, delta, duration):
    """The mean velocity of coordinate `joint` (our index) over the last fifth of `duration` s from rest at q, the
    arm held by MuJoCo's own bias forces (qfrc_bias at every step) and that joint pushed by delta N m more: with a
    Coulomb friction F and a damping D, zero while |delta| <= F, else (delta - F sign delta) / D once steady."""
    mj, m, d = twin.mj, twin.model, twin.data
    mj.mj_resetData(m, d)
    twin.set_state(q, np.zeros(twin.robot.nv))
    steps = int(round(duration / twin.dt))
    v = np.empty(steps)
    for k in range(steps):
        mj.mj_forward(m, d)
        d.qfrc_applied[:] = d.qfrc_bias
        d.qfrc_applied[twin.dadr[joint]] += delta
        mj.mj_step(m, d)
        v[k] = d.qvel[twin.dadr[joint]]
    return float(v[-(steps // 5):].mean())


def tracking_errors(twin, reference, torque, duration, period):
    """(t (K,), e (K, nv)) the tracking error at the control ticks of `duration` s in MuJoCo (twin), torque(t, q, v, r)
    -> (nv,) with r = reference(t), held over each control period; e is inf from where the loop diverged (MuJoCo's
    unstable state, a non-finite torque or state) on."""
    def law(t, q, v):
        return torque(t, q, v, reference(t))

    start = reference(0.0)
    t, q, _, tau = twin.run(start.q, start.v, law, duration, control_period=period)
    e = reference(t).q - q
    ticks = int(round(duration / period))
    finite = np.all(np.isfinite(e), axis=1) & np.all(np.isfinite(tau), axis=1)
    bad = len(t) if finite.all() else int(np.argmin(finite))
    if bad == ticks:
        return t, e
    full = np.full((ticks, e.shape[1]), np.inf)
    full[:bad] = e[:bad]
    return period * np.arange(ticks), full


def rms(t, e, start, stop):
    """The RMS of |e| (rad) over start <= t < stop."""
    window = (t >= start - 1e-9) & (t < stop - 1e-9)
    return float(np.sqrt(np.mean(np.sum(e[window] ** 2, axis=1))))
