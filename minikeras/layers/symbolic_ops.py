"""Arithmetic and ops on symbolic tensors: ``x + y``, ``x * 2``, ``-x``,
``x[:, 0]``, ``keras.ops.mean(x, axis=1)`` while a functional model is built
(Keras 3 records these as operations in the graph).

``KerasTensor``'s operators call a ``SymbolicOperation``: a weightless layer
holding which ``ops`` function to apply and, for ``tensor op number``, the
number. Like Keras's operations it is a node of the graph (so the model runs
it, saves it and rebuilds it) but not one of ``model.layers``, which lists
layers only: ConvNeXt's ``inputs + layer(x)`` leaves Keras's layer count,
and the weights' order, as they are.
"""
import numbers

import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.base import Layer

__all__ = []  # built by KerasTensor's operators, not by users

# Keras's operation names (the nodes' default names), and the op each applies.
_BINARY = {"add": ops.add, "subtract": ops.subtract, "multiply": ops.multiply, "true_divide": ops.true_divide,
           "power": ops.power, "matmul": ops.matmul}
_UNARY = {"negative": ops.negative, "absolute": ops.absolute}


class SymbolicOperation(Layer):
    """One operation as a graph node: arithmetic, or any ``minikeras.ops`` call.

    Args:
        operation: a name of ``_BINARY`` or ``_UNARY`` (Keras's op names), or,
            with ``arguments``, the path of a public op under
            ``minikeras.ops`` (``"mean"``, ``"image.extract_patches"``).
        constant: for ``tensor op number``, the number (None: both operands
            are tensors, or the operation is unary).
        constant_first: the number is the left operand (``2 - x``).
        arguments: for an op call, its arguments as written in a config:
            ``{"args": [...], "kwargs": {...}}`` where ``{"__tensor__": i}``
            stands for the node's i-th input tensor (see ``_encode``).
        **kwargs: base Layer arguments (name).
    """

    _is_operation = True  # a graph node that Functional.layers leaves out, as Keras's operations
    _casts_inputs = False  # ops keep their operands' dtypes (int + int stays int)

    def __init__(self, operation, constant=None, constant_first=False, arguments=None, **kwargs):
        self._function, self._template = None, None
        if arguments is not None:
            self._function = _public_op(operation)
            self._template = (_decode(arguments.get("args", [])), _decode(arguments.get("kwargs", {})))
        elif operation not in _BINARY and operation not in _UNARY:
            raise ValueError(f"SymbolicOperation: unknown operation {operation!r}; expected one of "
                             f"{sorted(_BINARY) + sorted(_UNARY)}, or a minikeras.ops path with arguments.")
        if constant is not None and not isinstance(constant, numbers.Number):
            raise TypeError(f"SymbolicOperation {operation!r}: the constant operand must be a number, received "
                            f"{type(constant).__name__}.")
        kwargs.setdefault("name", None)
        if kwargs["name"] is None:
            from minikeras.layers.naming import unique_name

            kwargs["name"] = unique_name(operation.rpartition(".")[2])
        super().__init__(**kwargs)
        self.operation, self.constant, self.constant_first = operation, constant, bool(constant_first)
        self.built = True

    def _as_call(self, function, template):
        """This node as the call ``function`` with ``template`` (from record_call)."""
        self._function, self._template = function, template
        return self

    @property
    def keras_class_name(self):
        """Keras's class of the operation (``Add``, ``TrueDivide``, ...), as its summary shows it."""
        return "".join(part.capitalize() for part in self.operation.rpartition(".")[2].split("_"))

    def call(self, inputs):
        if self._template is not None:
            args, kwargs = _fill(self._template, inputs)
            return self._function(*args, **kwargs)
        if self.operation in _UNARY:
            return _UNARY[self.operation](inputs)
        function = _BINARY[self.operation]
        if self.constant is None:
            left, right = inputs
            return function(left, right)
        return function(self.constant, inputs) if self.constant_first else function(inputs, self.constant)

    def get_config(self):
        config = {"name": self.name, "operation": self.operation, "constant": self.constant,
                  "constant_first": self.constant_first}
        if self._template is not None:
            config["arguments"] = {"args": _encode(self._template[0], self.operation),
                                   "kwargs": _encode(self._template[1], self.operation)}
        return config


def apply(operation, left, right=None, reflected=False):
    """``left <operation> right`` (``right <operation> left`` when
    ``reflected``) where at least one is a KerasTensor; ``NotImplemented``
    for operands this cannot record (so Python tries the other side)."""
    from minikeras.layers.input import KerasTensor

    if operation in _UNARY:
        return SymbolicOperation(operation)(left)
    if isinstance(right, KerasTensor):
        operands = [right, left] if reflected else [left, right]
        return SymbolicOperation(operation)(operands)
    if isinstance(right, numbers.Number) and not isinstance(right, bool):
        return SymbolicOperation(operation, constant=right, constant_first=reflected)(left)
    if isinstance(right, (Tensor, numpy.ndarray)):  # a constant array: the op records itself (record_call)
        function = _BINARY[operation]
        return function(right, left) if reflected else function(left, right)
    return NotImplemented


