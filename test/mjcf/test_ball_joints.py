"""Ball joints against Pinocchio's spherical joints (a second implementation of the same convention: q = [qx, qy,
qz, qw], v the angular velocity in the child frame).

Pinocchio reads no ball joint from URDF, so its model is built here joint by joint from ours: the same tree, joint
placements (R_tree, p_tree) and body parameters, a JointModelSpherical for each ball joint, a free flyer for a free
one and an unaligned revolute or prismatic joint for the others.  The conversion from MJCF is MuJoCo's to judge
(test_mjcf.py); this file judges the kernels and the configuration space on the ball joints they produce.
"""
import numpy as np
import pinocchio as pin
import pytest

from oracle import relative_error
from random_mjcf import random_ball_tree
import robot_dynamics as rd
from robot_dynamics.model import BALL, FREE, PRISMATIC, REVOLUTE

pytest.importorskip("mujoco")
TOL = 1e-11


def pinocchio_model(robot):
    """Pinocchio's model of the robot's tree, body by body (module docstring)."""
    model, ids = pin.Model(), {-1: 0}
    for k, b in enumerate(robot.model.bodies):
        joint = {REVOLUTE: lambda: pin.JointModelRevoluteUnaligned(*b["axis"]),
                 PRISMATIC: lambda: pin.JointModelPrismaticUnaligned(*b["axis"]),
                 BALL: pin.JointModelSpherical, FREE: pin.JointModelFreeFlyer}[int(b["jtype"])]()
        ids[k] = model.addJoint(ids[int(b["parent"])], joint, pin.SE3(b["R_tree"], b["p_tree"]), f"joint{k}")
        m, h, (xx, yy, zz, xy, xz, yz) = b["pi"][0], b["pi"][1:4], b["pi"][4:]
        if m > 0:                                     # a link between two joints of one MJCF body has none (h / m)
            inertia = pin.Inertia.FromDynamicParameters(np.array([m, *h, xx, xy, yy, xz, yz, zz]))
            model.appendBodyToJoint(ids[k], inertia, pin.SE3.Identity())
    model.gravity.linear = robot.model.gravity
    return model


@pytest.mark.parametrize("seed, floating_base", [(100, False), (101, True)], ids=["chain-fixed", "tree-floating"])
def test_ball_joints_equal_pinocchio_spherical(seed, floating_base):
    robot = rd.load_mjcf(random_ball_tree(seed, floating_base=floating_base))
    assert sum(j.type == "ball" for j in robot.model.joints) >= 3
    model = pinocchio_model(robot)
    data = model.createData()
    assert (model.nq, model.nv) == (robot.nq, robot.nv)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q, v = robot.random_state(rng)
        a, tau = rng.normal(size=(2, robot.nv))
        M = pin.crba(model, data, q)
        assert relative_error(robot.mass_matrix(q), np.triu(M) + np.triu(M, 1).T) < TOL
        assert relative_error(robot.inverse_dynamics(q, v, a), pin.rnea(model, data, q, v, a)) < TOL
        assert relative_error(robot.forward_dynamics(q, v, tau), pin.aba(model, data, q, v, tau)) < TOL
        assert relative_error(robot.coriolis_matrix(q, v, kind="christoffel"),
                              pin.computeCoriolisMatrix(model, data, q, v)) < TOL
        dq, dv, _ = robot.inverse_dynamics_derivatives(q, v, a)
        pin.computeRNEADerivatives(model, data, q, v, a)
        assert relative_error(dq, data.dtau_dq) < TOL and relative_error(dv, data.dtau_dv) < TOL
        fq, fv, _ = robot.forward_dynamics_derivatives(q, v, tau)
        pin.computeABADerivatives(model, data, q, v, tau)
        assert relative_error(fq, data.ddq_dq) < 1e-9 and relative_error(fv, data.ddq_dv) < 1e-9
        moved = robot.integrate(q, v, 0.7)
        np.testing.assert_allclose(moved, pin.integrate(model, q, 0.7 * v), rtol=0, atol=1e-14)
        np.testing.assert_allclose(robot.difference(q, moved), pin.difference(model, q, moved), rtol=0, atol=1e-12)
        Jq, Jv = robot.integrate_jacobians(v)
        assert relative_error(Jq, pin.dIntegrate(model, q, v, pin.ARG0)) < TOL
        assert relative_error(Jv, pin.dIntegrate(model, q, v, pin.ARG1)) < TOL


def test_ball_quaternion_errors_name_the_slice():
    robot = rd.load_mjcf(random_ball_tree(100))
    q = robot.neutral()
    q[4:8] = 0.0                                              # the second ball joint's quaternion
    with pytest.raises(ValueError, match=r"q\[4:8\] is a zero quaternion"):
        robot.mass_matrix(q)
    with pytest.raises(ValueError, match=r"q1\[4:8\] is a zero"):
        robot.difference(robot.neutral(), q)
