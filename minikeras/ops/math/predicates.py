"""Predicates and boolean reductions (no gradient): isnan, isinf, isfinite,
isneginf, isposinf, isreal, isclose, allclose, isin, all, any, count_nonzero.
"""

__all__ = ["isnan", "isinf", "isfinite", "isneginf", "isposinf", "isreal", "isclose", "allclose", "isin",
           "all", "any", "count_nonzero"]

from minikeras.ops._checks import check_broadcast, normalize_axis
from minikeras.ops.math._elementwise import call_without_gradient, operand, unary
from minikeras.ops.math._operands import _as_tensor
from minikeras._support.argument_validation import validate_flag, validate_number


def _predicate(name, compute, doc):
    return unary(name, compute, None, doc, floats=False)


isnan = _predicate("isnan", lambda xp, x: xp.isnan(x), "Elementwise: is ``x`` NaN?")
isinf = _predicate("isinf", lambda xp, x: xp.isinf(x), "Elementwise: is ``x`` +-inf?")
isfinite = _predicate("isfinite", lambda xp, x: xp.isfinite(x), "Elementwise: is ``x`` neither inf nor NaN?")
isneginf = _predicate("isneginf", lambda xp, x: xp.isneginf(x) if x.dtype.kind in "fV" else xp.zeros(x.shape, bool),
                      "Elementwise: is ``x`` -inf?")
isposinf = _predicate("isposinf", lambda xp, x: xp.isposinf(x) if x.dtype.kind in "fV" else xp.zeros(x.shape, bool),
                      "Elementwise: is ``x`` +inf?")
isreal = _predicate("isreal", lambda xp, x: xp.isreal(x), "Elementwise: is the imaginary part 0?")


def _tolerances(op_name, rtol, atol):
    validate_number(op_name, "rtol", rtol, minimum=0)
    validate_number(op_name, "atol", atol, minimum=0)


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Elementwise ``|x1 - x2| <= atol + rtol * |x2|`` as a bool tensor."""
    _tolerances("isclose", rtol, atol)
    equal_nan = validate_flag("isclose", "equal_nan", equal_nan)
    check_broadcast("isclose", operand("isclose", x1), operand("isclose", x2))
    return call_without_gradient(
        "isclose", lambda xp, a, b: xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan), x1, x2)


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Whether every element is close (a 0-d bool tensor, as Keras)."""
    _tolerances("allclose", rtol, atol)
    equal_nan = validate_flag("allclose", "equal_nan", equal_nan)
    check_broadcast("allclose", operand("allclose", x1), operand("allclose", x2))
    return call_without_gradient(
        "allclose", lambda xp, a, b: xp.all(xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)),
        x1, x2)


def isin(x1, x2, assume_unique=False, invert=False):
    """Elementwise: is each element of ``x1`` somewhere in ``x2``? (``invert``: is it absent?)"""
    assume_unique = validate_flag("isin", "assume_unique", assume_unique)
    invert = validate_flag("isin", "invert", invert)
    return call_without_gradient(
        "isin", lambda xp, a, b: xp.isin(a, b, assume_unique=assume_unique, invert=invert), x1, x2)


def _reduce(op_name, reducer, x, axis, keepdims, dtype=None):
    x = _as_tensor(op_name, operand(op_name, x))
    axes = normalize_axis(op_name, axis, x.ndim)
    keepdims = validate_flag(op_name, "keepdims", keepdims)

    def compute(xp, a):
        out = reducer(xp)(a, axis=axes, keepdims=keepdims)
        return out if dtype is None else out.astype(dtype)

    return call_without_gradient(op_name, compute, x)


def all(x, axis=None, keepdims=False):  # noqa: A001  (keras.ops name)
    """Whether every element along ``axis`` is true (nonzero)."""
    return _reduce("all", lambda xp: xp.all, x, axis, keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001  (keras.ops name)
    """Whether some element along ``axis`` is true (nonzero)."""
    return _reduce("any", lambda xp: xp.any, x, axis, keepdims)


def count_nonzero(x, axis=None):
    """The number of nonzero elements along ``axis`` (int32, as Keras)."""
    return _reduce("count_nonzero", lambda xp: lambda a, axis, keepdims: xp.sum(a != 0, axis=axis),
                   x, axis, False, dtype="int32")
