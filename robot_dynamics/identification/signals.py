"""Velocities and accelerations of logged joint positions: zero-phase low-pass filtering, then differentiation.

Encoders give q; the regressor Y(q, v, v, a) also needs v and a.  Differentiating raw positions amplifies their
noise (quantization) by (2 pi f)^2 at frequency f, so q is first filtered by a Butterworth low-pass run forwards
and backwards (scipy.signal.sosfiltfilt): no phase lag, gain |H(f)|^2 (the order doubles), so the filtered q, v and
a stay aligned in time with the logged torques.  An excitation trajectory's content lies far below the cutoff
(excitation.py: harmonics up to a few Hz), where the filter's gain is 1 to within (f / cutoff)^(4 order).

Default cutoff: 10 Hz, at most 0.4 of the Nyquist frequency.  The derivatives are then central differences of
fourth order (5-point stencils; second order at the two samples of either end), whose error (w h)^4 / 30 is
negligible next to the filter's at the sampling rates of robot logs.

The ends: a zero-phase filter needs the signal before the first sample and after the last.  scipy's default odd
reflection keeps q and v continuous but flips a, whose jump then rings through 1 / cutoff of the log (a off by
as much as the acceleration itself at the ends, 4 % RMS over a 10 s log).  Here the reflection is about the
quintic fitted to the last 1 / cutoff seconds (_extension), continuous to the fifth derivative as far as the fit
goes: on sinusoids sampled at 1 kHz (default cutoff), a is off at the very ends by 4e-6 (relative) at 0.5 Hz,
3e-4 at 1.3 Hz, 1e-2 at 3 Hz, and by 1e-10 beyond 10 / cutoff.  Noise is another matter: the fit extrapolates a
16-bit encoder's quantization into errors of ~0.5 rad/s^2 in a within 1 / cutoff of the ends, against 6e-3
rad/s^2 RMS inside.  interior(t) marks the samples beyond 2 / cutoff of either end; identify() keeps only those
when it differentiates q itself.
"""
import numpy as np
import scipy.signal

DEFAULT_CUTOFF = 10.0       # Hz
PAD = 10.0                  # the log is extended by PAD periods of the cutoff at either end (the filter's start-up)
FIT = 1.0                   # over FIT periods of the cutoff, the polynomial that continues the log at either end
DEGREE = 5                  # of that polynomial
EDGE = 2.0                  # interior(): samples within EDGE periods of the cutoff of either end are left out
UNIFORM = 1e-3              # sampling intervals within this (relative) of their median count as uniform


