"""Issue 13 (reliability): the batch loop's plumbing.  Its extent check (which refuses overlapping out=) is
numpy's bounds test, its layout in C is the Python one, and threads sharing a Robot get their own batches.
"""
import numpy as np
import pytest

import robot_dynamics as rd
from reliability_helpers import ROOT
from robot_dynamics.algorithms.workspace import workspace
from robot_dynamics.model import BODY


def test_the_batch_extent_check_is_numpys_bounds():
    """native.overlapping (C, _fastcall) and its stand-in without the extension against np.may_share_memory's
    bounds test on views of one buffer -- forward, reversed, strided, interleaved, empty (within another's extent
    too: no bytes, no overlap) -- and separate arrays.  The stand-in calls numpy's test itself: what this holds is
    that the C one is numpy's."""
    from robot_dynamics.calls.native import extension as _fastcall, extents_overlap
    base = np.arange(60.0).reshape(6, 10)
    views = [base, base[:2], base[3:], base[::-1], base[:, ::2], base[:, 1::2], base[2, :], base[:, 3], base[4:, ::-3],
             base[:0], base[5:, 9:], np.zeros(3), np.zeros((2, 0)), base[3:3], base[2:2, ::-1], base[1:3, 4:4]]
    checks = [extents_overlap] + ([_fastcall.overlapping] if _fastcall is not None else [])
    cases = 0
    for i, x in enumerate(views):
        for j, y in enumerate(views):
            for z in views[j + 1:]:
                expected = (np.may_share_memory(y, x) or np.may_share_memory(z, x)
                            or np.may_share_memory(z, y))
                for check in checks:
                    assert check((x,), (y, z)) == expected, (check, i, j)
                cases += 1
            for check in checks:
                assert check((x,), (y,)) == np.may_share_memory(y, x), (check, i, j)
                assert check((x, y), ()) is False                   # inputs may overlap each other
    assert cases > 500 and _fastcall is not None                    # the extension is built (test_fast_calls)


def test_the_batch_layout_in_c_is_the_python_one():
    """batch.layout (C, _fastcall) and its stand-in batch_layout write the same addresses, strides and dims;
    and batch_loop, given that layout, hands a kernel state i's rows, thread t's copies and the constants."""
    from robot_dynamics.calls.batch import batch_layout, batch_loop, thread_count
    from robot_dynamics.calls.native import extension as _fastcall
    rng = np.random.default_rng(7)
    threads = thread_count()
    per_thread = (rng.normal(size=(threads, 3, 2)), rng.normal(size=(threads, 5)))
    constants = (rng.normal(size=3),)
    per_state = (rng.normal(size=(6, 4)), rng.normal(size=(6, 2, 3))[::1], np.zeros((6, 4, 4)))
    expected = batch_layout(9, per_thread, constants, per_state)
    n = 6
    assert expected[0] == n
    assert list(expected[1:1 + n]) == [x.__array_interface__["data"][0] for x in per_thread + constants + per_state]
    assert list(expected[1 + n:1 + 2 * n]) == [0, 0, 0, 32, 48, 128]             # strides per state
    assert list(expected[1 + 2 * n:1 + 3 * n]) == [48, 40, 0, 0, 0, 0]           # strides per thread
    assert list(expected[1 + 3 * n:]) == [9, 3, 2, 5, 3, 4, 2, 3, 4, 4]          # nb, then one state's shapes
    assert _fastcall is not None                                   # the extension is built (test_fast_calls)
    np.testing.assert_array_equal(_fastcall.layout(9, per_thread, constants, per_state), expected)
    with pytest.raises(TypeError):
        _fastcall.layout(9, per_thread, constants, (np.float64(1.0),))           # a state row of 0 dimensions
    for table in [((), (), per_state), (per_thread, (), per_state[1:]),             # none of a kind; 0-d, strided
                  ((), (np.array(2.0), constants[0]), per_state),
                  (per_thread[:1], constants, (per_state[1][::2], per_state[0][::-1]))]:
        np.testing.assert_array_equal(_fastcall.layout(4, *table), batch_layout(4, *table))

    import ctypes

    from numba import carray, cfunc
    from numba import types as nt

    @cfunc(nt.int64(nt.voidptr, nt.voidptr, nt.CPointer(nt.voidptr), nt.CPointer(nt.int64)))
    def kernel(bodies, work, p, d):           # out = [x0 + c, 2 x1 + w[t]], status 5 when x0 < 0
        w, c = carray(p[0], (d[1],), dtype=np.float64), carray(p[1], (d[2],), dtype=np.float64)
        x, out = carray(p[2], (d[3],), dtype=np.float64), carray(p[3], (d[4],), dtype=np.float64)
        out[0], out[1] = x[0] + c[0], 2.0 * x[1] + w[0]
        return 5 if x[0] < 0.0 else 0

    entry = ctypes.CFUNCTYPE(ctypes.c_int64, *[ctypes.c_void_p] * 4)(kernel.address)
    w = 100.0 * np.arange(1, threads + 1)[:, None]           # thread t's copy holds 100 (t + 1)
    c, x = np.array([1000.0]), rng.normal(size=(64, 2))
    x[5, 0] = -abs(x[5, 0])
    out, status = np.zeros((64, 2)), np.zeros(64, dtype=np.int64)
    plan = _fastcall.layout(1, (w,), (c,), (x, out))
    bodies, works = np.zeros(1, dtype=BODY), workspace(1)[None].repeat(threads, axis=0)
    batch_loop(entry, bodies, works, plan, np.zeros((threads, plan[0]), dtype=np.int64), status)
    np.testing.assert_array_equal(status, np.where(x[:, 0] < 0, 5, 0))
    np.testing.assert_array_equal(out[:, 0], x[:, 0] + 1000.0)
    thread_part = out[:, 1] - 2.0 * x[:, 1]                  # 100 (t + 1) of the thread that ran each state
    assert np.all(np.isin(np.round(thread_part), w[:, 0])), thread_part


def test_threads_sharing_a_robot_get_their_own_batches():
    """A batch runs outside the GIL in the Robot's per-thread workspaces: threads that share one Robot used to get
    each other's sums (a regressor off by up to 44, found by the Dask route's threads).  Four threads each run
    their own batches on one arm; every result equals the same batch computed alone."""
    import threading
    robot = rd.load_urdf(ROOT / "urdf" / "arm7.urdf")
    rng = np.random.default_rng(0)
    data = [rng.normal(size=(4, 20000, robot.nv)) for _ in range(4)]
    alone = [(robot.regressor(*d), robot.mass_matrix(d[0])) for d in data]
    shared = [[] for _ in data]

    def work(i):
        for _ in range(3):
            shared[i].append((robot.regressor(*data[i]), robot.mass_matrix(data[i][0])))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(data))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for expected, results in zip(alone, shared):
        assert len(results) == 3
        for Y, M in results:
            np.testing.assert_array_equal(Y, expected[0])
            np.testing.assert_array_equal(M, expected[1])
