"""Reductions: sum, mean (more in this family are added alongside)."""

__all__ = ["sum", "mean"]

from minikeras.autograd import Function
from minikeras.ops._checks import normalize_axis, shape_of


def _expand_reduced(grad, axes, keepdims, xp):
    """Reinsert reduced axes (size 1) so ``grad`` broadcasts to the input."""
    if keepdims:
        return grad
    return xp.expand_dims(grad, axes) if axes else grad


class Sum(Function):
    def __init__(self, axes, keepdims):
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        self.input_shape = x.shape
        return x.sum(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        xp = self.device.xp
        grad = _expand_reduced(grad, self.axes, self.keepdims, xp)
        return xp.broadcast_to(grad, self.input_shape)


class Mean(Function):
    def __init__(self, axes, keepdims):
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        self.input_shape = x.shape
        return x.mean(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        xp = self.device.xp
        count = 1
        for axis in self.axes:
            count *= self.input_shape[axis]
        grad = _expand_reduced(grad, self.axes, self.keepdims, xp) / count
        return xp.broadcast_to(grad, self.input_shape)


def sum(x, axis=None, keepdims=False):  # noqa: A001  (keras.ops name)
    """Sum over ``axis`` (int, tuple, or None for all)."""
    axes = normalize_axis("sum", axis, len(shape_of(x)))
    return Sum(axes, keepdims).apply(x)


def mean(x, axis=None, keepdims=False):
    """Mean over ``axis`` (int, tuple, or None for all)."""
    shape = shape_of(x)
    axes = normalize_axis("mean", axis, len(shape))
    for a in axes:
        if shape[a] == 0:
            raise ValueError(f"mean: cannot average over axis {a} of size 0 (shape {shape}).")
    return Mean(axes, keepdims).apply(x)
