"""Loading a robot description off the node: in a child process, on a worker thread, the newest request winning.

A node that serves a model must keep answering while a new description loads, and a description that is refused
must leave nothing behind. Parsing and checking a description holds the GIL for long stretches (lxml, the
compiled kernels), so a worker thread of the node would still stall its callbacks; a child process does not.
:class:`BackgroundLoader` runs ``python -m robot_dynamics.ros.loader`` once per description: the child reads
the request (pickled, on stdin), resolves and loads the description with the node's own rules
(description.description_from_parameters, description.load_robot: URDF checks, degrees of freedom, finite
quantities at the neutral configuration; then the node's read-only joints), and answers with the model
(robot_dynamics.model.RobotModel, pickled, on stdout) or the reason of the refusal. While a model is serving
it runs at the lowest CPU priority (nice 19), so on a busy machine the load waits for the node's answers rather
than the other way round; the node's first description, with no answers to protect, loads at the node's own
priority (the request's ``niceness``: at nice 19 beside two busy processes on two cores, a first load starved
past a test's patience). Its address space is capped (``memory_limit_mb``, RLIMIT_AS), so a description too
large to load ends in a MemoryError there, reported as a refusal; whatever it allocated goes with the process.
The node then only unpickles the model and wraps it in a Robot (milliseconds), and swaps it in.

This module does not import rclpy.
"""
import os
import pickle
import resource
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import robot_dynamics
from robot_dynamics.ros.description import TooLarge, description_from_parameters, load_robot

STDERR_TAIL = 2000                # characters of a dead child's stderr quoted in the refusal
LOADER_NICENESS = 19              # the child's CPU priority: the lowest


class Refused(ValueError):
    """A description the loader refused; ``kind`` names why: ``"invalid"`` (the description or its file),
    ``"joints"`` (other joints than the node's read-only ones), ``"frames"`` (a frame of the node's parameter
    ``frames`` missing), ``"memory"``, ``"timeout"``, ``"loader_failed"``
    (the child process died or answered nothing)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def load_request(request):
    """What the child does: ``(model, warnings, source)`` of ``request`` (see BackgroundLoader.request).

    Raises ValueError or OSError (the description is refused) or MemoryError.
    """
    xml, source = request["xml"], request["source"]
    if xml is None:
        xml, source = description_from_parameters(request["robot_description"], request["urdf_path"],
                                                  request["xacro_args"])
        if xml is None:
            raise ValueError("no description: robot_description and urdf_path are empty")
    warnings = _Warnings()
    robot = load_robot(warnings, xml, request["floating_base"], request["gravity"], request["mimic"], source,
                       regressor=request["regressor"], drives=request["drives_file"])
    check_joints(robot, request["joints"], source)
    return robot.model, warnings.messages, source


def check_joints(robot, joints, source):
    """Refused (kind ``"joints"``) unless ``robot`` has the joints ``joints`` in that order (None: any joints)."""
    if joints is not None and list(robot.joint_names) != list(joints):
        raise Refused("joints", f"the description from {source} has the joints {abbreviated(robot.joint_names)}, "
                                f"not the read-only joints {abbreviated(joints)}; restart the node to serve "
                                "another robot")


def abbreviated(names, head=8):
    """A list of names for a message: all of them, or the first ``head``, '...' and the last, with the count."""
    names = list(names)
    if len(names) <= head + 1:
        return str(names)
    return f"[{', '.join(repr(n) for n in names[:head])}, ..., {names[-1]!r}] ({len(names)} joints)"


class _Warnings:
    """A stand-in for a node's logger that keeps the warnings, for the node to log."""

    def __init__(self):
        self.messages = []

    def warning(self, message):
        self.messages.append(message)


