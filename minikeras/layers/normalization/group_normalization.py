"""GroupNormalization (Wu & He, 2018): normalise each sample over groups of
channels, independent of the batch (LayerNormalization is ``groups=1``,
InstanceNormalization ``groups=-1``)."""
import numpy

from minikeras import ops
from minikeras.backend.dtypes import is_float_dtype
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.normalization.scale_shift import (add_scale_shift_weights, in_compute_dtype, in_statistics_dtype,
                                                        scale_shift_config, set_scale_shift_arguments)

__all__ = ["GroupNormalization"]


class GroupNormalization(Layer):
    """Standardise each sample per group of channels, then scale and shift.

    Args:
        groups: number of channel groups (default 32; -1 for one group per
            channel); must divide the channels.
        axis: the channel axis (default -1).
        epsilon: added to the variance (default 1e-3).
        center, scale: learn ``beta`` / ``gamma`` (channels,) (default True).
        beta_initializer, gamma_initializer, beta_regularizer,
            gamma_regularizer, beta_constraint, gamma_constraint: as Keras.
        **kwargs: base Layer arguments.

    Weights, as Keras: gamma, then beta.
    """

    supports_masking = True

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, **kwargs):
        if isinstance(groups, bool) or not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError(f"GroupNormalization: groups must be a positive int or -1 (instance normalization), "
                             f"received groups={groups!r}.")
        if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
            raise TypeError(f"GroupNormalization: axis must be an int, received axis={axis!r}.")
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon = groups, int(axis), float(epsilon)
        set_scale_shift_arguments(self, center, scale, beta_initializer, gamma_initializer, beta_regularizer,
                                  gamma_regularizer, beta_constraint, gamma_constraint)

    def build(self, input_shape):
        rank = len(input_shape)
        if not -rank < self.axis < rank or self.axis % rank == 0:
            raise ValueError(f"Layer '{self.name}' (GroupNormalization): axis {self.axis} is not a channel axis of "
                             f"inputs of shape {tuple(input_shape)}.")
        channels = input_shape[self.axis]
        if channels is None:
            raise ValueError(f"Layer '{self.name}' (GroupNormalization): axis {self.axis} must have a known size, "
                             f"received input shape {tuple(input_shape)}.")
        if self.groups == -1:
            self.groups = channels
        if channels < self.groups or channels % self.groups:
            raise ValueError(f"Layer '{self.name}' (GroupNormalization): groups={self.groups} must divide the "
                             f"{channels} channels.")
        self.input_spec = InputSpec(ndim=rank, axes={self.axis: channels})
        add_scale_shift_weights(self, (channels,))
        self._broadcast = [1] * rank
        self._broadcast[self.axis] = channels
        self.built = True

    def call(self, inputs):
        if not is_float_dtype(inputs.dtype):
            inputs = ops.cast(inputs, self.compute_dtype)
        outputs = ops.group_normalize(in_statistics_dtype(inputs), self.groups, axis=self.axis, epsilon=self.epsilon)
        if self.gamma is not None:
            outputs = outputs * ops.reshape(self.gamma, self._broadcast)
        if self.beta is not None:
            outputs = outputs + ops.reshape(self.beta, self._broadcast)
        return in_compute_dtype(self, outputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(), "groups": self.groups, "axis": self.axis, "epsilon": self.epsilon,
            **scale_shift_config(self),
        }
