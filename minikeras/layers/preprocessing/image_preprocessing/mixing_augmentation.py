"""Augmentations that mix images of a batch or cut regions, as Keras 3:
MixUp, CutMix and RandomErasing.

MixUp and CutMix pair every image with another of the same batch (a random
permutation) and, given a dict ``{"images": ..., "labels": ...}``, mix the
labels by the same weights, which is what makes them useful for training
(one-hot or soft labels, shape ``(batch, classes)``).
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation, checked_value_range, keras_factor,
                                                       on_device, per_image)

__all__ = ["MixUp", "CutMix", "RandomErasing"]


def _box_masks(shape, x0, x1, y0, y1):
    """Channels-last boolean masks, True inside each image's box
    ``[x0, x1) x [y0, y1)`` (pixel indices compared as Keras does)."""
    batch, height, width, channels = shape
    rows = numpy.arange(height, dtype="float32").reshape(1, -1, 1, 1)
    columns = numpy.arange(width, dtype="float32").reshape(1, 1, -1, 1)
    corners = [numpy.asarray(c, "float32").reshape(-1, 1, 1, 1) for c in (x0, x1, y0, y1)]
    inside = (columns >= corners[0]) & (columns < corners[1]) & (rows >= corners[2]) & (rows < corners[3])
    return numpy.repeat(inside, channels, axis=3)


def _crop_bounds(rng, batch, length, ratio):
    """A segment of ``ratio * length`` at a uniform position, as Keras's
    ``_compute_crop_bounds`` (float32)."""
    crop = (numpy.asarray(ratio, "float32") * numpy.float32(length)).astype("float32")
    start = rng.uniform(size=batch).astype("float32") * (numpy.float32(length) - crop)
    return start, start + crop


def _mixed_labels(labels, transformation):
    """``w * labels + (1 - w) * labels[permutation]`` per example."""
    if not hasattr(labels, "device"):
        raise TypeError(f"mixing labels expects a tensor, received {type(labels).__name__}.")
    labels = labels if labels.dtype.kind == "f" else ops.cast(labels, "float32")
    weight = on_device(labels, transformation["mix_weight"], labels.dtype, (-1,) + (1,) * (labels.ndim - 1))
    order = on_device(labels, transformation["permutation_order"], "int64")
    return weight * labels + (1.0 - weight) * ops.take(labels, order, axis=0)


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
