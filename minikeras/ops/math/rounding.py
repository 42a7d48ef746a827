"""Rounding, remainders and other piecewise elementwise ops: ceil, floor,
round, trunc, fabs, floor_divide, mod, fmod, fmax, fmin, heaviside,
nextafter, divide_no_nan, true_divide, nan_to_num, signbit, ldexp.

``ceil``, ``floor``, ``round``, ``trunc``, ``floor_divide``, ``heaviside``,
``nextafter`` and ``signbit`` are piecewise constant: they return no
gradient, as TensorFlow's. ``mod``/``fmod`` pass the gradient to ``x1`` and
``-floor(x1/x2)`` (``-trunc``) to ``x2``. Integer dtypes are kept where
Keras keeps them (``round``, ``trunc``, ``floor_divide``, ``mod``); ``ceil``
and ``floor`` of integers are float32, as in Keras.
"""

__all__ = ["ceil", "floor", "round", "trunc", "fabs", "floor_divide", "mod", "fmod", "fmax", "fmin",
           "heaviside", "nextafter", "divide_no_nan", "true_divide", "nan_to_num", "signbit", "ldexp"]

import numpy

from minikeras.autograd import Function
from minikeras.ops.math._elementwise import (binary, binary_dtype, call_without_gradient, operand,
                                             unary)
from minikeras.ops.math._operands import _as_tensor, _float_array
from minikeras.ops.math.arithmetic import divide
from minikeras._support.argument_validation import INT32_MAX, validate_int, validate_number

ceil = unary("ceil", lambda xp, x: xp.ceil(x), None, "Elementwise ceiling (float32 for integers; no gradient).")
floor = unary("floor", lambda xp, x: xp.floor(x), None, "Elementwise floor (float32 for integers; no gradient).")
trunc = unary("trunc", lambda xp, x: xp.trunc(x) if x.dtype.kind in "fcV" else x, None,
              "Elementwise rounding toward zero; integers unchanged (no gradient).", floats=False)
fabs = unary("fabs", lambda xp, x: xp.abs(x), lambda xp, x, out: xp.sign(x),
             "Elementwise absolute value, as a float (float32 for integers).")
signbit = unary("signbit", lambda xp, x: xp.signbit(x), None,
                "Elementwise: is the sign bit set (true for -0.0 and negatives)? No gradient.", floats=False)
true_divide = divide


def round(x, decimals=0):  # noqa: A001  (keras.ops name)
    """Round to ``decimals`` decimals, halves to even (as NumPy); integers stay integers. No gradient."""
    decimals = validate_int("round", "decimals", decimals, minimum=-INT32_MAX, maximum=INT32_MAX)  # a C int

    def compute(xp, a):
        if a.dtype.kind in "iub":
            return a if decimals >= 0 else (xp.round(a.astype("float64"), decimals)).astype(a.dtype)
        return xp.round(a, decimals)

    return call_without_gradient("round", compute, x)


def _floor_divide(xp, a, b):
    return xp.floor_divide(a, b)


floor_divide = binary("floor_divide", _floor_divide, None,
                      "Elementwise ``floor(x1 / x2)`` in the operands' dtype (no gradient).", floats=False)


def _mod_derivative(rounder):
    def derivative(xp, a, b, out, needs):
        return (1 if needs[0] else None), (-rounder(xp)(a / b) if needs[1] else None)
    return derivative


mod = binary("mod", lambda xp, a, b: xp.mod(a, b), _mod_derivative(lambda xp: xp.floor),
             "Elementwise remainder with the sign of ``x2`` (Python's ``%``).", floats=False)
fmod = binary("fmod", lambda xp, a, b: xp.fmod(a, b), _mod_derivative(lambda xp: xp.trunc),
              "Elementwise remainder with the sign of ``x1`` (C's ``fmod``).", floats=False)


