"""Activation functions, each one Function with a hand-written backward.

Names and defaults are Keras 3's ``keras.ops`` ones, except ``gelu``, whose
default here is the exact erf form (``approximate=False``, the default of
``keras.activations.gelu``; ``keras.ops.gelu`` defaults to the tanh form).
``leaky_relu``'s ``negative_slope`` defaults to 0.2 as in Keras 3 (the
``LeakyReLU`` layer of tf.keras 2 used 0.3; layers choose their own).

Backward passes keep as little as possible, and prefer the output to the
input: the output is usually kept alive anyway by the next layer, so saving
it costs no memory (``relu``, ``relu6``, ``sigmoid``, ``tanh``, ``elu``,
``selu``, ``hard_sigmoid``, ``leaky_relu``).

Speed: the math works in place on fresh arrays where that saves a
temporary, and picks branches by multiplying with masks rather than with
``xp.where``, which on the CPU costs ~10 ns an element on random masks
(branch mispredictions), ten times an arithmetic pass.

Everything is stable for large magnitudes: ``sigmoid(-1000) == 0``,
``softplus(1000) == 1000``, ``log_sigmoid(-1000) == -1000``, without
overflow warnings. ``relu`` and ``relu6`` keep integer inputs integer; the
others compute integers in float32.
"""

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "sigmoid", "tanh", "softplus",
    "softsign", "silu", "swish", "hard_sigmoid", "hard_silu", "hard_swish", "log_sigmoid",
]

import math

import numpy

from minikeras.autograd import Function
from minikeras.ops.math.unary import _as_tensor, _float_array, _normal_cdf_array
from minikeras._support.argument_validation import validate_flag


def _activation_input(op_name, x):
    """Activations are real functions of numbers: bools and complex refused."""
    return _as_tensor(op_name, x, allow_bool=False, allow_complex=False)

# Klambauer et al. (2017), the constants Keras and PyTorch use.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_CUBIC = 0.044715


def _sigmoid_array(xp, x, negate=False):
    """1 / (1 + exp(-x)) (of -x with ``negate``): exact to rounding on both
    sides. exp(-x) overflows to inf only where the true value is below the
    smallest float, and then 1 / inf = 0 is the right answer, so the warning
    is silenced."""
    out = xp.empty_like(x)  # an array even for 0-d input, so out= works
    if negate:
        out[...] = x
    else:
        xp.negative(x, out=out)
    with numpy.errstate(over="ignore"):
        xp.exp(out, out=out)
    out += 1.0
    return xp.reciprocal(out, out=out)


def _log1p_exp_minus_abs(xp, x):
    """log(1 + exp(-|x|)), in (0, log 2]: the part of softplus that never overflows."""
    out = xp.abs(x, out=xp.empty_like(x))
    xp.negative(out, out=out)
    xp.exp(out, out=out)
    return xp.log1p(out, out=out)


# ------------------------------------------------------------------- ReLU kin
class Relu(Function):
    """Large inputs are split over the CPU op threads along the first axis."""

    def forward(self, x):
        xp = self.device.xp
        if x.ndim == 0:
            out = xp.maximum(x, 0)
        else:
            out = xp.empty_like(x)
            self.device.row_blocks(lambda start, stop: xp.maximum(x[start:stop], 0, out=out[start:stop]),
                                   x.shape[0], x.size)
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        xp = self.device.xp
        if grad.ndim == 0 or grad.shape != out.shape:
            return grad * (out > 0)
        result = xp.empty_like(grad)

        def part(start, stop):
            xp.multiply(grad[start:stop], out[start:stop] > 0, out=result[start:stop])

        self.device.row_blocks(part, grad.shape[0], grad.size)
        return result


class Relu6(Function):
    def forward(self, x):
        out = self.device.xp.clip(x, 0, 6)
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        return grad * ((out > 0) & (out < 6))


class LeakyRelu(Function):
    def __init__(self, negative_slope):
        self.negative_slope = negative_slope

    def forward(self, x):
        xp = self.device.xp
        x = _float_array(x)
        slope = self.negative_slope
        if 0 <= slope <= 1:
            out = xp.maximum(x, x * slope)
        else:
            out = xp.minimum(x, 0) * slope
            out += xp.maximum(x, 0)
        if self.needs_input_grad[0]:
            # With a slope >= 0 the output has the input's sign: keep only it.
            self.save_for_backward(out if slope >= 0 else x)
        return out

    def backward(self, grad):
        (reference,) = self.saved
        result = grad * self.negative_slope
        rest = grad - result  # grad * (1 - slope), added where x > 0
        rest *= reference > 0
        result += rest
        return result


