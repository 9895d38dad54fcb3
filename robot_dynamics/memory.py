"""Recycled memory for the results of batches.

A batch of 1024 states returns ~100 MB (the regressor of a humanoid: 1024 x 35 x 300 doubles).  Fresh memory of
that size costs more than computing it: numpy asks Linux for huge pages, and the first touch of each 2 MB page
waits for the kernel to find (compact) one -- 6 ms for 86 MB when free huge pages are at hand, up to 140 ms when not
(measured here), against 5 ms for the regressor itself on two cores.  An identification or rollout loop that calls
robot.regressor(Q, ...) chunk after chunk pays that every call.

ResultPool hands out new arrays whose memory comes from results the caller has dropped: a result keeps its buffer
while any view of it lives (its base is a _Lease, which gives the buffer back when the last reference goes), so a
returned array is never shared with another -- the semantics of np.empty.  What is kept is bounded: exact sizes of
at least MIN_BYTES, at most PER_SIZE buffers of a size and MAX_BYTES in all per pool; the pool is the Robot's, and
its memory goes with the Robot.  Arrays passed as out= never touch it.
"""
import math
import threading

import numpy as np

MIN_BYTES = 1 << 20             # smaller results: np.empty (malloc's own free lists serve them)
MAX_BYTES = 512 << 20           # free buffers kept by one pool, in all
PER_SIZE = 4                    # free buffers kept of one size (the bundle returns M and C of the same size)


class _Lease:
    """The base of an array handed out by a ResultPool: exposes the buffer through the array interface, and gives
    it back to the pool when it is collected (the array and every view of it are gone)."""
    __slots__ = ("_pool", "_buffer", "__array_interface__")

    def __init__(self, pool, buffer, shape):
        self._pool, self._buffer = pool, buffer
        self.__array_interface__ = {"shape": shape, "typestr": "<f8", "data": (buffer.ctypes.data, False),
                                    "version": 3}

    def __del__(self):
        self._pool.give_back(self._buffer)


class ResultPool:
    """New float64 arrays, built on buffers of dropped results of the same size when there are some."""

    def __init__(self, max_bytes=MAX_BYTES):
        self.max_bytes = max_bytes
        self._free = {}                     # element count -> buffers (1-D float64) no array uses
        self._kept = 0                      # their bytes
        self._lock = threading.RLock()      # reentrant: a garbage collection inside empty() may give one back

    def empty(self, shape):
        """An uninitialized C-contiguous float64 array of `shape` (np.empty's contract)."""
        n = math.prod(shape)
        if 8 * n < MIN_BYTES:
            return np.empty(shape)
        with self._lock:
            free = self._free.get(n)
            buffer = free.pop() if free else None
            if buffer is not None:
                self._kept -= 8 * n
        if buffer is None:
            buffer = np.empty(n)
        return np.asarray(_Lease(self, buffer, tuple(shape)))

    def give_back(self, buffer):
        """Keep `buffer` (1-D float64, no array uses it) for a later result of its size, within the bounds."""
        n = buffer.size
        with self._lock:
            free = self._free.setdefault(n, [])
            if len(free) < PER_SIZE and self._kept + 8 * n <= self.max_bytes:
                free.append(buffer)
                self._kept += 8 * n

    def clear(self):
        """Let go of every free buffer (results in use are not affected)."""
        with self._lock:
            self._free.clear()
            self._kept = 0

    @property
    def kept_bytes(self):
        """Bytes of the free buffers held for reuse."""
        return self._kept
