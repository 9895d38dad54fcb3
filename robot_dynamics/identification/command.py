"""What ``robot-dynamics identify``, ``identify-payload``, ``excite`` and ``simulate`` do (cli.py parses their
arguments).

    robot-dynamics excite URDF --out traj.npz [--duration 10] [--harmonics 5]
    robot-dynamics simulate URDF traj.npz --out log.csv [--rate 1000] [--noise 0.01] [--payload 2 ...]
    robot-dynamics identify URDF LOG [LOG...] [--base | --consistent] [--friction | --friction-model MODEL]
                            [--armature] [--held-out FRACTION] [--cutoff HZ] [--out params.yaml]
                            [--write-urdf OUT] [--ros-params FILE] [--drives FILE] [--plot fit.png]
    robot-dynamics identify-payload URDF LOG [LOG...] --body NAME [--cutoff HZ] [--drives FILE]
                            [--out payload.yaml] [--write-urdf OUT] [--ros-params FILE]

Each takes ``args`` (the argparse namespace) and ``out`` (the text stream of its report; progress goes to
stderr), returns the exit code, and raises ValueError or OSError for bad input, which the command line prints as
one line.
"""
import sys
import time
from pathlib import Path

import numpy as np

from .. import drive_files
from ..bundled import bundled_urdf
from ..friction import CoulombFriction, moving_coordinates
from ..loading import is_mjcf, joint_limits, load_mjcf, load_urdf
from .least_squares import friction_names
from .logs import Log, coordinate_names, read_log, save_parameters, save_ros_parameters, write_corrected_urdf, write_log


def robot_and_path(urdf, floating_base=False, drives=None):
    """(robot, path) of a URDF or MJCF file (rd.load tells them apart) or of a bundled robot's name (arm7,
    quadruped, ...); drives: load_urdf's.  An MJCF's base floats by its free joint, not by --floating-base."""
    path = Path(urdf)
    if not path.exists():
        try:
            path = bundled_urdf(urdf)
        except FileNotFoundError:
            raise FileNotFoundError(f"no URDF or MJCF file '{urdf}', nor a bundled robot of that name") from None
    if is_mjcf(path):
        if floating_base:
            raise ValueError(f"--floating-base: the base of the MJCF '{path}' floats when it has a free joint")
        return load_mjcf(path, drives=drives), path
    return load_urdf(path, floating_base=floating_base, drives=drives), path


def refuse_urdf_output(args, path):
    """--write-urdf writes into the URDF the robot came from: a ValueError for an MJCF model."""
    if getattr(args, "write_urdf", None) and is_mjcf(path):
        raise ValueError(f"--write-urdf writes into a URDF, and '{path}' is MJCF: save the parameters with --out "
                         f"or --ros-params")


class Progress:
    """progress(done, total) of ``what``, counted in ``unit``: a bar on stderr, redrawn at most every 0.1 s; close()
    ends its line."""

    def __init__(self, what, unit="samples", stream=None, width=30):
        self.what, self.unit, self.stream, self.width = what, unit, stream or sys.stderr, width
        self._drawn, self._last = -1.0, None

    def __call__(self, done, total):
        self._last = (done, total)
        now = time.monotonic()
        if now - self._drawn < 0.1 and done < total:
            return
        self._drawn = now
        bar = "#" * int(round(self.width * done / max(total, 1)))
        self.stream.write(f"\r  {self.what}: [{bar:<{self.width}}] {done:,} / {total:,} {self.unit}")
        self.stream.flush()

    def close(self):
        if self._last is not None:
            self.stream.write("\n")
            self.stream.flush()


# --- robot-dynamics excite ---------------------------------------------------------------------------------------

