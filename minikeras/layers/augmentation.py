"""Image augmentation layers: RandomFlip, RandomRotation, RandomZoom,
RandomTranslation, RandomContrast.

They change their input only when called with ``training=True`` (``fit``
does so); in ``predict``/``evaluate`` they return it unchanged. The random
draws (one per image) come from the layer's own NumPy generator when a
``seed`` is given (so a run repeats exactly), else from
``minikeras.random.host_rng()`` (reset by ``minikeras.random.seed``).
Geometric layers warp through ``ops.affine_transform`` with Keras 3's
matrices, defaults (``fill_mode="reflect"``, bilinear) and factor rules;
a factor ``f`` means ``(-f, f)``, a pair means ``(lower, upper)``.
"""
import math
import numbers

import numpy

from minikeras import ops, random
from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.image_preprocessing import _as_channels_last_batch, _data_format
from minikeras.ops.nn.affine_transform import FILL_MODES, INTERPOLATIONS

__all__ = ["RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation", "RandomContrast"]


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


class RandomFlip(_Augmentation):
    """Flip each image with probability 1/2.

    Args:
        mode: "horizontal", "vertical" or "horizontal_and_vertical"
            (default; one draw per image flips both axes, as Keras).
        seed: optional int for reproducible flips.
        data_format: "channels_last" (default) or "channels_first".
    """

    _MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if mode not in self._MODES:
            raise ValueError(f"RandomFlip: mode must be one of {self._MODES}, received mode={mode!r}.")
        self.mode = mode

    def _augment(self, images, rng):
        flips = (rng.uniform(size=images.shape[0]) <= 0.5).reshape(-1, 1, 1, 1)
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            images = ops.where(flips, images[:, :, ::-1, :], images)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            images = ops.where(flips, images[:, ::-1, :, :], images)
        return images

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