class Elu(Function):
    """ELU, and SELU as ``scale * elu(x, alpha)``."""

    def __init__(self, alpha, scale=1.0, name="Elu"):
        self.alpha, self.scale, self.op_name = alpha, scale, name

    @property
    def name(self):
        return self.op_name

    def forward(self, x):
        xp = self.device.xp
        x = _float_array(x)
        # max(x, 0) + alpha * expm1(min(x, 0)): one branch is exactly 0 on
        # each side, and expm1 never sees a large positive argument.
        out = xp.minimum(x, 0, out=xp.empty_like(x))
        xp.expm1(out, out=out)
        out *= self.alpha
        out += xp.maximum(x, 0)
        if self.scale != 1.0:
            out *= self.scale
        if self.needs_input_grad[0]:
            # With alpha > 0 the output's sign is the input's: keep only it.
            self.save_for_backward(out, x if self.alpha <= 0 else None)
        return out

    def backward(self, grad):
        out, x = self.saved
        positive = (x if x is not None else out) > 0
        # For x <= 0: d/dx scale*alpha*(e^x - 1) = out + scale*alpha.
        result = out + self.scale * self.alpha
        result *= ~positive
        result *= grad
        slope_one = grad * positive
        if self.scale != 1.0:
            slope_one *= self.scale
        result += slope_one
        return result


class Gelu(Function):
    def __init__(self, approximate):
        self.approximate = approximate

    def forward(self, x):
        xp = self.device.xp
        x = _float_array(x)
        if self.approximate:
            gate = x * x
            gate *= _GELU_CUBIC * _SQRT_2_OVER_PI
            gate += _SQRT_2_OVER_PI
            gate *= x
            gate = xp.tanh(gate, out=gate) if gate.ndim else xp.tanh(gate)
            out = gate + 1.0
            out *= x
            out *= 0.5
        else:
            gate = _normal_cdf_array(xp, x)
            out = x * gate
        if self.needs_input_grad[0]:
            self.save_for_backward(x, gate)
        return out

    def backward(self, grad):
        x, gate = self.saved
        xp = self.device.xp
        if self.approximate:
            # d/dx 0.5 x (1 + t) = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)
            derivative = x * x
            derivative *= 3.0 * _GELU_CUBIC * _SQRT_2_OVER_PI * 0.5
            derivative += _SQRT_2_OVER_PI * 0.5
            derivative *= x
            derivative *= 1.0 - gate * gate
            derivative += gate * 0.5
            derivative += 0.5
        else:
            # d/dx x Phi(x) = Phi(x) + x phi(x)
            derivative = x * x
            derivative *= -0.5
            derivative = xp.exp(derivative)
            derivative *= x * _INV_SQRT_2PI
            derivative += gate
        derivative *= grad
        return derivative


# ------------------------------------------------------------ sigmoid family
class Sigmoid(Function):
    def forward(self, x):
        out = _sigmoid_array(self.device.xp, _float_array(x))
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        return grad * (out * (1.0 - out))


class Tanh(Function):
    def forward(self, x):
        out = self.device.xp.tanh(_float_array(x))
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        return grad * (1.0 - out * out)


