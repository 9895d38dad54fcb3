"""robot-dynamics compile: every method that computes from a state is called (so its kernels are built), in
worker processes.  The time it saves is benchmarks/startup.py's (--every)."""
import subprocess
import sys

import robot_dynamics as rd
from robot_dynamics.precompile import CALLS, COMPOSITE_TICK, CONTROLLERS, SLOWEST, TASKS, compile_order

# Robot's public methods that run no compiled code of their own: configuration space and variants (numpy)
NO_KERNEL = {"integrate_jacobians", "neutral", "random_configuration", "random_state", "with_drives", "with_gravity",
             "with_parameters", "friction_torque"}


def test_every_method_that_computes_from_a_state_is_a_task():
    public = {name for name in dir(rd.Robot) if not name.startswith("_") and callable(getattr(rd.Robot, name))}
    assert public - NO_KERNEL == set(TASKS)
    assert {call[0] for call in CALLS} == set(TASKS)


def test_the_slowest_tasks_first_are_tasks():
    """A name in SLOWEST that is no task (a renamed method) would silently lose its place at the front."""
    assert set(SLOWEST) <= set(TASKS) | set(CONTROLLERS) and len(set(SLOWEST)) == len(SLOWEST)


def test_the_command_runs_every_task_once_mass_matrix_first():
    """mass_matrix (the shared helpers) first, the composite's tick beside it; each task and controller once, the
    composite controller after the regressors its construction calls."""
    order = compile_order()
    assert order[:2] == ["mass_matrix", COMPOSITE_TICK]
    assert sorted(order) == sorted(TASKS + list(CONTROLLERS) + [COMPOSITE_TICK])
    assert order.index("CompositeSlotineLi") > max(order.index("regressor"), order.index("momentum_regressor"))


def test_the_command_runs_every_task_in_worker_processes():
    run = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "compile", "--jobs", "2"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (f"{len(TASKS)} methods and {len(CONTROLLERS)} controllers' ticks compiled or loaded in" in run.stdout
            and "on 2 processes" in run.stdout)
    total = len(compile_order())
    assert f"{total}/{total}" in run.stderr                           # the progress bar's last state


def test_a_bad_job_count_is_refused():
    run = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "compile", "--jobs", "0"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "--jobs must be at least 1" in run.stderr
