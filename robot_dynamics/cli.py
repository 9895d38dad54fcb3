"""robot-dynamics: inspect a URDF robot, or print its M, C, g, CoM, CoM Jacobian and Slotine-Li regressor.

    robot-dynamics inspect MODEL [--floating-base] [--mimic]
    robot-dynamics compute MODEL [--floating-base] [--mimic] [--q ...] [--v ...] [--v-ref ... --a-ref ...] [--json]
                                [--derivatives [--a ...]]
    robot-dynamics demo [--in-process] [--duration S] [--plot PATH] [--view] ...   (the adaptive control demo)
    robot-dynamics view MODEL [--floating-base] [--q ...] [--port 8080] [--ros]   (the robot in the browser)
    robot-dynamics compile [--jobs N]              (every kernel built now, in parallel: robot_dynamics.precompile)
    robot-dynamics excite URDF --out traj.npz [--duration 10] [--harmonics 5]       (identification, issue 15)
    robot-dynamics simulate URDF traj.npz --out log.csv [--noise 0.01] [--payload 2]
    robot-dynamics identify URDF LOG [LOG...] [--base | --consistent] [--friction | --friction-model MODEL]
                            [--armature] [--cutoff HZ] [--out FILE] [--write-urdf OUT] [--ros-params FILE]
                            [--drives FILE] [--plot fit.png] [--floating-base] [--chunks N] [--view]
    robot-dynamics identify-payload URDF LOG [LOG...] --body NAME [--out payload.yaml] [--write-urdf OUT]
                            [--ros-params FILE] [--drives FILE] [--cutoff HZ]

MODEL is a URDF file, an MJCF file (.xml or .mjcf: MuJoCo compiles it, robot_dynamics.load_mjcf) or the name of a
bundled robot; URDF is a URDF file or a bundled robot's name (arm7, planar_2link, quadruped, torso_two_arm,
humanoid).  A file ending in .xacro is expanded with xacro (``--xacro-arg name:=value``, repeatable).
"""
import argparse
import json
import sys
import threading
from pathlib import Path

import numpy as np

from . import load_mjcf, load_urdf
from .loading import is_mjcf
from .bundled import bundled_urdf
from .identification.least_squares import FRICTION_MODELS
from .spatial import PARAMETER_NAMES


def _numbers(text):
    """'0.1,0.2 0.3' or ['0.1', '0.2'] -> array; commas and spaces both separate."""
    if isinstance(text, list):
        text = " ".join(text)
    return np.array([float(x) for x in text.replace(",", " ").split()])


def _source(args):
    """args.urdf as a file or XML text, or the path of the bundled robot it names."""
    return args.urdf if Path(args.urdf).exists() or args.urdf.lstrip().startswith("<") else bundled_urdf(args.urdf)


def _load(args):
    """The robot of args.urdf: a URDF or MJCF file or text (told as robot_dynamics.load tells them) or a bundled
    robot's name.  An MJCF's gravity is its own unless --gravity is given; its free joint is its floating
    base, so --floating-base, --strict-inertia and --xacro-arg are URDF options only."""
    source = _source(args)
    gravity = None if args.gravity is None else tuple(args.gravity)
    if is_mjcf(source):
        given = [option for option, value in (("--floating-base", args.floating_base),
                                              ("--strict-inertia", args.strict_inertia),
                                              ("--xacro-arg", args.xacro_arg)) if value]
        if given:
            raise ValueError(f"{', '.join(given)}: URDF options, not for an MJCF model (its free joint, "
                             f"if any, is its floating base)")
        return load_mjcf(source, gravity=gravity, mimic=args.mimic)
    return load_urdf(source, floating_base=args.floating_base, mimic=args.mimic,
                     gravity=(0.0, 0.0, -9.81) if gravity is None else gravity,
                     strict_inertia=args.strict_inertia, xacro_args=args.xacro_arg or None)


