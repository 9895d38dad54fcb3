"""MJCF models against MuJoCo itself (STYLE.md: "For MJCF, MuJoCo's compiler is the definition").

Each model below is written for these tests (no published model is copied) and uses what real robots' MJCF uses:
default classes and childclass, an <include>, degrees and radians, euler sequences and every orientation form,
inertias from fromto capsules and other geoms, joint pos, axis and ref, several joints in one body, bodies welded
to their parent, sites, armature, damping and frictionloss on joints and on actuators, and a free joint.  At random
states, our M, C v + g, -damping v, frame placements and forward dynamics equal mj_fullM, qfrc_bias, qfrc_passive,
xpos/site_xpos and qacc (contacts, limits and frictionloss disabled) mapped through T = dqvel/dv, built here from
MuJoCo's own quaternion: qvel = T v + 0, T = diag(R, E) on a free joint's rows (R its body's rotation).
"""
import copy
import io
import json

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.controllers import ComputedTorque
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.cli import main as cli

mujoco = pytest.importorskip("mujoco")

ARM_DEFAULTS = """<mujoco>
  <default>
    <default class="arm">
      <joint type="hinge" damping="0.3" armature="0.05" frictionloss="0.2"/>
      <geom density="800"/>
      <default class="pitch"><joint axis="0 1 0" damping="0.5"/></default>
    </default>
  </default>
</mujoco>
"""

# a tetrahedron, its faces turned outward: MuJoCo computes its volume, mass and inertia (inertiafromgeom)
WEDGE_OBJ = """v 0 0 0
v 0.1 0 0
v 0 0.08 0
v 0 0 0.06
f 1 3 2
f 1 2 4
f 1 4 3
f 2 3 4
"""

# degrees (MJCF's default unit), intrinsic z-y-x euler angles, every orientation form, several joints in one body
ARM = """<mujoco model="arm">
  <compiler angle="degree" eulerseq="zyx" autolimits="true"/>
  <option gravity="0.3 -0.2 -9.7"/>
  <include file="arm_defaults.xml"/>
  <asset><mesh name="wedge" file="wedge.obj"/></asset>
  <worldbody>
    <site name="world_marker" pos="0.1 0 0"/>
    <body name="base" pos="0 0 0.1" euler="10 0 5">
      <geom type="cylinder" size="0.06 0.05" mass="3"/>
      <body name="link1" pos="0 0 0.1" childclass="arm">
        <joint name="j1" axis="0 0 1" ref="15"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.04"/>
        <body name="link2" pos="0 0 0.3" axisangle="1 0 0 30">
          <joint name="j2" class="pitch" pos="0 0 0.02"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 0.02" size="0.035"/>
          <body name="link3" pos="0.3 0 0" xyaxes="0 1 0 -1 0 0">
            <joint name="j3" axis="1 1 0" class="pitch" pos="0.01 0 0"/>
            <joint name="j3s" type="slide" axis="1 0 0.2" ref="0.05" damping="0.7"/>
            <joint name="j3r" axis="0 0 1" pos="0.02 0.01 0" ref="-20"/>
            <geom type="box" size="0.05 0.03 0.02" pos="0.1 0 0" euler="0 20 40"/>
            <site name="tool" pos="0.2 0 0" zaxis="0 1 1"/>
            <body name="flange" pos="0.25 0 0" quat="0.9 0.1 0.3 0.2">
              <geom type="sphere" size="0.03" pos="0.01 0 0"/>
              <site name="tcp" pos="0 0 0.05"/>
            </body>
          </body>
        </body>
        <body name="link1b" pos="0.05 0 0.2">
          <joint name="j4" class="pitch"/>
          <geom type="ellipsoid" size="0.03 0.04 0.05" pos="0 0 0.05"/>
          <geom type="mesh" mesh="wedge" pos="0 0.02 0.1" euler="30 0 0" density="2000"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="j1" gear="5" armature="0.02" damping="0.1"/>
    <position joint="j2" kp="10"/>
  </actuator>
</mujoco>
"""

LEG = """
      <body name="{leg}_hip" pos="{x} {y} 0" childclass="leg">
        <joint name="{leg}_hip_joint" axis="1 0 0"/>
        <geom fromto="0 0 0 0 {y} 0"/>
        <body name="{leg}_thigh" pos="0 {y} 0" euler="0 0.1 0">
          <joint name="{leg}_thigh_joint" axis="0 1 0"/>
          <geom fromto="0 0 0 0 0 -0.2"/>
          <body name="{leg}_calf" pos="0 0 -0.2">
            <joint name="{leg}_calf_joint" axis="0 1 0" ref="-0.3"/>
            <geom fromto="0 0 0 0.02 0 -0.2"/>
            <site name="{leg}_foot" pos="0.02 0 -0.2"/>
          </body>
        </body>
      </body>"""

