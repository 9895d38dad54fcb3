"""robot-dynamics demo: adaptive control of the bundled 7-DoF arm carrying a payload it does not know.

The simulated arm (urdf/arm7.urdf plus a 5 kg payload beyond its flange, off the axis: 6.7x the wrist link, 3.4x
the wrist with its tool) tracks a smooth trajectory for a few seconds of simulated time under the library's
default adaptive controller (composite Slotine-Li, robot_dynamics.controllers.RelativeGains().slotine_li), whose
model is the description without the payload and with every body's parameters off by 20-50 %. The demo prints the
RMS tracking error of the first and the last second, how far the estimate pi_hat moved towards the true
parameters, the body masses estimated against the truth, and writes a plot of the joint errors, of the estimate's
torque error along the trajectory and of the payload body's mass estimate.

With ROS 2 (rclpy importable) the loop runs over loopback DDS: ``sim_node`` (lockstep) and
``adaptive_controller_node`` (and, with ``--dynamics-node``, ``dynamics_node``) as processes of their own,
exchanging joint states and effort commands, while the demo sends the trajectory and records the controller's
tracking error and estimate. Without it, or with ``--in-process``, the same library controller
(one ``update`` per tick, torque held between ticks) runs against the
library simulator in this process. Both modes run the same sampled closed loop (the simulator in lockstep with the
controller), so they print the same figures.

    robot-dynamics demo [--duration 6] [--plot closed_loop_demo.png] [--in-process] [--rate 1000]
                        [--initial-parameters params.yaml] [--view]

``--initial-parameters`` starts the controller from identified parameters (a file of ``robot-dynamics identify
--out`` or ``--ros-params``, see robot_dynamics.identification.logs.load_parameters) instead of the wrong guess.
``--view`` shows the loop in the browser as it runs (robot_dynamics.viewer, the view extra; in process, at real
time): the arm, and the estimate's inertia boxes beside the truth's, the payload body's growing toward it (LiveView).
"""
import argparse
import importlib
import os
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np

from . import load_urdf
from .bundled import bundled_urdf
from .calls.cache import cache_is_cold
from .controllers import (CompositeSlotineLi, InertiaMetric, PiecewiseTrajectory, RelativeGains, Simulator,
                          SumOfSines, TrackingRecord, with_payload)
from .precompile import in_workers

READY = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8])      # rad, a pose well inside arm7's joint limits
PAYLOAD_BODY = "link7"
PAYLOAD_COM = (0.03, -0.02, 0.107)                            # m, in link7's frame: beyond the flange, off its axis
PERIOD = 2.0                                                   # s, of the reference trajectory
SAMPLE = 0.01                                                  # s between the points of the JointTrajectory


@dataclass
class Scenario:
    """What the demo simulates and with which controller.

    urdf : the description's file; nominal : the description (what the controller reads); truth : the simulated
    arm (nominal plus a payload of payload_mass kg on the body payload_body, its centre of mass at payload_com in
    that body's frame); pi_hat0 : (10 nb,) the controller's initial estimate; reference : PiecewiseTrajectory
    through points every SAMPLE seconds (what a JointTrajectory carries); duration : s; rate : control ticks per
    second.
    """

    urdf: os.PathLike
    nominal: object
    truth: object
    pi_hat0: np.ndarray
    reference: PiecewiseTrajectory
    payload_body: str
    payload_com: tuple
    payload_mass: float
    duration: float
    rate: float


def make_scenario(duration, rate, payload_mass=5.0, seed=2, initial_parameters=None):
    """The arm, its payload, the controller's initial estimate and the reference trajectory: the estimate is
    wrong by 20-50 % per body, or read from the file ``initial_parameters`` (load_parameters)."""
    urdf = bundled_urdf("arm7")
    nominal = load_urdf(urdf)
    truth = with_payload(nominal, PAYLOAD_BODY, payload_mass, PAYLOAD_COM)
    rng = np.random.default_rng(seed)
    n = nominal.nv
    harmonics = np.array([1.0, 2.0, 3.0])                      # three harmonics of a 2 s period per joint
    sines = SumOfSines(READY, 0.4 * rng.uniform(0.5, 1.0, (n, 3)) / harmonics, 2 * np.pi / PERIOD * harmonics,
                       rng.uniform(0, 2 * np.pi, (n, 3)))
    times = np.arange(0.0, duration + 2 * SAMPLE, SAMPLE)
    points = sines(times)
    factors = 1 + rng.uniform(0.2, 0.5, nominal.nbodies) * rng.choice([-1.0, 1.0], nominal.nbodies)
    pi_hat0 = nominal.parameters * np.repeat(factors, 10)     # every body's parameters off by 20-50 %
    if initial_parameters is not None:
        from .identification import load_parameters
        pi_hat0 = load_parameters(initial_parameters, nominal)
    return Scenario(urdf, nominal, truth, pi_hat0, PiecewiseTrajectory(times, points.q, points.v, points.a),
                    PAYLOAD_BODY, PAYLOAD_COM, payload_mass, duration, rate)


