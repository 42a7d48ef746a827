"""Spatial augmentation as Keras 3: RandomCrop, RandomShear and
RandomGaussianBlur (the transformation protocol and training switch are in
``base_image_augmentation.py``).
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation, checked_value_range, keras_factor,
                                                       on_device)
from minikeras.ops.nn.affine_transform import FILL_MODES, INTERPOLATIONS
from minikeras.utils.argument_validation import validate_int

__all__ = ["RandomCrop", "RandomShear", "RandomGaussianBlur"]


class RandomCrop(ImageAugmentation):
    """Crop a random ``height x width`` window (the same for the whole
    batch, as Keras) in training; return the images unchanged otherwise
    (Keras 3.15 does so too, though its ``compute_output_shape`` gives the
    crop's size, which minikeras also reports).

    An image not larger than the target on both axes is centre-cropped
    (Keras's aspect-ratio rule) and resized (bilinear) to the target.

    Args:
        height, width: the output size.
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, name=name, **kwargs)
        self.height = validate_int("RandomCrop", "height", height, minimum=1)
        self.width = validate_int("RandomCrop", "width", width, minimum=1)

    def _draw(self, rng, shape):
        _, in_height, in_width, _ = shape
        if in_height > self.height and in_width > self.width:
            top = int(rng.uniform(0, in_height - self.height + 1))
            left = int(rng.uniform(0, in_width - self.width + 1))
            return min(top, in_height - self.height), min(left, in_width - self.width)
        crop_height = max(min(in_height, int(float(in_width * self.height) / self.width)), 1)
        crop_width = max(min(in_width, int(float(in_height * self.width) / self.height)), 1)
        return int(float(in_height - crop_height) / 2), int(float(in_width - crop_width) / 2)

    def _transform(self, images, transformation):
        top, left = (int(numpy.asarray(value)) for value in transformation)
        window = images[:, top:top + self.height, left:left + self.width, :]
        if window.shape[1:3] != (self.height, self.width):
            window = ops.image.resize(window, (self.height, self.width), interpolation="bilinear")
        return window

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        height_axis, width_axis = (-2, -1) if self.data_format == "channels_first" else (-3, -2)
        shape[height_axis], shape[width_axis] = self.height, self.width
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}


class RandomShear(ImageAugmentation):
    """Shear each image along x and y by random amounts (the sign drawn per
    image), through ``ops.affine_transform``.

    Args:
        x_factor, y_factor: a number ``f`` in [0, 1] means shears in
            ``(-f, f)``; a pair ``(low, high)`` in [0, 1] sets the range
            (default 0: no shear on that axis).
        interpolation: "bilinear" (default) or "nearest".
        fill_mode: "reflect" (default), "wrap", "constant" or "nearest".
        fill_value: the value outside the image with ``fill_mode="constant"``.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                 data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.x_factor = self._shear_range("x_factor", x_factor)
        self.y_factor = self._shear_range("y_factor", y_factor)
        if fill_mode not in FILL_MODES:  # Keras raises NotImplementedError for these two
            raise NotImplementedError(f"RandomShear: unknown `fill_mode` {fill_mode!r}. Expected one of "
                                      f"{FILL_MODES}.")
        if interpolation not in INTERPOLATIONS:
            raise NotImplementedError(f"RandomShear: unknown `interpolation` {interpolation!r}. Expected one of "
                                      f"{INTERPOLATIONS}.")
        self.fill_mode, self.fill_value, self.interpolation = fill_mode, fill_value, interpolation

    @staticmethod
    def _shear_range(argument, factor):
        """A number ``f`` in [0, 1] gives ``(-f, f)``. A pair may reach down
        to -1: Keras stores ``(-f, f)`` in its config but refuses it when the
        config is loaded, so minikeras accepts it to keep saved models loading."""
        pair = isinstance(factor, (tuple, list))
        values = factor if pair else [factor]
        low = -1.0 if pair else 0.0
        if len(values) not in (1, 2) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= 1.0 for v in values):
            raise ValueError(f"RandomShear: the `{argument}` argument should be a number (or a list of two numbers) "
                             f"in the range [0, 1.0]. Received: {argument}={factor}")
        if isinstance(factor, (tuple, list)):
            return tuple(sorted(factor))
        return (-abs(factor), abs(factor))

    def _draw(self, rng, shape):
        batch = shape[0]
        sign = numpy.where(rng.uniform(size=(batch, 1)) > 0.5, -1.0, 1.0)
        shear_y = rng.uniform(self.y_factor[0], self.y_factor[1], size=(batch, 1))
        shear_x = rng.uniform(self.x_factor[0], self.x_factor[1], size=(batch, 1))
        return {"shear_factor": (numpy.concatenate([shear_x, shear_y], axis=1) * sign).astype("float32"),
                "input_shape": shape}

    def _transform(self, images, transformation):
        shear = numpy.asarray(transformation["shear_factor"], "float64")
        ones, zeros = numpy.ones(len(shear)), numpy.zeros(len(shear))
        matrix = numpy.stack([ones, shear[:, 0], zeros, shear[:, 1], ones, zeros, zeros, zeros], axis=1)
        return ops.affine_transform(images, matrix, interpolation=self.interpolation, fill_mode=self.fill_mode,
                                    fill_value=self.fill_value)

    def get_config(self):
        return {**super().get_config(), "x_factor": self.x_factor, "y_factor": self.y_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "fill_value": self.fill_value}


class RandomGaussianBlur(ImageAugmentation):
    """Blur each image with probability drawn from ``factor``; one Gaussian
    (standard deviations drawn from ``sigma``) serves the whole batch, as Keras.

    Args:
        factor: the blur probability's range, a number ``p`` in [0, 1]
            meaning ``(0, p)`` (default 1.0).
        kernel_size: an odd int or a pair of odd ints (default 3).
        sigma: the standard deviations' range, a number ``s`` in [0, 1]
            meaning ``(0, s)`` (default 1.0).
        value_range: the images' ``(low, high)``; the result is clipped to it.
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255), data_format=None, seed=None,
                 **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = keras_factor("RandomGaussianBlur", factor, (0, 1))
        sizes = kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size, kernel_size)
        if len(sizes) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 and s % 2
                                      for s in sizes):
            raise ValueError(f"RandomGaussianBlur: kernel_size must be an odd number or two odd numbers. Received: "
                             f"kernel_size={kernel_size}")
        self.kernel_size = tuple(sizes)
        self.sigma = keras_factor("RandomGaussianBlur", sigma, (0, 1), argument="sigma")
        self.value_range = checked_value_range("RandomGaussianBlur", value_range)

    def _draw(self, rng, shape):
        probability = rng.uniform(self.factor[0], self.factor[1], size=shape[0])
        apply = rng.uniform(size=shape[0]) < probability
        sigma = (rng.uniform(self.sigma[0], self.sigma[1], size=2) + 1e-6).astype("float32")
        return {"should_apply_blur": apply, "blur_factor": sigma}

    def _transform(self, images, transformation):
        sigma = tuple(float(s) for s in numpy.asarray(transformation["blur_factor"]))
        blurred = ops.image.gaussian_blur(images, kernel_size=self.kernel_size, sigma=sigma)
        apply = on_device(images, transformation["should_apply_blur"], bool, (-1, 1, 1, 1))
        return ops.clip(ops.where(apply, blurred, images), float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "kernel_size": self.kernel_size, "sigma": self.sigma,
                "value_range": self.value_range}
