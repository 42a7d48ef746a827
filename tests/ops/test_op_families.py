"""The split op families: the ops/array/ package's shape ops and
minikeras.ops.math.unary (one module per family behind it), with Keras's
callable ``ops.shape`` in place (the old ``minikeras.ops.shape`` module is gone)."""
import numpy

import minikeras as mk
from minikeras import ops

OLD_SHAPE_NAMES = [
    "reshape", "transpose", "expand_dims", "squeeze", "flatten", "ravel", "getitem", "take",
    "concatenate", "stack", "split", "tile", "repeat", "pad", "cast", "moveaxis", "swapaxes",
]
OLD_UNARY_NAMES = [
    "abs", "absolute", "exp", "log", "log1p", "expm1", "sqrt", "square", "rsqrt", "sign",
    "reciprocal", "sin", "cos", "erf",
]


def test_array_family_exports_every_old_shape_op_once():
    # ``minikeras.ops.array`` is Keras's ops.array function (issue 24); the family
    # package is still importable by its module path.
    import importlib

    array = importlib.import_module("minikeras.ops.array")

    assert sorted(array.__all__) == sorted(OLD_SHAPE_NAMES)
    for name in OLD_SHAPE_NAMES:
        assert getattr(ops, name) is getattr(array, name)


def test_ops_shape_is_keras_function_and_the_old_module_is_gone():
    import importlib

    import pytest

    assert ops.shape(mk.tensor(numpy.zeros((2, 3)))) == (2, 3)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("minikeras.ops.shape")
    assert ops.shape(mk.tensor(numpy.zeros((2, 3)))) == (2, 3)  # a failed import rebinds nothing


def test_unary_families_behind_the_old_module():
    from minikeras.ops.math import unary

    assert sorted(unary.__all__) == sorted(OLD_UNARY_NAMES)
    for name in OLD_UNARY_NAMES:
        assert getattr(ops, name) is getattr(unary, name)
    x = mk.tensor(numpy.array([-1.0, 0.0, 2.0]))
    numpy.testing.assert_allclose(unary.exp(x).numpy(), numpy.exp([-1.0, 0.0, 2.0]))
    numpy.testing.assert_allclose(ops.erf(x).numpy(), [-0.8427007929497149, 0.0, 0.9953222650189527], rtol=1e-12)