# radians, extrinsic X-Y-Z euler angles, a free joint, a static body with a site beside the robot
QUADRUPED = """<mujoco model="quadruped">
  <compiler angle="radian" eulerseq="XYZ"/>
  <default>
    <default class="leg">
      <joint damping="0.4" armature="0.01" frictionloss="0.1" range="-1 1"/>
      <geom type="capsule" size="0.02" density="1000"/>
    </default>
  </default>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="target" pos="1 0 0.5" euler="0.3 0 0">
      <geom type="sphere" size="0.05"/>
      <site name="target_site" pos="0 0 0.1"/>
    </body>
    <body name="trunk" pos="0 0 0.4" euler="0.1 0.2 0.3">
      <freejoint name="root"/>
      <inertial pos="0.01 0 -0.005" quat="0.7 0.1 0.7 0" mass="6" diaginertia="0.1 0.09 0.03"/>
      <site name="imu" pos="-0.02 0 0.04"/>""" + "".join(
    LEG.format(leg=leg, x=x, y=y) for leg, x, y in
    (("FL", 0.2, 0.05), ("FR", 0.2, -0.05), ("RL", -0.2, 0.05), ("RR", -0.2, -0.05))) + """
    </body>
  </worldbody>
</mujoco>
"""


HUMANOID_LEG = """
        <body name="{side}_thigh" pos="0 {y} -0.04">
          <joint name="{side}_hip_x" axis="1 0 0" pos="0 0 0.02"/>
          <joint name="{side}_hip_z" axis="0 0 1" pos="0 0 0.02"/>
          <joint name="{side}_hip_y" axis="0 1 0" pos="0 0 0.02" ref="-10"/>
          <geom fromto="0 0 0 0 {dy} -0.34" size="0.06"/>
          <body name="{side}_shin" pos="0 {dy} -0.4">
            <joint name="{side}_knee" axis="0 -1 0" pos="0 0 0.02"/>
            <geom fromto="0 0 0 0 0 -0.3" size="0.049"/>
            <body name="{side}_foot" pos="0 0 -0.39" zaxis="0.1 0 1">
              <joint name="{side}_ankle_y" axis="0 1 0" pos="0 0 0.08"/>
              <joint name="{side}_ankle_x" axis="1 0 0.5" pos="0 0 0.04"/>
              <geom fromto="-0.07 {fy} 0 0.14 {fy2} 0" size="0.027"/>
              <site name="{side}_sole" pos="0.04 0 -0.03"/>
            </body>
          </body>
        </body>"""

HUMANOID_ARM = """
      <body name="{side}_upper_arm" pos="0 {y} 0.06" quat="1 0 0 {w}">
        <joint name="{side}_shoulder1" axis="2 1 1"/>
        <joint name="{side}_shoulder2" axis="0 -1 1"/>
        <geom fromto="0 0 0 0.16 {dy} -0.16" size="0.04 0.16"/>
        <body name="{side}_lower_arm" pos="0.18 {dy2} -0.18">
          <joint name="{side}_elbow" axis="0 -1 1"/>
          <geom fromto="0.01 0.01 0.01 0.17 0.17 0.17" size="0.031"/>
          <site name="{side}_hand" pos="0.18 0.18 0.18"/>
        </body>
      </body>"""

# humanoid-like (after the shape of MuJoCo's classic humanoid, written here): a free torso, bodies of two and three
# hinges at offset anchors (waist, hips, shoulders, ankles), degrees, geoms' default density, a childclass
HUMANOID = """<mujoco model="humanoid_like">
  <default>
    <default class="body">
      <joint type="hinge" damping="0.2" armature="0.02" stiffness="0"/>
      <geom type="capsule"/>
    </default>
  </default>
  <worldbody>
    <body name="torso" pos="0 0 1.4" childclass="body">
      <freejoint name="root"/>
      <geom fromto="0 -0.07 0 0 0.07 0" size="0.07"/>
      <geom name="head" type="sphere" pos="0 0 0.19" size="0.09"/>
      <site name="head_top" pos="0 0 0.28"/>""" + "".join(
    HUMANOID_ARM.format(side=side, y=y, w=w, dy=dy, dy2=dy2) for side, y, w, dy, dy2 in
    (("right", -0.17, 0.3, -0.16, -0.18), ("left", 0.17, -0.3, 0.16, 0.18))) + """
      <body name="lower_waist" pos="-0.01 0 -0.26">
        <joint name="abdomen_z" axis="0 0 1" pos="0 0 0.065"/>
        <joint name="abdomen_y" axis="0 1 0" pos="0 0 0.065"/>
        <geom fromto="0 -0.06 0 0 0.06 0" size="0.06"/>
        <body name="pelvis" pos="0 0 -0.165">
          <joint name="abdomen_x" axis="1 0 0" pos="0 0 0.1"/>
          <geom fromto="-0.02 -0.07 0 -0.02 0.07 0" size="0.09"/>""" + "".join(
    HUMANOID_LEG.format(side=side, y=y, dy=dy, fy=fy, fy2=fy2) for side, y, dy, fy, fy2 in
    (("right", -0.1, 0.01, -0.03, -0.02), ("left", 0.1, -0.01, 0.03, 0.02))) + """
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# a fixed-base arm beside two free objects: free joints that are not a floating base, in the middle of qpos
SCENE = """<mujoco model="scene">
  <worldbody>
    <body name="box" pos="0.5 0 0.2"><freejoint/><geom type="box" size="0.1 0.05 0.03" mass="0.4"/></body>
    <body name="shoulder" pos="0 0 0.3" quat="0 0 0 1">
      <joint name="a1" axis="0 0 1" damping="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body name="forearm" pos="0.3 0 0">
        <joint name="a2" axis="0 1 0" pos="0.01 0 0" armature="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.025"/>
        <site name="hand" pos="0.25 0 0"/>
      </body>
    </body>
    <body name="ball" pos="-0.5 0 0.2"><joint type="free" damping="0.05"/><geom type="sphere" size="0.05"/></body>
  </worldbody>
