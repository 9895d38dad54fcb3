"""Robots and fixtures shared by the test folders.

The folders sort the tests by concern: kernels/ (the mathematics of each algorithm, against Pinocchio and
identities), api/ (what a caller of Robot and load_urdf sees: inputs, errors, out=, memory), machinery/ (compiled
and C calls, the batch loop, start-up, packaging, lint, the package's shape), control/ (controllers, trajectories,
the simulator, MuJoCo, the demo), identification/ and ros/.  The helper modules they share (oracle, random_urdf,
mujoco_twin, ros_helpers, reliability_helpers) stay in test/, which setup.cfg puts on the path.

Module-scoped robots are loaded once per test module, as each module's own fixture did: no module sees what
another did to its robot.
"""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.bundled import bundled_urdf


@pytest.fixture(scope="module")
def quadruped():
    """The bundled quadruped with a floating base (nq = 19, nv = 18)."""
    return rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)


@pytest.fixture
def rng():
    """A generator seeded with 7, new for each test."""
    return np.random.default_rng(7)
