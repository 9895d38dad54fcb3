"""Identification's input and output (issue 15, items 4, 5 and 7): logs (npz, CSV, ROS 2 bags written here with
rosbags), parameter files, the corrected URDF, joint limits, the command line and the demo started from a file.

Each is checked by a route of its own: a CSV written by hand in another column order, bags written message by
message, the corrected URDF loaded by Pinocchio, panda's limits as Pinocchio reads them.
"""
import csv
import io
import re

import numpy as np
import pytest

import robot_dynamics as rd
from oracle import assert_pinocchio_torques, erd_path
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.identification.logs import (Log, load_parameters, read_log, save_parameters, save_ros_parameters,
                                                write_corrected_urdf, write_log)
from robot_dynamics.spatial import parameters_from_inertial
from robot_dynamics.urdf import rewrite_inertials

ARM = bundled_urdf("arm7")
INERTIAL = re.compile(r"<inertial\s*/>|<inertial[\s>].*?</inertial>", re.DOTALL)


@pytest.fixture(scope="module")
def arm():
    return rd.load_urdf(ARM)


def random_log(robot, rng, n=6, floating=False, kinds=("v", "a", "tau")):
    """A Log of n samples in robot.joint_names order, arbitrary numbers (a file must carry them exactly)."""
    nj = len(robot.joint_names)
    t = np.cumsum(rng.uniform(1e-3, 2e-3, n))
    arrays = {kind: rng.normal(size=(n, nj + 6 * floating)) if kind in kinds else None for kind in ("v", "a", "tau")}
    return Log(t, rng.normal(size=(n, nj + 7 * floating)), arrays["v"], arrays["a"], arrays["tau"],
               list(robot.joint_names))


def assert_same_log(got, expected):
    assert got.joint_names == expected.joint_names
    for kind in ("t", "q", "v", "a", "tau"):
        x, y = getattr(got, kind), getattr(expected, kind)
        assert (x is None) == (y is None), kind
        if y is not None:
            np.testing.assert_array_equal(x, y, err_msg=kind)


def physical_parameters(robot, rng):
    """pi (10 nb,): the robot's bodies, each with 4 random point masses added (physically consistent, every entry
    changed; what a body's fixed links hold stays within it)."""
    points = [zip(rng.uniform(0.2, 3.0, 4), rng.uniform(-0.2, 0.2, (4, 3))) for _ in range(robot.nbodies)]
    return robot.parameters + np.concatenate([sum(parameters_from_inertial(m, p, np.zeros((3, 3))) for m, p in body)
                                              for body in points])


# --- logs --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".npz", ".csv"])
@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_log_round_trip_is_exact(tmp_path, suffix, floating):
    robot = rd.load_urdf(bundled_urdf("quadruped"), floating_base=floating)
    log = random_log(robot, np.random.default_rng(1), floating=floating, kinds=("v", "tau"))
    write_log(tmp_path / f"log{suffix}", log)
    assert_same_log(read_log(tmp_path / f"log{suffix}"), log)
    assert_same_log(read_log(tmp_path / f"log{suffix}", robot), log)


def test_csv_columns_are_matched_by_name(tmp_path, arm):
    """A CSV written column by column in a shuffled order (csv module, repr of each number) reads back in the
    robot's joint order; the joint a log lacks is named."""
    rng = np.random.default_rng(2)
    log = random_log(arm, rng)
    columns = {"t": log.t}
    for kind in ("q", "v", "a", "tau"):
        for j, name in enumerate(log.joint_names):
            columns[f"{kind}_{name}"] = getattr(log, kind)[:, j]
    header = list(columns)
    rng.shuffle(header)
    path = tmp_path / "shuffled.csv"
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(zip(*([repr(float(x)) for x in columns[c]] for c in header)))
    assert_same_log(read_log(path, arm), log)

    header.remove("q_joint4")
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(zip(*([repr(float(x)) for x in columns[c]] for c in header)))
    with pytest.raises(ValueError, match="no column 'q_joint4'"):
        read_log(path, arm)


