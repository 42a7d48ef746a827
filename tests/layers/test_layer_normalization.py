"""BatchNormalization and LayerNormalization.

(Named test_layer_normalization.py: test module basenames must be unique.)
Parity with tf.keras (Keras 3.15 on TF 2.21, copied weights) was checked
one-off: outputs, gradients and moving statistics agree within 4e-5.
"""
import numpy
import pytest

from minikeras import layers
from minikeras.autograd import Tensor, gradcheck
from tests.layers.layer_check import run_layer_test


def _bn_reference(x, axis, gamma, beta, epsilon=1e-3):
    reduce_axes = tuple(a for a in range(x.ndim) if a != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    mean = x.mean(axis=reduce_axes, keepdims=True)
    variance = x.var(axis=reduce_axes, keepdims=True)  # biased
    out = (x - mean) / numpy.sqrt(variance + epsilon) * gamma.reshape(shape) + beta.reshape(shape)
    return out, mean.reshape(-1), variance.reshape(-1)


def _with_weights(layer, names, x, *weights, **kwargs):
    saved = [getattr(layer, name) for name in names]
    for name, weight in zip(names, weights):
        setattr(layer, name, weight)
    try:
        return layer(x, **kwargs)
    finally:
        for name, weight in zip(names, saved):
            setattr(layer, name, weight)


# ------------------------------------------------------ BatchNormalization
def test_weights_order_names_and_keras_defaults(rng):
    layer = layers.BatchNormalization(name="bn")
    layer(rng.standard_normal((4, 3)).astype("float32"))
    assert [w.name for w in layer.weights] == ["bn/gamma", "bn/beta", "bn/moving_mean", "bn/moving_variance"]
    assert [w.name for w in layer.trainable_weights] == ["bn/gamma", "bn/beta"]
    assert [w.name for w in layer.non_trainable_weights] == ["bn/moving_mean", "bn/moving_variance"]
    gamma, beta, mean, variance = layer.get_weights()
    numpy.testing.assert_array_equal(gamma, 1)
    numpy.testing.assert_array_equal(beta, 0)
    numpy.testing.assert_array_equal(mean, 0)
    numpy.testing.assert_array_equal(variance, 1)
    assert (layer.momentum, layer.epsilon) == (0.99, 1e-3)
    assert not layer.moving_mean.requires_grad


@pytest.mark.parametrize("shape, axis", [((16, 5), -1), ((4, 3, 3, 6), -1), ((4, 6, 3, 3), 1), ((5, 4, 3), 1)])
def test_training_normalises_with_batch_statistics(rng, shape, axis):
    layer = layers.BatchNormalization(axis=axis)
    x = rng.normal(3.0, 2.0, shape).astype("float32")
    layer(x)
    channels = shape[axis]
    gamma, beta = rng.normal(1, 0.2, channels).astype("float32"), rng.normal(0, 0.2, channels).astype("float32")
    layer.set_weights([gamma, beta, numpy.zeros(channels), numpy.ones(channels)])
    out = layer(x, training=True)
    expected, _, _ = _bn_reference(x.astype("float64"), axis, gamma, beta)
    assert out.dtype == numpy.float32 and out.shape == shape
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_moving_statistics_after_several_steps_match_numpy(rng):
    momentum = 0.8
    layer = layers.BatchNormalization(momentum=momentum)
    moving_mean, moving_variance = numpy.zeros(3), numpy.ones(3)
    for _ in range(5):
        x = rng.normal(2.0, 3.0, (10, 3)).astype("float32")
        layer(x, training=True)
        _, mean, variance = _bn_reference(x.astype("float64"), -1, numpy.ones(3), numpy.zeros(3))
        moving_mean = moving_mean * momentum + mean * (1 - momentum)
        moving_variance = moving_variance * momentum + variance * (1 - momentum)  # biased, as Keras
    numpy.testing.assert_allclose(layer.moving_mean.numpy(), moving_mean, rtol=1e-5)
    numpy.testing.assert_allclose(layer.moving_variance.numpy(), moving_variance, rtol=1e-5)
    assert layer.moving_mean.dtype == numpy.float32


def test_inference_uses_moving_statistics_and_does_not_update_them(rng):
    layer = layers.BatchNormalization()
    x = rng.normal(5.0, 2.0, (8, 4)).astype("float32")
    layer(x)
    mean, variance = rng.normal(size=4).astype("float32"), rng.uniform(0.5, 2, 4).astype("float32")
    gamma, beta = rng.normal(size=4).astype("float32"), rng.normal(size=4).astype("float32")
    layer.set_weights([gamma, beta, mean, variance])
    expected = (x - mean) / numpy.sqrt(variance + 1e-3) * gamma + beta
    for out in (layer(x), layer(x, training=False)):
        numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    numpy.testing.assert_array_equal(layer.get_weights()[2], mean)
    training = layer(x, training=True).numpy()
    assert not numpy.allclose(training, expected, atol=1e-2)
    assert not numpy.array_equal(layer.get_weights()[2], mean)


def test_frozen_layer_runs_in_inference_mode(rng):
    layer = layers.BatchNormalization()
    x = rng.normal(5.0, 2.0, (8, 4)).astype("float32")
    layer(x)
    layer.trainable = False
    before = layer.get_weights()
    out = layer(x, training=True)
    numpy.testing.assert_allclose(out.numpy(), x / numpy.sqrt(1 + 1e-3), rtol=1e-5)
    for got, expected in zip(layer.get_weights(), before):
        numpy.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shape, axis", [((6, 3), -1), ((3, 2, 2, 3), -1), ((3, 3, 2, 2), 1)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_passes_the_layer_check(rng, tmp_path, shape, axis, training):
    x = rng.normal(1.0, 2.0, shape).astype("float32")
    run_layer_test(lambda **kw: layers.BatchNormalization(axis=axis, **kw), x, expected_output_shape=shape,
                   training=training, tmp_path=tmp_path, expected_num_trainable_weights=2,
                   expected_num_non_trainable_weights=2)


@pytest.mark.parametrize("shape, axis", [((6, 3), -1), ((3, 2, 4), [1, 2]), ((3, 4, 2), 1)])
def test_layer_norm_passes_the_layer_check(rng, tmp_path, shape, axis):
    x = rng.normal(1.0, 2.0, shape).astype("float32")
    run_layer_test(lambda **kw: layers.LayerNormalization(axis=axis, **kw), x, expected_output_shape=shape,
                   tmp_path=tmp_path, expected_num_trainable_weights=2, expected_num_non_trainable_weights=0)


@pytest.fixture
def blocks_of_samples(monkeypatch):
    """Two op threads and tiny blocks: every batch-norm pass runs in several
    blocks of samples, as it does for large inputs."""
    from minikeras.backend import threads, tuning

    previous = threads.num_threads()
    threads.set_num_threads(2)
    monkeypatch.setattr(tuning, "BLOCK_ELEMENTS", 8)
    yield threads
    threads.set_num_threads(previous)


@pytest.mark.parametrize("shape, axis", [((7, 3), -1), ((5, 2, 2, 3), -1), ((5, 3, 2, 2), 1)])
def test_training_in_blocks_of_samples_matches_numpy_and_gradchecks(rng, blocks_of_samples, shape, axis):
    layer = layers.BatchNormalization(axis=axis, dtype="float64")
    x = rng.normal(1.0, 2.0, shape)
    layer(x)
    channels = shape[axis]
    gamma, beta = rng.normal(1, 0.3, channels), rng.normal(0, 0.3, channels)
    layer.set_weights([gamma, beta, numpy.zeros(channels), numpy.ones(channels)])
    expected, mean, variance = _bn_reference(x, axis, gamma, beta)
    numpy.testing.assert_allclose(layer(x, training=True).numpy(), expected, rtol=1e-10, atol=1e-12)
    numpy.testing.assert_allclose(layer.moving_mean.numpy(), 0.01 * mean, rtol=1e-10, atol=1e-14)
    gradcheck(lambda t, g, b: _with_weights(layer, ["gamma", "beta"], t, g, b, training=True), [x, gamma, beta])


def test_training_gives_the_same_bits_for_any_thread_count(rng, blocks_of_samples):
    x = rng.normal(1.0, 2.0, (33, 5, 5, 8)).astype("float32")
    grad = rng.standard_normal(x.shape).astype("float32")
    results = []
    for count in (1, 2):
        blocks_of_samples.set_num_threads(count)
        layer = layers.BatchNormalization()
        tensor = Tensor(x, requires_grad=True)
        out = layer(tensor, training=True)
        out.backward(grad)
        results.append([out.numpy(), tensor.grad.numpy(), layer.gamma.grad.numpy(), layer.moving_variance.numpy()])
    for one, two in zip(*results):
        numpy.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("center, scale", [(False, True), (True, False), (False, False)])
def test_center_and_scale_switches(rng, center, scale):
    layer = layers.BatchNormalization(center=center, scale=scale, dtype="float64")
    x = rng.normal(2.0, 3.0, (6, 3))
    out = layer(x, training=True)
    assert len(layer.weights) == 2 + center + scale
    assert len(layer.trainable_weights) == center + scale
    expected, _, _ = _bn_reference(x, -1, numpy.ones(3), numpy.zeros(3))
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    gradcheck(lambda t: layer(t, training=True), [x])


def test_cross_replica_hook_gives_global_batch_statistics_and_gradients(rng):
    """Two replicas simulated in one process: the hook adds the other
    replica's sums, so replica 0's output and input gradient are the rows of
    a BatchNormalization over the whole batch."""
    full = rng.normal(1.0, 2.0, (10, 3))
    upstream = rng.normal(size=(10, 3))
    local, other = full[:4], full[4:]

    reference = layers.BatchNormalization(dtype="float64")
    x_full = Tensor(full, requires_grad=True)
    out_full = reference(x_full, training=True)
    (out_full * Tensor(upstream)).sum().backward()

    mean, variance = full.mean(0), full.var(0)
    x_hat_other = (other - mean) / numpy.sqrt(variance + 1e-3)
    contributions = [
        (other.sum(0, keepdims=True), (other ** 2).sum(0, keepdims=True), 6),
        (upstream[4:].sum(0, keepdims=True), (upstream[4:] * x_hat_other).sum(0, keepdims=True), 6),
    ]
    calls = []

    def all_reduce(first, second, count, gradients=False):
        assert gradients == bool(calls)  # the statistics in forward, then the gradient sums in backward
        extra_first, extra_second, extra_count = contributions[len(calls)]
        calls.append(count)
        device = x_local.device  # the hook gets and returns arrays of the replica's device
        first = first + device.asarray(extra_first.reshape(first.shape))
        second = second + device.asarray(extra_second.reshape(second.shape))
        return first, second, count + extra_count

    replica = layers.BatchNormalization(dtype="float64")
    replica._cross_replica_stats = all_reduce
    x_local = Tensor(local, requires_grad=True)
    out_local = replica(x_local, training=True)
    (out_local * Tensor(upstream[:4])).sum().backward()
    assert calls == [4, 4]
    numpy.testing.assert_allclose(out_local.numpy(), out_full.numpy()[:4], rtol=1e-9, atol=1e-12)
    numpy.testing.assert_allclose(x_local.grad.numpy(), x_full.grad.numpy()[:4], rtol=1e-8, atol=1e-12)
    numpy.testing.assert_allclose(replica.moving_mean.numpy(), reference.moving_mean.numpy(), rtol=1e-12)
    numpy.testing.assert_allclose(replica.moving_variance.numpy(), reference.moving_variance.numpy(), rtol=1e-9)


def test_batch_norm_config_round_trip_and_symbolic_shape(rng):
    layer = layers.BatchNormalization(axis=1, momentum=0.9, epsilon=1e-5, center=False,
                                      gamma_initializer="random_normal", gamma_regularizer="l2",
                                      beta_constraint="non_neg", synchronized=True, name="norm")
    x = rng.normal(size=(4, 3, 2)).astype("float32")
    out = layer(x)
    config = layer.get_config()
    clone = layers.BatchNormalization.from_config(config)
    clone(x)
    clone.set_weights(layer.get_weights())
    numpy.testing.assert_array_equal(clone(x).numpy(), out.numpy())
    assert clone.get_config() == config
    assert layers.BatchNormalization()(layers.Input((5, 5, 8))).shape == (None, 5, 5, 8)


def test_batch_norm_bad_input(rng):
    layer = layers.BatchNormalization(name="bn")
    layer(numpy.zeros((2, 4), "float32"))
    with pytest.raises(ValueError, match="Layer 'bn' expects the last input axis to be 4, received shape \\(2, 5\\)"):
        layer(numpy.zeros((2, 5), "float32"))
    with pytest.raises(ValueError, match="expected ndim=2"):
        layer(numpy.zeros((2, 3, 4), "float32"))
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        layers.BatchNormalization(axis=3)(numpy.zeros((2, 4), "float32"))
    with pytest.raises(ValueError, match="momentum"):
        layers.BatchNormalization(momentum=1.5)
    with pytest.raises(ValueError, match="epsilon"):
        layers.BatchNormalization(epsilon=0)
    with pytest.raises(TypeError, match="axis must be an int"):
        layers.BatchNormalization(axis=[1, 2])
    with pytest.raises(ValueError, match="shape \\(4,\\)"):
        layer.set_weights([numpy.ones(3)] * 4)


# ------------------------------------------------------ LayerNormalization
def _ln_reference(x, axes, gamma, beta, epsilon=1e-3):
    mean = x.mean(axis=axes, keepdims=True)
    variance = x.var(axis=axes, keepdims=True)
    shape = [x.shape[a] if a in axes else 1 for a in range(x.ndim)]
    return (x - mean) / numpy.sqrt(variance + epsilon) * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("shape, axis, axes", [
    ((4, 6), -1, (1,)), ((2, 3, 5), -1, (2,)), ((2, 3, 4, 2), [1, 2], (1, 2)), ((2, 3, 4, 2), [1, 3], (1, 3)),
    ((2, 3, 4), [-2, -1], (1, 2)),
])
def test_layer_norm_matches_numpy_and_gradchecks(rng, shape, axis, axes):
    layer = layers.LayerNormalization(axis=axis, dtype="float64")
    x = rng.normal(2.0, 3.0, shape)
    layer(x)
    gamma = rng.normal(1, 0.3, layer.gamma.shape)
    beta = rng.normal(0, 0.3, layer.beta.shape)
    layer.set_weights([gamma, beta])
    numpy.testing.assert_allclose(layer(x).numpy(), _ln_reference(x, axes, gamma, beta), rtol=1e-10)
    gradcheck(lambda t, g, b: _with_weights(layer, ["gamma", "beta"], t, g, b), [x, gamma, beta])
    single = layers.LayerNormalization(axis=axis)(x.astype("float32"))
    assert single.dtype == numpy.float32


def test_layer_norm_defaults_weights_and_switches(rng):
    layer = layers.LayerNormalization(name="ln")
    x = rng.normal(size=(3, 5)).astype("float32")
    layer(x)
    assert [w.name for w in layer.weights] == ["ln/gamma", "ln/beta"]
    assert layer.epsilon == 1e-3
    bare = layers.LayerNormalization(center=False, scale=False, dtype="float64")
    out = bare(x.astype("float64"))
    assert bare.weights == []
    numpy.testing.assert_allclose(out.numpy(), _ln_reference(x.astype("float64"), (1,), numpy.ones(5), numpy.zeros(5)),
                                  rtol=1e-10)
    gradcheck(lambda t: layers.LayerNormalization(scale=False, dtype="float64")(t), [x[:, :3]])
    # Same in training and inference.
    numpy.testing.assert_array_equal(layer(x, training=True).numpy(), layer(x).numpy())


def test_layer_norm_config_round_trip_and_errors(rng):
    layer = layers.LayerNormalization(axis=[1, 2], epsilon=1e-5, beta_initializer="ones", name="ln2")
    x = rng.normal(size=(2, 3, 4)).astype("float32")
    out = layer(x)
    clone = layers.LayerNormalization.from_config(layer.get_config())
    clone(x)
    numpy.testing.assert_array_equal(clone(x).numpy(), out.numpy())
    assert clone.get_config() == layer.get_config()
    assert layers.LayerNormalization()(layers.Input((7, 3))).shape == (None, 7, 3)
    with pytest.raises(ValueError, match="Layer 'ln2' expects the input axis 2 to be 4"):
        layer(numpy.zeros((2, 3, 5), "float32"))
    with pytest.raises(ValueError, match="batch axis"):
        layers.LayerNormalization(axis=0)(x)
    with pytest.raises(TypeError, match="axis"):
        layers.LayerNormalization(axis="last")
    with pytest.raises(TypeError, match="floating-point"):
        layers.LayerNormalization()(Tensor(numpy.arange(6).reshape(2, 3)))


# ------------------------------------------------- tf.keras parity (guarded)
def test_keras_parity_batch_and_layer_normalization(rng):
    """Same outputs, gradients and moving statistics as Keras with copied
    weights. Runs only where TensorFlow/Keras is installed (not in CI)."""
    keras = pytest.importorskip("keras")
    tf = pytest.importorskip("tensorflow")
    shape = (8, 5, 5, 6)
    theirs, ours = keras.layers.BatchNormalization(momentum=0.9), layers.BatchNormalization(momentum=0.9)
    x = rng.normal(3.0, 2.0, shape).astype("float32")
    theirs(x)
    ours(x)
    weights = [rng.normal(1, 0.3, 6).astype("float32"), rng.normal(0, 0.3, 6).astype("float32"),
               numpy.zeros(6, "float32"), numpy.ones(6, "float32")]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    for _ in range(3):
        batch = rng.normal(3.0, 2.0, shape).astype("float32")
        upstream = rng.normal(size=shape).astype("float32")
        tensor = tf.constant(batch)
        with tf.GradientTape() as tape:
            tape.watch(tensor)
            expected = theirs(tensor, training=True)
            loss = tf.reduce_sum(expected * upstream)
        expected_grads = tape.gradient(loss, [tensor] + theirs.trainable_weights)
        x_ours = Tensor(batch, requires_grad=True)
        got = ours(x_ours, training=True)
        (got * Tensor(upstream)).sum().backward()
        numpy.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-5)
        for mine, reference in zip([x_ours.grad, ours.gamma.grad, ours.beta.grad], expected_grads):
            numpy.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-4, atol=1e-4)
        ours.gamma.grad = ours.beta.grad = None
    for mine, reference in zip(ours.get_weights(), theirs.get_weights()):
        numpy.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-6)
    test = rng.normal(3.0, 2.0, shape).astype("float32")
    numpy.testing.assert_allclose(ours(test).numpy(), theirs(test, training=False).numpy(), atol=1e-5)

    theirs_ln, ours_ln = keras.layers.LayerNormalization(axis=[1, 3]), layers.LayerNormalization(axis=[1, 3])
    theirs_ln(x)
    ours_ln(x)
    ln_weights = [rng.normal(1, 0.3, w.shape).astype("float32") for w in theirs_ln.get_weights()]
    theirs_ln.set_weights(ln_weights)
    ours_ln.set_weights(ln_weights)
    numpy.testing.assert_allclose(ours_ln(x).numpy(), theirs_ln(x).numpy(), atol=1e-5)


