"""keras.layers.RMSNormalization, and the axis checks it shares with
UnitNormalization.
"""
import numpy

from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.ops.nn.rms_norm import _rms_norm

__all__ = ["RMSNormalization"]


def _axes_of(layer, axis, input_shape):
    """``axis`` (an int or list) as sorted non-negative axes of ``input_shape``.

    Raises:
        ValueError: an axis out of range for the input.
    """
    ndim = len(input_shape)
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    for value in axes:
        if not -ndim <= value < ndim:
            raise ValueError(f"Axis {value} is out of bounds for input shape {tuple(input_shape)}. Received: "
                             f"axis={axis} (layer '{layer.name}').")
    return sorted(value % ndim for value in axes)


def _check_axis(class_name, axis):
    if isinstance(axis, (list, tuple)):
        if all(isinstance(a, (int, numpy.integer)) and not isinstance(a, bool) for a in axis):
            return [int(a) for a in axis]
    elif isinstance(axis, (int, numpy.integer)) and not isinstance(axis, bool):
        return int(axis)
    raise TypeError(f"Invalid value for `axis` argument: expected an int or a list/tuple of ints. Received: "
                    f"axis={axis} ({class_name})")


class RMSNormalization(Layer):
    """``x * rsqrt(mean(x^2, axis) + epsilon) * scale`` (Zhang & Sennrich, 2019):
    LayerNormalization without the centring, as in most recent transformers.

    Args:
        axis: an int or a list of ints (default -1).
        epsilon: added to the mean square (default 1e-6).
        **kwargs: base Layer arguments.

    Weights: ``scale`` (ones), shaped like the normalized axes.
    """

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.axis = _check_axis("RMSNormalization", axis)
        self.epsilon = epsilon

    def build(self, input_shape):
        axes = _axes_of(self, self.axis, input_shape)
        if isinstance(self.axis, list):
            self.axis = sorted(self.axis)
            shape = tuple(input_shape[a] for a in self.axis)
        else:
            shape = (input_shape[self.axis],)
            self.axis = [self.axis]  # as Keras: the config then holds a list
        self._axes = axes
        self._scale_shape = tuple(size if index in axes else 1 for index, size in enumerate(input_shape))[1:]
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")

    def call(self, inputs):
        scale = ops.reshape(self.scale, self._scale_shape) if self.scale.ndim != len(self._scale_shape) or \
            tuple(self.scale.shape) != self._scale_shape else self.scale
        return _rms_norm(inputs, ops.cast(scale, inputs.dtype) if scale.dtype != inputs.dtype else scale,
                         self._axes, self.epsilon)

    def compute_output_shape(self, input_shape):
        _axes_of(self, self.axis, input_shape)
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}
