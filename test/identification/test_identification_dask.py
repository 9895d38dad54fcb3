"""The Dask route (identification.scale_out.dask_normal_equations, issue 15 item 6) against the in-memory route
(least_squares.normal_equations, one pass in blocks of 4096) on the same data: numpy arrays, dask arrays chunked
otherwise, and log files (npz and CSV, written by logs.write_log), on a 2-worker LocalCluster of processes and on
local threads; bad input; and the memory bound, read from the cluster's task stream: no task holds more than one
chunk of the log, and the driver never holds the log.

Equal means every entry within 1e-10 of the largest entry of its array (G, b, c): the routes add the same terms in
another order (chunks that do not divide the log, a tree of partial sums).
"""
import subprocess
import sys
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster, get_task_stream

import robot_dynamics as rd
from robot_dynamics.bundled import bundled_urdf
from robot_dynamics.identification import dask_normal_equations, normal_equations, scale_out
from robot_dynamics.identification.logs import Log, write_log

ROBOTS = {"arm7": False, "quadruped": True}          # bundled robot -> floating base


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of 2 worker processes, one thread each, for the whole module; not the default scheduler, so
    client=None computes on local threads."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster, set_as_default=False) as client:
            yield client


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    return rd.load_urdf(bundled_urdf(request.param), floating_base=ROBOTS[request.param])


def random_log(robot, n, rng):
    """(q, v, a, tau) of n samples: valid configurations (unit quaternions for a floating base), normal v, a, tau
    (the normal equations are sums over whatever samples are given)."""
    q = np.array([robot.random_configuration(rng) for _ in range(n)])
    v, a, tau = rng.normal(size=(3, n, robot.nv))
    return q, v, a, tau


def assert_equal(got, expected):
    assert got.n == expected.n
    for name, x, y in zip(("G", "b", "c"), got[:3], expected[:3]):
        assert x.shape == y.shape, name
        error = np.abs(x - y).max() / np.abs(y).max()
        assert error <= 1e-10, f"{name}: relative error {error:.1e}"


@pytest.mark.parametrize("friction, split_every", [(False, 8), (True, 2)], ids=["plain", "friction-binary-tree"])
def test_numpy_arrays_on_the_cluster(robot, friction, split_every, client):
    q, v, a, tau = random_log(robot, 2003, np.random.default_rng(1))
    got = dask_normal_equations(robot, q, v, a, tau, friction=friction, chunks=600, client=client,
                                split_every=split_every)
    assert_equal(got, normal_equations(robot, q, v, a, tau, friction=friction))


def test_dask_arrays_chunked_otherwise(robot, client):
    """Four dask arrays with blocks of their own, none aligned with the others nor with the chunks asked for."""
    q, v, a, tau = random_log(robot, 1601, np.random.default_rng(2))
    arrays = [da.from_array(x, chunks=(rows, -1)) for x, rows in zip((q, v, a, tau), (333, 500, 1601, 700))]
    got = dask_normal_equations(robot, *arrays, friction=True, chunks=450, client=client)
    assert_equal(got, normal_equations(robot, q, v, a, tau, friction=True))


def test_log_files(robot, client, tmp_path):
    """npz and CSV logs of different lengths, each read by a task (progress counts files; one path alone is a list
    of one); the in-memory route sums them concatenated, and also directly as Y_j^T Y_j, Y_j^T tau_j, tau_j^T tau_j
    of the stacked regressor (matrix products, no einsum)."""
    rng = np.random.default_rng(3)
    logs = [random_log(robot, n, rng) for n in (300, 451, 77)]
    paths = [tmp_path / name for name in ("a.npz", "b.csv", "c.npz")]
    for path, (q, v, a, tau) in zip(paths, logs):
        write_log(path, Log(np.arange(len(q)) * 1e-3, q, v, a, tau, list(robot.joint_names)))
    calls = []
    got = dask_normal_equations(robot, [str(p) for p in paths[:2]] + [paths[2]], client=client,
                                progress=lambda *x: calls.append(x))
    assert_progress(calls, [1, 1, 1])
    q, v, a, tau = (np.concatenate(x) for x in zip(*logs))
    assert_equal(got, normal_equations(robot, q, v, a, tau))
    assert_equal(dask_normal_equations(robot, paths[2], client=client), normal_equations(robot, *logs[2]))
    Y = robot.regressor(q, v, v, a)
    direct = (np.array([Y[:, j].T @ Y[:, j] for j in range(robot.nv)]),
              np.array([Y[:, j].T @ tau[:, j] for j in range(robot.nv)]), np.sum(tau * tau, axis=0))
    assert_equal(got, type(got)(*direct, len(q)))


