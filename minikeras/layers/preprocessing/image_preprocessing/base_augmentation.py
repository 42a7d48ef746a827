"""The base of the random image layers: a seed, training-only application,
channels-last batches; Keras's factor checks.
"""
import numbers

import numpy

from minikeras import ops, random
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.image_preprocessing.image_layout import _as_channels_last_batch, _data_format


def _factor_range(layer_name, argument, factor, low=-1.0, high=1.0, low_inclusive=True):
    """``factor`` as ``(lower, upper)``: a number ``f`` gives ``(-|f|, |f|)``."""
    def valid(value):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        return (low <= value if low_inclusive else low < value) and value <= high

    pair = list(factor) if isinstance(factor, (list, tuple)) else None
    if (pair is not None and (len(pair) != 2 or not all(valid(v) for v in pair))) or \
            (pair is None and not valid(factor)):
        raise ValueError(f"{layer_name}: {argument} must be a number or a pair of numbers in "
                         f"{'[' if low_inclusive else '('}{low}, {high}], received {argument}={factor!r}.")
    if pair is not None:
        return tuple(sorted(float(v) for v in pair))
    return (-abs(float(factor)), abs(float(factor)))


class _Augmentation(Layer):
    """Shared by the augmentation layers: seeding, training switch, layout."""

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, numpy.integer)) or seed < 0):
            raise ValueError(f"{type(self).__name__}: seed must be None or a non-negative int, received {seed!r}.")
        self.seed = None if seed is None else int(seed)
        self.data_format = _data_format(type(self).__name__, data_format)
        self._rng = None if seed is None else numpy.random.default_rng(self.seed)

    def _generator(self):
        return self._rng if self._rng is not None else random.host_rng()

    def call(self, inputs, training=None):
        compute = self.compute_dtype
        inputs = ops.cast(inputs, compute) if inputs.dtype != compute else inputs
        if not training:
            return inputs
        images, restore = _as_channels_last_batch(self, inputs, self.data_format)
        return restore(self._augment(images, self._generator()))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "seed": self.seed, "data_format": self.data_format}


def _listed(value):
    return list(value) if isinstance(value, tuple) else value
