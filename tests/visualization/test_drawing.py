"""draw_bounding_boxes and draw_segmentation_masks as the Keras docs use
them, on NumPy arrays and minikeras tensors, with no matplotlib or OpenCV."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import visualization


def street(batch=2, height=120, width=160):
    """A batch of plain grey scenes, as a detector's input."""
    return np.full((batch, height, width, 3), 90, dtype=np.uint8)


def test_draw_boxes_of_a_detection_batch():
    images = street()
    detections = {"boxes": np.array([[[10, 50, 60, 110], [80, 30, 150, 90], [0, 0, 0, 0]],
                                     [[30, 12, 70, 80], [0, 0, 0, 0], [0, 0, 0, 0]]], dtype="float32"),
                  "labels": np.array([[0, 1, -1], [2, -1, -1]]),  # -1: padding, not a box
                  "confidences": np.array([[0.9, 0.75, 0.0], [0.6, 0.0, 0.0]])}
    drawn = visualization.draw_bounding_boxes(images, detections, bounding_box_format="xyxy",
                                              class_mapping={0: "person", 1: "car", 2: "dog"}, color=(255, 0, 0))
    assert drawn.shape == images.shape and drawn.dtype == np.uint8
    assert (images == 90).all()  # the input is left alone
    red = (drawn == (255, 0, 0)).all(axis=-1)
    assert red[0, 50, 10] and red[0, 110, 60] and red[0, 60, 150] and red[1, 40, 30]  # corners and sides
    assert not red[0, 80, 35] and not red[:, 0, 0].any()  # inside a box; the padding boxes at (0, 0)
    assert red[0, 21:42, 10:60].any()  # "person | 0.90" above the box: its baseline 8 pixels up
    assert red[1, 20:41, 33:70].any() and not red[1, :10].any()  # too near the top: written inside instead


def test_every_format_outlines_the_same_box():
    images = street(batch=1, height=64, width=80)
    x1, y1, x2, y2 = 12.0, 8.0, 52.0, 40.0
    width, height = 80.0, 64.0
    same_box = {"xyxy": [x1, y1, x2, y2], "yxyx": [y1, x1, y2, x2], "xywh": [x1, y1, x2 - x1, y2 - y1],
                "center_xywh": [32.0, 24.0, 40.0, 32.0], "center_yxhw": [24.0, 32.0, 32.0, 40.0],
                "rel_xyxy": [x1 / width, y1 / height, x2 / width, y2 / height],
                "rel_yxyx": [y1 / height, x1 / width, y2 / height, x2 / width],
                "rel_xywh": [x1 / width, y1 / height, 0.5, 0.5],
                "rel_center_xywh": [0.4, 0.375, 0.5, 0.5]}
    drawn = {name: visualization.draw_bounding_boxes(images, {"boxes": np.array([[box]]), "labels": np.array([[0]])},
                                                     name, color=(0, 255, 0))
             for name, box in same_box.items()}
    for name, image in drawn.items():
        np.testing.assert_array_equal(image, drawn["xyxy"], err_msg=name)
    assert (drawn["xyxy"][0, 8, 12] == (0, 255, 0)).all()


def test_draw_takes_tensors_floats_and_channels_first():
    boxes = {"boxes": mk.ops.convert_to_tensor([[[4.0, 4.0, 20.0, 12.0]]]), "labels": mk.ops.convert_to_tensor([[1]])}
    unit = np.full((1, 16, 24, 3), 0.5, dtype="float32")  # floats up to 1 are scaled by 255 (and truncated)
    drawn = visualization.draw_bounding_boxes(mk.ops.convert_to_tensor(unit), boxes, "xyxy")
    assert drawn[0, 8, 12].tolist() == [127, 127, 127] and drawn[0, 4, 4].tolist() == [128, 128, 128]
    channels_first = visualization.draw_bounding_boxes(unit.transpose(0, 3, 1, 2), boxes, "xyxy",
                                                       data_format="channels_first")
    np.testing.assert_array_equal(channels_first, drawn.transpose(0, 3, 1, 2))
    strided = np.zeros((1, 16, 48, 3), np.uint8)[:, :, ::2]  # not contiguous (Keras's OpenCV call refuses it)
    assert visualization.draw_bounding_boxes(strided, boxes, "xyxy")[0, 4, 4].tolist() == [128, 128, 128]


