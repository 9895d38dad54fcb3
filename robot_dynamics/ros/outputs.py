"""What dynamics_node publishes: one row per output, and everything else about the outputs derived from the rows.

A row names an output's topic (under the node's name), its message type, the quantity, the registry row that
gives its shape (robot_dynamics.algorithms.registry: the Robot method that computes it alone and the name of the
result), when it is published and how the node takes its value from what it computed for a joint state. From
the rows come: the messages sized and labelled for a model and the publishers (robot_dynamics.ros.publishing),
the parameters that switch outputs on and their descriptions, the table of topics in dynamics_node's docstring
(:func:`topics_table`; ``python -m robot_dynamics.ros.outputs`` prints it), the launch arguments of the switches and
their help (launch_plan) and the topics the tests listen to (test/ros_helpers.py).

Adding an output is adding its row to :data:`OUTPUTS`.

The momentum observer's outputs (``~/external_torque``, ``~/external_wrench/<frame>``, ``~/collision``) are rows too:
they need an *observed* joint state (robot_dynamics.ros.observing: a fixed base, velocities and efforts), and
``~/collision`` is *latched*: published when its value changes, transient local, so a late subscriber gets the
present state.

Shapes use the registry's names: ``"nq"``, ``"nv"``, ``"nb"`` (bodies) and ``"ny"`` (10 nb), beside numbers. The
label of a Float64MultiArray's axis follows from its size's name: ``nv`` the coordinates in v order, ``ny`` the
inertial parameters ``<body>.<parameter>``, 3 ``x,y,z``, 6 the rows of a twist ``linear_x, ..., angular_z``
(robot_dynamics.ros.publishing.axis_labels).

This module imports neither rclpy nor the kernels (the registry only when a shape is asked for): the launch
files read it.
"""
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

FLOAT64_ARRAY = "std_msgs/Float64MultiArray"
POINT = "geometry_msgs/PointStamped"
JOINT_STATE = "sensor_msgs/JointState"
WRENCH = "geometry_msgs/WrenchStamped"
BOOL = "std_msgs/Bool"
VELOCITIES, REFERENCE = "velocities", "reference"      # what a joint state must bring for an output
OBSERVED, THRESHOLDS = "observed", "thresholds"         # ... or the observer make of it (observing.py)


@dataclass(frozen=True)
class Output:
    """One output of dynamics_node.

    Attributes
    ----------
    topic : str
        Relative to the node's name (``~/<topic>``); with ``{frame}`` in it, one topic per frame of the parameter
        named by ``frames``.
    message : str
        The ROS message type, ``package/Type``.
    symbol : str
        The quantity, as the table names it.
    value : callable
        ``value(x)`` -> the array to publish, from the :class:`robot_dynamics.ros.publishing.Evaluation` ``x`` of
        a joint state (``x.robot``, ``x.q``, ``x.v``, ``x.dynamics``: the result of ``robot.dynamics``, computed
        when an output first reads it, ``x.frame``, ``x.frame_reference``, ``x.observer``: the
        observing.Observing that observed the joint state).
    row : tuple or None
        ``(registry row, result name)``: the Robot method that computes the quantity alone, whose result of that
        name gives the shape. None for a quantity no row computes (then ``shape`` is given).
    shape : tuple or None
        The shape, when no registry row gives it.
    switch : str or None
        The bool parameter that advertises the output (None: always advertised).
    needs : tuple
        ``VELOCITIES`` and ``REFERENCE`` (a ``~/reference`` of nv velocities and accelerations) when the joint
        state must bring them; ``OBSERVED`` when the momentum observer must have observed it (a fixed base,
        velocities and efforts), ``THRESHOLDS`` when the collision thresholds must be known.
    doc : str
        What else a consumer must know.
    frames : str
        The string-array parameter that lists the frames of a per-frame output.
    latched : bool
        Published when its value changes (and the first time), RELIABLE + TRANSIENT_LOCAL: a late subscriber
        receives the present value.
    """

    topic: str
    message: str
    symbol: str
    value: Callable
    row: Optional[tuple] = None
    shape: Optional[tuple] = None
    switch: Optional[str] = None
    needs: tuple = ()
    doc: str = ""
    frames: str = "frames"
    latched: bool = False

    @property
    def per_frame(self):
        """True for one topic per frame of the parameter named by ``frames``."""
        return "{frame}" in self.topic

    def method(self):
        """The Robot method that computes the quantity alone (``"Robot.mass_matrix"``,
        ``"Robot.time_derivatives().M_dot"``), or "" when none does."""
        if self.row is None:
            return ""
        name, result = self.row
        several = len(self._registry_row().outputs) > 1
        return f"Robot.{name.lstrip('_')}" + (f"().{result}" if several else "")

    def topic_of(self, frame=None):
        """The topic, relative to the node's name, of the output (of ``frame``'s, for a per-frame output)."""
        return self.topic.format(frame=frame) if self.per_frame else self.topic

    def shape_symbols(self):
        """The shape in the registry's names (``("nv", "nv")``): the registry row's result, or ``shape``."""
        if self.shape is not None:
            return self.shape
        name, result = self.row
        shapes = dict(self._registry_row().outputs)
        if result not in shapes:
            raise LookupError(f"output ~/{self.topic}: registry row {name!r} has no result {result!r} (its results: "
                              f"{', '.join(shapes)})")
        return tuple(shapes[result])

    def _registry_row(self):
        from robot_dynamics.algorithms.registry import QUANTITIES     # here: the launch files need no kernels
        for quantity in QUANTITIES:
            if quantity.name == self.row[0]:
                return quantity
        raise LookupError(f"output ~/{self.topic}: no registry row named {self.row[0]!r}")


