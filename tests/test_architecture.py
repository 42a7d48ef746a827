"""The floors of the house (ARCHITECTURE.md), enforced by an AST scan of minikeras/.

A package may import its own floor and the floors below it, never one above:

    backend -> device -> autograd -> ops -> layers/optimizers/losses/metrics -> models -> saving -> distribute

Imports inside a function body run late, once everything is loaded, so they
do not create cycles at import time; they still bind a lower floor to a higher
one, so each one that exists today is listed (with why) in LAZY_ALLOWED, and
any new upward import fails this test until it is justified there.
"""
import ast
import functools
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "minikeras"

FLOORS = {
    "backend": 0,
    "device": 1,
    # The internal helpers (argument checks, nest, array-likes, the loading registry, safe mode and budget):
    # beside the devices, below everything that checks arguments or loads files.
    "_support": 1,
    "autograd": 2, "kernels": 2,
    "ops": 3,
    "layers": 4, "optimizers": 4, "losses": 4, "metrics": 4, "quantizers": 4,
    "models": 5,
    "saving": 6,
    "distribute": 7, "distribution": 7,
    # Keras's user-facing extras, each on the floor of what it needs: keras.visualization draws on host
    # arrays (ops' convert_to_numpy, backend's image_data_format), keras.wrappers wraps a Model.
    "visualization": 4, "wrappers": 5,
}

# (importing file relative to minikeras/, imported module): the upward imports
# that exist today, each inside a function.
LAZY_ALLOWED = {
    # backend.to_numpy copies any device's array through the device registry.
    ("backend/__init__.py", "minikeras.device"),
    # keras.backend.clear_session also restarts the default layer names.
    ("backend/keras_helpers.py", "minikeras.layers.naming"),
    # ... and returns the devices' cached memory (GPU pools) to the driver.
    ("backend/keras_helpers.py", "minikeras.device"),

    # Tensor's operators are ops: until minikeras.ops is imported, each one's stand-in imports it.
    ("autograd/operators.py", "minikeras.ops"),

    # _support's checks and conversions recognise a Tensor; autograd imports them to build one.
    ("_support/argument_validation.py", "minikeras.autograd.tensor"),
    ("_support/array_like.py", "minikeras.autograd.tensor"),

    # keras.backend.is_keras_tensor asks whether a value is the functional API's symbolic tensor.
    ("backend/keras_helpers.py", "minikeras.layers.input"),
    # keras.layers.serialize/deserialize are saving's serialize_keras_object /
    # deserialize_keras_object for layers, as in Keras (one schema, one resolver).
    ("layers/serialization.py", "minikeras.saving.serialization_lib"),
    # FeatureSpace.save writes Keras's .keras layout for it (saving/feature_space_io.py).
    ("layers/preprocessing/feature_space.py", "minikeras.saving.feature_space_io"),
    # Model.save/save_weights/load_weights and models.load_model delegate to saving/.
    ("models/__init__.py", "minikeras.saving"),
    ("models/model.py", "minikeras.saving"),
}


def _imports(tree, package="minikeras"):
    """(lineno, module, lazy) for every minikeras import in ``tree``, relative
    ones resolved against ``package`` (the dotted package of the file)."""
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from ..layers import Dense, inside package
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            if base == "minikeras" or node.module is None:  # from minikeras import layers / from . import x
                modules = [f"{base}.{alias.name}" for alias in node.names]
            else:
                modules = [base]
        else:
            continue
        lazy, parent = False, parents.get(node)
        while parent is not None and not lazy:
            lazy = isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            parent = parents.get(parent)
        for module in modules:
            if module.startswith("minikeras."):
                yield node.lineno, module, lazy


def _floor_of(module):
    return FLOORS.get(module.split(".")[1])


@functools.lru_cache(maxsize=None)
def _upward_imports():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        source_floor = FLOORS.get(relative.split("/")[0])
        if source_floor is None:
            continue
        package = ".".join(["minikeras"] + relative.split("/")[:-1])
        for lineno, module, lazy in _imports(ast.parse(path.read_text(), filename=str(path)), package):
            target_floor = _floor_of(module)
            if target_floor is not None and target_floor > source_floor:
                found.append((relative, lineno, module, lazy))
    return tuple(found)