def test_draw_boxes_refuses_bad_input_clearly():
    images, boxes = street(batch=1), {"boxes": np.zeros((1, 1, 4)), "labels": np.zeros((1, 1))}
    with pytest.raises(ValueError, match=r"draw_bounding_boxes expects a batch of images of rank 4.*\(120, 160, 3\)"):
        visualization.draw_bounding_boxes(images[0], boxes, "xyxy")
    with pytest.raises(TypeError, match="bounding_boxes to be a dict"):
        visualization.draw_bounding_boxes(images, [np.zeros((1, 1, 4))], "xyxy")
    with pytest.raises(ValueError, match="'boxes' and 'labels' keys"):
        visualization.draw_bounding_boxes(images, {"boxes": np.zeros((1, 1, 4))}, "xyxy")
    with pytest.raises(ValueError, match="bounding_box_format to be one of xyxy"):
        visualization.draw_bounding_boxes(images, boxes, "xyzw")
    with pytest.raises(ValueError, match=r"boxes of shape \(batch, num_boxes, 4\)"):
        visualization.draw_bounding_boxes(images, {"boxes": np.zeros((3, 4)), "labels": np.zeros(3)}, "xyxy")
    with pytest.raises(ValueError, match="last axis of 4"):
        visualization.draw_bounding_boxes(images, {"boxes": np.zeros((1, 1, 5)), "labels": np.zeros((1, 1))}, "xyxy")
    with pytest.raises(ValueError, match=r"for 1 images; received boxes \(2, 1, 4\) and labels \(2, 1\)"):
        visualization.draw_bounding_boxes(images, {"boxes": np.zeros((2, 1, 4)), "labels": np.zeros((2, 1))}, "xyxy")
    with pytest.raises(ValueError, match=r"received boxes \(1, 1, 4\) and labels \(1, 3\)"):
        visualization.draw_bounding_boxes(images, {"boxes": np.zeros((1, 1, 4)), "labels": np.zeros((1, 3))}, "xyxy")
    with pytest.raises(ValueError, match=r"confidences of the labels' shape \(1, 1\), received \(1, 2\)"):
        visualization.draw_bounding_boxes(images, {**boxes, "confidences": np.zeros((1, 2))}, "xyxy",
                                          class_mapping={0: "a"})
    with pytest.raises(ValueError, match="data_format 'channels_last' or 'channels_first'"):
        visualization.draw_bounding_boxes(images, boxes, "xyxy", data_format="NCHW")


def segmentation_batch():
    images = np.zeros((2, 32, 48, 3), dtype="uint8")
    images[..., 2] = 200
    masks = np.zeros((2, 32, 48, 1), dtype="int32")  # 0: background
    masks[0, 4:20, 8:30] = 1
    masks[1, 10:30, 20:44] = 2
    return images, masks


def test_draw_masks_of_a_segmentation_batch():
    images, masks = segmentation_batch()
    drawn = visualization.draw_segmentation_masks(images, masks, num_classes=3, ignore_index=0, alpha=0.5)
    assert drawn.shape == images.shape and drawn.dtype == np.uint8
    np.testing.assert_array_equal(drawn[masks[..., 0] == 0], images[masks[..., 0] == 0])  # background untouched
    class_one = np.array(visualization.mask_drawing.palette(3)[1], dtype=np.float32)
    expected = (np.float32(200) * np.float32(0.5) * np.array([0, 0, 1]) + class_one * np.float32(0.5)).astype("uint8")
    assert drawn[0, 10, 10].tolist() == expected.tolist()
    assert (drawn[1, 20, 30] != drawn[0, 10, 10]).any()  # another class, another colour
    squeezed = visualization.draw_segmentation_masks(images, masks[..., 0], num_classes=3, ignore_index=0, alpha=0.5)
    np.testing.assert_array_equal(squeezed, drawn)  # (batch, height, width) masks too


