"""Elementwise unary math: abs, exp, log, log1p, expm1, sqrt, square, rsqrt,
reciprocal, sin, cos, erf, and the non-differentiable sign.

One family per module: ``abs_sign``, ``exp_log``, ``powers``, ``trig`` and
``special`` (erf); this module gathers them under their historical name.

Dtypes: ops whose result on integers is an integer (``abs``, ``square``,
``sign``) keep integer inputs as they are; the others (``exp``, ``log``,
``sqrt``, ...) compute integer and bool inputs in float32, the default
float dtype, as Keras does. Integer tensors never require grad.

Domains follow IEEE arithmetic, silently (like TensorFlow and PyTorch, no
NumPy RuntimeWarning): ``log(0) = -inf``, ``log(-1) = nan``,
``sqrt(-1) = nan``, ``exp(1000) = inf``; the gradient of ``sqrt`` at 0 is
``+inf`` and that of ``log`` at 0 is ``+inf``.

The operand helpers the other op families share (:func:`_as_tensor`,
:func:`_check_operand`, :func:`_float_array`) live in ``_operands`` and are
re-exported here, as is the erf kernel the exact GELU uses.
"""
from minikeras.ops.math._operands import _as_tensor, _check_operand, _float_array  # noqa: F401
from minikeras.ops.math.abs_sign import abs, absolute, sign  # noqa: A004
from minikeras.ops.math.exp_log import exp, expm1, log, log1p
from minikeras.ops.math.powers import reciprocal, rsqrt, sqrt, square
from minikeras.ops.math.special import _erf_array, _normal_cdf_array, erf  # noqa: F401
from minikeras.ops.math.trig import cos, sin

__all__ = [
    "abs", "absolute", "exp", "log", "log1p", "expm1", "sqrt", "square", "rsqrt", "sign",
    "reciprocal", "sin", "cos", "erf",
]
