"""Integer and bitwise ops (no gradient): bitwise_and/or/xor/not/invert,
the shifts under both spellings, gcd and lcm.

Operands keep their integer (or bool) dtype under Keras's promotion: a
Python int is weak, so ``bitwise_and(uint8_tensor, 3)`` stays uint8.
"""

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_invert",
           "bitwise_left_shift", "bitwise_right_shift", "left_shift", "right_shift", "gcd", "lcm"]

import numpy

from minikeras.ops._promotion import result_type
from minikeras.ops.math._elementwise import binary, operand, unary
from minikeras._support.argument_validation import is_int


def _check_integer_operands(name, x, y):
    """Refuse what NumPy's integer ufuncs would fail on deep inside: a float
    operand, or a Python int that the result's integer dtype cannot hold."""
    for label, value in (("the first operand", x), ("the second operand", y)):
        dtype = getattr(value, "dtype", None)
        kind = numpy.dtype(dtype).kind if dtype is not None else (
            "b" if isinstance(value, bool) else "i" if is_int(value) else "f" if isinstance(value, float) else
            "c" if isinstance(value, complex) else None)
        if isinstance(value, (list, tuple)):
            try:
                kind, dtype = numpy.asarray(value).dtype.kind, numpy.asarray(value).dtype
            except ValueError:  # ragged: operand() says so
                kind = None
        if kind is not None and kind not in "biu":  # (other non-numbers: operand() names the op and the value)
            what = f"dtype {numpy.dtype(dtype)}" if dtype is not None else f"{type(value).__name__} {value!r:.60}"
            raise TypeError(f"{name} expects integer or bool operands, received {what} as {label}.")
    dtype = result_type(operand(name, x), operand(name, y))
    if dtype.kind in "iu":
        info = numpy.iinfo(dtype)
        for label, value in (("the first operand", x), ("the second operand", y)):
            if is_int(value) and not info.min <= value <= info.max:
                raise ValueError(f"{name}: {label} ({value}) does not fit the operands' dtype {dtype} "
                                 f"([{info.min}, {info.max}]).")


def _integer_binary(name, compute, doc, numpy_names=False):
    """The op, with Keras's parameter names: ``(x, y)``, or ``(x1, x2)`` for the NumPy-named gcd/lcm."""
    function = binary(name, compute, None, doc, floats=False)

    def op(x, y):
        _check_integer_operands(name, x, y)
        return function(x, y)

    def numpy_named(x1, x2):
        _check_integer_operands(name, x1, x2)
        bools = [isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", None) == "b"
                 for value in (x1, x2)]
        # Keras: lcm of integers only; gcd of operands whose result_type is an integer (a bool with an int)
        if (any(bools) if name == "lcm" else all(bools)):
            raise TypeError(f"{name} expects integer operands, received bool.")
        return function(x1, x2)

    op = numpy_named if numpy_names else op
    op.__name__ = op.__qualname__ = name
    op.__doc__ = function.__doc__
    return op


bitwise_and = _integer_binary("bitwise_and", lambda xp, a, b: xp.bitwise_and(a, b), "Elementwise bitwise AND.")
bitwise_or = _integer_binary("bitwise_or", lambda xp, a, b: xp.bitwise_or(a, b), "Elementwise bitwise OR.")
bitwise_xor = _integer_binary("bitwise_xor", lambda xp, a, b: xp.bitwise_xor(a, b), "Elementwise bitwise XOR.")
bitwise_left_shift = _integer_binary("bitwise_left_shift", lambda xp, a, b: xp.left_shift(a, b),
                                     "Elementwise ``x << y``.")
bitwise_right_shift = _integer_binary("bitwise_right_shift", lambda xp, a, b: xp.right_shift(a, b),
                                      "Elementwise ``x >> y`` (arithmetic for signed integers).")
left_shift = _integer_binary("left_shift", lambda xp, a, b: xp.left_shift(a, b), "Elementwise ``x << y``.")
right_shift = _integer_binary("right_shift", lambda xp, a, b: xp.right_shift(a, b), "Elementwise ``x >> y``.")
gcd = _integer_binary("gcd", lambda xp, a, b: xp.gcd(a, b), "Elementwise greatest common divisor.",
                      numpy_names=True)
lcm = _integer_binary("lcm", lambda xp, a, b: xp.lcm(a, b), "Elementwise least common multiple.",
                      numpy_names=True)
_invert = unary("bitwise_invert", lambda xp, x: xp.invert(x), None, "", floats=False)


def bitwise_invert(x):
    """Elementwise bitwise NOT (``~x``; logical NOT for bools); floats refused, as Keras."""
    _check_integer_operands("bitwise_invert", x, 0)
    return _invert(x)


def bitwise_not(x):
    """Elementwise bitwise NOT (``~x``; logical NOT for bools); floats refused, as Keras."""
    _check_integer_operands("bitwise_not", x, 0)
    return _invert(x)
