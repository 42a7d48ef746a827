"""keras.layers.Dot and ``dot``: batched dot products, optionally of L2-normalised inputs."""
import numpy

from minikeras import ops
from minikeras.layers.merging.base_merge import _Merge, _shape_text

__all__ = ["Dot", "dot"]


def _l2_normalize(x, axis):
    """``x / max(||x||, 1e-6)`` along ``axis`` (Keras' epsilon on the
    squared norm is 1e-12)."""
    squared = ops.sum(ops.square(x), axis=axis, keepdims=True)
    return x * ops.rsqrt(ops.maximum(squared, 1e-12))


class Dot(_Merge):
    """Per-sample dot products of two tensors along given axes (a batched
    contraction, like ``keras.layers.Dot``).

    For ``(batch, n)`` inputs and ``axes=1`` the output is ``(batch, 1)``;
    for ``(batch, m, d)`` and ``(batch, n, d)`` with ``axes=2`` it is
    ``(batch, m, n)``.

    Args:
        axes: an int (the same axis of both inputs) or a pair of ints;
            axis 0 (the batch) cannot be contracted.
        normalize: L2-normalise both inputs along the axes first, giving
            cosine similarities.
        **kwargs: base Layer arguments.
    """

    _min_inputs = _max_inputs = 2

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axes, (int, numpy.integer)) and not isinstance(axes, bool):
            axes = int(axes)
        elif isinstance(axes, (list, tuple)) and len(axes) == 2 and all(
                isinstance(a, (int, numpy.integer)) and not isinstance(a, bool) for a in axes):
            axes = [int(a) for a in axes]
        else:
            raise TypeError(f"Dot: axes must be an int or a pair of ints, received axes={axes!r}.")
        self.axes = axes
        self.normalize = bool(normalize)

    def _resolved_axes(self, shapes):
        pair = self.axes if isinstance(self.axes, list) else [self.axes, self.axes]
        resolved = []
        for axis, shape in zip(pair, shapes):
            if not -len(shape) <= axis < len(shape) or axis % len(shape) == 0:
                raise ValueError(
                    f"Layer '{self.name}' (Dot, axes={self.axes}) cannot contract axis {axis} of an input of shape "
                    f"{tuple(shape)} (axis 0 is the batch)."
                )
            resolved.append(axis % len(shape))
        return resolved

    def _check_shapes(self, shapes):
        if any(len(shape) < 2 for shape in shapes):
            raise ValueError(
                f"Layer '{self.name}' (Dot) needs inputs of rank >= 2, received shapes {_shape_text(shapes)}."
            )
        first, second = self._resolved_axes(shapes)
        if shapes[0][first] != shapes[1][second] or shapes[0][0] != shapes[1][0]:
            raise ValueError(
                f"Layer '{self.name}' (Dot, axes={self.axes}) received incompatible shapes {_shape_text(shapes)}: "
                f"axis {first} of the first ({shapes[0][first]}) must equal axis {second} of the second "
                f"({shapes[1][second]}), and the batch sizes must agree."
            )

    def call(self, inputs):
        self._check_inputs(inputs)
        shapes = [item.shape for item in inputs]
        self._check_shapes(shapes)
        first_axis, second_axis = self._resolved_axes(shapes)
        x1, x2 = inputs
        if self.normalize:
            x1, x2 = _l2_normalize(x1, first_axis), _l2_normalize(x2, second_axis)
        batch, depth = shapes[0][0], shapes[0][first_axis]
        rest1 = tuple(s for i, s in enumerate(shapes[0]) if i not in (0, first_axis))
        rest2 = tuple(s for i, s in enumerate(shapes[1]) if i not in (0, second_axis))
        # (batch, rest1, depth) @ (batch, depth, rest2) -> (batch, rest1, rest2)
        left = ops.reshape(ops.moveaxis(x1, first_axis, -1), (batch, -1, depth))
        right = ops.reshape(ops.moveaxis(x2, second_axis, 1), (batch, depth, -1))
        product = ops.matmul(left, right)
        out_shape = (batch,) + rest1 + rest2
        if len(out_shape) == 1:
            out_shape = (batch, 1)
        return ops.reshape(product, out_shape)

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def dot(inputs, axes, normalize=False, **kwargs):
    """``Dot(axes, normalize, **kwargs)(inputs)``."""
    return Dot(axes, normalize=normalize, **kwargs)(inputs)
