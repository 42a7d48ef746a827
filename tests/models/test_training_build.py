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


def test_a_failed_step_leaves_weights_and_moving_statistics_as_they_were():
    # The loss fails after the forward pass, which has already updated the
    # batch-norm moving statistics in place: the step must put them back.
    calls = {"count": 0}

    def flaky_loss(y_true, y_pred):
        calls["count"] += 1
        if calls["count"] == 2:
            raise RuntimeError("loss failed on purpose")
        return mk.ops.mean(mk.ops.square(y_pred - y_true))

    model = mk.Sequential([layers.Input((3,)), layers.Dense(4), layers.BatchNormalization(), layers.Dense(1)])
    model.compile(optimizer="adam", loss=flaky_loss)
    rng = numpy.random.default_rng(0)
    x = rng.normal(2.0, 3.0, (8, 3)).astype("float32")
    y = rng.normal(size=(8, 1)).astype("float32")
    model.train_on_batch(x, y)
    before = model.get_weights()
    iterations = model.optimizer.iterations
    try:
        model.train_on_batch(x, y)
    except RuntimeError as error:
        assert "on purpose" in str(error)
    else:
        raise AssertionError("the step should have failed")
    for got, expected in zip(model.get_weights(), before):
        numpy.testing.assert_array_equal(got, expected)
    assert model.optimizer.iterations == iterations
    assert all(w.grad is None for w in model.trainable_weights)
    model.train_on_batch(x, y)  # and the next step trains normally
    assert model.optimizer.iterations == iterations + 1
