"""Thin adapters between ROS messages and the numpy arrays of the library.

Everything that reads a message validates it here and raises :class:`BadMessage` with a ``kind`` (one word
per kind of fault, so a node can count and throttle its warnings per kind); nothing here logs or publishes.
"""
import array

import numpy as np
from numba import njit
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, MultiArrayLayout

from ..controllers import PiecewiseTrajectory
from ..model import BASE_COORDINATES


class BadMessage(ValueError):
    """A message that cannot be used; ``kind`` names the fault (``"joint_state_lengths"``, ``"odom_frame"``, ...)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


# --- Float64MultiArray -------------------------------------------------------------------------------------

def coordinate_names(robot):
    """The names of the nv velocity coordinates: the six base velocities (floating base), then the joints."""
    return (list(BASE_COORDINATES) if robot.floating_base else []) + list(robot.joint_names)


def multiarray_layout(shape, labels=None):
    """The canonical row-major layout of an array of shape ``(n,)`` or ``(rows, cols)``.

    A matrix gets ``dim[0] = (label0, rows, rows*cols)`` and ``dim[1] = (label1, cols, cols)``, a vector one
    dim ``(label0, n, n)``; ``data_offset`` is 0.  ``labels`` gives, per axis, the names of its entries, joined
    with commas into the label; without it the labels are "rows" and "cols".
    """
    names = ["rows", "cols"] if labels is None else [",".join(axis) for axis in labels]
    if len(shape) == 1:
        dims = [MultiArrayDimension(label=names[0], size=shape[0], stride=shape[0])]
    else:
        rows, cols = shape
        dims = [MultiArrayDimension(label=names[0], size=rows, stride=rows * cols),
                MultiArrayDimension(label=names[1], size=cols, stride=cols)]
    return MultiArrayLayout(dim=dims, data_offset=0)


def float_field(msg, field, n):
    """Set the float64 sequence ``field`` of ``msg`` to n zeros and return a numpy view (n,) of the array the
    message then holds: a message published again and again is filled through it (rclpy serializes at publish),
    not given a new sequence each time (which the field's setter copies)."""
    setattr(msg, field, array.array("d", bytes(8 * n)))
    return np.frombuffer(getattr(msg, field), dtype=np.float64) if n else np.zeros(0)


def set_multiarray_data(msg, a):
    """Copy the float64 array ``a`` into ``msg.data`` in row-major order (one memcpy, no per-element check)."""
    msg.data = array.array("d", np.ascontiguousarray(a, dtype=np.float64).tobytes())


def to_multiarray(a):
    """A new Float64MultiArray holding ``a``, shape ``(n,)`` or ``(rows, cols)``, with the canonical layout."""
    a = np.asarray(a, dtype=np.float64)
    msg = Float64MultiArray(layout=multiarray_layout(a.shape))
    set_multiarray_data(msg, a)
    return msg


def from_multiarray(msg):
    """The array a Float64MultiArray holds: ``(n,)`` for one dim, ``(rows, cols)`` for two.

    Raises :class:`BadMessage` (kind ``"layout"``) unless the layout is the canonical dense row-major one.
    """
    dims = msg.layout.dim
    shape = tuple(d.size for d in dims)
    strides = [int(np.prod(shape[i:])) for i in range(len(shape))]
    if (len(dims) not in (1, 2) or msg.layout.data_offset != 0 or [d.stride for d in dims] != strides
            or len(msg.data) != strides[0]):
        raise BadMessage("layout", f"Float64MultiArray is not a dense row-major vector or matrix: {msg.layout}")
    return np.frombuffer(msg.data, dtype=np.float64).reshape(shape) if len(msg.data) else np.zeros(shape)


def as_float_array(values):
    """A float64 numpy view of a message's float64 sequence (``array.array('d')`` or a list)."""
    if isinstance(values, array.array) and values.typecode == "d":
        return np.frombuffer(values, dtype=np.float64) if len(values) else np.zeros(0)
    return np.asarray(values, dtype=np.float64)


# --- sensor_msgs/JointState ---------------------------------------------------------------------------------

class JointStateMerger:
    """The last known joint positions, velocities and efforts, merged from JointState messages.

    Joints are matched by name in any order; names the model lacks are ignored. A message updates the joints it
    names and leaves the others at their last known values. A message without velocities (efforts) marks the
    velocities (efforts) of the joints it names as unknown (their old values belong to an old state). Efforts are
    kept as given, NaN included: only the momentum observer reads them, and checks them (inputs.StateInputs.efforts).

    Parameters
    ----------
    joint_names : list of str
        The model's joints in the order of q (and of the joint part of v).
    """

    def __init__(self, joint_names):
        self.joint_names = list(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        n = len(self.joint_names)
        self.q = np.zeros(n)                      # (n,) joint positions
        self.v = np.zeros(n)                      # (n,) joint velocities, 0 where unknown
        self.q_known = np.zeros(n, dtype=bool)
        self.v_known = np.zeros(n, dtype=bool)
        self.effort = np.zeros(n)                 # (n,) joint efforts, as the messages gave them
        self.effort_known = np.zeros(n, dtype=bool)
        self._missing = Q_MISSING | V_MISSING | E_MISSING       # which of q, v, effort some joint lacks (_merge)
        self._names = None                        # the last message's names, and their match:
        self._rows = self._cols = np.zeros(0, dtype=np.intp)   # msg.name[rows[k]] == joint_names[cols[k]]

    @property
    def complete(self):
        """True once every joint has a known position."""
        return not self._missing & Q_MISSING

    @property
    def velocities_known(self):
        """True when every joint has a known velocity."""
        return not self._missing & V_MISSING

    @property
    def efforts_known(self):
        """True when every joint has had an effort, in its last message."""
        return not self._missing & E_MISSING

    def merge(self, msg):
        """Merge one JointState into the state.

        A message is merged whole or not at all: array lengths and finiteness are checked before anything
        changes. After merging, raises :class:`BadMessage` (kind ``"joint_state_missing_joints"``) while some joint has
        never had a position, so the caller skips the message but keeps what it brought.
        """
        names = msg.name
        position, velocity = as_float_array(msg.position), as_float_array(msg.velocity)
        effort = as_float_array(msg.effort)
        if len(position) != len(names) or len(velocity) not in (0, len(names)) or len(effort) not in (0, len(names)):
            raise BadMessage("joint_state_lengths", f"joint_states has {len(names)} names, {len(position)} "
                                                    f"positions, {len(velocity)} velocities and {len(effort)} "
                                                    "efforts")
        rows, cols = self._match(names)
        missing = _merge(position, velocity, effort, rows, cols, self.q, self.v, self.effort, self.q_known,
                         self.v_known, self.effort_known)
        if missing == NOT_FINITE:
            raise BadMessage("joint_state_non_finite", "joint_states has NaN or infinite positions or velocities "
                                                       f"among {[names[r] for r in rows]}")
        self._missing = missing
        if missing & Q_MISSING:
            missing = [name for name, known in zip(self.joint_names, self.q_known) if not known]
            raise BadMessage("joint_state_missing_joints", f"joint_states never gave a position for {missing}")

    def _match(self, names):
        """Rows of the message and columns of the model that hold the same joints (cached per name list)."""
        if names != self._names:
            pairs = [(r, self._index[name]) for r, name in enumerate(names) if name in self._index]
            self._rows = np.array([r for r, _ in pairs], dtype=np.intp)
            self._cols = np.array([c for _, c in pairs], dtype=np.intp)
            self._names = list(names)
        return self._rows, self._cols


# --- nav_msgs/Odometry --------------------------------------------------------------------------------------

def base_state_from_odometry(msg, root_link):
    """The floating-base part of q and v from an Odometry.

    Odometry gives the pose of ``child_frame_id`` in ``header.frame_id`` and the twist in ``child_frame_id``,
    which must therefore be the URDF root link; that twist is the base part of v as it stands.

    Parameters
    ----------
    msg : nav_msgs.msg.Odometry
    root_link : str
        The URDF root link of the model.

    Returns
    -------
    q_base : (7,) ndarray
        ``[x, y, z, qx, qy, qz, qw]``, the quaternion normalised.
    v_base : (6,) ndarray
        ``[vx, vy, vz, wx, wy, wz]`` in the base frame.
    """
    if msg.child_frame_id != root_link:
        raise BadMessage("odom_frame", f"odom child_frame_id '{msg.child_frame_id}' is not the URDF root link "
                                       f"'{root_link}'")
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
    q_base = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])
    v_base = np.array([lin.x, lin.y, lin.z, ang.x, ang.y, ang.z])
    if not (np.isfinite(q_base).all() and np.isfinite(v_base).all()):
        raise BadMessage("odom_non_finite", "odom has NaN or infinite pose or twist")
    norm = np.linalg.norm(q_base[3:])
    if norm < 1e-9:
        raise BadMessage("odom_zero_quaternion", "odom orientation is a zero quaternion")
    q_base[3:] /= norm
    return q_base, v_base


