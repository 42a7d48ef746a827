"""The inputs of the keras.visualization parity cases, shared by the recorder
(``fixtures/record_keras_visualization.py``, run with Keras 3.15, OpenCV and
matplotlib) and ``test_visualization_keras_parity.py`` (minikeras, no
TensorFlow needed; named apart from tests/optimizers/test_keras_parity.py,
as pytest's default import mode needs unique test file names).

Each case is ``name: (function name, keyword arguments)``; the arguments are
rebuilt here from seeded generators, never stored.
"""
import numpy as np

FIXTURE = "fixtures/keras_visualization.npz"


def _images(seed, shape=(2, 36, 44, 3), kind="uint8"):
    """Smooth colour ramps (every value 0..255 met, and a small fixture file), offset by ``seed``."""
    batch, height, width, channels = shape
    rows, columns = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    ramps = [(rows * (3 + channel) + columns * (5 - channel) + 37 * seed + 90 * channel + 11 * image) % 256
             for image in range(batch) for channel in range(channels)]
    ramp = np.ascontiguousarray(np.stack(ramps, axis=-1).reshape(height, width, batch, channels).transpose(2, 0, 1, 3))
    if kind == "uint8":
        return ramp.astype(np.uint8)
    if kind == "unit":
        return (ramp / 255.0).astype(np.float32)
    return (ramp * 1.25 - 20).astype(np.float32)  # over 1, under 0 and over 255: clipped to [0, 255]


def _boxes(seed, batch=2, count=4, height=36, width=44, relative=False):
    rng = np.random.default_rng(seed)
    scale = np.array([1.0, 1.0, 1.0, 1.0]) if relative else np.array([width, height, width, height])
    boxes = rng.uniform(-0.2, 1.2, (batch, count, 4)) * scale
    labels = rng.integers(-1, 3, (batch, count))  # -1: no box
    return {"boxes": boxes.astype(np.float32), "labels": labels.astype(np.int32),
            "confidences": rng.uniform(0, 1, (batch, count)).astype(np.float32)}


def _without(dictionary, key):
    return {name: value for name, value in dictionary.items() if name != key}


def _masks(seed, shape=(2, 36, 44, 1), high=4, low=-1):
    return np.random.default_rng(seed).integers(low, high, shape).astype(np.int32)


def box_cases():
    return {
        "boxes_xyxy_uint8": ("draw_bounding_boxes", {
            "images": _images(0), "bounding_boxes": _without(_boxes(1), "confidences"), "bounding_box_format": "xyxy"}),
        "boxes_rel_yxyx_unit_floats": ("draw_bounding_boxes", {
            "images": _images(2, kind="unit"), "bounding_boxes": _boxes(3, relative=True),
            "bounding_box_format": "rel_yxyx", "color": (255, 0, 0), "line_thickness": 3}),
        "boxes_center_xywh_clipped_floats": ("draw_bounding_boxes", {
            "images": _images(4, kind="wide"), "bounding_boxes": _boxes(5), "bounding_box_format": "center_xywh",
            "line_thickness": 1, "color": (10, 250, 40)}),
        "boxes_xywh_thick": ("draw_bounding_boxes", {
            "images": _images(6), "bounding_boxes": _boxes(7, count=3), "bounding_box_format": "xywh",
            "line_thickness": 5, "color": (0, 0, 255)}),
        "boxes_center_yxhw_filled": ("draw_bounding_boxes", {
            "images": _images(8), "bounding_boxes": _boxes(9, count=2), "bounding_box_format": "center_yxhw",
            "line_thickness": -1}),
        "boxes_rel_xywh": ("draw_bounding_boxes", {
            "images": _images(10), "bounding_boxes": _boxes(11, relative=True), "bounding_box_format": "rel_xywh",
            "line_thickness": 4}),
        "boxes_rel_center_xywh_one_channel": ("draw_bounding_boxes", {
            "images": _images(12, shape=(2, 36, 44, 1)), "bounding_boxes": _boxes(13, relative=True),
            "bounding_box_format": "rel_center_xywh", "color": (200, 0, 0)}),
    }


def labelled_box_cases():
    """Boxes with labels written (the glyphs differ from OpenCV's: compared outside the text)."""
    mapping = {0: "cat", 1: "dog", 2: "bird"}
    return {
        "labels_high_boxes": ("draw_bounding_boxes", {
            "images": _images(20, shape=(2, 64, 72, 3)),
            "bounding_boxes": {"boxes": np.array([[[10, 40, 60, 60]], [[30, 36, 70, 62]]], np.float32),
                               "labels": np.array([[0], [2]], np.int32),
                               "confidences": np.array([[0.91], [0.5]], np.float32)},
            "bounding_box_format": "xyxy", "class_mapping": mapping}),
        "labels_low_boxes": ("draw_bounding_boxes", {
            "images": _images(21, shape=(2, 64, 72, 3)),
            "bounding_boxes": {"boxes": np.array([[[5, 4, 70, 60]], [[20, 10, 60, 63]]], np.float32),
                               "labels": np.array([[1], [0]], np.int32)},
            "bounding_box_format": "xyxy", "class_mapping": mapping, "font_scale": 0.5, "color": (255, 255, 0)}),
    }


def mask_cases():
    return {
        "masks_default_palette": ("draw_segmentation_masks", {
            "images": _images(30), "segmentation_masks": _masks(31), "num_classes": 4}),
        "masks_mapping_ignore_background": ("draw_segmentation_masks", {
            "images": _images(32).astype(np.float32), "segmentation_masks": _masks(33, high=3, low=0),
            "num_classes": 3, "color_mapping": {0: (0, 0, 0), 1: (255, 0, 0), 2: (0, 255, 0)},
            "alpha": 0.5, "ignore_index": 0}),
        "masks_unblended": ("draw_segmentation_masks", {
            "images": _images(34), "segmentation_masks": _masks(35), "num_classes": 3, "blend": False}),
        "masks_ids_past_num_classes": ("draw_segmentation_masks", {
            "images": _images(36), "segmentation_masks": _masks(37, high=7), "num_classes": 3, "alpha": 0.3}),
        # num_classes=None: Keras 3.15 infers the largest id, minikeras the largest id + 1 (see
        # mask_drawing.py); recorded with Keras given that count.
        "masks_inferred_num_classes": ("draw_segmentation_masks", {
            "images": _images(38), "segmentation_masks": _masks(39, high=5, low=0), "num_classes": 5}),
    }


def gallery_cases():
    """Gallery cases: what each subplot shows (the arrays handed to imshow) and the titles."""
    images = _images(40, shape=(4, 24, 28, 3), kind="unit")
    labels = {0: "cat", 1: "dog"}
    return {
        "gallery_images": ("plot_image_gallery", {
            "images": images, "y_true": np.array([0, 1, 1, 0]), "y_pred": np.array([0, 0, 1, 1]),
            "label_map": labels, "value_range": (0, 1), "show": False}),
        "gallery_boxes": ("plot_bounding_box_gallery", {
            "images": _images(41, shape=(4, 40, 48, 3)), "bounding_box_format": "xyxy",
            "y_true": _without(_boxes(42, batch=4, height=40, width=48), "confidences"),
            "y_pred": _without(_boxes(43, batch=4, height=40, width=48), "confidences"), "legend": True,
            "show": False}),
        "gallery_masks": ("plot_segmentation_mask_gallery", {
            "images": _images(44, shape=(2, 20, 24, 3)), "num_classes": 3, "y_true": _masks(45, (2, 20, 24, 1), 3),
            "y_pred": _masks(46, (2, 20, 24, 1), 3), "show": False}),
    }
