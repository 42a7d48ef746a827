"""Tensor's Python operators and array methods: their names, and a stand-in for each until ops binds them.

autograd sits a floor below ops and does not import it. When ``minikeras.ops`` is first imported,
``ops/_tensor_methods.py`` binds each name below to its op. Until then each name is a stand-in that
imports ``minikeras.ops`` (which binds the real methods) and calls the real method, so
``import minikeras`` does not load the op families, and ``x * 2`` works in a program that never
named ``minikeras.ops``.
"""

# Tensor method name -> ops function name.
METHODS = {
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
    "__floordiv__": "floor_divide", "__mod__": "mod",
}

# Reflected operators: ``2 - x`` is ``subtract(2, x)``.
REFLECTED = {
    "__radd__": "add", "__rsub__": "subtract", "__rmul__": "multiply", "__rtruediv__": "divide",
    "__rpow__": "power", "__rmatmul__": "matmul", "__rfloordiv__": "floor_divide", "__rmod__": "mod",
}



def _stand_in(name):
    def method(self, *args, **kwargs):
        _bind_ops(name)
        return getattr(self, name)(*args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.stand_in = True
    return method


def _bind_ops(name):
    import minikeras.ops  # noqa: F401  (binds the real methods: ops/_tensor_methods.install)

    from minikeras.autograd.tensor import Tensor

    if getattr(getattr(Tensor, name, None), "stand_in", False):
        raise AttributeError(f"Tensor.{name} has no op bound to it (minikeras.ops defines none)")


def _transposed(self):
    _bind_ops("T")
    return self.T


def install_stand_ins(tensor_class):
    """Put a stand-in on ``tensor_class`` for every operator and method ops binds."""
    for name in (*METHODS, *REFLECTED):
        if name not in vars(tensor_class):
            setattr(tensor_class, name, _stand_in(name))
    transposed = property(_transposed)
    transposed.fget.stand_in = True
    tensor_class.T = transposed
