"""robot-dynamics demo: in process with fast settings, without ROS, and over ROS 2 where it must print the same
figures as in process (both run the same sampled closed loop)."""
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from robot_dynamics import demo

PNG = b"\x89PNG\r\n\x1a\n"


def figures(text):
    """The numbers the demo prints: RMS error of the first and last second, the estimate's torque error and
    inertia-metric distance at the start and the end, and the payload body's masses (true, start, end)."""
    rms = re.search(r"first second ([\d.]+) rad, last second ([\d.]+) rad", text)
    torque = re.search(r"RMS \|Y \(pi_hat - pi\)\|\s+([\d.]+)\s+([\d.]+) N m", text)
    metric = re.search(r"inertia metric \(relative\)\*\s+([\d.]+)\s+([\d.]+)", text)
    mass = re.search(rf"{demo.PAYLOAD_BODY}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+[+-][\d.]+% \(\+", text)
    assert all((rms, torque, metric, mass)), text
    return {"rms": tuple(map(float, rms.groups())), "torque": tuple(map(float, torque.groups())),
            "metric": tuple(map(float, metric.groups())),
            "mass": tuple(map(float, mass.groups()))}


def check_figures(f):
    """The story the demo tells: the error shrinks tenfold, the estimate predicts the torques far better and
    comes closer to the truth, the payload body's mass estimate ends within 10 % of the truth."""
    first, last = f["rms"]
    assert last <= 0.1 * first
    assert f["torque"][1] < 0.1 * f["torque"][0]
    assert f["metric"][1] < f["metric"][0]
    true, start, end = f["mass"]
    assert abs(end - true) < 0.1 * true


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    """``robot-dynamics demo --in-process --duration 3``: its output and its plot."""
    png = tmp_path_factory.mktemp("demo") / "in_process.png"
    out = io.StringIO()
    assert demo.main(["--in-process", "--duration", "3", "--plot", str(png)], out=out) == 0
    return out.getvalue(), png


def test_in_process_demo_prints_its_figures_and_writes_a_png(in_process):
    text, png = in_process
    assert "mode: in process" in text and "(--in-process)" in text
    check_figures(figures(text))
    assert png.read_bytes()[:8] == PNG
    assert f"plot: {png}" in text and re.search(r"finished in [\d.]+ s", text)


def test_without_ros_the_demo_runs_in_process_and_says_so(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(demo, "ros_unavailable", lambda: "ROS 2 is not importable (test)")
    monkeypatch.chdir(tmp_path)
    assert demo.main(["--duration", "2"]) == 0
    captured = capsys.readouterr()
    assert "mode: in process" in captured.out and "(ROS 2 is not importable (test))" in captured.out
    assert (tmp_path / "closed_loop_demo.png").read_bytes()[:8] == PNG        # the default file name
    assert "2.00 / 2.00 s simulated" in captured.err                          # the progress bar


def test_demo_rejects_a_duration_without_a_last_second():
    with pytest.raises(SystemExit):
        demo.main(["--in-process", "--duration", "1"])


def test_ros_demo_prints_the_in_process_figures(in_process, tmp_path):
    """``python -m robot_dynamics.demo --duration 3`` over ROS 2 as a user runs it: the same closed loop, so the
    same figures as in process, and a PNG of its own."""
    pytest.importorskip("rclpy", reason="ROS 2 is not installed (pip install '.[ros]')")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ros_helpers import claim_ros_domain

    claim_ros_domain()                                   # this process's private domain, inherited by the demo's
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(Path(demo.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")) if p))
    run = subprocess.run([sys.executable, "-m", "robot_dynamics.demo", "--duration", "3", "--dynamics-node"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=90)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "mode: ROS 2 over loopback" in run.stdout
    ros, local = figures(run.stdout), figures(in_process[0])
    for name in ros:                                     # (1 %: the recorder may miss a tick on a busy machine)
        assert ros[name] == pytest.approx(local[name], rel=1e-2), name
    assert (tmp_path / "closed_loop_demo.png").read_bytes()[:8] == PNG
    assert re.search(r"dynamics_node published \d{3,} mass matrices", run.stdout)


def test_ros_demo_starts_from_initial_parameters(tmp_path):
    """``robot-dynamics demo --initial-parameters FILE`` over ROS 2: adaptive_controller_node starts from the file
    (here the simulated arm's true parameters, written with save_parameters), so the loop over loopback prints the
    figures of the same run in process (which tracks far better from the start than from the demo's guess:
    test_identification_io)."""
    pytest.importorskip("rclpy", reason="ROS 2 is not installed (pip install '.[ros]')")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ros_helpers import claim_ros_domain

    from robot_dynamics.identification import save_parameters

    truth = demo.make_scenario(2.0, 1000.0).truth
    save_parameters(tmp_path / "true.yaml", truth, truth.parameters)
    arguments = ["--duration", "2", "--initial-parameters", str(tmp_path / "true.yaml")]
    out = io.StringIO()
    assert demo.main(["--in-process", "--plot", str(tmp_path / "local.png"), *arguments], out=out) == 0
    local = figures(out.getvalue())
    claim_ros_domain()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(Path(demo.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")) if p))
    run = subprocess.run([sys.executable, "-m", "robot_dynamics.demo", *arguments], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=90)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "mode: ROS 2 over loopback" in run.stdout and "starts from the parameters in" in run.stdout
    ros = figures(run.stdout)
    for name in ros:                                     # (1 %: the recorder may miss a tick on a busy machine)
        assert ros[name] == pytest.approx(local[name], rel=1e-2), name
    assert ros["rms"][0] < 0.01                          # the demo's own guess starts at ~0.13 rad


def test_a_first_run_compiles_the_demo_in_worker_processes():
    """On an empty kernel cache the demo compiles what it runs on every core (warm_up): each part of warm_task
    runs in a spawned worker process (nothing of the parent's is inherited: it must import and build what it
    compiles), and the worker's kernels are then in the cache that the demo and its nodes load."""
    from robot_dynamics.precompile import in_workers

    done, wall = in_workers(demo.warm_task, demo.WARM_TASKS, jobs=2, stream=io.StringIO())
    assert sorted(done) == sorted(demo.WARM_TASKS) and all(seconds > 0 for seconds in done.values())
