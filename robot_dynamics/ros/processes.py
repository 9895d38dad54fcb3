"""Stopping the node processes that a launch script, the demo, the tests or the benchmarks started."""
import os
import signal
import subprocess


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
