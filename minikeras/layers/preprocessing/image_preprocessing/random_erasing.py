"""keras.layers.RandomErasing."""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range,
                                                                                        keras_factor, on_device)
from minikeras.layers.preprocessing.image_preprocessing.image_mixing import _box_masks, _crop_bounds

__all__ = ["RandomErasing"]


class RandomErasing(ImageAugmentation):
    """Erase a random box of each image (Zhong et al., 2017), with
    probability drawn from ``factor``.

    Args:
        factor: the erasing probability's range, a number ``p`` in [0, 1]
            meaning ``(0, p)`` (default 1.0).
        scale: the box's side fractions are ``sqrt(u)``, ``u`` drawn from this
            range in [0, 1] (default (0.02, 0.33)).
        fill_value: None (Gaussian noise times ``value_range[1]``), a number,
            or one value per channel (three); clipped to ``value_range``.
        value_range: the images' ``(low, high)`` (default (0, 255)).
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    _LAYOUT_KEYS = ("batch_masks", "fill_value")

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255), seed=None,
                 data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = keras_factor("RandomErasing", factor, (0, 1))
        self.scale = keras_factor("RandomErasing", scale, (0, 1), argument="scale")
        if fill_value is not None and not (
                isinstance(fill_value, (int, float)) and not isinstance(fill_value, bool) or
                isinstance(fill_value, (tuple, list)) and len(fill_value) == 3):
            raise ValueError(f"RandomErasing: the `fill_value` argument should be a number (or a list of three "
                             f"numbers), received fill_value={fill_value!r}.")
        self.fill_value = fill_value
        self.value_range = checked_value_range("RandomErasing", value_range)

    def _draw(self, rng, shape):
        batch, height, width, _ = shape
        sides = numpy.sqrt(rng.uniform(self.scale[0], self.scale[1], size=(batch, 2))).astype("float32")
        x0, x1 = _crop_bounds(rng, batch, width, sides[:, 0])
        y0, y1 = _crop_bounds(rng, batch, height, sides[:, 1])
        probability = rng.uniform(self.factor[0], self.factor[1], size=batch)
        apply = rng.uniform(size=batch) < probability
        if self.fill_value is None:
            fill = rng.standard_normal(shape) * self.value_range[1]
        else:
            fill = numpy.broadcast_to(numpy.asarray(self.fill_value, "float64"), shape)
        fill = numpy.clip(fill, self.value_range[0], self.value_range[1]).astype("float32")
        return {"apply_erasing": apply, "batch_masks": _box_masks(shape, x0, x1, y0, y1), "fill_value": fill}

    def _transform(self, images, transformation):
        masks = on_device(images, transformation["batch_masks"], bool)
        fill = on_device(images, transformation["fill_value"], images.dtype)
        erased = ops.where(masks, fill, images)
        apply = on_device(images, transformation["apply_erasing"], bool, (-1, 1, 1, 1))
        return ops.where(apply, erased, images)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "scale": self.scale, "fill_value": self.fill_value,
                "value_range": self.value_range}
