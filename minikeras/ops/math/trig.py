"""Trigonometric and hyperbolic functions (radians): sin, cos, tan, the
inverse functions, sinh/cosh, arctan2, hypot, sinc and degree/radian
conversions.

Integer inputs compute in float32, as Keras's. Derivatives are the textbook
ones; where a derivative is infinite (``arcsin`` at +-1, ``arccosh`` at 1)
the gradient is ``inf``, as NumPy's formula gives.
"""

__all__ = ["sin", "cos", "tan", "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
           "arctan2", "hypot", "sinc", "deg2rad", "rad2deg"]

import math

from minikeras.autograd import Function
from minikeras.ops.math._elementwise import binary, unary
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


tan = unary("tan", lambda xp, x: xp.tan(x), lambda xp, x, out: 1 + out * out,
            "Elementwise tangent.")
sinh = unary("sinh", lambda xp, x: xp.sinh(x), lambda xp, x, out: xp.cosh(x),
             "Elementwise hyperbolic sine.")
cosh = unary("cosh", lambda xp, x: xp.cosh(x), lambda xp, x, out: xp.sinh(x),
             "Elementwise hyperbolic cosine.")
arcsin = unary("arcsin", lambda xp, x: xp.arcsin(x), lambda xp, x, out: 1 / xp.sqrt(1 - x * x),
               "Elementwise inverse sine (nan outside [-1, 1]).")
arccos = unary("arccos", lambda xp, x: xp.arccos(x), lambda xp, x, out: -1 / xp.sqrt(1 - x * x),
               "Elementwise inverse cosine (nan outside [-1, 1]).")
arctan = unary("arctan", lambda xp, x: xp.arctan(x), lambda xp, x, out: 1 / (1 + x * x),
               "Elementwise inverse tangent.")
arcsinh = unary("arcsinh", lambda xp, x: xp.arcsinh(x), lambda xp, x, out: 1 / xp.sqrt(x * x + 1),
                "Elementwise inverse hyperbolic sine.")
arccosh = unary("arccosh", lambda xp, x: xp.arccosh(x), lambda xp, x, out: 1 / xp.sqrt(x * x - 1),
                "Elementwise inverse hyperbolic cosine (nan below 1).")
arctanh = unary("arctanh", lambda xp, x: xp.arctanh(x), lambda xp, x, out: 1 / (1 - x * x),
                "Elementwise inverse hyperbolic tangent (nan outside [-1, 1]).")
deg2rad = unary("deg2rad", lambda xp, x: x * (math.pi / 180), lambda xp, x, out: math.pi / 180,
                "Degrees to radians.")
rad2deg = unary("rad2deg", lambda xp, x: x * (180 / math.pi), lambda xp, x, out: 180 / math.pi,
                "Radians to degrees.")


def _sinc_derivative(xp, x, out):
    # (cos(pi x) - sinc(x)) / x, which is 0 at x = 0
    safe = xp.where(x == 0, 1, x)
    return xp.where(x == 0, 0, (xp.cos(math.pi * x) - out) / safe)


sinc = unary("sinc", lambda xp, x: xp.sinc(x), _sinc_derivative,
             "Normalised sinc, ``sin(pi x) / (pi x)`` (1 at 0), as ``numpy.sinc``.")


def _arctan2_derivative(xp, a, b, out, needs):
    squared = a * a + b * b
    return (b / squared if needs[0] else None), (-a / squared if needs[1] else None)


arctan2 = binary("arctan2", lambda xp, a, b: xp.arctan2(a, b), _arctan2_derivative,
                 "Elementwise angle of the point ``(x2, x1)``: ``arctan(x1 / x2)`` in the right quadrant.")


def _hypot_derivative(xp, a, b, out, needs):
    return (a / out if needs[0] else None), (b / out if needs[1] else None)


hypot = binary("hypot", lambda xp, a, b: xp.hypot(a, b), _hypot_derivative,
               "Elementwise ``sqrt(x1**2 + x2**2)`` without overflow.")
