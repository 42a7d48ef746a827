"""Regression and loss-based metrics against NumPy on random data, with
sample weights, several batches and reset."""
import numpy
import pytest

import minikeras as mk
from minikeras import metrics

EPS = 1e-7

PER_SAMPLE = {
    metrics.MeanSquaredError: lambda y, p: ((y - p) ** 2).mean(-1),
    metrics.MeanAbsoluteError: lambda y, p: numpy.abs(y - p).mean(-1),
    metrics.MeanAbsolutePercentageError:
        lambda y, p: 100 * numpy.abs((y - p) / numpy.maximum(numpy.abs(y), EPS)).mean(-1),
    metrics.MeanSquaredLogarithmicError:
        lambda y, p: ((numpy.log1p(numpy.maximum(p, EPS)) - numpy.log1p(numpy.maximum(y, EPS))) ** 2).mean(-1),
    metrics.CosineSimilarity:
        lambda y, p: (y * p).sum(-1) / numpy.linalg.norm(y, axis=-1) / numpy.linalg.norm(p, axis=-1),
    metrics.LogCoshError: lambda y, p: numpy.log(numpy.cosh(p - y)).mean(-1),
    metrics.Poisson: lambda y, p: (p - y * numpy.log(p + EPS)).mean(-1),
    metrics.KLDivergence: lambda y, p: (y * numpy.log(y / p)).sum(-1),
}


@pytest.fixture
def batches(rng):
    return [(rng.uniform(0.1, 1, (n, 3)), rng.uniform(0.1, 1, (n, 3)), rng.uniform(0, 2, n)) for n in (6, 4)]


@pytest.mark.parametrize("cls", list(PER_SAMPLE), ids=lambda cls: cls.__name__)
def test_mean_of_per_sample_values(cls, batches):
    metric = cls()
    for y, p, w in batches:
        metric.update_state(y, mk.tensor(p), sample_weight=w)
    y, p, w = (numpy.concatenate(parts) for parts in zip(*batches))
    expected = (PER_SAMPLE[cls](y, p) * w).sum() / w.sum()
    assert isinstance(metric.result(), float)
    assert metric.result() == pytest.approx(expected, rel=1e-5)
    metric.reset_state()
    assert metric.result() == 0.0


def test_root_mean_squared_error(batches):
    metric = metrics.RootMeanSquaredError()
    for y, p, w in batches:
        metric.update_state(y, p, sample_weight=w)
    y, p, w = (numpy.concatenate(parts) for parts in zip(*batches))
    assert metric.result() == pytest.approx(numpy.sqrt((((y - p) ** 2).mean(-1) * w).sum() / w.sum()))


def test_crossentropy_metrics_match_the_losses(rng):
    labels = rng.integers(0, 3, 8)
    probs = rng.dirichlet(numpy.ones(3), 8)
    w = rng.uniform(0, 1, 8)
    reference = -numpy.log(probs[numpy.arange(8), labels])
    expected = (reference * w).sum() / w.sum()
    assert metrics.SparseCategoricalCrossentropy()(labels, probs, sample_weight=w) == pytest.approx(expected)
    assert metrics.CategoricalCrossentropy()(numpy.eye(3)[labels], probs, sample_weight=w) == pytest.approx(expected)
    y = (rng.random((8, 2)) > 0.5).astype(numpy.float64)
    p = rng.uniform(0.05, 0.95, (8, 2))
    bce = -(y * numpy.log(p) + (1 - y) * numpy.log(1 - p)).mean(-1)
    assert metrics.BinaryCrossentropy()(y, p, sample_weight=w) == pytest.approx((bce * w).sum() / w.sum())


def test_loss_based_metric_records_no_graph(rng):
    pred = mk.tensor(rng.random((4, 3)), requires_grad=True)
    metric = metrics.MeanMetricWrapper(mk.losses.mean_squared_error)
    metric.update_state(numpy.zeros((4, 3)), pred)
    assert pred.grad is None and isinstance(metric.result(), float)


def test_regression_shape_mismatch_raises():
    with pytest.raises(ValueError, match=r"mean_squared_error.*\(2, 3\).*\(2, 4\)"):
        metrics.MeanSquaredError().update_state(numpy.zeros((2, 3)), numpy.zeros((2, 4)))