def derivatives(t, q, cutoff=None, order=4):
    """(q_filtered, v, a) of positions sampled at times t: Butterworth low-pass run forwards and backwards
    (zero phase), then 4th-order central differences (module docstring).

    t: (N,) increasing times (s); q: (N, n) or (N,) joint coordinates (angles or positions, not a floating base's
    quaternion); cutoff: Hz (default 10 Hz, at most 0.4 Nyquist); order: of the Butterworth filter.  A log
    sampled unevenly (ROS timestamps) is resampled linearly onto its median interval h, filtered there, and
    interpolated back at t: q and v are then off by up to (w h)^2 / 2 (relative) at frequency w, and the
    resampling's error, which varies with the jitter from sample to sample, is noise to a (1e-4 relative for
    +-20 % jitter at 1 kHz).  ->  q_filtered, v, a, each shaped like q.
    """
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if t.ndim != 1:
        raise ValueError(f"t must be 1-D (N,), got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("t has non-finite entries")
    if q.ndim not in (1, 2) or len(q) != len(t):
        raise ValueError(f"q must be (N,) or (N, n) with N = len(t) = {len(t)}, got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ValueError("q has non-finite entries")
    if int(order) != order or order < 1:
        raise ValueError(f"order must be a positive integer, got {order!r}")
    h, cutoff = _interval_and_cutoff(t, cutoff)
    dt = np.diff(t)
    uniform = np.all(np.abs(dt - h) <= UNIFORM * h)
    grid = t if uniform else t[0] + h * np.arange(int(np.floor((t[-1] - t[0]) / h + 1e-9)) + 1)
    x = q.reshape(len(t), -1)
    if not uniform:
        x = np.stack([np.interp(grid, t, column) for column in x.T], axis=-1)
    if len(grid) < 5:
        raise ValueError(f"q needs at least 5 samples to differentiate, got {len(grid)}")
    sos = scipy.signal.butter(int(order), cutoff, fs=1.0 / h, output="sos")
    padlen = min(len(grid) - 1, int(np.ceil(PAD / (cutoff * h))))
    window = min(len(grid), max(8, int(np.ceil(FIT / (cutoff * h)))))
    padded = np.concatenate([_extension(x[::-1], padlen, window, h)[::-1], x, _extension(x, padlen, window, h)])
    x = scipy.signal.sosfiltfilt(sos, padded, axis=0, padtype=None)[padlen:padlen + len(grid)]
    v = central_difference(x, h, 1)
    a = central_difference(x, h, 2)
    if not uniform:
        x, v, a = (np.stack([np.interp(t, grid, column) for column in y.T], axis=-1) for y in (x, v, a))
    return tuple(y.reshape(q.shape) for y in (x, v, a))


def interior(t, cutoff=None):
    """The samples farther than EDGE / cutoff from either end of the log, where derivatives() has left the start-up
    of its filter behind (module docstring).  t: (N,), cutoff: Hz as for derivatives().  ->  (N,) bool"""
    t = np.asarray(t, dtype=float)
    _, cutoff = _interval_and_cutoff(t, cutoff)
    return (t >= t[0] + EDGE / cutoff) & (t <= t[-1] - EDGE / cutoff)


def interior_derivatives(t, q, cutoff=None):
    """(keep, q_filtered, v, a) of the interior samples only: derivatives() at every sample, then the mask of
    interior() applied, as identify() and the command line use them.  -> (N,) bool, then (M, n) arrays"""
    q, v, a = derivatives(t, q, cutoff)
    keep = interior(t, cutoff)
    return keep, q[keep], v[keep], a[keep]


def _interval_and_cutoff(t, cutoff):
    """The median sampling interval of t and the cutoff (the default resolved), checked.  -> (h, cutoff)"""
    dt = np.diff(t)
    if t.ndim != 1 or len(t) < 2 or not np.all(np.isfinite(t)) or np.any(dt <= 0):
        raise ValueError("t must be finite and strictly increasing, with at least two samples")
    h = float(np.median(dt))
    nyquist = 0.5 / h
    cutoff = min(DEFAULT_CUTOFF, 0.4 * nyquist) if cutoff is None else float(cutoff)
    if not 0 < cutoff < nyquist:
        raise ValueError(f"cutoff must be in (0, {nyquist:g}) Hz (the Nyquist frequency of t), got {cutoff!r}")
    return h, cutoff


def _extension(x, padlen, window, h):
    """padlen samples continuing x (N, m) past its end, continuous with its first DEGREE derivatives (as far as
    the fit gets them): with P the polynomial of degree DEGREE fitted to the last `window` samples, x - P extended
    oddly about the end, x(T + s) = P(T + s) + P(T - s) - x(T - s) = 2 (even part of P about T)(s) - x(T - s).
    ->  (padlen, m)"""
    u = np.arange(window) / window                                   # time back from the end, in windows
    c = np.polynomial.polynomial.polyfit(u, x[::-1][:window], DEGREE)    # x(T - s) ~ sum_k c_k (s / window h)^k
    u = np.arange(1, padlen + 1)[:, None] / window
    return 2 * sum(c[k] * u**k for k in range(0, DEGREE + 1, 2)) - x[::-1][1:padlen + 1]


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
