"""Cross-entropy losses against NumPy formulas, their gradients, the fused
logits paths, the attached-logits shortcut, and bad input."""
import numpy
import pytest

import minikeras as mk
from minikeras import losses, ops
from minikeras.autograd import gradcheck
from minikeras.losses.logits import attach_logits

EPS = 1e-7


def _log_softmax(z, axis=-1):
    shifted = z - z.max(axis=axis, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=axis, keepdims=True))


def np_cce(y, p, label_smoothing=0.0, axis=-1):
    y = y * (1 - label_smoothing) + label_smoothing / y.shape[axis]
    p = numpy.clip(p / p.sum(axis=axis, keepdims=True), EPS, 1 - EPS)
    return -(y * numpy.log(p)).sum(axis=axis)


def np_cce_logits(y, z, label_smoothing=0.0, axis=-1):
    y = y * (1 - label_smoothing) + label_smoothing / y.shape[axis]
    return -(y * _log_softmax(z, axis)).sum(axis=axis)


def np_bce(y, p, label_smoothing=0.0):
    y = y * (1 - label_smoothing) + 0.5 * label_smoothing
    p = numpy.clip(p, EPS, 1 - EPS)
    return -(y * numpy.log(p) + (1 - y) * numpy.log(1 - p)).mean(axis=-1)


def np_bce_logits(y, z, label_smoothing=0.0):
    y = y * (1 - label_smoothing) + 0.5 * label_smoothing
    return (numpy.maximum(z, 0) - z * y + numpy.log1p(numpy.exp(-numpy.abs(z)))).mean(axis=-1)


@pytest.fixture
def data(rng):
    n, c = 6, 4
    labels = rng.integers(0, c, n)
    one_hot = numpy.eye(c, dtype=numpy.float32)[labels]
    probs = rng.uniform(0.05, 1.0, (n, c)).astype(numpy.float32)
    probs /= probs.sum(axis=1, keepdims=True)
    logits = rng.normal(0, 2, (n, c)).astype(numpy.float32)
    weights = rng.uniform(0.1, 2.0, n).astype(numpy.float32)
    return labels, one_hot, probs, logits, weights


# --------------------------------------------------------------- categorical
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_categorical_crossentropy_matches_numpy(data, label_smoothing):
    _, one_hot, probs, logits, _ = data
    unnormalized = probs * 3.0  # Keras renormalizes y_pred by its sum
    out = losses.categorical_crossentropy(one_hot, mk.tensor(unnormalized), label_smoothing=label_smoothing)
    assert out.shape == (6,) and out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), np_cce(one_hot, unnormalized, label_smoothing), rtol=1e-5)
    out = losses.categorical_crossentropy(one_hot, mk.tensor(logits), from_logits=True,
                                          label_smoothing=label_smoothing)
    numpy.testing.assert_allclose(out.numpy(), np_cce_logits(one_hot, logits, label_smoothing), rtol=1e-5)


def test_categorical_crossentropy_clips_zero_probabilities():
    out = losses.categorical_crossentropy([[1.0, 0.0]], mk.tensor([[0.0, 1.0]]))
    numpy.testing.assert_allclose(out.numpy(), [-numpy.log(EPS)], rtol=1e-5)


def test_categorical_crossentropy_other_axis(rng):
    y = numpy.eye(3)[rng.integers(0, 3, (2, 5))].transpose(0, 2, 1)  # classes on axis 1
    z = rng.normal(size=(2, 3, 5))
    out = losses.categorical_crossentropy(y, mk.tensor(z), from_logits=True, axis=1)
    numpy.testing.assert_allclose(out.numpy(), np_cce_logits(y, z, axis=1), rtol=1e-10)
    p = numpy.exp(_log_softmax(z, 1))
    out = losses.categorical_crossentropy(y, mk.tensor(p), axis=1)
    numpy.testing.assert_allclose(out.numpy(), np_cce(y, p, axis=1), rtol=1e-10)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none", "mean_with_sample_weight"])
