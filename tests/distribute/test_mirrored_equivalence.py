"""MirroredModel trains exactly like one device: same weights after N steps
on the same batches (sample-weighted mean of the replicas' gradients)."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers
from tests.distribute.helpers import (
    assert_replicas_identical, assert_weights_close, classification_data, conv_model, dense_model, logits_loss, twin,
)

OPTIMIZERS = {
    "sgd_momentum": lambda: mk.optimizers.SGD(learning_rate=0.05, momentum=0.9),
    "adam": lambda: mk.optimizers.Adam(learning_rate=0.01),
}
MODELS = {"dense": (dense_model, (8,)), "conv": (conv_model, (6, 6, 2))}


def _train_both(make, shape, optimizer, batch_size, devices, count=47, epochs=2, **model_kwargs):
    single, wrapped = twin(make, **model_kwargs)
    x, y = classification_data(shape, count)
    single.compile(OPTIMIZERS[optimizer](), logits_loss(), metrics=["accuracy"])
    mirrored = mk.MirroredModel(wrapped, devices=devices)
    mirrored.compile(OPTIMIZERS[optimizer](), logits_loss(), metrics=["accuracy"])
    expected = single.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0)
    got = mirrored.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0)
    return single, wrapped, mirrored, expected, got


@pytest.mark.parametrize("device_count", [2, 3])
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_same_weights_as_one_device(split_cpu, device_count, optimizer, model_name):
    split_cpu(device_count)
    make, shape = MODELS[model_name]
    # 47 samples in batches of 10: shards of 5+5 or 4+3+3, and a last batch of 7.
    single, wrapped, mirrored, expected, got = _train_both(make, shape, optimizer, 10, None)
    assert [d.name for d in mirrored.devices] == [f"cpu:{i}" for i in range(device_count)]
    assert_weights_close(wrapped.get_weights(), single.get_weights())
    assert_replicas_identical(mirrored)
    numpy.testing.assert_allclose(got.history["loss"], expected.history["loss"], rtol=1e-5)
    assert got.history["accuracy"] == expected.history["accuracy"]
    # The weights really moved: the comparison is not between two untouched models.
    assert not numpy.allclose(wrapped.get_weights()[0], twin(make)[0].get_weights()[0])


def test_batch_smaller_than_device_count(split_cpu):
    split_cpu(3)
    # 7 samples, batches of 5 then 2: the third replica gets nothing in the last batch.
    single, wrapped, mirrored, expected, got = _train_both(dense_model, (8,), "adam", 5, None, count=7, epochs=3)
    assert mirrored._shard_bounds(2) == [(0, 1), (1, 2), (2, 2)]
    assert_weights_close(wrapped.get_weights(), single.get_weights())
    assert_replicas_identical(mirrored)
    numpy.testing.assert_allclose(got.history["loss"], expected.history["loss"], rtol=1e-5)


def test_single_sample_batch_on_three_devices(split_cpu):
    split_cpu(3)
    single, wrapped = twin(dense_model)
    x, y = classification_data((8,), 1)
    single.compile(OPTIMIZERS["sgd_momentum"](), logits_loss())
    mirrored = mk.MirroredModel(wrapped)
    mirrored.compile(OPTIMIZERS["sgd_momentum"](), logits_loss())
    for _ in range(3):
        expected = single.train_on_batch(x, y)
        got = mirrored.train_on_batch(x, y)
        assert got == pytest.approx(expected, rel=1e-5)
    assert_weights_close(wrapped.get_weights(), single.get_weights())
    assert_replicas_identical(mirrored)
    assert [replica.optimizer.iterations for replica in mirrored.replicas] == [3, 3, 3]


def test_uneven_split_bounds(split_cpu):
    split_cpu(3)
    mirrored = mk.MirroredModel(dense_model())
    assert mirrored._shard_bounds(10) == [(0, 4), (4, 7), (7, 10)]
    assert mirrored._shard_bounds(3) == [(0, 1), (1, 2), (2, 3)]


def test_gradients_are_the_sample_weighted_mean_not_the_sum(split_cpu):
    # One plain SGD step with lr 1 moves the weights by minus the gradient.
    # With 5 samples on 2 replicas (shards of 3 and 2), the step must be
    # (3 * g_first + 2 * g_second) / 5: neither the sum (Chainer) nor the
    # unweighted mean of the replicas' gradients.
    split_cpu(2)
    x, y = classification_data((8,), 5, seed=3)

    def sgd_step(model, xs, ys):
        before = model.get_weights()
        model.compile(mk.optimizers.SGD(learning_rate=1.0), logits_loss())
        model.train_on_batch(xs, ys)
        return [b - a for a, b in zip(model.get_weights(), before)]

    first = sgd_step(twin(dense_model)[0], x[:3], y[:3])
    second = sgd_step(twin(dense_model)[0], x[3:], y[3:])
    wrapped = twin(dense_model)[0]
    mirrored = mk.MirroredModel(wrapped)
    assert mirrored._shard_bounds(5) == [(0, 3), (3, 5)]
    before = wrapped.get_weights()
    mirrored.compile(mk.optimizers.SGD(learning_rate=1.0), logits_loss())
    mirrored.train_on_batch(x, y)
    got = [b - a for a, b in zip(wrapped.get_weights(), before)]
    weighted = [(3 * a + 2 * b) / 5 for a, b in zip(first, second)]
    assert_weights_close(got, weighted)
    assert not numpy.allclose(got[0], (first[0] + second[0]) / 2, rtol=1e-3, atol=1e-6)
    assert not numpy.allclose(got[0], first[0] + second[0], rtol=1e-3, atol=1e-6)


def test_regularization_counted_once(split_cpu):
    split_cpu(3)
    single, wrapped, mirrored, expected, got = _train_both(
        dense_model, (8,), "sgd_momentum", 10, None, regularized=True)
    assert_weights_close(wrapped.get_weights(), single.get_weights())
    numpy.testing.assert_allclose(got.history["loss"], expected.history["loss"], rtol=1e-5)
    # The penalty is a visible part of the loss, so counting it 3 times would show.
    x, _ = classification_data((8,), 47)
    assert float(sum(t.item() for t in single.losses)) > 1e-3


def test_wrapped_model_on_another_device_is_kept_in_sync(split_cpu):
    split_cpu(3)
    # The model lives on cpu:0 but trains on cpu:1 and cpu:2: every replica is a clone.
    single, wrapped, mirrored, expected, got = _train_both(dense_model, (8,), "adam", 10, ["cpu:1", "cpu:2"])
    assert all(r is not wrapped for r in mirrored.replicas)
    assert {w.device.name for w in mirrored.replicas[1].weights} == {"cpu:2"}
    assert {w.device.name for w in wrapped.weights} == {"cpu:0"}
    assert_weights_close(wrapped.get_weights(), single.get_weights())


def test_subclassed_model_without_config_is_deep_copied(split_cpu):
    split_cpu(2)

    class TwoLayers(mk.Model):
        def __init__(self):
            super().__init__()
            self.hidden = layers.Dense(6, activation="tanh")
            self.out = layers.Dense(3)

        def call(self, inputs):
            return self.out(self.hidden(inputs))

    x, y = classification_data((8,), 20)
    mk.random.seed(0)
    single = TwoLayers()
    single(x[:1])
    wrapped = TwoLayers()
    wrapped(x[:1])
    wrapped.set_weights(single.get_weights())
    single.compile(OPTIMIZERS["adam"](), logits_loss())
    mirrored = mk.MirroredModel(wrapped)
    mirrored.compile(OPTIMIZERS["adam"](), logits_loss())
    single.fit(x, y, batch_size=6, epochs=2, shuffle=False, verbose=0)
    mirrored.fit(x, y, batch_size=6, epochs=2, shuffle=False, verbose=0)
    assert {w.device.name for w in mirrored.replicas[1].weights} == {"cpu:1"}
    assert_weights_close(wrapped.get_weights(), single.get_weights())
    assert_replicas_identical(mirrored)


def test_unbuilt_model_is_built_on_first_batch(split_cpu):
    split_cpu(2)
    mk.random.seed(0)
    model = mk.Sequential([layers.Dense(5, activation="relu"), layers.Dense(3)])
    mirrored = mk.MirroredModel(model)
    mirrored.compile("adam", logits_loss())
    x, y = classification_data((4,), 12)
    mirrored.fit(x, y, batch_size=6, epochs=1, verbose=0)
    assert model.built and len(mirrored.replicas) == 2
    assert_replicas_identical(mirrored)


def test_two_input_two_output_functional_model(split_cpu):
    split_cpu(2)

    def make():
        mk.random.seed(0)
        first, second = layers.Input((5,), name="a"), layers.Input((3,), name="b")
        merged = layers.Concatenate()([layers.Dense(6, activation="relu")(first), second])
        return mk.Model([first, second], [layers.Dense(3, name="label")(merged), layers.Dense(1, name="value")(merged)])

    single, wrapped = make(), make()
    wrapped.set_weights(single.get_weights())
    rng = numpy.random.default_rng(0)
    x = [rng.normal(size=(23, 5)).astype("float32"), rng.normal(size=(23, 3)).astype("float32")]
    y = [rng.integers(0, 3, 23), rng.normal(size=(23, 1)).astype("float32")]
    weights = [rng.random(23).astype("float32")] * 2
    arguments = dict(loss=[logits_loss(), "mse"], loss_weights=[1.0, 0.5], metrics=[["accuracy"], ["mae"]])
    single.compile(OPTIMIZERS["adam"](), **arguments)
    mirrored = mk.MirroredModel(wrapped)
    mirrored.compile(OPTIMIZERS["adam"](), **arguments)
    expected = single.fit(x, y, sample_weight=weights, batch_size=7, epochs=2, shuffle=False, verbose=0)
    got = mirrored.fit(x, y, sample_weight=weights, batch_size=7, epochs=2, shuffle=False, verbose=0)
    assert set(got.history) == set(expected.history)
    for key in expected.history:
        numpy.testing.assert_allclose(got.history[key], expected.history[key], rtol=1e-5, err_msg=key)
    assert_weights_close(wrapped.get_weights(), single.get_weights())
    predicted = mirrored.predict(x)
    assert isinstance(predicted, list) and [p.shape for p in predicted] == [(23, 3), (23, 1)]


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")
def test_mixed_float16_with_loss_scaling_matches_one_device(split_cpu):
    # Replicas scale their losses by replica 0's scale; 2**24 overflows float16 at first, so the
    # first steps are skipped (and the scale halved) on every replica alike.
    split_cpu(2)
    mk.mixed_precision.set_global_policy("mixed_float16")
    try:
        single, wrapped = twin(dense_model)
        x, y = classification_data((8,), 40)
        make_optimizer = lambda: mk.optimizers.LossScaleOptimizer(mk.optimizers.SGD(0.05), initial_scale=2.0 ** 24)  # noqa: E731
        single.compile(make_optimizer(), logits_loss())
        mirrored = mk.MirroredModel(wrapped, devices=None)
        mirrored.compile(make_optimizer(), logits_loss())
        expected = single.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0)
        got = mirrored.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0)
    finally:
        mk.mixed_precision.set_global_policy("float32")
    assert float(single.optimizer.dynamic_scale) < 2.0 ** 24 and single.optimizer.iterations > 0
    assert float(mirrored.optimizer.dynamic_scale) == float(single.optimizer.dynamic_scale)
    assert mirrored.optimizer.iterations == single.optimizer.iterations
    # float16 activations: the shards' sums round differently from the whole batch's.
    for mine, theirs in zip(wrapped.get_weights(), single.get_weights()):
        numpy.testing.assert_allclose(mine, theirs, atol=2e-5)
    assert_replicas_identical(mirrored)
    numpy.testing.assert_allclose(got.history["loss"], expected.history["loss"], rtol=1e-3)
