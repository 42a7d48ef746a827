"""``minikeras.ops`` names each op once (issue 39).

``ops/__init__.py`` imports every public name explicitly from the one module
that defines it: no star imports, so no name is decided by import order (as
``ops.max`` once was, shadowing ``reduce.max`` with an adapter module's).
``ops.__all__`` is Keras 3.15's ``keras.ops`` list (recorded in
fixtures/keras_ops_names.json) less README's "names not supported", plus
minikeras's own lower-level ops, listed here.
"""
import ast
import importlib
import json
import os
import pkgutil
import types

import minikeras
from minikeras import ops

HERE = os.path.dirname(os.path.abspath(__file__))
OPS_DIR = os.path.dirname(ops.__file__)
KERAS_OPS = json.load(open(os.path.join(HERE, "fixtures", "keras_ops_names.json")))["namespaces"]["ops"]

# Public ops minikeras has beyond keras.ops: the lower-level ops its layers
# are built on, short aliases, and result_type.
MINIKERAS_ONLY = {
    "affine_transform", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm_inference", "batch_norm_training",
    "bias_activation", "conv1d", "conv2d", "conv2d_transpose", "conv3d", "conv3d_transpose", "dense",
    "depthwise_conv2d", "div", "dropout", "embedding", "flatten", "getitem", "group_normalize", "gru_sequence",
    "layer_norm", "lstm_sequence", "max_pool1d", "max_pool2d", "max_pool3d", "mul", "neg", "pow", "resize",
    "result_type", "sigmoid_cross_entropy", "simple_rnn_sequence", "softmax_cross_entropy",
    "sparse_softmax_cross_entropy", "sub", "upsample", "weight_penalty",
}
# keras.ops names minikeras does not provide (README's "keras.ops: names not supported").
NOT_SUPPORTED = {"jvp"}

# Two public functions of one name in two namespaces, both public before the
# names were made explicit: ``ops.resize``/``ops.affine_transform`` (minikeras's
# nn-level ops, channels-last only) and Keras's ``ops.image.resize``/
# ``ops.image.affine_transform``. Each namespace has exactly one.
SEPARATE_NAMESPACES = {
    "resize": ("minikeras.ops.nn.resize", "minikeras.ops.image.resizing"),
    "affine_transform": ("minikeras.ops.nn.affine_transform", "minikeras.ops.image.warping"),
}


def _unwrapped(function):
    while hasattr(function, "__wrapped__"):
        function = function.__wrapped__
    return function


def _ops_modules():
    names = sorted({info.name for info in pkgutil.walk_packages(ops.__path__, "minikeras.ops.")})
    return [importlib.import_module(name) for name in names]


def _public_definitions():
    """name -> modules whose source defines a public function of that name (``def name``)."""
    found = {}
    for module in _ops_modules():
        if module.__file__.endswith("__init__.py"):
            continue
        tree = ast.parse(open(module.__file__).read())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                found.setdefault(node.name, []).append(module.__name__)
    return found


def test_ops_init_has_no_star_imports_and_all_is_explicit():
    for module in _ops_modules():
        if not module.__file__.endswith("__init__.py") and not module.__name__.endswith(".unary"):
            continue
        tree = ast.parse(open(module.__file__).read())
        stars = [node.module for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)]
        assert not stars, f"{module.__name__} star-imports {stars}"
    assert isinstance(ops.__all__, list) and len(ops.__all__) == len(set(ops.__all__))


def test_all_is_keras_ops_names_plus_minikeras_own():
    expected = (set(KERAS_OPS) - NOT_SUPPORTED) | MINIKERAS_ONLY
    assert set(ops.__all__) == expected, (sorted(set(ops.__all__) - expected), sorted(expected - set(ops.__all__)))
    public = {name for name, value in vars(ops).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert public == set(ops.__all__), sorted(public ^ set(ops.__all__))


def test_every_public_op_is_defined_once():
    definitions = _public_definitions()
    for name in ops.__all__:
        op = _unwrapped(getattr(ops, name))
        assert callable(op), name
        defined = definitions.get(name, [])
        if name in SEPARATE_NAMESPACES:
            assert sorted(defined) == sorted(SEPARATE_NAMESPACES[name])
            assert op.__module__ == SEPARATE_NAMESPACES[name][0]
            assert _unwrapped(getattr(ops.image, name)).__module__ == SEPARATE_NAMESPACES[name][1]
            continue
        assert len(defined) <= 1, f"ops.{name} is defined in {defined}"
        # The module that defines (or, for a made function, binds) the name holds ops's object.
        home = defined[0] if defined else op.__module__
        assert _unwrapped(getattr(importlib.import_module(home), name, None)) is op or not defined, \
            f"ops.{name} is not the function {home} defines"


def test_no_two_op_modules_define_a_public_op_of_one_name():
    op_names = {name for namespace in (ops, ops.nn, ops.image, ops.linalg, ops.numpy)
                for name in dir(namespace) if callable(getattr(namespace, name))}
    clashes = {name: modules for name, modules in _public_definitions().items()
               if len(modules) > 1 and name in op_names and name not in SEPARATE_NAMESPACES}
    assert not clashes, clashes


def test_keras_signatures_live_on_the_one_definition():
    x = minikeras.tensor([[1.0, 5.0], [3.0, 2.0]])
    assert float(ops.max(x, initial=7.0)) == 7.0 and float(ops.min(x, initial=0.5)) == 0.5
    assert ops.max(minikeras.tensor([[]], dtype="float32"), axis=1, initial=-1.0).numpy().tolist() == [-1.0]
    assert ops.prod(minikeras.tensor([2, 3], dtype="int8")).dtype == "int32"
    assert ops.eye(2, 3, k=1).numpy().tolist() == [[0, 1, 0], [0, 0, 1]]
    assert ops.one_hot([0, 2], 3).numpy().tolist() == [[1, 0, 0], [0, 0, 1]]
    assert ops.shape([[1, 2, 3]]) == (1, 3) and ops.convert_to_tensor([1, 2]).dtype == "int32"
    assert ops.amax is not ops.max and ops.numpy.max is ops.max and ops.nn.one_hot is ops.one_hot


def test_loading_every_op_module_leaves_keras_names_as_functions():
    # A submodule imported for the first time is bound on its package: a module named like a
    # Keras function of that namespace (ops/nn/sparsemax.py was) would replace the function.
    _ops_modules()
    for namespace in (ops, ops.nn, ops.image, ops.linalg, ops.numpy):
        names = getattr(namespace, "__all__", None) or []
        if namespace is ops.nn:
            from minikeras.ops.nn import _keras_namespace

            names = _keras_namespace.NAMES
        modules = [name for name in names if isinstance(getattr(namespace, name), types.ModuleType)]
        assert not modules, f"{namespace.__name__}: {modules} are modules, not Keras's functions"
    x = minikeras.tensor([[1.0, 2.0, 0.5]])
    numpy_result = minikeras.activations.sparsemax(x).numpy()
    assert callable(ops.nn.sparsemax) and (ops.nn.sparsemax(x).numpy() == numpy_result).all()
