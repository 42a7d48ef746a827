"""Trigonometric functions: sin, cos (radians)."""

__all__ = ["sin", "cos"]

from minikeras.autograd import Function
from minikeras.ops.math._operands import _as_tensor, _float_array


class Sin(Function):
    def forward(self, x):
        x = _float_array(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return self.device.xp.sin(x)

    def backward(self, grad):
        (x,) = self.saved
        return grad * self.device.xp.cos(x)


class Cos(Function):
    def forward(self, x):
        x = _float_array(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return self.device.xp.cos(x)

    def backward(self, grad):
        (x,) = self.saved
        return grad * -self.device.xp.sin(x)


def sin(x):
    """Elementwise sine (radians)."""
    return Sin().apply(_as_tensor("sin", x))


def cos(x):
    """Elementwise cosine (radians)."""
    return Cos().apply(_as_tensor("cos", x))
