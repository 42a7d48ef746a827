"""keras.layers.RandomCrop."""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import ImageAugmentation
from minikeras._support.argument_validation import validate_int

__all__ = ["RandomCrop"]


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
