"""Python operators and methods on Tensor, bound to the ops.

Methods are bound for every op that exists, so a family that grows gets its
methods without touching this file's logic.
"""
from minikeras.autograd import Tensor

# Tensor method name -> ops function name.
_METHODS = {
    "__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "divide",
    "__pow__": "power", "__matmul__": "matmul", "__neg__": "negative", "__abs__": "abs",
    "__getitem__": "getitem",
    "matmul": "matmul", "sum": "sum", "mean": "mean", "max": "max", "min": "min", "prod": "prod",
    "var": "var", "std": "std", "argmax": "argmax", "argmin": "argmin", "logsumexp": "logsumexp",
    "exp": "exp", "log": "log", "sqrt": "sqrt", "square": "square", "abs": "abs",
    "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu", "clip": "clip",
    "reshape": "reshape", "transpose": "transpose", "flatten": "flatten", "squeeze": "squeeze",
    "expand_dims": "expand_dims", "astype": "cast", "cast": "cast", "tile": "tile", "repeat": "repeat",
    "softmax": "softmax", "log_softmax": "log_softmax", "maximum": "maximum", "minimum": "minimum",
    "__lt__": "less", "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal",
    "__eq__": "equal", "__ne__": "not_equal",
}

# Reflected operators: ``2 - x`` is ``subtract(2, x)``.
_REFLECTED = {
    "__radd__": "add", "__rsub__": "subtract", "__rmul__": "multiply", "__rtruediv__": "divide",
    "__rpow__": "power", "__rmatmul__": "matmul",
}


def _reflected(op):
    def method(self, other):
        return op(other, self)

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
        else:
            setattr(Tensor, method_name, op)
    for method_name, op_name in _REFLECTED.items():
        op = getattr(ops, op_name, None)
        if op is not None:
            setattr(Tensor, method_name, _reflected(op))
    if getattr(ops, "transpose", None) is not None:
        Tensor.T = property(lambda self: ops.transpose(self))
    Tensor.__hash__ = object.__hash__  # comparisons are elementwise, identity hashing stays
