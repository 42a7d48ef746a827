"""Exponentials and logarithms: exp, log, log1p, expm1, exp2, log2, log10,
logaddexp, logaddexp2, cbrt, erfc, erfinv and the modified Bessel function i0.

Integer and bool inputs compute in float32. ``log(0) = -inf`` and
``log(-1) = nan`` silently, as in TensorFlow and PyTorch.

``erfinv`` has no NumPy function: it starts from M. Giles' single-precision
approximation and takes Newton steps on this library's ``erf`` (float64 error
about 1e-15). ``i0``'s derivative is ``i1``, which NumPy lacks: it is summed
from its power series (exact to float64 for ``|x| < 30``).
"""

__all__ = ["exp", "log", "log1p", "expm1", "exp2", "log2", "log10", "logaddexp", "logaddexp2", "cbrt", "erfc",
           "erfinv", "i0"]

import math

import numpy

from minikeras.autograd import Function
from minikeras.ops.math._elementwise import binary, unary
from minikeras.ops.math._operands import _as_tensor, _float_array
from minikeras.ops.math.special import _ERF_SMALL, _erf_array, _erfc_large


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


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

exp2 = unary("exp2", lambda xp, x: xp.exp2(x), lambda xp, x, out: out * _LN2,
             "Elementwise ``2 ** x``.")
log2 = unary("log2", lambda xp, x: xp.log2(x), lambda xp, x, out: 1 / (x * _LN2),
             "Elementwise base-2 logarithm.")
log10 = unary("log10", lambda xp, x: xp.log10(x), lambda xp, x, out: 1 / (x * _LN10),
              "Elementwise base-10 logarithm.")
cbrt = unary("cbrt", lambda xp, x: xp.cbrt(x), lambda xp, x, out: 1 / (3 * out * out),
             "Elementwise cube root (real for negative inputs).")


def _logaddexp_derivative(xp, a, b, out, needs):
    return (xp.exp(a - out) if needs[0] else None), (xp.exp(b - out) if needs[1] else None)


def _logaddexp2_derivative(xp, a, b, out, needs):
    return (xp.exp2(a - out) if needs[0] else None), (xp.exp2(b - out) if needs[1] else None)


logaddexp = binary("logaddexp", lambda xp, a, b: xp.logaddexp(a, b), _logaddexp_derivative,
                   "Elementwise ``log(exp(x1) + exp(x2))`` without overflow.")
logaddexp2 = binary("logaddexp2", lambda xp, a, b: xp.logaddexp2(a, b), _logaddexp2_derivative,
                    "Elementwise ``log2(2**x1 + 2**x2)`` without overflow.")


def _erfc_array(xp, x):
    """erfc with relative accuracy in the right tail (not ``1 - erf``)."""
    if x.dtype.itemsize < 4:  # the rational approximation overflows float16: float32, rounded once
        return _erfc_array(xp, x.astype("float32")).astype(x.dtype)
    y = xp.abs(x)
    tail = _erfc_large(xp, xp.maximum(y, _ERF_SMALL))
    tail = xp.where(x < 0, 2 - tail, tail)
    return xp.where(y <= _ERF_SMALL, 1 - _erf_array(xp, x), tail).astype(x.dtype)


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

erfc = unary("erfc", _erfc_array, lambda xp, x, out: -_TWO_OVER_SQRT_PI * xp.exp(-(x * x)),
             "Elementwise complementary error function ``1 - erf(x)``, accurate in the tail.")


def _erfinv_array(xp, y):
    """Giles' approximation, then Newton steps on erf (computed in float64)."""
    y64 = y.astype("float64")
    w = -xp.log((1 - y64) * (1 + y64))
    central = w < 5
    w_central = w - 2.5
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * w_central
    w_tail = xp.sqrt(xp.maximum(w, 5)) - 3
    q = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        q = c + q * w_tail
    x = xp.where(central, p, q) * y64
    finite = xp.abs(y64) < 1
    x = xp.where(finite, x, 0)
    for _ in range(3):
        step = (_erf_array(xp, x) - y64) / (_TWO_OVER_SQRT_PI * xp.exp(-(x * x)))
        x = x - xp.where(finite, step, 0)
    x = xp.where(finite, x, xp.where(xp.abs(y64) == 1, y64 * math.inf, math.nan))
    return x.astype(y.dtype)


erfinv = unary("erfinv", _erfinv_array, lambda xp, x, out: (0.5 * math.sqrt(math.pi)) * xp.exp(out * out),
               "Elementwise inverse error function (``+-inf`` at ``+-1``, nan outside).")


def _i1_array(xp, x):
    """The modified Bessel function I1 from its power series."""
    half = x * 0.5
    term = half
    total = term
    quarter_square = half * half
    for k in range(1, 80):
        term = term * quarter_square / (k * (k + 1))
        total = total + term
    return total


i0 = unary("i0", lambda xp, x: xp.i0(x), lambda xp, x, out: _i1_array(xp, x),
           "Elementwise modified Bessel function of the first kind, order 0.")