def assert_progress(calls, sizes):
    """progress(done, total) once per task, done the samples (or files) of the tasks completed so far."""
    done, total = zip(*calls)
    assert set(total) == {sum(sizes)} and sorted(np.diff((0,) + done)) == sorted(sizes)


def test_local_threads_with_progress(robot):
    """No client and no default one: local threads, whose Robot per thread keeps their batches apart (two threads
    sharing one Robot's batch workspaces give wrong sums); progress(samples done, samples in all) per chunk."""
    q, v, a, tau = random_log(robot, 1201, np.random.default_rng(4))
    calls = []
    with dask.config.set(scheduler="threads", num_workers=2):
        got = dask_normal_equations(robot, q, v, a, tau, chunks=200, progress=lambda *x: calls.append(x))
    assert_equal(got, normal_equations(robot, q, v, a, tau))
    assert_progress(calls, [200] * 6 + [1])


def test_one_robot_per_worker_thread(robot):
    """Each thread rebuilds the robot once and keeps it; two threads never share one: threads running batches of
    one Robot at the same time get wrong results (its parallel loops share one set of workspaces), which the test
    above catches only when two batches happen to overlap."""
    token, source = scale_out._robot_source(robot, None)
    mine = scale_out._worker_robot(token, source)
    with ThreadPoolExecutor(1) as pool:
        theirs = pool.submit(scale_out._worker_robot, token, source).result()
    assert scale_out._worker_robot(token, source) is mine and theirs is not mine
    q, v, a = random_log(robot, 3, np.random.default_rng(9))[:3]
    assert np.array_equal(theirs.regressor(q, v, v, a), robot.regressor(q, v, v, a))


def test_progress_on_the_cluster_and_urdf_text(client):
    """progress(samples done, samples in all) from the cluster; the robot rebuilt on the workers from its URDF
    (path or XML text)."""
    path = bundled_urdf("arm7")
    robot = rd.load_urdf(path)
    q, v, a, tau = random_log(robot, 1001, np.random.default_rng(5))
    expected = normal_equations(robot, q, v, a, tau)
    for urdf in (path, path.read_text()):
        calls = []
        got = dask_normal_equations(robot, q, v, a, tau, chunks=250, client=client, urdf=urdf,
                                    progress=lambda *x: calls.append(x))
        assert_equal(got, expected)
        assert_progress(calls, [250] * 4 + [1])


def test_dask_progress_bars(client, capfd):
    """progress=True: Dask's progress bar, on the cluster and on local threads."""
    robot = rd.load_urdf(bundled_urdf("arm7"))
    q, v, a, tau = random_log(robot, 1001, np.random.default_rng(10))
    expected = normal_equations(robot, q, v, a, tau)
    for where in (client, None):
        assert_equal(dask_normal_equations(robot, q, v, a, tau, chunks=300, client=where, progress=True), expected)
        assert "100% Completed" in capfd.readouterr().out


def draw_block(seed, index, rows, width):
    return np.random.default_rng([seed, index]).normal(size=(rows, width))