def record_call(function, args, kwargs):
    """``function(*args, **kwargs)`` (a public op that refused a KerasTensor
    argument) as a graph node with its KerasTensor output; NotImplemented
    when no argument is a KerasTensor. Constant tensors among the arguments
    are kept detached, as Keras keeps a concrete tensor an op was given;
    Variables are kept, so the node reads their value when it runs."""
    from minikeras.layers.input import KerasTensor

    tensors = []

    def template(value):
        if isinstance(value, KerasTensor):
            tensors.append(value)
            return _Slot(len(tensors) - 1)
        if type(value) is Tensor:  # a Variable stays itself: the node reads its value when it runs
            return value.detach()
        if isinstance(value, (list, tuple)):
            return type(value)(template(item) for item in value)
        if isinstance(value, dict):
            return {key: template(item) for key, item in value.items()}
        return value

    filled = (template(list(args)), template(dict(kwargs)))
    if not tensors:
        return NotImplemented
    operation = _op_path(function)
    if operation is None or operation in _VALUE_OPS:
        return NotImplemented
    return SymbolicOperation(operation, arguments={})._as_call(function, filled)(tensors)


# Ops that answer with a Python value or a host array, not a tensor: no graph node (their own error stands).
_VALUE_OPS = frozenset({"convert_to_numpy", "ndim", "size", "shape", "dtype", "is_tensor"})


class _Slot:
    """Where the node's ``index``-th input tensor goes in an op call's arguments."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _fill(value, inputs):
    if isinstance(value, _Slot):
        return inputs[value.index]
    if isinstance(value, (list, tuple)):
        return type(value)(_fill(item, inputs) for item in value)
    if isinstance(value, dict):
        return {key: _fill(item, inputs) for key, item in value.items()}
    return value


def _op_path(function):
    """The path of ``function`` under minikeras.ops (``"mean"``, ``"image.resize"``), or None."""
    name = getattr(function, "__name__", None)
    if name is None:
        return None
    if getattr(ops, name, None) is function:
        return name
    if getattr(ops.image, name, None) is function:
        return f"image.{name}"
    return None


def is_public_op(path):
    """Whether ``path`` names an op of minikeras.ops (or ops.image) a node can run."""
    try:
        _public_op(path)
    except ValueError:
        return False
    return True


def _public_op(path):
    namespace, _, name = path.rpartition(".")
    function = getattr(ops.image if namespace == "image" else ops, name, None) \
        if namespace in ("", "image") and not name.startswith("_") else None
    if not callable(function):
        raise ValueError(f"SymbolicOperation: {path!r} is not an op of minikeras.ops (or minikeras.ops.image).")
    return function


def _encode(value, operation):
    """An op call's arguments in JSON's types; markers for what JSON lacks."""
    if isinstance(value, _Slot):
        return {"__tensor__": value.index}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, numbers.Number) and not isinstance(value, complex):
        return value.item() if hasattr(value, "item") else float(value)
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(item, operation) for item in value]}
    if isinstance(value, list):
        return [_encode(item, operation) for item in value]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _encode(item, operation) for key, item in value.items()}
    if isinstance(value, slice):
        return {"__slice__": [_encode(value.start, operation), _encode(value.stop, operation),
                              _encode(value.step, operation)]}
    if value is Ellipsis:
        return {"__ellipsis__": True}
    if isinstance(value, (Tensor, numpy.ndarray)):
        array = value.numpy() if isinstance(value, Tensor) else value
        return {"__array__": array.tolist(), "dtype": str(array.dtype)}
    raise TypeError(f"SymbolicOperation {operation!r}: an argument of type {type(value).__name__} cannot be "
                    f"written in a config (numbers, strings, None, slices, arrays and their lists are).")


def _decode(value):
    if isinstance(value, list):
        return [_decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"__tensor__"}:
        return _Slot(int(value["__tensor__"]))
    if set(value) == {"__tuple__"}:
        return tuple(_decode(item) for item in value["__tuple__"])
    if set(value) == {"__slice__"}:
        return slice(*(_decode(item) for item in value["__slice__"]))
    if set(value) == {"__ellipsis__"}:
        return Ellipsis
    if set(value) == {"__array__", "dtype"}:
        return Tensor(numpy.asarray(value["__array__"], dtype=value["dtype"]))
    return {key: _decode(item) for key, item in value.items()}
