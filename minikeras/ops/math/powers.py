"""Powers: sqrt, square, rsqrt, reciprocal.

``square`` keeps integers; the others compute integer inputs in float32.
``sqrt(-1) = nan`` and the gradient of ``sqrt`` at 0 is ``+inf``.
"""

__all__ = ["sqrt", "square", "rsqrt", "reciprocal"]

import numpy

from minikeras.autograd import Function
from minikeras.ops.math._operands import _as_tensor, _float_array


class Sqrt(Function):
    def forward(self, x):
        with numpy.errstate(invalid="ignore"):
            out = self.device.xp.sqrt(_float_array(x))
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return grad / (out * 2.0)


class Square(Function):
    def forward(self, x):
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return self.device.xp.square(x)

    def backward(self, grad):
        (x,) = self.saved
        return grad * (x * 2.0)


class Rsqrt(Function):
    def forward(self, x):
        xp = self.device.xp
        with numpy.errstate(divide="ignore", invalid="ignore"):
            out = xp.reciprocal(xp.sqrt(_float_array(x)))
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        # d/dx x^(-1/2) = -x^(-3/2) / 2
        return grad * (out * out * out) * -0.5


class Reciprocal(Function):
    def forward(self, x):
        with numpy.errstate(divide="ignore"):
            out = self.device.xp.reciprocal(_float_array(x))
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        return -grad * (out * out)


def sqrt(x):
    """Elementwise square root: ``nan`` for negative inputs; gradient ``+inf`` at 0."""
    return Sqrt().apply(_as_tensor("sqrt", x))


def square(x):
    """Elementwise ``x * x``; integers stay integers, bools become int32 (Keras's)."""
    x = _as_tensor("square", x)
    return Square().apply(x.astype("int32") if x.dtype == numpy.bool_ else x)


def rsqrt(x):
    """Elementwise ``1 / sqrt(x)`` (``inf`` at 0, ``nan`` below)."""
    return Rsqrt().apply(_as_tensor("rsqrt", x))


def reciprocal(x):
    """Elementwise ``1 / x`` (``inf`` at 0)."""
    return Reciprocal().apply(_as_tensor("reciprocal", x))
