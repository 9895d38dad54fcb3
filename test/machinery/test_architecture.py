"""The package's shape: the import graph has no cycle and follows the layers, only robot_dynamics/ros imports
rclpy, nothing reaches into numba's private attributes, Robot is an explicit facade, and every quantity of the
registry is a Robot method whose batch runs in the compiled parallel loop."""
import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithms.registry import QUANTITIES
from robot_dynamics.calls.batch import batch_loop
from robot_dynamics.calls.compiling import compiled
from robot_dynamics.calls.native import FAST_CALLS, Method
from robot_dynamics.calls.kernels import loop_types
from robot_dynamics.bundled import bundled_urdf

PACKAGE = Path(rd.__file__).parent


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path):
    """The robot_dynamics modules (and top-level packages) that the module at `path` imports, at any depth: `from
    package import submodule` imports the submodule (and runs the package's __init__, which must then import
    nothing above the importer: calls/__init__ imports nothing), `from package import name` the package itself."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            named = {f"{base}.{alias.name}" for alias in node.names}
            found |= named
            if not all(is_module(m) for m in named):      # a name defined in the package itself
                found.add(base)
    return found


def is_module(name):
    """A module or package of robot_dynamics by that dotted name exists."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def package_modules():
    """{module name: path} of every module of the package (generated kernel modules in __pycache__ excluded)."""
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def graph():
    modules = package_modules()
    return {name: {m for m in imports(path) if m in modules and m != name} for name, path in modules.items()}


