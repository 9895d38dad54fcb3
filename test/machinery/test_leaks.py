"""Issue 13 (reliability), item 4: no leak, no reference cycle.  Loading leaves no memory behind, and a
discarded robot is freed by reference counting alone, whatever its kernels ran.
"""
import gc
import os
import weakref
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from oracle import erd_path
from reliability_helpers import joint, link, robot_xml


def resident_mb():
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_loading_leaves_no_memory_behind():
    """Each load used to leave 10-19 kB behind (kernel set-up in calls/): 2,000 loads would keep 20-38 MB.
    benchmarks/bench_loading.py measures 10,000."""
    xml = robot_xml(link("a"), link("b"), link("c"), joint("j1", "a", "b"), joint("j2", "b", "c", "prismatic"))
    for _ in range(300):
        rd.load_urdf(xml)
    gc.collect()
    before = resident_mb()
    for _ in range(2000):
        rd.load_urdf(xml)
    gc.collect()
    assert resident_mb() - before < 2.0


@pytest.mark.parametrize("options", [{}, {"mimic": True}, {"floating_base": True}], ids=str)
def test_a_discarded_robot_is_freed_by_reference_counting(options):
    """No reference cycle: with the garbage collector off, the last reference going frees the robot -- after its
    kernels ran for one state and for a batch (per-thread workspaces), after parameter_derivatives (a robot
    without gravity inside), and for a robot with coupled mimic joints (which used to store bound methods)."""
    path = erd_path("panda.urdf")
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        robot = rd.load_urdf(path, **options)
        q, v = robot.random_state(0)
        robot.dynamics(q, v, v, v)
        robot.mass_matrix(np.stack([q, q]))
        robot.forward_dynamics(q, v, v)
        robot.parameter_derivatives(q, v)
        other = robot.with_parameters(robot.parameters)
        refs = [weakref.ref(robot), weakref.ref(other)]
        del robot, other
        assert [r() for r in refs] == [None, None]
    finally:
        if was_enabled:
            gc.enable()
