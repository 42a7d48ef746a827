"""Issue 25's losses: focal, Dice, Tversky, Circle, generalized cross-entropy
and CTC against the values recorded from Keras 3.15, float64 gradients,
configs, names and bad input."""
import itertools

import numpy
import pytest

import minikeras as mk
from minikeras import losses
from minikeras.autograd import gradcheck
from tests.losses.keras_blocks_cases import CASES, FIXTURE, function_kwargs


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return dict(data)


def _inputs(recorded, true_key, pred_key):
    return recorded[f"input/{true_key}"], recorded[f"input/{pred_key}"], recorded["input/weights"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_matches_recorded_keras(recorded, case):
    class_name, function_name, kwargs, true_key, pred_key = CASES[case]
    y_true, y_pred, weights = _inputs(recorded, true_key, pred_key)
    loss_class = getattr(losses, class_name)
    per_sample = loss_class(reduction=None, **kwargs)(y_true, mk.tensor(y_pred))
    numpy.testing.assert_allclose(per_sample.numpy(), recorded[f"{case}/none"], rtol=2e-5, atol=2e-6)
    weighted = loss_class(**kwargs)(y_true, mk.tensor(y_pred), sample_weight=weights)
    assert weighted.shape == () and weighted.dtype == numpy.float32
    numpy.testing.assert_allclose(weighted.numpy(), recorded[f"{case}/weighted"], rtol=2e-5, atol=2e-6)
    function = getattr(losses, function_name)(y_true, mk.tensor(y_pred), **function_kwargs(class_name, kwargs))
    numpy.testing.assert_allclose(function.numpy(), recorded[f"{case}/function"], rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("case", ["bfce_balanced_logits", "bfce_smoothing", "cfce_logits_smoothing", "cfce_alpha_list",
                                  "dice_per_image", "tversky_all", "circle_options", "gce_q", "ctc"])
def test_loss_gradients_float64(recorded, case):
    class_name, _, kwargs, true_key, pred_key = CASES[case]
    y_true, y_pred, weights = _inputs(recorded, true_key, pred_key)
    loss = getattr(losses, class_name)(**kwargs)
    prediction = mk.Tensor(y_pred.astype(numpy.float64), requires_grad=True)
    assert gradcheck(lambda p: loss(y_true, p, sample_weight=weights.astype(numpy.float64)), [prediction],
                     atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_config_round_trip_and_lookup(recorded, case):
    class_name, function_name, kwargs, true_key, pred_key = CASES[case]
    loss = getattr(losses, class_name)(name="mine", reduction="sum", **kwargs)
    config = loss.get_config()
    assert config["name"] == "mine" and config["reduction"] == "sum"
    for key, value in kwargs.items():
        assert config[key] == value
    clone = losses.deserialize(losses.serialize(loss))
    assert type(clone) is type(loss) and clone.get_config() == config
    y_true, y_pred, _ = _inputs(recorded, true_key, pred_key)
    numpy.testing.assert_allclose(clone(y_true, mk.tensor(y_pred)).numpy(), loss(y_true, mk.tensor(y_pred)).numpy())
    assert losses.get(function_name) is getattr(losses, function_name)
    assert isinstance(losses.get(class_name), getattr(losses, class_name))


def test_keras_default_configs():
    assert losses.BinaryFocalCrossentropy().get_config() == {
        "name": "binary_focal_crossentropy", "reduction": "sum_over_batch_size", "from_logits": False,
        "label_smoothing": 0.0, "axis": -1, "apply_class_balancing": False, "alpha": 0.25, "gamma": 2.0}
    assert losses.Circle().get_config() == {"name": "circle", "reduction": "sum_over_batch_size", "gamma": 80.0,
                                            "margin": 0.4, "remove_diagonal": True}
    assert losses.CTC().get_config() == {"name": "ctc", "reduction": "sum_over_batch_size"}
    assert losses.Tversky().get_config() == {"name": "tversky", "reduction": "sum_over_batch_size", "alpha": 0.5,
                                             "beta": 0.5, "axis": None}


def test_focal_with_gamma_zero_is_cross_entropy(recorded):
    y_true, y_pred, _ = _inputs(recorded, "one_hot", "probs")
    focal = losses.categorical_focal_crossentropy(y_true, mk.tensor(y_pred), alpha=1.0, gamma=0.0)
    plain = losses.categorical_crossentropy(y_true, mk.tensor(y_pred))
    numpy.testing.assert_allclose(focal.numpy(), plain.numpy(), rtol=1e-6)
    binary = losses.binary_focal_crossentropy(y_true, mk.tensor(y_pred), gamma=0.0)
    numpy.testing.assert_allclose(binary.numpy(), losses.binary_crossentropy(y_true, mk.tensor(y_pred)).numpy(),
                                  rtol=1e-6)


def _ctc_brute_force(logits, labels):
    """-log of the summed probability of every path that collapses to ``labels``."""
    steps, classes = logits.shape
    log_probs = logits - numpy.log(numpy.exp(logits).sum(-1, keepdims=True))
    total = -numpy.inf
    for path in itertools.product(range(classes), repeat=steps):
        collapsed = [k for i, k in enumerate(path) if k != 0 and (i == 0 or k != path[i - 1])]
        if collapsed == list(labels):
            total = numpy.logaddexp(total, sum(log_probs[t, k] for t, k in enumerate(path)))
    return -total


def test_ctc_is_the_sum_over_alignments(rng):
    logits = rng.normal(size=(3, 5, 3))
    labels = numpy.array([[1, 2], [2, 2], [1, 0]])
    out = losses.ctc(labels, mk.tensor(logits)).numpy()
    expected = [_ctc_brute_force(logits[b], labels[b][labels[b] != 0]) for b in range(3)]
    numpy.testing.assert_allclose(out, expected, rtol=1e-10)


def test_ctc_impossible_labels_give_infinity_and_zero_gradient():
    logits = mk.Tensor(numpy.zeros((1, 2, 3)), requires_grad=True)
    loss = losses.ctc(numpy.array([[1, 1, 2]]), logits)  # needs at least 4 steps
    assert numpy.isinf(loss.numpy()[0])
    losses.ctc(numpy.array([[1, 2]]), logits).sum().backward()
    assert numpy.isfinite(logits.grad.numpy()).all()


def test_circle_masks_zero_losses(recorded):
    y_true, y_pred, _ = _inputs(recorded, "group_labels", "unit")
    per_sample = losses.circle(y_true, mk.tensor(y_pred)).numpy()
    reduced = losses.Circle()(y_true, mk.tensor(y_pred)).numpy()
    numpy.testing.assert_allclose(reduced, per_sample[per_sample > 0].mean(), rtol=1e-6)


def test_bad_input_is_refused(recorded):
    with pytest.raises(ValueError, match="q must be in the interval"):
        losses.CategoricalGeneralizedCrossEntropy(q=1.5)
    with pytest.raises(ValueError, match="y_true.shape"):
        losses.ctc(numpy.zeros((2, 3, 1)), mk.tensor(numpy.zeros((2, 4, 3), "float32")))
    with pytest.raises(ValueError, match="same shape"):
        losses.dice(numpy.zeros((2, 3)), mk.tensor(numpy.zeros((2, 4), "float32")))
    with pytest.raises(ValueError, match="label_smoothing"):
        losses.BinaryFocalCrossentropy(label_smoothing=2.0)
    with pytest.raises(ValueError, match="class ids of shape"):
        losses.categorical_generalized_cross_entropy(numpy.zeros((3, 2)), mk.tensor(numpy.ones((4, 2), "float32")), 0.5)