def inspect(args, out):
    robot = _load(args)
    m = robot.model
    out.write(f"robot '{m.name}': {robot.nbodies} moving bodies, nq = {robot.nq}, nv = {robot.nv}, "
              f"{'floating' if robot.floating_base else 'fixed'} base, root link '{robot.root_link}'\n")
    out.write(f"total mass of the moving bodies: {robot.total_mass:.6g} kg\n\n")
    header = f"{'body':<28}{'parent':<28}{'joint':<30}{'type':<11}{'q':>8}{'v':>8}"
    out.write(header + "\n" + "-" * len(header) + "\n")
    for j in m.joints:
        parent = m.parent[j.body]
        q = f"{j.idx_q}:{j.idx_q + j.nq}" if j.mimic is None else "mimic"
        v = f"{j.idx_v}:{j.idx_v + j.nv}" if j.mimic is None else j.mimic
        out.write(f"{robot.body_names[j.body]:<28}{'world' if parent < 0 else robot.body_names[parent]:<28}"
                  f"{j.name:<30}{j.type:<11}{q:>8}{v:>8}\n")
    out.write("\ninertial parameters pi_k (paper 002, eq. (9); inertia about the body origin)\n")
    out.write(f"{'body':<28}" + "".join(f"{n:>12}" for n in PARAMETER_NAMES) + "\n")
    for name, pi in zip(robot.body_names, m.pi):
        out.write(f"{name:<28}" + "".join(f"{x:12.5g}" for x in pi) + "\n")


def compute(args, out):
    robot = _load(args)
    q = robot.neutral() if args.q is None else _numbers(args.q)
    v = np.zeros(robot.nv) if args.v is None else _numbers(args.v)
    refs = (None, None) if args.v_ref is None else (_numbers(args.v_ref), _numbers(args.a_ref))
    d = robot.dynamics(q, v, *refs)
    result = {"joint_names": robot.joint_names, "body_names": robot.body_names, "q": q, "v": v,
              "M": d.M, "C": d.C, "g": d.g, "com": d.com, "J_com": d.J_com}
    if d.Y is not None:
        result.update(v_ref=refs[0], a_ref=refs[1], Y=d.Y, parameters=robot.parameters)
    if args.derivatives:                          # along q' = v, v' = a (a = 0 unless given: Mdot, gdot need v only)
        a = np.zeros(robot.nv) if args.a is None else _numbers(args.a)
        t = robot.time_derivatives(q, v, a)
        result.update(M_dot=t.M_dot, g_dot=t.g_dot, J_com_dot=t.J_com_dot)
        if args.a is not None:
            result.update(a=a, C_dot=t.C_dot)
    if args.json:
        json.dump({k: (x.tolist() if isinstance(x, np.ndarray) else x) for k, x in result.items()}, out, indent=1)
        out.write("\n")
        return
    np.set_printoptions(precision=5, suppress=True, linewidth=160, threshold=100000)
    out.write(f"{robot!r}\ncoordinates (q order): {', '.join(robot.joint_names)}\n\n")
    for key, title in (("q", "q"), ("v", "v"), ("M", "M(q): mass matrix"), ("C", "C(q, v): Coriolis matrix"),
                       ("g", "g(q): gravity torques"), ("com", "centre of mass (world)"),
                       ("J_com", "J_com(q): CoM Jacobian"), ("Y", "Y(q, v, v_ref, a_ref): Slotine-Li regressor"),
                       ("M_dot", "dM/dt along q' = v (= C + C^T)"), ("g_dot", "dg/dt along q' = v"),
                       ("J_com_dot", "dJ_com/dt along q' = v"), ("C_dot", "dC/dt along q' = v, v' = a")):
        if key in result:
            out.write(f"{title}\n{result[key]}\n\n")
    if d.Y is not None:
        out.write(f"check: |Y pi - (M a_ref + C v_ref + g)| = "
                  f"{np.abs(d.Y @ robot.parameters - (d.M @ refs[1] + d.C @ refs[0] + d.g)).max():.3g}\n")


