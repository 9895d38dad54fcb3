"""Helpers of the reliability tests (issue 13; test/api and test/machinery): small URDFs written inline, and
every quantity of the registry called through the public method that computes it."""
from pathlib import Path

import numpy as np

from robot_dynamics.algorithms.registry import QUANTITIES

ROOT = Path(__file__).resolve().parent.parent                    # the repository
ROWS = {row.name: row for row in QUANTITIES}


def frame_reference(name):
    """The reference a frame row is called with (frame_placement takes none); on the last link of frame_names."""
    return {} if name == "_frame_placement" else {"reference": "local_world_aligned"}


def link(name, mass="1", xyz="0 0 0", ixx="0.1"):
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def joint(name, parent, child, kind="revolute", xyz="0 0 0.1", extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="0 1 0"/>{extra}</joint>')


def robot_xml(*parts):
    return '<robot name="r">' + "".join(parts) + "</robot>"


def call(robot, name, args):
    """The quantity of registry row `name` at one state or a batch (args in the row's input order), as a list of
    arrays, through the public method that computes it."""
    row = ROWS[name]
    if name.startswith("_dynamics"):
        d = robot.dynamics(*args)
        return [d.M, d.C, d.g, d.com, d.J_com] + ([d.Y] if d.Y is not None else [])
    if row.matrices:
        return [robot.solve_mass_matrix(*args)]
    if "contacts" in row.inputs:                      # constrained_dynamics(q, v, tau, contacts) -> (a, forces)
        return [np.asarray(x) for x in robot.constrained_dynamics(*args)]
    if "frame" in row.inputs:                         # frame_placement(q, frame, reference), frame_velocity, ...
        return [np.asarray(getattr(robot, name[1:])(*args, **frame_reference(name)))]
    result = getattr(robot, name)(*args)
    return [np.asarray(x) for x in result] if isinstance(result, tuple) else [np.asarray(result)]


def arguments(robot, name, q, v):
    """q for the row's q inputs, v for the others (a (nv, 2) matrix for solve_mass_matrix's x), the last link's
    name for a frame, a point contact there for contacts."""
    row = ROWS[name]
    return [robot.frame_names[-1] if x == "frame" else robot.frame_names[-1:] if x == "contacts" else
            q if x.startswith("q") else
            np.stack([v, -v], axis=-1) if x in row.matrices else v for x in row.inputs]


# a robot of two links and one revolute joint
SMALL = robot_xml(link("a"), link("b"), joint("j", "a", "b"))
