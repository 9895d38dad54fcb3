"""sim_node: a simulated robot behind ROS topics: effort commands in, joint states (and odometry) out, on its clock.

Run it as ``sim_node --ros-args -p urdf_path:=arm7.urdf -p payload_body:=link7 -p payload_mass:=2.0`` (pip
install), ``ros2 run robot_dynamics sim_node ...`` or ``python -m robot_dynamics.ros.sim_node --ros-args ...``.

Topics::

    in   effort_controller/commands   std_msgs/Float64MultiArray   efforts (n,) in the order of ``joints`` (parameter
                                                      ``command_topic``, relative); the layout is ignored, as
                                                      ros2_control's forward_command_controller ignores it
    out  joint_states    sensor_msgs/JointState       position, velocity and the effort applied over the last step,
                                                      in the order of ``joints``, stamped with the simulated time
    out  odom            nav_msgs/Odometry            floating base only: the root link's pose in ``odom_frame`` and
                                                      its twist in its own frame (child_frame_id =
                                                      frame_prefix + the root link)
    out  /clock          rosgraph_msgs/Clock          with ``publish_clock:=true``: the simulated time, for nodes
                                                      run with ``use_sim_time:=true`` (absolute, as every ROS
                                                      clock: one simulator per ROS domain publishes it)

Time. The simulated clock starts at 0 and stands still, the robot held in its initial state as by its brakes
(the state repeated every 0.1 s for controllers that start later), until the first command arrives. Then it
advances 1/``rate`` per published state; between two states the robot moves under the last command received,
held as a digital controller's output is held, integrated by ``substeps`` steps of RK4 on the configuration
manifold (robot_dynamics.controllers.Simulator). ``real_time_factor`` paces the clock against the wall clock (0:
as fast as it goes; when it falls behind, it slips instead of catching up in a burst). With ``lockstep:=true`` the
simulator waits, after each state, for a command (at most ``command_timeout`` seconds of wall time, then it
steps with the held command), so a slow or loaded controller sees the same closed loop as a fast one.

The simulated robot is the description plus an optional rigid payload (``payload_body``, ``payload_mass``,
``payload_com``, ``payload_inertia``) that a controller reading the same description does not know. No contacts,
joint limits or effort limits are simulated: a floating base floats. Commands that cannot be used (wrong length,
NaN) are skipped with a throttled warning and counted in ``skipped``; the last good command stays applied.
"""
import sys
import threading
import time

import numpy as np
from builtin_interfaces.msg import Time
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from rclpy.qos_overriding_options import QoSOverridingOptions
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics.controllers import Simulator, with_payload
from robot_dynamics.ros.conversions import BadMessage, as_float_array, sec_nanosec
from robot_dynamics.ros.description import describe
from robot_dynamics.ros.qos import OUTPUT_QOS
from robot_dynamics.ros.robot_node import COMMAND_TOPIC, RobotNode
from robot_dynamics.ros.runner import run

MAX_LAG = 0.1          # s of wall time the paced clock may fall behind before it slips
REPUBLISH = 0.1        # s of wall time between repetitions of the initial state until the first command


def time_msg(t):
    """Seconds -> builtin_interfaces/Time."""
    sec, nanosec = sec_nanosec(t)
    return Time(sec=sec, nanosec=nanosec)


