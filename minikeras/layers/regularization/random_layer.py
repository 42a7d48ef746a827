"""The base of the layers that draw random numbers in training (dropout,
noise), and their argument checks.
"""
import numbers

import numpy

from minikeras import random
from minikeras.backend.dtypes import is_float_dtype
from minikeras.device import current_scope_device
from minikeras.kernels import captured_random
from minikeras.layers.base import Layer


def _check_rate(layer_name, rate, upper_inclusive=True):
    valid = isinstance(rate, numbers.Real) and not isinstance(rate, bool)
    if valid:
        valid = 0 <= rate <= 1 if upper_inclusive else 0 <= rate < 1
    if not valid:
        bound = "[0, 1]" if upper_inclusive else "[0, 1)"
        raise ValueError(f"{layer_name}: rate must be a number in {bound}, received rate={rate!r}.")
    return float(rate)


def _check_seed(layer_name, seed):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, numpy.integer)) or seed < 0):
        raise ValueError(f"{layer_name}: seed must be None or a non-negative int, received seed={seed!r}.")
    return None if seed is None else int(seed)


class _RandomLayer(Layer):
    """A layer drawing noise: gives the generator for the op's device."""

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = _check_seed(type(self).__name__, seed)
        self._generators = {}

    def _device_of(self, inputs):
        # Where the op will run: the scope's device, else the input's.
        return current_scope_device() or inputs.device

    def _generator(self, device):
        """The layer's seeded generator on ``device``, or None (library's)."""
        if self.seed is None:
            return None
        generator = self._generators.get(device)
        if generator is None:
            generator = device.new_rng(self.seed)
            self._generators[device] = generator
        return generator

    def _standard_normal(self, inputs):
        """Standard normal noise shaped like ``inputs``, on its device."""
        if not is_float_dtype(inputs.dtype):  # noise in an int or bool tensor cannot be stored
            raise TypeError(f"Layer '{self.name}' ({type(self).__name__}) expects floating-point inputs, "
                            f"received dtype {inputs.dtype}.")
        device = self._device_of(inputs)
        generator = self._generator(device) or random.generator(device)
        dtype = inputs.dtype if inputs.dtype in (numpy.float32, numpy.float64) else numpy.float32
        with device.activate():
            noise = captured_random.draw(generator, device, "standard_normal", inputs.shape, dtype)
            return noise.astype(inputs.dtype, copy=False)
