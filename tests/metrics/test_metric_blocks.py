"""Issue 25's metrics streamed batch by batch against Keras 3.15's recorded
results: F-scores, R2, the IoU family, correlations and the rate-at-rate
metrics; configs, lookups and bad arguments."""
import json

import numpy
import pytest

import minikeras as mk
from minikeras import metrics
from tests.metrics.keras_blocks_cases import BATCHES, CASES, CONFIGS, FIXTURE, FUNCTIONS


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return dict(data)


@pytest.fixture(scope="module")
def keras_configs():
    with open(CONFIGS) as handle:
        return json.load(handle)


def _batch(recorded, index):
    prefix = f"input/{index}/"
    return {key[len(prefix):]: value for key, value in recorded.items() if key.startswith(prefix)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_metric_streams_like_keras(recorded, case):
    class_name, kwargs, true_key, pred_key, weight_key = CASES[case]
    metric = getattr(metrics, class_name)(**kwargs)
    for index in range(BATCHES):
        batch = _batch(recorded, index)
        weights = None if weight_key is None else batch[weight_key]
        # Predictions arrive as device Tensors, as in a training step.
        metric.update_state(batch[true_key], mk.tensor(batch[pred_key]), sample_weight=weights)
        numpy.testing.assert_allclose(metric.result(), recorded[f"{case}/{index}"], rtol=1e-5, atol=1e-6,
                                      err_msg=f"{case} after batch {index}")
    metric.reset_state()
    batch = _batch(recorded, 0)
    metric.update_state(batch[true_key], batch[pred_key], sample_weight=None if weight_key is None else
                        batch[weight_key])
    numpy.testing.assert_allclose(metric.result(), recorded[f"{case}/0"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CASES))
def test_metric_config_matches_keras(case, keras_configs):
    class_name, kwargs, *_ = CASES[case]
    metric = getattr(metrics, class_name)(**kwargs)
    ours, theirs = metric.get_config(), dict(keras_configs[case]["config"])
    # Keras makes names unique per session (binary_io_u_1); the base name is ours.
    assert theirs.pop("name").startswith(ours.pop("name"))
    assert ours == theirs
    clone = metrics.deserialize(metrics.serialize(metric))
    assert type(clone) is type(metric) and clone.get_config() == metric.get_config()


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_metric_functions_match_keras(recorded, name):
    true_key, pred_key = FUNCTIONS[name]
    batch = _batch(recorded, 0)
    out = getattr(metrics, name)(batch[true_key], mk.tensor(batch[pred_key]))
    out = out.numpy() if hasattr(out, "numpy") else out
    numpy.testing.assert_allclose(out, recorded[f"function/{name}"], rtol=1e-5, atol=1e-6)


def test_loss_functions_are_exported_under_metrics():
    from minikeras import losses

    assert metrics.binary_focal_crossentropy is losses.binary_focal_crossentropy
    assert metrics.kl_divergence is losses.kl_divergence
    # The snake-case names still build the metric classes in get().
    assert isinstance(metrics.get("mean_squared_error"), metrics.MeanSquaredError)
    assert isinstance(metrics.get("f1_score"), metrics.F1Score)


def test_metrics_train_in_fit():
    model = mk.Sequential([mk.layers.Input((3,)), mk.layers.Dense(4, activation="softmax")])
    model.compile("sgd", "categorical_crossentropy",
                  metrics=[metrics.F1Score(average="macro"), metrics.OneHotMeanIoU(4), metrics.R2Score()])
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype("float32")
    y = numpy.eye(4, dtype="float32")[rng.integers(0, 4, 32)]
    logs = model.evaluate(x, y, batch_size=8, return_dict=True, verbose=0)
    for name in ("f1_score", "one_hot_mean_io_u", "r2_score"):
        assert numpy.isfinite(logs[name])


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="average"):
        metrics.F1Score(average="median")
    with pytest.raises(ValueError, match="beta"):
        metrics.FBetaScore(beta=2)
    with pytest.raises(ValueError, match="threshold"):
        metrics.F1Score(threshold=1.5)
    with pytest.raises(ValueError, match="2D inputs"):
        metrics.F1Score().update_state(numpy.zeros(3), numpy.zeros(3))
    with pytest.raises(ValueError, match="class_aggregation"):
        metrics.R2Score(class_aggregation="median")
    with pytest.raises(ValueError, match="out of range"):
        metrics.IoU(num_classes=2, target_class_ids=[2])
    with pytest.raises(ValueError, match="range"):
        metrics.PrecisionAtRecall(recall=1.5)
    with pytest.raises(ValueError, match="num_thresholds"):
        metrics.RecallAtPrecision(0.5, num_thresholds=0)
