"""Throughput of the identification's normal equations (issue 15, item 6) on panda: one process against a Dask
LocalCluster of worker processes.

    python benchmarks/bench_identification.py [--states 10000000] [--chunks 100000] [--workers 2]

Panda from example-robot-data, fixed base, fingers coupled (mimic=True: nv = 8, 9 bodies, 90 parameters per
joint row).  The log is drawn chunk by chunk from seeds (chunk i from np.random.default_rng([0, i]): q uniform in
[-1, 1], v, a, tau standard normal), so both routes sum the same samples and neither ever holds the whole log:

- single process: least_squares.normal_equations chunk by chunk, summed (its memory is one chunk);
- Dask: scale_out.dask_normal_equations on dask arrays whose blocks the tasks draw, on a LocalCluster of
  `--workers` processes with one thread each, compiled batches on `--numba-threads` threads in each.

Both routes are warmed up first (kernels loaded, workers started) and timed from the first sample drawn to the
summed normal equations in hand.  The table gives states, route, seconds, states/s, the ratio of throughputs,
and the CPU seconds the route's processes spent (the workers' alone, for Dask) with states per CPU second: on a
machine shared with other work the wall-clock ratio depends on what else runs, the CPU figures much less.  Then
the peak resident memory of each process (ru_maxrss over its life: the benchmark process includes the single
route and the Dask client, each worker its imports) and the largest difference between the two results relative
to the largest entry (the same sums, added in another order).
"""
import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
import robot_dynamics as rd  # noqa: E402
from oracle import erd_path  # noqa: E402
from robot_dynamics.identification import NormalEquations, dask_normal_equations, normal_equations  # noqa: E402


def draw(i, rows, nq, nv):
    """Chunk i of the log: (rows, nq + 3 nv) columns q, v, a, tau."""
    rng = np.random.default_rng([0, i])
    return np.hstack([rng.uniform(-1.0, 1.0, (rows, nq)), rng.normal(size=(rows, 3 * nv))])


def columns(X, nq, nv):
    """(q, v, a, tau) of a block of draw()."""
    return X[:, :nq], X[:, nq:nq + nv], X[:, nq + nv:nq + 2 * nv], X[:, nq + 2 * nv:]


def chunk_sizes(states, chunks):
    return [chunks] * (states // chunks) + [states % chunks] * (states % chunks > 0)


def single_process(robot, states, chunks):
    total = NormalEquations.zeros(robot.nv, 10 * robot.nbodies)
    for i, rows in enumerate(chunk_sizes(states, chunks)):
        total = total + normal_equations(robot, *columns(draw(i, rows, robot.nq, robot.nv), robot.nq, robot.nv))
    return total


def lazy_log(robot, states, chunks):
    """Dask arrays (q, v, a, tau) whose block i is draw(i, ...), drawn by the task that needs it."""
    import dask
    import dask.array as da

    width = robot.nq + 3 * robot.nv
    X = da.concatenate([da.from_delayed(dask.delayed(draw)(i, rows, robot.nq, robot.nv), (rows, width), dtype=float)
                        for i, rows in enumerate(chunk_sizes(states, chunks))])
    return columns(X, robot.nq, robot.nv)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024       # Linux: kilobytes


def rss_mb():
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=10_000_000)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--numba-threads", type=int, default=1, help="compiled batch threads in each worker")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    robot = rd.load_urdf(erd_path("panda.urdf"), mimic=True)
    print(f"{robot!r}; {args.states:,} states in chunks of {args.chunks:,}; {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start")
    single_process(robot, 100, 100)                                        # kernels loaded
    rss_start = rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    single = single_process(robot, args.states, args.chunks)
    t_single, cpu_single = time.perf_counter() - start, time.process_time() - cpu
    rss_single = peak_rss_mb()

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={"NUMBA_NUM_THREADS": str(args.numba_threads)}) as cluster, Client(cluster) as client:
        dask_normal_equations(robot, *lazy_log(robot, 1000, 100), chunks=100, client=client)   # workers warm
        rss_workers_start = client.run(rss_mb)
        start, cpu = time.perf_counter(), client.run(time.process_time)
        spread = dask_normal_equations(robot, *lazy_log(robot, args.states, args.chunks), chunks=args.chunks,
                                       client=client)
        t_dask = time.perf_counter() - start
        cpu_dask = sum(client.run(time.process_time).values()) - sum(cpu.values())
        rss_workers = client.run(peak_rss_mb)

    error = max(np.abs(x - y).max() / np.abs(y).max() for x, y in zip(spread[:3], single[:3]))
    assert spread.n == single.n == args.states and error < 1e-10, error
    print(f"\n{'states':>12}  {'route':<34}{'seconds':>10}{'states/s':>12}{'ratio':>8}{'CPU s':>9}"
          f"{'states/CPU s':>14}")
    for route, seconds, cpu in (("single process", t_single, cpu_single),
                                (f"LocalCluster, {args.workers} workers x 1 thread", t_dask, cpu_dask)):
        print(f"{args.states:>12,}  {route:<34}{seconds:>10.1f}{args.states / seconds:>12,.0f}"
              f"{t_single / seconds:>8.2f}{cpu:>9.1f}{args.states / cpu:>14,.0f}")
    print(f"\npeak RSS: benchmark process {rss_single:.0f} MB (after its warm-up: {rss_start:.0f} MB); workers "
          + ", ".join(f"{rss_workers[w]:.0f} MB (after their warm-up: {rss_workers_start[w]:.0f} MB)"
                      for w in rss_workers))
    print(f"Dask against single process: {error:.1e} relative; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
