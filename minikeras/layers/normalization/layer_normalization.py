"""keras.layers.LayerNormalization."""
import numpy

from minikeras import ops
from minikeras.backend.dtypes import is_float_dtype
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.normalization.batch_normalization import _check_epsilon
from minikeras.layers.normalization.scale_shift import (add_scale_shift_weights, in_compute_dtype, in_statistics_dtype,
                                                        scale_shift_config, set_scale_shift_arguments)

__all__ = ["LayerNormalization"]


class LayerNormalization(Layer):
    """Normalise each sample over ``axis`` (mean 0, variance 1), then scale
    by ``gamma`` and shift by ``beta`` (shaped like the normalised axes).

    Args:
        axis: an int or a list of ints (default -1, the features).
        epsilon: added to the variance (Keras default 1e-3).
        center: learn ``beta``; scale: learn ``gamma``.
        beta_initializer, gamma_initializer: Keras defaults zeros, ones.
        beta_regularizer, gamma_regularizer, beta_constraint,
        gamma_constraint: optional.
        **kwargs: base Layer arguments.
    """

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            if not axis or not all(isinstance(a, (int, numpy.integer)) and not isinstance(a, bool) for a in axis):
                raise TypeError(f"LayerNormalization: axis must be an int or a list of ints, received {axis!r}.")
            self.axis = [int(a) for a in axis]
        elif isinstance(axis, (int, numpy.integer)) and not isinstance(axis, bool):
            self.axis = int(axis)
        else:
            raise TypeError(f"LayerNormalization: axis must be an int or a list of ints, received {axis!r}.")
        self.epsilon = _check_epsilon("LayerNormalization", epsilon)
        set_scale_shift_arguments(self, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                                  gamma_regularizer, beta_constraint, gamma_constraint)

    def build(self, input_shape):
        ndim = len(input_shape)
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -ndim <= a < ndim or a % ndim == 0:
                raise ValueError(
                    f"Layer '{self.name}': axis {a} cannot be normalised for inputs of shape {tuple(input_shape)} "
                    "(out of range, or the batch axis)."
                )
        axes = sorted({a % ndim for a in axes})
        if len(axes) != len(self.axis if isinstance(self.axis, list) else [self.axis]):
            raise ValueError(f"Layer '{self.name}': repeated axis in axis={self.axis}.")
        if any(input_shape[a] is None or input_shape[a] == 0 for a in axes):
            raise ValueError(
                f"Layer '{self.name}': the normalised axes {axes} must have known, non-zero sizes; "
                f"received input shape {tuple(input_shape)}."
            )
        shape = tuple(input_shape[a] for a in axes)
        add_scale_shift_weights(self, shape)
        self._axes = tuple(axes)
        self.input_spec = InputSpec(ndim=ndim, axes={a: input_shape[a] for a in axes})
        self.built = True

    def call(self, inputs):
        if not is_float_dtype(inputs.dtype):
            raise TypeError(f"Layer '{self.name}' expects floating-point inputs, received dtype {inputs.dtype}.")
        outputs = ops.layer_norm(in_statistics_dtype(inputs), self.gamma, self.beta, self._axes, self.epsilon)
        return in_compute_dtype(self, outputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "epsilon": self.epsilon,
            **scale_shift_config(self),
        }
