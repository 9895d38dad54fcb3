"""Issue 13 (reliability), item 6: one compiled kernel set for every nv (robots with nv <= 1 used to compile
a second one).
"""
import numpy as np

import robot_dynamics as rd
from reliability_helpers import ROOT, ROWS, SMALL, arguments, call, link, robot_xml
from robot_dynamics.algorithms.registry import CHECKED
from robot_dynamics.calls.batch import batch_loop
from robot_dynamics.calls.generated import _fast_kernels
from robot_dynamics.calls.native import FAST_CALLS


def test_one_kernel_set_for_every_nv():
    """Robots with nv <= 1 used to compile a second set of kernels (~4 s even with a warm cache): every kernel,
    its checks for the methods written in Python (which strided views reach; with the extension its C entry point,
    never the checks) and the batch loop hold one compiled signature whatever the robot (nv = 0, 1, 6, 7)."""
    robots = [rd.load_urdf(robot_xml(link("a"))), rd.load_urdf(SMALL), rd.load_urdf(robot_xml(link("a")),
                                                                                      floating_base=True),
              rd.load_urdf(ROOT / "urdf" / "arm7.urdf")]
    assert [r.nv for r in robots] == [0, 1, 6, 7]
    for robot in robots:
        q, v = robot.random_state(0)
        for name in ("mass_matrix", "gravity_derivative", "_dynamics_with_regressor", "_solve_mass_matrix"):
            call(robot, name, arguments(robot, name, q, v))
            call(robot, name, [np.stack([x, x]) for x in arguments(robot, name, q, v)])
            call(robot, name, [np.stack([x, x], axis=-1)[..., 0] for x in arguments(robot, name, q, v)])
    for name in ("mass_matrix", "gravity_derivative", "_dynamics_with_regressor", "_solve_mass_matrix"):
        for dispatcher in (ROWS[name].kernel, batch_loop):
            assert len(dispatcher.signatures) == 1, (name, dispatcher.signatures)
        if FAST_CALLS:            # the strided views ran the C entry point (one per row): the checks never compiled
            assert name in _fast_kernels and not CHECKED[name].signatures, (name, CHECKED[name].signatures)
        else:
            assert len(CHECKED[name].signatures) == 1, (name, CHECKED[name].signatures)
