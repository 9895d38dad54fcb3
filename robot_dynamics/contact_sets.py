"""Contact sets for Robot.constrained_dynamics: Contact, contact_list, and the route of the _constrained_dynamics row.

A contact set is the row's constant input: one spec array (algorithms/contacts.py) for every state of a batch,
built from the Contacts here, checked and cached by the set.  The row's C Call computes the set last given in Python
(Call.remember), so a controller that calls with the same set at every tick stays in C; another set, Baumgarte
gains or damping go through ContactDynamics.solve.
"""
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .algorithms import contacts as _contacts
from .algorithms.frames import REFERENCES
from .algorithms.kinematics import ERR_SINGULAR
from .calls.checks import dense_out, dense_state, finite, refuse_shared
from .calls.kernels import row_kernel, ROWS
from .calls.quantity import Quantity

_empty = np.empty
KINDS = {"point": 3, "surface": 6}                       # rows of a contact
CONTACT_REFERENCES = ("local_world_aligned", "local")


@dataclass(frozen=True)
class Contact:
    """A contact of Robot.constrained_dynamics: the frame `frame` (a name of robot.frame_names or its index) held

    - kind="point": its origin does not accelerate -- 3 rows, the linear ones of its Jacobian; its force (3,);
    - kind="surface": the frame does not accelerate at all -- 6 rows; its wrench [force; torque] (6,) about the
      frame's origin (a foot's sole, a gripper's grasp).

    reference: the axes of the rows and of the forces, "local_world_aligned" (the default: world axes at the frame's
    origin, e.g. a ground reaction with z up) or "local" (the frame's own axes), as frame_jacobian's.
    target: where the Baumgarte position term pulls the frame: a position (3,) for a point, a pose (4, 4) for a
    surface (its rotation error is log(R R_target^T)); None (the default): no position term.  A plain frame name
    in a contact list is Contact(name), a point contact.
    """
    frame: object
    kind: str = "point"
    reference: str = "local_world_aligned"
    target: object = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Contact kind must be 'point' or 'surface', got {self.kind!r}")
        if self.reference not in CONTACT_REFERENCES:
            raise ValueError(f"Contact reference must be 'local_world_aligned' or 'local', got {self.reference!r}")
        if self.target is not None:                 # kept as a tuple: a Contact is hashable (contact sets are cached)
            shape = (3,) if self.kind == "point" else (4, 4)
            try:
                t = np.array(self.target, dtype=float)
            except (TypeError, ValueError):
                t = None
            if t is None or t.shape != shape or not np.isfinite(t).all():
                raise ValueError(f"Contact target of a {self.kind} must be a finite array of shape {shape}")
            object.__setattr__(self, "target", tuple(t.ravel()))


def contact_list(contacts):
    """A contact set as a tuple of Contacts: a list (or tuple) of frame names (point contacts) and Contacts, or a
    mapping {frame: "point" | "surface"}; anything else, a single frame included, is a ValueError naming it."""
    if isinstance(contacts, Mapping):
        items = []
        for frame, kind in contacts.items():
            if kind not in KINDS:
                raise ValueError(f"contacts[{frame!r}] must be 'point' or 'surface' (a mapping gives each frame's "
                                 f"kind), got {kind!r}")
            items.append(Contact(frame, kind))
        return tuple(items)
    if isinstance(contacts, (str, Contact)) or not hasattr(contacts, "__iter__"):
        raise ValueError(f"contacts must be a list of frame names or Contacts, or a mapping {{frame: 'point' | "
                         f"'surface'}}, got {type(contacts).__name__}")
    return tuple(c if isinstance(c, Contact) else Contact(c) for c in contacts)