def overflow_checked(symbol, compute):
    """value(x) of an output that compute(x) works out here from the library's finite results: refused with a
    ValueError (the state is rejected) when that arithmetic overflows float64 -- C v at a velocity near 1e200,
    whose C is finite.  No np.errstate around it (~4 us a call, on every joint state): numpy's overflow warning
    is printed once, or raised where warnings are errors, and either way the state is refused."""
    def value(x):
        try:
            y = compute(x)
        except (FloatingPointError, RuntimeWarning) as err:
            raise ValueError(f"{symbol} overflows float64 at this state (v too large): {err}") from None
        if not np.isfinite(y).all():
            raise ValueError(f"{symbol} overflows float64 at this state (v too large)")
        return y
    return value


# The rows, in the order of publication: the mass matrix first (what latency-sensitive consumers wait for), ~/com
# after the arrays it shares a state with, the stamped companion ~/state (publishing.STATE_TOPIC) after them all.
OUTPUTS = (
    Output("mass_matrix", FLOAT64_ARRAY, "M", lambda x: x.dynamics.M, row=("mass_matrix", "M")),
    Output("coriolis_matrix", FLOAT64_ARRAY, "C", lambda x: x.dynamics.C, row=("coriolis_matrix", "C"),
           needs=(VELOCITIES,), doc="Mdot = C + C^T"),
    Output("coriolis_vector", FLOAT64_ARRAY, "C v", overflow_checked("C v", lambda x: x.dynamics.C @ x.v),
           shape=("nv",), needs=(VELOCITIES,), doc="the Coriolis and centrifugal torques"),
    Output("gravity", FLOAT64_ARRAY, "g", lambda x: x.dynamics.g, row=("gravity_vector", "g")),
    Output("com_jacobian", FLOAT64_ARRAY, "J_com", lambda x: x.dynamics.J_com, row=("com_jacobian", "J_com")),
    Output("regressor", FLOAT64_ARRAY, "Y", lambda x: x.dynamics.Y, row=("regressor", "Y"),
           switch="publish_regressor", needs=(VELOCITIES, REFERENCE),
           doc="Y pi = M a_r + C v_r + g, the Slotine-Li regressor of ~/reference's v_r, a_r"),
    Output("friction", FLOAT64_ARRAY, "tau_f", lambda x: x.robot.friction_torque(x.v), shape=("nv",),
           needs=(VELOCITIES,), doc="the drives' friction torque at the joint state (Robot.friction_torque; zero "
                                    "for a robot without <dynamics>, transmissions or a drives file): the torque a "
                                    "drive needs is M a + C v + g + tau_f, M with the armature"),
    Output("com", POINT, "CoM", lambda x: x.dynamics.com, row=("com_position", "com"),
           doc="in the world frame: odom's frame_id (floating base), frame_prefix + the root link (fixed base); "
               "stamped with the joint state's stamp"),
    Output("mass_matrix_derivative", FLOAT64_ARRAY, "dM/dt",
           overflow_checked("dM/dt", lambda x: x.dynamics.C + x.dynamics.C.T),
           row=("_time_derivatives", "M_dot"), switch="publish_derivatives", needs=(VELOCITIES,),
           doc="along q' = v (paper 002, remark 5: C + C^T)"),
    Output("gravity_derivative", FLOAT64_ARRAY, "dg/dt", lambda x: x.robot.gravity_derivative(x.q, x.v),
           row=("gravity_derivative", "g_dot"), switch="publish_derivatives", needs=(VELOCITIES,),
           doc="along q' = v (paper 002, Prop. 6), in O(n)"),
    Output("frame_jacobians/{frame}", FLOAT64_ARRAY, "J_f",
           lambda x: x.robot.frame_jacobian(x.q, x.frame, x.frame_reference, out=x.out), row=("_frame_jacobian", "J"),
           doc="of each frame of the parameter frames, in frame_reference: [linear; angular] rows"),
    Output("external_torque", JOINT_STATE, "tau_ext", lambda x: x.observer.residual, shape=("nv",),
           switch="publish_external_torque", needs=(OBSERVED,),
           doc="the momentum observer's estimate r of the external joint torque (MomentumObserver.update; "
               "M a + C v + g + tau_f = tau + tau_ext, tau the effort), in effort, by coordinate name; stamped "
               "with the joint state's stamp"),
    Output("external_wrench/{frame}", WRENCH, "F_ext", lambda x: x.observer.wrench(x.q, x.frame), shape=(6,),
           switch="publish_external_torque", needs=(OBSERVED,), frames="wrench_frames",
           doc="of each frame of the parameter wrench_frames: the wrench there that best explains r "
               "(MomentumObserver.wrench, reference local): force and torque about the frame's origin in its axes, "
               "header.frame_id = frame_prefix + the frame"),
    Output("collision", BOOL, "collision", lambda x: x.observer.collision.detected, shape=(),
           switch="publish_external_torque", needs=(OBSERVED, THRESHOLDS), latched=True,
           doc="CollisionDetector's verdict, published when it changes (transient local); while true, an ERROR on "
               "/diagnostics names the touched bodies"),
)

