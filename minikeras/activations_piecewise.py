"""Keras 3's newer activations: shrinkage, hard and sparse variants, CELU,
GLU, squareplus and sparsemax.

Each is composed of ``minikeras.ops`` (so its gradient comes from theirs;
sparsemax alone is one Function with a closed-form backward) and follows
Keras's formula, including which side of a threshold is strict. Like
``activations.py``, this module imports the ops lazily.
"""
__all__ = [
    "celu", "glu", "hard_shrink", "hard_tanh", "soft_shrink", "sparse_plus", "sparse_sigmoid", "sparsemax",
    "squareplus", "tanh_shrink", "threshold",
]


def _ops():
    from minikeras import ops

    return ops


def _tensor(x):
    from minikeras.autograd import Tensor

    return x if isinstance(x, Tensor) else Tensor(x)


def celu(x, alpha=1.0):
    """Continuously differentiable ELU: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    ops = _ops()
    x = _tensor(x)
    return ops.relu(x) + alpha * ops.expm1(ops.minimum(x, 0.0) / alpha)


def glu(x, axis=-1):
    """Gated linear unit: ``a * sigmoid(b)`` with ``x`` split in halves ``a, b`` along ``axis``.

    Raises:
        ValueError: the axis has an odd size.
    """
    ops = _ops()
    x = _tensor(x)
    if x.shape[axis] % 2 != 0:
        raise ValueError(f"axis size must be divisible by 2. Received: x.shape={tuple(x.shape)} with axis={axis}")
    first, second = ops.split(x, 2, axis=axis)
    return first * ops.sigmoid(second)


def hard_tanh(x):
    """``clip(x, -1, 1)``."""
    return _ops().clip(_tensor(x), -1.0, 1.0)


def hard_shrink(x, threshold=0.5):
    """``x`` where ``|x| > threshold``, else 0."""
    ops = _ops()
    x = _tensor(x)
    return ops.where(ops.greater(ops.abs(x), threshold), x, 0.0)


def soft_shrink(x, threshold=0.5):
    """``x - threshold`` above ``threshold``, ``x + threshold`` below ``-threshold``, else 0."""
    ops = _ops()
    x = _tensor(x)
    return ops.where(ops.greater(x, threshold), x - threshold,
                     ops.where(ops.less(x, -threshold), x + threshold, 0.0))


def sparse_plus(x):
    """A piecewise softplus: 0 for ``x <= -1``, ``(x + 1)^2 / 4`` for ``-1 < x < 1``, ``x`` above."""
    ops = _ops()
    x = _tensor(x)
    return ops.where(ops.less_equal(x, -1.0), 0.0, ops.where(ops.less(x, 1.0), 0.25 * ops.square(x + 1.0), x))


def sparse_sigmoid(x):
    """A piecewise sigmoid: 0 for ``x <= -1``, ``(x + 1) / 2`` between, 1 for ``x >= 1``."""
    ops = _ops()
    x = _tensor(x)
    return ops.where(ops.less_equal(x, -1.0), 0.0, ops.where(ops.greater_equal(x, 1.0), 1.0, 0.5 * (x + 1.0)))


def sparsemax(x, axis=-1):
    """The projection of ``x`` onto the probability simplex along ``axis``:
    a softmax-like distribution with exact zeros."""
    from minikeras.ops.nn.sparsemax_projection import _sparsemax

    return _sparsemax(_tensor(x), axis=axis)


def squareplus(x, b=4):
    """``(x + sqrt(x^2 + b)) / 2``, a smooth ReLU (Barron, 2021)."""
    ops = _ops()
    x = _tensor(x)
    return (x + ops.sqrt(ops.square(x) + b)) / 2.0


def tanh_shrink(x):
    """``x - tanh(x)``."""
    x = _tensor(x)
    return x - _ops().tanh(x)


def threshold(x, threshold, default_value):
    """``x`` where ``x > threshold``, else ``default_value``."""
    ops = _ops()
    x = _tensor(x)
    return ops.where(ops.greater(x, threshold), x, float(default_value))