def test_categorical_crossentropy_class_with_sample_weight(data, reduction):
    _, one_hot, probs, logits, weights = data
    per_sample = np_cce_logits(one_hot, logits) * weights
    expected = {
        "sum_over_batch_size": per_sample.sum() / 6, "sum": per_sample.sum(), "none": per_sample,
        "mean_with_sample_weight": per_sample.sum() / weights.sum(),
    }[reduction]
    loss = losses.CategoricalCrossentropy(from_logits=True, reduction=reduction)
    out = loss(one_hot, mk.tensor(logits), sample_weight=weights)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)


def test_default_reduction_divides_by_batch_size_not_weight_sum(data):
    _, one_hot, probs, _, _ = data
    weights = numpy.array([1, 0, 0, 0, 0, 0], numpy.float32)
    out = losses.CategoricalCrossentropy()(one_hot, mk.tensor(probs), sample_weight=weights)
    numpy.testing.assert_allclose(out.item(), np_cce(one_hot, probs)[0] / 6, rtol=1e-5)


# --------------------------------------------------------- sparse categorical
def test_sparse_categorical_crossentropy_matches_numpy(data):
    labels, one_hot, probs, logits, weights = data
    for y in (labels, labels[:, None], labels.astype(numpy.float32), mk.tensor(labels)):
        out = losses.sparse_categorical_crossentropy(y, mk.tensor(probs))
        numpy.testing.assert_allclose(out.numpy(), np_cce(one_hot, probs), rtol=1e-5)
        out = losses.sparse_categorical_crossentropy(y, mk.tensor(logits), from_logits=True)
        numpy.testing.assert_allclose(out.numpy(), np_cce_logits(one_hot, logits), rtol=1e-5)
    out = losses.SparseCategoricalCrossentropy(from_logits=True)(labels, mk.tensor(logits), sample_weight=weights)
    numpy.testing.assert_allclose(out.item(), (np_cce_logits(one_hot, logits) * weights).mean(), rtol=1e-5)


def test_sparse_categorical_crossentropy_sequences_and_other_axis(rng):
    labels = rng.integers(0, 4, (3, 5))
    z = rng.normal(size=(3, 5, 4))
    expected = np_cce_logits(numpy.eye(4)[labels], z)
    out = losses.sparse_categorical_crossentropy(labels, mk.tensor(z), from_logits=True)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    moved = numpy.moveaxis(z, -1, 1)  # (3, 4, 5): classes on axis 1
    for from_logits, pred in ((True, moved), (False, numpy.exp(_log_softmax(moved, 1)))):
        out = losses.sparse_categorical_crossentropy(labels, mk.tensor(pred), from_logits=from_logits, axis=1)
        numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("from_logits", [True, False])
def test_sparse_categorical_crossentropy_ignore_class_averages_over_valid(data, from_logits):
    labels, one_hot, probs, logits, weights = data
    labels = labels.copy()
    labels[[1, 4]] = -1
    pred = logits if from_logits else probs
    reference = np_cce_logits(one_hot, logits) if from_logits else np_cce(one_hot, probs)
    valid = labels != -1
    per_sample = losses.sparse_categorical_crossentropy(labels, mk.tensor(pred), from_logits, ignore_class=-1)
    numpy.testing.assert_allclose(per_sample.numpy(), numpy.where(valid, reference, 0), rtol=1e-5)
    loss = losses.SparseCategoricalCrossentropy(from_logits=from_logits, ignore_class=-1)
    numpy.testing.assert_allclose(loss(labels, mk.tensor(pred)).item(), reference[valid].mean(), rtol=1e-5)
    weighted = loss(labels, mk.tensor(pred), sample_weight=weights).item()
    numpy.testing.assert_allclose(weighted, (reference * weights)[valid].sum() / valid.sum(), rtol=1e-5)
    summed = losses.SparseCategoricalCrossentropy(from_logits=from_logits, ignore_class=-1, reduction="sum")
    numpy.testing.assert_allclose(summed(labels, mk.tensor(pred)).item(), reference[valid].sum(), rtol=1e-5)