def excite(args, out):
    """An excitation trajectory within the model's joint limits (URDF or MJCF), saved to args.out (.npz)."""
    from .excitation import excitation_trajectory

    robot, path = robot_and_path(args.urdf, args.floating_base)
    if not str(args.out).endswith(".npz"):
        raise ValueError(f"--out '{args.out}': an excitation trajectory is saved as .npz")
    limits = joint_limits(path, robot)
    sys.stderr.write(f"  optimizing {args.harmonics} harmonics per joint over {args.duration:g} s ...\n")
    trajectory = excitation_trajectory(robot, limits=limits, duration=args.duration, harmonics=args.harmonics,
                                       rng=args.seed, **({} if args.maxiter is None else {"maxiter": args.maxiter}))
    trajectory.save(args.out)
    out.write(f"excitation trajectory of '{robot.model.name}': {args.duration:g} s, {args.harmonics} harmonics per "
              f"joint, within the model's position and velocity limits\n")
    out.write(f"condition number of the stacked base regressor: {trajectory.condition:.4g} (the random start: "
              f"{trajectory.initial_condition:.4g})\n")
    out.write(f"wrote {args.out}\n")
    return 0


# --- robot-dynamics simulate -------------------------------------------------------------------------------------

def simulate(args, out):
    """A log of the robot (with an optional payload) following the trajectory args.trajectory, saved to args.out."""
    from ..controllers import with_payload
    from .excitation import FourierTrajectory
    from .simulated import simulate_log

    if Path(args.out).suffix not in (".csv", ".npz"):
        raise ValueError(f"--out '{args.out}': write a log as .csv or .npz")
    robot, _ = robot_and_path(args.urdf, args.floating_base)
    trajectory = FourierTrajectory.load(args.trajectory)
    truth = robot
    if args.payload:
        body = args.payload_body or robot.body_names[-1]
        if body not in robot.body_names:
            raise ValueError(f"--payload-body '{body}' is not a body of '{robot.model.name}' "
                             f"({', '.join(robot.body_names)})")
        truth = with_payload(robot, body, args.payload, args.payload_com)
    duration = args.duration if args.duration is not None else trajectory.duration
    log = simulate_log(robot, trajectory, duration, rate=args.rate, pi=truth.parameters, noise=args.noise,
                       rng=np.random.default_rng(args.seed))
    if args.positions_only:                                    # as encoders and drives log: identify differentiates q
        log = Log(log.t, log.q, None, None, log.tau, log.joint_names)
    write_log(args.out, log)
    payload = f", a {args.payload:g} kg payload on {body}" if args.payload else ""
    logged = "t, q, tau" if args.positions_only else "t, q, v, a, tau"
    out.write(f"simulated '{robot.model.name}'{payload}: {len(log.t):,} samples ({logged}) over {duration:g} s at "
              f"{args.rate:g} Hz\nwrote {args.out}\n")
    return 0


# --- robot-dynamics identify -------------------------------------------------------------------------------------

