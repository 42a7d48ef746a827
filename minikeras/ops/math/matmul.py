"""Matrix product, batched and broadcast like ``numpy.matmul``."""

__all__ = ["matmul"]

import numpy

from minikeras.autograd import Function
from minikeras.ops._checks import shape_of
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops._promotion import promote_operands
from minikeras._support.argument_validation import validate_tensor_input


class MatMul(Function):
    def forward(self, a, b):
        needs_a, needs_b = self.needs_input_grad
        self.save_for_backward(a if needs_b else None, b if needs_a else None)
        self.vector_a, self.vector_b = a.ndim == 1, b.ndim == 1
        return self.device.matmul(a, b)

    def backward(self, grad):
        a, b = self.saved
        xp = self.device.xp
        if self.vector_b:
            grad = grad[..., None]
        if self.vector_a:
            grad = grad[..., None, :]
        grad_a = grad_b = None
        if b is not None:
            b_matrix = b[:, None] if self.vector_b else b
            if b_matrix.ndim == 2 and grad.ndim == 2:
                grad_a = self.device.matmul(grad, b_matrix.T)
            else:
                grad_a = self.device.matmul(grad, xp.swapaxes(b_matrix, -1, -2))
            if self.vector_a:
                grad_a = grad_a[..., 0, :]
        if a is not None:
            a_matrix = a[None, :] if self.vector_a else a
            if a_matrix.ndim == 2 and grad.ndim == 2:
                grad_b = self.device.matmul(a_matrix.T, grad)
            else:
                grad_b = self.device.matmul(xp.swapaxes(a_matrix, -1, -2), grad)
            if self.vector_b:
                grad_b = grad_b[..., 0]
        return grad_a, grad_b


def matmul(x1, x2):
    """Matrix product of ``a`` and ``b`` (batched and broadcast like NumPy).

    Raises:
        ValueError: the inner dimensions differ, or an input is a scalar.
    """
    a, b = x1, x2
    validate_tensor_input("matmul", a)
    validate_tensor_input("matmul", b)
    shape_a, shape_b = shape_of(a), shape_of(b)
    if not shape_a or not shape_b:
        raise ValueError(f"matmul: inputs must have at least 1 dimension, received shapes {shape_a} and {shape_b}.")
    inner_a = shape_a[-1]
    inner_b = shape_b[0] if len(shape_b) == 1 else shape_b[-2]
    if inner_a != inner_b:
        raise ValueError(
            f"matmul: shapes {shape_a} and {shape_b} are not aligned: {inner_a} (last axis of a) != "
            f"{inner_b} ({'only' if len(shape_b) == 1 else 'second-to-last'} axis of b)."
        )
    a, b = promote_operands(a, b)  # Keras's dtype rules: int32 @ float32 is float32, bool @ float32 float32
    batch_a, batch_b = shape_a[:-2], shape_b[:-2]
    for size_a, size_b in zip(reversed(batch_a), reversed(batch_b)):
        if size_a != size_b and 1 not in (size_a, size_b):
            raise ValueError(f"matmul: batch dimensions of {shape_a} and {shape_b} cannot be broadcast.")
    if getattr(a, "dtype", None) == numpy.bool_:  # two bools: Keras computes in float and gives bools
        return MatMul().apply(_as_tensor("matmul", a).astype("float32"), _as_tensor("matmul", b).astype(
            "float32")).astype("bool")
    return MatMul().apply(a, b)