class _Warp(_Augmentation):
    """Geometric augmentation: a transform per image, then affine_transform."""

    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        name = type(self).__name__
        if fill_mode not in FILL_MODES:
            raise ValueError(f"{name}: fill_mode must be one of {FILL_MODES}, received fill_mode={fill_mode!r}.")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"{name}: interpolation must be one of {INTERPOLATIONS}, "
                             f"received interpolation={interpolation!r}.")
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, float(fill_value)

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """The transformation of a batch of ``shape`` (channels last); the
        rotation and the translation give Keras's (RandAugment replays it)."""
        return {"transforms": self._transforms(rng, shape[0], shape[1], shape[2])}

    def _matrices(self, transformation):
        return transformation["transforms"]

    def _transform(self, images, transformation):
        matrices = numpy.asarray(self._matrices(transformation), "float64").reshape(-1, 8)
        return ops.affine_transform(images, matrices, interpolation=self.interpolation, fill_mode=self.fill_mode,
                                    fill_value=self.fill_value)

    def get_config(self):
        return {**super().get_config(), "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                "fill_value": self.fill_value}


class RandomRotation(_Warp):
    """Rotate each image about its centre by a random angle.

    Args:
        factor: a fraction of a full turn: ``0.1`` draws angles in
            ``[-36, 36]`` degrees; ``(lower, upper)`` sets both ends.
        fill_mode: "reflect" (default), "wrap", "nearest" or "constant".
        interpolation: "bilinear" (default) or "nearest".
        seed, fill_value, data_format: see the module docstring.
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0,
                 data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = _factor_range("RandomRotation", "factor", factor)

    def _draw(self, rng, shape):
        degrees = rng.uniform(self.factor[0] * 360.0, self.factor[1] * 360.0, size=shape[0])
        return {"angle": degrees, "rotation_matrix": self._rotations(degrees, shape[1], shape[2])}

    def _matrices(self, transformation):
        return transformation["rotation_matrix"]

    @staticmethod
    def _rotations(degrees, height, width):
        batch = len(degrees)
        angle = numpy.radians(degrees)
        cos, sin = numpy.cos(angle), numpy.sin(angle)
        center_x, center_y = (width - 1) / 2.0, (height - 1) / 2.0
        zeros = numpy.zeros(batch)
        return numpy.stack([cos, -sin, center_x - center_x * cos + center_y * sin,
                            sin, cos, center_y - center_x * sin - center_y * cos, zeros, zeros], axis=1)

    def get_config(self):
        return {**super().get_config(), "factor": list(self.factor)}


class RandomZoom(_Warp):
    """Zoom each image in or out about its centre.

    Args:
        height_factor: vertical zoom range as a fraction: the image is
            sampled with scale ``1 + u``, ``u`` drawn in the range, so
            positive values zoom out and negative ones zoom in (Keras).
        width_factor: the horizontal range; None keeps the aspect ratio
            (the vertical draw is reused).
        fill_mode, interpolation, seed, fill_value, data_format: as RandomRotation.
    """

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = height_factor
        self.width_factor = width_factor
        self._height_range = _factor_range("RandomZoom", "height_factor", height_factor, low_inclusive=False)
        self._width_range = None if width_factor is None else \
            _factor_range("RandomZoom", "width_factor", width_factor, low_inclusive=False)

    def _transforms(self, rng, batch, height, width):
        height_zoom = rng.uniform(1.0 + self._height_range[0], 1.0 + self._height_range[1], size=batch)
        width_zoom = height_zoom if self._width_range is None else \
            rng.uniform(1.0 + self._width_range[0], 1.0 + self._width_range[1], size=batch)
        zeros = numpy.zeros(batch)
        return numpy.stack([width_zoom, zeros, (width - 1) / 2.0 * (1.0 - width_zoom),
                            zeros, height_zoom, (height - 1) / 2.0 * (1.0 - height_zoom), zeros, zeros], axis=1)

    def get_config(self):
        return {**super().get_config(), "height_factor": _listed(self.height_factor),
                "width_factor": _listed(self.width_factor)}


class RandomTranslation(_Warp):
    """Shift each image by a random fraction of its size.

    Args:
        height_factor: vertical shift range as a fraction of the height
            (positive moves the content down).
        width_factor: horizontal shift range as a fraction of the width.
        fill_mode, interpolation, seed, fill_value, data_format: as RandomRotation.
    """

    def __init__(self, height_factor, width_factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height_range = _factor_range("RandomTranslation", "height_factor", height_factor)
        self._width_range = _factor_range("RandomTranslation", "width_factor", width_factor)

    def _draw(self, rng, shape):
        batch, height, width, _ = shape
        shift_y = rng.uniform(*self._height_range, size=batch) * height
        shift_x = rng.uniform(*self._width_range, size=batch) * width
        return {"translations": numpy.stack([shift_x, shift_y], axis=1), "input_shape": tuple(shape)}

    def _matrices(self, transformation):
        translations = numpy.asarray(transformation["translations"], "float64").reshape(-1, 2)
        ones, zeros = numpy.ones(len(translations)), numpy.zeros(len(translations))
        return numpy.stack([ones, zeros, -translations[:, 0], zeros, ones, -translations[:, 1], zeros, zeros], axis=1)

    def get_config(self):
        return {**super().get_config(), "height_factor": _listed(self.height_factor),
                "width_factor": _listed(self.width_factor)}


class RandomContrast(_Augmentation):
    """Scale each image's deviation from its per-channel mean by a random
    factor, then clip to ``value_range``.

    Args:
        factor: ``f`` draws the contrast factor in ``[1 - f, 1 + f]``;
            ``(lower, upper)`` draws it in ``[1 - lower, 1 + upper]``, as
            Keras documents (Keras 3.15 itself draws ``[1, 1 + f]`` for a
            single number; minikeras follows the documentation).
        value_range: the pixel range to clip to, ``(0, 255)`` by default.
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, factor, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(factor, (list, tuple)):
            self.factor = _factor_range("RandomContrast", "factor", factor, low=0.0)
        else:
            self.factor = (_factor_range("RandomContrast", "factor", factor, low=0.0)[1],) * 2
        if not isinstance(value_range, (list, tuple)) or len(value_range) != 2 or value_range[0] >= value_range[1]:
            raise ValueError(f"RandomContrast: value_range must be (low, high) with low < high, received "
                             f"value_range={value_range!r}.")
        self.value_range = tuple(float(v) for v in value_range)

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """Keras's transformation (``contrast_factor``), as the policies replay it."""
        contrast = rng.uniform(1.0 - self.factor[0], 1.0 + self.factor[1], size=shape[0])
        return {"contrast_factor": contrast.reshape(-1, 1, 1, 1)}

    def _transform(self, images, transformation):
        contrast = Tensor(numpy.asarray(transformation["contrast_factor"]).reshape(-1, 1, 1, 1).astype(images.dtype),
                          device=images.device)
        mean = ops.mean(images, axis=(1, 2), keepdims=True)
        return ops.clip((images - mean) * contrast + mean, self.value_range[0], self.value_range[1])

    def get_config(self):
        return {**super().get_config(), "factor": list(self.factor), "value_range": list(self.value_range)}


def _listed(value):
    return list(value) if isinstance(value, tuple) else value