class ContactDynamics(Quantity):
    """The _constrained_dynamics row of one robot: called as (q, v, tau, contacts, out) by its C Call's hand-over
    and Robot.constrained_dynamics, and as solve(...) with gains."""

    def __init__(self, engine, row):
        super().__init__(engine, row)
        self.shapes = (engine.v_shape, (0,))        # the forces' m rows: the set's (its C Call `remember`s them)
        self.specs, self.last = {}, None            # {(set, baumgarte, damping): (spec, m, items)}; the last one
        self.remembered = None                      # (key, spec, m): the set last solved without gains (lean)

    def c_call(self):
        if self.engine.coupled:                     # no articulated-body recursion: Python's dense route
            return self
        return super().c_call()

    def lean(self):
        """The entry without the C extension: what the C Call does, in Python -- for the set last solved without
        gains (`remembered`), one state of float64 vectors and new results, straight into the compiled kernel
        (3-4 us less a call than `solve`); anything else, and a kernel's error, to this Quantity."""
        if self.engine.coupled:
            return self
        kernel, e, sizes = row_kernel(self.row.name), self.engine, self.sizes

        def entry(q, v, tau, contacts, out=None):
            remembered = self.remembered
            if (remembered is None or type(contacts) not in (tuple, list)
                    or (contacts if type(contacts) is tuple else tuple(contacts)) != remembered[0]
                    or not (dense_state(q, sizes[0]) and dense_state(v, sizes[1]) and dense_state(tau, sizes[2]))):
                return self(q, v, tau, contacts, out)
            _, spec, m = remembered
            if out is None:
                outs = _empty(sizes[1]), _empty(m)
            elif type(out) is tuple and len(out) == 2 and dense_out(out[0], sizes[1]) and dense_out(out[1], (m,)):
                outs = out
            else:
                return self(q, v, tau, contacts, out)
            if kernel(e.bodies, e.work, *self.arrays, *self.constants, q, v, tau, spec, *outs):
                return self(q, v, tau, contacts, out)          # the route says what went wrong
            return outs
        return entry

    def __call__(self, q, v, tau, contacts, out=None):
        return self.solve(q, v, tau, contacts, (0.0, 0.0), 0.0, out)

    def spec(self, contacts, baumgarte, damping):
        """(spec, m, items, key) of a contact set: the kernel's array, its number of rows, its Contacts and the
        tuple that keys it; looked up by the set (identical elements: no Contact.__hash__, ~0.1 us a contact)."""
        if type(contacts) not in (tuple, list):     # a mapping, or what contact_list refuses: Contacts before any key
            contacts = contact_list(contacts)
        key = contacts if type(contacts) is tuple else tuple(contacts)
        last = self.last
        try:
            if (last is not None and type(baumgarte) is tuple and type(damping) in (int, float) and last[0] == key
                    and last[1] == baumgarte and last[2] == damping):
                return (*last[3], key)
            found = self.specs[key, baumgarte, damping]
            self.last = (key, baumgarte, damping, found)
            return (*found, key)
        except (KeyError, TypeError):
            return (*self.build(key, baumgarte, damping), key)

    def build(self, contacts, baumgarte, damping):
        """(spec, m, items) of a contact set, checked; cached when hashable; the row's arrays grown to m rows."""
        items = list(contact_list(contacts))
        if len(items) > _contacts.MAX_CONTACTS:
            raise ValueError(f"at most {_contacts.MAX_CONTACTS} contacts, got {len(items)}")
        try:
            Kp, Kd = (float(x) for x in baumgarte)
        except (TypeError, ValueError):
            raise ValueError(f"baumgarte must be two gains (Kp, Kd), got {baumgarte!r}") from None
        if not (np.isfinite([Kp, Kd]).all() and Kp >= 0 and Kd >= 0):
            raise ValueError(f"baumgarte gains must be finite and non-negative, got {baumgarte!r}")
        mu = float(damping) if isinstance(damping, (int, float, np.floating, np.integer)) else np.nan
        if not (np.isfinite(mu) and mu >= 0):
            raise ValueError(f"damping must be a finite non-negative number, got {damping!r}")
        spec, m = [len(items), 0, Kp, Kd, mu], 0
        for c in items:
            F = self.engine.frames.array(c.frame, "local")
            if F[0] < 0:
                raise ValueError(f"frame {c.frame!r} is fixed to the world: it cannot be a contact")
            rows = KINDS[c.kind]
            target = np.zeros(12)
            if c.target is not None:
                t = np.array(c.target)
                target = np.concatenate([np.eye(3).ravel(), t]) if rows == 3 else \
                    np.concatenate([t.reshape(4, 4)[:3, :3].ravel(), t.reshape(4, 4)[:3, 3]])
            spec += [F[0], rows, m, REFERENCES[c.reference], *F[2:14], float(c.target is not None), *target]
            m += rows
        spec[1] = m
        spec = np.array(spec, dtype=float)
        if self.arrays[0].shape[2] < m:             # room for m rows; the C Call (which holds the old arrays) anew
            self.arrays = (np.zeros((self.engine.nbodies, 6, m)), np.zeros((m, m + _contacts.EXTRA)))
            calls = self.calls()
            if calls is not None:
                calls.forget(self.row.name)
        try:
            self.specs[contacts, baumgarte, damping] = spec, m, items
        except TypeError:                           # unhashable: checked again at every call
            pass
        return spec, m, items

    def solve(self, q, v, tau, contacts, baumgarte, damping, out):
        """(a, forces) of Robot.constrained_dynamics: the row's route (Quantity.compute) with the set's spec as
        its constant input and m force rows."""
        spec, m, items, key = self.spec(contacts, baumgarte, damping)
        shapes = (self.engine.v_shape, (m,))
        if self.engine.coupled:
            return self.coupled(q, v, tau, spec, shapes, items, out)
        if type(baumgarte) is tuple and baumgarte == (0.0, 0.0) and type(damping) in (int, float) and damping == 0.0:
            self.remembered = (key, spec, m)        # the lean entry computes this set from now on (no C), and
            calls = self.calls()                    # the C Call
            remember = getattr(None if calls is None else calls.get(self.row.name), "remember", None)
            if remember is not None:
                remember(key, spec, shapes)
        results = self.compute((q, v, tau), self.outputs(out), spec, shapes)
        return tuple(results) if out is None else out

    def coupled(self, q, v, tau, spec, shapes, items, out):
        """The KKT system of contacts.py written densely, through a Cholesky factor of M (joints coupled by mimics:
        no innovations), the rows and Jdot v from the frame rows, e from the frames' placements."""
        from scipy.linalg import cho_factor, cho_solve
        from scipy.spatial.transform import Rotation
        e, calls = self.engine, self.calls()
        nv = e.nv
        Q, V, T, batch = e.batch(q=q, v=v, tau=tau)
        m = shapes[1][0]
        results = self.outputs(out)
        if results is None:
            results = [_empty(batch + s) for s in shapes]
        self.check_outs(batch, results, shapes)
        refuse_shared(("q", "v", "tau"), (q, v, tau), results, self.names)
        Kp, Kd, mu = spec[2:5]
        A, F = results[0].reshape(-1, nv), results[1].reshape(-1, m)
        for i, (qi, vi, ti) in enumerate(zip(Q, V, T)):
            d = calls["_dynamics"](qi, vi, None)
            J, gamma = [], []
            for c in items:
                rows = KINDS[c.kind]
                Jc = calls["_frame_jacobian"](qi, c.frame, c.reference, None)[:rows]
                err = np.zeros(rows)
                if c.target is not None:
                    Tf, target = calls["_frame_placement"](qi, c.frame, "local", None), np.array(c.target)
                    if rows == 3:
                        err = Tf[:3, 3] - target
                    else:
                        target = target.reshape(4, 4)
                        err = np.concatenate([Tf[:3, 3] - target[:3, 3],
                                              Rotation.from_matrix(Tf[:3, :3] @ target[:3, :3].T).as_rotvec()])
                    if c.reference == "local":
                        err = np.concatenate([Tf[:3, :3].T @ err[:3], Tf[:3, :3].T @ err[3:]])
                J.append(Jc)
                bias = calls["_frame_acceleration_bias"](qi, vi, c.frame, c.reference, None)[:rows]
                gamma.append(bias + Kp * err + Kd * Jc @ vi)
            J, gamma = np.vstack(J), np.concatenate(gamma)
            try:
                factor = cho_factor(d.M)
            except np.linalg.LinAlgError:
                raise e.error(ERR_SINGULAR, ROWS["forward_dynamics"]) from None
            a0 = cho_solve(factor, ti - d.C @ vi - d.g)
            MJt = cho_solve(factor, J.T)
            delassus = J @ MJt + mu * np.eye(m)
            try:
                U = np.linalg.cholesky(delassus) if np.isfinite(delassus).all() else None
            except np.linalg.LinAlgError:
                U = None
            if U is None or not (np.diag(U) ** 2 > 1e-12 * np.abs(np.diag(delassus)).max()).all():
                raise e.error(_contacts.ERR_REDUNDANT, self.row)
            F[i] = finite(-cho_solve((U, True), J @ a0 + gamma), "constrained_dynamics", "tau")
            A[i] = finite(a0 + MJt @ F[i], "constrained_dynamics", "tau")
        if not np.may_share_memory(A, results[0]):
            results[0][...] = A.reshape(results[0].shape)
            results[1][...] = F.reshape(results[1].shape)
        return tuple(results) if out is None else out