def _pick_derivative(pick_first):
    def derivative(xp, a, b, out, needs):
        first = pick_first(xp, a, b)
        return (first if needs[0] else None), (~first if needs[1] else None)
    return derivative


fmax = binary("fmax", lambda xp, a, b: xp.fmax(a, b),
              _pick_derivative(lambda xp, a, b: (a >= b) | xp.isnan(b)),
              "Elementwise maximum that ignores NaNs (NaN only where both are).", floats=False)
fmin = binary("fmin", lambda xp, a, b: xp.fmin(a, b),
              _pick_derivative(lambda xp, a, b: (a <= b) | xp.isnan(b)),
              "Elementwise minimum that ignores NaNs (NaN only where both are).", floats=False)
heaviside = binary("heaviside", lambda xp, a, b: xp.heaviside(a, b), None,
                   "Elementwise step: 0 below 0, ``x2`` at 0, 1 above (no gradient).")
nextafter = binary("nextafter", lambda xp, a, b: xp.nextafter(a, b), None,
                   "The next float after ``x1`` toward ``x2`` (no gradient).")


def _divide_no_nan(xp, a, b):
    zero = b == 0
    return xp.where(zero, 0, a / xp.where(zero, 1, b)).astype(a.dtype)


def _divide_no_nan_derivative(xp, a, b, out, needs):
    nonzero = b != 0
    safe = xp.where(nonzero, b, 1)
    return ((nonzero / safe) if needs[0] else None), ((-out / safe) * nonzero if needs[1] else None)


divide_no_nan = binary("divide_no_nan", _divide_no_nan, _divide_no_nan_derivative,
                       "Elementwise ``x1 / x2``, and 0 where ``x2 == 0`` (gradient 0 there too).")


class NanToNum(Function):
    def __init__(self, nan, posinf, neginf):
        self.values = nan, posinf, neginf

    def forward(self, x):
        nan, posinf, neginf = self.values
        xp = self.device.xp
        if x.dtype.kind not in "fcV":  # V: bfloat16
            return x.copy()
        if self.needs_input_grad[0]:
            self.save_for_backward(xp.isfinite(x))
        return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, grad):
        (finite,) = self.saved
        return grad * finite


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """Replace NaN with ``nan`` and infinities with ``posinf``/``neginf`` (default: the dtype's largest).

    The gradient passes where ``x`` was finite and is 0 at replaced entries.
    """
    nan, posinf, neginf = (validate_number("nan_to_num", name, value, finite=False, allow_none=name != "nan")
                           for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)))
    return NanToNum(nan, posinf, neginf).apply(_as_tensor("nan_to_num", operand("nan_to_num", x)))


class Ldexp(Function):
    def forward(self, mantissa, exponent):
        xp = self.device.xp
        scale = xp.exp2(xp.asarray(exponent).astype(mantissa.dtype))
        if self.needs_input_grad[0]:
            self.save_for_backward(scale)
        return mantissa * scale

    def backward(self, grad):
        (scale,) = self.saved
        return grad * scale, None


def ldexp(x1, x2):
    """Elementwise ``x1 * 2**x2`` for integer ``x2`` (gradient to ``x1`` only).

    Raises:
        TypeError: ``x2`` is not integer.
    """
    x1, x2 = operand("ldexp", x1), operand("ldexp", x2)
    from minikeras.ops._checks import check_broadcast

    check_broadcast("ldexp", x1, x2)
    kind = getattr(x2, "dtype", numpy.asarray(x2).dtype).kind
    if kind not in "iu":  # (Keras refuses a bool exponent too)
        raise TypeError(f"ldexp: x2 must be integer, received dtype {getattr(x2, 'dtype', type(x2).__name__)}.")
    dtype = binary_dtype(x1, 1.0, floats=True)
    x1 = _as_tensor("ldexp", x1)
    if x1.dtype != dtype:
        x1 = x1.astype(dtype)
    return Ldexp().apply(x1, x2)


del _float_array