# --------------------------------------------- state applied after success
def test_moving_statistics_are_kept_when_the_step_succeeds(rng):
    from minikeras.layers.state_updates import collect_state_updates

    layer = layers.BatchNormalization(momentum=0.5)
    x = rng.normal(3.0, 2.0, (8, 3)).astype("float32")
    layer(x, training=False)
    start = [w.copy() for w in layer.get_weights()[2:]]
    buffers = [layer.moving_mean.data, layer.moving_variance.data]
    with collect_state_updates() as updates:
        layer(x, training=True)
        # Inside the step the layer reads its new statistics; its own buffers are untouched.
        assert [weight for weight, _ in updates.changed()] == [layer.moving_mean, layer.moving_variance]
        for buffer, expected in zip(buffers, start):
            numpy.testing.assert_array_equal(layer.moving_mean.device.to_host(buffer), expected)
    # Committed into the same buffers (optimizers, graphs and views keep pointing at them).
    assert layer.moving_mean.data is buffers[0] and layer.moving_variance.data is buffers[1]
    _, mean, variance = _bn_reference(x.astype("float64"), -1, numpy.ones(3), numpy.zeros(3))
    numpy.testing.assert_allclose(layer.moving_mean.numpy(), 0.5 * start[0] + 0.5 * mean, rtol=1e-5)
    numpy.testing.assert_allclose(layer.moving_variance.numpy(), 0.5 * start[1] + 0.5 * variance, rtol=1e-5)


