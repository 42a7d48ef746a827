"""What MixUp, CutMix and RandomErasing share: box masks, crop bounds (Keras's
draws) and mixed labels.
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import on_device


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