@pytest.mark.parametrize("from_logits", [True, False])
def test_sparse_labels_out_of_range_raise(data, from_logits):
    labels, _, probs, logits, _ = data
    pred = mk.tensor(logits if from_logits else probs)
    for bad in (4, -1):
        wrong = labels.copy()
        wrong[2] = bad
        with pytest.raises(ValueError, match=r"\[0, 4\)"):
            losses.sparse_categorical_crossentropy(wrong, pred, from_logits=from_logits)


def test_sparse_label_shape_mismatch_raises(data):
    labels, _, probs, _, _ = data
    with pytest.raises(ValueError, match=r"sparse_categorical_crossentropy.*\(5,\).*\(6,\)"):
        losses.sparse_categorical_crossentropy(labels[:5], mk.tensor(probs))


# -------------------------------------------------------------------- binary
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_binary_crossentropy_matches_numpy(rng, label_smoothing):
    y = (rng.random((5, 3)) > 0.5).astype(numpy.float32)
    p = rng.uniform(0.01, 0.99, (5, 3)).astype(numpy.float32)
    z = rng.normal(0, 3, (5, 3)).astype(numpy.float32)
    out = losses.binary_crossentropy(y, mk.tensor(p), label_smoothing=label_smoothing)
    assert out.shape == (5,) and out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), np_bce(y, p, label_smoothing), rtol=1e-5)
    out = losses.binary_crossentropy(y, mk.tensor(z), from_logits=True, label_smoothing=label_smoothing)
    numpy.testing.assert_allclose(out.numpy(), np_bce_logits(y, z, label_smoothing), rtol=1e-5)


def test_binary_crossentropy_flat_labels_meet_column_predictions(rng):
    y = (rng.random(8) > 0.5).astype(numpy.float32)
    p = rng.uniform(0.01, 0.99, (8, 1)).astype(numpy.float32)
    weights = rng.uniform(0, 1, 8).astype(numpy.float32)
    out = losses.BinaryCrossentropy()(y, mk.tensor(p), sample_weight=weights)
    numpy.testing.assert_allclose(out.item(), (np_bce(y[:, None], p) * weights).mean(), rtol=1e-5)


def test_binary_crossentropy_logits_are_finite_for_huge_logits():
    out = losses.binary_crossentropy([[1.0, 0.0]], mk.tensor([[-1000.0, 1000.0]]), from_logits=True)
    numpy.testing.assert_allclose(out.numpy(), [1000.0], rtol=1e-6)


# ----------------------------------------------------------------- gradients
def _check_grad(fn, *arrays):
    assert gradcheck(fn, [numpy.asarray(a, numpy.float64) for a in arrays], atol=1e-6, rtol=1e-5)


def test_crossentropy_gradients(data):
    labels, one_hot, probs, logits, weights = data
    one_hot64 = one_hot.astype(numpy.float64)
    _check_grad(lambda p: losses.categorical_crossentropy(one_hot64, p, label_smoothing=0.1), probs * 2)
    _check_grad(lambda z: losses.categorical_crossentropy(one_hot64, z, from_logits=True), logits)
    _check_grad(lambda p: losses.sparse_categorical_crossentropy(labels, p), probs)
    _check_grad(lambda z: losses.sparse_categorical_crossentropy(labels, z, from_logits=True), logits)
    binary = (probs > 0.25).astype(numpy.float64)
    _check_grad(lambda p: losses.binary_crossentropy(binary, p, label_smoothing=0.2), probs)
    _check_grad(lambda z: losses.binary_crossentropy(binary, z, from_logits=True), logits)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    _check_grad(lambda z: loss(labels, z, sample_weight=weights.astype(numpy.float64)), logits)


def test_gradient_flows_to_soft_targets(rng):
    teacher = rng.dirichlet(numpy.ones(3), 4)
    student = rng.normal(size=(4, 3))
    assert gradcheck(lambda t, z: losses.categorical_crossentropy(t, z, from_logits=True), [teacher, student])