</mujoco>
"""
# ball joints (qpos [qw, qx, qy, qz]): at an offset anchor, after a hinge in one body, with armature and damping
BALL_CHAIN = """<mujoco model="ball_chain">
  <option gravity="0 0.5 -9.81"/>
  <worldbody>
    <body name="upper" pos="0 0 1" euler="20 0 10">
      <joint name="shoulder" type="ball" pos="0 0 0.05" armature="0.02" damping="0.3"/>
      <geom type="capsule" fromto="0 0 0 0 0.05 -0.3" size="0.04"/>
      <body name="fore" pos="0 0.05 -0.3">
        <joint name="elbow" axis="1 0 0.2" ref="10" damping="0.1"/>
        <joint name="twist" type="ball" pos="0.01 0 -0.02"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.25" size="0.03"/>
        <body name="hand" pos="0 0 -0.25" quat="0.9 0.3 0.1 0.2">
          <joint name="wrist" type="ball" damping="0.1"/>
          <geom type="box" size="0.04 0.03 0.02" pos="0.02 0 -0.03"/>
          <site name="palm" pos="0 0.01 -0.05"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# a humanoid-like tree on a free joint, ball hips and shoulders, hinge knees and elbows (radians)
RAGDOLL = """<mujoco model="ragdoll">
  <compiler angle="radian"/>
  <default><joint armature="0.01" damping="0.2"/><geom density="900"/></default>
  <worldbody>
    <body name="pelvis" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.15 0.05"/>
      <body name="torso" pos="0 0 0.1"><joint name="waist" type="ball" pos="0 0 -0.05"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.4" size="0.08"/>
        <body name="arm_l" pos="0 0.2 0.35" euler="0.4 0 0"><joint name="shoulder_l" type="ball"/>
          <geom type="capsule" fromto="0 0 0 0 0.3 0" size="0.03"/>
          <body name="forearm_l" pos="0 0.3 0"><joint name="elbow_l" axis="0 0 1"/>
            <geom type="capsule" fromto="0 0 0 0 0.25 0" size="0.025"/><site name="hand_l" pos="0 0.25 0"/></body>
        </body>
        <body name="arm_r" pos="0 -0.2 0.35" euler="-0.4 0 0"><joint name="shoulder_r" type="ball"/>
          <geom type="capsule" fromto="0 0 0 0 -0.3 0" size="0.03"/>
        </body>
      </body>
      <body name="thigh_l" pos="0 0.1 -0.05"><joint name="hip_l" type="ball"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05"/>
        <body name="shin_l" pos="0 0 -0.4"><joint name="knee_l" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/><site name="foot_l" pos="0 0 -0.4"/></body>
      </body>
      <body name="thigh_r" pos="0 -0.1 -0.05" euler="0.3 0 0"><joint name="hip_r" type="ball" pos="0 0 0.02"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.05"/>
        <body name="shin_r" pos="0 0 -0.4"><joint name="knee_r" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/></body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
MODELS = ["arm", "quadruped", "humanoid", "scene", "ball_chain", "ragdoll"]


def write_arm(folder, name="arm.xml"):
    """The arm's file, the file it includes and its mesh, written in folder: -> the arm's path."""
    (folder / "arm_defaults.xml").write_text(ARM_DEFAULTS)
    (folder / "wedge.obj").write_text(WEDGE_OBJ)
    (folder / name).write_text(ARM)
    return folder / name


@pytest.fixture(scope="module")
def arm_file(tmp_path_factory):
    return write_arm(tmp_path_factory.mktemp("arm"))


@pytest.fixture(scope="module")
def models(arm_file):
    """{name: (MjModel, Robot)}: the arm compiled from a file that includes another, the others from text."""
    return {"arm": (mujoco.MjModel.from_xml_path(str(arm_file)), rd.load_mjcf(arm_file)),
            **{name: (mujoco.MjModel.from_xml_string(xml), rd.load_mjcf(xml))
               for name, xml in (("quadruped", QUADRUPED), ("humanoid", HUMANOID), ("scene", SCENE),
                                 ("ball_chain", BALL_CHAIN), ("ragdoll", RAGDOLL))}}


def random_mujoco_state(m, rng):
    """(qpos, qvel) at random: joints within +-1.5 (rad or m), free and ball joints at any attitude."""
    qpos, qvel = rng.uniform(-1.5, 1.5, m.nq), rng.uniform(-2.0, 2.0, m.nv)
    J = mujoco.mjtJoint
    for j in np.flatnonzero((m.jnt_type == J.mjJNT_FREE) | (m.jnt_type == J.mjJNT_BALL)):
        a = m.jnt_qposadr[j] + (3 if m.jnt_type[j] == J.mjJNT_FREE else 0)
        qpos[a:a + 4] /= np.linalg.norm(qpos[a:a + 4])
    return qpos, qvel


def tangent_map(m, qpos, qvel):
    """T = dqvel/dv (nv, nv) and delta = dT/dt v, so that qvel = T v and qacc = T a + delta (module docstring)."""
    T, delta = np.eye(m.nv), np.zeros(m.nv)
    for j in np.flatnonzero(m.jnt_type == mujoco.mjtJoint.mjJNT_FREE):
        a, d = m.jnt_qposadr[j], m.jnt_dofadr[j]
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, qpos[a + 3:a + 7])
        R = R.reshape(3, 3)
        T[d:d + 3, d:d + 3] = R
        v_lin = R.T @ qvel[d:d + 3]
        delta[d:d + 3] = R @ np.cross(qvel[d + 3:d + 6], v_lin)      # d/dt (R v) at constant v: R (w x v)
    return T, delta


def mujoco_at(m, qpos, qvel, qfrc=None):
    """MjData after mj_forward at (qpos, qvel) with contacts, limits and frictionloss disabled (and what the model
    disables)."""
    D = mujoco.mjtDisableBit
    m.opt.disableflags |= D.mjDSBL_CONTACT | D.mjDSBL_LIMIT | D.mjDSBL_FRICTIONLOSS
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    if qfrc is not None:
        d.qfrc_applied[:] = qfrc
    mujoco.mj_forward(m, d)
    return d


def relative(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1.0)


@pytest.mark.parametrize("name", MODELS)
def test_dynamics_equal_mujoco(models, name, rng):
    """M (armature included), C v + g, -damping v and forward dynamics within 1e-10 relative of MuJoCo's."""
    m, robot = models[name]
    coordinates = rd.MujocoCoordinates(robot, m)
    worst = 0.0
    for _ in range(5):
        qpos, qvel = random_mujoco_state(m, rng)
        q, v = coordinates.to_robot(qpos, qvel)
        T, delta = tangent_map(m, qpos, qvel)
        d = mujoco_at(m, qpos, qvel)
        M_mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M_mj)
        errors = (relative(robot.mass_matrix(q), T.T @ M_mj @ T),
                  relative(robot.coriolis_matrix(q, v) @ v + robot.gravity_vector(q),
                           T.T @ (d.qfrc_bias + M_mj @ delta)),
                  relative(-robot.damping * v, T.T @ d.qfrc_passive))
        tau = rng.normal(size=robot.nv)
        f = np.linalg.solve(T.T, tau)                          # MuJoCo's force of the same power
        d = mujoco_at(m, qpos, qvel, f)
        a = robot.forward_dynamics(q, v, tau + T.T @ (d.qfrc_passive + d.qfrc_actuator))   # the arm's servo
        errors += (relative(T @ a + delta, d.qacc),)
        assert max(errors) < 1e-10, errors
        worst = max(worst, *errors)
    print(f"{name}: worst relative error {worst:.2e}")


