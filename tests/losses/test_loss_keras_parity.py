"""Losses against Keras 3 itself (skipped where TensorFlow/Keras is not installed)."""
import os

import numpy
import pytest

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import minikeras as mk  # noqa: E402
from minikeras import losses  # noqa: E402


@pytest.fixture
def data(rng):
    n, c = 8, 5
    labels = rng.integers(0, c, n)
    probs = rng.dirichlet(numpy.ones(c), n).astype(numpy.float32)
    return {
        "labels": labels, "one_hot": numpy.eye(c, dtype=numpy.float32)[labels], "probs": probs,
        "logits": rng.normal(0, 2, (n, c)).astype(numpy.float32),
        "binary": (rng.random((n, c)) > 0.5).astype(numpy.float32),
        "values": rng.normal(size=(n, c)).astype(numpy.float32),
        "positive": rng.uniform(0.1, 2, (n, c)).astype(numpy.float32),
        "weights": rng.uniform(0, 2, n).astype(numpy.float32),
    }


CASES = [
    ("CategoricalCrossentropy", {"label_smoothing": 0.1}, "one_hot", "probs"),
    ("CategoricalCrossentropy", {"from_logits": True}, "one_hot", "logits"),
    ("SparseCategoricalCrossentropy", {}, "labels", "probs"),
    ("SparseCategoricalCrossentropy", {"from_logits": True, "ignore_class": 2}, "labels", "logits"),
    ("BinaryCrossentropy", {"label_smoothing": 0.2}, "binary", "probs"),
    ("BinaryCrossentropy", {"from_logits": True}, "binary", "logits"),
    ("MeanSquaredError", {}, "values", "logits"), ("MeanAbsoluteError", {}, "values", "logits"),
    ("MeanAbsolutePercentageError", {}, "values", "logits"),
    ("MeanSquaredLogarithmicError", {}, "positive", "probs"), ("Huber", {"delta": 0.5}, "values", "logits"),
    ("LogCosh", {}, "values", "logits"), ("CosineSimilarity", {}, "values", "logits"),
    ("KLDivergence", {}, "probs", "probs"), ("Poisson", {}, "positive", "probs"),
    ("Hinge", {}, "binary", "logits"), ("SquaredHinge", {}, "binary", "logits"),
    ("CategoricalHinge", {}, "one_hot", "logits"),
]


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none"])
@pytest.mark.parametrize("name, kwargs, true_key, pred_key", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_loss_matches_keras(data, name, kwargs, true_key, pred_key, reduction):
    y_true, y_pred, weights = data[true_key], data[pred_key], data["weights"]
    ours = getattr(losses, name)(reduction=reduction, **kwargs)(y_true, mk.tensor(y_pred), sample_weight=weights)
    theirs = getattr(keras.losses, name)(reduction=reduction, **kwargs)(y_true, y_pred, sample_weight=weights)
    numpy.testing.assert_allclose(ours.numpy(), numpy.asarray(theirs), rtol=2e-5, atol=1e-6)
