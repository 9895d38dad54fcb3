"""The ROS 2 package as colcon and rosdep see it (issue 12, item 6).

1. ``colcon build`` (colcon-core, colcon-ros and ament-package from PyPI, offline) builds the package from a
   temporary workspace's src/; ``source install/setup.bash`` then puts the installed package first on the paths,
   the ament index knows it, and its console script ``lib/robot_dynamics/dynamics_node`` -- what ``ros2 run
   robot_dynamics dynamics_node`` starts -- runs and resolves ``package://robot_dynamics/...`` in that install.
2. package.xml is a valid format-3 manifest (catkin_pkg, as colcon and rosdep read it) whose dependencies are
   what the code imports: every ROS package a module of robot_dynamics imports is an exec_depend (else rosdep
   would not install it), every Python requirement is its python3-* rosdep key, and no test oracle (pinocchio,
   example-robot-data: pip extras) is named (``rosdep install`` failed on example-robot-data).
"""
import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("package.xml", "setup.py", "setup.cfg", "resource", "robot_dynamics", "urdf", "launch_scripts")
# Python requirements (setup.py install_requires) -> their rosdep keys
ROSDEP_KEYS = {"numpy": "python3-numpy", "scipy": "python3-scipy", "lxml": "python3-lxml", "numba": "python3-numba",
               "matplotlib": "python3-matplotlib"}
TEST_ORACLES = ("pin", "pinocchio", "example-robot-data", "example_robot_data", "pytest-xdist")


def test_colcon_builds_the_package_and_its_console_script_runs_from_setup_bash(tmp_path):
    source = tmp_path / "ws" / "src" / "robot_dynamics"
    for name in PACKAGE_FILES:
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, source / name)
    ws = tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if k not in ("AMENT_PREFIX_PATH", "COLCON_PREFIX_PATH")}
    build = subprocess.run([sys.executable, "-m", "colcon", "--log-base", str(tmp_path / "log"), "build",
                            "--base-paths", "src"], cwd=ws, env=env, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    assert "Finished <<< robot_dynamics" in build.stdout, build.stdout

    install = ws / "install"
    prefix = install / "robot_dynamics"
    share = prefix / "share" / "robot_dynamics"
    assert (prefix / "share" / "ament_index" / "resource_index" / "packages" / "robot_dynamics").is_file()
    for path in ("package.xml", "urdf/arm7.urdf", "launch/dynamics.launch.py", "launch/closed_loop.launch.py",
                 "scripts/dynamics.py"):
        assert (share / path).is_file(), path
    for script in ("dynamics_node", "lifecycle_dynamics_node", "sim_node", "computed_torque_node",
                   "adaptive_controller_node"):                     # where ros2 run looks: lib/<package>/
        assert os.access(prefix / "lib" / "robot_dynamics" / script, os.X_OK), script

    env.pop("PYTHONPATH", None)                   # the install, not this checkout, must provide the package
    env.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", RCUTILS_LOGGING_BUFFERED_STREAM="0")
    shell = (f"source {install / 'setup.bash'} && cd {tmp_path} && "
             "python -c 'import robot_dynamics, ament_index_python.packages as a; "
             "print(robot_dynamics.__file__); print(a.get_package_share_directory(\"robot_dynamics\"))' && "
             "dynamics_node --ros-args -p urdf_path:=package://robot_dynamics/urdf/no_such_robot.urdf")
    run = subprocess.run(["bash", "-c", shell], env=env, capture_output=True, text=True, timeout=300)
    module, share_dir = run.stdout.splitlines()[:2]
    assert Path(module).resolve().is_relative_to(prefix.resolve()), module
    assert Path(share_dir).resolve() == share.resolve()
    # dynamics_node on PATH is the installed console script: it starts, resolves package:// in the install's
    # share directory through the ament index, and stops with the message and exit code 2 (a bad path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"no such file {share / 'urdf' / 'no_such_robot.urdf'}" in run.stderr, run.stderr


def manifest():
    from catkin_pkg.package import parse_package
    return parse_package(str(REPO / "package.xml"))


def imported_ros_packages():
    """The top-level packages that robot_dynamics' modules import and that are not the library's own or pip's."""
    names = set()
    for path in (REPO / "robot_dynamics").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split(".")[0])
    return {n for n in names if n in ("rclpy", "ament_index_python", "xacro") or n.endswith(("_msgs", "_interfaces"))}


def test_package_xml_is_a_valid_manifest_whose_dependencies_are_the_imports():
    package = manifest()
    package.validate()                                             # catkin_pkg's own checks (raises)
    assert package.package_format == 3 and package.name == "robot_dynamics"
    setup = (REPO / "setup.py").read_text()
    assert f'version="{package.version}"' in setup                # one version for colcon and pip
    assert [e.content for e in package.exports if e.tagname == "build_type"] == ["ament_python"]
    exec_depends = {d.name for d in package.exec_depends}
    missing = imported_ros_packages() - exec_depends
    assert not missing, f"imported but not an exec_depend of package.xml (rosdep would not install them): {missing}"
    requirements = ast.literal_eval(setup[setup.index("install_requires=") + len("install_requires="):
                                          setup.index("]", setup.index("install_requires=")) + 1])
    for requirement in requirements:
        name = requirement.split(">")[0].split("=")[0].split("<")[0].strip()
        assert ROSDEP_KEYS[name] in exec_depends, f"{name}: exec_depend {ROSDEP_KEYS[name]} missing"
    named = {d.name for d in package.exec_depends + package.build_depends + package.test_depends
             + package.build_export_depends}
    assert not named & set(TEST_ORACLES), "test oracles are pip extras, not rosdep keys"
