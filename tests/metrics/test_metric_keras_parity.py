"""Metrics against Keras 3 itself (skipped where TensorFlow/Keras is not installed)."""
import os

import numpy
import pytest

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from minikeras import metrics  # noqa: E402


def _batches(rng, shape, kind):
    out = []
    for _ in range(3):
        if kind == "binary":
            y = (rng.random(shape) > 0.4).astype(numpy.float32)
            p = numpy.round(rng.random(shape) * 8) / 8  # scores on and between thresholds
        else:
            y = numpy.eye(shape[-1], dtype=numpy.float32)[rng.integers(0, shape[-1], shape[0])]
            p = rng.random(shape)
        out.append((y, p.astype(numpy.float32), rng.uniform(0, 2, shape[0]).astype(numpy.float32)))
    return out


CASES = [
    ("Precision", {}, "binary"), ("Recall", {}, "binary"),
    ("Precision", {"thresholds": [0.0, 0.25, 0.5, 0.75, 1.0]}, "binary"),
    ("Recall", {"thresholds": [0.1, 0.5, 0.9]}, "binary"),
    ("Precision", {"top_k": 2}, "categorical"), ("Recall", {"class_id": 1}, "categorical"),
    ("TruePositives", {}, "binary"), ("FalseNegatives", {"thresholds": [0.2, 0.6]}, "binary"),
    ("AUC", {}, "binary"), ("AUC", {"curve": "PR"}, "binary"),
    ("AUC", {"num_thresholds": 9, "summation_method": "minoring"}, "binary"),
    ("AUC", {"curve": "PR", "summation_method": "majoring"}, "binary"),
    ("AUC", {"thresholds": [0.2, 0.5, 0.6]}, "binary"), ("AUC", {"multi_label": True}, "binary"),
    ("BinaryAccuracy", {}, "binary"), ("CategoricalAccuracy", {}, "categorical"),
    ("TopKCategoricalAccuracy", {"k": 2}, "categorical"),
]


@pytest.mark.parametrize("name, kwargs, kind", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_metric_matches_keras(rng, name, kwargs, kind):
    ours, theirs = getattr(metrics, name)(**kwargs), getattr(keras.metrics, name)(**kwargs)
    for y, p, w in _batches(rng, (40, 3) if kind == "binary" else (40, 5), kind):
        ours.update_state(y, p, sample_weight=w)
        theirs.update_state(y, p, sample_weight=w)
    numpy.testing.assert_allclose(ours.result(), numpy.asarray(theirs.result()), rtol=1e-5, atol=1e-6)
    ours.reset_state()
    theirs.reset_state()
    y, p, w = _batches(rng, (40, 3) if kind == "binary" else (40, 5), kind)[0]
    numpy.testing.assert_allclose(ours(y, p), numpy.asarray(theirs(y, p)), rtol=1e-5, atol=1e-6)
