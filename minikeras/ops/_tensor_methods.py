"""Python operators and methods on Tensor, bound to the ops.

Methods are bound for every op that exists, so a family that grows gets its
methods without touching this file's logic.

The binary operators also take another library's array as the other
operand (``mk_tensor + tf_tensor`` in a custom ``train_step``, a pandas
Series, a torch CPU tensor): anything an array protocol converts
(``__array__``, ``__dlpack__``, ...; `minikeras._support.array_like`) is
converted first, as Keras converts any operand of its ops. The ops
themselves keep refusing such arrays, so a conversion happens only where
Python's operators are written.
"""
import numbers

import numpy

from minikeras import backend
from minikeras.autograd import Tensor
from minikeras.autograd.operators import METHODS as _METHODS, REFLECTED as _REFLECTED
from minikeras._support import array_like

# Binary operators whose other operand may be another library's array.
_BINARY = {"__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__matmul__", "__lt__", "__le__", "__gt__",
           "__ge__", "__eq__", "__ne__", "__floordiv__", "__mod__"}
_NATIVE = (Tensor, numbers.Number, numpy.ndarray, numpy.generic)


def _operand(other):
    """``other``, or its array when it is another library's array."""
    if type(other) in (float, int) or isinstance(other, _NATIVE) or backend.is_array(other) or \
            not array_like.speaks_array_protocol(other) or getattr(other, "_is_symbolic_tensor", False):
        return other  # a KerasTensor: the op records the call as a graph node (layers/symbolic_ops.py)
    return array_like.to_array(other, "Tensor operator")


def _binary(op):
    def method(self, other):
        return op(self, _operand(other))

    method.__name__ = op.__name__
    method.__doc__ = op.__doc__
    return method


def _reflected(op):
    def method(self, other):
        return op(_operand(other), self)

    method.__name__ = f"__r{op.__name__}__"
    return method


def _reshape_method(op):
    def method(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return op(self, shape)

    method.__doc__ = op.__doc__
    return method


def _transpose_method(op):
    def method(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return op(self, axes or None)

    method.__doc__ = op.__doc__
    return method


def install():
    from minikeras import ops

    for method_name, op_name in _METHODS.items():
        op = getattr(ops, op_name, None)
        if op is None:
            continue
        if method_name == "reshape":
            setattr(Tensor, method_name, _reshape_method(op))
        elif method_name == "transpose":
            setattr(Tensor, method_name, _transpose_method(op))
        elif method_name in _BINARY:
            setattr(Tensor, method_name, _binary(op))
        else:
            setattr(Tensor, method_name, op)
    for method_name, op_name in _REFLECTED.items():
        op = getattr(ops, op_name, None)
        if op is not None:
            setattr(Tensor, method_name, _reflected(op))
    if getattr(ops, "transpose", None) is not None:
        Tensor.T = property(lambda self: ops.transpose(self))
    Tensor.__hash__ = object.__hash__  # comparisons are elementwise, identity hashing stays
