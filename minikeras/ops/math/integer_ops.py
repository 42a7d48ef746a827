"""Integer and bitwise ops (no gradient): bitwise_and/or/xor/not/invert,
the shifts under both spellings, gcd and lcm.

Operands keep their integer (or bool) dtype under Keras's promotion: a
Python int is weak, so ``bitwise_and(uint8_tensor, 3)`` stays uint8.
"""

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_invert",
           "bitwise_left_shift", "bitwise_right_shift", "left_shift", "right_shift", "gcd", "lcm"]

from minikeras.ops.math._elementwise import binary, unary


def _integer_binary(name, compute, doc):
    function = binary(name, compute, None, doc, floats=False)

    def op(x, y):
        return function(x, y)

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
gcd = binary("gcd", lambda xp, a, b: xp.gcd(a, b), None, "Elementwise greatest common divisor.", floats=False)
lcm = binary("lcm", lambda xp, a, b: xp.lcm(a, b), None, "Elementwise least common multiple.", floats=False)
bitwise_invert = unary("bitwise_invert", lambda xp, x: xp.invert(x), None,
                       "Elementwise bitwise NOT (``~x``; logical NOT for bools).", floats=False)
bitwise_not = unary("bitwise_not", lambda xp, x: xp.invert(x), None,
                    "Elementwise bitwise NOT (``~x``; logical NOT for bools).", floats=False)
