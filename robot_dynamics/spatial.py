"""Layer 1: the spatial algebra of paper 002 (appendix), twists and wrenches ordered [linear; angular].

Plain numpy, for building models and for tests; the compiled kernels (algorithms/) write the same operators
out element by element.

Notation (paper 002, appendix), for a homogeneous transform T = (R, p) from frame k to frame p:
    Ad      = [[R, p~ R], [0, R]]                 maps twists in k to twists in p
    Ad^-1   = [[R^T, -R^T p~], [0, R^T]]          maps twists in p to twists in k
    adj(v)  = [[w~, v~], [0, w~]]                 the Lie bracket, adj(v) x = [v, x]
    Lambda  = [[m E, -(m c)~], [(m c)~, I_o]]     body inertia at the body origin (I_o about the origin)
"""
import math

import numpy as np

# Order of the ten inertial parameters of one body (paper 002, eq. (9)), inertia about the body origin.
PARAMETER_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")


def skew(a):
    """a~ with a~ b = a x b.  a: (3,) -> (3, 3)"""
    S = np.zeros((3, 3))
    S[0, 1] = -a[2]
    S[0, 2] = a[1]
    S[1, 0] = a[2]
    S[1, 2] = -a[0]
    S[2, 0] = -a[1]
    S[2, 1] = a[0]
    return S


def axis_angle_rotation(axis, angle):
    """Rodrigues: R = E + sin(t) a~ + (1 - cos(t)) a~^2 for a unit axis a.  (3,), float -> (3, 3)"""
    s = np.sin(angle)
    c1 = 1.0 - np.cos(angle)
    A = skew(axis)
    return np.eye(3) + s * A + c1 * (A @ A)


def quaternion_rotation(quat):
    """Rotation matrix of a unit quaternion [qx, qy, qz, qw] (Pinocchio's and ROS's storage order)."""
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    R = np.empty((3, 3))
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - z * w)
    R[0, 2] = 2.0 * (x * z + y * w)
    R[1, 0] = 2.0 * (x * y + z * w)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - x * w)
    R[2, 0] = 2.0 * (x * z - y * w)
    R[2, 1] = 2.0 * (y * z + x * w)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return R


def rotation_quaternion(R):
    """Unit quaternion [qx, qy, qz, qw] (qw >= 0) of a rotation matrix (Shepperd's method).  (3, 3) -> (4,)"""
    t = np.trace(R)
    if t > 0.0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        q = np.empty(4)
        q[i] = 0.25 * s
        q[j] = (R[j, i] + R[i, j]) / s
        q[k] = (R[k, i] + R[i, k]) / s
        q[3] = (R[k, j] - R[j, k]) / s
    return q if q[3] >= 0.0 else -q


def rpy_rotation(rpy):
    """URDF <origin rpy>: R = Rz(yaw) Ry(pitch) Rx(roll) (fixed axes x, then y, then z), multiplied out."""
    r, p, y = (float(a) for a in rpy)
    sr, cr, sp, cp, sy, cy = math.sin(r), math.cos(r), math.sin(p), math.cos(p), math.sin(y), math.cos(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def ad_inv(R, p):
    """Ad^-1 of T = (R, p) as a 6x6 matrix: maps twists in the parent frame to the child frame."""
    X = np.zeros((6, 6))
    Rt = R.T
    X[:3, :3] = Rt
    X[:3, 3:] = -Rt @ skew(p)
    X[3:, 3:] = Rt
    return X


def adj(v):
    """adj(v) = [[w~, v~], [0, w~]] for the twist v = [v; w] (paper 002, appendix).  (6,) -> (6, 6)"""
    X = np.zeros((6, 6))
    W = skew(v[3:])
    X[:3, :3] = W
    X[:3, 3:] = skew(v[:3])
    X[3:, 3:] = W
    return X


def spatial_inertia(pi):
    """Lambda_k of the ten parameters pi_k (paper 002, eq. (9) and appendix).  (10,) -> (6, 6)"""
    L = np.zeros((6, 6))
    m = pi[0]
    H = skew(pi[1:4])                                 # (m c)~
    for i in range(3):
        L[i, i] = m
    L[:3, 3:] = -H
    L[3:, :3] = H
    L[3, 3], L[4, 4], L[5, 5] = pi[4], pi[5], pi[6]
    L[3, 4] = L[4, 3] = pi[7]
    L[3, 5] = L[5, 3] = pi[8]
    L[4, 5] = L[5, 4] = pi[9]
    return L


def parameters_from_inertial(mass, com, inertia_com):
    """pi = [m, m c, I_o] with I_o = I_c + m (|c|^2 E - c c^T) (parallel axes), I in (xx, yy, zz, xy, xz, yz).

    mass: float, com: (3,), inertia_com: (3, 3) about the CoM in body axes  ->  (10,)
    """
    com = np.asarray(com, dtype=float)
    I_o = np.asarray(inertia_com, dtype=float) + mass * (com @ com * np.eye(3) - np.outer(com, com))
    return np.array([mass, *(mass * com), I_o[0, 0], I_o[1, 1], I_o[2, 2], I_o[0, 1], I_o[0, 2], I_o[1, 2]])


def inertia_matrix(pi):
    """The 3x3 rotational inertia about the body origin held in pi[4:10] = (xx, yy, zz, xy, xz, yz)."""
    return np.array([[pi[4], pi[7], pi[8]], [pi[7], pi[5], pi[9]], [pi[8], pi[9], pi[6]]])


def transform_parameters(pi, R, p):
    """pi of a body whose frame sits at (R, p) in another frame, expressed in that frame.  (10,) -> (10,)

    With h = m c:  m' = m,  h' = R h + m p,  I_o' = R I_o R^T - m p~^2 - p~ (R h)~ - (R h)~ p~  (sum of
    -m_i r_i~^2 over the mass points, r_i = p + R s_i).  Linear in pi, so a fixed child merged into its parent
    simply adds its transformed parameters (paper 002, eq. (9)); exact for massless bodies too.
    """
    m, h = pi[0], R @ pi[1:4]
    P, H = skew(np.asarray(p, dtype=float)), skew(h)
    I = R @ inertia_matrix(pi) @ R.T - m * (P @ P) - P @ H - H @ P
    return np.array([m, *(h + m * np.asarray(p)), I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def momentum_matrix(v):
    """A(v) with Lambda v = A(v) pi (paper 002, Prop. 1, eqs. (10)-(12)).  (6,) -> (6, 10)"""
    A = np.zeros((6, 10))
    lin, w = v[:3], v[3:]
    A[0, 0], A[1, 0], A[2, 0] = lin[0], lin[1], lin[2]            # eq. (10): [v  w~  0]
    A[:3, 1:4] = skew(w)
    A[3:, 1:4] = -skew(lin)                                       # eq. (11): [0  -v~  w-bar]
    A[3, 4], A[3, 7], A[3, 8] = w[0], w[1], w[2]                  # eq. (12)
    A[4, 5], A[4, 7], A[4, 9] = w[1], w[0], w[2]
    A[5, 6], A[5, 8], A[5, 9] = w[2], w[0], w[1]
    return A
