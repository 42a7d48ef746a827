"""Precision, Recall, the confusion counts and AUC against NumPy references
(brute-force thresholds, the exact ROC AUC), with weights, several batches
and reset."""
import numpy
import pytest

from minikeras import metrics

EPS = 1e-7


def _counts(y, p, thresholds, weights):
    """Weighted tp, fp, tn, fn per threshold by brute force."""
    y, p, w = (numpy.ravel(a).astype(numpy.float64) for a in numpy.broadcast_arrays(y, p, weights))
    above = p[None, :] > numpy.asarray(thresholds, numpy.float64)[:, None]
    positive = y != 0
    return (
        (above & positive) @ w, (above & ~positive) @ w, (~above & ~positive) @ w, (~above & positive) @ w,
    )


@pytest.fixture
def binary_batches(rng):
    return [
        ((rng.random(n) > 0.4).astype(numpy.float32), rng.random(n).astype(numpy.float32), rng.uniform(0, 2, n))
        for n in (40, 25)
    ]


def _concat(batches):
    return [numpy.concatenate(parts) for parts in zip(*batches)]


@pytest.mark.parametrize("thresholds", [None, 0.3, [0.1, 0.5, 0.9], [0.0, 0.25, 0.5, 0.75, 1.0]])
def test_precision_recall_and_counts(binary_batches, thresholds):
    y, p, w = _concat(binary_batches)
    listed = [0.5] if thresholds is None else numpy.atleast_1d(thresholds)
    tp, fp, tn, fn = _counts(y, p, listed, w)
    created = {
        "precision": metrics.Precision(thresholds), "recall": metrics.Recall(thresholds),
        "tp": metrics.TruePositives(thresholds), "fp": metrics.FalsePositives(thresholds),
        "tn": metrics.TrueNegatives(thresholds), "fn": metrics.FalseNegatives(thresholds),
    }
    precision = numpy.divide(tp, tp + fp, out=numpy.zeros_like(tp), where=tp + fp > 0)  # 0/0 counts as 0
    recall = numpy.divide(tp, tp + fn, out=numpy.zeros_like(tp), where=tp + fn > 0)
    expected = {"precision": precision, "recall": recall, "tp": tp, "fp": fp, "tn": tn, "fn": fn}
    for key, metric in created.items():
        for batch_y, batch_p, batch_w in binary_batches:
            metric.update_state(batch_y, batch_p, sample_weight=batch_w)
        result = metric.result()
        if len(listed) == 1:
            assert isinstance(result, float)
        numpy.testing.assert_allclose(result, expected[key] if len(listed) > 1 else expected[key][0], rtol=1e-6)
        metric.reset_state()
        assert numpy.all(numpy.asarray(metric.result()) == 0)


def test_precision_recall_with_top_k_and_class_id(rng):
    y = numpy.eye(5)[rng.integers(0, 5, 30)]
    p = rng.random((30, 5))
    w = rng.uniform(0, 1, 30)
    top2 = numpy.zeros_like(p, dtype=bool)
    numpy.put_along_axis(top2, numpy.argsort(-p, axis=1)[:, :2], True, axis=1)
    tp = (top2 & (y == 1)) * w[:, None]
    fp = (top2 & (y == 0)) * w[:, None]
    fn = (~top2 & (y == 1)) * w[:, None]
    assert metrics.Precision(top_k=2)(y, p, sample_weight=w) == pytest.approx(tp.sum() / (tp.sum() + fp.sum()))
    assert metrics.Recall(top_k=2)(y, p, sample_weight=w) == pytest.approx(tp.sum() / (tp.sum() + fn.sum()))
    ctp, cfp, _, cfn = _counts(y[:, 3], p[:, 3], [0.5], w)
    assert metrics.Precision(class_id=3)(y, p, sample_weight=w) == pytest.approx(ctp[0] / (ctp[0] + cfp[0]))
    assert metrics.Recall(class_id=3)(y, p, sample_weight=w) == pytest.approx(ctp[0] / (ctp[0] + cfn[0]))


def test_precision_is_zero_when_nothing_is_predicted_positive():
    assert metrics.Precision()([1, 0], [0.1, 0.2]) == 0.0
    assert metrics.Recall()([0, 0], [0.9, 0.2]) == 0.0


def _auc_reference(y, p, w, num_thresholds, curve, summation):
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    thresholds = [-EPS] + inner + [1 + EPS]
    tp, fp, tn, fn = _counts(y, p, thresholds, w)

    def div(a, b):
        return numpy.divide(a, b, out=numpy.zeros_like(a), where=b != 0)

    recall = div(tp, tp + fn)
    x, y_axis = (div(fp, fp + tn), recall) if curve == "ROC" else (recall, div(tp, tp + fp))
    pair = numpy.stack([y_axis[:-1], y_axis[1:]])
    heights = {"interpolation": pair.mean(0), "minoring": pair.min(0), "majoring": pair.max(0)}[summation]
    return float(((x[:-1] - x[1:]) * heights).sum())


@pytest.mark.parametrize("curve, summation", [("ROC", "interpolation"), ("ROC", "minoring"), ("ROC", "majoring"),
                                              ("PR", "minoring"), ("PR", "majoring")])