def lazy_log(robot, n, rows, seed=0):
    """Dask arrays (q, v, a, tau) of n samples whose blocks of `rows` samples are drawn by the tasks that need them:
    the whole log never exists unless something gathers it."""
    sizes = [rows] * (n // rows) + [n % rows] * (n % rows > 0)
    width = robot.nq + 3 * robot.nv
    X = da.concatenate([da.from_delayed(dask.delayed(draw_block)(seed, i, m, width), (m, width), dtype=float)
                        for i, m in enumerate(sizes)])
    cuts = np.cumsum([0, robot.nq, robot.nv, robot.nv, robot.nv])
    return [X[:, i:j] for i, j in zip(cuts[:-1], cuts[1:])]


def test_each_task_holds_one_chunk(client):
    """The task stream gives the size of every task's result, which the tasks after it take as inputs: with a log
    of 40 chunks (the planar arm: a cheap regressor, a long log) none exceeds one chunk of (q, v, a, tau), and the
    driver's own allocations stay below the log's q alone.  The same measurement with one chunk of the whole log
    sees the whole q in one task: the check can fail."""
    robot = rd.load_urdf(bundled_urdf("planar_2link"))
    n, rows = 400_000, 10_000
    chunk_bytes = rows * (robot.nq + 3 * robot.nv) * 8

    def measured(chunks):
        tracemalloc.start()
        with get_task_stream(client) as stream:
            result = dask_normal_equations(robot, *lazy_log(robot, n, rows), chunks=chunks, client=client)
        driver_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert result.n == n
        return max(task["nbytes"] for task in stream.data), driver_peak

    largest, driver_peak = measured(rows)
    assert largest <= chunk_bytes, f"a task holds {largest} bytes, one chunk is {chunk_bytes}"
    assert driver_peak < n * robot.nq * 8, f"the driver allocated {driver_peak} bytes, q alone is {n * robot.nq * 8}"
    assert measured(n)[0] >= n * robot.nq * 8


@pytest.mark.parametrize("change, message", [
    (lambda q, v, a, tau: (q, v, a, tau[:-1]), "tau: 999 samples, but q has 1000"),
    (lambda q, v, a, tau: (q, v[:, 1:], a, tau), r"v: expected shape \(N, 7\) .* got \(1000, 6\)"),
    (lambda q, v, a, tau: (q[:, :, None], v, a, tau), r"q: expected shape \(N, 7\)"),
    (lambda q, v, a, tau: (q, v, a.astype(str), tau), "a: real numbers expected, not dtype <U"),
    (lambda q, v, a, tau: (q.astype(complex), v, a, tau), "q: real numbers expected, not dtype complex128"),
    (lambda q, v, a, tau: (q, v, None, tau), "a: required"),
], ids=["length", "width", "ndim", "str", "complex", "missing"])
def test_bad_arrays_name_the_culprit(change, message):
    robot = rd.load_urdf(bundled_urdf("arm7"))
    arrays = change(*random_log(robot, 1000, np.random.default_rng(6)))
    with pytest.raises(ValueError, match=message):
        dask_normal_equations(robot, *arrays, chunks=300)


@pytest.mark.parametrize("lazy", [False, True], ids=["numpy", "dask"])
def test_non_finite_sample_named_from_the_worker(lazy, client):
    robot = rd.load_urdf(bundled_urdf("arm7"))
    q, v, a, tau = random_log(robot, 1000, np.random.default_rng(7))
    a[654, 3] = np.nan
    if lazy:
        q, v, a, tau = (da.from_array(x, chunks=(250, -1)) for x in (q, v, a, tau))
    with pytest.raises(ValueError, match="a: non-finite value nan at sample 654, column 3"):
        dask_normal_equations(robot, q, v, a, tau, chunks=300, client=client)


def test_bad_files_and_arguments(tmp_path, client):
    robot = rd.load_urdf(bundled_urdf("arm7"))
    q, v, a, tau = random_log(robot, 50, np.random.default_rng(8))
    path = tmp_path / "no_tau.npz"
    write_log(path, Log(np.arange(50.0), q, v, a, None, list(robot.joint_names)))
    with pytest.raises(ValueError, match=f"log '{path}' has no tau"):
        dask_normal_equations(robot, [path], client=client)
    with pytest.raises(ValueError, match="v, a, tau: must be None"):
        dask_normal_equations(robot, [path], v, a, tau)
    with pytest.raises(ValueError, match="q: an empty list of log files"):
        dask_normal_equations(robot, [])
    for chunks in (0, 2.5, True):
        with pytest.raises(ValueError, match="chunks: an integer >= 1"):
            dask_normal_equations(robot, q, v, a, tau, chunks=chunks)
    with pytest.raises(ValueError, match="progress: None, True or a callable"):
        dask_normal_equations(robot, q, v, a, tau, progress="yes")
    with pytest.raises(ValueError, match="urdf: describes <Robot 'quadruped'"):
        dask_normal_equations(robot, q, v, a, tau, urdf=bundled_urdf("quadruped"))


def test_dask_is_imported_only_when_used():
    code = ("import sys, robot_dynamics, robot_dynamics.identification.scale_out; "
            "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"