def test_moving_statistics_of_a_step_that_fails_are_dropped(rng):
    from minikeras.layers.state_updates import collect_state_updates

    layer = layers.BatchNormalization(momentum=0.5)
    x = rng.normal(3.0, 2.0, (8, 3)).astype("float32")
    layer(x, training=False)
    start = [w.copy() for w in layer.get_weights()[2:]]
    with pytest.raises(RuntimeError, match="on purpose"):
        with collect_state_updates():
            layer(x, training=True)
            raise RuntimeError("the step fails on purpose")
    for got, expected in zip(layer.get_weights()[2:], start):
        numpy.testing.assert_array_equal(got, expected)


def test_two_calls_in_one_step_update_the_statistics_in_turn(rng):
    """A GAN's train_step calls its discriminator twice: the second update
    starts from the first's value, as in Keras's eager steps."""
    from minikeras.layers.state_updates import collect_state_updates

    first, second = (rng.normal(size=(8, 3)).astype("float32") for _ in range(2))
    eager = layers.BatchNormalization(momentum=0.5)
    collected = layers.BatchNormalization(momentum=0.5)
    for layer in (eager, collected):
        layer(first, training=False)
    eager(first, training=True)
    eager(second, training=True)
    with collect_state_updates():
        collected(first, training=True)
        collected(second, training=True)
    for got, expected in zip(collected.get_weights()[2:], eager.get_weights()[2:]):
        numpy.testing.assert_allclose(got, expected, rtol=1e-6)


def test_a_step_failing_in_the_optimizer_leaves_moving_statistics_unchanged(rng):
    from minikeras import Sequential, optimizers

    class FailingSGD(optimizers.SGD):
        fail = True

        def apply_gradients(self, grads_and_vars):
            if self.fail:
                raise RuntimeError("optimizer failed on purpose")
            return super().apply_gradients(grads_and_vars)

    model = Sequential([layers.Input((3,)), layers.BatchNormalization(), layers.Dense(1)])
    optimizer = FailingSGD(0.1)
    model.compile(optimizer=optimizer, loss="mse")
    x = rng.normal(2.0, 3.0, (8, 3)).astype("float32")
    y = rng.normal(size=(8, 1)).astype("float32")
    before = model.get_weights()
    with pytest.raises(RuntimeError, match="on purpose"):
        model.train_on_batch(x, y)  # fails after the forward and backward passes
    for got, expected in zip(model.get_weights(), before):
        numpy.testing.assert_array_equal(got, expected)
    optimizer.fail = False
    model.train_on_batch(x, y)
    moving_mean = model.layers[0].moving_mean.numpy()
    numpy.testing.assert_allclose(moving_mean, 0.99 * before[2] + 0.01 * x.mean(axis=0), rtol=1e-5)
