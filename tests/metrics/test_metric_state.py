"""Combining metric copies that replicas updated apart (metrics/state.py).

For every metric class: two copies, each given half of the batches, combine
into the result of one metric given all of them; state_arrays and
set_state_arrays round-trip (what the multi-worker trainer sums across
processes)."""
import copy

import numpy
import pytest

import minikeras as mk
from minikeras.metrics import state

M = mk.metrics
RNG = numpy.random.default_rng(0)
BINARY = (RNG.integers(0, 2, (40, 1)).astype("float32"), RNG.uniform(size=(40, 1)).astype("float32"))
_labels = RNG.integers(0, 4, 40)
CATEGORICAL = (numpy.eye(4, dtype="float32")[_labels], RNG.dirichlet(numpy.ones(4), 40).astype("float32"))
SPARSE = (_labels.astype("float32"), CATEGORICAL[1])
REGRESSION = (RNG.uniform(0.5, 2.0, (40, 3)).astype("float32"), RNG.uniform(0.5, 2.0, (40, 3)).astype("float32"))
MULTI_LABEL = (RNG.integers(0, 2, (40, 3)).astype("float32"), RNG.uniform(size=(40, 3)).astype("float32"))

CASES = [
    (M.AUC, {}, BINARY), (M.AUC, {"multi_label": True}, MULTI_LABEL), (M.Accuracy, {}, (_labels, RNG.integers(0, 4, 40))),
    (M.AutoAccuracy, {}, SPARSE), (M.BinaryAccuracy, {}, BINARY), (M.BinaryCrossentropy, {}, BINARY),
    (M.BinaryIoU, {}, BINARY), (M.CategoricalAccuracy, {}, CATEGORICAL),
    (M.CategoricalCrossentropy, {}, CATEGORICAL), (M.CategoricalHinge, {}, CATEGORICAL),
    (M.ConcordanceCorrelation, {}, REGRESSION), (M.CosineSimilarity, {}, REGRESSION),
    (M.F1Score, {"average": "macro", "threshold": 0.5}, MULTI_LABEL), (M.FBetaScore, {"beta": 2.0}, MULTI_LABEL),
    (M.FalseNegatives, {}, BINARY), (M.FalsePositives, {}, BINARY), (M.Hinge, {}, BINARY),
    (M.IoU, {"num_classes": 4, "target_class_ids": [0, 2]}, (_labels, RNG.integers(0, 4, 40))),
    (M.KLDivergence, {}, CATEGORICAL), (M.LogCoshError, {}, REGRESSION), (M.MeanAbsoluteError, {}, REGRESSION),
    (M.MeanAbsolutePercentageError, {}, REGRESSION),
    (M.MeanIoU, {"num_classes": 4}, (_labels, RNG.integers(0, 4, 40))), (M.MeanSquaredError, {}, REGRESSION),
    (M.MeanSquaredLogarithmicError, {}, REGRESSION),
    (M.OneHotIoU, {"num_classes": 4, "target_class_ids": [1, 3]}, CATEGORICAL),
    (M.OneHotMeanIoU, {"num_classes": 4}, CATEGORICAL), (M.PearsonCorrelation, {}, REGRESSION),
    (M.Poisson, {}, REGRESSION), (M.Precision, {"thresholds": [0.3, 0.6]}, BINARY),
    (M.PrecisionAtRecall, {"recall": 0.5}, BINARY), (M.R2Score, {}, REGRESSION), (M.Recall, {}, BINARY),
    (M.RecallAtPrecision, {"precision": 0.5}, BINARY), (M.RootMeanSquaredError, {}, REGRESSION),
    (M.SensitivityAtSpecificity, {"specificity": 0.5}, BINARY), (M.SparseCategoricalAccuracy, {}, SPARSE),
    (M.SparseCategoricalCrossentropy, {}, SPARSE), (M.SparseTopKCategoricalAccuracy, {"k": 2}, SPARSE),
    (M.SpecificityAtSensitivity, {"sensitivity": 0.5}, BINARY), (M.SquaredHinge, {}, BINARY),
    (M.TopKCategoricalAccuracy, {"k": 2}, CATEGORICAL), (M.TrueNegatives, {}, BINARY),
    (M.TruePositives, {}, BINARY),
]


def _result(metric):
    result = metric.result()
    return numpy.asarray(result if not isinstance(result, dict) else list(result.values()), dtype=numpy.float64)


def test_every_metric_class_is_covered():
    covered = {cls for cls, _, _ in CASES} | {M.Mean, M.Sum, M.MeanMetricWrapper, M.Metric}
    classes = {getattr(M, name) for name in dir(M) if isinstance(getattr(M, name), type)
               and issubclass(getattr(M, name), M.Metric)}
    assert classes <= covered, sorted(cls.__name__ for cls in classes - covered)


@pytest.mark.parametrize("cls,kwargs,data", CASES, ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_copies_updated_apart_combine_into_one_metric(cls, kwargs, data):
    y_true, y_pred = data
    whole = cls(**kwargs)
    copies = [cls(**kwargs) for _ in range(3)]
    for start in range(0, 40, 10):  # batches of 10, dealt to the copies in turn (the last copy gets none)
        whole.update_state(y_true[start:start + 10], y_pred[start:start + 10])
        copies[(start // 10) % 2].update_state(y_true[start:start + 10], y_pred[start:start + 10])
    before = [_result(item) for item in copies]
    combined = state.combined(copies)
    numpy.testing.assert_allclose(_result(combined), _result(whole), rtol=1e-6, atol=1e-9)
    for item, result in zip(copies, before):  # the copies themselves are untouched
        numpy.testing.assert_array_equal(_result(item), result)


@pytest.mark.parametrize("cls,kwargs,data", CASES[:12], ids=[c.__name__ for c, _, _ in CASES[:12]])
def test_state_arrays_round_trip_and_sum(cls, kwargs, data):
    y_true, y_pred = data
    first, second, whole = cls(**kwargs), cls(**kwargs), cls(**kwargs)
    first.update_state(y_true[:20], y_pred[:20])
    second.update_state(y_true[20:], y_pred[20:])
    whole.update_state(y_true, y_pred)
    summed = [array + other for (_, array), (_, other) in zip(state.state_arrays(first), state.state_arrays(second))]
    target = copy.deepcopy(first)
    assert state.set_state_arrays(target, summed) == len(summed)
    numpy.testing.assert_allclose(_result(target), _result(whole), rtol=1e-6, atol=1e-9)


def test_keras_style_metric_variables_combine_by_their_aggregation():
    class Counts(M.Metric):
        def __init__(self):
            super().__init__(name="counts")
            self.total = self.add_variable(shape=(), name="total")  # aggregation "sum", Keras's default
            self.last = self.add_variable(shape=(), name="last", aggregation="only_first_replica")
            self.average = self.add_variable(shape=(), name="average", aggregation="mean")

        def update_state(self, values):
            values = numpy.asarray(values, "float32")
            self.total.assign_add(values.sum())
            self.last.assign(values[-1])
            self.average.assign(values.mean())

        def result(self):
            return float(self.total.numpy())

    first, second = Counts(), Counts()
    first.update_state([1.0, 2.0])
    second.update_state([3.0, 5.0])
    combined = state.combined([first, second])
    assert combined.total.numpy() == 11.0
    assert combined.last.numpy() == 2.0
    assert combined.average.numpy() == 2.75