def test_no_floor_imports_a_higher_floor_at_module_level():
    eager = [f"{path}:{lineno} imports {module}" for path, lineno, module, lazy in _upward_imports() if not lazy]
    assert not eager, "upward imports at module level:\n" + "\n".join(eager)


def test_lazy_upward_imports_are_the_listed_ones():
    unlisted = [f"{path}:{lineno} imports {module} (inside a function)" for path, lineno, module, lazy
                in _upward_imports() if lazy and (path, module) not in LAZY_ALLOWED]
    assert not unlisted, ("new upward imports; move the code to the right floor or justify it in "
                          "LAZY_ALLOWED:\n" + "\n".join(unlisted))


def test_allow_list_has_no_stale_entries():
    # An entry whose import was removed would silently allow it back.
    present = {(path, module) for path, _, module, lazy in _upward_imports() if lazy}
    assert LAZY_ALLOWED <= present, f"stale LAZY_ALLOWED entries: {sorted(LAZY_ALLOWED - present)}"


@pytest.mark.parametrize("lower, higher", [("ops", "layers"), ("ops", "models"), ("layers", "models"),
                                           ("autograd", "ops"), ("models", "distribute")])
def test_scanner_catches_a_planted_violation(tmp_path, lower, higher):
    # The scan must see both forms of import, at module level and in a function.
    tree = ast.parse(f"import minikeras.{higher}.x\n\ndef f():\n    from minikeras import {higher}\n")
    found = [(module, lazy) for _, module, lazy in _imports(tree)]
    assert found == [(f"minikeras.{higher}.x", False), (f"minikeras.{higher}", True)]
    assert _floor_of(found[0][0]) > FLOORS[lower]


def test_every_floor_is_a_package_here():
    # A renamed floor would make the scan vacuous for it.
    for name in FLOORS:
        assert (PACKAGE / name / "__init__.py").is_file(), name


def test_scanner_resolves_relative_imports():
    tree = ast.parse("from ..layers import Dense\nfrom . import reshaping\n")
    found = [module for _, module, _ in _imports(tree, package="minikeras.ops.array")]
    assert found == ["minikeras.ops.layers", "minikeras.ops.array.reshaping"]
    found = [module for _, module, _ in _imports(ast.parse("from ...models import Model\n"), "minikeras.ops.array")]
    assert found == ["minikeras.models"] and _floor_of(found[0]) > FLOORS["ops"]


# ----------------------------------------------------------------- the package graph and the core
# Keras's user-facing namespaces on top of the core. The core never imports them, not even inside a
# function: reading the core never leads into them.
KERAS_SURFACE = {"utils", "saving", "datasets", "applications", "callbacks", "wrappers", "visualization",
                 "preprocessing", "mixed_precision", "tree", "distribution", "distribute", "data"}

# The packages that are wholly core; layers/base.py with the layers modules it imports at module level
# (its helpers: masks, names, node attributes, weight info...) and models/steps.py, the one training
# step, complete the core's reading path.
CORE_PACKAGES = {"_support", "backend", "device", "autograd", "kernels", "ops"}
CORE_FILES = {"layers/base.py", "models/steps.py"}

# keras.utils is the top floor: only Keras's surface that re-exports it (and the package's own top
# level) may import it.
UTILS_IMPORTERS = {"utils", "applications", "preprocessing", "minikeras"}

# What _support may import: the standard library, NumPy and these.
SUPPORT_IMPORTS = {"_support", "backend", "device", "errors"}


def _node(module):
    """The package (or top-level module) of ``minikeras.x.y``: ``x``; None for a name that is no file."""
    first = module.split(".")[1]
    return first if (PACKAGE / first).is_dir() or (PACKAGE / f"{first}.py").is_file() else None


def _source_node(relative):
    first = relative.split("/")[0]
    return "minikeras" if first == "__init__.py" else first.removesuffix(".py")