# The inputs and the outputs that are no quantity, for the table of topics.
OTHER_TOPICS = (
    ("in", "joint_states", "sensor_msgs/JointState", "positions (and velocities, efforts) by joint name"),
    ("in", "odom", "nav_msgs/Odometry", "floating base: pose in the world, twist in the base frame "
                                        "(child_frame_id = frame_prefix + the URDF root link)"),
    ("in", "robot_description", "std_msgs/String", "only while no description parameter is set"),
    ("in", "~/reference", "trajectory_msgs/JointTrajectoryPoint", "velocities = v_r, accelerations = a_r (nv,)"),
    ("in", "<effort_topic>", "std_msgs/Float64MultiArray", "only with effort_topic set: the observer's tau, nv efforts "
                                                           "in the order of joints, held until the next (else "
                                                           "joint_states' effort)"),
)
COMPANION_TOPICS = (
    ("out", "~/state", "sensor_msgs/JointState", "the stamped companion, published after the outputs of every "
                                                 "answered joint state: its stamp, the world frame, the coordinate "
                                                 "names (v order) and the q, v used"),
    ("out", "/diagnostics", "diagnostic_msgs/DiagnosticArray", "rate, compute time, skipped messages by reason; "
                                                               "with publish_external_torque, the collision: ERROR "
                                                               "naming the touched bodies while in collision, OK "
                                                               "otherwise"),
)


def switches():
    """The parameters that advertise outputs, in the table's order: ``{parameter: [output, ...]}``."""
    found = {}
    for output in OUTPUTS:
        if output.switch is not None:
            found.setdefault(output.switch, []).append(output)
    return found


def switch_help(switch):
    """What the parameter ``switch`` does, from the rows: ``"publish ~/a and ~/b"``, and what they wait for."""
    outputs = switches()[switch]
    topics = [f"~/{o.topic.format(frame='<frame>')}" for o in outputs]
    text = "publish " + (", ".join(topics[:-1]) + " and " if len(topics) > 1 else "") + topics[-1]
    return text + (" once a ~/reference has arrived" if any(REFERENCE in o.needs for o in outputs) else "")


def matrix_topics():
    """The topics of the Float64MultiArray outputs that are not per frame, in the table's order."""
    return tuple(o.topic for o in OUTPUTS if o.message == FLOAT64_ARRAY and not o.per_frame)


def _shape_text(output):
    symbols = output.shape_symbols()
    sizes = ["10 nb" if s == "ny" else str(s) for s in symbols]
    if not sizes:
        return ""                                      # a scalar
    return f" ({sizes[0]},)" if len(sizes) == 1 else f" ({', '.join(sizes)})"


def _when(output):
    named = {VELOCITIES: "velocities", REFERENCE: "a ~/reference", OBSERVED: "an observed joint state",
             THRESHOLDS: "collision thresholds"}
    needs = ([output.switch] if output.switch else []) + [named[need] for need in output.needs]
    return f"[needs {', '.join(needs)}]" if needs else ""


def topics_table(width=116):
    """The table of the node's topics, as text: the inputs, every row of :data:`OUTPUTS`, the companions."""
    import textwrap
    lines = []

    def add(direction, topic, message, text):
        lines.append(f"    {direction:<4} {topic:<28} {message}")
        lines.extend(textwrap.wrap(text, width, initial_indent=" " * 9, subsequent_indent=" " * 9))

    for row in OTHER_TOPICS:
        add(*row)
    for output in OUTPUTS:
        method = output.method()
        text = f"{output.symbol}{_shape_text(output)}" + (f" = {method}" if method else "")
        text += "".join(f"; {part}" for part in (output.doc, _when(output)) if part)
        add("out", f"~/{output.topic.format(frame='<frame>')}", output.message, text)
    for row in COMPANION_TOPICS:
        add(*row)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(topics_table(), end="")