def make_controller(sc):
    """The controller adaptive_controller_node builds from its default settings and ``initial_parameters``: the
    library's RelativeGains().slotine_li (composite.CompositeSlotineLi)."""
    return RelativeGains().slotine_li(sc.nominal, sc.pi_hat0, sc.reference(0.0).q)


class Progress:
    """A one-line progress bar of simulated time on stderr, redrawn at most every 0.1 s of wall time."""

    def __init__(self, total, stream=None, width=30):
        self.total, self.stream, self.width = total, stream or sys.stderr, width
        self._drawn = -1.0

    def __call__(self, t, force=False):
        now = time.monotonic()
        if not force and now - self._drawn < 0.1:
            return
        self._drawn = now
        done = min(max(t / self.total, 0.0), 1.0)
        bar = "#" * int(round(done * self.width))
        self.stream.write(f"\r  [{bar:<{self.width}}] {t:5.2f} / {self.total:.2f} s simulated")
        self.stream.flush()

    def close(self):
        self(self.total, force=True)
        self.stream.write("\n")
        self.stream.flush()


# --- the two ways of running the loop --------------------------------------------------------------------------

def run_in_process(sc, progress, view=None):
    """The closed loop in this process: the controller's update once per tick, the torque held over the tick (RK4);
    view(t, q, pi_hat) after each tick when given (LiveView)."""
    controller = make_controller(sc)
    dt = 1.0 / sc.rate
    t_, e_, e_dot_, pi_ = [], [], [], []

    def tick(t, q, v):
        ref = sc.reference(t)
        tau = controller.update(q, v, ref.q, ref.v, ref.a, dt if t_ else 0.0)   # the node's first step is 0 too
        t_.append(t), e_.append(ref.q - q), e_dot_.append(ref.v - v), pi_.append(controller.pi_hat)
        progress(t)
        if view is not None:
            view(t, q, pi_[-1])
        return tau

    start = sc.reference(0.0)
    Simulator(sc.truth, dt).run(start.q, start.v, tick, sc.duration, control_period=dt)
    return TrackingRecord(np.array(t_), np.array(e_), np.array(e_dot_), np.array(pi_))


class LiveView:
    """The loop in the browser (``--view``): the arm at the simulated state, the estimate pi_hat's inertia boxes
    (Viewer.show_parameters, "estimate") beside those of the truth (arm and payload, "truth"), and the payload
    body's estimated mass against the true one in the panel; redrawn at most ``rate`` times a second of wall time,
    the loop held back to real time when ``realtime`` (a tick runs faster than that: one could not watch it)."""

    def __init__(self, sc, port=8080, rate=30.0, realtime=True):
        from .viewer import Viewer
        self.viewer = Viewer(sc.nominal, sc.reference(0.0).q, source=sc.urdf, port=port)
        self.viewer.show_parameters(sc.truth.parameters, "truth")
        self.viewer.show_parameters(sc.pi_hat0, "estimate")
        self.mass = self.viewer.server.gui.add_markdown("")
        self.sc, self.period, self.realtime = sc, 1.0 / rate, realtime
        self.k = sc.nominal.body_names.index(sc.payload_body)
        self.began = self.next = None

    def __call__(self, t, q, pi_hat):
        now = time.monotonic()
        if self.began is None:
            self.began = self.next = now
        if now < self.next:
            return
        if self.realtime and t > now - self.began:
            time.sleep(t - (now - self.began))
        self.next = time.monotonic() + self.period
        self.viewer.update(q)
        self.viewer.show_parameters(pi_hat, "estimate")
        self.mass.content = (f"**{self.sc.payload_body}** mass at t = {t:.2f} s: estimate "
                             f"{pi_hat[10 * self.k]:.3f} kg, truth {self.sc.truth.parameters[10 * self.k]:.3f} kg  \n"
                             "inertia boxes: description blue, truth green, estimate yellow")


