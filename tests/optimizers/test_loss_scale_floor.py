"""LossScaleOptimizer's scale stays >= 1 and finite (tf.keras 2's floor):
a long run of non-finite steps can no longer drive it to 0 and NaN every
weight at the next finite step, and an infinite scale is refused."""
import math

import numpy
import pytest

import minikeras as mk
from minikeras import optimizers
from minikeras.variables import Variable


def _non_finite(shape):
    grad = numpy.full(shape, numpy.inf, "float32")
    grad.flat[0] = numpy.nan
    return grad


def test_the_scale_halves_down_to_1_and_no_lower():
    weight = Variable(numpy.ones((3, 2), "float32"), name="w")
    optimizer = optimizers.LossScaleOptimizer(optimizers.SGD(0.5))
    for _ in range(200):  # more than the ~165 halvings that took a float32 2**15 to 0
        optimizer.apply([mk.tensor(_non_finite((3, 2)))], [weight])
    assert optimizer.dynamic_scale == 1.0 and optimizer.iterations == 0
    numpy.testing.assert_array_equal(weight.numpy(), numpy.ones((3, 2)))  # every step was skipped
    gradient = numpy.full((3, 2), 0.25, "float32")  # of the loss scaled by 1: unscaled as it is
    optimizer.apply([mk.tensor(gradient)], [weight])
    numpy.testing.assert_allclose(weight.numpy(), 1.0 - 0.5 * 0.25)
    assert optimizer.iterations == 1


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # NumPy, on the inf batch
def test_training_goes_on_after_a_long_run_of_non_finite_batches():
    model = mk.Sequential([mk.layers.Input((4,)), mk.layers.Dense(3)])
    model.compile(optimizer=optimizers.LossScaleOptimizer(optimizers.SGD(0.01), initial_scale=2.0 ** 15), loss="mse")
    x, y = numpy.ones((8, 4), "float32"), numpy.ones((8, 3), "float32")
    poisoned = numpy.full((8, 4), numpy.inf, "float32")  # the loss and every gradient are inf or NaN
    for _ in range(20):  # 15 halvings reach 1
        model.train_on_batch(poisoned, y)
    assert model.optimizer.dynamic_scale == 1.0
    loss = model.train_on_batch(x, y)
    assert math.isfinite(loss) and all(numpy.isfinite(w).all() for w in model.get_weights())
    assert model.train_on_batch(x, y) < loss  # and it learns


@pytest.mark.parametrize("scale", [math.inf, -math.inf, math.nan, 0.0, -2.0])
def test_a_non_finite_or_non_positive_initial_scale_is_refused(scale):
    with pytest.raises(ValueError, match="initial_scale must be a finite positive number"):
        optimizers.LossScaleOptimizer(optimizers.SGD(), initial_scale=scale)


def test_set_state_refuses_an_infinite_scale():
    weight = Variable(numpy.ones(2, "float32"), name="w")
    optimizer = optimizers.LossScaleOptimizer(optimizers.SGD())
    optimizer.build([weight])
    state = optimizer.get_state()
    state[2] = numpy.array(numpy.inf, "float32")
    with pytest.raises(ValueError, match="invalid step counter 0 or scale inf"):
        optimizer.set_state(state)
