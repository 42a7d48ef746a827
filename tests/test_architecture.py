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

    # keras.backend.is_keras_tensor asks whether a value is the functional API's symbolic tensor.
    ("backend/keras_helpers.py", "minikeras.layers.input"),
    # Layer lookup by name consults register_keras_serializable's table, and
    # add_weight bounds its memory while a file is loading (saving/_safety.py).
    ("layers/base.py", "minikeras.saving"),
    # keras.layers.serialize/deserialize are saving's serialize_keras_object /
    # deserialize_keras_object for layers, as in Keras (one schema, one resolver).
    ("layers/serialization.py", "minikeras.saving.serialization_lib"),
    # Lambda.from_config refuses a function unless unsafe loading is enabled.
    ("layers/core/lambda_layer.py", "minikeras.saving"),
    # Symbolic probes stay small while a file is loading.
    ("layers/input.py", "minikeras.saving"),
    # ... and so do the sizes a file's config declares: a lookup's OOV tokens, vocabulary and encoding width,
    # the one-hot / multi-hot width of CategoryEncoding, Hashing and HashedCrossing (a FeatureSpace's
    # crossing_dim), a TextVectorization's output_sequence_length.
    ("layers/preprocessing/index_lookup.py", "minikeras.saving"),
    ("layers/preprocessing/categorical_encoding.py", "minikeras.saving"),
    ("layers/preprocessing/text_vectorization.py", "minikeras.saving"),
    # FeatureSpace.save writes Keras's .keras layout for it (saving/feature_space_io.py).
    ("layers/preprocessing/feature_space.py", "minikeras.saving.feature_space_io"),
    # A quantizer class registered with register_keras_serializable is saved and found by its registered name.
    ("quantizers/__init__.py", "minikeras.saving"),
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