def open_view(sc):
    """A LiveView of the scenario; ImportError naming the extra without viser."""
    try:
        import viser  # noqa: F401  (the view extra; imported here to refuse --view before the loop starts)
    except ImportError as err:
        raise ImportError('--view needs the view extra (viser): pip install -e ".[view]"') from err
    return LiveView(sc)


@dataclass
class Summary:
    """The demo's figures: RMS errors (rad) of the first and last second; for pi_hat at the start and the end,
    the RMS torque error along the reference (N m), the inertia-metric distance to the truth and the body masses
    (kg); the torque error along the reference for the estimate at the times ``t_tau``, ``tau_error`` (N m)."""

    rms_first: float
    rms_last: float
    torque_error: tuple
    metric_distance: tuple
    masses: tuple
    t_tau: np.ndarray
    tau_error: np.ndarray


def summarize(sc, rec):
    """The Summary of the TrackingRecord ``rec`` of the Scenario ``sc``."""
    first = rec.t < 1.0
    last = rec.t >= sc.duration - 1.0
    rms = [float(np.sqrt(np.mean(np.sum(rec.e[w] ** 2, axis=1)))) for w in (first, last)]
    pi = sc.truth.parameters
    ref = sc.reference(np.arange(0.0, sc.duration, SAMPLE))
    Y = sc.nominal.regressor(ref.q, ref.v, ref.v, ref.a)                           # (K, n, 10 nb)
    G = InertiaMetric(pi).matrix()
    start, end = sc.pi_hat0, rec.pi_hat[-1]

    def torque_error(p):
        return float(np.sqrt(np.mean(np.sum((Y @ (p - pi)) ** 2, axis=1))))

    metric = tuple(float(np.sqrt((p - pi) @ G @ (p - pi))) for p in (start, end))
    masses = (pi[::10], start[::10], end[::10])
    every = max(1, int(round(SAMPLE * sc.rate)))
    return Summary(rms[0], rms[1], (torque_error(start), torque_error(end)), metric, masses, rec.t[::every],
                   np.array([torque_error(p) for p in rec.pi_hat[::every]]))


def report(sc, summary, out):
    s = summary
    out.write(f"tracking error, RMS over the joints: first second {s.rms_first:.6f} rad, last second "
              f"{s.rms_last:.6f} rad ({s.rms_first / s.rms_last:.1f}x smaller)\n")
    out.write("estimate pi_hat against the true parameters (arm + payload):          start        end\n")
    out.write(f"  torque error along the trajectory, RMS |Y (pi_hat - pi)|  {s.torque_error[0]:10.3f} "
              f"{s.torque_error[1]:10.3f} N m\n")
    out.write(f"  distance of all {sc.pi_hat0.size} parameters, inertia metric (relative)*   "
              f"{s.metric_distance[0]:10.3f} {s.metric_distance[1]:10.3f}\n")
    out.write("body masses [kg]        true   start     end   (end - true) / true\n")
    for k, name in enumerate(sc.nominal.body_names):
        tag = f" (+{sc.payload_mass:g} kg payload)" if name == sc.payload_body else ""
        error = (s.masses[2][k] - s.masses[0][k]) / s.masses[0][k]
        out.write(f"  {name:<18}{s.masses[0][k]:7.3f} {s.masses[1][k]:7.3f} {s.masses[2][k]:7.3f} {error:+8.1%}{tag}\n")
    out.write("* combinations of parameters that this motion does not excite cannot be learnt: they stay put\n")


