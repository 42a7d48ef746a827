"""Image preprocessing layers: Rescaling, Resizing, CenterCrop.

They run the same in training and inference, so models can take raw
images (``Rescaling(1 / 255)`` first). Images are ``(batch, height, width,
channels)`` (or one ``(height, width, channels)`` image); with
``data_format="channels_first"`` the channel axis comes before height.
"""
import numbers

import numpy

from minikeras import ops
from minikeras.layers.base import Layer
from minikeras._support.argument_validation import validate_int

__all__ = ["Rescaling", "Resizing", "CenterCrop"]


def _data_format(layer_name, data_format):
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"{layer_name}: data_format must be 'channels_last' or 'channels_first', "
                         f"received {data_format!r}.")
    return data_format


def _as_channels_last_batch(layer, images, data_format):
    """(batch, height, width, channels) view of ``images`` and a function
    putting a result back in the caller's layout."""
    if images.ndim not in (3, 4):
        raise ValueError(f"Layer '{layer.name}' ({type(layer).__name__}) expects images of rank 3 or 4, received "
                         f"shape {tuple(images.shape)}.")
    single = images.ndim == 3
    if single:
        images = ops.expand_dims(images, 0)
    if data_format == "channels_first":
        images = ops.transpose(images, (0, 2, 3, 1))

    def restore(result):
        if data_format == "channels_first":
            result = ops.transpose(result, (0, 3, 1, 2))
        return ops.squeeze(result, 0) if single else result

    return images, restore


def _aspect_crop(images, height, width):
    """The central crop of ``images`` with the target's aspect ratio (as
    ``crop_to_aspect_ratio`` and ``smart_resize`` choose it)."""
    in_height, in_width = images.shape[1], images.shape[2]
    crop_height = max(min(in_height, int(in_width * height / width)), 1)
    crop_width = max(min(in_width, int(in_height * width / height)), 1)
    top, left = (in_height - crop_height) // 2, (in_width - crop_width) // 2
    return images[:, top:top + crop_height, left:left + crop_width, :]


class Rescaling(Layer):
    """``inputs * scale + offset``, e.g. ``Rescaling(1 / 255)`` for [0, 1]
    pixels or ``Rescaling(1 / 127.5, offset=-1)`` for [-1, 1].

    Args:
        scale: a number, or one per channel.
        offset: a number, or one per channel (default 0).
        **kwargs: base Layer arguments.
    """

    supports_masking = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = self._check("scale", scale)
        self.offset = self._check("offset", offset)

    @staticmethod
    def _check(argument, value):
        values = value if isinstance(value, (list, tuple)) else [value]
        if not values or any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in values):
            raise TypeError(f"Rescaling: {argument} must be a number or a list of numbers, "
                            f"received {argument}={value!r}.")
        return [float(v) for v in value] if isinstance(value, (list, tuple)) else float(value)

    def call(self, inputs):
        inputs = ops.cast(inputs, self.compute_dtype) if inputs.dtype != self.compute_dtype else inputs
        scale = numpy.asarray(self.scale, dtype=inputs.dtype)
        offset = numpy.asarray(self.offset, dtype=inputs.dtype)
        return inputs * scale + offset

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Resizing(Layer):
    """Resize images to ``(height, width)``.

    Args:
        height, width: the output size.
        interpolation: "bilinear" (default) or "nearest" (half-pixel
            centres, as ``tf.image.resize``).
        crop_to_aspect_ratio: first crop the largest central window with
            the target aspect ratio, so the image is not distorted.
        pad_to_aspect_ratio, fill_mode, fill_value, antialias: accepted for
            Keras compatibility; padding and antialiasing are not
            implemented (True raises ValueError).
        data_format: "channels_last" (default) or "channels_first".
        **kwargs: base Layer arguments.
    """

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, antialias=False, data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.height = validate_int("Resizing", "height", height, minimum=1)
        self.width = validate_int("Resizing", "width", width, minimum=1)
        if interpolation not in ("bilinear", "nearest"):
            raise ValueError(f"Resizing: interpolation must be 'bilinear' or 'nearest' (the others are not "
                             f"implemented), received {interpolation!r}.")
        if pad_to_aspect_ratio or antialias:
            raise ValueError("Resizing: pad_to_aspect_ratio=True and antialias=True are not implemented in minikeras.")
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = False
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.antialias = False
        self.data_format = _data_format("Resizing", data_format)

    def call(self, inputs):
        inputs = ops.cast(inputs, self.compute_dtype) if inputs.dtype != self.compute_dtype else inputs
        images, restore = _as_channels_last_batch(self, inputs, self.data_format)
        if self.crop_to_aspect_ratio:
            images = _aspect_crop(images, self.height, self.width)
        return restore(ops.resize(images, (self.height, self.width), interpolation=self.interpolation))

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        first = len(shape) - 3 if self.data_format == "channels_last" else len(shape) - 2
        shape[first:first + 2] = [self.height, self.width]
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias, "data_format": self.data_format}


class CenterCrop(Layer):
    """Crop the central ``(height, width)`` window of each image; an image
    smaller than that is first cropped to the target aspect ratio and
    resized up (bilinear), as Keras's ``smart_resize``.

    Args:
        height, width: the output size.
        data_format: "channels_last" (default) or "channels_first".
        **kwargs: base Layer arguments.
    """

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height = validate_int("CenterCrop", "height", height, minimum=1)
        self.width = validate_int("CenterCrop", "width", width, minimum=1)
        self.data_format = _data_format("CenterCrop", data_format)

    def call(self, inputs):
        inputs = ops.cast(inputs, self.compute_dtype) if inputs.dtype != self.compute_dtype else inputs
        images, restore = _as_channels_last_batch(self, inputs, self.data_format)
        in_height, in_width = images.shape[1], images.shape[2]
        if in_height >= self.height and in_width >= self.width:
            top, left = (in_height - self.height) // 2, (in_width - self.width) // 2
            return restore(images[:, top:top + self.height, left:left + self.width, :])
        images = _aspect_crop(images, self.height, self.width)
        return restore(ops.resize(images, (self.height, self.width)))

    compute_output_shape = Resizing.compute_output_shape

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width, "data_format": self.data_format}
