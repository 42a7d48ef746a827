"""Metric base classes (Mean, Sum, MeanMetricWrapper), get/resolve with the
Keras rule for "accuracy", configs, and unknown names."""
import numpy
import pytest

import minikeras as mk
from minikeras import losses, metrics


def test_mean_and_sum_with_weights(rng):
    values = rng.random((6, 3))
    weights = rng.uniform(0, 1, 6)
    mean = metrics.Mean()
    mean.update_state(values[:4], sample_weight=weights[:4])
    mean.update_state(values[4:], sample_weight=weights[4:])
    assert mean.result() == pytest.approx((values.mean(1) * weights).sum() / weights.sum())
    full = rng.uniform(0, 1, (6, 3))
    assert metrics.Mean()(values, sample_weight=full) == pytest.approx((values * full).sum() / full.sum())
    total = metrics.Sum()
    total.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
    assert total.result() == 4.0
    assert metrics.Mean()(mk.tensor([1.0, 3.0, 5.0, 7.0])) == 4.0
    assert metrics.Mean().result() == 0.0  # nothing seen: 0, not nan


def test_mean_metric_wrapper_with_user_function():
    def absolute_error(y_true, y_pred):
        return numpy.abs(numpy.asarray(y_true) - numpy.asarray(y_pred))

    metric = metrics.MeanMetricWrapper(absolute_error)
    assert metric.name == "absolute_error"
    assert metric([1.0, 2.0], [1.5, 2.0]) == 0.25
    assert metric([0.0], [1.0]) == pytest.approx(0.5)


@pytest.mark.parametrize("name, cls", [
    ("categorical_accuracy", metrics.CategoricalAccuracy), ("sparse_categorical_accuracy",
                                                            metrics.SparseCategoricalAccuracy),
    ("binary_accuracy", metrics.BinaryAccuracy), ("top_k_categorical_accuracy", metrics.TopKCategoricalAccuracy),
    ("sparse_top_k_categorical_accuracy", metrics.SparseTopKCategoricalAccuracy), ("mse", metrics.MeanSquaredError),
    ("mae", metrics.MeanAbsoluteError), ("precision", metrics.Precision), ("recall", metrics.Recall),
    ("auc", metrics.AUC), ("AUC", metrics.AUC), ("Precision", metrics.Precision),
    ("binary_crossentropy", metrics.BinaryCrossentropy), ("accuracy", metrics.AutoAccuracy),
    ("acc", metrics.AutoAccuracy),
])
def test_get_by_keras_name(name, cls):
    assert type(metrics.get(name)) is cls


def test_get_other_identifiers():
    metric = metrics.Recall(thresholds=0.3)
    assert metrics.get(metric) is metric
    assert isinstance(metrics.get(metrics.AUC), metrics.AUC)
    wrapped = metrics.get(losses.mean_absolute_error)
    assert isinstance(wrapped, metrics.MeanMetricWrapper) and wrapped.name == "mean_absolute_error"
    assert metrics.get(None) is None
    config = {"class_name": "BinaryAccuracy", "config": {"threshold": 0.7}}
    assert metrics.get(config).threshold == 0.7


def test_unknown_metric_names_raise_listing_known_ones():
    with pytest.raises(ValueError, match=r"Unknown metric 'accuracyy'.*sparse_categorical_accuracy"):
        metrics.get("accuracyy")
    with pytest.raises(ValueError, match="Could not interpret"):
        metrics.get(3.5)
    with pytest.raises(ValueError, match="Unknown metric"):
        metrics.resolve("f2_score")


@pytest.mark.parametrize("loss, y_true_shape, y_pred_shape, expected", [
    ("binary_crossentropy", None, (None, 3), metrics.BinaryAccuracy),  # multi-label outputs
    (losses.BinaryCrossentropy(from_logits=True), None, (None, 1), metrics.BinaryAccuracy),
    ("mse", None, (None, 1), metrics.BinaryAccuracy),  # last axis of size 1
    ("sparse_categorical_crossentropy", None, (None, 10), metrics.SparseCategoricalAccuracy),
    (losses.SparseCategoricalCrossentropy(), None, (None, 10), metrics.SparseCategoricalAccuracy),
    (losses.sparse_categorical_crossentropy, None, (None, 10), metrics.SparseCategoricalAccuracy),
    ("categorical_crossentropy", None, (None, 10), metrics.CategoricalAccuracy),
    (losses.LossFunctionWrapper(losses.categorical_crossentropy), (None, 10), (None, 10),
     metrics.CategoricalAccuracy),
    ("mse", (32,), (32, 10), metrics.SparseCategoricalAccuracy),  # Keras 3's shape rule
    ("mse", (32, 1), (32, 10), metrics.SparseCategoricalAccuracy),
    ("mse", (32, 10), (32, 10), metrics.CategoricalAccuracy),
    (None, None, None, metrics.CategoricalAccuracy),
])
def test_resolve_accuracy_follows_keras(loss, y_true_shape, y_pred_shape, expected):
    metric = metrics.resolve_accuracy(loss, y_true_shape, y_pred_shape, name="acc")
    assert type(metric) is expected and metric.name == "acc"


def test_resolve_names_metrics_by_their_string_and_decides_accuracy_late_when_needed(rng):
    assert metrics.resolve("mse").name == "mse"
    assert metrics.resolve("accuracy", "categorical_crossentropy", y_pred_shape=(None, 4)).name == "accuracy"
    assert type(metrics.get_for_compile("acc", "sparse_categorical_crossentropy", (None, 4))) is \
        metrics.SparseCategoricalAccuracy
    late = metrics.get_for_compile("accuracy", "mse", (None, 4))  # labels' shape still unknown
    assert type(late) is metrics.AutoAccuracy
    labels = rng.integers(0, 4, 10)
    scores = rng.random((10, 4))
    assert late(labels, scores) == pytest.approx(numpy.mean(scores.argmax(1) == labels))
    assert type(late.resolved) is metrics.SparseCategoricalAccuracy
    late.reset_state()
    assert late.result() == 0.0
    one_hot = metrics.get("accuracy")
    assert one_hot(numpy.eye(4)[labels], scores) == pytest.approx(numpy.mean(scores.argmax(1) == labels))
    binary = metrics.get("accuracy")
    assert binary([[1.0], [0.0]], [[0.7], [0.9]]) == 0.5


@pytest.mark.parametrize("metric", [
    metrics.BinaryAccuracy(threshold=0.3, name="b"), metrics.TopKCategoricalAccuracy(k=3),
    metrics.Precision(thresholds=[0.2, 0.4], class_id=1), metrics.Recall(top_k=2), metrics.AUC(curve="PR"),
    metrics.MeanSquaredError(name="m"), metrics.CategoricalCrossentropy(label_smoothing=0.1), metrics.Mean(),
], ids=lambda m: type(m).__name__)
def test_config_round_trip(metric):
    clone = metrics.deserialize(metrics.serialize(metric))
    assert type(clone) is type(metric) and clone.get_config() == metric.get_config()