@pytest.mark.parametrize("num_thresholds", [200, 9])
def test_auc_matches_riemann_sum_over_thresholds(binary_batches, curve, summation, num_thresholds):
    y, p, w = _concat(binary_batches)
    metric = metrics.AUC(num_thresholds=num_thresholds, curve=curve, summation_method=summation)
    for batch in binary_batches:
        metric.update_state(batch[0], batch[1], sample_weight=batch[2])
    assert metric.result() == pytest.approx(_auc_reference(y, p, w, num_thresholds, curve, summation), abs=1e-6)


def test_roc_auc_approaches_the_exact_value(rng):
    y = (rng.random(400) > 0.5).astype(numpy.float32)
    p = numpy.clip(0.5 * y + 0.6 * rng.random(400), 0, 1)
    positives, negatives = p[y == 1], p[y == 0]
    exact = (positives[:, None] > negatives[None, :]).mean()  # Mann-Whitney
    assert metrics.AUC(num_thresholds=1000)(y, p) == pytest.approx(exact, abs=2e-3)


def test_pr_auc_interpolation_is_one_for_separable_data_and_tracks_the_majoring_sum(rng):
    y = numpy.array([0, 0, 1, 1, 1], numpy.float32)
    assert metrics.AUC(curve="PR")(y, [0.1, 0.2, 0.7, 0.8, 0.9]) == pytest.approx(1.0, abs=1e-6)
    y = (rng.random(300) > 0.5).astype(numpy.float32)
    p = numpy.clip(0.3 * y + 0.7 * rng.random(300), 0, 1)
    interpolated = metrics.AUC(curve="PR")(y, p)
    lower = metrics.AUC(curve="PR", summation_method="minoring")(y, p)
    upper = metrics.AUC(curve="PR", summation_method="majoring")(y, p)
    assert lower - 1e-3 <= interpolated <= upper + 1e-3


def test_auc_predictions_on_thresholds_and_edges():
    metric = metrics.AUC(num_thresholds=3)
    assert metric([0, 0, 1, 1], [0.0, 0.5, 0.5, 1.0]) == pytest.approx(
        _auc_reference(numpy.array([0, 0, 1, 1.0]), numpy.array([0.0, 0.5, 0.5, 1.0]), numpy.ones(4), 3, "ROC",
                       "interpolation")
    )


def test_auc_multi_label_and_label_weights(rng):
    y = (rng.random((50, 3)) > 0.5).astype(numpy.float32)
    p = rng.random((50, 3))
    per_label = [_auc_reference(y[:, j], p[:, j], numpy.ones(50), 200, "ROC", "interpolation") for j in range(3)]
    assert metrics.AUC(multi_label=True)(y, p) == pytest.approx(numpy.mean(per_label), abs=1e-6)
    weights = numpy.array([1.0, 2.0, 0.5])
    weighted = metrics.AUC(multi_label=True, label_weights=weights)(y, p)
    assert weighted == pytest.approx((numpy.array(per_label) * weights).sum() / weights.sum(), abs=1e-6)
    flat = _auc_reference(y, p, numpy.broadcast_to(weights, y.shape), 200, "ROC", "interpolation")
    assert metrics.AUC(label_weights=weights)(y, p) == pytest.approx(flat, abs=1e-6)


def test_auc_from_logits_and_reset(rng):
    y = (rng.random(30) > 0.5).astype(numpy.float32)
    z = rng.normal(0, 3, 30)
    metric = metrics.AUC(from_logits=True)
    assert metric(y, z) == pytest.approx(metrics.AUC()(y, 1 / (1 + numpy.exp(-z))))
    metric.reset_state()
    assert metric.result() == 0.0
    assert metric.true_positives.sum() == 0


def test_auc_config_round_trip():
    metric = metrics.AUC(num_thresholds=50, curve="PR", summation_method="majoring", name="pr")
    clone = metrics.AUC.from_config(metric.get_config())
    assert clone.get_config() == metric.get_config()
    explicit = metrics.AUC(thresholds=[0.3, 0.6])
    assert explicit.thresholds == pytest.approx([-EPS, 0.3, 0.6, 1 + EPS])
    assert metrics.AUC.from_config(explicit.get_config()).thresholds == explicit.thresholds


def test_confusion_bad_arguments_raise():
    with pytest.raises(ValueError, match=r"Threshold values must be in \[0, 1\]"):
        metrics.Precision(thresholds=[0.5, 1.5])
    with pytest.raises(ValueError, match="curve"):
        metrics.AUC(curve="ROCK")
    with pytest.raises(ValueError, match="summation_method"):
        metrics.AUC(summation_method="trapezoid")
    with pytest.raises(ValueError, match="num_thresholds"):
        metrics.AUC(num_thresholds=1)
    with pytest.raises(ValueError, match=r"precision.*\(3,\).*\(4,\)"):
        metrics.Precision().update_state([0, 1, 1], [0.2, 0.3, 0.4, 0.5])
    with pytest.raises(ValueError, match="class_id"):
        metrics.Recall(class_id=0).update_state([0, 1], [0.2, 0.3])
