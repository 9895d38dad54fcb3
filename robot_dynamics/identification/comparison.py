"""Which friction model to keep: each one identified on the same training samples and judged by the RMS of its
torque prediction on samples it has not seen.

A model with more parameters always fits its training samples at least as well; the held-out RMS is the fair
judge, and a model that does not lower it is not worth writing back.  Held out are a second log when one is given,
else the last ``fraction`` of the samples (a contiguous block: noise and drift correlated in time do not leak
from the training samples into the judgement, as they would with samples picked at random).
"""
from dataclasses import dataclass

import numpy as np

from ..friction import model_class, moving_coordinates
from .estimate import identify
from .least_squares import FRICTION_MODELS


@dataclass
class FrictionComparison:
    """Result of compare_friction_models.

    names: (nv,) coordinate names; results: {model: Identification} fitted on the training samples;
    train_rms, held_out_rms: {model: (nv,)} RMS torque residual per coordinate on the training and held-out
    samples; parameters: {model: drive parameters per moving coordinate (armature, linear and nonlinear friction
    parameters)}; n_train, n_held_out: samples.
    """

    names: list
    results: dict
    train_rms: dict
    held_out_rms: dict
    parameters: dict
    n_train: int
    n_held_out: int

    def overall(self, rms):
        """One number of a (nv,) RMS per coordinate: sqrt(mean_j rms_j^2), the RMS of every residual."""
        return float(np.sqrt(np.mean(np.square(rms))))

    @property
    def best(self):
        """The model of the lowest overall held-out RMS."""
        return min(self.held_out_rms, key=lambda name: self.overall(self.held_out_rms[name]))

    def table(self):
        """The comparison as text: a row per model (drive parameters per coordinate, training and held-out RMS,
        the held-out RMS per coordinate); the best marked with '*'."""
        width = max(9, *(len(n) for n in self.names))
        head = (f"{'friction model':<16}{'params':>7}{'train RMS':>12}{'held-out RMS':>14}   "
                + "  ".join(f"{n:>{width}}" for n in self.names))
        lines = [f"held-out RMS torque per friction model ({self.n_train:,} training samples, {self.n_held_out:,} "
                 f"held out; params: drive parameters per joint coordinate)", head]
        for name in self.results:
            mark = " *" if name == self.best else ""
            lines.append(f"{name + mark:<16}{self.parameters[name]:>7}{self.overall(self.train_rms[name]):>12.5g}"
                         f"{self.overall(self.held_out_rms[name]):>14.5g}   "
                         + "  ".join(f"{x:>{width}.4g}" for x in self.held_out_rms[name]))
        return "\n".join(lines) + "\n"


def compare_friction_models(robot, q, v, a, tau, *, held_out=None, fraction=0.25, models=FRICTION_MODELS,
                            armature=False, method="wls", prior=None, regularization=0.0):
    """Each friction model identified (identify(), with the armature when armature) on the same training samples,
    and its torque prediction's RMS on held-out samples (module docstring).

    q: (N, nq), v, a, tau: (N, nv) the samples; held_out: None (the last ``fraction`` of the samples is held out)
    or (q, v, a, tau) of another log; models: names of friction.py's models, "none" for no friction;
    method, prior, regularization: as identify()'s.  -> FrictionComparison
    """
    q, v, a, tau = (np.asarray(x, dtype=float) for x in (q, v, a, tau))
    if held_out is None:
        if not 0 < fraction < 1:
            raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
        split = int(round(len(q) * (1 - fraction)))
        held_out = (q[split:], v[split:], a[split:], tau[split:])
        q, v, a, tau = q[:split], v[:split], a[:split], tau[:split]
    else:
        if len(held_out) != 4:
            raise ValueError("held_out: (q, v, a, tau) of the held-out samples")
        held_out = tuple(np.asarray(x, dtype=float) for x in held_out)
    models = list(models)
    if not models:
        raise ValueError(f"models: at least one of {', '.join(FRICTION_MODELS)}")
    n_f = len(moving_coordinates(robot))
    results, train, held, parameters = {}, {}, {}, {}
    for name in models:
        cls = model_class(name)
        result = identify(robot, q, v, a, tau, method=method, friction=name, armature=armature, prior=prior,
                          regularization=regularization)
        results[name] = result
        train[name] = result.residual_rms
        residual = result.predict(robot, *held_out[:3]) - held_out[3]
        held[name] = np.sqrt(np.mean(residual**2, axis=0))
        parameters[name] = (int(armature) + (len(cls.coefficients) + len(cls.nonlinear) if cls else 0)) if n_f else 0
    return FrictionComparison(list(robot.coordinate_names), results, train, held, parameters, len(q),
                              len(held_out[0]))