@pytest.mark.parametrize("name", MODELS)
def test_frames_equal_mujoco(models, name, rng):
    """Every body and site of the model is a frame, placed as xpos/xmat and site_xpos/site_xmat (1e-12 m), and a
    site's Jacobian is mj_jacSite's (mapped by T)."""
    m, robot = models[name]
    coordinates = rd.MujocoCoordinates(robot, m)
    bodies = [m.body(b).name for b in range(1, m.nbody)]
    sites = [m.site(s).name for s in range(m.nsite)]
    assert set(bodies + sites) <= set(robot.frame_names)
    for _ in range(3):
        qpos, qvel = random_mujoco_state(m, rng)
        q, _ = coordinates.to_robot(qpos, qvel)
        d = mujoco_at(m, qpos, qvel)
        for names, xpos, xmat in ((bodies, d.xpos[1:], d.xmat[1:]), (sites, d.site_xpos, d.site_xmat)):
            for frame, p, R in zip(names, xpos, xmat):
                T_f = robot.frame_placement(q, frame)
                np.testing.assert_allclose(T_f[:3, 3], p, rtol=0, atol=1e-12, err_msg=frame)
                np.testing.assert_allclose(T_f[:3, :3], R.reshape(3, 3), rtol=0, atol=1e-12, err_msg=frame)
        T, _ = tangent_map(m, qpos, qvel)
        for s, frame in enumerate(sites):
            jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
            mujoco.mj_jacSite(m, d, jacp, jacr, s)
            J = robot.frame_jacobian(q, frame, reference="local_world_aligned")
            np.testing.assert_allclose(J, np.vstack([jacp, jacr]) @ T, rtol=0, atol=1e-12, err_msg=frame)


