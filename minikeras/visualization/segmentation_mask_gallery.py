"""`plot_segmentation_mask_gallery`: images beside their true and predicted masks, as Keras's (needs matplotlib)."""
import numpy

from minikeras.visualization import _arrays
from minikeras.visualization.image_gallery import plot_image_gallery
from minikeras.visualization.mask_drawing import draw_segmentation_masks

_OWNER = "plot_segmentation_mask_gallery"


def plot_segmentation_mask_gallery(images, num_classes, value_range=(0, 255), y_true=None, y_pred=None,
                                   color_mapping=None, blend=True, alpha=0.8, ignore_index=-1, data_format=None,
                                   **kwargs):
    """Plots each image beside its masks drawn on it (``keras.visualization.plot_segmentation_mask_gallery``).

    One row per image: the image, then (if given) ``y_true`` and ``y_pred``
    drawn on it by `draw_segmentation_masks`; shown by `plot_image_gallery`
    (``kwargs`` go there: ``path``, ``show``, ``scale``...). Images in
    another ``value_range`` than (0, 255) are rescaled before the masks are
    blended on them (Keras 3.15 rescales after, which garbles them).

    Args:
        images: ``(batch, height, width, channels)`` (or channels first).
        num_classes: how many classes get a colour.
        value_range: the images' range.
        y_true, y_pred: class-id masks, ``(batch, height, width)`` or ``(batch, height, width, 1)``
            (cast to int32, as Keras does).
        color_mapping, blend, alpha, ignore_index: as in `draw_segmentation_masks`.
        data_format: ``"channels_last"`` or ``"channels_first"`` (default: the configured one).

    Raises:
        ValueError: images not of rank 4.
        ImportError: matplotlib is not installed.
    """
    _arrays.pyplot(_OWNER)
    images = _arrays.batched_images(images, _OWNER)
    channels_first = _arrays.data_format(data_format, _OWNER) == "channels_first"
    if channels_first:
        images = images.transpose(0, 2, 3, 1)
    if (y_true is not None or y_pred is not None) and tuple(value_range) != (0, 255):
        # Blended in (0, 255), as the masks' colours are (Keras 3.15 blends the unscaled images with them,
        # then rescales the result again: a bug there).
        images, value_range = _arrays.rescale(images, value_range), (0, 255)
    drawing = {"num_classes": num_classes, "color_mapping": color_mapping, "alpha": alpha,
               "ignore_index": ignore_index, "blend": blend, "data_format": "channels_last"}
    columns = [images]
    for masks in (y_true, y_pred):
        if masks is None:
            continue
        masks = _arrays.host_array(masks)
        if channels_first and masks.ndim == 4:
            masks = masks.transpose(0, 2, 3, 1)
        columns.append(draw_segmentation_masks(images, masks.astype(numpy.int32), **drawing))
    gallery = numpy.stack([column[index] for index in range(len(images)) for column in columns], axis=0)
    return plot_image_gallery(gallery, value_range=value_range, rows=len(images), cols=len(columns),
                              data_format="channels_last", **kwargs)
