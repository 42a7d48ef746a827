"""`draw_segmentation_masks`: class masks blended onto a batch of images, as Keras's."""
import numpy

from minikeras.visualization import _arrays

_OWNER = "draw_segmentation_masks"


def draw_segmentation_masks(images, segmentation_masks, num_classes=None, color_mapping=None, alpha=0.8, blend=True,
                            ignore_index=-1, data_format=None):
    """Overlays segmentation masks on images (``keras.visualization.draw_segmentation_masks``).

    Every pixel of class ``c`` (``0 <= c < num_classes``) takes class c's
    colour; with ``blend`` the result is ``image * (1 - alpha) + colour *
    alpha`` (float32, as Keras computes it), pixels equal to
    ``ignore_index`` keep the image, and the result is cast to uint8. As in
    Keras, class 0 is coloured too (black in the default palette), so give
    ``ignore_index=0`` to leave a background class alone.

    Two differences from Keras 3.15, which are bugs there: an inferred
    ``num_classes`` is the largest class other than ``ignore_index`` + 1, at
    least 1 (Keras 3.15 uses the largest class, leaving that class undrawn;
    Keras's main branch infers it as here since its fix of July 2026), and
    channels-first images come back channels first (Keras returns them
    channels last).

    Args:
        images: ``(batch, height, width, channels)`` (or channels first), values in [0, 255].
        segmentation_masks: integer class ids, ``(batch, height, width)`` or
            ``(batch, height, width, 1)`` (channels first: ``(batch, 1, height, width)``).
        num_classes: how many classes get a colour (None: the largest id other than
            ``ignore_index``, + 1).
        color_mapping: ``{class: (r, g, b)}`` for every class ``0..num_classes - 1``
            (None: Keras's palette).
        alpha: the masks' opacity, in [0, 1].
        blend: blend with the image (uint8 result); False returns the painted
            images as float32, unblended.
        ignore_index: the class id left undrawn.
        data_format: ``"channels_last"`` or ``"channels_first"`` (default: the configured one).

    Returns:
        A NumPy array of the images' shape: uint8 when blended, else float32.

    Raises:
        ValueError: images not of rank 4, masks not matching them, a colour missing for a class.
        TypeError: masks that are not integers.

    Example:
        >>> import numpy as np
        >>> import minikeras as mk
        >>> images = np.full((1, 4, 4, 3), 200, dtype="uint8")
        >>> masks = np.zeros((1, 4, 4, 1), dtype="int32"); masks[0, :2] = 1
        >>> mk.visualization.draw_segmentation_masks(images, masks, num_classes=2, ignore_index=0)[0, 0, 0]
        array([ 40, 141,  64], dtype=uint8)
    """
    images = _arrays.batched_images(images, _OWNER)
    masks = _arrays.host_array(segmentation_masks)
    channels_first = _arrays.data_format(data_format, _OWNER) == "channels_first"
    if masks.dtype.kind not in "iu":
        raise TypeError(f"{_OWNER} expects integer segmentation_masks (class ids), received dtype {masks.dtype}.")
    if channels_first:
        images = images.transpose(0, 2, 3, 1)
        masks = masks.transpose(0, 2, 3, 1) if masks.ndim == 4 else masks
    if masks.ndim == 4 and masks.shape[-1] == 1:
        masks = masks[..., 0]
    if masks.shape != images.shape[:3]:
        raise ValueError(f"{_OWNER} expects one class id per pixel, masks of shape {images.shape[:3]} or "
                         f"{images.shape[:3] + (1,)} for images of shape {images.shape}; received "
                         f"{_arrays.host_array(segmentation_masks).shape}.")
    images = images.astype(numpy.float32)
    if num_classes is None:
        drawn_ids = masks[masks != ignore_index]
        num_classes = max(1, int(drawn_ids.max()) + 1 if drawn_ids.size else 0)
    colors = _class_colors(num_classes, color_mapping, images.shape[-1])
    painted = images.copy()
    for class_id, color in enumerate(colors):
        painted[masks == class_id] = color
    if blend:
        blended = images * numpy.float32(1 - alpha) + painted * numpy.float32(alpha)
        blended = numpy.where((masks != ignore_index)[..., None], blended, images)
        painted = numpy.clip(blended, 0, 255).astype(numpy.uint8)
    return painted.transpose(0, 3, 1, 2) if channels_first else painted


def palette(num_classes):
    """Keras's default class colours: ``(i * (2**25 - 1, 2**15 - 1, 2**21 - 1)) % 255``."""
    multipliers = numpy.array([2**25 - 1, 2**15 - 1, 2**21 - 1])
    return [((index * multipliers) % 255).tolist() for index in range(num_classes)]


def _class_colors(num_classes, color_mapping, channels):
    if color_mapping is None:
        colors = palette(num_classes)
    else:
        missing = [index for index in range(num_classes) if index not in color_mapping]
        if missing:
            raise ValueError(f"{_OWNER} expects color_mapping to give a colour to every class 0..{num_classes - 1}; "
                             f"classes {missing} have none.")
        colors = [color_mapping[index] for index in range(num_classes)]
    colors = [numpy.asarray(color, dtype=numpy.float32).reshape(-1) for color in colors]
    for color in colors:
        if color.size not in (1, channels):
            raise ValueError(f"{_OWNER} expects colours of {channels} values for images of {channels} channels, "
                             f"received {color.tolist()}.")
    return colors
