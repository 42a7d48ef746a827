"""Small models, data and weight comparisons for the data-parallel tests."""
import numpy

import minikeras as mk
from minikeras import layers


def dense_model(seed=0, inputs=8, regularized=False, batch_norm=False):
    mk.random.seed(seed)
    extra = {"kernel_regularizer": "l2", "activity_regularizer": "l1"} if regularized else {}
    stack = [layers.Input((inputs,)), layers.Dense(16, activation="relu", **extra)]
    if batch_norm:
        stack.append(layers.BatchNormalization(momentum=0.9))
    stack.append(layers.Dense(3))
    return mk.Sequential(stack)


def conv_model(seed=0, batch_norm=False):
    mk.random.seed(seed)
    stack = [layers.Input((6, 6, 2)), layers.Conv2D(4, 3, activation="relu")]
    if batch_norm:
        stack.append(layers.BatchNormalization(momentum=0.9))
    stack += [layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(3)]
    return mk.Sequential(stack)


def twin(make, **kwargs):
    """Two models with the same architecture and the same initial weights."""
    first = make(**kwargs)
    second = make(**kwargs)
    second.set_weights(first.get_weights())
    return first, second


def classification_data(shape, count=47, classes=3, seed=0):
    rng = numpy.random.default_rng(seed)
    x = rng.normal(size=(count,) + tuple(shape)).astype("float32")
    y = rng.integers(0, classes, count)
    return x, y


def logits_loss():
    return mk.losses.SparseCategoricalCrossentropy(from_logits=True)


def assert_weights_close(actual, expected, rtol=1e-5):
    """Within ``rtol`` relative, elementwise, with an absolute floor of
    ``rtol`` times the array's largest magnitude (for entries near zero),
    and of 1e-7 for arrays that are rounding noise around zero (e.g. a bias
    followed by BatchNormalization, whose true gradient is 0)."""
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        scale = float(numpy.abs(want).max()) if want.size else 0.0
        numpy.testing.assert_allclose(got, want, rtol=rtol, atol=max(rtol * scale, 1e-7))


def assert_replicas_identical(mirrored):
    reference = mirrored.replicas[0].get_weights()
    for replica in mirrored.replicas[1:]:
        for got, want in zip(replica.get_weights(), reference):
            assert numpy.array_equal(got, want)
