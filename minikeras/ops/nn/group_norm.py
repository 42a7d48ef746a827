"""Group normalisation's core: standardise each (sample, group of
channels) over its channels and every spatial position (Wu & He, 2018).

One Function with a hand-written backward instead of a chain of mean,
variance and arithmetic nodes: it keeps only the normalised output and the
inverse standard deviations, and its backward is the classic
``(g - mean(g) - x_hat * mean(g * x_hat)) / sigma`` per group.
"""
import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.autograd import Function
from minikeras.ops.math.unary import _as_tensor
from minikeras.ops.array.reshaping import moveaxis
from minikeras._support.argument_validation import validate_axis, validate_number

__all__ = ["group_normalize"]


class GroupNormalize(Function):
    """``x`` with channels last, ``(batch, ..., channels)`` -> standardised."""

    def __init__(self, groups, epsilon):
        self.groups, self.epsilon = groups, epsilon

    def _grouped(self, array):
        # (batch, positions, groups, channels_per_group): reductions over axes 1 and 3.
        return array.reshape(array.shape[0], -1, self.groups, array.shape[-1] // self.groups)

    def forward(self, x):
        xp = self.device.xp
        grouped = self._grouped(x)
        mean = grouped.mean(axis=(1, 3), keepdims=True)
        centered = grouped - mean
        variance = (centered * centered).mean(axis=(1, 3), keepdims=True)
        inverse = 1.0 / xp.sqrt(variance + self.epsilon)
        normalized = centered * inverse
        self.save_for_backward(normalized, inverse)
        return normalized.reshape(x.shape)

    def backward(self, grad):
        normalized, inverse = self.saved
        g = self._grouped(grad)
        mean_g = g.mean(axis=(1, 3), keepdims=True)
        mean_gx = (g * normalized).mean(axis=(1, 3), keepdims=True)
        return (((g - mean_g - normalized * mean_gx) * inverse).reshape(grad.shape),)


def group_normalize(x, groups, axis=-1, epsilon=1e-3):
    """Standardise ``x`` per sample and per group of ``groups`` channel
    groups along ``axis`` (no scale or offset: GroupNormalization adds them).

    Args:
        x: a float Tensor ``(batch, ..., channels, ...)``.
        groups: how many groups the channels split into (must divide them).
        axis: the channel axis (default -1).
        epsilon: added to the variance.

    Raises:
        ValueError: ``groups`` does not divide the channels, or ``x`` has
            no batch and channel axes.
    """
    x = _as_tensor("group_normalize", x)
    if x.ndim < 2:
        raise ValueError(f"group_normalize expects (batch, ..., channels), received shape {x.shape}.")
    if not is_float_dtype(x.dtype):
        raise TypeError(f"group_normalize expects a floating-point tensor, received dtype {x.dtype}.")
    axis = validate_axis("group_normalize", axis, x.ndim)
    epsilon = validate_number("group_normalize", "epsilon", epsilon)
    channels = x.shape[axis]
    if isinstance(groups, bool) or not isinstance(groups, (int, numpy.integer)) or groups <= 0 or channels % groups:
        raise ValueError(f"group_normalize: groups must be a positive divisor of the {channels} channels, "
                         f"received groups={groups!r}.")
    if axis == x.ndim - 1:
        return GroupNormalize(int(groups), epsilon).apply(x)
    moved = GroupNormalize(int(groups), epsilon).apply(moveaxis(x, axis, -1))
    return moveaxis(moved, -1, axis)
