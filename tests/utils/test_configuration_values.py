"""Constructor and fit arguments that used to be accepted and then gave
garbage (nan weights, OverflowError later): refused up front (issue 12)."""
import math

import numpy
import pytest

import minikeras as mk

CASES = [
    (lambda v: mk.optimizers.SGD(learning_rate=v), (math.inf, math.nan, -1.0), "SGD: argument `learning_rate`"),
    (lambda v: mk.optimizers.Adam(epsilon=v), (math.inf,), "Adam: argument `epsilon` must be finite"),
    (lambda v: mk.losses.Huber(delta=v), (math.inf, math.nan, -1.0, None, "x"), "Huber: delta"),
    (lambda v: mk.losses.BinaryCrossentropy(label_smoothing=v), (1.5, -0.1, math.nan, None),
     "BinaryCrossentropy: label_smoothing"),
    (lambda v: mk.losses.CategoricalCrossentropy(label_smoothing=v), (1.5, math.inf),
     "CategoricalCrossentropy: label_smoothing"),
    (lambda v: mk.metrics.AUC(num_thresholds=v), (math.inf, 1.5, True), "AUC: num_thresholds"),
    (lambda v: mk.layers.BatchNormalization(epsilon=v), (math.inf,), "epsilon must be a positive finite number"),
    (lambda v: mk.layers.GaussianNoise(v), (math.inf,), "GaussianNoise: stddev must be a finite number"),
    (lambda v: mk.callbacks.ReduceLROnPlateau(factor=v), (-1.0, math.nan), "ReduceLROnPlateau: factor"),
]


@pytest.mark.parametrize("make, values, message", CASES)
def test_bad_values_are_refused_naming_the_class(make, values, message):
    for value in values:
        with pytest.raises((ValueError, TypeError), match=message):
            make(value)


def test_good_values_still_work():
    assert mk.optimizers.SGD(learning_rate=0.0).learning_rate == 0.0
    assert mk.optimizers.SGD(clipnorm=math.inf) is not None  # an infinite clip threshold clips nothing
    assert mk.losses.Huber(delta=0.5).delta == 0.5
    assert mk.losses.BinaryCrossentropy(label_smoothing=1.0).label_smoothing == 1.0


def test_fit_refuses_bool_batch_size_and_epochs():
    model = mk.Sequential([mk.layers.Input((3,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = numpy.ones((4, 3), "float32"), numpy.ones((4, 1), "float32")
    with pytest.raises(ValueError, match="batch_size must be a positive int, received True"):
        model.fit(x, y, batch_size=True, verbose=0)
    with pytest.raises(ValueError, match="epochs must be a non-negative int, received True"):
        model.fit(x, y, epochs=True, verbose=0)