class Softplus(Function):
    def forward(self, x):
        x = _float_array(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        xp = self.device.xp
        out = _log1p_exp_minus_abs(xp, x)
        out += xp.maximum(x, 0)
        return out

    def backward(self, grad):
        (x,) = self.saved
        derivative = _sigmoid_array(self.device.xp, x)
        derivative *= grad
        return derivative


class LogSigmoid(Function):
    def forward(self, x):
        x = _float_array(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        # log(sigmoid(x)) = -softplus(-x) = min(x, 0) - log(1 + exp(-|x|))
        xp = self.device.xp
        out = _log1p_exp_minus_abs(xp, x)
        xp.negative(out, out=out)
        out += xp.minimum(x, 0)
        return out

    def backward(self, grad):
        (x,) = self.saved
        derivative = _sigmoid_array(self.device.xp, x, negate=True)
        derivative *= grad
        return derivative


class Softsign(Function):
    def forward(self, x):
        xp = self.device.xp
        x = _float_array(x)
        denominator = xp.abs(x) + 1.0
        if self.needs_input_grad[0]:
            self.save_for_backward(denominator)
        return x / denominator

    def backward(self, grad):
        (denominator,) = self.saved
        return grad / (denominator * denominator)


class Silu(Function):
    def forward(self, x):
        x = _float_array(x)
        gate = _sigmoid_array(self.device.xp, x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, gate)
        return x * gate

    def backward(self, grad):
        x, gate = self.saved
        # d/dx x s(x) = s + x s (1 - s) = s (1 + x (1 - s))
        derivative = 1.0 - gate
        derivative *= x
        derivative += 1.0
        derivative *= gate
        derivative *= grad
        return derivative


class HardSigmoid(Function):
    def forward(self, x):
        out = self.device.xp.clip(_float_array(x) * (1.0 / 6.0) + 0.5, 0.0, 1.0)
        if self.needs_input_grad[0]:
            self.save_for_backward(out)
        return out

    def backward(self, grad):
        (out,) = self.saved
        return (grad * (1.0 / 6.0)) * ((out > 0) & (out < 1))


class HardSilu(Function):
    def forward(self, x):
        x = _float_array(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return x * self.device.xp.clip(x * (1.0 / 6.0) + 0.5, 0.0, 1.0)

    def backward(self, grad):
        (x,) = self.saved
        xp = self.device.xp
        # hard_sigmoid(x) + x * hard_sigmoid'(x): 0 below -3, 1 above 3,
        # (2x + 3) / 6 strictly between (the kinks take the outer side, as
        # autodiff of relu6(x + 3) / 6 does).
        inside = (x > -3) & (x < 3)
        derivative = xp.clip(x * (1.0 / 6.0) + 0.5, 0.0, 1.0) + (x * (1.0 / 6.0)) * inside
        return grad * derivative


# ------------------------------------------------------------------- wrappers
def relu(x):
    """Rectified linear unit ``max(x, 0)``; its gradient at 0 is 0."""
    return Relu().apply(_activation_input("relu", x))


def relu6(x):
    """``min(max(x, 0), 6)``; gradient 1 strictly between 0 and 6."""
    return Relu6().apply(_activation_input("relu6", x))


def _check_number(op_name, arg_name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, numpy.number)):
        raise TypeError(f"{op_name}: {arg_name} must be a number, received {type(value).__name__} {value!r}.")
    if not math.isfinite(value):
        raise ValueError(f"{op_name}: {arg_name} must be finite, received {value}.")
    return float(value)


def leaky_relu(x, negative_slope=0.2):
    """``x`` for ``x > 0``, ``negative_slope * x`` otherwise (Keras 3 default 0.2).

    Raises:
        TypeError, ValueError: ``negative_slope`` is not a finite number.
    """
    slope = _check_number("leaky_relu", "negative_slope", negative_slope)
    return LeakyRelu(slope).apply(_activation_input("leaky_relu", x))


def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise.

    Raises:
        TypeError, ValueError: ``alpha`` is not a finite number.
    """
    alpha = _check_number("elu", "alpha", alpha)
    return Elu(alpha).apply(_activation_input("elu", x))


def selu(x):
    """Scaled ELU: ``scale * elu(x, alpha)`` with Klambauer et al.'s constants
    (``alpha ~ 1.6733``, ``scale ~ 1.0507``)."""
    return Elu(_SELU_ALPHA, _SELU_SCALE, "Selu").apply(_activation_input("selu", x))


def gelu(x, approximate=False):
    """Gaussian error linear unit ``x * P(X <= x)``, ``X ~ N(0, 1)``.

    Args:
        x: the input.
        approximate: False (default here) for the exact form
            ``0.5 x (1 + erf(x / sqrt(2)))``; True for the tanh form
            ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
            (``keras.ops.gelu`` defaults to True, ``keras.activations.gelu``
            to False.)
    """
    approximate = validate_flag("gelu", "approximate", approximate)  # a bool, 0 or 1 (NumPy's flags)
    return Gelu(approximate).apply(_activation_input("gelu", x))


def sigmoid(x):
    """Logistic ``1 / (1 + exp(-x))``, exact for large ``|x|`` and warning-free."""
    return Sigmoid().apply(_activation_input("sigmoid", x))


def tanh(x):
    """Hyperbolic tangent (bools as 0 and 1 in float32, as Keras's ``tanh``)."""
    x = _as_tensor("tanh", x, allow_complex=False)
    return Tanh().apply(x.astype("float32") if x.dtype == numpy.bool_ else x)


def softplus(x):
    """``log(1 + exp(x))``, computed as ``log1p(exp(-|x|)) + max(x, 0)`` so that
    it never overflows; its gradient is ``sigmoid(x)``."""
    return Softplus().apply(_activation_input("softplus", x))


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``, stable for large ``|x|``."""
    return LogSigmoid().apply(_activation_input("log_sigmoid", x))


def softsign(x):
    """``x / (1 + |x|)``."""
    return Softsign().apply(_activation_input("softsign", x))


def silu(x):
    """Sigmoid linear unit (swish) ``x * sigmoid(x)``."""
    return Silu().apply(_activation_input("silu", x))


swish = silu


def hard_sigmoid(x):
    """Piecewise-linear sigmoid of Keras 3: ``relu6(x + 3) / 6``
    (0 below -3, 1 above 3)."""
    return HardSigmoid().apply(_activation_input("hard_sigmoid", x))


def hard_silu(x):
    """``x * hard_sigmoid(x)`` (hard swish)."""
    return HardSilu().apply(_activation_input("hard_silu", x))


hard_swish = hard_silu
