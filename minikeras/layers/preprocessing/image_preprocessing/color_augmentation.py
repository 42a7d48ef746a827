"""Colour preprocessing and augmentation: RandomGrayscale, RandomInvert,
Solarization, RandomPosterization, RandomBrightness (active only with ``training=True``, one
draw per image) and AutoContrast (deterministic, always applied, as Keras's).

The pixel arithmetic of Solarization and RandomPosterization is on the
0-255 scale (images in another ``value_range`` are mapped there and back),
as Keras does it.
"""
import numbers

import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import per_image
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation, _factor_range
from minikeras.layers.preprocessing.image_preprocessing.image_layout import _as_channels_last_batch

__all__ = ["RandomGrayscale", "RandomInvert", "AutoContrast", "Solarization", "RandomPosterization",
           "RandomBrightness"]

# ITU-R 601 luma, as tf.image.rgb_to_grayscale and Keras use.
_LUMA = (0.2989, 0.5870, 0.1140)


def _per_image(images, flags):
    """A (batch, 1, 1, 1) boolean Tensor on the images' device."""
    return Tensor(numpy.asarray(flags, bool).reshape(-1, 1, 1, 1), device=images.device)


def _value_range(layer_name, value_range):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2 or not all(
            isinstance(v, numbers.Real) for v in value_range):
        raise ValueError(f"The `value_range` argument should be a list of two numbers. Received: "
                         f"value_range={value_range} ({layer_name})")
    return value_range


