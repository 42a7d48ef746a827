"""The two-operand einsum behind EinsumDense, as one differentiable op.

Each operand's gradient is itself one einsum of the output gradient with the
other operand (``out,b->a``), so backward costs what forward costs (NumPy's
and CuPy's ``optimize=True`` turn both into BLAS contractions). A label of
an operand that appears neither in the output nor in the other operand is
summed by the forward pass; its gradient is broadcast back along it.

Private to ``layers.EinsumDense`` (``keras.ops.einsum`` belongs to the ops
namespace, whose wrapper may call this Function).
"""
import re

from minikeras.autograd import Function
from minikeras.ops.math.contraction import contract, contractible
from minikeras.ops.math.products import _explicit

__all__ = []

_EQUATION = re.compile(r"^([a-zA-Z.]*),([a-zA-Z.]*)->([a-zA-Z.]*)$")


def _parse(equation):
    match = _EQUATION.match(equation.replace(" ", ""))
    if match is None:
        raise ValueError(f"einsum: expected an equation 'ab,bc->ac' with two operands, received {equation!r}.")
    return match.group(1), match.group(2), match.group(3)


class Einsum2(Function):
    """``einsum(equation, a, b)``; keeps both operands for backward.

    ``...`` is written out as letters once the shapes are known, so that a
    gradient einsum whose result lacks the ellipsis axes (``ab...,bc->ac...``:
    the kernel's gradient ``ac...,ab...->bc`` sums them) names them: CuPy
    refuses an ellipsis missing from an explicit output (NumPy's optimized
    path sums it).

    On a GPU each einsum is one ``device.matmul`` (``ops/math/contraction.py``):
    a 16-bit ``cublasGemmEx`` with float32 accumulation, which a CUDA graph
    capture holds. On the CPU 16-bit inputs run in float32 (NumPy has no
    16-bit BLAS; ``half_in_float32``)."""

    @property
    def half_in_float32(self):
        return self.device.host_kernels

    def _einsum(self, first, second, output, a, b):
        if not self.device.host_kernels and contractible(first, second, output, a.shape, b.shape):
            return contract(self.device, first, second, output, a, b)
        return self.device.xp.einsum(f"{first},{second}->{output}", a, b, optimize=True)

    def __init__(self, equation):
        self.first, self.second, self.output = _parse(equation)
        self.equation = f"{self.first},{self.second}->{self.output}"

    def forward(self, a, b):
        (self.first, self.second), self.output = _explicit(self.equation, [a.shape, b.shape])
        self.equation = f"{self.first},{self.second}->{self.output}"
        self.save_for_backward(a, b)
        return self._einsum(self.first, self.second, self.output, a, b)

    def _operand_grad(self, grad, other, other_labels, target_labels, target_shape):
        xp = self.device.xp
        available = set(self.output) | set(other_labels)
        kept = "".join(label for label in target_labels if label in available or label == ".")
        result = self._einsum(self.output, other_labels, kept, grad, other)
        if kept != target_labels:  # labels summed in forward only: broadcast the gradient back
            index = tuple(slice(None) if label in available or label == "." else None for label in target_labels)
            result = xp.broadcast_to(result[index], target_shape)
        return result

    def backward(self, grad):
        a, b = self.saved
        grad_a = grad_b = None
        if self.needs_input_grad[0]:
            grad_a = self._operand_grad(grad, b, self.second, self.first, a.shape)
        if self.needs_input_grad[1]:
            grad_b = self._operand_grad(grad, a, self.first, self.second, b.shape)
        return grad_a, grad_b


def _einsum2(equation, a, b):
    """``einsum(equation, a, b)`` of two Tensors, differentiable in both."""
    return Einsum2(equation).apply(a, b)
