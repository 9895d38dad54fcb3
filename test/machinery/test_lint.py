"""Lint, as ament_flake8, ament_pep257 and ament_xmllint would run it on a ROS package (issue 12, item 6).

- flake8 (pycodestyle + pyflakes) with the project's configuration (setup.cfg: line length 120) on the ROS
  package's Python -- robot_dynamics/ros, the launch files and scripts, setup.py, the ROS tests and benchmarks --
  and its pyflakes checks (undefined names, unused imports, redefinitions: bugs, not style) on everything;
- docstrings (pydocstyle's D1 checks, pep257's "every public module, class, method and function has a
  docstring"; the project's docstrings follow STYLE.md's numpy style, whose wrapped summaries pep257's format
  checks would refuse) on robot_dynamics/ros and the launch files;
- package.xml and every bundled URDF are well-formed XML (lxml, without entities or network), with the root
  element each must have.
"""
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

REPO = Path(__file__).resolve().parents[2]
ROS_PYTHON = ["robot_dynamics/ros", "launch_scripts", "setup.py", "test/ros_helpers.py", "test/machinery/test_lint.py",
              "test/machinery/test_packaging.py", *sorted(str(p.relative_to(REPO)) for p in REPO.glob("test/ros/*.py")),
              *sorted(str(p.relative_to(REPO)) for p in REPO.glob("benchmarks/bench_ros_*.py"))]


def run(*command):
    return subprocess.run([sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_flake8_on_the_ros_package():
    result = run("flake8", *ROS_PYTHON)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pyflakes_checks_on_everything():
    result = run("flake8", "--select=F", "robot_dynamics", "test", "benchmarks", "launch_scripts")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_public_module_class_and_function_of_the_ros_package_has_a_docstring():
    result = run("pydocstyle", "--select=D100,D101,D102,D103,D104,D106,D419", "robot_dynamics/ros", "launch_scripts")
    assert result.returncode == 0, result.stdout + result.stderr


XML = [("package.xml", "package"), *((str(p.relative_to(REPO)), "robot") for p in sorted(REPO.glob("urdf/*.urdf")))]


@pytest.mark.parametrize("path, root", XML)
def test_xml_is_well_formed(path, root):
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    tree = etree.parse(str(REPO / path), parser)                   # XMLSyntaxError (with the line) when malformed
    assert tree.getroot().tag == root
