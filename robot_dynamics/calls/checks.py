"""The argument checks of the whole library: one validator per kind of argument, each a ValueError naming the
culprit (Robot methods, the routes, the controllers and the ROS nodes use these)."""
import math

import numpy as np

_ND, _F64 = np.ndarray, np.dtype(np.float64)


def fits(x, shape):
    """x can receive a result of this shape in place (the fast test; checked_out says what is wrong)."""
    return type(x) is _ND and x.dtype is _F64 and x.shape == shape and x.flags.writeable


def dense_state(x, size):
    """x is an exact float64 ndarray of shape `size`, C-contiguous: a state vector the kernel takes as it is."""
    return type(x) is _ND and x.dtype is _F64 and x.shape == size and x.flags.c_contiguous


def dense_out(x, shape):
    """x can receive a result of this shape in place and is C-contiguous: an out the kernel writes as it is."""
    return fits(x, shape) and x.flags.c_contiguous


def checked_out(out, shape, name="out"):
    """out, if it can receive a result of this shape in place; else a ValueError naming it."""
    if not (isinstance(out, np.ndarray) and out.dtype == _F64 and out.shape == shape and out.flags.writeable):
        got = (f"a {'read-only ' if not out.flags.writeable else ''}{out.dtype} array of shape {out.shape}"
               if isinstance(out, np.ndarray) else type(out).__name__)
        raise ValueError(f"{name} must be a writeable float64 array of shape {shape}, got {got}")
    return out


def refuse_shared(input_names, inputs, outputs, names):
    """A ValueError when an output shares memory with an input or another output (np.shares_memory); True when
    some extents overlap without a shared element (np.may_share_memory), False when none do.  Arrays only: a
    list given as an input is copied before it is read."""
    maybe = False
    for i, x in enumerate(outputs):
        others = list(zip(input_names, inputs)) + list(zip(names[i + 1:], outputs[i + 1:]))
        for name, y in others:
            if not (isinstance(y, np.ndarray) and np.may_share_memory(x, y)):
                continue
            try:
                shared = np.shares_memory(x, y, max_work=100_000)
            except np.exceptions.TooHardError:
                shared = True
            if shared:
                raise ValueError(f"{names[i]} shares memory with {name}: an out must not overlap the inputs "
                                 f"or another out (results would overwrite what is still to be read)")
            maybe = True
    return maybe


def finite(x, what, culprit):
    """x, if all finite; else the ValueError of a result that overflows float64 (ERR_OVERFLOW's, for results
    computed in Python)."""
    if not np.isfinite(x).all():
        raise ValueError(f"{what} overflows float64 at this state (a result is not finite): {culprit} too large")
    return x


def scalar(x, name):
    """x as a finite float, else a ValueError naming it."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {x!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x}")
    return x


def check_vector(name, x, n):
    """x as a finite float array (a copy) of shape (n,), else a ValueError naming it."""
    x = np.array(x, dtype=float)
    if x.shape != (n,) or not np.isfinite(x).all():
        raise ValueError(f"{name} must be a finite array of shape ({n},), got shape {x.shape}"
                         + ("" if x.shape != (n,) else " with non-finite values"))
    return x
