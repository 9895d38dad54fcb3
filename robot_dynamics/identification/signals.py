"""Velocities and accelerations of logged joint positions: zero-phase low-pass filtering, then differentiation.

Encoders give q; the regressor Y(q, v, v, a) also needs v and a.  Differentiating raw positions amplifies their
noise (quantization) by (2 pi f)^2 at frequency f, so q is first filtered by a Butterworth low-pass run forwards
and backwards (scipy.signal.sosfiltfilt): no phase lag, gain |H(f)|^2 (the order doubles), so the filtered q, v and
a stay aligned in time with the logged torques.  An excitation trajectory's content lies far below the cutoff
(excitation.py: harmonics up to a few Hz), where the filter's gain is 1 to within (f / cutoff)^(4 order).

Default cutoff: 10 Hz, at most 0.4 of the Nyquist frequency.  The derivatives are then central differences of
fourth order (5-point stencils; second order at the two samples of either end), whose error (w h)^4 / 30 is
negligible next to the filter's at the sampling rates of robot logs.  The ends carry the filter's start-up transient
(the log is extended by odd reflection, which keeps q and v continuous but not a): on a 0.5 Hz sinusoid sampled at
1 kHz, a is off by 1e-2 (relative) within 1 / cutoff of either end, 1e-4 within 3 / cutoff and 1e-10 beyond
10 / cutoff.  identify() keeps every sample; trim a log that must be exact to the end.
"""
import numpy as np
import scipy.signal

DEFAULT_CUTOFF = 10.0       # Hz
UNIFORM = 1e-3              # sampling intervals within this (relative) of their median count as uniform


def derivatives(t, q, cutoff=None, order=4):
    """(q_filtered, v, a) of positions sampled at times t: Butterworth low-pass run forwards and backwards
    (zero phase), then 4th-order central differences (module docstring).

    t: (N,) increasing times (s); q: (N, n) or (N,) joint coordinates (angles or positions, not a floating base's
    quaternion); cutoff: Hz (default 10 Hz, at most 0.4 Nyquist); order: of the Butterworth filter.  A log
    sampled unevenly (ROS timestamps) is resampled linearly onto its median interval, filtered there, and
    interpolated back at t.  ->  q_filtered, v, a, each shaped like q.
    """
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"t must be 1-D (N,), got shape {t.shape}")
    if q.ndim not in (1, 2) or len(q) != len(t):
        raise ValueError(f"q must be (N,) or (N, n) with N = len(t) = {len(t)}, got shape {q.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("t has non-finite entries")
    if not np.all(np.isfinite(q)):
        raise ValueError("q has non-finite entries")
    if int(order) != order or order < 1:
        raise ValueError(f"order must be a positive integer, got {order!r}")
    dt = np.diff(t)
    if len(t) < 2 or np.any(dt <= 0):
        raise ValueError("t must be strictly increasing with at least two samples")
    h = float(np.median(dt))
    nyquist = 0.5 / h
    cutoff = min(DEFAULT_CUTOFF, 0.4 * nyquist) if cutoff is None else float(cutoff)
    if not 0 < cutoff < nyquist:
        raise ValueError(f"cutoff must be in (0, {nyquist:g}) Hz (the Nyquist frequency of t), got {cutoff!r}")
    uniform = np.all(np.abs(dt - h) <= UNIFORM * h)
    grid = t if uniform else t[0] + h * np.arange(int(np.floor((t[-1] - t[0]) / h + 1e-9)) + 1)
    x = q.reshape(len(t), -1)
    if not uniform:
        x = np.stack([np.interp(grid, t, column) for column in x.T], axis=-1)
    if len(grid) < 5:
        raise ValueError(f"q needs at least 5 samples to differentiate, got {len(grid)}")
    sos = scipy.signal.butter(int(order), cutoff, fs=1.0 / h, output="sos")
    padlen = min(len(grid) - 1, 3 * int(np.ceil(1.0 / (cutoff * h))))           # three periods of the cutoff
    x = scipy.signal.sosfiltfilt(sos, x, axis=0, padlen=padlen)
    v = central_difference(x, h, 1)
    a = central_difference(x, h, 2)
    if not uniform:
        x, v, a = (np.stack([np.interp(t, grid, column) for column in y.T], axis=-1) for y in (x, v, a))
    return tuple(y.reshape(q.shape) for y in (x, v, a))


def central_difference(x, h, n):
    """n-th derivative (n = 1, 2) of x (N, m) sampled every h: 5-point central stencils (error O(h^4)), 3-point
    one-sided second-order ones at the two samples of either end.  -> (N, m)"""
    d = np.empty_like(x)
    if n == 1:
        d[2:-2] = (x[:-4] - 8 * x[1:-3] + 8 * x[3:-1] - x[4:]) / (12 * h)
        d[:2] = (-3 * x[0:2] + 4 * x[1:3] - x[2:4]) / (2 * h)
        d[-2:] = (3 * x[-2:] - 4 * x[-3:-1] + x[-4:-2]) / (2 * h)
    else:
        d[2:-2] = (-x[:-4] + 16 * x[1:-3] - 30 * x[2:-2] + 16 * x[3:-1] - x[4:]) / (12 * h**2)
        d[:2] = (2 * x[0:2] - 5 * x[1:3] + 4 * x[2:4] - x[3:5]) / h**2
        d[-2:] = (2 * x[-2:] - 5 * x[-3:-1] + 4 * x[-4:-2] - x[-5:-3]) / h**2
    return d
