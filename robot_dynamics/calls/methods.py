"""The hand-over from a Robot method to its row's entry: `forwards` (a _fastcall.Method in C) and Calls, the entry of
every registry row of one robot, made at its first use."""
import inspect
import typing
import weakref

from .kernels import ROWS
from .native import FAST_CALLS, Method
from .quantity import MatrixQuantity, Quantity


class Constant(typing.NamedTuple):
    """A value forwards hands to the entry in its place (frame_placement's reference "local")."""
    value: object


_REQUIRED = object()          # marks a parameter without a default, for _fastcall.Method


def forwards(row, *arguments):
    """Decorate a Robot method whose body, when every parameter not among `arguments` holds its default (the very
    object), is ``return self._calls[row](*arguments)`` -- `arguments` the names of its parameters and Constants,
    in the entry's order.  With the C extension the def becomes a _fastcall.Method, which does exactly that in C
    (binding positional and keyword arguments to the def's parameters and defaults) and calls the def itself for
    anything else: the same results and errors, without the def's Python frame (~0.09 us a call, 10-15 % of a
    frame Jacobian).  Read from the class it is the def (its signature, docstring and source).  Without the
    extension the def stays as it is.  test_architecture checks each against its def's own hand-over."""
    def decorate(function):
        code = function.__code__
        if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount:
            raise TypeError(f"{function.__qualname__}: forwards takes plain parameters only")
        names = code.co_varnames[1:code.co_argcount]
        given = function.__defaults__ or ()
        defaults = (_REQUIRED,) * (len(names) - len(given)) + given
        constants = tuple(x.value for x in arguments if isinstance(x, Constant))
        forward, c = [], 0
        for x in arguments:
            if isinstance(x, Constant):
                forward.append(-1 - c)
                c += 1
            else:
                forward.append(names.index(x))      # a ValueError for a name the def does not have
        function.forwards = (row, tuple(arguments))
        if Method is None:
            return function
        return Method(function, row, tuple(names), defaults, _REQUIRED, tuple(forward), constants)
    return decorate


class Calls(dict):
    """The entry of every registry row of one robot, by the row's name (calls["mass_matrix"], calls["_dynamics"],
    ...), made at its first use (__missing__) and kept: the row's C Call (Quantity.c_call) in front of its
    Quantity, or without the C extension its lean entry (Quantity.lean).  routes: {row
    name: a Quantity subclass} for rows with a route of their own (contact_sets.ContactDynamics, MatrixQuantity)."""

    def __init__(self, engine, routes=()):
        super().__init__()
        self.engine, self.quantities = engine, {}
        self.routes = {"_solve_mass_matrix": MatrixQuantity, **dict(routes)}

    def quantity(self, name):
        """The Quantity of row `name`: the route in Python (what its C Call hands over to)."""
        quantity = self.quantities.get(name)
        if quantity is None:
            quantity = self.quantities[name] = self.routes.get(name, Quantity)(self.engine, ROWS[name])
            quantity.calls = weakref.ref(self)
        return quantity

    def __missing__(self, name):
        quantity = self.quantity(name)              # a KeyError for a name that is not a row's
        value = quantity.c_call() if FAST_CALLS else quantity.lean()
        self[name] = value
        return value

    def forget(self, name):
        """Make row `name`'s entry anew at its next use (its per-robot arrays have changed)."""
        self.pop(name, None)
