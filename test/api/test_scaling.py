"""Issue 13 (reliability), items 2 and 3: loading time linear in the links, memory in proportion to the model.
A description of more links than the limit is refused before they are read; building a Robot allocates
memory linear in its bodies; under an address-space limit loading is a URDFError, never a MemoryError.

Each test reproduces a failure of the issue: time or memory that grew faster than the robot.
"""
import os
import re
import subprocess
import sys
import time

import pytest

import robot_dynamics as rd
from random_urdf import tree_urdf
from reliability_helpers import ROOT
from robot_dynamics.urdf import MAX_LINKS, URDFError, parse_urdf


def load_seconds(text, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        rd.load_urdf(text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("shape", ["chain", "star"])
def test_loading_time_is_linear_in_the_links(shape):
    """4 times the links, at most 8 times the time (the issue's parser was cubic in the depth: 64 times).  The
    absolute figures (10,000 links in well under a second) are benchmarks/bench_loading.py's."""
    small, large = load_seconds(tree_urdf(1000, shape)), load_seconds(tree_urdf(4000, shape))
    assert large < 8 * small, (small, large)


def test_more_links_than_the_limit_are_refused_before_reading_them():
    text = '<robot name="r">' + "".join(f'<link name="l{k}"/>' for k in range(MAX_LINKS + 1)) + "</robot>"
    start = time.perf_counter()
    with pytest.raises(URDFError, match=f"the <robot> has {MAX_LINKS + 1} <link> elements; robot_dynamics loads "
                                        f"at most {MAX_LINKS}"):
        parse_urdf(text)
    assert time.perf_counter() - start < 5.0


def test_building_a_robot_allocates_memory_linear_in_its_bodies():
    """Robot(model) used to run every kernel on example arrays of nv x 10 nb (2.3 GB for 2,000 links once any
    kernel had run): its peak allocation now grows with the bodies, not their square."""
    import tracemalloc
    from robot_dynamics.model import build_model
    warm = rd.load_urdf(ROOT / "urdf" / "arm7.urdf")
    warm.dynamics(*warm.random_state(0))
    peaks = []
    for n in (500, 2000):
        model = build_model(parse_urdf(tree_urdf(n, "star")))
        tracemalloc.start()
        rd.Robot(model)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < 5 * peaks[0], peaks
    assert peaks[1] < 2000 * 40_000, peaks          # ~16 kB of workspace per body, and small change


def test_out_of_memory_is_a_urdf_error():
    """Under an address-space limit a large description cannot be loaded: load_urdf says so with a URDFError,
    never a raw MemoryError (a child process, so that the limit binds nothing else)."""
    script = f"""
import resource, sys
sys.path.insert(0, {str(ROOT / 'test')!r})
import robot_dynamics as rd
from random_urdf import tree_urdf
text = tree_urdf(20000, "star")
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + 150 * 2**20, resource.RLIM_INFINITY))
try:
    rd.load_urdf(text)
except rd.URDFError as error:
    print("URDFError:", error)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.match(r"URDFError: (URDF text: )?out of memory while (loading the URDF|parsing the XML)",
                    result.stdout), result.stdout
