"""Arithmetic on symbolic tensors: ``x + y``, ``x * 2``, ``-x`` while a
functional model is built (Keras 3 records these as operations in the graph).

``KerasTensor``'s operators call a ``SymbolicOperation``: a weightless layer
holding which ``ops`` function to apply and, for ``tensor op number``, the
number. Like Keras's operations it is a node of the graph (so the model runs
it, saves it and rebuilds it) but not one of ``model.layers``, which lists
layers only: ConvNeXt's ``inputs + layer(x)`` leaves Keras's layer count,
and the weights' order, as they are.
"""
import builtins
import numbers

from minikeras import ops
from minikeras.layers.base import Layer

__all__ = []  # built by KerasTensor's operators, not by users

# Keras's operation names (the nodes' default names), and the op each applies.
_BINARY = {"add": ops.add, "subtract": ops.subtract, "multiply": ops.multiply, "true_divide": ops.true_divide,
           "power": ops.power, "matmul": ops.matmul}
_UNARY = {"negative": ops.negative, "absolute": ops.absolute}


class SymbolicOperation(Layer):
    """One arithmetic operation as a graph node.

    Args:
        operation: a name of ``_BINARY`` or ``_UNARY`` (Keras's op names).
        constant: for ``tensor op number``, the number (None: both operands
            are tensors, or the operation is unary).
        constant_first: the number is the left operand (``2 - x``).
        **kwargs: base Layer arguments (name).
    """

    _is_operation = True  # a graph node that Functional.layers leaves out, as Keras's operations
    _casts_inputs = False  # ops keep their operands' dtypes (int + int stays int)

    def __init__(self, operation, constant=None, constant_first=False, **kwargs):
        if operation not in _BINARY and operation not in _UNARY:
            raise ValueError(f"SymbolicOperation: unknown operation {operation!r}; expected one of "
                             f"{sorted(_BINARY) + sorted(_UNARY)}.")
        if constant is not None and not isinstance(constant, numbers.Number):
            raise TypeError(f"SymbolicOperation {operation!r}: the constant operand must be a number, received "
                            f"{type(constant).__name__}.")
        kwargs.setdefault("name", None)
        if kwargs["name"] is None:
            from minikeras.layers.naming import unique_name

            kwargs["name"] = unique_name(operation)
        super().__init__(**kwargs)
        self.operation, self.constant, self.constant_first = operation, constant, bool(constant_first)
        self.built = True

    @property
    def keras_class_name(self):
        """Keras's class of the operation (``Add``, ``TrueDivide``, ...), as its summary shows it."""
        return "".join(part.capitalize() for part in self.operation.split("_"))

    def call(self, inputs):
        if self.operation in _UNARY:
            return _UNARY[self.operation](inputs)
        function = _BINARY[self.operation]
        if self.constant is None:
            left, right = inputs
            return function(left, right)
        return function(self.constant, inputs) if self.constant_first else function(inputs, self.constant)

    def get_config(self):
        return {"name": self.name, "operation": self.operation, "constant": self.constant,
                "constant_first": self.constant_first}


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
    return NotImplemented


SLOT = "__symbolic_input__"  # where a KerasTensor argument was, in a SymbolicFunction's saved arguments
# An index's slices, ``...`` and tuples (``x[:, 0]`` is not ``x[[:, 0]]``), as JSON.
SLICE, ELLIPSIS, TUPLE = "__slice__", "__ellipsis__", "__tuple__"


class SymbolicFunction(Layer):
    """Any other ``ops`` function called on KerasTensors (``ops.square(x)``,
    ``ops.stack([a, b], axis=1)``, ``ops.expand_dims(x, -1)``): a graph node,
    as Keras 3 records its operations, holding the op's name and its
    non-tensor arguments; each KerasTensor argument is a slot filled, in
    order, from the node's inputs.

    Args:
        function: the op's name in ``minikeras.ops`` (or ``ops.image``).
        arguments: the positional arguments, ``{"__symbolic_input__": i}``
            where the i-th tensor goes.
        keywords: the keyword arguments, slots likewise.
        **kwargs: base Layer arguments (name).
    """

    _is_operation = True
    _casts_inputs = False

    def __init__(self, function, arguments=(), keywords=None, **kwargs):
        self._function = _op_named(function)
        kwargs.setdefault("name", None)
        if kwargs["name"] is None:
            from minikeras.layers.naming import unique_name

            kwargs["name"] = unique_name(function)
        super().__init__(**kwargs)
        self.function, self.arguments, self.keywords = function, list(arguments), dict(keywords or {})
        self.built = True

    @property
    def keras_class_name(self):
        """Keras's class of the operation (``Square``, ``ExpandDims``, ...), as its summary shows it."""
        return "".join(part.capitalize() for part in self.function.split("_"))

    def call(self, inputs):
        def fill(value):
            if isinstance(value, dict) and set(value) == {SLOT}:
                return inputs[value[SLOT]]
            if isinstance(value, dict) and set(value) == {SLICE}:
                return builtins.slice(*value[SLICE])
            if isinstance(value, dict) and set(value) == {ELLIPSIS}:
                return Ellipsis
            if isinstance(value, dict) and set(value) == {TUPLE}:
                return tuple(fill(item) for item in value[TUPLE])
            if isinstance(value, (list, tuple)):
                return type(value)(fill(item) for item in value)
            if isinstance(value, dict):
                return {key: fill(item) for key, item in value.items()}
            return value

        return self._function(*fill(self.arguments), **fill(self.keywords))

    def get_config(self):
        return {"name": self.name, "function": self.function, "arguments": self.arguments,
                "keywords": self.keywords}


def op_exists(function):
    """Whether ``function`` names an op a SymbolicFunction can run."""
    try:
        _op_named(function)
    except ValueError:
        return False
    return True


def _op_named(function):
    from minikeras.ops import image

    found = getattr(ops, function, None) if isinstance(function, str) and not function.startswith("_") else None
    found = found or (getattr(image, function, None) if isinstance(function, str) else None)
    if not callable(found):
        raise ValueError(f"SymbolicFunction: unknown op {function!r}; expected the name of a function of "
                         "minikeras.ops (or ops.image).")
    return found


# Ops that answer with a Python value or a host array, not a tensor: no graph node (their own error stands).
_VALUE_OPS = frozenset({"convert_to_numpy", "ndim", "size", "shape", "dtype", "is_tensor"})


def call_op(name, args, kwargs):
    """``ops.<name>(*args, **kwargs)`` with KerasTensors among the arguments
    (nested in lists and dicts too) as a SymbolicFunction node; None when
    there are none (the op's own error stands)."""
    from minikeras.layers.input import KerasTensor

    if name in _VALUE_OPS:
        return None
    tensors = []

    def slot(value):
        if isinstance(value, KerasTensor):
            tensors.append(value)
            return {SLOT: len(tensors) - 1}
        if isinstance(value, builtins.slice):  # x[:, 0]: saved as data, not as a Python object
            return {SLICE: [value.start, value.stop, value.step]}
        if value is Ellipsis:
            return {ELLIPSIS: True}
        if isinstance(value, tuple):
            return {TUPLE: [slot(item) for item in value]}
        if isinstance(value, list):
            return [slot(item) for item in value]
        if isinstance(value, dict):
            return {key: slot(item) for key, item in value.items()}
        return value

    arguments, keywords = slot(list(args)), slot(dict(kwargs))
    if not tensors:
        return None
    return SymbolicFunction(name, arguments, keywords)(tensors)
