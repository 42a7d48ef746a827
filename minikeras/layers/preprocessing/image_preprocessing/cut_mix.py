"""keras.layers.CutMix: a random box of every image replaced by the same box of
another image of the batch, labels mixed by the box's area (see mix_up.py).
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation, keras_factor,
                                                                                        on_device)
from minikeras.layers.preprocessing.image_preprocessing.image_mixing import _box_masks, _crop_bounds, _mixed_labels

__all__ = ["CutMix"]


class CutMix(ImageAugmentation):
    """Paste a random box of another image of the batch into each image;
    labels are mixed by the area kept (Yun et al., 2019).

    Args:
        factor: the range ``alpha`` is drawn from (one per batch) for the
            ``Beta(alpha, alpha)`` area fraction; a number ``f`` in [0, 1]
            means ``(0, f)`` (default 1.0).
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    Single (unbatched) images are returned unchanged, as in Keras.
    """

    _LAYOUT_KEYS = ("batch_masks",)

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = keras_factor("CutMix", factor, (0, 1))

    def get_random_transformation(self, data, training=True, seed=None):
        images = data["images"] if isinstance(data, dict) else data
        if images.ndim == 3:
            return None
        return super().get_random_transformation(data, training, seed)

    def _draw(self, rng, shape):
        batch, height, width, _ = shape
        alpha = rng.uniform(self.factor[0], self.factor[1]) + 1e-6
        ratio = numpy.sqrt(1.0 - rng.beta(alpha, alpha, size=batch)).astype("float32")
        x0, x1 = _crop_bounds(rng, batch, width, ratio)
        y0, y1 = _crop_bounds(rng, batch, height, ratio)
        mix_weight = 1.0 - (x1 - x0) * (y1 - y0) / numpy.float32(width * height)
        return {"permutation_order": rng.permutation(batch).astype("int32"),
                "batch_masks": _box_masks(shape, x0, x1, y0, y1), "mix_weight": mix_weight.astype("float32")}

    def _transform(self, images, transformation):
        order = on_device(images, transformation["permutation_order"], "int64")
        masks = on_device(images, transformation["batch_masks"], bool)
        return ops.where(masks, ops.take(images, order, axis=0), images)

    def transform_labels(self, labels, transformation, training=True):
        return _mixed_labels(labels, transformation) if training and transformation is not None else labels

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