def test_no_import_cycle(graph):
    """Depth-first search for a back edge; a package's own __init__ importing its submodules is not a cycle
    (importing a submodule imports its package first, which Python resolves)."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph[m]):
            if m.startswith(n + "."):          # a module importing its own package (e.g. `from .. import model`)
                continue
            if state.get(n) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


# The layers, lowest first: a module imports only modules of its own layer or below.  Every module of the package
# is placed, by its name or by its package's (so a new top-level module must be placed here).
LAYERS = (
    ("foundation", ("spatial", "simd", "dense", "inertia", "drives", "friction", "memory", "results", "bundled")),
    ("description", ("urdf", "mjcf", "model", "configuration", "drive_files")),
    ("compiling", tuple(f"calls.{m}" for m in ("cache", "compiling", "generated", "native", "batch"))),
    ("kernels", ("algorithms",)),
    ("calls", ("calls", "composed", "contact_sets", "mimic", "observers")),
    ("facade", ("robot", "loading")),
    ("applications", ("controllers", "identification")),
    ("viewer", ("viewer",)),                    # the browser view (an optional extra): no library module sees it
    ("namespace", ("",)),                       # robot_dynamics/__init__.py: the public names
    ("ros", ("ros",)),
    ("programs", ("demo", "cli", "precompile")))      # precompile: `robot-dynamics compile`, methods and controllers


def layer_of(module):
    """The index in LAYERS of `module` (a dotted name under robot_dynamics), by its longest placed prefix."""
    relative = module.removeprefix("robot_dynamics").removeprefix(".")
    placed = [(len(prefix), i) for i, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes
              if relative == prefix or relative.startswith(prefix + ".")]
    assert placed, f"{module} is in no layer: place it in LAYERS (test/machinery/test_architecture.py)"
    return max(placed)[1]


def upward_imports(graph):
    """[(module, imported)] where `module` imports a module of a higher layer (its own ancestor packages aside: a
    submodule's import runs its package's __init__ first, which is not the submodule's choice)."""
    return [(module, target) for module, targets in sorted(graph.items()) for target in sorted(targets)
            if not module.startswith(target + ".") and layer_of(target) > layer_of(module)]


def test_layers(graph):
    """Every module of the package has a layer and imports nothing above it: the description (URDF, MJCF, model)
    knows no kernel, the kernels no call machinery, the call machinery no Robot, Robot no controller, no
    controller nor identification the viewer, the library no ROS, and ROS neither the demo nor the command line (an
    application imports the library, never the reverse)."""
    for module in graph:
        layer_of(module)
    assert upward_imports(graph) == []


def test_layers_catch_an_upward_import(graph):
    """The rule above fails for the reason it guards: the same graph with one upward edge added (the kernel cache
    importing Robot; the URDF parser importing a controller) is refused, naming the edge."""
    for module, target in (("robot_dynamics.calls.cache", "robot_dynamics.robot"),
                           ("robot_dynamics.urdf", "robot_dynamics.controllers.composite")):
        broken = {m: set(t) | ({target} if m == module else set()) for m, t in graph.items()}
        assert upward_imports(broken) == [(module, target)]


def test_every_module_does_one_job_within_600_lines():
    """Issue 39: no Python module of the package is over 600 lines but the kernels of algorithms/ (a long module is
    usually several jobs: split it by job, as calls/ and urdf/ are)."""
    long = {module_name(path): n for path in package_modules().values()
            if "algorithms" not in path.relative_to(PACKAGE).parts
            and (n := len(path.read_text().splitlines())) > 600}
    assert long == {}


def test_only_ros_imports_rclpy_and_nobody_reaches_into_numba():
    """rclpy is imported under robot_dynamics/ros only; no module imports numba.core or touches a private
    attribute (a name with one leading underscore) of an object other than self or super(): lxml's public
    etree._Element type is the one exception."""
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        if "ros" not in path.relative_to(PACKAGE).parts:
            assert not any(x.split(".")[0] == "rclpy" for x in names), path
        assert not any(x.startswith("numba.core") for x in names), f"{path} imports numba's internals"
        foreign = [(n.lineno, n.attr) for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                   and n.attr.startswith("_") and not n.attr.startswith("__")
                   and not (isinstance(n.value, ast.Name) and n.value.id == "self") and n.attr != "_Element"
                   and not (isinstance(n.value, ast.Call) and getattr(n.value.func, "id", None) == "super")]
        assert not foreign, f"{path}: private attributes {foreign}"


def test_robot_is_an_explicit_facade():
    """Issue 26: every public Robot method is a def in the class body of robot.py (no exec-made or attached
    method, no class swapped at run time), robot.py is at most 700 lines, and nothing in the package writes
    attributes onto Robot or generates code with exec."""
    source = (PACKAGE / "robot.py").read_text()
    assert len(source.splitlines()) <= 700
    tree = ast.parse(source)
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Robot").body
    defined = {n.name for n in body if isinstance(n, ast.FunctionDef)}
    public = {name for name in dir(rd.Robot) if not name.startswith("_")}
    assert public - defined - {"frame_names"} == set(), "public Robot methods not written in its class body"
    for name in public:
        member = inspect.getattr_static(rd.Robot, name)
        function = member.fget if isinstance(member, property) else getattr(member, "__wrapped__", member)
        assert inspect.getsourcefile(function) == str(PACKAGE / "robot.py"), name
        assert function.__doc__ and function.__qualname__ == f"Robot.{name}", name
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        assert "exec(" not in text and "setattr(Robot" not in text and "__class__ =" not in text, path


FORWARDING = sorted(name for name, member in vars(rd.Robot).items()
                    if hasattr(getattr(member, "__wrapped__", member), "forwards"))


@pytest.mark.parametrize("name", FORWARDING)
def test_a_method_called_in_c_hands_over_as_its_def(name):
    """methods.forwards: a Robot method written as a def that hands its arguments to self._calls[row] is, with the
    C extension, a _fastcall.Method that binds them in C. For every way of calling it -- positionally, by keyword,
    with each optional parameter given (the very default, and another value), too few or unknown arguments -- the
    Method and its def must reach the same entries with the same arguments, or raise the same error (a robot
    whose _calls record the calls)."""
    member = vars(rd.Robot)[name]
    function = getattr(member, "__wrapped__", member)
    assert isinstance(member, Method) if FAST_CALLS else member is function
    row, _ = function.forwards
    parameters = list(inspect.signature(function).parameters.values())[1:]
    required = [p.name for p in parameters if p.default is p.empty]
    optional = [p for p in parameters if p.default is not p.empty]

    class Recorded(dict):
        def __missing__(self, key):
            self[key] = lambda *args, key=key: self.log.append((key, args)) or ("result", key)
            return self[key]

    class Owner:
        def __init__(self):
            self._calls = Recorded()
            self._calls.log = []

    values = {p: object() for p in required}
    patterns = [((*values.values(),), {}), ((), dict(values)), ((*values.values(),), {"bogus": 1}),
                ((*list(values.values())[:-1],), {})]
    for p in optional:
        for value in (p.default, object()):
            patterns.append(((*values.values(),), {p.name: value}))
    for args, kwargs in patterns:
        outcomes = []
        for route in (function, member, member):           # the def first: it makes the entries it uses
            owner = Owner()
            try:
                function(owner, *args, **kwargs)
            except Exception:
                pass
            owner._calls.log.clear()
            try:
                result = route(owner, *args, **kwargs)
            except Exception as err:
                result = (type(err), str(err))
            outcomes.append((result, owner._calls.log))
        assert outcomes[0] == outcomes[1] == outcomes[2], (name, args, kwargs)
    values = [object() for _ in required]                          # and the usual call reaches the row
    owner = Owner()
    owner._calls[row]
    assert member(owner, *values) == ("result", row) and owner._calls.log[0][1][:len(values)] == tuple(values)


@pytest.mark.parametrize("row", [r for r in QUANTITIES if not r.name.startswith("_")], ids=lambda r: r.name)
def test_every_quantity_is_a_method_with_a_parallel_batch(row):
    """A registry row is a Robot method of the same name, whose docstring gives the shapes it takes and returns;
    its batch goes through the one compiled parallel loop (one signature for every quantity), and each state of
    the batch equals the single-state call (one compiled pass, two loops)."""
    robot = rd.load_urdf(bundled_urdf("quadruped"), floating_base=True)
    method = getattr(robot, row.name)
    assert "(..., nq)" in method.__doc__ and "->" in method.__doc__, row.name
    rng = np.random.default_rng(3)
    batch = [[robot.random_configuration(rng) if name.startswith("q") else rng.normal(size=robot.nv)
              for name in row.inputs] for _ in range(3)]
    stacked = [np.array(x) for x in zip(*batch)]
    loop, calls = compiled(batch_loop, loop_types()), []

    def counted(*args):
        calls.append(args[-1].shape[0])
        return loop(*args)

    robot._engine.loop = counted                                  # the loop the robot's batches call
    got = method(*stacked)
    assert calls == [3], "the whole batch went through the compiled parallel loop, in one call"
    assert len(batch_loop.signatures) == 1, "one compiled loop for every quantity"
    results = got if isinstance(got, tuple) else (got,)
    for i, state in enumerate(batch):
        single = method(*state)
        for x, y in zip(results, single if isinstance(single, tuple) else (single,)):
            np.testing.assert_allclose(x[i], y, rtol=0, atol=1e-13 * max(1.0, np.abs(y).max()), err_msg=row.name)
