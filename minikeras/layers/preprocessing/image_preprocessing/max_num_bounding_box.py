"""MaxNumBoundingBoxes: give every image the same number of boxes, as
Keras 3 does before batching detection data.

Its input is Keras's detection dict, ``{"images": ..., "bounding_boxes":
{"boxes": (batch, n, 4), "labels": (batch, n)}}``: boxes and labels beyond
``max_number`` are dropped, missing ones are padded with ``fill_value``.
Images (and anything else in the dict) pass through unchanged.
"""
from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.image_preprocessing.image_layout import _data_format
from minikeras._support.argument_validation import validate_int

__all__ = ["MaxNumBoundingBoxes"]


class MaxNumBoundingBoxes(Layer):
    """Pad or truncate the bounding boxes of each image to ``max_number``.

    Args:
        max_number: the number of boxes (and labels) per image.
        fill_value: the value of padding boxes and labels (default -1).
        bounding_box_format: the boxes' format (e.g. "xyxy"); required, as
            in Keras, when the input holds boxes (padding does not depend on it).
        data_format: "channels_last" (default) or "channels_first" (kept
            for Keras's config; images pass through).
    """

    def __init__(self, max_number, fill_value=-1, bounding_box_format=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.max_number = validate_int("MaxNumBoundingBoxes", "max_number", int(max_number), minimum=1)
        self.fill_value = int(fill_value)
        if bounding_box_format is not None and not isinstance(bounding_box_format, str):
            raise ValueError(f"MaxNumBoundingBoxes: bounding_box_format must be a string such as 'xyxy', received "
                             f"{bounding_box_format!r}.")
        self.bounding_box_format = bounding_box_format
        self.data_format = _data_format("MaxNumBoundingBoxes", data_format)

    def call(self, inputs):
        if not isinstance(inputs, dict) or "bounding_boxes" not in inputs:
            return inputs
        if self.bounding_box_format is None:
            raise ValueError("MaxNumBoundingBoxes: the input has a 'bounding_boxes' key but the layer has no "
                             "bounding_box_format; pass e.g. bounding_box_format='xyxy'.")
        boxes_and_labels = inputs["bounding_boxes"]
        unsupported = set(boxes_and_labels) - {"boxes", "labels"}
        if unsupported:
            raise KeyError(f"MaxNumBoundingBoxes: unsupported keys in `bounding_boxes`: {sorted(unsupported)}. "
                           f"Only `boxes` and `labels` are supported.")
        return {**inputs, "bounding_boxes": {"boxes": self._fit(boxes_and_labels["boxes"], 3),
                                             "labels": self._fit(boxes_and_labels["labels"], 2)}}

    def _fit(self, values, rank):
        if not isinstance(values, Tensor) or values.ndim != rank:
            received = f"shape {tuple(values.shape)}" if isinstance(values, Tensor) else repr(values)
            raise ValueError(f"MaxNumBoundingBoxes expects batched boxes (batch, n, 4) and labels (batch, n), "
                             f"received {received}.")
        values = values[:, :self.max_number]
        missing = self.max_number - values.shape[1]
        if missing > 0:
            padding = [(0, 0), (0, missing)] + [(0, 0)] * (rank - 2)
            values = ops.pad(values, padding, constant_values=self.fill_value)
        return values

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, dict) and "bounding_boxes" in input_shape:
            shapes = input_shape["bounding_boxes"]
            boxes, labels = list(shapes["boxes"]), list(shapes["labels"])
            boxes[1] = labels[1] = self.max_number
            return {**input_shape, "bounding_boxes": {"boxes": tuple(boxes), "labels": tuple(labels)}}
        return input_shape

    def get_config(self):
        config = {**super().get_config(), "data_format": self.data_format}
        if self.bounding_box_format is not None:
            config["bounding_box_format"] = self.bounding_box_format
        return {**config, "max_number": self.max_number}