def identify(args, out):
    """Identify the robot's parameters (and drives) from its logs; print the base parameters, residuals and
    condition number (and, with --friction-model all, the held-out RMS of each friction model); write the files
    asked for.  Returns (robot, path, result): the model, its file and the identification (the command line draws
    them with --view)."""
    from .estimate import identify as identify_logs

    for option, value, suffixes in (("--out", args.out, (".yaml", ".yml", ".json")),
                                    ("--ros-params", args.ros_params, (".yaml", ".yml")),
                                    ("--plot", args.plot, (".png",))):
        if value is not None and Path(value).suffix not in suffixes:
            raise ValueError(f"{option} '{value}': write {' or '.join(suffixes)}")
    model = friction_option(args)
    armature = getattr(args, "armature", False)
    robot, path = robot_and_path(args.urdf, args.floating_base)
    refuse_urdf_output(args, path)
    method = "consistent" if args.consistent else "wls"
    several = len(args.logs) > 1
    in_memory = model in ("all", "sigmoid", "stribeck")
    progress = Progress("identify", "logs" if several and not in_memory else "samples")
    comparison = None
    try:
        if several and args.topic is not None:
            raise ValueError("--topic: several logs are read by the Dask route, which reads bags' /joint_states")
        if several and not in_memory:                          # the Dask route: one task reads one file
            result = identify_logs(robot, list(args.logs), method=method, friction=model,
                                   armature=armature, chunks=args.chunks, progress=progress)
            t, q, v, a, tau = first_log(robot, args)
        else:                                                  # in memory, or in chunks with Dask (--chunks)
            logs = [samples(robot, log, args) for log in args.logs]
            t, q, v, a, tau = logs[0]
            data = [np.concatenate(x) for x in list(zip(*logs))[1:]]
            if model == "all":
                held_out = [np.concatenate(x) for x in list(zip(*logs[-1:]))[1:]] if several else None
                training = [np.concatenate(x) for x in list(zip(*logs[:-1]))[1:]] if several else data
                comparison = compare(robot, training, held_out, args.held_out, armature, method)
                model = comparison.best
            result = identify_logs(robot, *data, method=method, friction=model, armature=armature,
                                   chunks=args.chunks, progress=progress)
    finally:
        progress.close()
    if comparison is not None:
        out.write(comparison.table() + f"\nidentified with the {model} model (lowest held-out RMS), on every "
                  "sample\n\n")
    report(robot, result, args.logs, out)
    write_files(args, out, robot, path, result, (t, q, v, a, tau))
    return robot, path, result


def friction_option(args):
    """The friction model asked for: --friction (viscous + Coulomb) or --friction-model (a name, "none" for no
    friction: least_squares.friction_model); None for neither."""
    model = getattr(args, "friction_model", None)
    if args.friction:
        if model not in (None, "coulomb"):
            raise ValueError(f"--friction is --friction-model coulomb; give one of them, not --friction-model {model}")
        return "coulomb"
    return model


def first_log(robot, args):
    """(t, q, v, a, tau) of the first log as read, for the plot."""
    log = read_log(args.logs[0], robot, topic=args.topic)
    return log.t, log.q, log.v, log.a, log.tau


def samples(robot, path, args):
    """(t, q, v, a, tau) of a log, v and a from q when not logged (zero-phase filtered; the filter's start-up at
    the ends left out, as identify(t=...) does)."""
    from .signals import interior_derivatives

    log = read_log(path, robot, topic=args.topic)
    t, q, v, a, tau = log.t, log.q, log.v, log.a, log.tau
    if tau is None:
        raise ValueError(f"log '{path}' has no torques (tau_<joint> columns, effort, or tau)")
    if v is None or a is None:
        keep, q, v, a = interior_derivatives(t, q, args.cutoff)
        t, tau = t[keep], tau[keep]
    return t, q, v, a, tau


def compare(robot, training, held_out, fraction, armature, method):
    """compare_friction_models on the training samples, judged on held_out (None: the last fraction of them)."""
    from .comparison import compare_friction_models

    sys.stderr.write("  identifying each friction model on the training samples ...\n")
    return compare_friction_models(robot, *training, held_out=held_out, fraction=fraction, armature=armature,
                                   method=method)