class SimNode(RobotNode):
    """The simulator node; it simulates in a thread of its own from the moment its robot is known.

    Attributes
    ----------
    simulator : robot_dynamics.controllers.Simulator or None
        Integrates the simulated robot (the description plus the payload).
    commands : int
        Commands received and applied.
    t, q, v : float, (nq,), (nv,)
        The simulated time and state last published.
    """

    def __init__(self, node_name="sim_node", **kwargs):
        super().__init__(node_name, **kwargs)
        self._config = {}                          # the read-only parameters' values
        self.floating_base = self._declare("floating_base", False, "True: the root link is a free body (odom).")
        self._declare("command_topic", COMMAND_TOPIC, "Topic of the effort commands, in the order of joints.")
        self._declare("rate", 1000.0, "States published per second of simulated time [Hz]; the command hold.")
        self._declare("substeps", 1, "Integration steps per published state.")
        self._declare("method", "rk4", "Integrator: rk4 or euler (semi-implicit).")
        self._declare("real_time_factor", 1.0, "Simulated seconds per wall second; 0: as fast as it goes.")
        self._declare("lockstep", False, "After each state, wait (up to command_timeout) for a command.")
        self._declare("command_timeout", 1.0, "Wall seconds a lockstep simulator waits for a command.")
        self._declare("publish_clock", False, "Publish the simulated time on /clock.")
        self._declare("odom_frame", "odom", "frame_id of odom (floating base).")
        self._declare("frame_prefix", "", "Prefix of the robot's frames (robot_state_publisher's frame_prefix): "
                      "odom's child_frame_id is frame_prefix + the URDF root link.")
        self._declare("initial_positions", Parameter.Type.DOUBLE_ARRAY, "Joint positions at t = 0 in the order of "
                      "joints; default: the neutral configuration.")
        self._declare("initial_velocities", Parameter.Type.DOUBLE_ARRAY, "Joint velocities at t = 0 in the order of "
                      "joints; default: at rest.")
        self._declare("initial_base_pose", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                      "Floating base: [x, y, z, qx, qy, qz, qw] at t = 0.")
        self._declare("payload_body", "", "Body (URDF link of the model) carrying the payload; empty: none.")
        self._declare("payload_mass", 0.0, "Payload mass [kg].")
        self._declare("payload_com", [0.0, 0.0, 0.0], "Payload centre of mass in the body frame [m].")
        self._declare("payload_inertia", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                      "Payload rotational inertia about its CoM [ixx, iyy, izz, ixy, ixz, iyz] [kg m^2].")
        self.simulator = None
        self.commands = 0
        self.t, self.q, self.v = 0.0, None, None
        self._held = None                          # (n,) the command in force, joints order
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._thread = None
        self._state_pub = self.create_publisher(JointState, "joint_states", OUTPUT_QOS)
        self._odom_pub = self.create_publisher(Odometry, "odom", OUTPUT_QOS) if self.floating_base else None
        self._clock_pub = self.create_publisher(Clock, "/clock", OUTPUT_QOS) if self._param("publish_clock") else None
        self.create_subscription(Float64MultiArray, self._param("command_topic"), self._on_command, OUTPUT_QOS,
                                 qos_overriding_options=QoSOverridingOptions.with_default_policies())
        self._load_description()

    def _declare(self, name, default, text):
        """Declare a read-only parameter (``default`` a value, or a type for one without default); its value."""
        self._config[name] = self.declare_parameter(name, default, describe(text, read_only=True)).value
        return self._config[name]

    def _param(self, name):
        return self._config[name]

    # --- the simulated robot ---------------------------------------------------------------------------------

    def _install(self, robot):
        rate, substeps, method = self._param("rate"), self._param("substeps"), self._param("method")
        if not (rate > 0 and substeps >= 1 and self._param("real_time_factor") >= 0
                and self._param("command_timeout") > 0):
            raise ValueError("rate and command_timeout must be positive, substeps >= 1, real_time_factor >= 0")
        real = self._with_payload(robot)
        q, v = self._initial_state(robot)
        real.forward_dynamics(q, v, np.zeros(robot.nv))          # load (or compile) the kernel before the clock runs
        self.simulator = Simulator(real, 1.0 / rate / substeps, method)
        n = len(self.joints)
        self._held = np.zeros(n)
        self._state = JointState(name=list(self.joints))
        self._odom = Odometry(child_frame_id=self._param("frame_prefix") + robot.root_link)
        self._odom.header.frame_id = self._param("odom_frame")
        self._thread = threading.Thread(target=self._simulate, args=(q, v), name="simulation", daemon=True)
        self._thread.start()

    def _with_payload(self, robot):
        body = self._param("payload_body")
        if not body:
            return robot
        if body not in robot.body_names:
            raise ValueError(f"payload_body '{body}' is not a body of the model: {robot.body_names}")
        ixx, iyy, izz, ixy, ixz, iyz = self._param("payload_inertia")
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        mass = self._param("payload_mass")
        self.get_logger().info(f"payload of {mass} kg on {body}, unknown to anyone reading the description")
        return with_payload(robot, body, mass, self._param("payload_com"), inertia)

    def _initial_state(self, robot):
        """(q0 (nq,), v0 (nv,)) from the initial_* parameters; ValueError if they do not fit the robot."""
        q, v = robot.neutral().copy(), np.zeros(robot.nv)
        n, bq, bv = len(self.joints), robot.nq - len(self.joints), robot.nv - len(self.joints)
        for name, x, base in (("initial_positions", q, bq), ("initial_velocities", v, bv)):
            if self._param(name) is None:
                continue
            values = np.asarray(self._param(name), dtype=float)
            if values.shape != (n,) or not np.all(np.isfinite(values)):
                raise ValueError(f"parameter {name} must be {n} finite numbers in the order of joints")
            x[base + self.joint_index] = values
        if self.floating_base:
            pose = np.asarray(self._param("initial_base_pose"), dtype=float)
            if pose.shape != (7,) or not np.all(np.isfinite(pose)) or np.linalg.norm(pose[3:]) < 1e-9:
                raise ValueError("parameter initial_base_pose must be [x, y, z, qx, qy, qz, qw], a non-zero quaternion")
            q[:7] = np.concatenate([pose[:3], pose[3:] / np.linalg.norm(pose[3:])])
        return q, v

    # --- commands --------------------------------------------------------------------------------------------

    def _on_command(self, msg):
        if self._held is None:
            return
        tau = as_float_array(msg.data)
        if len(tau) != len(self._held):
            self._skip(BadMessage("command_length", f"command has {len(tau)} efforts; joints has {len(self._held)}"))
            return
        if not np.all(np.isfinite(tau)):
            self._skip(BadMessage("command_non_finite", "command has NaN or infinite efforts"))
            return
        with self._cond:
            self._held = tau.copy()
            self.commands += 1
            self._cond.notify_all()

    def _hold_until_first_command(self, republish):
        """Before any command the clock stands still (the robot held, as by its brakes); ``republish()`` repeats
        the initial state every REPUBLISH seconds for controllers that start later."""
        with self._cond:
            while self.commands == 0 and not self._stopping.is_set():
                if not self._cond.wait(REPUBLISH):
                    republish()

    def _wait_for_command(self, seen):
        """Lockstep: wait until a command newer than the ``seen``-th arrives, at most command_timeout (wall)."""
        with self._cond:
            self._cond.wait_for(lambda: self.commands > seen or self._stopping.is_set(), self._param("command_timeout"))

    # --- the simulation thread -------------------------------------------------------------------------------

    def _simulate(self, q, v):
        """Publish the initial state, hold until the first command; then step, publish, (wait,) until the node is
        destroyed or the state stops being finite."""
        sim, period, substeps = self.simulator, 1.0 / self._param("rate"), self._param("substeps")
        rtf, lockstep = self._param("real_time_factor"), self._param("lockstep")
        nb = 6 if self.floating_base else 0                      # base velocities ahead of the joints' in v
        tau, applied = np.zeros(sim.robot.nv), np.zeros(len(self.joints))
        self._publish(0.0, q, v, applied)
        self._hold_until_first_command(lambda: self._publish(0.0, q, v, applied))
        wall_next, k = time.monotonic(), 0
        while not self._stopping.is_set():
            if rtf > 0:
                self._stopping.wait(max(0.0, wall_next - time.monotonic()))
                wall_next = max(wall_next, time.monotonic() - MAX_LAG) + period / rtf
            with self._cond:
                applied = self._held.copy()
            tau[nb + self.joint_index] = applied
            try:
                for i in range(substeps):
                    q, v = sim.step(k * period + i * sim.dt, q, v, tau)
            except ValueError as err:
                self.get_logger().error(f"simulation stopped at t = {k * period:.3f} s: {err}")
                return
            k += 1
            with self._cond:
                seen = self.commands
            self._publish(k * period, q, v, applied)
            if lockstep:
                self._wait_for_command(seen)

    def _publish(self, t, q, v, applied):
        self.t, self.q, self.v = t, q, v
        stamp = time_msg(t)
        nj = len(self.joints)
        msg = self._state
        msg.header.stamp = stamp
        msg.position = q[len(q) - nj:][self.joint_index].tolist()
        msg.velocity = v[len(v) - nj:][self.joint_index].tolist()
        msg.effort = applied.tolist()
        self._state_pub.publish(msg)
        if self._odom_pub is not None:
            odom = self._odom
            odom.header.stamp = stamp
            p, o = odom.pose.pose.position, odom.pose.pose.orientation
            p.x, p.y, p.z, o.x, o.y, o.z, o.w = (float(x) for x in q[:7])
            lin, ang = odom.twist.twist.linear, odom.twist.twist.angular
            lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = (float(x) for x in v[:6])
            self._odom_pub.publish(odom)
        if self._clock_pub is not None:
            self._clock_pub.publish(Clock(clock=stamp))

    def destroy_node(self):
        """Stop the simulation thread, then destroy the node."""
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        super().destroy_node()


def main(args=None):
    """Console entry point: ``sim_node --ros-args -p name:=value ...``."""
    return run(SimNode, args)


if __name__ == "__main__":
    sys.exit(main())
