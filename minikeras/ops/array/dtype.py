"""Dtype conversion: cast (its gradient is cast back to the input's dtype)."""

__all__ = ["cast"]


from minikeras.autograd import Function, Tensor, no_grad
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.math._operands import _as_tensor
from minikeras.backend import keras_helpers
from minikeras._support.argument_validation import validate_dtype


class Cast(Function):
    """A dtype conversion; the gradient is converted back to the input dtype."""

    keeps_dtype = False

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        self.input_dtype = x.dtype
        return x.astype(self.dtype, copy=False)

    def backward(self, grad):
        return grad.astype(self.input_dtype, copy=False)


def cast(x, dtype):
    """``x`` converted to ``dtype``. The gradient is cast back to the input's
    dtype; casting to an integer or bool dtype cuts the gradient."""
    x = _as_tensor("cast", x)
    dtype = validate_dtype("cast", keras_helpers.floatx() if dtype is None else dtype)  # Keras: None is floatx
    if not is_float_dtype(dtype) and dtype.kind != "c" and isinstance(x, Tensor) and x.requires_grad:
        with no_grad():
            return Cast(dtype).apply(x)
    return Cast(dtype).apply(x)
