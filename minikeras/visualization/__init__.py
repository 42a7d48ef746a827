"""``keras.visualization``: bounding boxes and segmentation masks drawn on
images, and galleries of them.

`draw_bounding_boxes` and `draw_segmentation_masks` work on arrays with
NumPy alone (Keras's box drawing needs OpenCV; minikeras draws the same
box pixels itself, labels in its own bitmap font). The ``plot_*`` galleries
import matplotlib when called and say ``pip install matplotlib`` without it.

Example:
    >>> import numpy as np
    >>> import minikeras as mk
    >>> images = np.zeros((2, 64, 64, 3), dtype="uint8")
    >>> boxes = {"boxes": np.array([[[0.1, 0.1, 0.6, 0.7]], [[0.2, 0.3, 0.9, 0.9]]]), "labels": np.array([[0], [1]])}
    >>> mk.visualization.draw_bounding_boxes(images, boxes, "rel_xyxy", color=(255, 0, 0)).shape
    (2, 64, 64, 3)
"""
from minikeras.visualization.bounding_box_gallery import plot_bounding_box_gallery
from minikeras.visualization.box_drawing import draw_bounding_boxes
from minikeras.visualization.image_gallery import plot_image_gallery
from minikeras.visualization.mask_drawing import draw_segmentation_masks
from minikeras.visualization.segmentation_mask_gallery import plot_segmentation_mask_gallery

__all__ = ["draw_bounding_boxes", "draw_segmentation_masks", "plot_bounding_box_gallery", "plot_image_gallery",
           "plot_segmentation_mask_gallery"]