# ------------------------------------------------------- the logits shortcut
def _softmax_output(logits):
    logits = mk.tensor(logits, requires_grad=True)
    probs = ops.softmax(logits)
    attach_logits(probs, logits)
    return logits, probs


def test_softmax_output_with_keras_logits_uses_the_logits_path(data):
    labels, one_hot, _, logits, _ = data
    huge = logits * 1000.0  # the probability path would saturate and stop the gradient
    logits_tensor, probs = _softmax_output(huge)
    loss = losses.CategoricalCrossentropy()(one_hot, probs)
    reference_logits = mk.tensor(huge, requires_grad=True)
    reference = losses.CategoricalCrossentropy(from_logits=True)(one_hot, reference_logits)
    assert numpy.isfinite(loss.item())
    numpy.testing.assert_allclose(loss.item(), reference.item(), rtol=1e-6)
    loss.backward()
    reference.backward()
    numpy.testing.assert_allclose(logits_tensor.grad.numpy(), reference_logits.grad.numpy(), atol=1e-7)
    softmax = numpy.exp(_log_softmax(huge.astype(numpy.float64)))
    numpy.testing.assert_allclose(logits_tensor.grad.numpy(), (softmax - one_hot) / 6, atol=1e-6)
    sparse = losses.sparse_categorical_crossentropy(labels, _softmax_output(huge)[1])
    numpy.testing.assert_allclose(sparse.numpy(), np_cce_logits(one_hot, huge.astype(numpy.float64)), rtol=1e-5)


def test_sigmoid_output_with_keras_logits_uses_the_logits_path(rng):
    z = numpy.array([[30.0], [-40.0], [0.5]], numpy.float32)
    y = numpy.array([0.0, 1.0, 1.0], numpy.float32)
    logits = mk.tensor(z, requires_grad=True)
    probs = ops.sigmoid(logits)
    attach_logits(probs, logits)
    out = losses.binary_crossentropy(y, probs)
    numpy.testing.assert_allclose(out.numpy(), np_bce_logits(y[:, None], z.astype(numpy.float64)), rtol=1e-5)


def test_keras_logits_of_another_activation_are_not_used(data):
    _, one_hot, _, logits, _ = data
    _, probs = _softmax_output(logits)  # a softmax output fed to binary cross-entropy
    plain = mk.tensor(probs.numpy())
    numpy.testing.assert_allclose(
        losses.binary_crossentropy(one_hot, probs).numpy(), losses.binary_crossentropy(one_hot, plain).numpy()
    )
    tagged = mk.tensor(probs.numpy())
    attach_logits(tagged, (mk.tensor(logits), "sigmoid"))  # explicit tag: not a softmax
    numpy.testing.assert_allclose(
        losses.categorical_crossentropy(one_hot, tagged).numpy(),
        losses.categorical_crossentropy(one_hot, plain).numpy(),
    )
    attach_logits(tagged, (mk.tensor(logits), "softmax"))
    numpy.testing.assert_allclose(
        losses.categorical_crossentropy(one_hot, tagged).numpy(), np_cce_logits(one_hot, logits), rtol=1e-5
    )


# ------------------------------------------------------------------ bad input
def test_shape_mismatch_names_the_loss_and_both_shapes(data):
    _, one_hot, probs, _, _ = data
    with pytest.raises(ValueError, match=r"categorical_crossentropy.*\(6, 3\).*\(6, 4\)"):
        losses.categorical_crossentropy(one_hot[:, :3], mk.tensor(probs))
    with pytest.raises(ValueError, match=r"binary_crossentropy.*\(6, 3\).*\(6, 4\)"):
        losses.BinaryCrossentropy()(one_hot[:, :3], mk.tensor(probs))


def test_float32_predictions_stay_float32_with_float64_labels(data):
    labels, one_hot, probs, logits, weights = data
    for loss in (losses.CategoricalCrossentropy(), losses.BinaryCrossentropy(from_logits=True)):
        out = loss(one_hot.astype(numpy.float64), mk.tensor(logits), sample_weight=weights.astype(numpy.float64))
        assert out.dtype == numpy.float32
