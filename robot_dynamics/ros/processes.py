"""Starting and stopping the node processes that a launch script, the demo, the tests or the benchmarks run."""
import os
import signal
import subprocess
from pathlib import Path


def resolve_urdf(name):
    """The URDF file ``name`` names (a path, package://pkg/path, file:// or a bundled robot); SystemExit if none."""
    from robot_dynamics.ros.description import resolve_urdf_path
    try:
        return Path(resolve_urdf_path(name)).resolve()
    except ValueError as err:
        raise SystemExit(str(err)) from None


def node_environment(source_tree=None):
    """The environment of a node process: this one, plus ``source_tree`` on PYTHONPATH (a checkout's package)."""
    env = dict(os.environ)
    if source_tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(source_tree), env.get("PYTHONPATH")) if p)
    return env


def interrupt(signum, frame):
    """SIGINT and SIGTERM handler of a launch script: stop as on Ctrl-C.  Installed for SIGINT too, because a
    process started in the background of a non-interactive shell begins with SIGINT ignored, and Python then
    installs no handler: an explicit ``kill -INT`` would be lost."""
    raise KeyboardInterrupt


def stop(process, timeout=10.0):
    """Stop a child process as Ctrl-C would -- SIGINT, so a node shuts down cleanly (a controller publishes zero
    effort on its way out) -- and SIGKILL it if it is still running after ``timeout`` s: its whole process group
    when it leads one (started with ``start_new_session=True``).  Returns its exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                leads_group = os.getpgid(process.pid) == process.pid
            except ProcessLookupError:
                leads_group = False
            if leads_group:
                os.killpg(process.pid, signal.SIGKILL)
            else:
                process.kill()
            process.wait(timeout=timeout)
    return process.returncode
