"""`draw_bounding_boxes`: boxes (and their labels) drawn onto a batch of images, as Keras's."""
import numpy

from minikeras.visualization import _arrays, _boxes, _raster

_OWNER = "draw_bounding_boxes"


def draw_bounding_boxes(images, bounding_boxes, bounding_box_format, class_mapping=None, color=(128, 128, 128),
                        line_thickness=2, text_thickness=1, font_scale=1.0, data_format=None):
    """Draws bounding boxes on a batch of images (``keras.visualization.draw_bounding_boxes``).

    The images are first made uint8 as Keras makes them: floats whose
    maximum is at most 1 are scaled by 255 (after clipping to [0, 1]), other
    floats clipped to [0, 255], then every value cast (truncated) to uint8.
    Each box whose label is not -1 is outlined with the pixels
    ``cv2.rectangle`` draws, so boxes equal Keras's pixel for pixel. When
    ``class_mapping`` names a box's label, the name (and ``" | 0.87"`` with
    ``confidences``) is written above the box, or inside it near the top
    edge, where Keras writes it, in minikeras's own bitmap font (Keras needs
    OpenCV for its Hershey font; minikeras needs nothing).

    Args:
        images: ``(batch, height, width, channels)`` (or channels first), any numeric dtype.
        bounding_boxes: a dict with ``"boxes"`` ``(batch, num_boxes, 4)``,
            ``"labels"`` ``(batch, num_boxes)`` (-1: no box) and optionally
            ``"confidences"`` ``(batch, num_boxes)``.
        bounding_box_format: ``"xyxy"``, ``"yxyx"``, ``"xywh"``,
            ``"center_xywh"``, ``"center_yxhw"`` or a relative ``"rel_*"`` form.
        class_mapping: ``{label: name}`` of the labels to write.
        color: the RGB colour of boxes and text.
        line_thickness: the outline's thickness in pixels (negative: filled).
        text_thickness: the text's stroke thickness (None: ``line_thickness``).
        font_scale: the text size (1.0: capitals about 21 pixels high).
        data_format: ``"channels_last"`` or ``"channels_first"`` (default: the configured one).

    Returns:
        A new uint8 NumPy array of the images' shape, the boxes drawn.

    Raises:
        ValueError: images not of rank 4, boxes, labels or confidences of the wrong shape (or
            another batch size than the images'), an unknown format.
        TypeError: ``bounding_boxes`` is not a dict.

    Example:
        >>> import numpy as np
        >>> import minikeras as mk
        >>> images = np.zeros((1, 64, 64, 3), dtype="uint8")
        >>> boxes = {"boxes": np.array([[[8, 8, 40, 50]]]), "labels": np.array([[1]])}
        >>> drawn = mk.visualization.draw_bounding_boxes(images, boxes, "xyxy", class_mapping={1: "cat"})
        >>> drawn.shape, drawn.dtype
        ((1, 64, 64, 3), dtype('uint8'))
    """
    images = _arrays.batched_images(images, _OWNER)
    channels_first = _arrays.data_format(data_format, _OWNER) == "channels_first"
    if not isinstance(bounding_boxes, dict):
        raise TypeError(f"{_OWNER} expects bounding_boxes to be a dict with 'boxes' and 'labels', received "
                        f"{type(bounding_boxes).__name__}.")
    if "boxes" not in bounding_boxes or "labels" not in bounding_boxes:
        raise ValueError(f"{_OWNER} expects bounding_boxes to have 'boxes' and 'labels' keys, received keys "
                         f"{sorted(bounding_boxes)}.")
    if channels_first:
        images = images.transpose(0, 2, 3, 1)
    batch, height, width = images.shape[:3]
    boxes = _boxes.to_xyxy(_arrays.host_array(bounding_boxes["boxes"]), bounding_box_format, height, width, _OWNER)
    labels = _arrays.host_array(bounding_boxes["labels"])
    confidences = bounding_boxes.get("confidences")
    confidences = None if confidences is None else _arrays.host_array(confidences)
    if boxes.ndim != 3 or boxes.shape[0] != batch or labels.shape != boxes.shape[:2]:
        raise ValueError(f"{_OWNER} expects boxes of shape (batch, num_boxes, 4) and labels of shape "
                         f"(batch, num_boxes) for {batch} images; received boxes {boxes.shape} and labels "
                         f"{labels.shape}.")
    if confidences is not None and confidences.shape != labels.shape:
        raise ValueError(f"{_OWNER} expects confidences of the labels' shape {labels.shape}, received "
                         f"{confidences.shape}.")

    drawn = numpy.ascontiguousarray(_as_uint8(images))  # a copy: the caller's images are left alone
    paint = _color(color, drawn.shape[-1])
    class_mapping = class_mapping or {}
    text_thickness = text_thickness or line_thickness
    corners = boxes.astype(numpy.int32)  # truncation toward zero, as Keras
    for index in range(batch):
        for box_index in range(corners.shape[1]):
            label = int(labels[index, box_index].astype(numpy.int32))
            if label == -1:
                continue
            x1, y1, x2, y2 = (int(value) for value in corners[index, box_index])
            _raster.rectangle(drawn[index], (x1, y1), (x2, y2), paint, line_thickness)
            if label in class_mapping:
                name = class_mapping[label]
                if confidences is not None:
                    name = f"{name} | {confidences[index][box_index]:.2f}"
                origin = _text_origin(x1, y1, font_scale, text_thickness)
                _raster.text(drawn[index], name, origin, paint, font_scale, text_thickness)
    return drawn.transpose(0, 3, 1, 2) if channels_first else drawn


def _as_uint8(images):
    """Keras's conversion of images to uint8 before drawing."""
    if images.dtype.kind == "f" and images.size > 0:
        images = numpy.clip(images, 0, 1) * 255 if images.max() <= 1.0 else numpy.clip(images, 0, 255)
    return images.astype("uint8")


def _color(color, channels):
    """``color`` as uint8 values for ``channels`` channels (OpenCV's saturating cast; missing channels 0)."""
    values = numpy.zeros(channels, dtype=numpy.float64)
    given = numpy.asarray(color, dtype=numpy.float64).reshape(-1)[:channels]
    values[:len(given)] = given
    return numpy.clip(numpy.rint(values), 0, 255).astype(numpy.uint8)


def _text_origin(x, y, font_scale, thickness):
    """Where Keras puts a label's baseline: above the box, or inside it when too close to the top."""
    font_height = int(font_scale * 12)
    if y - 8 - 2 * font_height > 0:
        return x, y - 8
    return x + 3, y + 2 * font_height + thickness + 3
