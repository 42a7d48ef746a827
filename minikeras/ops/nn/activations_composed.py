"""The activations of ``keras.ops.nn`` composed of other ops (``activations`` holds
the fused ones with their own Function): celu,
glu, hard_shrink, hard_tanh, soft_shrink, sparse_plus, sparse_sigmoid,
sparsemax, squareplus, tanh_shrink, threshold.

Each is a composition of differentiable ops (``where``, ``exp``, ``sqrt``,
``sort``, ``cumsum``) that is exact; the piecewise ones take the gradient
of the piece that holds at a point (at a kink, the piece Keras's formula
selects there).
"""

__all__ = ["celu", "glu", "hard_shrink", "hard_tanh", "soft_shrink", "sparse_plus", "sparse_sigmoid",
           "sparsemax", "squareplus", "tanh_shrink", "threshold"]

from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.array.indexing import getitem
from minikeras.ops.array.sorting import _take_along_axis, sort
from minikeras.ops.array.joining import split
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.compare import clip, maximum, minimum, where
from minikeras.ops.math.exp_log import expm1
from minikeras.ops.math.cumulative import cumsum
from minikeras.ops.math.powers import sqrt
from minikeras.ops.nn.activations import sigmoid, tanh
from minikeras._support.argument_validation import validate_axis, validate_number


def _float_input(op_name, x):
    """``x`` as a float tensor (ints computed in float32); bools and complex refused, as
    by the other activations: these are real functions, and a cast would drop the imaginary part."""
    x = _as_tensor(op_name, operand(op_name, x), allow_bool=False, allow_complex=False)
    return x if is_float_dtype(x.dtype) else x.astype("float32")


def celu(x, alpha=1.0):
    """``max(x, 0) + min(alpha * (exp(x / alpha) - 1), 0)``."""
    validate_number("celu", "alpha", alpha)
    x = _float_input("celu", x)
    return maximum(x, 0) + minimum(expm1(x / alpha) * alpha, 0)


def glu(x, axis=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``axis``.

    Raises:
        ValueError: the axis has an odd size.
    """
    x = _float_input("glu", x)
    axis = validate_axis("glu", axis, x.ndim)
    if x.shape[axis] % 2:
        raise ValueError(f"glu: axis {axis} must have an even size, received shape {x.shape}.")
    first, second = split(x, 2, axis=axis)
    return first * sigmoid(second)


def hard_shrink(x, threshold=0.5):
    """``x`` where ``|x| > threshold``, else 0."""
    validate_number("hard_shrink", "threshold", threshold)
    x = _float_input("hard_shrink", x)
    return where(abs(x) > threshold, x, 0)


def hard_tanh(x):
    """``x`` clipped to [-1, 1]."""
    return clip(_float_input("hard_tanh", x), -1.0, 1.0)


def soft_shrink(x, threshold=0.5):
    """``x - threshold`` above it, ``x + threshold`` below ``-threshold``, else 0."""
    validate_number("soft_shrink", "threshold", threshold)
    x = _float_input("soft_shrink", x)
    return where(x > threshold, x - threshold, where(x < -threshold, x + threshold, 0))


def sparse_plus(x):
    """0 below -1, ``(x + 1)**2 / 4`` on [-1, 1], ``x`` above 1 (a smooth ReLU)."""
    x = _float_input("sparse_plus", x)
    return where(x <= -1, 0, where(x >= 1, x, (x + 1) * (x + 1) * 0.25))


def sparse_sigmoid(x):
    """0 below -1, ``(x + 1) / 2`` on [-1, 1], 1 above."""
    x = _float_input("sparse_sigmoid", x)
    return where(x <= -1, 0, where(x >= 1, 1, (x + 1) * 0.5))


def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``."""
    validate_number("squareplus", "b", b, minimum=0)
    x = _float_input("squareplus", x)
    return (x + sqrt(x * x + b)) * 0.5


def tanh_shrink(x):
    """``x - tanh(x)``."""
    x = _float_input("tanh_shrink", x)
    return x - tanh(x)


def threshold(x, threshold, default_value):  # noqa: A002
    """``x`` where ``x > threshold``, else ``default_value``."""
    validate_number("threshold", "threshold", threshold)
    validate_number("threshold", "default_value", default_value)
    x = _float_input("threshold", x)
    return where(x > threshold, x, default_value)


def sparsemax(x, axis=-1):
    """Sparsemax (Martins & Astudillo, 2016): the Euclidean projection onto the simplex along ``axis``.

    Sorted descending ``z``, support size ``k = max{j : 1 + j z_j > sum_{i<=j} z_i}``,
    ``tau = (sum_{i<=k} z_i - 1) / k``, output ``max(x - tau, 0)``.
    """
    from minikeras.ops.array.reshaping import moveaxis
    from minikeras.ops.reduce import sum as _sum

    x = _float_input("sparsemax", x)
    axis = validate_axis("sparsemax", axis, x.ndim)
    if x.shape[axis] == 0:
        return x * 0  # nothing to project (Keras: the empty tensor)
    moved = moveaxis(x, axis, -1)
    descending = getitem(sort(moved, -1), (Ellipsis, slice(None, None, -1)))
    n = moved.shape[-1]
    from minikeras.ops.creation import arange

    ranks = arange(1, n + 1, dtype=str(x.dtype))
    running = cumsum(descending, axis=-1)
    in_support = (1 + ranks * descending.detach()) > running.detach()
    support = _sum(in_support.astype("int64"), axis=-1, keepdims=True)
    total = _take_along_axis(running, support - 1, -1, checked=False)  # support >= 1
    tau = (total - 1) / support.astype(x.dtype)
    return moveaxis(maximum(moved - tau, 0), -1, axis)