@pytest.mark.parametrize("name", MODELS)
def test_coordinates_map_both_ways(models, name, rng):
    """to_mujoco inverts to_robot; integrating v for a short dt in ours is mj_integratePos of qvel in MuJoCo's (so
    the free joint's velocity convention is MuJoCo's), to first order: MuJoCo moves a free body's origin along a
    line, robot.integrate along a screw, apart by |w| |v| dt^2 / 2 (< 1e-11 here); forces keep their power."""
    m, robot = models[name]
    coordinates = rd.MujocoCoordinates(robot, m)
    qpos, qvel = random_mujoco_state(m, rng)
    q, v = coordinates.to_robot(qpos, qvel)
    for mine, theirs in zip(coordinates.to_mujoco(q, v), (qpos, qvel)):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-15)
    moved = qpos.copy()
    mujoco.mj_integratePos(m, moved, qvel, 1e-6)
    np.testing.assert_allclose(coordinates.to_mujoco(robot.integrate(q, v, 1e-6), v)[0], moved, rtol=0, atol=1e-11)
    tau = rng.normal(size=(4, robot.nv))
    force = coordinates.force_to_mujoco(q, tau)
    np.testing.assert_allclose(force @ qvel, tau @ v, rtol=1e-13)
    np.testing.assert_allclose(coordinates.force_from_mujoco(q, force), tau, rtol=0, atol=1e-14)
    qs, vs = coordinates.to_robot(np.stack([qpos, qpos]), np.stack([qvel, 2 * qvel]))   # batches
    np.testing.assert_allclose(vs[1], 2 * v, rtol=0, atol=1e-14)


@pytest.mark.parametrize("name", ["arm", "quadruped", "humanoid", "ragdoll"])
def test_computed_torque_closes_the_loop_in_mujoco(models, name):
    """ComputedTorque on the converted robot, fed from MjData through MujocoCoordinates and applied through
    qfrc_applied (the MJCF's actuators, contacts and frictionloss disabled), drives MuJoCo's own simulation to a
    set point 0.3 away in every coordinate (the quadruped's free base too) to 1e-7 in 3 s (a 1 % error in g alone
    would leave ~1e-3): our model is MuJoCo's."""
    m, robot = copy.deepcopy(models[name][0]), models[name][1]
    D = mujoco.mjtDisableBit
    m.opt.disableflags |= D.mjDSBL_CONTACT | D.mjDSBL_FRICTIONLOSS | D.mjDSBL_ACTUATION
    d = mujoco.MjData(m)
    coordinates = rd.MujocoCoordinates(robot, m)
    controller = ComputedTorque(robot, K_p=100.0, K_d=20.0)
    q_d = robot.integrate(coordinates.to_robot(d.qpos, d.qvel)[0], np.full(robot.nv, 0.3))
    zero = np.zeros(robot.nv)
    for _ in range(1500):
        q, v = coordinates.to_robot(d.qpos, d.qvel)
        d.qfrc_applied[:] = coordinates.force_to_mujoco(q, controller.torque(q, v, q_d, zero, zero))
        mujoco.mj_step(m, d)
    q, v = coordinates.to_robot(d.qpos, d.qvel)
    assert np.abs(robot.difference(q, q_d)).max() < 1e-7 and np.abs(v).max() < 1e-6