# --- trajectory_msgs/JointTrajectoryPoint and JointTrajectory ----------------------------------------------

POINT_FIELDS = ("positions", "velocities", "accelerations")


def reference_from_point(msg, n, required, optional=()):
    """The fields of a JointTrajectoryPoint that ``required`` and ``optional`` name (of POINT_FIELDS), each a new
    float64 array (n,), in the order of POINT_FIELDS; None for a field not named, or optional and empty.

    BadMessage ``reference_length`` unless every required field has n values and every optional one 0 or n;
    ``reference_non_finite`` when one holds NaN or inf.
    """
    arrays = tuple(as_float_array(getattr(msg, field)) if field in required or field in optional else None
                   for field in POINT_FIELDS)
    for field, a in zip(POINT_FIELDS, arrays):
        if a is not None and len(a) != n and (field in required or len(a)):
            given = ", ".join(f"{len(a)} {field}" for field, a in zip(POINT_FIELDS, arrays) if a is not None)
            optional_text = f" ({' and '.join(optional)} may be empty)" if optional else ""
            raise BadMessage("reference_length", f"reference has {given}; {n} are needed{optional_text}")
    if not all(a is None or np.isfinite(a).all() for a in arrays):
        raise BadMessage("reference_non_finite", "reference has NaN or infinite values")
    return tuple(None if a is None or not len(a) else a.copy() for a in arrays)


