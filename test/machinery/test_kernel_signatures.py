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
    """Robots with nv <= 1 used to compile a second set of kernels (~4 s even with a warm cache): every kernel
    and its checks for the methods written in Python (which strided views reach; with the extension its C entry
    point, which inlines the kernel, and neither of these) and the batch loop hold one compiled signature whatever
    the robot (nv = 0, 1, 6, 7)."""
    robots = [rd.load_urdf(robot_xml(link("a"))), rd.load_urdf(SMALL), rd.load_urdf(robot_xml(link("a")),
                                                                                      floating_base=True),
              rd.load_urdf(ROOT / "urdf" / "arm7.urdf")]
    assert [r.nv for r in robots] == [0, 1, 6, 7]
    names = ("mass_matrix", "gravity_derivative", "_dynamics_with_regressor", "_solve_mass_matrix")
    compiled = {name: [len(d.signatures) for d in (ROWS[name].kernel, CHECKED[name])] for name in names}
    for robot in robots:
        q, v = robot.random_state(0)
        for name in names:
            call(robot, name, arguments(robot, name, q, v))
            call(robot, name, [np.stack([x, x]) for x in arguments(robot, name, q, v)])
            call(robot, name, [np.stack([x, x], axis=-1)[..., 0] for x in arguments(robot, name, q, v)])
    assert len(batch_loop.signatures) == 1, batch_loop.signatures
    for name in names:
        counts = [len(d.signatures) for d in (ROWS[name].kernel, CHECKED[name])]
        if FAST_CALLS:
            # the strided views ran the C entry point (one per row, the kernel inlined in it): these calls compiled
            # neither the kernel nor its checks (another test may have, through the route written in Python)
            assert name in _fast_kernels, name
            assert counts == compiled[name] and max(counts) <= 1, (name, compiled[name], counts)
        else:
            assert counts == [1, 1], (name, counts)
