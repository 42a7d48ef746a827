"""Elementwise arithmetic: add, sub, mul, div, neg, pow.

Broadcasting is NumPy's; the engine sums gradients back to each input's
shape, so backward here returns full-shape gradients.
"""

__all__ = ["add", "subtract", "multiply", "divide", "power", "negative", "sub", "mul", "div", "neg", "pow"]

import math

import numpy

from minikeras.autograd import Function, Tensor
from minikeras.ops._checks import check_broadcast
from minikeras.ops._promotion import promote_operands
from minikeras._support.argument_validation import validate_tensor_input


class Add(Function):
    def forward(self, a, b):
        return a + b

    def backward(self, grad):
        return grad, grad


class Sub(Function):
    def forward(self, a, b):
        return a - b

    def backward(self, grad):
        return grad, (-grad if self.needs_input_grad[1] else None)


class Mul(Function):
    def forward(self, a, b):
        needs_a, needs_b = self.needs_input_grad
        self.save_for_backward(b if needs_a else None, a if needs_b else None)
        return a * b

    def backward(self, grad):
        b, a = self.saved
        return (grad * b if b is not None else None), (grad * a if a is not None else None)


class Div(Function):
    def forward(self, a, b):
        out = a / b
        self.save_for_backward(b, out if self.needs_input_grad[1] else None)
        return out

    def backward(self, grad):
        b, out = self.saved
        grad_a = grad / b
        grad_b = -grad_a * out if out is not None else None
        return grad_a, grad_b


class Neg(Function):
    def forward(self, a):
        return -a

    def backward(self, grad):
        return -grad


class Pow(Function):
    def forward(self, a, b):
        out = a**b
        self.save_for_backward(a, b, out)
        return out

    def backward(self, grad):
        a, b, out = self.saved
        xp = self.device.xp
        grad_a = grad * b * a ** (b - 1) if self.needs_input_grad[0] else None
        grad_b = None
        if self.needs_input_grad[1]:
            if hasattr(a, "shape"):
                safe_log = xp.log(xp.where(a > 0, a, 1))
            else:  # a Python number (``2.0 ** t``): CuPy's where takes no bool condition
                safe_log = math.log(a) if a > 0 else 0.0
            grad_b = grad * out * safe_log
        return grad_a, grad_b


def _binary(function_class, name, allow_bool=True):
    def op(x1, x2):  # Keras's parameter names
        a, b = x1, x2
        validate_tensor_input(name, a)
        validate_tensor_input(name, b)
        check_broadcast(name, a, b)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            a = Tensor(a)  # two Python numbers: NumPy's dtype rules, not Python's (True + True is True)
        a, b = promote_operands(a, b, true_division=function_class is Div)  # Keras's dtype rules
        if not allow_bool and getattr(a, "dtype", None) == numpy.bool_:
            # A bool with a number is that number (Keras, NumPy); two bools have no difference.
            raise TypeError(f"{name} does not accept two bool operands (NumPy and Keras refuse bool {name}). "
                            "Cast one to a number first, e.g. ops.cast(x, 'int32').")
        return function_class().apply(a, b)

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}(a, b)`` with NumPy broadcasting; Tensors, arrays or numbers."
    return op


add = _binary(Add, "add")
subtract = _binary(Sub, "subtract", allow_bool=False)  # NumPy gives bool minus bool no meaning
multiply = _binary(Mul, "multiply")
divide = _binary(Div, "divide")
_power = _binary(Pow, "power")


def _is_integer(value):
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return dtype.kind in "iu"
    return isinstance(value, int) and not isinstance(value, bool)


def power(x1, x2):
    """Elementwise ``a ** b`` with NumPy broadcasting; Tensors, arrays or numbers.

    Raises:
        ValueError: integer ``a`` to a negative integer power (NumPy has no
            integer result for it; cast to float first).
    """
    a, b = x1, x2
    if _is_integer(a) and _is_integer(b):
        exponents = b.numpy() if isinstance(b, Tensor) else b
        if (exponents < 0).any() if hasattr(exponents, "any") else exponents < 0:
            raise ValueError("power: integers to negative integer powers are not allowed; cast the base to a "
                             "floating-point dtype first.")
    return _power(a, b)


def negative(x):
    """Elementwise ``-x`` (bools refused: negation has no boolean meaning)."""
    validate_tensor_input("negative", x, allow_bool=False)
    if type(x) is int and -2**31 <= x < 2**31:
        x = Tensor(numpy.asarray(x, dtype="int32"))  # a Python int is int32, as in Keras
    return Neg().apply(x)


sub = subtract
mul = multiply
div = divide
neg = negative
pow = power  # noqa: A001  (the op's own name, as in keras.ops)