def test_a_log_without_a_joint_of_the_robot_names_it(tmp_path, arm):
    log = random_log(arm, np.random.default_rng(3))
    drop = log.joint_names.index("joint6")
    keep = [j for j in range(len(log.joint_names)) if j != drop]
    write_log(tmp_path / "six.csv", Log(log.t, log.q[:, keep], None, None, log.tau[:, keep],
                                        [log.joint_names[j] for j in keep]))
    with pytest.raises(ValueError, match="'joint6'"):
        read_log(tmp_path / "six.csv", arm)


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_bag_of_joint_states_reads_back(tmp_path, arm, storage):
    """JointState messages written with rosbags, each with its joints in an order of its own (and an extra
    gripper joint): read_log returns the arrays in the robot's order, the stamps as t; the bag is read as a
    directory and as its storage file."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState, Header, Time = (store.types[name] for name in (
        "sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    rng = np.random.default_rng(4)
    log = random_log(arm, rng, n=8, kinds=("v", "tau"))
    stamps = [(100 + k, 1_000_000 * k + 17) for k in range(len(log.t))]
    bag = tmp_path / "bag"
    with Writer(bag, version=9, storage_plugin=StoragePlugin[storage.upper()]) as writer:
        states = writer.add_connection("/arm/joint_states", JointState.__msgtype__, typestore=store)
        for k, (sec, nanosec) in enumerate(stamps):
            order = rng.permutation(len(log.joint_names) + 1)
            names = [*log.joint_names, "gripper"]
            row = {kind: np.append(getattr(log, kind)[k], 0.5) for kind in ("q", "v", "tau")}
            msg = JointState(header=Header(stamp=Time(sec=sec, nanosec=nanosec), frame_id=""),
                             name=[names[i] for i in order], position=row["q"][order], velocity=row["v"][order],
                             effort=row["tau"][order])
            writer.write(states, 10**9 * sec, store.serialize_cdr(msg, JointState.__msgtype__))
    expected = log._replace(t=np.array([sec + 1e-9 * nanosec for sec, nanosec in stamps]))
    files = list(bag.glob("*.db3" if storage == "sqlite3" else "*.mcap"))
    assert len(files) == 1
    for path in (bag, files[0]):
        assert_same_log(read_log(path, arm, topic="/arm/joint_states"), expected)
    with pytest.raises(ValueError, match="'/joint_states'.*/arm/joint_states"):
        read_log(bag, arm)                           # the default topic is not there: the bag's are listed


# --- parameters --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_parameters_round_trip_is_exact(tmp_path, arm, suffix):
    pi = physical_parameters(arm, np.random.default_rng(5))
    friction = np.random.default_rng(6).uniform(0, 1, (arm.nv, 2))
    save_parameters(tmp_path / f"p{suffix}", arm, pi, friction=friction)
    np.testing.assert_array_equal(load_parameters(tmp_path / f"p{suffix}", arm), pi)
    save_ros_parameters(tmp_path / "ros.yaml", arm, pi)
    np.testing.assert_array_equal(load_parameters(tmp_path / "ros.yaml", arm), pi)


def test_parameter_file_of_other_bodies_is_refused_by_name(tmp_path, arm):
    import yaml

    pi = arm.parameters
    save_parameters(tmp_path / "p.yaml", arm, pi)
    document = yaml.safe_load((tmp_path / "p.yaml").read_text())
    document["parameters"]["gripper"] = document["parameters"].pop("link5")
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(document))
    with pytest.raises(ValueError, match=r"'link5'.*'gripper' not in robot 'arm7'"):
        load_parameters(tmp_path / "p.yaml", arm)
    document["parameters"]["link5"] = document["parameters"].pop("gripper")
    del document["parameters"]["link2"]["Iyz"]
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(document))
    with pytest.raises(ValueError, match="body 'link2' needs a finite number 'Iyz'"):
        load_parameters(tmp_path / "p.yaml", arm)
    quadruped = rd.load_urdf(bundled_urdf("quadruped"))
    save_ros_parameters(tmp_path / "ros.yaml", quadruped, quadruped.parameters)
    with pytest.raises(ValueError, match=f"{10 * arm.nbodies} finite numbers"):
        load_parameters(tmp_path / "ros.yaml", arm)


# --- corrected URDF ----------------------------------------------------------------------------------------------

def test_corrected_urdf_loads_to_the_parameters_and_keeps_every_other_byte(tmp_path, arm):
    """arm7's link7 carries a flange and a tool on fixed joints: they keep their <inertial>, link7 takes the rest.
    The written file loads to pi (ours to 1e-12; Pinocchio's inverse dynamics to 1e-10), and without its
    <inertial> elements it is the original file, byte for byte."""
    pi = physical_parameters(arm, np.random.default_rng(7))
    out = tmp_path / "arm7_identified.urdf"
    write_corrected_urdf(ARM, out, arm, pi)
    corrected = rd.load_urdf(out)
    np.testing.assert_allclose(corrected.parameters, pi, rtol=0, atol=1e-12 * np.abs(pi).max())

    assert_pinocchio_torques(arm, out, pi, seed=8)

    original, written = ARM.read_bytes(), out.read_bytes()
    assert INERTIAL.sub("", original.decode()) == INERTIAL.sub("", written.decode())
    moved = [block for block in INERTIAL.findall(original.decode()) if block not in written.decode()]
    assert len(moved) == arm.nbodies                   # the flange's, tool's and base's are as they were


def test_rewrite_inertials_adds_a_missing_one_and_keeps_the_layout(tmp_path):
    text = ('<?xml version="1.0"?>\r\n<robot name="r">\r\n  <link name="a"/>\r\n  <link name="b"><inertial>'
            '<mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>\r\n'
            '  <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>\r\n'
            '  <joint name="k" type="prismatic"><parent link="b"/><child link="c"/></joint>\r\n'
            '  <link name="c" />\r\n</robot>\r\n')
    rng = np.random.default_rng(9)
    robot = rd.load_urdf(text)
    pi = physical_parameters(robot, rng)
    written = rewrite_inertials(text, dict(zip(robot.body_names, pi.reshape(-1, 10))))
    np.testing.assert_allclose(rd.load_urdf(written).parameters, pi, rtol=0, atol=1e-13)
    assert written.count("\r\n") == written.count("\n")                       # the file's line ends
    assert '<link name="b"><inertial><origin xyz=' in written                    # one line stays one line
    assert '  <link name="c" >\r\n    <inertial>\r\n      <origin xyz=' in written
    assert written.startswith('<?xml version="1.0"?>\r\n<robot name="r">\r\n  <link name="a"/>\r\n')


def test_corrected_urdf_refuses_what_a_urdf_cannot_hold(tmp_path, arm):
    pi = arm.parameters.copy()
    pi[10 * 3] = -1.0                                                    # link4's mass
    with pytest.raises(ValueError, match="link 'link4': mass -1 kg is negative"):
        write_corrected_urdf(ARM, tmp_path / "bad.urdf", arm, pi)
    with pytest.raises(ValueError, match="is not the robot of"):
        write_corrected_urdf(ARM, tmp_path / "bad.urdf", rd.load_urdf(bundled_urdf("planar_2link")), pi[:20])
    assert not (tmp_path / "bad.urdf").exists()


# --- joint limits ------------------------------------------------------------------------------------------------

def test_joint_limits_of_panda_are_pinocchios():
    import pinocchio as pin

    path = erd_path("panda.urdf")
    robot = rd.load_urdf(path)
    model = pin.buildModelFromUrdf(str(path))
    limits = rd.joint_limits(path, robot)
    index = [model.joints[model.getJointId(name)].idx_q for name in robot.joint_names]
    np.testing.assert_array_equal(limits.lower, model.lowerPositionLimit[index])
    np.testing.assert_array_equal(limits.upper, model.upperPositionLimit[index])
    np.testing.assert_array_equal(limits.velocity, model.velocityLimit[index])
    np.testing.assert_array_equal(limits.effort, model.effortLimit[index])


def test_joint_limits_are_unbounded_where_the_urdf_is_silent():
    text = ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
            '<joint name="spin" type="continuous"><parent link="a"/><child link="b"/>'
            '<limit lower="-1" upper="1" velocity="3"/></joint>'
            '<joint name="slide" type="prismatic"><parent link="b"/><child link="c"/><limit upper="0.5"/></joint>'
            '</robot>')
    limits = rd.joint_limits(text, rd.load_urdf(text))
    np.testing.assert_array_equal(np.array(limits), [[-np.inf, -np.inf], [np.inf, 0.5], [3.0, np.inf],
                                                     [np.inf, np.inf]])
    with pytest.raises(rd.URDFError, match="joint 'slide'"):
        rd.joint_limits(text.replace('upper="0.5"', 'upper="0.5" lower="1"'), rd.load_urdf(text))


# --- the demo from identified parameters ---------------------------------------------------------------------------

def test_demo_from_the_true_parameters_tracks_better_from_the_start(tmp_path, capsys):
    """``robot-dynamics demo --initial-parameters`` with a file of the simulated arm's true parameters (arm7 and its
    payload): the first second's tracking error is far below the run from the demo's 20-50 % wrong guess, and
    the estimate starts at the truth; a file of another robot is a one-line error."""
    import sys
    from pathlib import Path

    from robot_dynamics import demo
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "control"))     # test_demo, whatever ran before
    from test_demo import figures

    truth = demo.make_scenario(2.0, 1000.0).truth
    save_parameters(tmp_path / "true.yaml", truth, truth.parameters)
    runs = {}
    for name, extra in (("guess", []), ("identified", ["--initial-parameters", str(tmp_path / "true.yaml")])):
        out = io.StringIO()
        assert demo.main(["--in-process", "--duration", "2", "--plot", str(tmp_path / "d.png"), *extra], out=out) == 0
        runs[name] = figures(out.getvalue())
    assert runs["identified"]["rms"][0] < 0.1 * runs["guess"]["rms"][0]
    assert runs["identified"]["torque"][0] < 1e-12 < runs["guess"]["torque"][0]
    assert runs["identified"]["mass"][1] == runs["identified"]["mass"][0]    # link7's start is its true mass

    planar = rd.load_urdf(bundled_urdf("planar_2link"))                   # bodies link1, link2
    save_parameters(tmp_path / "planar.yaml", planar, planar.parameters)
    capsys.readouterr()
    assert demo.main(["--in-process", "--initial-parameters", str(tmp_path / "planar.yaml")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "no parameters for bodies 'link3', 'link4', 'link5', 'link6', 'link7'" in error


# --- the command line --------------------------------------------------------------------------------------------

def arm_motion(duration=4.0, rate=250.0, seed=0):
    """A sum of sines around arm7's ready pose sampled at ``rate``: (t, q, v, a)."""
    from robot_dynamics.controllers import SumOfSines

    rng = np.random.default_rng(seed)
    harmonics = np.arange(1.0, 5.0)
    t = np.arange(0.0, duration, 1.0 / rate)
    ref = SumOfSines(np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8]), 0.4 * rng.uniform(0.5, 1.0, (7, 4)) / harmonics,
                     2 * np.pi / duration * harmonics, rng.uniform(0, 2 * np.pi, (7, 4)))(t)
    return t, ref.q, ref.v, ref.a


