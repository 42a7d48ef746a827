"""keras.layers.MixUp.

MixUp and CutMix pair every image with another of the same batch (a random
permutation) and, given a dict ``{"images": ..., "labels": ...}``, mix the
labels by the same weights, which is what makes them useful for training
(one-hot or soft labels, shape ``(batch, classes)``).
"""
from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation, on_device,
                                                                                        per_image)
from minikeras.layers.preprocessing.image_preprocessing.image_mixing import _mixed_labels

__all__ = ["MixUp"]


class MixUp(ImageAugmentation):
    """Blend each image (and label) with another of the batch:
    ``w x + (1 - w) x[perm]``, ``w ~ Beta(alpha, alpha)`` per image
    (Zhang et al., 2017).

    Args:
        alpha: the Beta distribution's parameter (default 0.2).
        data_format: "channels_last" (default) or "channels_first".
        seed: optional int for reproducible draws.
    """

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0:
            raise ValueError(f"MixUp: alpha must be a positive number, received alpha={alpha!r}.")
        self.alpha = alpha

    def _draw(self, rng, shape):
        return {"mix_weight": rng.beta(self.alpha, self.alpha, size=shape[0]).astype("float32"),
                "permutation_order": rng.permutation(shape[0]).astype("int64")}

    def _transform(self, images, transformation):
        weight = per_image(images, transformation["mix_weight"])
        order = on_device(images, transformation["permutation_order"], "int64")
        return weight * images + (1.0 - weight) * ops.take(images, order, axis=0)

    def transform_labels(self, labels, transformation, training=True):
        return _mixed_labels(labels, transformation) if training and transformation is not None else labels

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}