def write_files(args, out, robot, path, result, log):
    """The files asked for: parameters (--out), ROS 2 params (--ros-params), the corrected URDF (--write-urdf),
    the drives (--drives), the plot (--plot).  The identified drives go into the ROS params and the URDF
    (<dynamics>) too (drive_files).  Those files hold armature, damping and friction only:
    an offset, sigmoid or Stribeck model goes there as its viscous coefficient and Coulomb level (friction.py),
    and whole into the parameters file (--out)."""
    drives = result.armature is not None or result.model is not None
    identified = result.identified_robot(robot) if drives else None
    summarized = ""
    if identified is not None and identified.model.drives.model is not None:
        summarized = f"; the {result.model.name} model as its viscous and Coulomb levels"
        identified = identified.with_drives(model=CoulombFriction(identified.damping, identified.friction))
    written = []
    if args.out:
        save_parameters(args.out, robot, result)
        written.append(f"parameters {args.out}")
    if args.ros_params:
        extra = drive_files.drives_parameters(identified) if drives else None
        save_ros_parameters(args.ros_params, robot, result.parameters, extra)
        written.append(f"ROS 2 params {args.ros_params}" + (f" (with the drives{summarized})" if extra else ""))
    if args.write_urdf:
        write_corrected_urdf(path, args.write_urdf, robot, result.parameters)
        if drives:
            drive_files.write_urdf_dynamics(args.write_urdf, args.write_urdf, identified)
        written.append(f"corrected URDF {args.write_urdf}"
                       + (f" (with the drives' <dynamics>{summarized})" if drives else ""))
    if getattr(args, "drives", None) is not None:
        drive_files.write_drives(identified if drives else robot, args.drives)
        written.append(f"drives {args.drives}" + (f" ({summarized[2:]})" if summarized else ""))
    if args.plot:
        t, q, v, a, tau = log
        if v is None or a is None:
            raise ValueError(f"--plot: log '{args.logs[0]}' has no v and a")
        plot(args.plot, robot, result, t, tau, result.predict(robot, q, v, a), args.logs[0])
        written.append(f"plot {args.plot}")
    if written:
        out.write("wrote " + ", ".join(written) + "\n")


def report(robot, result, logs, out):
    """The table of base parameters (value, standard deviation), residual RMS per joint and condition number."""
    kind = {"ols": "ordinary least squares", "wls": "weighted least squares",
            "consistent": "physically consistent least squares"}[result.method]
    out.write(f"robot '{robot.model.name}': {len(logs)} log{'s' * (len(logs) > 1)}, {result.n_samples:,} samples; "
              f"{kind} on {result.base.rank} base parameters (of {result.base.p})\n\n")
    out.write(f"{'value':>13}  {'std':>10}  {'std %':>8}  base parameter\n")
    for name, value, std in zip(result.base.names, result.base_values, result.base_std):
        relative = 100 * std / abs(value) if value else np.inf
        relative = f"{relative:8.2f}" if relative < 1000 else f"{'>1000':>8}"
        out.write(f"{value:13.6g}  {std:10.3g}  {relative}  {name}\n")
    if result.held:
        out.write(f"\nheld at their prior (the data cannot separate them from the inertias): "
                  f"{', '.join(result.held)}\n")
    model = result.model
    if model is not None and model.nonlinear:
        out.write(f"\n{model.name} friction's nonlinear parameters (value, std)\n")
        for name, values, stds in zip(friction_names(robot), model.nonlinear_values().T[moving_coordinates(robot)],
                                      result.nonlinear_std):
            out.write(f"  {name}  " + "  ".join(f"{symbol} = {x:.6g} ({s:.3g})" for symbol, x, s
                                                in zip(model.nonlinear_symbols, values, stds)) + "\n")
    write_residuals(out, robot, result.residual_rms)
    out.write(f"\ncondition number of the base regressor: {result.condition:.4g}\n")


def write_residuals(out, robot, residual_rms):
    """The residual RMS per joint, as a table to ``out``."""
    names = coordinate_names(robot)
    width = max(len(name) for name in names)
    out.write("\nresidual RMS per joint\n")
    for name, rms in zip(names, residual_rms):
        out.write(f"  {name:<{width}}  {rms:10.4g}\n")


