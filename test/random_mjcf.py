"""Seeded random MJCF trees with ball joints, for the identity tests (test_identities' CASES): URDF has no ball joint.

Like random_urdf's trees they exercise conventions, not looks: every body at a random position and orientation,
branching, ball joints at an offset anchor, hinges and slides about non-unit axes, a hinge or slide and a ball in
one body, bodies welded to their parent, sites, explicit inertias rotated by a random quaternion (principal moments
that satisfy the triangle inequality), and with `floating_base` a free joint at the root.  MuJoCo compiles them
(robot_dynamics.load_mjcf), so they need the `mujoco` package.
"""
import numpy as np

KINDS = ("ball", "hinge", "slide", "hinge ball", "slide ball", "welded")   # MuJoCo: no rotation after a ball


def _numbers(x):
    return " ".join(f"{value:.6f}" for value in x)


def random_ball_tree(seed, n_bodies=8, floating_base=False):
    """A random MJCF tree of n_bodies bodies below a root body (free with floating_base, else welded to the world);
    the first two joints are ball joints, the others drawn from KINDS.  The same text for the same arguments."""
    rng = np.random.default_rng(seed)
    children = {k: [] for k in range(n_bodies + 1)}
    for k in range(1, n_bodies + 1):
        children[int(rng.integers(0, k))].append(k)

    def inertial():
        moments = rng.uniform(0.01, 0.05) * rng.uniform(1.0, 1.8, 3)        # each below the sum of the others
        quat = rng.normal(size=4)
        return (f'<inertial pos="{_numbers(rng.uniform(-0.1, 0.1, 3))}" quat="{_numbers(quat / np.linalg.norm(quat))}"'
                f' mass="{rng.uniform(0.3, 2.0):.6f}" diaginertia="{_numbers(moments)}"/>')

    def body(k):
        quat = rng.normal(size=4)
        kind = "ball" if k <= 2 else KINDS[int(rng.integers(len(KINDS)))]
        joints = []
        for j, joint in enumerate(kind.split()):
            if joint == "welded":
                continue
            axis = f' axis="{_numbers(rng.normal(size=3))}"' if joint != "ball" else ""
            joints.append(f'<joint name="j{k}_{j}" type="{joint}" pos="{_numbers(rng.uniform(-0.05, 0.05, 3))}"'
                          f'{axis}/>')
        inner = "".join(body(c) for c in children[k])
        return (f'<body name="b{k}" pos="{_numbers(rng.uniform(-0.3, 0.3, 3))}" '
                f'quat="{_numbers(quat / np.linalg.norm(quat))}">{"".join(joints)}{inertial()}'
                f'<site name="s{k}" pos="{_numbers(rng.uniform(-0.1, 0.1, 3))}"/>{inner}</body>')

    root_joint = '<freejoint name="root"/>' if floating_base else ""
    roots = "".join(body(c) for c in children[0])
    return (f'<mujoco model="ball_tree_{seed}"><compiler angle="radian"/><worldbody>'
            f'<body name="root" pos="0 0 1">{root_joint}{inertial()}{roots}</body></worldbody></mujoco>')
