"""A parsed URDF as plain, frozen data: links with their inertials, joints with their origins, axes, mimic
couplings and drives, and the tree's root."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True, eq=False)
class Inertial:
    """Mass properties of one link (URDF spec ``<inertial>``).

    mass: >= 0 (massless allowed); com: (3,) centre of mass in the link frame; inertia: (3, 3) rotational
    inertia about the CoM in the link-frame axes, i.e. R @ I_urdf @ R.T with R from ``<inertial><origin rpy>``.
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray


@dataclass(frozen=True)
class Link:
    """A URDF ``<link>``: its name and its inertial, None when the link has no ``<inertial>``."""

    name: str
    inertial: Inertial | None


@dataclass(frozen=True)
class Mimic:
    """URDF ``<mimic>``: q = multiplier * q[joint] + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True, eq=False)
class Joint:
    """A URDF ``<joint>``.

    rotation: (3, 3) and translation: (3,) place the joint (= child) frame in the parent link frame at q = 0.
    axis: (3,) unit vector in the joint frame; (1, 0, 0) for fixed and floating joints, whose axis is unused.
    mimic: None for fixed joints, whose <mimic> is vacuous (talos_reduced has such joints).
    damping, friction: the ``<dynamics>`` attributes, >= 0 (0 for fixed joints, whose <dynamics> is vacuous);
    armature: I_m N^2 of a transmission's motor (urdf/transmissions.py), >= 0.  A mimic joint's and a planar or floating
    joint's are dropped where the model is built, with a URDFWarning (model.build_model).
    """

    name: str
    type: str
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    mimic: Mimic | None
    damping: float = 0.0
    friction: float = 0.0
    armature: float = 0.0


@dataclass(frozen=True)
class URDFDescription:
    """A parsed URDF: one tree of links, joints in document order, and its unique root link."""

    name: str
    links: dict[str, Link]
    joints: list[Joint]
    root: str

    def children(self, link: str) -> list[Joint]:
        """Joints whose parent is `link`, in document order."""
        return list(self._children.get(link, ()))

    @cached_property
    def _children(self) -> dict[str, list[Joint]]:
        """{link: its child joints in document order}, made once: children() in O(1) keeps model building linear."""
        children: dict[str, list[Joint]] = {}
        for joint in self.joints:
            children.setdefault(joint.parent, []).append(joint)
        return children