class RandomGrayscale(_Augmentation):
    """Turn each image to grayscale (kept as 3 equal channels) with probability ``factor``.

    Args:
        factor: the probability, in [0, 1] (default 0.5).
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor

    def _augment(self, images, rng):
        if images.shape[-1] == 1:
            return images
        weights = Tensor(numpy.asarray(_LUMA, dtype=images.dtype), device=images.device)
        gray = ops.sum(images * weights, axis=-1, keepdims=True)
        return ops.where(_per_image(images, rng.uniform(size=images.shape[0]) < self.factor), gray, images)

    def get_config(self):
        config = super().get_config()
        config.pop("seed", None)  # not in Keras's config
        return {**config, "factor": self.factor}


class RandomInvert(_Augmentation):
    """Invert each image (``value_range[1] - x``) with a probability drawn
    from ``factor`` per image.

    Args:
        factor: a probability ``p`` (range ``(0, p)``) or a ``(low, high)``
            range in [0, 1] the probability is drawn from (default 1.0).
        value_range: the images' ``(low, high)`` (default (0, 255)).
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(factor, (tuple, list)):
            factor = (factor[0], factor[1])
        else:
            factor = (0, factor)
        if not 0 <= factor[0] <= factor[1] <= 1:
            raise ValueError(f"RandomInvert: factor must lie in [0, 1], received {factor}.")
        self.factor = factor
        self.value_range = _value_range("RandomInvert", value_range)

    def _augment(self, images, rng):
        batch = images.shape[0]
        probability = rng.uniform(self.factor[0], self.factor[1], size=batch)
        invert = rng.uniform(size=batch) < probability
        return ops.where(_per_image(images, invert), self.value_range[1] - images, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class AutoContrast(_Augmentation):
    """Stretch each image's channels to the full ``value_range``: per image
    and channel, ``(x - min) * 255 / (max - min)`` on the 0-255 scale (a
    constant channel is left unchanged). Applied in training and inference.

    Args:
        value_range: the images' ``(low, high)`` (default (0, 255)).
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, value_range=(0, 255), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = sorted(_value_range("AutoContrast", value_range))

    def call(self, inputs, training=None):
        inputs = ops.cast(inputs, self.dtype) if inputs.dtype != self.dtype else inputs
        images, restore = _as_channels_last_batch(self, inputs, self.data_format)
        return restore(self._augment(images, None))

    def _augment(self, images, rng):
        low_value, high_value = self.value_range
        scaled = (images - low_value) * (255.0 / (high_value - low_value))
        low = ops.min(scaled, axis=(1, 2), keepdims=True)
        high = ops.max(scaled, axis=(1, 2), keepdims=True)
        spread = high - low
        flat = ops.equal(spread, 0.0)  # Keras gets NaN there and keeps the original
        stretched = ops.clip((scaled - low) * (255.0 / ops.where(flat, 1.0, spread)), 0.0, 255.0)
        result = stretched * ((high_value - low_value) / 255.0) + low_value
        return ops.where(flat, images, result)

    def get_config(self):
        config = super().get_config()
        config.pop("seed", None)
        return {**config, "value_range": self.value_range}


def _to_255(images, value_range):
    low, high = value_range
    return images if (low, high) == (0, 255) else (images - low) * (255.0 / (high - low))


def _from_255(images, value_range):
    low, high = value_range
    return images if (low, high) == (0, 255) else images * ((high - low) / 255.0) + low


def _unit_pair(layer_name, argument, factor):
    """Keras's factor rule: a number ``f`` means ``(0, f)``; both ends in [0, 1]."""
    pair = tuple(sorted(factor)) if isinstance(factor, (tuple, list)) and len(factor) == 2 else (
        (0, factor) if isinstance(factor, numbers.Real) and not isinstance(factor, bool) else None)
    if pair is None or not all(0 <= value <= 1 for value in pair):
        raise ValueError(f"The `addition_factor` and `threshold_factor` arguments should be a number (or a list of two "
                         f"numbers) in the range [0, 1]. Received: {argument}={factor} ({layer_name})")
    return pair


class Solarization(_Augmentation):
    """Add a random amount to each image, then invert the pixels at or above
    a random threshold (``255 - x`` on the 0-255 scale).

    Args:
        addition_factor: the addition is drawn from ``(low, high * 255)``
            (a number ``f`` means ``(0, f)``; Keras scales only the upper end).
        threshold_factor: the threshold, drawn likewise (default 0: every
            pixel is inverted).
        value_range: the images' ``(low, high)`` (default (0, 255)).
        seed: optional int for reproducible draws.
    """

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.addition_factor = _unit_pair("Solarization", "addition_factor", addition_factor)
        self.threshold_factor = _unit_pair("Solarization", "threshold_factor", threshold_factor)
        self.value_range = sorted(_value_range("Solarization", value_range))

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """Keras's transformation (``additions``, ``thresholds``), as the policies replay it."""
        shape = (shape[0], 1, 1, 1)
        return {"additions": rng.uniform(self.addition_factor[0], self.addition_factor[1] * 255, size=shape),
                "thresholds": rng.uniform(self.threshold_factor[0], self.threshold_factor[1] * 255, size=shape)}

    def _transform(self, images, transformation):
        additions, thresholds = (per_image(images, transformation[key]) for key in ("additions", "thresholds"))
        shifted = ops.clip(_to_255(images, self.value_range) + additions, 0.0, 255.0)
        solarized = ops.where(ops.less(shifted, thresholds), shifted, 255.0 - shifted)
        return _from_255(solarized, self.value_range)

    def get_config(self):
        config = super().get_config()
        config.update({"value_range": self.value_range, "addition_factor": self.addition_factor,
                       "threshold_factor": self.threshold_factor})
        return config


class RandomPosterization(_Augmentation):
    """Keep only the top ``bits`` bits of every 0-255 pixel value, ``bits``
    drawn per image from ``factor``.

    Args:
        factor: bits in [1, 8]: a number ``n`` draws from ``[1, n)`` (as
            Keras's randint), a pair ``(low, high)`` from ``[low, high)``,
            equal ends use exactly that many bits.
        value_range: the images' ``(low, high)`` (default (0, 255)).
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        message = (f"The `factor` argument should be a number (or a list of two numbers) in the range [1, 8]. "
                   f"Received: factor={factor}")
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2 or factor[0] > 8 or factor[1] < 1:
                raise ValueError(message)
            factor = tuple(sorted(factor))
        elif isinstance(factor, numbers.Real) and not isinstance(factor, bool):
            if not 1 <= factor <= 8:
                raise ValueError(message)
            factor = (max(-abs(factor), 1), abs(factor))
        else:
            raise ValueError(message)
        self.factor = factor
        self.value_range = sorted(_value_range("RandomPosterization", value_range))

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """Keras's transformation (``shift_factor``: 8 - bits), as the policies replay it."""
        batch = shape[0]
        low, high = int(self.factor[0]), int(self.factor[1])
        bits = rng.integers(low, high, size=batch) if low != high else numpy.full(batch, low)
        return {"shift_factor": (8 - bits).astype(numpy.uint8)}

    def _transform(self, images, transformation):
        shift = numpy.asarray(transformation["shift_factor"]).reshape(-1, 1, 1, 1)
        device = images.device
        with device.activate():
            pixels = device.xp.clip(_to_255(images, self.value_range).data, 0, 255).astype(numpy.uint8)
            shift = device.asarray(shift.astype(numpy.uint8))
            kept = ((pixels >> shift) << shift).astype(images.dtype)
        return _from_255(Tensor(kept, device=device), self.value_range)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomBrightness(_Augmentation):
    """Add a random brightness offset per image: a fraction drawn from
    ``factor`` of the value range, then clip to ``value_range``.

    Args:
        factor: a number ``f`` in [-1, 1] (offsets in ``(-f, f)``) or a pair
            ``(low, high)``.
        value_range: the images' ``(low, high)`` (default (0, 255)).
        seed: optional int for reproducible draws.
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = _factor_range("RandomBrightness", "factor", factor)
        self.value_range = sorted(_value_range("RandomBrightness", value_range))

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """Keras's transformation (``rgb_delta``), as the policies replay it."""
        low, high = self.value_range
        return {"rgb_delta": rng.uniform(self.factor[0], self.factor[1], size=(shape[0], 1, 1, 1)) * (high - low)}

    def _transform(self, images, transformation):
        low, high = self.value_range
        return ops.clip(images + per_image(images, transformation["rgb_delta"]), low, high)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
