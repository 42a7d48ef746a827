"""Regression, distribution and hinge losses against NumPy formulas, with
sample weights, and their gradients by finite differences."""
import numpy
import pytest

import minikeras as mk
from minikeras import losses
from minikeras.autograd import gradcheck

EPS = 1e-7


def _engine_handles_diamonds():
    """False while autograd drops one branch of a tensor used twice (see
    tests/ops/test_arithmetic.py::test_diamond_graph_gradient)."""
    t = mk.tensor([1.0], requires_grad=True)
    e = t * 2.0
    (e - e * 3.0).sum().backward()
    return t.grad.item() == -4.0


# Huber, log-cosh and KL reuse an intermediate tensor; their gradients are
# right only once the engine handles such diamonds. Expected to fail until
# then, and checked normally from then on.
needs_diamonds = pytest.mark.xfail(
    not _engine_handles_diamonds(), reason="autograd engine loses gradients in diamond graphs", strict=True
)


def _np_huber(y, p, delta=1.0):
    error = numpy.abs(p - y)
    return numpy.where(error <= delta, 0.5 * error**2, delta * error - 0.5 * delta**2).mean(-1)


def _np_cosine(y, p):
    def normalize(x):
        return x / numpy.sqrt(numpy.maximum((x * x).sum(-1, keepdims=True), 1e-12))

    return -(normalize(y) * normalize(p)).sum(-1)


def _signed(y):
    return 2 * y - 1 if numpy.isin(y, (0, 1)).all() else y


REFERENCES = {
    "mean_squared_error": lambda y, p: ((y - p) ** 2).mean(-1),
    "mean_absolute_error": lambda y, p: numpy.abs(y - p).mean(-1),
    "mean_absolute_percentage_error":
        lambda y, p: 100 * numpy.abs((y - p) / numpy.maximum(numpy.abs(y), EPS)).mean(-1),
    "mean_squared_logarithmic_error":
        lambda y, p: ((numpy.log(numpy.maximum(p, EPS) + 1) - numpy.log(numpy.maximum(y, EPS) + 1)) ** 2).mean(-1),
    "huber": _np_huber,
    "log_cosh": lambda y, p: numpy.log(numpy.cosh(p - y)).mean(-1),
    "cosine_similarity": _np_cosine,
    "kl_divergence":
        lambda y, p: (numpy.clip(y, EPS, 1) * numpy.log(numpy.clip(y, EPS, 1) / numpy.clip(p, EPS, 1))).sum(-1),
    "poisson": lambda y, p: (p - y * numpy.log(p + EPS)).mean(-1),
    "hinge": lambda y, p: numpy.maximum(1 - _signed(y) * p, 0).mean(-1),
    "squared_hinge": lambda y, p: (numpy.maximum(1 - _signed(y) * p, 0) ** 2).mean(-1),
    "categorical_hinge":
        lambda y, p: numpy.maximum(((1 - y) * p).max(-1) - (y * p).sum(-1) + 1, 0),
}
CLASSES = {
    "mean_squared_error": losses.MeanSquaredError, "mean_absolute_error": losses.MeanAbsoluteError,
    "mean_absolute_percentage_error": losses.MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": losses.MeanSquaredLogarithmicError, "huber": losses.Huber,
    "log_cosh": losses.LogCosh, "cosine_similarity": losses.CosineSimilarity,
    "kl_divergence": losses.KLDivergence, "poisson": losses.Poisson, "hinge": losses.Hinge,
    "squared_hinge": losses.SquaredHinge, "categorical_hinge": losses.CategoricalHinge,
}