def test_cli_identify_prints_the_base_parameters_and_writes_what_reproduces_the_torques(tmp_path, arm, capsys):
    """``robot-dynamics identify arm7 log.csv --friction`` on noise-free torques of arm7 carrying a 2 kg payload,
    with viscous and Coulomb friction: the printed base parameters are K pi_true (K of base_parameters), the
    residuals vanish, the friction file holds F_v, F_c, and the corrected URDF reproduces the rigid-body torques
    of another motion."""
    from robot_dynamics.controllers import with_payload
    from robot_dynamics.cli import main

    truth = with_payload(arm, "link7", 2.0, (0.0, 0.0, 0.1))
    F = np.column_stack([np.linspace(0.5, 2.0, 7), np.linspace(1.0, 0.2, 7)])       # [F_v, F_c] per joint
    t, q, v, a = arm_motion()
    tau = truth.inverse_dynamics(q, v, a) + F[:, 0] * v + F[:, 1] * np.sign(v)
    write_log(tmp_path / "log.csv", Log(t, q, v, a, tau, arm.joint_names))
    files = {name: tmp_path / name for name in ("p.yaml", "ros.yaml", "arm7_identified.urdf", "fit.png")}
    assert main(["identify", "arm7", str(tmp_path / "log.csv"), "--friction", "--out", str(files["p.yaml"]),
                 "--ros-params", str(files["ros.yaml"]), "--write-urdf", str(files["arm7_identified.urdf"]),
                 "--plot", str(files["fit.png"])]) == 0
    captured = capsys.readouterr()
    text = captured.out

    base = rd.base_parameters(arm, friction=True)
    expected = dict(zip(base.names, base.values(np.concatenate([truth.parameters, F[:, 0], F[:, 1]]))))
    rows = re.findall(r"^ *(\S+) +(\S+) +(\S+) +(.+)$", text.split("base parameter\n")[1].split("\n\n")[0], re.M)
    assert f"on {base.rank} base parameters (of {base.p})" in text and len(rows) == base.rank
    for value, std, _, name in rows:
        assert float(value) == pytest.approx(expected[name], rel=1e-5, abs=1e-9), name     # printed to 6 digits
    residuals = re.findall(r"^  (joint\d) +(\S+)$", text.split("residual RMS per joint\n")[1], re.M)
    assert [j for j, _ in residuals] == arm.joint_names
    assert all(float(r) < 1e-5 * np.sqrt(np.mean(tau ** 2)) for _, r in residuals)
    assert re.search(r"condition number of the base regressor: [\d.e+]+\n", text)
    assert "identify: [" in captured.err and f"{len(t):,} / {len(t):,} samples" in captured.err

    import yaml
    saved = yaml.safe_load(files["p.yaml"].read_text())
    np.testing.assert_allclose([[saved["friction"][j]["viscous"], saved["friction"][j]["coulomb"]]
                                for j in arm.joint_names], F, rtol=1e-6)
    assert [b["name"] for b in saved["identification"]["base_parameters"]] == base.names
    pi = load_parameters(files["p.yaml"], arm)
    np.testing.assert_array_equal(load_parameters(files["ros.yaml"], arm), pi)
    corrected = rd.load_urdf(files["arm7_identified.urdf"])
    np.testing.assert_allclose(corrected.parameters, pi, rtol=0, atol=1e-12 * np.abs(pi).max())
    _, q2, v2, a2 = arm_motion(duration=3.0, rate=20.0, seed=1)                  # another motion
    expected_tau = truth.inverse_dynamics(q2, v2, a2)
    np.testing.assert_allclose(corrected.inverse_dynamics(q2, v2, a2), expected_tau, rtol=0,
                               atol=1e-6 * np.abs(expected_tau).max())
    assert files["fit.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv, culprit", [
    (["identify", "arm7", "{tmp}/six.csv"], "has no column for joint 'joint6'"),
    (["identify", "arm7", "{tmp}/missing.csv"], "log '{tmp}/missing.csv' does not exist"),
    (["identify", "no_such_robot", "{tmp}/six.csv"], "no URDF or MJCF file 'no_such_robot'"),
    (["identify", "arm7", "{tmp}/log.npz", "--out", "{tmp}/p.txt"], "--out '{tmp}/p.txt': write .yaml or .yml or"),
    (["identify", "arm7", "{tmp}/log.npz", "--topic", "/arm/joint_states"], "a topic is only read from a ROS 2 bag"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, arm, capsys, argv, culprit):
    from robot_dynamics.cli import main

    t, q, v, a = arm_motion(duration=1.0, rate=50.0)
    write_log(tmp_path / "log.npz", Log(t, q, v, a, arm.inverse_dynamics(q, v, a), arm.joint_names))
    keep = [j for j in range(7) if j != 5]
    write_log(tmp_path / "six.csv", Log(t, q[:, keep], None, None, q[:, keep], [arm.joint_names[j] for j in keep]))
    assert main([x.format(tmp=tmp_path) for x in argv]) == 2
    error = capsys.readouterr().err.splitlines()
    assert len(error) == 1 and error[0].startswith("robot-dynamics: error: ")
    assert culprit.format(tmp=tmp_path) in error[0]


def test_cli_walk_through_excite_simulate_identify(tmp_path, arm, capsys):
    """The README's walk-through, short: ``excite`` keeps to arm7's URDF limits (as Pinocchio reads them),
    ``simulate`` logs arm7 with a payload (its torques are the payload arm's inverse dynamics), ``identify``
    writes a URDF that reproduces the payload arm's torques on another motion."""
    import pinocchio as pin
    from robot_dynamics.cli import main
    from robot_dynamics.controllers import with_payload
    from robot_dynamics.identification.excitation import FourierTrajectory

    traj, log, urdf = tmp_path / "traj.npz", tmp_path / "log.npz", tmp_path / "arm7_identified.urdf"
    assert main(["excite", "arm7", "--duration", "2", "--harmonics", "2", "--maxiter", "1", "--out", str(traj)]) == 0
    trajectory = FourierTrajectory.load(traj)
    assert f"condition number of the stacked base regressor: {trajectory.condition:.4g}" in capsys.readouterr().out
    model = pin.buildModelFromUrdf(str(ARM))
    q, v, _ = trajectory.sample(np.linspace(0.0, 2.0, 2001))
    assert np.all((q >= model.lowerPositionLimit) & (q <= model.upperPositionLimit))
    assert np.all(np.abs(v) <= model.velocityLimit)

    assert main(["simulate", "arm7", str(traj), "--out", str(log), "--rate", "250", "--payload", "2",
                 "--payload-com", "0", "0", "0.1"]) == 0
    truth = with_payload(arm, "link7", 2.0, (0.0, 0.0, 0.1))
    logged = read_log(log, arm)
    assert len(logged.t) == 501 and "501 samples" in capsys.readouterr().out
    expected = truth.inverse_dynamics(logged.q, logged.v, logged.a)
    np.testing.assert_allclose(logged.tau, expected, rtol=0, atol=1e-9 * np.abs(expected).max())

    assert main(["identify", "arm7", str(log), "--write-urdf", str(urdf)]) == 0
    _, q2, v2, a2 = arm_motion(duration=3.0, rate=20.0, seed=2)
    expected = truth.inverse_dynamics(q2, v2, a2)
    np.testing.assert_allclose(rd.load_urdf(urdf).inverse_dynamics(q2, v2, a2), expected, rtol=0,
                               atol=1e-6 * np.abs(expected).max())


def test_cli_several_logs_and_chunks_take_the_dask_route_to_the_same_fit(tmp_path, arm, capsys):
    """Two halves of a log (Dask, one task per file) and the whole log in chunks of 64 samples (Dask) give the
    in-memory fit of the whole log."""
    from robot_dynamics.cli import main

    t, q, v, a = arm_motion(duration=2.0, rate=100.0)
    tau = arm.inverse_dynamics(q, v, a) + np.random.default_rng(3).normal(scale=0.05, size=v.shape)
    write_log(tmp_path / "all.npz", Log(t, q, v, a, tau, arm.joint_names))
    for name, rows in (("first.npz", slice(0, 120)), ("second.npz", slice(120, None))):
        write_log(tmp_path / name, Log(t[rows], q[rows], v[rows], a[rows], tau[rows], arm.joint_names))
    runs = {"memory": [str(tmp_path / "all.npz")], "chunks": [str(tmp_path / "all.npz"), "--chunks", "64"],
            "files": [str(tmp_path / "first.npz"), str(tmp_path / "second.npz")]}
    fits = {}
    for name, argv in runs.items():
        assert main(["identify", "arm7", *argv, "--out", str(tmp_path / f"{name}.json")]) == 0
        fits[name] = load_parameters(tmp_path / f"{name}.json", arm)
    err = capsys.readouterr().err
    assert f"{len(t)} / {len(t)} samples" in err and "2 / 2 logs" in err
    for name in ("chunks", "files"):
        np.testing.assert_allclose(fits[name], fits["memory"], rtol=0, atol=1e-10 * np.abs(fits["memory"]).max())


def test_a_missing_optional_package_is_named_with_the_extra_that_installs_it(tmp_path, arm, monkeypatch, capsys):
    """Dask, rosbags and PyYAML come with the identify extra, not with the library: without them, the Dask route,
    a bag and a YAML file are an ImportError naming the package and the extra (the command line: one line, exit
    2), and what needs none of them still works."""
    from robot_dynamics import cli

    rng = np.random.default_rng(3)
    q, v, a = rng.normal(size=(3, 40, arm.nv))
    tau = arm.inverse_dynamics(q, v, a)
    np.savez(tmp_path / "log.npz", t=np.arange(40) * 1e-3, q=q, v=v, a=a, tau=tau, joint_names=arm.joint_names)
    (tmp_path / "bag").mkdir()
    (tmp_path / "bag" / "metadata.yaml").write_text("rosbag2_bagfile_information: {}\n")
    import sys

    class NotInstalled:                         # a finder that says these packages are not there; the loaded
        @staticmethod                           # ones are forgotten meanwhile (monkeypatch puts them back)
        def find_spec(name, path=None, target=None):
            if name.split(".")[0] in missing:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    missing = ("dask", "distributed", "rosbags", "yaml")
    for name in [m for m in sys.modules if m.split(".")[0] in missing]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [NotInstalled, *sys.meta_path])
    extra = r"pip install 'robot_dynamics\[identify\]'"
    with pytest.raises(ImportError, match=r"the Dask route .* needs dask, which is not installed: " + extra):
        rd.identify(arm, q, v, a, tau, chunks=10)
    with pytest.raises(ImportError, match=r"reading the ROS 2 bag '.*bag' needs rosbags, .*" + extra):
        read_log(tmp_path / "bag", arm)
    with pytest.raises(ImportError, match=r"writing the YAML file '.*p.yaml' needs yaml, .*" + extra):
        save_parameters(tmp_path / "p.yaml", arm, arm.parameters)
    assert rd.identify(arm, q, v, a, tau).base.rank > 0                 # in memory: none of them needed
    save_parameters(tmp_path / "p.json", arm, arm.parameters)
    capsys.readouterr()
    assert cli.main(["identify", str(ARM), str(tmp_path / "log.npz"), "--chunks", "10"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "needs dask, which is not installed" in error
