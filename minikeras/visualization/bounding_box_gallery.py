"""`plot_bounding_box_gallery`: images with true and predicted boxes, as Keras's (needs matplotlib)."""
import numpy

from minikeras.visualization import _arrays
from minikeras.visualization.box_drawing import draw_bounding_boxes
from minikeras.visualization.image_gallery import plot_image_gallery

_OWNER = "plot_bounding_box_gallery"


def plot_bounding_box_gallery(images, bounding_box_format, y_true=None, y_pred=None, value_range=(0, 255),
                              true_color=(0, 188, 212), pred_color=(255, 235, 59), line_thickness=2, font_scale=1.0,
                              text_thickness=None, class_mapping=None, ground_truth_mapping=None,
                              prediction_mapping=None, legend=False, legend_handles=None, rows=None, cols=None,
                              data_format=None, **kwargs):
    """Plots images with their true and predicted boxes (``keras.visualization.plot_bounding_box_gallery``).

    The true boxes are drawn with `draw_bounding_boxes` in ``true_color``,
    then the predicted ones in ``pred_color``, and the images shown by
    `plot_image_gallery` (``kwargs`` go there: ``path``, ``show``,
    ``scale``, ``dpi``...). Images in another ``value_range`` than (0, 255)
    are rescaled before the boxes are drawn (Keras 3.15 rescales after
    drawing, which garbles both: a bug there).

    Args:
        images: ``(batch, height, width, channels)`` (or channels first).
        bounding_box_format: the boxes' format (see `draw_bounding_boxes`).
        y_true, y_pred: dicts of ``"boxes"``, ``"labels"`` (and ``"confidences"``), as `draw_bounding_boxes` takes.
        value_range: the images' range.
        true_color, pred_color: RGB colours of the two kinds of boxes.
        line_thickness, font_scale, text_thickness: as in `draw_bounding_boxes`.
        class_mapping: ``{label: name}`` for both kinds, unless
            ``ground_truth_mapping`` / ``prediction_mapping`` say otherwise.
        legend: add a "Ground Truth" / "Prediction" legend.
        legend_handles: matplotlib handles of a legend of your own (not with ``legend``).
        rows, cols: the grid's size.
        data_format: ``"channels_last"`` or ``"channels_first"`` (default: the configured one).

    Raises:
        ValueError: images not of rank 4, both ``legend`` and ``legend_handles``.
        ImportError: matplotlib is not installed.
    """
    plt = _arrays.pyplot(_OWNER)
    images = _arrays.batched_images(images, _OWNER)
    if _arrays.data_format(data_format, _OWNER) == "channels_first":
        images = images.transpose(0, 2, 3, 1)
    if legend and legend_handles:
        raise ValueError(f"{_OWNER} expects legend=True or legend_handles, not both.")
    if (y_true is not None or y_pred is not None) and tuple(value_range) != (0, 255):
        # Drawn in (0, 255) and shown as such: Keras 3.15 draws first (uint8, 0..255), then rescales that
        # from value_range again, so its boxes and images wrap around uint8 for any other range.
        images = numpy.clip(_arrays.rescale(images, value_range), 0, 255).astype(numpy.uint8)
        value_range = (0, 255)
    ground_truth_mapping = ground_truth_mapping or class_mapping
    prediction_mapping = prediction_mapping or class_mapping
    drawing = {"bounding_box_format": bounding_box_format, "line_thickness": line_thickness,
               "text_thickness": text_thickness, "font_scale": font_scale, "data_format": "channels_last"}
    plotted = images
    if y_true is not None:
        plotted = draw_bounding_boxes(plotted, y_true, color=true_color, class_mapping=ground_truth_mapping, **drawing)
    if y_pred is not None:
        plotted = draw_bounding_boxes(plotted, y_pred, color=pred_color, class_mapping=prediction_mapping, **drawing)
    if legend:
        patches = plt.matplotlib.patches
        legend_handles = [patches.Patch(color=numpy.array(true_color) / 255.0, label="Ground Truth"),
                          patches.Patch(color=numpy.array(pred_color) / 255.0, label="Prediction")]
    return plot_image_gallery(plotted, value_range=value_range, legend_handles=legend_handles, rows=rows, cols=cols,
                              data_format="channels_last", **kwargs)