def test_what_the_conversion_takes(models):
    """The free joint carrying every body is the floating base (a static body beside it does not matter); other
    free joints are joints of the tree; joint names, drives (joint and actuator armature and damping, gear^2) and
    gravity are the model's."""
    arm_m, arm = models["arm"]
    assert not arm.floating_base and arm.joint_names == ["j1", "j2", "j3", "j3s", "j3r", "j4"]
    np.testing.assert_array_equal(arm.gravity, [0.3, -0.2, -9.7])
    np.testing.assert_allclose(arm.armature, [0.05 + 25 * 0.02, 0.05, 0.05, 0.05, 0.05, 0.05])
    np.testing.assert_allclose(arm.damping, [0.3 + 25 * 0.1, 0.5, 0.5, 0.7, 0.3, 0.5])
    np.testing.assert_allclose(arm.friction, np.full(6, 0.2))
    ellipsoid, wedge = 800 * 4 / 3 * np.pi * 0.03 * 0.04 * 0.05, 2000 * 0.1 * 0.08 * 0.06 / 6    # density x volume
    link1b = arm.model.pi[arm.body_names.index("link1b"), 0]      # MuJoCo holds mesh vertices in float32: 1e-7
    np.testing.assert_allclose(link1b, ellipsoid + wedge, rtol=1e-7)
    quadruped = models["quadruped"][1]
    assert quadruped.floating_base and quadruped.root_link == "trunk" and (quadruped.nq, quadruped.nv) == (19, 18)
    m = models["quadruped"][0]
    np.testing.assert_allclose(quadruped.total_mass, m.body_subtreemass[m.body("trunk").id], rtol=1e-14)
    scene = models["scene"][1]
    assert not scene.floating_base and scene.joint_names == ["box_joint", "a1", "a2", "ball_joint"]


def test_load_by_extension(arm_file, tmp_path, models):
    """rd.load reads .xml and .mjcf as MJCF, .urdf as URDF, and XML text by its root element."""
    arm = models["arm"][1]
    for source in (arm_file, write_arm(tmp_path, "arm.mjcf")):
        np.testing.assert_array_equal(rd.load(source).parameters, arm.parameters)
    assert rd.load(QUADRUPED).floating_base
    urdf = tmp_path / "one.urdf"
    urdf.write_text('<robot name="one"><link name="a"/><link name="b"><inertial><mass value="1"/><inertia ixx="1" '
                    'iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j" type="revolute">'
                    '<parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint></robot>')
    assert rd.load(urdf).joint_names == ["j"] and rd.load(urdf.read_text()).joint_names == ["j"]
    with pytest.raises(ValueError, match="ends in"):
        rd.load(tmp_path / "arm.txt")


def test_cli_reads_mjcf(arm_file):
    out = io.StringIO()
    assert cli(["inspect", str(arm_file)], out=out) == 0
    assert "robot 'arm': 6 moving bodies, nq = 6, nv = 6, fixed base" in out.getvalue()
    out = io.StringIO()
    assert cli(["compute", str(arm_file), "--json", "--gravity", "0", "0", "0"], out=out) == 0
    assert not np.any(json.loads(out.getvalue())["g"])
    assert cli(["inspect", str(arm_file), "--floating-base"], out=io.StringIO()) == 2


@pytest.mark.parametrize("element, message", [
    ('<body><joint name="x"/><geom size="0.1"/></body></worldbody><tendon><fixed name="belt" armature="0.1">'
     '<joint joint="x" coef="2"/></fixed></tendon><worldbody>', "tendons 'belt' have armature"),
    ('<body name="hand"><joint/><geom size="0.1"/><site name="hand"/><site name="hand_site"/></body>',
     "two frames named 'hand_site'"),
    ('<body><joint name="x"/><geom size="0.1"/><body><joint name="y"/><geom size="0.1"/><body><joint name="z"/>'
     '<geom size="0.1"/></body></body></body></worldbody><equality><joint joint1="z" joint2="y"/>'
     '<joint joint1="y" joint2="x"/></equality><worldbody>', "'z' is coupled to joint 'y', which is itself coupled"),
])
@pytest.mark.filterwarnings("ignore::robot_dynamics.MJCFWarning")
def test_what_cannot_be_represented_is_an_error(element, message):
    """A tendon's armature (an inertia we cannot hold); a site named as a body whose name is taken twice (frames share one namespace); with
    mimic=True, a chain of couplings."""
    with pytest.raises(rd.MJCFError, match=message):
        rd.load_mjcf(f"<mujoco><worldbody>{element}</worldbody></mujoco>", mimic=True)


def test_what_is_left_out_is_a_warning_naming_it():
    xml = """<mujoco model="left_out"><worldbody>
      <body name="b1"><joint name="h1" stiffness="3"/><geom size="0.1"/><site name="s1"/><site name="b1"/>
        <body name="b2" pos="0 0 1" gravcomp="1"><joint name="h2"/><geom size="0.1"/><site name="s2"/></body></body>
      </worldbody>
      <tendon><spatial name="cable"><site site="s1"/><site site="s2"/></spatial></tendon>
      <equality><joint name="coupling" joint1="h1" joint2="h2"/></equality>
      <actuator><general name="filtered" joint="h1" dyntype="filter" dynprm="0.1"/></actuator>
    </mujoco>"""
    with pytest.warns(rd.MJCFWarning) as caught:
        rd.load_mjcf(xml)
    text = " ".join(str(w.message) for w in caught)
    for name in ("'cable'", "'coupling'", "'filtered'", "'h1'", "'b2'", "'b1_site'"):
        assert name in text


