"""Regularization layers: Dropout, SpatialDropout1D/2D/3D, GaussianNoise,
GaussianDropout, ActivityRegularization.

The noise layers act only when called with ``training=True`` (``fit`` does
so); otherwise they return their input unchanged. Their randomness comes
from ``minikeras.random``'s generator of the device the op runs on, or,
with ``seed=n``, from the layer's own generator seeded with ``n`` (one per
device), which advances on every call: the masks differ from step to step
but repeat from run to run. Inside a step captured as a CUDA graph
(``compile(jit_compile=True)`` on a GPU) the same generator's counter
stream draws instead, on the device (``kernels/captured_random.py``).
"""
import numbers

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras import ops, random, regularizers
from minikeras.device import current_scope_device
from minikeras.kernels import captured_random
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec

__all__ = ["Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise",
           "GaussianDropout", "ActivityRegularization"]


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


class Dropout(_RandomLayer):
    """Randomly zero a fraction ``rate`` of the inputs during training,
    scaling the others by ``1 / (1 - rate)`` (inverted dropout).

    Args:
        rate: the fraction of inputs to drop, in [0, 1].
        noise_shape: the shape of the mask, broadcast over the input;
            e.g. ``(batch, 1, features)`` drops the same features at every
            timestep. ``None`` entries take the input's size.
        seed: optional int for reproducible masks (see module docstring).
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate = _check_rate("Dropout", rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)

    def _noise_shape(self, inputs):
        return self.noise_shape

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return inputs * 0.0
        generator = self._generator(self._device_of(inputs))
        return ops.dropout(inputs, self.rate, noise_shape=self._noise_shape(inputs), generator=generator)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        noise_shape = None if self.noise_shape is None else list(self.noise_shape)
        return {**super().get_config(), "rate": self.rate, "noise_shape": noise_shape, "seed": self.seed}


class _SpatialDropout(Dropout):
    """Dropout of whole feature maps: one draw per (sample, channel)."""

    _rank = 2

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)
        data_format = data_format or "channels_last"
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(
                f"{type(self).__name__}: data_format must be 'channels_last' or 'channels_first', "
                f"received {data_format!r}."
            )
        self.data_format = data_format
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _noise_shape(self, inputs):
        shape = inputs.shape
        if self.data_format == "channels_last":
            return (shape[0],) + (1,) * self._rank + (shape[-1],)
        return (shape[0], shape[1]) + (1,) * self._rank

    def get_config(self):
        config = super().get_config()
        config.pop("noise_shape")
        return {**config, "data_format": self.data_format}


class SpatialDropout1D(_SpatialDropout):
    """Drop whole channels of ``(batch, steps, channels)`` inputs (mask
    shape ``(batch, 1, channels)``).

    Args:
        rate: the fraction of channels to drop.
        seed: optional int for reproducible masks.
        **kwargs: base Layer arguments.
    """

    _rank = 1

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, data_format="channels_last", seed=seed, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.pop("data_format")
        return config


class SpatialDropout2D(_SpatialDropout):
    """Drop whole feature maps of images: mask shape ``(batch, 1, 1, channels)``
    (channels_last) or ``(batch, channels, 1, 1)`` (channels_first).

    Args:
        rate: the fraction of channels to drop.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible masks.
        **kwargs: base Layer arguments.
    """

    _rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Drop whole feature volumes: mask ``(batch, 1, 1, 1, channels)``.

    Args:
        rate: the fraction of channels to drop.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible masks.
        **kwargs: base Layer arguments.
    """

    _rank = 3


class GaussianNoise(_RandomLayer):
    """Add zero-mean Gaussian noise of standard deviation ``stddev`` during
    training.

    Args:
        stddev: the noise's standard deviation (>= 0).
        seed: optional int for reproducible noise.
        **kwargs: base Layer arguments.
    """

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if isinstance(stddev, bool) or not isinstance(stddev, numbers.Real) or not 0 <= stddev < float("inf"):
            raise ValueError(f"GaussianNoise: stddev must be a finite number >= 0, received stddev={stddev!r}.")
        self.stddev = float(stddev)

    def call(self, inputs, training=None):
        if not training or self.stddev == 0:
            return inputs
        noise = self._standard_normal(inputs)
        with self._device_of(inputs).activate():
            noise *= self.stddev
        return inputs + noise

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "stddev": self.stddev, "seed": self.seed}


class GaussianDropout(_RandomLayer):
    """Multiply the inputs by Gaussian noise of mean 1 and standard
    deviation ``sqrt(rate / (1 - rate))`` during training.

    Args:
        rate: the equivalent dropout rate, in [0, 1).
        seed: optional int for reproducible noise.
        **kwargs: base Layer arguments.
    """

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate = _check_rate("GaussianDropout", rate, upper_inclusive=False)

    def call(self, inputs, training=None):
        if not training or self.rate == 0:
            return inputs
        noise = self._standard_normal(inputs)
        with self._device_of(inputs).activate():
            noise *= (self.rate / (1.0 - self.rate)) ** 0.5
            noise += 1.0
        return inputs * noise

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class ActivityRegularization(Layer):
    """Pass the input through and add ``l1 * sum(|x|) + l2 * sum(x**2)``,
    divided by the batch size (as Keras 3), to the layer's losses.

    Args:
        l1, l2: the penalty factors (default 0.0).
        **kwargs: base Layer arguments.
    """

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(**kwargs)
        self.l1, self.l2 = float(l1), float(l2)
        self._penalty = regularizers.L1L2(l1=self.l1, l2=self.l2)

    def call(self, inputs):
        loss = self._penalty(inputs)
        if inputs.ndim > 0 and inputs.shape[0] > 0:
            loss = loss * (1.0 / inputs.shape[0])
        self.add_loss(loss)
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}