def plot(sc, rec, summary, path, mode):
    """Joint errors, the estimate's torque error along the trajectory and the payload body's mass estimate, as a
    PNG at ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = sc.nominal.body_names.index(sc.payload_body)
    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True, constrained_layout=True)
    for j, name in enumerate(sc.nominal.joint_names):
        axes[0].plot(rec.t, rec.e[:, j], lw=0.8, label=name)
    axes[0].set_ylabel("e = q_d - q [rad]")
    axes[0].legend(ncol=7, fontsize=7, loc="upper right")
    axes[0].set_title(f"Adaptive control of arm7 with an unknown {sc.payload_mass:g} kg payload ({mode})")
    axes[1].semilogy(summary.t_tau, summary.tau_error)
    axes[1].set_ylabel("RMS |Y (pi_hat - pi)| [N m]")
    axes[2].plot(rec.t, rec.pi_hat[:, 10 * k], label="estimate")
    axes[2].axhline(sc.truth.parameters[10 * k], color="k", ls="--", label="true (with payload)")
    axes[2].set_ylabel(f"{sc.payload_body} mass [kg]")
    axes[2].set_xlabel("simulated time [s]")
    axes[2].legend(loc="lower right")
    fig.savefig(path, dpi=100)
    plt.close(fig)


# --- the command -----------------------------------------------------------------------------------------------

def warm_up(sc, dynamics=False, stream=None):
    """Load, or on a first run compile (and cache), every kernel the loop uses, here, before any node starts: the
    nodes then load them from the cache instead of compiling side by side.  On a first run (an empty kernel cache)
    the parts of warm_task are compiled at once on every core, as ``robot-dynamics compile`` does, and then
    loaded here."""
    if cache_is_cold() and (os.cpu_count() or 1) > 1:
        stream = stream or sys.stderr
        stream.write(f"  first run: compiling the kernels the demo uses on {os.cpu_count()} processes (once)\n")
        in_workers(warm_task, WARM_TASKS, stream=stream)
    q, z = sc.reference(0.0).q, np.zeros(sc.nominal.nv)
    sc.truth.forward_dynamics(q, z, z)
    model_calls(sc.nominal, q)
    if dynamics:
        sc.nominal.dynamics(q, z, z, z)


def model_calls(robot, q):
    """The nominal model's methods the loop's nodes call at start-up (regressor, mass matrix, inverse dynamics,
    momentum regressor), at q and zero velocities."""
    z = np.zeros(robot.nv)
    robot.regressor(q, z, z, z), robot.mass_matrix(q), robot.inverse_dynamics(q, z, z)
    robot.momentum_regressor(q, z)


WARM_TASKS = ("controller", "simulator", "model")       # the longest first: the controller's tick


def warm_task(name):
    """Compile (or load) one part of what the demo and its nodes run, in a worker process: the controller's update
    and its reference, the simulator's step, or the model's methods (those of warm_up, the nodes' check of a
    description and the summary's batch of regressors).  Returns (name, seconds)."""
    start = time.perf_counter()
    sc = make_scenario(2.0, 1000.0)
    q, z = sc.reference(0.0).q, np.zeros(sc.nominal.nv)
    if name == "controller":
        CompositeSlotineLi.compile_tick()           # first: the robot's kernels meanwhile in the model's worker
        controller = make_controller(sc)
        controller.update(q, z, q, z, z, 0.0), controller.update(q, z, q, z, z, 1e-3)
        sc.reference.evaluate(0.5, sc.reference(0.0))
    elif name == "simulator":
        Simulator(sc.truth, 1e-3).run(q, z, z, 2e-3, control_period=1e-3)
    else:
        robot, ones = sc.nominal, np.ones(sc.nominal.nv)
        model_calls(robot, q)
        robot.dynamics(q, ones, ones, ones), robot.dynamics(q, ones)
        robot.regressor(*np.stack([[q, z, z, z]] * 2, axis=1))
    return name, time.perf_counter() - start


def ros_unavailable():
    """Why the ROS mode cannot run here (a sentence), or None when it can."""
    try:
        for module in ("robot_dynamics.ros.adaptive_controller_node", "robot_dynamics.ros.sim_node"):  # rclpy, msgs
            importlib.import_module(module)
    except ImportError as err:
        return f"ROS 2 is not importable ({err}); pip install '.[ros]' for the ROS mode"
    return None


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robot-dynamics demo", description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=6.0, help="simulated seconds (default 6, at least 2)")
    parser.add_argument("--rate", type=float, default=1000.0, help="control ticks per second (default 1000)")
    parser.add_argument("--plot", default="closed_loop_demo.png", help="PNG file (default closed_loop_demo.png)")
    parser.add_argument("--in-process", action="store_true", help="run the loop in this process, without ROS 2")
    parser.add_argument("--dynamics-node", action="store_true", help="ROS mode: run dynamics_node alongside")
    parser.add_argument("--payload", type=float, default=5.0, help="payload mass in kg (default 5)")
    parser.add_argument("--view", action="store_true",
                        help="show the loop in the browser (pip install -e '.[view]'), in process, at real time")
    parser.add_argument("--initial-parameters", metavar="FILE",
                        help="start the controller from these parameters (robot-dynamics identify --out or "
                             "--ros-params) instead of a guess 20-50 %% off")
    args = parser.parse_args(argv)
    if args.duration < 2.0 or args.rate <= 0 or args.payload < 0:
        parser.error("--duration must be at least 2 s, --rate positive, --payload not negative")
    return args


def main(argv=None, out=None):
    """``robot-dynamics demo``: run the closed loop, print its figures (to ``out``, default stdout; the progress
    bar goes to stderr), write the plot. Returns the exit code."""
    import shutil
    import tempfile

    args = parse_args(sys.argv[1:] if argv is None else argv)
    began = time.monotonic()
    out = out or sys.stdout
    try:
        sc = make_scenario(args.duration, args.rate, args.payload, initial_parameters=args.initial_parameters)
    except (ValueError, OSError, ImportError) as err:     # ImportError: PyYAML for a .yaml file
        print(f"robot-dynamics demo: error: {err}", file=sys.stderr)
        return 2
    try:
        view = open_view(sc) if args.view else None
    except ImportError as err:
        print(f"robot-dynamics demo: error: {err}", file=sys.stderr)
        return 2
    why_not = "--in-process" if args.in_process else "--view" if args.view else ros_unavailable()
    mode = "in process" if why_not else "ROS 2 over loopback"
    out.write("robot-dynamics demo: adaptive control (composite Slotine-Li) of the bundled 7-DoF arm (arm7)\n")
    if args.initial_parameters:
        start = f";\n  the controller starts from the parameters in {args.initial_parameters}"
    else:
        start = " that the controller does not know,\n  whose initial estimates are off by 20-50 % per body"
    out.write(f"  {args.duration:g} s simulated, control at {args.rate:g} Hz; a {args.payload:g} kg payload on "
              f"{PAYLOAD_BODY}{start}\n")
    if why_not:
        out.write(f"  mode: in process, the library's controller against its simulator ({why_not})\n")
    else:
        out.write("  mode: ROS 2 over loopback: sim_node and adaptive_controller_node"
                  f"{' (and dynamics_node)' if args.dynamics_node else ''} exchanging messages\n")
    if view is not None:
        out.write(f"  view: {view.viewer.url} (at real time)\n")
    out.flush()
    warm_up(sc, dynamics=args.dynamics_node and not why_not)
    progress = Progress(args.duration)
    if why_not:
        rec, answered = run_in_process(sc, progress, view), None
    else:
        log_dir = tempfile.mkdtemp(prefix="robot_dynamics_demo_")
        try:
            from .ros.demo_loop import run_over_ros        # only robot_dynamics.ros imports rclpy
            rec, answered = run_over_ros(sc, progress, log_dir, args.dynamics_node)
        except (RuntimeError, KeyboardInterrupt) as err:
            progress.stream.write("\n")
            out.write(f"robot-dynamics demo: the ROS run failed: {err or 'interrupted'}\n")
            for name in sorted(os.listdir(log_dir)):
                with open(os.path.join(log_dir, name)) as f:
                    out.write(f"--- {name} (last lines)\n" + "".join(f.readlines()[-15:]))
            out.write(f"node logs in {log_dir}; robot-dynamics demo --in-process runs without ROS\n")
            return 1
        shutil.rmtree(log_dir, ignore_errors=True)
    progress.close()
    summary = summarize(sc, rec)
    report(sc, summary, out)
    ticks = int(round(args.duration * args.rate))
    if len(rec.t) < ticks:
        out.write(f"(the recorder received {len(rec.t)} of the {ticks} ticks; the figures are over those)\n")
    if answered is not None:
        out.write(f"dynamics_node published {answered} mass matrices alongside\n")
    plot(sc, rec, summary, args.plot, mode)
    out.write(f"plot: {args.plot}\n")
    out.write(f"finished in {time.monotonic() - began:.1f} s\n")
    if view is not None:
        out.write(f"view: {view.viewer.url} shows the last state until Ctrl-C\n")
        out.flush()
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            view.viewer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