def main():
    """The child: ``python -m robot_dynamics.ros.loader MEMORY_LIMIT_MB`` < pickled request > pickled answer.

    The answer is ``("ok", (model, warnings, source))`` or ``("refused", kind, message)``.
    """
    limit_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    if limit_mb > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = limit_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    request = pickle.load(sys.stdin.buffer)
    os.nice(request.get("niceness", LOADER_NICENESS))      # a serving node's answers come first (module docstring)
    try:
        answer = ("ok", load_request(request))
    except Refused as err:
        answer = ("refused", err.kind, str(err))
    except (MemoryError, TooLarge):
        answer = ("refused", "memory", f"loading the description from {request['source']} needs more memory than "
                                       f"the loader's {limit_mb} MB of address space (parameter "
                                       "description_memory_limit_mb)")
    except (ValueError, OSError) as err:
        answer = ("refused", "invalid", str(err))
    pickle.dump(answer, sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()


class BackgroundLoader:
    """Loads one description at a time in a child process, on a worker thread; a new request supersedes (and
    kills) the one in progress.

    Parameters
    ----------
    on_done : callable
        ``on_done(request, outcome)``, called on the worker thread with the request's dict and either the
        ``(model, warnings, source)`` of the loaded description or a :class:`Refused`; never for a request
        that was superseded or cancelled.
    memory_limit_mb : int
        Address-space limit of the child, MB; 0 for none.
    timeout : float
        Seconds a child may take before it is killed and the description refused.
    """

    def __init__(self, on_done, memory_limit_mb=2048, timeout=120.0):
        self.on_done = on_done
        self.memory_limit_mb = memory_limit_mb
        self.timeout = timeout
        self._cond = threading.Condition()
        self._generation = 0                  # of the newest request; a request's outcome counts if still newest
        self._pending = None                  # (generation, request) not yet started
        self._process = None                  # the child at work
        self._working = False                 # from taking a request until its on_done has returned
        self._start_error = None
        self._closed = False
        self._thread = threading.Thread(target=self._work, name="description loader", daemon=True)
        self._thread.start()

    def request(self, request):
        """Load ``request`` (a dict: xml (or None to resolve robot_description, urdf_path, xacro_args), source,
        floating_base, gravity, mimic, drives_file, regressor, joints (the joints it must have, or None)),
        abandoning any request pending or in progress."""
        with self._cond:
            self._generation += 1
            self._pending = (self._generation, request)
            self._kill()
            self._cond.notify_all()

    def cancel(self):
        """Abandon the request pending or in progress (its on_done is not called)."""
        with self._cond:
            self._generation += 1
            self._pending = None
            self._kill()

    def close(self, timeout=10.0):
        """Cancel, and end the worker thread."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self.cancel()
        self._thread.join(timeout)

    @property
    def busy(self):
        """True while a request is pending or in progress (until its on_done has returned)."""
        with self._cond:
            return self._pending is not None or self._working

    def _kill(self):
        if self._process is not None and self._process.poll() is None:
            self._process.kill()

    def _work(self):
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending is not None or self._closed)
                if self._closed:
                    return
                (generation, request), self._pending = self._pending, None
                self._working = True
                process = self._process = self._start()
            try:
                outcome = self._finish(process, request)
                with self._cond:
                    self._process = None
                    current = generation == self._generation and not self._closed
                if current:
                    self.on_done(request, outcome)
            except Exception:                                 # the thread must live on to take the next request
                traceback.print_exc()
            finally:
                with self._cond:
                    self._process = None
                    self._working = False

    def _start(self):
        """The child process (Popen), or ``None`` when it cannot be started."""
        package_root = str(Path(robot_dynamics.__file__).resolve().parents[1])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        try:
            return subprocess.Popen([sys.executable, "-m", "robot_dynamics.ros.loader", str(self.memory_limit_mb)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        except OSError as err:                                # no memory or no process left to fork
            self._start_error = err
            return None

    def _finish(self, process, request):
        """The outcome of the child ``process`` loading ``request``: ``(model, warnings, source)`` or Refused."""
        if process is None:
            return Refused("loader_failed", f"cannot start the loader of the description from {request['source']}: "
                                            f"{self._start_error}")
        try:
            out, err = process.communicate(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL),
                                           timeout=self.timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            return Refused("timeout", f"loading the description from {request['source']} took more than "
                                      f"{self.timeout:g} s (parameter description_timeout)")
        try:
            answer = pickle.loads(out)
        except Exception:                                     # nothing, or a truncated answer: the child died
            tail = err.decode(errors="replace")[-STDERR_TAIL:].strip()
            return Refused("loader_failed", f"the loader of the description from {request['source']} ended with "
                                            f"exit code {process.returncode} and no answer: {tail}")
        if answer[0] == "ok":
            return answer[1]
        return Refused(answer[1], answer[2])


if __name__ == "__main__":
    main()
