"""What Keras 3's newer image augmentation layers share: the
``get_random_transformation`` / ``transform_images`` / ``transform_labels``
split, Keras's factor rules and value-range mapping.

Keras 3 draws a layer's random parameters in ``get_random_transformation``
(a dict of arrays) and applies them in ``transform_images``; minikeras keeps
the same two public methods with the same dict keys, so a transformation
Keras drew can be replayed here exactly (that is how the parity tests pin
the deterministic part of every random layer). The draws themselves come
from NumPy generators (the layer's own when it has a ``seed``, else
``minikeras.random.host_rng()``), so the random streams differ from Keras's.

As in Keras, a direct call without ``training`` augments (Keras's
``call(data, training=True)`` default); ``fit`` passes ``training=True``,
``predict``/``evaluate`` ``training=False``, which returns the images as they
are. Inputs are images, or a dict with ``"images"`` and optionally
``"labels"`` (MixUp and CutMix mix the labels with the same draws); a dict
with bounding boxes or segmentation masks is refused rather than passed
through untransformed.
Transformations are computed on channels-last batches; the arrays of a
transformation that follow the image layout (``_LAYOUT_KEYS``) are given in
the layer's ``data_format``, as Keras gives them.
"""
import numbers

import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation
from minikeras.layers.preprocessing.image_preprocessing.image_layout import _as_channels_last_batch

# keras.backend.epsilon()
EPSILON = 1e-7


def keras_factor(layer_name, factor, bounds, argument="factor"):
    """Keras's ``_set_factor``: a pair is sorted, a number ``f`` means
    ``(max(-|f|, low), |f|)``; values outside ``bounds`` are refused."""
    message = (f"{layer_name}: the `{argument}` argument should be a number (or a list of two numbers) in the range "
               f"[{bounds[0]}, {bounds[1]}]. Received: {argument}={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or not all(_is_number(value) for value in factor):
            raise ValueError(message)
        if factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        return tuple(sorted(factor))
    if not _is_number(factor) or factor < bounds[0] or factor > bounds[1]:
        raise ValueError(message)
    factor = abs(factor)
    return (max(-factor, bounds[0]), factor)


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def checked_value_range(layer_name, value_range):
    """A ``(low, high)`` pair of numbers, as the caller gave it."""
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2 or not all(
            _is_number(value) for value in value_range):
        raise ValueError(f"{layer_name}: the `value_range` argument should be a list of two numbers. Received: "
                         f"value_range={value_range}")
    return value_range


def transform_value_range(images, original_range, target_range):
    """Map pixel values linearly from ``original_range`` to ``target_range``."""
    if original_range[0] == target_range[0] and original_range[1] == target_range[1]:
        return images
    unit = (images - float(original_range[0])) / float(original_range[1] - original_range[0])
    return unit * float(target_range[1] - target_range[0]) + float(target_range[0])


def on_device(images, array, dtype=None, shape=None):
    """A host (or Keras-drawn) array as a Tensor beside ``images``."""
    array = numpy.asarray(array)
    if dtype is not None:
        array = array.astype(dtype)
    if shape is not None:
        array = array.reshape(shape)
    return Tensor(array, device=images.device)


def per_image(images, values):
    """``values`` (one per image) shaped ``(batch, 1, 1, 1)`` in the images' dtype."""
    return on_device(images, values, images.dtype, (-1, 1, 1, 1))


def _to_layout(array, data_format):
    """A channels-last ``(batch, height, width, channels)`` array in ``data_format``."""
    return numpy.transpose(array, (0, 3, 1, 2)) if data_format == "channels_first" else array


def _from_layout(array, data_format):
    array = numpy.asarray(array)
    return numpy.transpose(array, (0, 2, 3, 1)) if data_format == "channels_first" else array


class ImageAugmentation(_Augmentation):
    """Base of the layers that follow Keras 3's transformation protocol.

    A subclass implements ``_draw(rng, shape)`` (``shape`` is the
    channels-last batch shape; returns the transformation dict) and
    ``_transform(images, transformation)`` (channels-last batch), and
    optionally ``_transform_labels``.
    """

    _LAYOUT_KEYS = ()

    def call(self, inputs, training=None):
        training = True if training is None else training
        data = dict(inputs) if isinstance(inputs, dict) else None
        images = data["images"] if data is not None else inputs
        unsupported = set(data or ()) & {"bounding_boxes", "segmentation_masks"}
        if unsupported:
            raise NotImplementedError(f"{type(self).__name__}: transforming {sorted(unsupported)} is not supported "
                                      f"yet; only 'images' and 'labels' are.")
        if not isinstance(images, Tensor):
            raise TypeError(f"{type(self).__name__}: expected images (a tensor) or a dict with 'images', received "
                            f"{type(inputs).__name__}.")
        compute = self.compute_dtype
        images = ops.cast(images, compute) if images.dtype != compute else images
        if not training:
            return {**data, "images": images} if data is not None else images
        transformation = self.get_random_transformation(images, training=True)
        images = self.transform_images(images, transformation, training=True)
        if data is None:
            return images
        data["images"] = images
        if data.get("labels") is not None:
            data["labels"] = self.transform_labels(data["labels"], transformation, training=True)
        return data

    def _channels_last_shape(self, images):
        shape = tuple(images.shape)
        if len(shape) not in (3, 4):
            raise ValueError(f"{type(self).__name__}: expected images of rank 3 or 4, received shape {shape}.")
        if len(shape) == 3:
            shape = (1,) + shape
        return (shape[0], shape[2], shape[3], shape[1]) if self.data_format == "channels_first" else shape

    def _seeded_generator(self, seed):
        if seed is None:
            return self._generator()
        if isinstance(seed, numpy.random.Generator):
            return seed
        return numpy.random.default_rng(seed)

    def get_random_transformation(self, data, training=True, seed=None):
        """The random parameters for ``data`` (images or a dict of them):
        a dict of NumPy arrays with Keras's keys, or None when not training.
        ``seed``: None (the layer's stream), an int, or a NumPy Generator."""
        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else data
        transformation = self._draw(self._seeded_generator(seed), self._channels_last_shape(images))
        if transformation is not None:
            for key in self._LAYOUT_KEYS:
                transformation[key] = _to_layout(transformation[key], self.data_format)
        return transformation

    def transform_images(self, images, transformation, training=True):
        """Apply ``transformation`` (from ``get_random_transformation``, or
        Keras's own) to ``images`` (a tensor or array) in the layer's layout."""
        if not isinstance(images, Tensor):
            images = ops.convert_to_tensor(images)
        compute = self.compute_dtype
        images = ops.cast(images, compute) if images.dtype != compute else images
        if not training or transformation is None:
            return images
        if self._LAYOUT_KEYS:
            transformation = dict(transformation)
        for key in self._LAYOUT_KEYS:
            transformation[key] = _from_layout(transformation[key], self.data_format)
        batch, restore = _as_channels_last_batch(self, images, self.data_format)
        return restore(self._transform(batch, transformation))

    def transform_labels(self, labels, transformation, training=True):
        """The labels that go with the transformed images (unchanged unless
        the layer mixes images)."""
        return labels

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def _augment(self, images, rng):
        """Channels-last batch in, augmented batch out (as the older layers,
        so RandomColorJitter and RandAugment can chain any of them)."""
        transformation = self._draw(rng, tuple(images.shape))
        return images if transformation is None else self._transform(images, transformation)