def trajectory_from_msg(msg, joint_names):
    """``(trajectory, start)`` of a JointTrajectory: a PiecewiseTrajectory over time_from_start.

    Parameters
    ----------
    msg : trajectory_msgs.msg.JointTrajectory
        Its ``joint_names`` must name every joint of ``joint_names`` once, in any order.
    joint_names : list of str
        The model's joints: the order of the trajectory's arrays.

    Returns
    -------
    trajectory : controllers.PiecewiseTrajectory
        Of degree 1, 3 or 5 as every point gives positions, velocities, accelerations; arrays (N, n).
    start : float or None
        ``header.stamp`` in seconds; None for a zero stamp (start at the next joint state).
    """
    if not msg.points:
        raise BadMessage("trajectory_empty", "joint trajectory has no points")
    names = list(msg.joint_names)
    if sorted(names) != sorted(joint_names):
        raise BadMessage("trajectory_joints", f"joint trajectory names {names}; the controlled joints are "
                                              f"{list(joint_names)}")
    columns = [names.index(name) for name in joint_names]
    positions = _point_arrays(msg.points, "positions", columns, required=True)
    velocities = _point_arrays(msg.points, "velocities", columns, required=False)
    accelerations = _point_arrays(msg.points, "accelerations", columns, required=False)
    if accelerations is not None and velocities is None:
        raise BadMessage("trajectory_lengths", "joint trajectory has accelerations without velocities")
    if not all(a is None or np.isfinite(a).all() for a in (positions, velocities, accelerations)):
        raise BadMessage("trajectory_non_finite", "joint trajectory has NaN or infinite values")
    times = np.array([seconds(p.time_from_start) for p in msg.points])
    if np.any(np.diff(times) <= 0):
        raise BadMessage("trajectory_times", f"joint trajectory time_from_start is not strictly increasing: "
                                             f"{times.tolist()}")
    start = seconds(msg.header.stamp) if (msg.header.stamp.sec or msg.header.stamp.nanosec) else None
    return PiecewiseTrajectory(times, positions, velocities, accelerations), start


def _point_arrays(points, field, columns, required):
    """``field`` of every point, its columns reordered by ``columns``: (N, n); None when optional and absent.

    Raises BadMessage unless every point gives all n values (or, for an optional field, every point none).
    """
    values = [as_float_array(getattr(p, field)) for p in points]
    n = len(columns)
    if not required and all(len(v) == 0 for v in values):
        return None
    if any(len(v) != n for v in values):
        lengths = sorted({len(v) for v in values})
        raise BadMessage("trajectory_lengths", f"joint trajectory {field} have lengths {lengths}; every point needs "
                                               f"{n}" + ("" if required else " (or every point none)"))
    return np.array(values)[:, columns]


NOT_FINITE, Q_MISSING, V_MISSING, E_MISSING = 1, 2, 4, 8       # what _merge returns, or-ed


@njit(cache=True)
def _merge(position, velocity, effort, rows, cols, q, v, e, q_known, v_known, e_known):
    """JointStateMerger.merge's arrays: q[cols] = position[rows], v and e likewise (zero where the message has none),
    the known flags set; returns Q_MISSING | V_MISSING | E_MISSING for what some joint still lacks (0: nothing), or
    NOT_FINITE, nothing changed, when a matched position or velocity is not finite."""
    has_v, has_e = velocity.shape[0] > 0, effort.shape[0] > 0
    for k in range(rows.shape[0]):
        r = rows[k]
        if not np.isfinite(position[r]) or (has_v and not np.isfinite(velocity[r])):
            return NOT_FINITE
    for k in range(rows.shape[0]):
        r, c = rows[k], cols[k]
        q[c], v[c], e[c] = position[r], velocity[r] if has_v else 0.0, effort[r] if has_e else 0.0
        q_known[c], v_known[c], e_known[c] = True, has_v, has_e
    missing = 0
    for c in range(q.shape[0]):
        missing |= (0 if q_known[c] else Q_MISSING) | (0 if v_known[c] else V_MISSING)
        missing |= 0 if e_known[c] else E_MISSING
    return missing


def seconds(time):
    """A builtin_interfaces/Time or Duration as float seconds."""
    return time.sec + 1e-9 * time.nanosec


def sec_nanosec(t):
    """Float seconds t >= 0 -> (sec, nanosec) of a builtin_interfaces/Time or Duration (nanosec < 1e9)."""
    sec = int(np.floor(t))
    return sec, min(int(round((t - sec) * 1e9)), 999_999_999)
