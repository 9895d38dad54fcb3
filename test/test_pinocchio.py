"""Every quantity against Pinocchio on real robots of example-robot-data, fixed and floating base, to 1e-9 relative.

C is not unique (paper 000): Pinocchio's and ours may differ, so C is checked through what is unique --
C v + g against rnea(q, v, 0) and C + C^T (= Mdot) against Pinocchio's C + C^T -- and the classic regressor
Y(q, v, v, a) against Pinocchio's joint torque regressor, which is unique because tau is linear in pi.
"""
import functools

import numpy as np
import pytest

import robot_dynamics as rd
from oracle import PinocchioTwin, erd_path, relative_error

pytest.importorskip("pinocchio")

ROBOTS = [
    "panda.urdf",                       # 7 revolute + 2 prismatic fingers (one a mimic joint)
    "ur5_robot.urdf",
    "solo12.urdf",
    "talos_full_v2.urdf",               # 50 DoF with a floating base; mimic gripper joints
    "double_pendulum_continuous.urdf",  # continuous joints
    "tiago_pro.urdf",                   # continuous wheels, prismatic torso, mimic gripper
    "pr2.urdf",                         # continuous, prismatic, mimic
    "kinova.urdf",                      # continuous
]
TOL = 1e-9
STATES = 3


@functools.lru_cache(maxsize=None)
def pair(name, floating_base, mimic=False):
    path = erd_path(name)
    robot = rd.load_urdf(path, floating_base=floating_base, mimic=mimic)
    return robot, PinocchioTwin(robot, path, floating_base=floating_base, mimic=mimic)


def states(robot, seed):
    rng = np.random.default_rng(seed)
    for _ in range(STATES):
        q, v = robot.random_state(rng)
        yield q, v, rng.normal(size=robot.nv)


CASES = [(name, fb) for name in ROBOTS for fb in (False, True)]
IDS = [f"{name[:-5]}-{'floating' if fb else 'fixed'}" for name, fb in CASES]


@pytest.mark.parametrize("name, floating_base", CASES, ids=IDS)
def test_against_pinocchio(name, floating_base):
    robot, twin = pair(name, floating_base)
    assert robot.nv == twin.model.nv
    worst = {}

    def check(what, ours, theirs):
        worst[what] = max(worst.get(what, 0.0), relative_error(ours, theirs))

    for q, v, a in states(robot, seed=len(name)):
        d = robot.dynamics(q, v, v_ref=v, a_ref=a)
        check("M", d.M, twin.mass_matrix(q))
        check("g", d.g, twin.gravity_vector(q))
        check("com", d.com, twin.com(q))
        check("J_com", d.J_com, twin.com_jacobian(q))
        check("C v + g", d.C @ v + d.g, twin.rnea(q, v, np.zeros(robot.nv)))
        C_pin = twin.coriolis_matrix(q, v)
        check("C + C^T", d.C + d.C.T, C_pin + C_pin.T)
        check("Y", d.Y, twin.regressor(q, v, a))
        check("inverse dynamics", robot.inverse_dynamics(q, v, a), twin.rnea(q, v, a))
        check("forward dynamics", robot.forward_dynamics(q, v, a), twin.aba(q, v, a))
        for what, ours in (("M", robot.mass_matrix(q)), ("g", robot.gravity_vector(q)),
                           ("com", robot.com_position(q)), ("J_com", robot.com_jacobian(q)),
                           ("Y", robot.regressor(q, v, v, a))):
            check(what + " (single method)", ours, getattr(d, what))
    bad = {k: e for k, e in worst.items() if not e <= TOL}
    assert not bad, f"relative errors above {TOL}: {bad}"
