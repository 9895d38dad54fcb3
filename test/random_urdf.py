"""Seeded random URDF trees for identity tests: every joint type, branching, chained fixed joints, mimics.

The trees are built to exercise conventions, not to look like robots: joint origins with random rpy, non-unit
axes, inertias with off-diagonal terms and a random ``<inertial><origin rpy>``, links without ``<inertial>``.
They stay physically valid (the parser's checks pass) and load in Pinocchio (``pin.buildModelFromXML``; with
``mimic=True`` as well when `mimic` is set).
"""
from __future__ import annotations

import numpy as np

ALL_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "planar", "floating")


def random_urdf(seed: int, n_links: int = 8, joint_types=ALL_JOINT_TYPES, branching: bool = True,
                mimic: bool = False) -> str:
    """A random, physically valid URDF tree, the same for the same arguments.

    Parameters
    ----------
    seed : int
        Seed of ``numpy.random.default_rng``.
    n_links : int
        Number of links; link 0 is the root, link k >= 1 hangs from joint k.
    joint_types : sequence of str
        Types drawn uniformly for joints 1..n_links-1.
    branching : bool
        Attach each new link to a random earlier link (True) or to the previous one (a chain).
    mimic : bool
        Turn some 1-DoF joints into mimics of an earlier 1-DoF joint, with a random multiplier and offset.

    Returns
    -------
    str
        The URDF XML.

    Notes
    -----
    - Link and joint names are zero-padded (``link03``, ``joint03``), so name order is creation order: urdfdom
      sorts child joints by name, and Pinocchio then visits the tree in the same depth-first order as here.
    - A planar joint's axis is +z with a random length: Pinocchio ignores the URDF planar axis and always moves
      in the joint frame's x-y plane.
    - Continuous joints mimic only continuous joints, and revolute/prismatic only revolute/prismatic, as
      Pinocchio requires; a master is always earlier in depth-first order and never itself a mimic.
    - The root and every leaf have an inertial; some inner links (none with a floating child) have none.
    """
    rng = np.random.default_rng(seed)
    width = len(str(n_links - 1))
    link = [f"link{k:0{width}d}" for k in range(n_links)]
    joint = [f"joint{k:0{width}d}" for k in range(n_links)]

    parent, kind = [-1], [None]
    for k in range(1, n_links):
        kind.append(str(rng.choice(joint_types)))
        fixed_children = [c for c in range(1, k) if kind[c] == "fixed"]
        if not branching:
            parent.append(k - 1)
        elif kind[k] == "fixed" and fixed_children and rng.random() < 0.5:
            parent.append(int(rng.choice(fixed_children)))  # a fixed child of a fixed child
        else:
            parent.append(int(rng.integers(k)))
    children = [[c for c in range(n_links) if parent[c] == k] for k in range(n_links)]

    massless = [k > 0 and bool(children[k]) and all(kind[c] != "floating" for c in children[k]) and rng.random() < 0.3
                for k in range(n_links)]
    masters = _mimic_masters(rng, kind, children) if mimic else {}

    lines = [f'<robot name="random_{seed}">']
    for k in range(n_links):
        if massless[k]:
            lines.append(f'  <link name="{link[k]}"/>')
        else:
            lines += [f'  <link name="{link[k]}">', *_inertial(rng), "  </link>"]
    for k in range(1, n_links):
        lines += [f'  <joint name="{joint[k]}" type="{kind[k]}">',
                  f'    <parent link="{link[parent[k]]}"/>', f'    <child link="{link[k]}"/>',
                  f'    <origin xyz="{_text(rng.uniform(-0.5, 0.5, 3))}" '
                  f'rpy="{_text(rng.uniform(-np.pi, np.pi, 3))}"/>']
        length = rng.uniform(0.5, 2.0)
        if kind[k] in ("revolute", "continuous", "prismatic"):
            direction = rng.normal(size=3)
            lines.append(f'    <axis xyz="{_text(length * direction / np.linalg.norm(direction))}"/>')
        elif kind[k] == "planar":
            lines.append(f'    <axis xyz="0 0 {_text([length])}"/>')
        if kind[k] in ("revolute", "prismatic"):
            lines.append('    <limit lower="-3" upper="3" effort="100" velocity="10"/>')
        if k in masters:
            multiplier, offset = rng.choice([-1, 1]) * rng.uniform(0.5, 2.0), rng.uniform(-0.5, 0.5)
            lines.append(f'    <mimic joint="{joint[masters[k]]}" multiplier="{_text([multiplier])}" '
                         f'offset="{_text([offset])}"/>')
        lines.append("  </joint>")
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def _mimic_masters(rng, kind, children) -> dict[int, int]:
    """{mimic joint: master joint}, each master a non-mimic 1-DoF joint earlier in depth-first order."""
    compatible = {"revolute": ("revolute", "prismatic"), "prismatic": ("revolute", "prismatic"),
                  "continuous": ("continuous",)}
    order, stack = [], [0]
    while stack:  # depth first, children in creation order
        k = stack.pop()
        order.append(k)
        stack += reversed(children[k])
    masters: dict[int, int] = {}
    for position, k in enumerate(order):
        if kind[k] not in compatible:
            continue
        candidates = [m for m in order[:position] if kind[m] in compatible[kind[k]] and m not in masters]
        if candidates and rng.random() < 0.4:
            masters[k] = int(rng.choice(candidates))
    return masters