def _inputs(name, rng, shape=(5, 4)):
    """Targets and predictions in each loss's domain, away from kinks so
    that finite differences are valid."""
    if name in ("kl_divergence", "poisson", "mean_squared_logarithmic_error"):
        return rng.uniform(0.1, 1.0, shape), rng.uniform(0.1, 1.0, shape)
    if name in ("hinge", "squared_hinge", "categorical_hinge"):
        y = numpy.eye(shape[-1])[rng.integers(0, shape[-1], shape[0])]
        p = rng.normal(0, 1.0, shape)
        return y, p
    y = rng.normal(0, 1.0, shape)
    p = y + rng.choice([-1, 1], shape) * rng.uniform(0.2, 2.5, shape)  # |error| in [0.2, 2.5], not 1 +- eps
    return y, p


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_loss_function_matches_numpy(name, rng):
    y, p = _inputs(name, rng)
    fn = getattr(losses, name)
    out = fn(y.astype(numpy.float32), mk.tensor(p.astype(numpy.float32)))
    assert out.shape == (5,) and out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), REFERENCES[name](y, p), rtol=2e-5, atol=1e-6)
    numpy.testing.assert_allclose(fn(y, mk.tensor(p)).numpy(), REFERENCES[name](y, p), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_loss_class_weights_and_reduces(name, rng):
    y, p = _inputs(name, rng)
    weights = rng.uniform(0, 2, 5)
    per_sample = REFERENCES[name](y, p) * weights
    value = CLASSES[name]()(y, mk.tensor(p), sample_weight=weights)
    assert value.shape == ()
    numpy.testing.assert_allclose(value.item(), per_sample.mean(), rtol=1e-10)
    summed = CLASSES[name](reduction="sum")(y, mk.tensor(p), sample_weight=weights)
    numpy.testing.assert_allclose(summed.item(), per_sample.sum(), rtol=1e-10)


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=needs_diamonds) if name in ("huber", "log_cosh") else name for name in sorted(REFERENCES)
])
def test_loss_gradient(name, rng):
    y, p = _inputs(name, rng, shape=(3, 4))
    fn = getattr(losses, name)
    assert gradcheck(lambda pred: fn(y, pred), [p], atol=1e-6, rtol=1e-5)


@needs_diamonds
def test_huber_delta_and_gradient_at_both_sides(rng):
    y = numpy.zeros((1, 4))
    p = numpy.array([[0.1, -0.25, 0.7, -2.0]])
    numpy.testing.assert_allclose(losses.huber(y, mk.tensor(p), delta=0.5).numpy(), _np_huber(y, p, 0.5))
    pred = mk.tensor(p, requires_grad=True)
    losses.Huber(delta=0.5, reduction="sum")(y, pred).backward()
    numpy.testing.assert_allclose(pred.grad.numpy(), [[0.1 / 4, -0.25 / 4, 0.5 / 4, -0.5 / 4]])


def test_cosine_similarity_is_negative_cosine_and_zero_for_zero_vectors():
    y_true = [[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    out = losses.cosine_similarity(y_true, mk.tensor([[2.0, 0.0], [1.0, 1.0], [-1.0, -1.0]]))
    numpy.testing.assert_allclose(out.numpy(), [-1.0, 0.0, 1.0], atol=1e-6)


def test_hinge_converts_binary_labels_but_keeps_signed_ones():
    p = mk.tensor([[0.3, -0.8]])
    numpy.testing.assert_allclose(losses.hinge([[1.0, 0.0]], p).numpy(), losses.hinge([[1.0, -1.0]], p).numpy())


@needs_diamonds
def test_gradient_flows_through_both_arguments_when_both_are_tensors(rng):
    y, p = rng.uniform(0.1, 1, (3, 4)), rng.uniform(0.1, 1, (3, 4))
    assert gradcheck(lambda a, b: losses.kl_divergence(a, b), [y, p], atol=1e-6, rtol=1e-5)
    assert gradcheck(lambda a, b: losses.mean_squared_error(a, b), [y, p], atol=1e-6, rtol=1e-5)


def test_regression_shape_mismatch_names_loss_and_shapes():
    with pytest.raises(ValueError, match=r"mean_squared_error.*\(4, 2\).*\(4, 3\)"):
        losses.mean_squared_error(numpy.zeros((4, 2)), mk.tensor(numpy.zeros((4, 3))))
    with pytest.raises(ValueError, match=r"huber.*\(3,\).*\(4, 1\)"):
        losses.Huber()(numpy.zeros(3), mk.tensor(numpy.zeros((4, 1))))
