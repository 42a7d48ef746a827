"""fit/train_on_batch on models that build lazily."""
import numpy

import minikeras as mk
from minikeras import layers


def test_first_step_of_a_lazily_built_model_updates_weights():
    model = mk.Sequential([layers.Dense(3), layers.Dense(1)])
    model.compile(optimizer=mk.optimizers.SGD(0.1), loss="mse")
    x = numpy.ones((4, 2), dtype="float32")
    y = numpy.zeros((4, 1), dtype="float32")
    model.train_on_batch(x, y)
    assert model.optimizer.iterations == 1
    before = model.get_weights()
    model.train_on_batch(x, y)
    after = model.get_weights()
    assert any(not numpy.array_equal(b, a) for b, a in zip(before, after))


def test_nested_sequential_trains():
    inner = mk.Sequential([layers.Dense(4, activation="relu")])
    model = mk.Sequential([inner, layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = numpy.random.default_rng(0).normal(size=(16, 3)).astype("float32")
    history = model.fit(x, x.sum(axis=1, keepdims=True), epochs=3, batch_size=8, verbose=0)
    assert len(model.trainable_weights) == 4
    assert history.history["loss"][-1] < history.history["loss"][0]
