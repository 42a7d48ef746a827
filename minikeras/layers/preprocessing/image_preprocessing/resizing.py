"""keras.layers.Resizing."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.image_preprocessing.image_layout import (_as_channels_last_batch, _aspect_crop,
                                                                             _data_format)
from minikeras._support.argument_validation import validate_int

__all__ = ["Resizing"]


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
