"""Helpers of the reliability tests (issue 13; test/api and test/machinery): small URDFs written inline, and
every quantity of the registry called through the public method that computes it."""
from pathlib import Path

import numpy as np

import robot_dynamics as rd

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


# the rows whose results a public method returns as a dataclass: (the method, its keywords, the result's fields)
RESULT_ROWS = {"_dynamics": ("dynamics", ("M", "C", "g", "com", "J_com")),
               "_dynamics_with_regressor": ("dynamics", ("M", "C", "g", "com", "J_com", "Y")),
               "_state_derivatives": ("state_derivatives", ("dM_dq", "dC_dq", "dC_dv", "dg_dq", "dJcom_dq")),
               "_time_derivatives": ("time_derivatives", ("M_dot", "C_dot", "g_dot", "J_com_dot")),
               "_time_derivatives_with_regressor": ("time_derivatives",
                                                    ("M_dot", "C_dot", "g_dot", "J_com_dot", "Y_dot")),
               "_innovations": ("innovations", ("L", "D", "L_inv")),
               "_diagonalized": ("diagonalized", ("nu", "epsilon", "coriolis")),
               "_global_factorization": ("global_factorization", ("S", "G", "Gamma", "J", "ad_Gamma", "C_bar"))}
RESULT_TYPES = {"dynamics": rd.Dynamics, "state_derivatives": rd.StateDerivatives,
                "time_derivatives": rd.TimeDerivatives, "innovations": rd.Innovations,
                "diagonalized": rd.Diagonalized, "global_factorization": rd.GlobalFactorization}


def public(robot, name, args, outs=None):
    """The public method that computes registry row `name`, called on args (the row's inputs but a constant
    one), with out= in the form it takes (an array, a tuple, a dataclass of outs seen in its shapes) when outs
    are given; its results as a list of arrays in the row's output order (a Ploen operator as its (6 nb)-square
    matrix)."""
    row = ROWS[name]
    keywords = {} if outs is None else {"out": outs[0] if len(outs) == 1 else tuple(outs)}
    if name in RESULT_ROWS:
        method, fields = RESULT_ROWS[name]
        if outs is not None:
            batch = outs[0].shape[:len(outs[0].shape) - len(row.shapes[0])]
            nb = robot.nbodies
            seen = [x.reshape(batch + ((6 * nb, x.shape[-1]) if x.ndim - len(batch) == 3 else (6 * nb, 6 * nb)))
                    if method == "global_factorization" else x for x in outs]
            filled = dict(zip(fields, seen))
            result_type = RESULT_TYPES[method]
            keywords = {"out": result_type(**{f: filled.get(f) for f in result_type.__dataclass_fields__})}
        result = getattr(robot, method)(*args, **keywords)
        return [np.asarray(getattr(result, f)) for f in fields]
    if name == "_christoffel_coriolis_matrix":
        return [robot.coriolis_matrix(*args, kind="christoffel", **keywords)]
    if row.matrices:
        return [robot.solve_mass_matrix(*args, **keywords)]
    if "contacts" in row.inputs:                      # constrained_dynamics(q, v, tau, contacts) -> (a, forces)
        return [np.asarray(x) for x in robot.constrained_dynamics(*args, **keywords)]
    if "frame" in row.inputs:                         # frame_placement(q, frame, reference), frame_velocity, ...
        return [np.asarray(getattr(robot, name[1:])(*args, **frame_reference(name), **keywords))]
    result = getattr(robot, name)(*args, **keywords)
    return [np.asarray(x) for x in result] if isinstance(result, tuple) else [np.asarray(result)]


def call(robot, name, args):
    """The quantity of registry row `name` at one state or a batch (args in the row's input order), as a list of
    arrays, through the public method that computes it."""
    return public(robot, name, args)


def arguments(robot, name, q, v):
    """q for the row's q inputs, v for the others (a (nv, 2) matrix for solve_mass_matrix's x), the last link's
    name for a frame, a point contact there for contacts."""
    row = ROWS[name]
    return [robot.frame_names[-1] if x == "frame" else robot.frame_names[-1:] if x == "contacts" else
            q if x.startswith("q") else
            np.stack([v, -v], axis=-1) if x in row.matrices else v for x in row.inputs]


# a robot of two links and one revolute joint
SMALL = robot_xml(link("a"), link("b"), joint("j", "a", "b"))
