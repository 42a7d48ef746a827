"""keras.visualization against Keras 3.15's outputs recorded on the same
inputs (``keras_visualization_cases.py``; ``fixtures/keras_visualization.npz``
written by ``fixtures/record_keras_visualization.py``): no TensorFlow or
OpenCV needed here.

Boxes and masks must be equal pixel for pixel. Labels are written in
minikeras's bitmap font, not OpenCV's Hershey font, so labelled images are
compared outside the text, and the text must start where Keras's does.
"""
import inspect
import json
import os

import numpy as np
import pytest

import minikeras as mk

from tests.visualization import keras_visualization_cases as cases

RECORDED = np.load(os.path.join(os.path.dirname(__file__), cases.FIXTURE))


def test_fixture_is_keras_3_15():
    assert str(RECORDED["keras_version"]).startswith("3.15")


def test_names_and_signatures_are_keras():
    signatures = json.loads(str(RECORDED["signatures"]))
    assert sorted(signatures) == sorted(mk.visualization.__all__)
    for name, keras_signature in signatures.items():
        assert str(inspect.signature(getattr(mk.visualization, name))) == keras_signature, name


@pytest.mark.parametrize("name", sorted({**cases.box_cases(), **cases.mask_cases()}))
def test_drawing_equals_keras(name):
    function, kwargs = {**cases.box_cases(), **cases.mask_cases()}[name]
    ours = getattr(mk.visualization, function)(**kwargs)
    keras = RECORDED[name]
    assert ours.shape == keras.shape and ours.dtype == keras.dtype
    np.testing.assert_array_equal(ours, keras)


def test_inferred_num_classes_draws_every_class():
    # Keras 3.15 infers num_classes as the largest id and leaves that class undrawn; minikeras infers
    # largest id + 1, which is what Keras draws when told that count (the recorded case).
    _, kwargs = cases.mask_cases()["masks_inferred_num_classes"]
    assert kwargs["num_classes"] == kwargs["segmentation_masks"].max() + 1
    inferred = mk.visualization.draw_segmentation_masks(**{**kwargs, "num_classes": None})
    np.testing.assert_array_equal(inferred, RECORDED["masks_inferred_num_classes"])


def _rows_and_columns(mask):
    rows, columns = np.nonzero(mask)
    return rows.min(), rows.max(), columns.min(), columns.max()


@pytest.mark.parametrize("name", sorted(cases.labelled_box_cases()))
def test_labelled_boxes_equal_keras_outside_the_text(name):
    function, kwargs = cases.labelled_box_cases()[name]
    ours = mk.visualization.draw_bounding_boxes(**kwargs)
    boxes_only = mk.visualization.draw_bounding_boxes(**{k: v for k, v in kwargs.items() if k != "class_mapping"})
    keras = RECORDED[name]
    for index in range(len(ours)):
        keras_text = (keras[index] != boxes_only[index]).any(axis=-1)
        our_text = (ours[index] != boxes_only[index]).any(axis=-1)
        assert keras_text.sum() > 40 and our_text.sum() > 40  # both wrote something
        outside = ~(keras_text | our_text)
        np.testing.assert_array_equal(ours[index][outside], keras[index][outside])
        keras_top, keras_bottom, keras_left, _ = _rows_and_columns(keras_text)
        our_top, our_bottom, our_left, _ = _rows_and_columns(our_text)
        assert abs(our_left - keras_left) <= 6  # the same anchor; Hershey glyphs start a few pixels in
        assert our_top < keras_bottom and keras_top < our_bottom  # on the same line
        color = np.asarray(kwargs.get("color", (128, 128, 128)), dtype=np.uint8)
        assert (ours[index][our_text & ~keras_text] == color).all()  # ink in the box colour


def test_galleries_show_what_keras_shows():
    plt = pytest.importorskip("matplotlib.pyplot")
    texts = json.loads(str(RECORDED["texts"]))
    for name, (function, kwargs) in cases.gallery_cases().items():
        plt.close("all")
        getattr(mk.visualization, function)(**kwargs)
        figure = plt.gcf()
        shown = [axis for axis in figure.axes if axis.images]
        assert [axis.get_title() for axis in shown] == texts[name]["titles"], name
        assert [len(figure.axes)] == texts[name]["grid"], name
        legend = figure.legends[0] if figure.legends else None
        assert ([text.get_text() for text in legend.get_texts()] if legend else []) == texts[name]["legend"]
        for index, axis in enumerate(shown):
            np.testing.assert_array_equal(np.asarray(axis.images[0].get_array()), RECORDED[f"{name}/image_{index}"],
                                          err_msg=f"{name}, image {index}")
        plt.close("all")
