"""Accuracy metrics against NumPy on random data, with sample weights,
several batches, and reset."""
import numpy
import pytest

import minikeras as mk
from minikeras import metrics


def _weighted_mean(values, weights):
    return float((values * weights).sum() / weights.sum())


@pytest.fixture
def batches(rng):
    out = []
    for size in (7, 5):
        labels = rng.integers(0, 4, size)
        scores = rng.random((size, 4)).astype(numpy.float32)
        out.append((labels, scores, rng.uniform(0, 2, size)))
    return out


def _run(metric, batches, convert=lambda labels, scores: (labels, scores)):
    for labels, scores, weights in batches:
        metric.update_state(*convert(labels, scores), sample_weight=weights)
    return metric.result()


def test_categorical_and_sparse_categorical_accuracy(batches):
    labels = numpy.concatenate([b[0] for b in batches])
    scores = numpy.concatenate([b[1] for b in batches])
    weights = numpy.concatenate([b[2] for b in batches])
    expected = _weighted_mean(scores.argmax(1) == labels, weights)
    assert _run(metrics.CategoricalAccuracy(), batches, lambda l, s: (numpy.eye(4)[l], s)) == pytest.approx(expected)
    assert _run(metrics.SparseCategoricalAccuracy(), batches) == pytest.approx(expected)
    column = metrics.SparseCategoricalAccuracy()
    assert _run(column, batches, lambda l, s: (l[:, None].astype(numpy.float32), mk.tensor(s))) == pytest.approx(
        expected
    )
    assert isinstance(column.result(), float)


def test_top_k_accuracies(batches):
    labels = numpy.concatenate([b[0] for b in batches])
    scores = numpy.concatenate([b[1] for b in batches])
    weights = numpy.concatenate([b[2] for b in batches])
    rank = (scores > scores[numpy.arange(len(labels)), labels][:, None]).sum(1)  # classes scoring higher
    for k in (1, 2, 3):
        expected = _weighted_mean(rank < k, weights)
        assert _run(metrics.SparseTopKCategoricalAccuracy(k=k), batches) == pytest.approx(expected)
        top_k = metrics.TopKCategoricalAccuracy(k=k)
        assert _run(top_k, batches, lambda l, s: (numpy.eye(4)[l], s)) == pytest.approx(expected)


def test_top_k_counts_ties_at_the_boundary_as_in():
    scores = numpy.array([[0.5, 0.5, 0.5, 0.1]])
    assert metrics.sparse_top_k_categorical_accuracy([2], scores, k=1).tolist() == [1.0]
    assert metrics.sparse_top_k_categorical_accuracy([3], scores, k=3).tolist() == [0.0]
    assert metrics.sparse_top_k_categorical_accuracy([3], scores, k=4).tolist() == [1.0]


def test_binary_accuracy_threshold_and_shapes(rng):
    y = (rng.random(20) > 0.5).astype(numpy.float32)
    p = rng.random(20).astype(numpy.float32)
    weights = rng.uniform(0, 1, 20)
    for threshold in (0.5, 0.8):
        expected = _weighted_mean((p > threshold) == y, weights)
        metric = metrics.BinaryAccuracy(threshold=threshold)
        metric.update_state(y, p[:, None], sample_weight=weights)  # (N,) labels, (N, 1) predictions
        assert metric.result() == pytest.approx(expected)
    multi_y = (rng.random((6, 3)) > 0.5).astype(numpy.float32)
    multi_p = rng.random((6, 3))
    w = rng.uniform(0, 1, 6)
    expected = _weighted_mean(((multi_p > 0.5) == multi_y).mean(1), w)
    assert metrics.BinaryAccuracy()(multi_y, multi_p, sample_weight=w) == pytest.approx(expected)


def test_exact_accuracy():
    assert metrics.Accuracy()([1, 2, 3, 4], [0, 2, 3, 4]) == 0.75


def test_sequence_accuracy_weights_each_sample(rng):
    labels = rng.integers(0, 3, (4, 5))
    scores = rng.random((4, 5, 3))
    weights = numpy.array([1.0, 0.0, 2.0, 0.5])
    per_sample = (scores.argmax(-1) == labels).mean(1)
    result = metrics.SparseCategoricalAccuracy()(labels, scores, sample_weight=weights)
    assert result == pytest.approx(_weighted_mean(per_sample, weights))
    per_step = rng.uniform(0, 1, (4, 5))
    result = metrics.SparseCategoricalAccuracy()(labels, scores, sample_weight=per_step)
    assert result == pytest.approx(_weighted_mean(scores.argmax(-1) == labels, per_step))


def test_reset_and_call_return_running_result(batches):
    metric = metrics.SparseCategoricalAccuracy()
    first = metric(batches[0][0], batches[0][1])
    assert first == pytest.approx(numpy.mean(batches[0][1].argmax(1) == batches[0][0]))
    metric.reset_state()
    assert metric.result() == 0.0
    assert metric(batches[1][0], batches[1][1]) == pytest.approx(numpy.mean(batches[1][1].argmax(1) == batches[1][0]))


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match=r"sparse_categorical_accuracy.*\(3,\).*\(2, 4\)"):
        metrics.SparseCategoricalAccuracy().update_state([0, 1, 2], numpy.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"categorical_accuracy.*\(2, 3\).*\(2, 4\)"):
        metrics.CategoricalAccuracy().update_state(numpy.zeros((2, 3)), numpy.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"sample_weight of shape \(3,\)"):
        metrics.SparseCategoricalAccuracy().update_state([0, 1], numpy.zeros((2, 4)), sample_weight=[1, 1, 1])
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        metrics.SparseTopKCategoricalAccuracy(k=2).update_state([0, 7], numpy.zeros((2, 4)))
