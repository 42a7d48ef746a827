"""Magnitude and sign: abs (absolute) and the non-differentiable sign.

Both keep integer inputs as integers.
"""

__all__ = ["abs", "absolute", "sign"]

from minikeras.autograd import Function
from minikeras.ops.math._operands import _as_tensor


class Abs(Function):
    def forward(self, x):
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return self.device.xp.abs(x)

    def backward(self, grad):
        (x,) = self.saved
        # sign(0) = 0: the subgradient at the kink is 0, as in TF and PyTorch.
        return grad * self.device.xp.sign(x)


class Sign(Function):
    """Not differentiable: the wrapper never records it (gradient 0 a.e.)."""

    def forward(self, x):
        return self.device.xp.sign(x)


def abs(x):  # noqa: A001  (keras.ops name)
    """Elementwise absolute value; integers stay integers.

    The gradient at 0 is 0.
    """
    return Abs().apply(_as_tensor("abs", x))


absolute = abs


def sign(x):
    """Elementwise sign (-1, 0 or 1) in ``x``'s dtype.

    Not differentiable: the result never requires grad (its derivative is 0
    wherever it exists), so it may be used in a loss as a constant.
    """
    x = _as_tensor("sign", x, allow_bool=False)
    return Sign().apply(x.detach() if x.requires_grad else x)