def plot(path, robot, result, t, tau, predicted, log):
    """Measured against predicted torque per joint, as a PNG at ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = coordinate_names(robot)
    fig, axes = plt.subplots(len(names), 1, figsize=(9, 1.4 * len(names) + 1), sharex=True, constrained_layout=True,
                             squeeze=False)
    for j, (ax, name) in enumerate(zip(axes[:, 0], names)):
        ax.plot(t, tau[:, j], color="0.6", lw=1.2, label="measured")
        ax.plot(t, predicted[:, j], color="C0", lw=0.8, label="predicted")
        ax.set_ylabel(name, fontsize=8)
    axes[0, 0].legend(loc="upper right", fontsize=8, ncol=2)
    axes[0, 0].set_title(f"{robot.model.name}: measured and predicted torque ({result.method}), {Path(log).name}")
    axes[-1, 0].set_xlabel("t [s]")
    fig.savefig(path, dpi=90)
    plt.close(fig)


# --- robot-dynamics identify-payload -----------------------------------------------------------------------------

def identify_payload(args, out):
    """The payload on args.body from logs of the robot carrying it (payload.identify_payload; the URDF, and the
    drives file if given, describe the robot without it): print mass, CoM and inertia with their standard
    deviations, the residual RMS per joint and the condition number; write the files asked for: the payload as
    YAML or JSON (--out), the URDF with the payload as a fixed link (--write-urdf), the adaptive controller's
    starting estimate as a ROS 2 params file (--ros-params)."""
    from .payload import identify_payload as identify_logs
    from .payload import save_payload, write_payload_urdf

    for option, value, suffixes in (("--out", args.out, (".yaml", ".yml", ".json")),
                                    ("--ros-params", args.ros_params, (".yaml", ".yml"))):
        if value is not None and Path(value).suffix not in suffixes:
            raise ValueError(f"{option} '{value}': write {' or '.join(suffixes)}")
    robot, path = robot_and_path(args.urdf, args.floating_base, args.drives)
    refuse_urdf_output(args, path)
    logs = [samples(robot, log, args) for log in args.logs]
    q, v, a, tau = (np.concatenate(x) for x in list(zip(*logs))[1:])
    result = identify_logs(robot, q, v, a, tau, args.body)
    payload_report(robot, result, args.logs, out)
    written = []
    if args.out:
        save_payload(args.out, result, robot)
        written.append(f"payload {args.out}")
    if args.write_urdf:
        write_payload_urdf(path, args.write_urdf, result)
        written.append(f"URDF with the payload {args.write_urdf}")
    if args.ros_params:
        save_ros_parameters(args.ros_params, robot, result.starting_estimate(robot))
        written.append(f"ROS 2 params {args.ros_params} (the adaptive controller's starting estimate)")
    if written:
        out.write("wrote " + ", ".join(written) + "\n")
    return 0


def payload_report(robot, result, logs, out):
    """Mass, CoM, inertia about the CoM (value, standard deviation), the parameters not identified, residual RMS per
    joint and condition number."""
    fit = "physically consistent (the weighted fit was not)" if result.constrained else "weighted least squares"
    out.write(f"payload on '{result.frame}' (body '{result.body}') of robot '{robot.model.name}': {len(logs)} "
              f"log{'s' * (len(logs) > 1)}, {result.n_samples:,} samples; {fit}; in the frame of '{result.frame}'\n\n")
    out.write(f"{'value':>13}  {'std':>10}\n")
    rows = [("mass [kg]", result.mass, result.mass_std)]
    rows += [(f"com {x} [m]", c, s) for x, c, s in zip("xyz", result.com, result.com_std)]
    I, I_std = result.inertia, result.inertia_std
    rows += [(f"I{key[1:]} [kg m^2] about the CoM", I[i, j], I_std[i, j])
             for key, (i, j) in (("ixx", (0, 0)), ("iyy", (1, 1)), ("izz", (2, 2)), ("ixy", (0, 1)),
                                 ("ixz", (0, 2)), ("iyz", (1, 2)))]
    for name, value, std in rows:
        out.write(f"{value:13.6g}  {std:10.3g}  {name}\n")
    if result.not_identified:
        out.write(f"\nnot identified (the inertia about the CoM held at its prior): "
                  f"{', '.join(result.not_identified)}\n")
    write_residuals(out, robot, result.residual_rms)
    out.write(f"\ncondition number of the payload's regressor: {result.condition:.4g}\n")