def view(args, out):
    """Serve the robot's page (robot_dynamics.viewer) until interrupted; its URL goes to `out`."""
    view_extra("view")
    from .viewer import Viewer
    robot, source = _load(args), _source(args)
    q = None if args.q is None else _numbers(args.q)
    viewer = Viewer(robot, q, source=source, port=args.port)
    print(f"robot-dynamics view: {viewer.url} (Ctrl-C stops)", file=out, flush=True)
    try:
        if args.ros:                          # only robot_dynamics.ros imports rclpy
            from .ros.view_node import follow
            follow(viewer)
        else:
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        viewer.close()


def view_extra(what):
    """ImportError naming the view extra when viser is not installed."""
    try:
        import viser  # noqa: F401  (the view extra)
    except ImportError as err:
        raise ImportError(f'{what} needs the view extra (viser): pip install -e ".[view]"') from err


def show_identified(robot, path, result, out, wait=True):
    """The robot's page with the identified parameters' inertia boxes ("identified") beside the model file's, until
    Ctrl-C (wait); returns the Viewer."""
    from .viewer import Viewer
    viewer = Viewer(robot, source=path)
    impossible = viewer.show_parameters(result.parameters, "identified")
    print(f"robot-dynamics identify: the identified inertias (green) beside the URDF's (blue) at {viewer.url}"
          + (f"; no solid has the identified inertia of {', '.join(impossible)}" if impossible else "")
          + (" (Ctrl-C stops)" if wait else ""), file=out, flush=True)
    if wait:
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            viewer.close()
    return viewer


def main(argv=None, out=None):
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="robot-dynamics", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, helptext in (("inspect", "bodies, DoFs, joint types, total mass, parameters"),
                           ("compute", "M, C, g, com, J_com and (with references) Y at one state"),
                           ("view", "the robot, its frames and inertias in the browser (pip install -e '.[view]')")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("urdf", help="URDF file (a .xacro file is expanded), MJCF file (.xml, .mjcf), or the name of "
                                    "a bundled robot")
        p.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE",
                       help="argument of a .xacro file (repeatable)")
        p.add_argument("--floating-base", action="store_true", help="free 6-DoF joint between world and root")
        p.add_argument("--mimic", action="store_true", help="mimic joints follow their masters (not DoFs)")
        p.add_argument("--strict-inertia", action="store_true", help="refuse physically impossible inertias")
        p.add_argument("--gravity", type=float, nargs=3, metavar=("GX", "GY", "GZ"),
                       help="world frame (default: 0 0 -9.81 for a URDF, the model's for an MJCF)")
        if name == "compute":
            for arg, what in (("--q", "configuration (nq; default: neutral)"), ("--v", "velocity (nv; default 0)"),
                              ("--v-ref", "reference velocity for the regressor (nv)"),
                              ("--a-ref", "reference acceleration for the regressor (nv)")):
                p.add_argument(arg, nargs="+", help=what + ", numbers separated by spaces or commas")
            p.add_argument("--json", action="store_true", help="print JSON instead of text")
            p.add_argument("--derivatives", action="store_true",
                           help="also the time derivatives along the motion: Mdot, gdot, J_comdot (and Cdot with --a)")
            p.add_argument("--a", nargs="+", help="acceleration (nv) for Cdot with --derivatives")
        if name == "view":
            p.add_argument("--q", nargs="+", help="configuration (nq; default: neutral)")
            p.add_argument("--port", type=int, default=8080, help="port of the page (the next free one if taken)")
            p.add_argument("--ros", action="store_true",
                           help="follow joint_states (and odom) and draw dynamics_node's ~/external_wrench/* "
                                "(robot_dynamics.ros.view_node)")
    add_identification_parsers(sub)
    p = sub.add_parser("compile", help="build every kernel for this machine now (numba's cache), in parallel; "
                       "delete the cache folders older sources left beside the package")
    p.add_argument("--jobs", type=int, help="worker processes (default: the number of cores)")
    demo = sub.add_parser("demo", add_help=False,
                          help="closed-loop Slotine-Li demo on the bundled 7-DoF arm (robot-dynamics demo --help)")
    demo.add_argument("demo_args", nargs=argparse.REMAINDER)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["demo"]:                      # the demo parses its own options (and --help)
        from .demo import main as demo_main
        return demo_main(argv[1:])
    args = parser.parse_args(argv)
    if args.command == "compute" and (args.v_ref is None) != (args.a_ref is None):
        parser.error("--v-ref and --a-ref go together")
    if args.command == "compute" and args.a is not None and not args.derivatives:
        parser.error("--a is the acceleration of --derivatives")
    if args.command in ("identify", "identify-payload", "excite", "simulate"):
        from .identification import command
        run = getattr(command, args.command.replace("-", "_"))
    elif args.command == "compile":
        from .precompile import main as run
    else:
        run = {"inspect": inspect, "compute": compute, "view": view}[args.command]
    try:
        if getattr(args, "view", False) and args.command == "identify":
            view_extra("identify --view")          # refused before the identification, not after
        done = run(args, out)
        if getattr(args, "view", False) and args.command == "identify":
            show_identified(*done, out)
    except (ValueError, OSError, ImportError) as exc:             # URDFError is a ValueError; an ImportError
        # names an optional package missing (the identify extra: Dask, rosbags, PyYAML)
        print(f"robot-dynamics: error: {exc}", file=sys.stderr)
        return 2
    return 0


