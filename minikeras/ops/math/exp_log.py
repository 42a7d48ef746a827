"""Exponentials and logarithms: exp, log, log1p, expm1.

Integer and bool inputs compute in float32. ``log(0) = -inf`` and
``log(-1) = nan`` silently, as in TensorFlow and PyTorch.
"""

__all__ = ["exp", "log", "log1p", "expm1"]

import numpy

from minikeras.autograd import Function
from minikeras.ops.math._operands import _as_tensor, _float_array


class Exp(Function):
    def forward(self, x):
        with numpy.errstate(over="ignore"):
            out = self.device.xp.exp(_float_array(x))
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        return grad * out


class Log(Function):
    def forward(self, x):
        x = _float_array(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return self.device.xp.log(x)

    def backward(self, grad):
        (x,) = self.saved
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return grad / x


class Log1p(Function):
    def forward(self, x):
        x = _float_array(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return self.device.xp.log1p(x)

    def backward(self, grad):
        (x,) = self.saved
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return grad / (1.0 + x)


class Expm1(Function):
    def forward(self, x):
        with numpy.errstate(over="ignore"):
            out = self.device.xp.expm1(_float_array(x))
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        return grad * (out + 1.0)


def exp(x):
    """Elementwise ``e ** x`` (``inf`` on overflow, without a warning)."""
    return Exp().apply(_as_tensor("exp", x))


def log(x):
    """Elementwise natural logarithm: ``log(0) = -inf``, ``log(x < 0) = nan``."""
    return Log().apply(_as_tensor("log", x))


def log1p(x):
    """Elementwise ``log(1 + x)``, accurate for small ``x``; ``-inf`` at -1."""
    return Log1p().apply(_as_tensor("log1p", x))


def expm1(x):
    """Elementwise ``exp(x) - 1``, accurate for small ``x``."""
    return Expm1().apply(_as_tensor("expm1", x))
