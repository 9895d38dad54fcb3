"""Results of batches recycle the memory of dropped results (memory.py) -- and never the memory of a live one.

Each test checks the numbers of a recycled result against the single-state calls (which do not go through the
pool), and where the memory came from by its address.
"""
import gc

import numpy as np
import pytest

from robot_dynamics.memory import MIN_BYTES, PER_SIZE, ResultPool


@pytest.fixture(scope="module")
def robot(quadruped):
    """conftest.py's quadruped (floating base), loaded for this module."""
    return quadruped


def batch(robot, seed, n=160):
    """n random states (q, v, v_ref, a_ref): the regressor of 160 is 1.7 MB, above MIN_BYTES."""
    rng = np.random.default_rng(seed)
    q = np.array([robot.random_configuration(rng) for _ in range(n)])
    return (q, *rng.normal(size=(3, n, robot.nv)))


def single_states(robot, states):
    return np.array([robot.regressor(*(x[i] for x in states)) for i in range(len(states[0]))])


def test_a_dropped_result_is_reused_and_recomputed_whole(robot):
    first, second = batch(robot, 0), batch(robot, 1)
    Y = robot.regressor(*first)
    assert Y.nbytes >= MIN_BYTES
    address = Y.ctypes.data
    del Y
    Y = robot.regressor(*second)
    assert Y.ctypes.data == address                     # the same memory ...
    np.testing.assert_array_equal(Y, single_states(robot, second))      # ... holding the new batch's results


def test_live_results_and_their_views_keep_their_memory(robot):
    first, second, third = batch(robot, 2), batch(robot, 3), batch(robot, 4)
    Y1 = robot.regressor(*first)
    expected = single_states(robot, first)
    row = Y1[7]                                         # a view outlives the result it was taken from
    del Y1
    gc.collect()
    Y2 = robot.regressor(*second)
    Y3 = robot.regressor(*third)
    assert not np.shares_memory(row, Y2) and not np.shares_memory(row, Y3) and not np.shares_memory(Y2, Y3)
    np.testing.assert_array_equal(row, expected[7])
    np.testing.assert_array_equal(Y2, single_states(robot, second))
    np.testing.assert_array_equal(Y3, single_states(robot, third))


def test_the_bundle_recycles_each_of_its_results(robot):
    states = batch(robot, 5, n=1200)                    # M and C of 1200 states: 1.6 MB each, of one size
    first = robot.dynamics(*states)
    addresses = {x.ctypes.data for x in (first.M, first.C, first.Y)}
    del first
    again = robot.dynamics(*states)
    assert {x.ctypes.data for x in (again.M, again.C, again.Y)} == addresses
    for i in (0, 599, 1199):
        one = robot.dynamics(*(x[i] for x in states))
        for name in ("M", "C", "g", "com", "J_com", "Y"):
            np.testing.assert_array_equal(getattr(again, name)[i], getattr(one, name))


def test_what_a_pool_keeps_is_bounded():
    n = MIN_BYTES // 8
    pool = ResultPool(max_bytes=3 * MIN_BYTES)
    arrays = [pool.empty((n,)) for _ in range(PER_SIZE + 2)]
    small = pool.empty((10,))                           # below MIN_BYTES: a plain array
    assert small.base is None and pool.kept_bytes == 0
    del arrays
    assert pool.kept_bytes == 3 * MIN_BYTES             # the byte bound binds before PER_SIZE
    big = ResultPool(max_bytes=100 * MIN_BYTES)
    arrays = [big.empty((n,)) for _ in range(PER_SIZE + 2)]
    del arrays
    assert big.kept_bytes == PER_SIZE * MIN_BYTES
    shape = (2, n // 2)
    reused = big.empty(shape)
    assert reused.shape == shape and reused.flags.c_contiguous and reused.flags.writeable
    assert big.kept_bytes == (PER_SIZE - 1) * MIN_BYTES
    big.clear()
    assert big.kept_bytes == 0


def test_out_arrays_are_never_taken_into_the_pool(robot):
    states = batch(robot, 6)
    out = np.empty((160, robot.nv, 10 * robot.nbodies))
    kept = robot._engine.results.kept_bytes
    robot.regressor(*states, out=out)
    del out
    assert robot._engine.results.kept_bytes == kept


def test_threads_sharing_a_robot_never_share_a_result(robot):
    """Four threads drop and request batch results of one size on one Robot: every result they hold at once has
    memory of its own, and its numbers are its own batch's."""
    import threading
    states = [batch(robot, 10 + k) for k in range(4)]
    expected = [single_states(robot, s) for s in states]
    failures = []

    def work(k):
        held = []
        for round_ in range(12):
            Y = robot.regressor(*states[k])
            held.append(Y)
            if not np.array_equal(Y, expected[k]):
                failures.append((k, round_, "numbers"))
            if len(held) > 2:
                held.pop(0)                                 # dropped: its memory may serve another thread
        for Y in held:
            if not np.array_equal(Y, expected[k]):
                failures.append((k, "held", "overwritten"))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