def test_unreadable_mjcf_is_an_error(tmp_path):
    with pytest.raises(rd.MJCFError, match="MJCF text"):
        rd.load_mjcf("<mujoco><worldbody><body><geom type='nonsense'/></body></worldbody></mujoco>")
    with pytest.raises(rd.MJCFError, match="missing.xml"):
        rd.load_mjcf(tmp_path / "missing.xml")


# a gripper: two fingers coupled by an equality (finger_b = 0.01 - 0.7 finger_a about their refs), a wrist between
GRIPPER = """<mujoco model="gripper">
  <worldbody>
    <body name="palm" pos="0 0 0.5">
      <joint name="wrist" axis="0 0 1" armature="0.02"/>
      <geom type="box" size="0.04 0.02 0.02" mass="0.3"/>
      <body name="finger_a" pos="0.03 0 -0.02">
        <joint name="a" type="slide" axis="1 0 0" ref="0.01" armature="0.3" damping="2" frictionloss="0.5"/>
        <geom type="box" size="0.005 0.01 0.03" pos="0 0 -0.03" mass="0.05"/>
      </body>
      <body name="finger_b" pos="-0.03 0 -0.02" euler="0 0 180">
        <joint name="b" type="slide" axis="1 0 0" ref="-0.02" armature="0.1" damping="1" frictionloss="0.2"/>
        <geom type="box" size="0.005 0.01 0.03" pos="0 0 -0.03" mass="0.07"/>
        <site name="tip_b" pos="0 0 -0.06"/>
      </body>
    </body>
  </worldbody>
  <equality><joint name="coupling" joint1="b" joint2="a" polycoef="0.01 -0.7 0 0 0"/></equality>
</mujoco>
"""


def test_joint_coupling_is_a_mimic(rng):
    """mimic=True: finger b follows finger a.  At our states, MuJoCo's equality holds (its residual efc_pos is
    zero), and our M, C v + g and damping are MuJoCo's reduced by G = dqvel/dv (c1 = -0.7 in a's column): G^T M G,
    G^T qfrc_bias, G^T qfrc_passive; b's drives are reflected onto a's coordinate (c1^2, |c1|)."""
    m = mujoco.MjModel.from_xml_string(GRIPPER)
    with pytest.warns(rd.MJCFWarning, match="'coupling'"):
        assert rd.load_mjcf(GRIPPER).nv == 3
    robot = rd.load_mjcf(GRIPPER, mimic=True)
    assert robot.joint_names == ["wrist", "a"]
    np.testing.assert_allclose(robot.armature, [0.02, 0.3 + 0.49 * 0.1])
    np.testing.assert_allclose(robot.damping, [0.0, 2 + 0.49 * 1])
    np.testing.assert_allclose(robot.friction, [0.0, 0.5 + 0.7 * 0.2])
    coordinates = rd.MujocoCoordinates(robot, m)
    G = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, -0.7]])
    for _ in range(3):
        q, v = rng.uniform(-0.05, 0.05, 2), rng.normal(size=2)
        qpos, qvel = coordinates.to_mujoco(q, v)
        np.testing.assert_allclose(qvel, G @ v, rtol=0, atol=1e-15)
        d = mujoco_at(m, qpos, qvel)
        equality = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        assert equality.sum() == 1 and abs(d.efc_pos[equality][0]) < 1e-15
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        assert relative(robot.mass_matrix(q), G.T @ M @ G) < 1e-13
        assert relative(robot.coriolis_matrix(q, v) @ v + robot.gravity_vector(q), G.T @ d.qfrc_bias) < 1e-13
        assert relative(-robot.damping * v, G.T @ d.qfrc_passive) < 1e-13
        np.testing.assert_allclose(robot.frame_placement(q, "tip_b")[:3, 3], d.site_xpos[0], rtol=0, atol=1e-12)
        tau = rng.normal(size=2)
        f = coordinates.force_to_mujoco(q, tau)
        np.testing.assert_allclose(f @ qvel, tau @ v, rtol=1e-13)
        np.testing.assert_allclose(coordinates.force_from_mujoco(q, f), tau, rtol=0, atol=1e-15)
        np.testing.assert_allclose(coordinates.force_from_mujoco(q, d.qfrc_bias), G.T @ d.qfrc_bias, atol=1e-15)