def add_identification_parsers(sub):
    """The subcommands excite, simulate, identify and identify-payload (robot_dynamics.identification.command runs
    them)."""
    urdf_help = "URDF or MJCF file (.xml, .mjcf), or the name of a bundled robot (arm7, ...)"
    p = sub.add_parser("excite", help="an excitation trajectory within the model's joint limits")
    p.add_argument("urdf", help=urdf_help)
    p.add_argument("--out", required=True, help="the trajectory's .npz file")
    p.add_argument("--duration", type=_positive, default=10.0, help="period of the trajectory in s (default 10)")
    p.add_argument("--harmonics", type=int, default=5, help="Fourier harmonics per joint (default 5)")
    p.add_argument("--seed", type=int, default=0, help="seed of the optimizer's start (default 0)")
    p.add_argument("--maxiter", type=int, help="optimizer iterations (0: the random start; default: the library's)")
    p.add_argument("--floating-base", action="store_true", help="free 6-DoF joint between world and root")
    p = sub.add_parser("simulate", help="a log of the robot following a trajectory (torques by inverse dynamics)")
    p.add_argument("urdf", help=urdf_help)
    p.add_argument("trajectory", help="a trajectory of robot-dynamics excite (.npz)")
    p.add_argument("--out", required=True, help="the log: .csv or .npz")
    p.add_argument("--duration", type=_positive, help="s (default: the trajectory's period)")
    p.add_argument("--rate", type=_positive, default=1000.0, help="samples per second (default 1000)")
    p.add_argument("--noise", type=float, metavar="FRACTION",
                   help="torque noise of this standard deviation relative to each torque's range (0.01: 1 %%), "
                        "positions quantized by a 16-bit encoder")
    p.add_argument("--payload", type=float, default=0.0, help="a payload of this mass (kg) on --payload-body")
    p.add_argument("--payload-body", help="the payload's body (default: the last)")
    p.add_argument("--payload-com", type=float, nargs=3, default=(0.0, 0.0, 0.0), metavar=("X", "Y", "Z"),
                   help="the payload's centre of mass in the body's frame (m)")
    p.add_argument("--positions-only", action="store_true",
                   help="log t, q and tau only, as encoders and drives do (identify then differentiates q)")
    p.add_argument("--seed", type=int, default=0, help="seed of the noise (default 0)")
    p.add_argument("--floating-base", action="store_true", help="free 6-DoF joint between world and root")
    p = sub.add_parser("identify", help="inertial parameters (and friction) from logs; a corrected URDF")
    p.add_argument("urdf", help=urdf_help)
    p.add_argument("logs", nargs="+", metavar="LOG", help="log files: .npz, .csv, or ROS 2 bags (.db3, .mcap, "
                                                          "directory) of sensor_msgs/JointState on /joint_states")
    method = p.add_mutually_exclusive_group()
    method.add_argument("--base", action="store_true", help="weighted least squares on the base parameters "
                                                            "(the default)")
    method.add_argument("--consistent", action="store_true", help="physically consistent least squares of all "
                                                                  "parameters")
    p.add_argument("--friction", action="store_true", help="identify viscous and Coulomb friction per joint too "
                                                           "(--friction-model coulomb)")
    p.add_argument("--friction-model", choices=(*FRICTION_MODELS, "all"),
                   help="the joints' friction model (robot_dynamics.friction); all: identify each, print their "
                        "held-out RMS and keep the lowest")
    p.add_argument("--armature", action="store_true", help="identify each joint's armature (rotor inertia) too")
    p.add_argument("--held-out", type=float, default=0.25, metavar="FRACTION",
                   help="with --friction-model all and one log: the share of its samples held out, at its end "
                        "(default 0.25); with several logs the last one is held out")
    p.add_argument("--drives", metavar="FILE", help="write the identified drives (armature, friction model) with "
                                                    "robot_dynamics.drive_files")
    p.add_argument("--cutoff", type=_positive, metavar="HZ", help="cut-off of the filter that differentiates "
                                                                  "positions when v and a are not logged")
    p.add_argument("--out", metavar="FILE", help="write the parameters: .yaml, .yml or .json")
    p.add_argument("--write-urdf", metavar="OUT", help="write the URDF with its <inertial> blocks corrected")
    p.add_argument("--ros-params", metavar="FILE", help="write a ROS 2 params file giving adaptive_controller_node "
                                                        "initial_parameters")
    p.add_argument("--plot", metavar="PNG", help="plot measured and predicted torques of the first log")
    p.add_argument("--topic", help="the JointState topic of a ROS 2 bag (default /joint_states)")
    p.add_argument("--floating-base", action="store_true", help="free 6-DoF joint between world and root")
    p.add_argument("--chunks", type=int, metavar="N", help="reduce the logs with Dask, N samples per task")
    p.add_argument("--view", action="store_true", help="show the identified inertias beside the URDF's in the "
                                                       "browser until Ctrl-C (pip install -e '.[view]')")
    p = sub.add_parser("identify-payload", help="a payload's mass, CoM and inertia from logs of the robot carrying "
                                                "it (the URDF describes the robot without it)")
    p.add_argument("urdf", help=urdf_help)
    p.add_argument("logs", nargs="+", metavar="LOG", help="log files: .npz, .csv, or ROS 2 bags (.db3, .mcap, "
                                                          "directory) of sensor_msgs/JointState on /joint_states")
    p.add_argument("--body", required=True, help="the body carrying the payload, or a link fixed to it (the "
                                                 "results are in that link's frame)")
    p.add_argument("--out", metavar="FILE", help="write the payload: .yaml, .yml or .json")
    p.add_argument("--write-urdf", metavar="OUT", help="write the URDF with the payload as a fixed link")
    p.add_argument("--ros-params", metavar="FILE", help="write a ROS 2 params file giving adaptive_controller_node "
                                                        "initial_parameters: the robot's with the payload")
    p.add_argument("--drives", metavar="FILE", help="the robot's drives file (robot_dynamics.drive_files): their "
                                                    "armature and friction are the robot's, not the payload's")
    p.add_argument("--cutoff", type=_positive, metavar="HZ", help="cut-off of the filter that differentiates "
                                                                  "positions when v and a are not logged")
    p.add_argument("--topic", help="the JointState topic of a ROS 2 bag (default /joint_states)")
    p.add_argument("--floating-base", action="store_true", help="free 6-DoF joint between world and root")


def _positive(text):
    value = float(text)
    if not np.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


if __name__ == "__main__":
    sys.exit(main())