def _inertial(rng) -> list[str]:
    """<inertial> of a random solid box: mass in [0.2, 3], principal moments rotated by a random rotation Q,
    written as a full matrix under a random <origin rpy>, so that the link-frame inertia is R Q I Q^T R^T."""
    mass = rng.uniform(0.2, 3.0)
    a, b, c = rng.uniform(0.05, 0.5, 3)
    principal = mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    I = Q @ np.diag(principal) @ Q.T
    return ["    <inertial>",
            f'      <origin xyz="{_text(rng.uniform(-0.3, 0.3, 3))}" rpy="{_text(rng.uniform(-np.pi, np.pi, 3))}"/>',
            f'      <mass value="{_text([mass])}"/>',
            '      <inertia ixx="{}" ixy="{}" ixz="{}" iyy="{}" iyz="{}" izz="{}"/>'.format(
                *(_text([I[i, j]]) for i, j in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)))),
            "    </inertial>"]


def _text(values) -> str:
    """Space-separated floats at full precision (17 significant digits round-trip exactly)."""
    return " ".join(format(float(x), ".17g") for x in values)


def with_fixed_links(xml, n, mass=0.01, chain=False):
    """``xml`` (arm7) with ``n`` more links hung from its tcp by fixed joints -- side by side, or one below the
    other with ``chain`` -- : the same joints and coordinates, a longer description (and another mass matrix)."""
    links = "".join(
        f'<joint name="extra_joint{k}" type="fixed"><parent link="{"extra%d" % (k - 1) if chain and k else "tcp"}"/>'
        f'<child link="extra{k}"/><origin xyz="0 0 {0.001 if chain else 0.001 * k}"/></joint>'
        f'<link name="extra{k}"><inertial><mass value="{mass}"/><inertia ixx="1e-6" iyy="1e-6" izz="1e-6" '
        f'ixy="0" ixz="0" iyz="0"/></inertial></link>' for k in range(n))
    return xml.replace("</robot>", links + "</robot>")


def star(n):
    """A robot of ``n`` links, every one hung from the root by a revolute joint."""
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>'
                '</inertial>')
    return ('<robot name="star">' + "".join(f'<link name="l{k}">{inertial}</link>' for k in range(n))
            + "".join(f'<joint name="j{k}" type="revolute"><parent link="l0"/><child link="l{k}"/>'
                      f'<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/></joint>' for k in range(1, n)) + "</robot>")


def tree_urdf(n_links: int, shape: str = "chain") -> str:
    """A large URDF of n_links links as an exporter writes them (inertial, visual and collision geometry, joint
    limits and dynamics): link k >= 1 hangs by a revolute joint from link k-1 ("chain") or from link 0 ("star").
    For load time and memory against size (test_scaling, benchmarks/bench_loading.py)."""
    if shape not in ("chain", "star"):
        raise ValueError(f"shape must be 'chain' or 'star', got {shape!r}")
    inertial = ('<inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="1.25"/>'
                '<inertia ixx="0.0125" ixy="0" ixz="0" iyy="0.0125" iyz="0" izz="0.002"/></inertial>')
    geometry = '<origin xyz="0 0 0.05" rpy="0 0 0"/><geometry><cylinder radius="0.04" length="0.1"/></geometry>'
    parts = [f'<robot name="{shape}{n_links}">']
    for k in range(n_links):
        parts.append(f'<link name="link{k}">{inertial}<visual>{geometry}<material name="grey"/></visual>'
                     f'<collision>{geometry}</collision></link>')
        if k:
            parent = 0 if shape == "star" else k - 1
            parts.append(f'<joint name="joint{k}" type="revolute"><parent link="link{parent}"/>'
                         f'<child link="link{k}"/><origin xyz="0 0 0.1" rpy="0 0 {0.01 * k:.2f}"/>'
                         f'<axis xyz="0 1 0"/><limit lower="-2.9" upper="2.9" effort="87" velocity="2.2"/>'
                         f'<dynamics damping="0.1" friction="0.0"/></joint>')
    parts.append("</robot>")
    return "\n".join(parts)