@pytest.mark.parametrize("name", ["humanoid", "torso_two_arm"])
def test_mujoco_compile_of_a_urdf_is_the_urdf_robot(name, rng):
    """Two routes from one URDF -- load_urdf (checked against Pinocchio) and MuJoCo's own compile of it converted by
    from_mujoco -- give the same joints, drives and M, g (1e-13 relative)."""
    text = open(bundled_urdf(name)).read()
    head = text.index(">", text.index("<robot")) + 1
    extension = '<mujoco><compiler discardvisual="true" fusestatic="false"/></mujoco>'
    urdf = rd.load_urdf(text)
    converted = rd.from_mujoco(mujoco.MjModel.from_xml_string(text[:head] + extension + text[head:]),
                               gravity=urdf.gravity)
    assert converted.joint_names == urdf.joint_names and converted.nbodies == urdf.nbodies
    for field in ("armature", "damping", "friction"):
        np.testing.assert_array_equal(getattr(converted, field), getattr(urdf, field))
    for _ in range(3):
        q, _ = urdf.random_state(rng)
        assert relative(converted.mass_matrix(q), urdf.mass_matrix(q)) < 1e-13
        assert relative(converted.gravity_vector(q), urdf.gravity_vector(q)) < 1e-13


LIMITED = """<mujoco><compiler angle="degree"/>
  <worldbody><body name="base"><freejoint name="root"/><geom size="0.1"/>
    <body name="a"><joint name="hinge" axis="0 0 1" range="-90 45" actuatorfrcrange="-5 3"/><geom size="0.05"/>
      <body name="b" pos="0 0 0.2"><joint name="slide" type="slide" axis="1 0 0" range="-0.1 0.2"/>
        <geom size="0.05"/>
        <body name="c" pos="0 0 0.2"><joint name="free_hinge" axis="0 1 0" limited="false" range="-10 10"/>
          <geom size="0.05"/>
          <body name="d" pos="0 0 0.2"><joint name="shoulder" type="ball" range="0 60"/><geom size="0.05"/>
          </body></body></body></body></body></worldbody></mujoco>"""


def test_joint_limits_of_an_mjcf(tmp_path):
    """rd.joint_limits reads an MJCF's limits as it reads a URDF's (the free joint's 6 coordinates left out): the
    numbers as written in the file, degrees turned to radians by hand here; a joint without limits and a ball
    joint's three coordinates are unbounded, an MJCF has no velocity limit, the effort is the smaller magnitude
    of actuatorfrcrange; the same from the path, the text and the compiled model."""
    path = tmp_path / "limited.xml"
    path.write_text(LIMITED)
    robot = rd.load(path)
    assert robot.floating_base and robot.nv == 6 + 3 + 3
    inf = np.inf
    expected = ([-np.pi / 2, -0.1, -inf, -inf, -inf, -inf], [np.pi / 4, 0.2, inf, inf, inf, inf], [inf] * 6,
                [3.0, inf, inf, inf, inf, inf])
    import mujoco
    for source in (path, LIMITED, mujoco.MjModel.from_xml_string(LIMITED)):
        limits = rd.joint_limits(source, robot)
        for got, want in zip(limits, expected):
            np.testing.assert_allclose(got, want, rtol=1e-15)
    other = rd.load_mjcf(LIMITED.replace('name="slide"', 'name="renamed"'))
    with pytest.raises(rd.MJCFError, match="joint 'renamed' of the robot is not in the MJCF"):
        rd.joint_limits(path, other)


def test_excite_reads_an_mjcf_and_stays_within_its_limits(tmp_path, capsys):
    """robot-dynamics excite takes an MJCF as it takes a URDF: the trajectory it writes stays within the MJCF's
    position limits (checked here on the saved trajectory's samples, the limits as written in the file);
    --write-urdf of identify-payload refuses an MJCF by name rather than writing a URDF it cannot."""
    from robot_dynamics.identification.excitation import FourierTrajectory

    path = tmp_path / "arm.xml"
    path.write_text(LIMITED.replace('<freejoint name="root"/>', "").replace(
        '<joint name="shoulder" type="ball" range="0 60"/>', '<joint name="wrist" axis="1 0 0" range="-30 30"/>'))
    trajectory = tmp_path / "excite.npz"
    assert cli(["excite", str(path), "--out", str(trajectory), "--duration", "2", "--harmonics", "2",
                "--maxiter", "5"], out=io.StringIO()) == 0
    q = FourierTrajectory.load(trajectory).coordinates(np.linspace(0.0, 2.0, 201))[0]
    lower = np.array([-np.pi / 2, -0.1, -np.inf, -np.pi / 6])
    upper = np.array([np.pi / 4, 0.2, np.inf, np.pi / 6])
    assert np.all(q >= lower - 1e-9) and np.all(q <= upper + 1e-9)
    log = tmp_path / "log.csv"
    log.write_text("t\n0\n")
    capsys.readouterr()
    code = cli(["identify-payload", str(path), str(log), "--body", "d", "--write-urdf", str(tmp_path / "x.urdf")],
               out=io.StringIO())
    assert code != 0 and "is MJCF" in capsys.readouterr().err