@functools.lru_cache(maxsize=None)
def _all_imports():
    """{file relative to minikeras/: ((lineno, module, lazy), ...)} for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        package = ".".join(["minikeras"] + relative.split("/")[:-1])
        found[relative] = tuple(_imports(ast.parse(path.read_text(), filename=str(path)), package))
    return found


def _package_graph(imports):
    """{package: {package it imports at module level: 'file:line' of one such import}}."""
    graph = {}
    for relative, found in imports.items():
        source = _source_node(relative)
        for lineno, module, lazy in found:
            target = _node(module)
            if not lazy and target is not None and target != source:
                graph.setdefault(source, {}).setdefault(target, f"{relative}:{lineno}")
    return graph


def _find_cycle(graph):
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_package_import_graph_has_no_cycle():
    # Module-level imports only (a function-level import runs once everything is loaded); a package is
    # the first path component under minikeras/. A cycle means no package of it can be read or loaded
    # without the others.
    graph = _package_graph(_all_imports())
    cycle = _find_cycle(graph)
    assert cycle is None, "package import cycle: " + " -> ".join(cycle) + "\n" + "\n".join(
        f"  {a} -> {b}: {graph[a][b]}" for a, b in zip(cycle, cycle[1:]))


def test_the_cycle_finder_finds_a_planted_cycle():
    imports = {"ops/x.py": ((1, "minikeras.layers.y", False),), "layers/y.py": ((3, "minikeras.ops", False),),
               "autograd/z.py": ((5, "minikeras.ops", True),)}  # lazy: no edge
    graph = _package_graph(imports)
    assert graph == {"ops": {"layers": "ops/x.py:1"}, "layers": {"ops": "layers/y.py:3"}}
    assert _find_cycle(graph) == ["layers", "ops", "layers"]
    assert _find_cycle({"a": {"b": ""}, "b": {"c": ""}}) is None


def _core_files(imports):
    base_helpers = {module for _, module, lazy in imports["layers/base.py"]
                    if not lazy and module.startswith("minikeras.layers.")}
    helper_files = {f"layers/{module.split('.')[2]}.py" for module in base_helpers}
    return sorted({relative for relative in imports if relative.split("/")[0] in CORE_PACKAGES}
                  | CORE_FILES | (helper_files & set(imports)))


def test_the_core_does_not_import_the_keras_surface():
    imports = _all_imports()
    core = _core_files(imports)
    assert set(CORE_FILES) <= set(core) and "layers/naming.py" in core  # the scan is not vacuous
    found = [f"{relative}:{lineno} imports {module}{' (inside a function)' if lazy else ''}"
             for relative in core for lineno, module, lazy in imports[relative]
             if _node(module) in KERAS_SURFACE]
    assert not found, "the core imports Keras's surface:\n" + "\n".join(found)


def test_only_the_keras_surface_imports_utils():
    found = [f"{relative}:{lineno} imports {module}" for relative, imports in _all_imports().items()
             for lineno, module, _ in imports
             if _node(module) == "utils" and _source_node(relative) not in UTILS_IMPORTERS]
    assert not found, "below the top floor, minikeras.utils is imported by:\n" + "\n".join(found)


def test_support_imports_only_the_floors_below_it():
    found = [f"{relative}:{lineno} imports {module}" for relative, imports in _all_imports().items()
             if relative.startswith("_support/") for lineno, module, lazy in imports
             if not lazy and _node(module) not in SUPPORT_IMPORTS]
    assert not found, "\n".join(found)


# ---------------------------------------------------------------- what `import minikeras` loads (issue 39)
import fnmatch  # noqa: E402  (this section's imports, kept with it)
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

# The core (autograd, device, backend, ops) and what the top-level names need; the Keras surface, the
# datasets, saving formats, applications, data pipelines, the GPU simulation, the GPU device and the fused
# kernels' families load on first use (minikeras/__init__.py's lazy names, PEP 562), and so do the op families
# (ops loads with its first use or the first Tensor operator: autograd/operators.py). 209 modules before, 29 now.
IMPORT_BUDGET = 35
NOT_AT_IMPORT = ("minikeras.ops*", "minikeras.datasets*", "minikeras.saving*", "minikeras.applications*", "minikeras.testing*",
                 "minikeras.kernels*", "minikeras.data", "minikeras.data.*", "minikeras.utils*", "minikeras.config",
                 "minikeras.device.gpu", "minikeras.layers*", "minikeras.models*", "minikeras.optimizers*",
                 "minikeras.losses*", "minikeras.metrics*", "minikeras.callbacks*", "minikeras.distribute*",
                 "minikeras.distribution*", "minikeras.preprocessing*")
# Module-level imports in files this change does not own that still load some of NOT_AT_IMPORT: pattern ->
# the edge. Each entry must still match a loaded module, so one whose edge is cut fails until removed here.
STILL_LOADED_BY = {
}


def _fresh_interpreter(code):
    """Run ``code`` in a new interpreter (this worktree's minikeras); its stdout as JSON."""
    environment = dict(os.environ, PYTHONPATH=str(PACKAGE.parent))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(PACKAGE.parent),
                            env=environment, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


_LOADED = "import json, sys\n{}\nprint(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'minikeras')))"


def test_import_minikeras_loads_the_core_only():
    loaded = _fresh_interpreter(_LOADED.format("import minikeras"))
    assert len(loaded) <= IMPORT_BUDGET, f"`import minikeras` loads {len(loaded)} modules (budget {IMPORT_BUDGET})"
    assert "minikeras.autograd.tensor" in loaded and "minikeras.device.cpu" in loaded
    assert not any(m.startswith("minikeras.ops") for m in loaded), "the op families load on first use"

    def allowed(module):
        return any(fnmatch.fnmatchcase(module, pattern) for pattern in STILL_LOADED_BY)

    surface = [m for m in loaded if any(fnmatch.fnmatchcase(m, p) for p in NOT_AT_IMPORT) and not allowed(m)]
    assert not surface, f"`import minikeras` loads what should load on first use: {surface}"
    cut = [p for p in STILL_LOADED_BY if not any(fnmatch.fnmatchcase(m, p) for m in loaded)]
    assert not cut, f"these edges are cut now: remove {cut} from STILL_LOADED_BY (and lower IMPORT_BUDGET)"


def test_lazy_top_level_names_load_on_first_use():
    checks = """
import minikeras
assert "minikeras.layers" not in sys.modules and "minikeras.models" not in sys.modules
assert callable(minikeras.datasets.fashion_mnist.load_data) and "minikeras.datasets.fashion_mnist" in sys.modules
from minikeras import Sequential, config, random
assert Sequential is minikeras.models.Sequential and minikeras.config is config
assert [d.name for d in config.list_logical_devices("CPU")][:1] == ["cpu:0"]
import minikeras.device.gpu
assert callable(minikeras.device) and minikeras.device.__module__ == "minikeras.device.scope"  # still the scope
assert minikeras.device.__name__ == "device" and "GpuDevice" in dir(sys.modules["minikeras.device"])
from minikeras import kernels
assert "minikeras.kernels.pooling" not in sys.modules  # a family loads on its first launch (a miss in get)
assert callable(kernels.get("max_pool", config.list_logical_devices("CPU")[0]))
assert "minikeras.kernels.pooling" in sys.modules and kernels.batch_norm.__name__.endswith("batch_norm")
assert callable(kernels.captured_random.draw) and "multi_tensor" in dir(kernels)
public = {"config", "random", "autograd", "backend", "kernels", "datasets", "saving", "utils", "Tensor", "Model"}
assert public <= set(dir(minikeras)), public - set(dir(minikeras))
try:
    minikeras.export
except AttributeError:
    pass
else:
    raise AssertionError("minikeras.export should not exist")
"""
    loaded = _fresh_interpreter(_LOADED.format(checks))
    assert "minikeras.models" in loaded and "minikeras.kernels.pooling" in loaded


def test_tensor_operators_load_the_ops_on_first_use():
    checks = """
import numpy
import minikeras as mk
x = mk.tensor([[1.0, 2.0]], requires_grad=True)
assert not any(m.startswith("minikeras.ops") for m in sys.modules)
assert mk.Tensor.__mul__.stand_in
y = 3.0 - x * x  # the first operator imports ops, which binds every operator to its op
assert "minikeras.ops" in sys.modules and not getattr(mk.Tensor.__mul__, "stand_in", False)
assert not getattr(mk.Tensor.__rsub__, "stand_in", False)
y.sum().backward()
assert numpy.array_equal(y.numpy(), [[2.0, -1.0]]) and numpy.array_equal(x.grad.numpy(), [[-2.0, -4.0]])
z = mk.tensor([[1.0, 2.0]])
assert z.T.shape == (2, 1) and z.reshape(2, 1).shape == (2, 1) and (z == z).numpy().all()
assert hash(z) != hash(mk.tensor([[1.0, 2.0]]))  # identity hashing, comparisons elementwise
"""
    _fresh_interpreter(_LOADED.format(checks))
    checks = """
import minikeras as mk
t = mk.tensor([[1.0, 2.0], [3.0, 4.0]]).T  # a property as the first use
assert t.numpy().tolist() == [[1.0, 3.0], [2.0, 4.0]] and "minikeras.ops" in sys.modules
"""
    _fresh_interpreter(_LOADED.format(checks))


# ---------------------------------------------------------------- ARCHITECTURE.md cannot drift (issue 39)
# "Read in this order" gives each file's line count; a count within 15% of today's passes, so ordinary edits
# do not rewrite the page (and do not collide when branches merge), while a moved, deleted or much changed
# file fails here until the list says so.
ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
READING_TOLERANCE = 0.15
LARGE_FILE_LINES = 550


def _section(title):
    """The lines of ARCHITECTURE.md's ``## title`` section (up to the next ``## `` heading)."""
    lines = ARCHITECTURE.read_text().splitlines()
    start = lines.index(f"## {title}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start + 1:end]


_READING_ENTRY = re.compile(r"\d+\. `(minikeras/[^`]+\.py)` \((\d+) lines\)")


def _line_count(path):
    return len(path.read_text().splitlines())


def test_architecture_opens_with_the_reading_path():
    headings = [line for line in ARCHITECTURE.read_text().splitlines() if line.startswith("## ")]
    assert headings[0] == "## Read in this order"


def test_reading_path_files_exist_and_their_line_counts_hold():
    entries = [_READING_ENTRY.match(line) for line in _section("Read in this order")]
    entries = [(match.group(1), int(match.group(2))) for match in entries if match]
    assert len(entries) >= 15, "the reading path lists its files as '1. `minikeras/...py` (N lines): ...'"
    assert entries[0][0].startswith("minikeras/autograd/") and entries[-1][0].startswith("minikeras/kernels/")
    wrong = []
    for path, stated in entries:
        file = PACKAGE.parent / path
        if not file.is_file():
            wrong.append(f"{path}: no such file")
        elif abs(_line_count(file) - stated) > READING_TOLERANCE * stated:
            wrong.append(f"{path}: {_line_count(file)} lines, ARCHITECTURE.md says {stated}")
    assert not wrong, "update ARCHITECTURE.md's 'Read in this order':\n" + "\n".join(wrong)


def test_every_large_file_is_listed_with_a_reason():
    listed = set()
    for line in _section("Files over ~400 lines, and why they stay"):
        match = re.match(r"- ((?:`[^`]+\.py`(?:, )?)+): \S", line)
        if match:
            listed |= set(re.findall(r"`([^`]+\.py)`", match.group(1)))
    missing_files = sorted(path for path in listed if not (PACKAGE / path).is_file())
    assert not missing_files, f"ARCHITECTURE.md lists files that do not exist: {missing_files}"
    large = {path.relative_to(PACKAGE).as_posix(): _line_count(path) for path in PACKAGE.rglob("*.py")
             if _line_count(path) > LARGE_FILE_LINES}
    unlisted = sorted(f"{path} ({lines} lines)" for path, lines in large.items() if path not in listed)
    assert not unlisted, ("files over 550 lines need a '- `path`: reason' line in ARCHITECTURE.md's "
                          "'Files over ~400 lines' section: " + ", ".join(unlisted))


def test_readme_states_the_reading_path_as_architecture_lists_it():
    readme = (PACKAGE.parent / "README.md").read_text().split("\n\n")
    first = " ".join(next(part for part in readme if not part.startswith("#")).split())
    match = re.search(r'"Read in this order" is (\d+) files and about ([\d,]+) lines', first)
    assert match, "README's first paragraph says how long the reading path is"
    entries = [_READING_ENTRY.match(line) for line in _section("Read in this order")]
    counts = [_line_count(PACKAGE.parent / m.group(1)) for m in entries if m]
    assert int(match.group(1)) == len(counts)
    assert abs(int(match.group(2).replace(",", "")) - sum(counts)) <= READING_TOLERANCE * sum(counts)
