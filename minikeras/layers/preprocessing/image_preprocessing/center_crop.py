"""keras.layers.CenterCrop."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.image_preprocessing.image_layout import (_as_channels_last_batch, _aspect_crop,
                                                                             _data_format)
from minikeras.layers.preprocessing.image_preprocessing.resizing import Resizing
from minikeras._support.argument_validation import validate_int

__all__ = ["CenterCrop"]


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
