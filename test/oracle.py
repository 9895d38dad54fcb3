"""Pinocchio as a test oracle: the same URDF loaded by Pinocchio, with our coordinates mapped onto its.

Pinocchio orders joints its own way, stores a continuous joint as (cos, sin) and a planar joint as
(x, y, cos, sin), and orders a body's inertial parameters (m, mc, Ixx, Ixy, Iyy, Ixz, Iyz, Izz); this module
converts states into its coordinates and its results back into ours, so every comparison is one-to-one.
"""
import functools
import importlib.metadata
from pathlib import Path

import numpy as np

pin = None  # imported lazily so that modules which only need the URDF list do not pay for Pinocchio


@functools.lru_cache(maxsize=None)
def erd_robots_dir():
    """share/example-robot-data/robots of the installed example-robot-data distribution."""
    dist = importlib.metadata.distribution("example-robot-data")
    for f in dist.files or ():
        parts = Path(str(f)).parts
        if "robots" in parts and str(f).endswith(".urdf"):
            root = Path(dist.locate_file(f))
            while root.name != "robots":
                root = root.parent
            return root
    raise FileNotFoundError("example-robot-data is installed but ships no robots/ folder")


def erd_urdfs():
    """Every URDF of example-robot-data, sorted by path."""
    return sorted(erd_robots_dir().rglob("*.urdf"))


def erd_path(filename):
    """Path of one example-robot-data URDF by its file name, e.g. 'panda.urdf'."""
    matches = [p for p in erd_urdfs() if p.name == filename]
    if len(matches) != 1:
        raise FileNotFoundError(f"{filename}: {len(matches)} matches in example-robot-data")
    return matches[0]


# Our (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) -> Pinocchio's (Ixx, Ixy, Iyy, Ixz, Iyz, Izz): pin[i] = ours[OURS_OF_PIN[i]]
OURS_OF_PIN = np.array([0, 1, 2, 3, 4, 7, 5, 8, 9, 6])


class PinocchioTwin:
    """Pinocchio's model of the same URDF, and the maps between our coordinates and its."""

    def __init__(self, robot, path, floating_base=False, mimic=False):
        global pin
        import pinocchio
        pin = pinocchio
        args = (str(path), pin.JointModelFreeFlyer()) if floating_base else (str(path),)
        self.model = pin.buildModelFromUrdf(*args, mimic)
        self.data = self.model.createData()
        self.robot = robot
        names = list(self.model.names)
        self.v_of_pin = np.empty(self.model.nv, dtype=np.int64)   # v_pin = v_ours[v_of_pin]
        self.joints = []                                          # (ours JointInfo, pin joint id)
        for j in robot.model.joints:
            if j.mimic is not None:
                continue
            jid = names.index("root_joint" if (floating_base and j.body == 0) else j.name)
            pj = self.model.joints[jid]
            self.joints.append((j, jid))
            self.v_of_pin[pj.idx_v:pj.idx_v + pj.nv] = np.arange(j.idx_v, j.idx_v + j.nv)
        assert sorted(self.v_of_pin) == list(range(robot.nv)), "every Pinocchio velocity mapped once"
        self.pin_of_v = np.argsort(self.v_of_pin)                  # v_ours = v_pin[pin_of_v]

    def q(self, q):
        """Our q in Pinocchio's coordinates."""
        out = np.zeros(self.model.nq)
        for j, jid in self.joints:
            pj = self.model.joints[jid]
            x = q[j.idx_q:j.idx_q + j.nq]
            if pj.nq == j.nq:
                out[pj.idx_q:pj.idx_q + pj.nq] = x
            elif j.nq == 1 and pj.nq == 2:                           # continuous: (cos, sin)
                out[pj.idx_q:pj.idx_q + 2] = np.cos(x[0]), np.sin(x[0])
            elif j.nq == 3 and pj.nq == 4:                           # planar: (x, y, cos, sin)
                out[pj.idx_q:pj.idx_q + 4] = x[0], x[1], np.cos(x[2]), np.sin(x[2])
            else:
                raise NotImplementedError(f"joint {j.name}: nq {j.nq} vs Pinocchio {pj.nq}")
        return out

    def v(self, v):
        """Our v (or acceleration, torque) in Pinocchio's order."""
        return np.asarray(v)[self.v_of_pin]

    def vec(self, x_pin):
        """A Pinocchio vector over v back in our order."""
        return np.asarray(x_pin)[self.pin_of_v]

    def mat(self, X_pin):
        """A Pinocchio (nv x nv) matrix back in our order."""
        return np.asarray(X_pin)[self.pin_of_v][:, self.pin_of_v]

    def cols(self, X_pin):
        """A Pinocchio (k x nv) matrix with its columns back in our order."""
        return np.asarray(X_pin)[:, self.pin_of_v]

    def regressor_columns(self, Y_pin):
        """Pinocchio's joint torque regressor with rows in our v order and columns in our (body, parameter) order."""
        Y_pin = np.asarray(Y_pin)[self.pin_of_v]
        Y = np.zeros((self.robot.nv, 10 * self.robot.nbodies))
        for j, jid in self.joints:
            Y[:, 10 * j.body:10 * j.body + 10] = Y_pin[:, 10 * (jid - 1) + OURS_OF_PIN.argsort()]
        return Y

    # The quantities, in our coordinates --------------------------------------------------------------------
    def mass_matrix(self, q):
        M = pin.crba(self.model, self.data, self.q(q))
        return self.mat(np.triu(M) + np.triu(M, 1).T)

    def gravity_vector(self, q):
        return self.vec(pin.computeGeneralizedGravity(self.model, self.data, self.q(q)))

    def rnea(self, q, v, a):
        return self.vec(pin.rnea(self.model, self.data, self.q(q), self.v(v), self.v(a)))

    def aba(self, q, v, tau):
        return self.vec(pin.aba(self.model, self.data, self.q(q), self.v(v), self.v(tau)))

    def coriolis_matrix(self, q, v):
        return self.mat(pin.computeCoriolisMatrix(self.model, self.data, self.q(q), self.v(v)))

    def com(self, q):
        return pin.centerOfMass(self.model, self.data, self.q(q)).copy()

    def com_jacobian(self, q):
        return self.cols(pin.jacobianCenterOfMass(self.model, self.data, self.q(q)))

    def regressor(self, q, v, a):
        return self.regressor_columns(
            pin.computeJointTorqueRegressor(self.model, self.data, self.q(q), self.v(v), self.v(a)))


def assert_pinocchio_torques(robot, path, pi, seed, states=3):
    """Pinocchio's rnea on the URDF at path equals Y(q, v, v, a) pi of robot (same kinematics) at random states,
    to 1e-10: the file holds the parameters pi."""
    twin = PinocchioTwin(robot, path)
    rng = np.random.default_rng(seed)
    for _ in range(states):
        q, v, a = robot.random_configuration(rng), rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        expected = robot.regressor(q, v, v, a) @ pi
        np.testing.assert_allclose(twin.rnea(q, v, a), expected, rtol=0, atol=1e-10 * np.abs(expected).max())


def relative_error(a, b):
    """max |a - b| / max |b| (max |a - b| when b is all zeros)."""
    scale = np.max(np.abs(b)) if np.size(b) else 0.0
    err = np.max(np.abs(np.asarray(a) - b)) if np.size(b) else 0.0
    return err / scale if scale > 0 else err
