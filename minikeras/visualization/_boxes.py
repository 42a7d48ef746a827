"""Bounding boxes in Keras's formats, converted to pixel corners ``xyxy``.

The formats of ``keras.utils.bounding_boxes.convert_format`` (case
ignored): ``"xyxy"`` (left, top, right, bottom), ``"yxyx"``, ``"xywh"``
(left, top, width, height), ``"center_xywh"``, ``"center_yxhw"``, and the
relative ``"rel_xyxy"``, ``"rel_yxyx"``, ``"rel_xywh"``,
``"rel_center_xywh"`` (fractions of the image's width and height). The
arithmetic is Keras's, in float32, so the corners truncate to the same
pixels.
"""
import numpy

FORMATS = ("xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy", "rel_yxyx", "rel_xywh",
           "rel_center_xywh")


def to_xyxy(boxes, bounding_box_format, height, width, owner):
    """``boxes`` (``(..., 4)``, any format) as float32 ``xyxy`` pixel corners.

    Raises:
        ValueError: an unknown format, or a last axis other than 4.
    """
    name = str(bounding_box_format).lower()
    if name not in FORMATS:
        raise ValueError(f"{owner} expects bounding_box_format to be one of {', '.join(FORMATS)}; "
                         f"received {bounding_box_format!r}.")
    boxes = numpy.asarray(boxes, dtype=numpy.float32)
    if boxes.shape[-1:] != (4,):
        raise ValueError(f"{owner} expects boxes with a last axis of 4 coordinates, received shape {boxes.shape}.")
    first, second, third, fourth = (boxes[..., index] for index in range(4))
    relative = name.startswith("rel_")
    name = name[4:] if relative else name
    if name in ("yxyx", "center_yxhw"):  # y before x: swap into x-first order
        first, second, third, fourth = second, first, fourth, third
    if name == "xywh":
        third, fourth = first + third, second + fourth
    elif name.startswith("center_"):
        half_width, half_height = third / numpy.float32(2.0), fourth / numpy.float32(2.0)
        first, second, third, fourth = (first - half_width, second - half_height, first + half_width,
                                        second + half_height)
    if relative:  # Keras converts in relative units, then scales
        width, height = numpy.float32(width), numpy.float32(height)
        first, second, third, fourth = first * width, second * height, third * width, fourth * height
    return numpy.stack([first, second, third, fourth], axis=-1)