def test_draw_masks_colors_alpha_and_channels_first():
    images, masks = segmentation_batch()
    colors = {0: (0, 0, 0), 1: (255, 0, 0), 2: (0, 255, 0)}
    opaque = visualization.draw_segmentation_masks(images, mk.ops.convert_to_tensor(masks), num_classes=3,
                                                   color_mapping=colors, alpha=1.0, ignore_index=0)
    assert opaque[0, 10, 10].tolist() == [255, 0, 0] and opaque[1, 20, 30].tolist() == [0, 255, 0]
    painted = visualization.draw_segmentation_masks(images, masks, num_classes=3, color_mapping=colors, blend=False)
    assert painted.dtype == np.float32 and painted[0, 0, 0].tolist() == [0.0, 0.0, 0.0]  # class 0 painted too
    channels_first = visualization.draw_segmentation_masks(images.transpose(0, 3, 1, 2), masks.transpose(0, 3, 1, 2),
                                                           num_classes=3, color_mapping=colors, alpha=1.0,
                                                           ignore_index=0, data_format="channels_first")
    np.testing.assert_array_equal(channels_first, opaque.transpose(0, 3, 1, 2))


def test_draw_masks_refuses_bad_input_clearly():
    images, masks = segmentation_batch()
    with pytest.raises(TypeError, match="integer segmentation_masks.*float32"):
        visualization.draw_segmentation_masks(images, masks.astype("float32"))
    with pytest.raises(ValueError, match="one class id per pixel"):
        visualization.draw_segmentation_masks(images, masks[:, :16])
    with pytest.raises(ValueError, match=r"masks of shape \(2, 32, 48\).*received \(1, 32, 48, 1\)"):
        visualization.draw_segmentation_masks(images, masks[:1])  # one mask for two images
    with pytest.raises(ValueError, match=r"received \(2, 32\)"):
        visualization.draw_segmentation_masks(images, masks[:, :, 0, 0])
    with pytest.raises(ValueError, match=r"draw_segmentation_masks expects a batch of images of rank 4.*\(32, 48, 3\)"):
        visualization.draw_segmentation_masks(images[0], masks[0])
    with pytest.raises(ValueError, match=r"classes \[2\] have none"):
        visualization.draw_segmentation_masks(images, masks, num_classes=3, color_mapping={0: (0, 0, 0), 1: (1, 1, 1)})
    with pytest.raises(ValueError, match="colours of 3 values"):
        visualization.draw_segmentation_masks(images, masks, num_classes=2, color_mapping={0: (0, 0), 1: (1, 1)})
    with pytest.raises(ValueError, match="data_format 'channels_last' or 'channels_first'"):
        visualization.draw_segmentation_masks(images, masks, data_format="NHWC")


def test_inferred_num_classes_leaves_the_ignored_id_out():
    images, masks = segmentation_batch()
    masks[0, 0, 0] = 255  # a "void" pixel, as in VOC-style masks
    colors = {0: (0, 0, 0), 1: (255, 0, 0), 2: (0, 255, 0)}  # no colour for 3..255 needed
    drawn = visualization.draw_segmentation_masks(images, masks, color_mapping=colors, alpha=1.0, ignore_index=255)
    assert drawn[0, 0, 0].tolist() == [0, 0, 200]  # the ignored pixel keeps the image
    assert drawn[0, 10, 10].tolist() == [255, 0, 0] and drawn[1, 20, 30].tolist() == [0, 255, 0]  # class 2 drawn
    assert drawn[0, 31, 0].tolist() == [0, 0, 0]  # class 0 too
    every_pixel_ignored = visualization.draw_segmentation_masks(images, np.full_like(masks, -1))
    np.testing.assert_array_equal(every_pixel_ignored, images)


def test_alpha_blends_each_pixel_as_keras_computes_it():
    images = np.arange(2 * 4 * 5 * 3, dtype=np.float32).reshape(2, 4, 5, 3) * 2.0
    masks = np.arange(2 * 4 * 5, dtype=np.int32).reshape(2, 4, 5, 1) % 3
    colors = {0: (10, 20, 30), 1: (250, 0, 125), 2: (0, 255, 7)}
    for alpha in (0.0, 0.25, 0.8, 1.0):
        drawn = visualization.draw_segmentation_masks(images, masks, num_classes=3, color_mapping=colors, alpha=alpha)
        palette = np.array([colors[index] for index in range(3)], dtype=np.float32)[masks[..., 0]]
        expected = (images * np.float32(1 - alpha) + palette * np.float32(alpha)).astype(np.uint8)
        np.testing.assert_array_equal(drawn, expected, err_msg=f"alpha {alpha}")
