"""Dropout, SpatialDropout, GaussianNoise, GaussianDropout, ActivityRegularization.

(Named test_layer_regularization.py: test module basenames must be unique.)
"""
import numpy
import pytest

import minikeras
from minikeras import layers
from minikeras.autograd import Tensor, gradcheck


@pytest.fixture
def ones():
    return numpy.ones((64, 50), "float32")


def test_dropout_is_identity_unless_training(ones):
    layer = layers.Dropout(0.5)
    assert layer(ones).numpy() is not None
    numpy.testing.assert_array_equal(layer(ones).numpy(), ones)
    numpy.testing.assert_array_equal(layer(ones, training=False).numpy(), ones)
    x = Tensor(ones)
    assert layer(x) is x


def test_dropout_in_training_drops_the_rate_and_rescales(ones):
    out = layers.Dropout(0.3)(ones, training=True).numpy()
    kept = out != 0
    assert kept.mean() == pytest.approx(0.7, abs=0.02)
    numpy.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    assert out.dtype == numpy.float32


def test_dropout_gradient_is_the_same_mask(ones):
    x = Tensor(ones, requires_grad=True)
    out = layers.Dropout(0.5)(x, training=True)
    out.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), out.numpy())


def test_dropout_reproducible_under_library_seed(ones):
    layer = layers.Dropout(0.5)
    minikeras.random.seed(3)
    first = layer(ones, training=True).numpy()
    second = layer(ones, training=True).numpy()
    assert not numpy.array_equal(first, second)
    minikeras.random.seed(3)
    numpy.testing.assert_array_equal(layer(ones, training=True).numpy(), first)


def test_seeded_dropout_has_its_own_stream(ones):
    first_layer, second_layer = layers.Dropout(0.5, seed=11), layers.Dropout(0.5, seed=11)
    minikeras.random.seed(1)
    a1, a2 = first_layer(ones, training=True).numpy(), first_layer(ones, training=True).numpy()
    minikeras.random.seed(2)  # does not affect a seeded layer
    b1, b2 = second_layer(ones, training=True).numpy(), second_layer(ones, training=True).numpy()
    numpy.testing.assert_array_equal(a1, b1)
    numpy.testing.assert_array_equal(a2, b2)
    assert not numpy.array_equal(a1, a2)


def test_dropout_noise_shape_shares_the_mask():
    x = numpy.ones((4, 10, 6), "float32")
    out = layers.Dropout(0.5, noise_shape=(None, 1, 6))(x, training=True).numpy()
    for step in range(1, 10):
        numpy.testing.assert_array_equal(out[:, step], out[:, 0])


def test_dropout_training_flag_follows_the_outer_call(ones):
    # A layer inside a Lambda gets training from the outer call.
    dropout = layers.Dropout(0.9)
    wrapper = layers.Lambda(lambda t: dropout(t))
    assert (wrapper(ones, training=True).numpy() == 0).mean() > 0.8
    numpy.testing.assert_array_equal(wrapper(ones).numpy(), ones)


def test_dropout_rate_edges_and_errors(ones):
    numpy.testing.assert_array_equal(layers.Dropout(0.0)(ones, training=True).numpy(), ones)
    numpy.testing.assert_array_equal(layers.Dropout(1.0)(ones, training=True).numpy(), 0 * ones)
    with pytest.raises(ValueError, match="rate must be a number in \\[0, 1\\]"):
        layers.Dropout(1.5)
    with pytest.raises(ValueError, match="rate"):
        layers.Dropout("half")
    with pytest.raises(ValueError, match="seed"):
        layers.Dropout(0.5, seed=-3)


def test_dropout_config_round_trip_and_shape_via_input():
    layer = layers.Dropout(0.25, noise_shape=(None, 1), seed=5, name="drop")
    clone = layers.Dropout.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    assert (clone.rate, clone.noise_shape, clone.seed) == (0.25, (None, 1), 5)
    assert layers.Dropout(0.5)(layers.Input((7,))).shape == (None, 7)


def test_spatial_dropout_2d_drops_whole_channels():
    x = numpy.ones((8, 5, 5, 16), "float32")
    out = layers.SpatialDropout2D(0.5)(x, training=True).numpy()
    per_channel = out.reshape(8, 25, 16)
    # Every channel map is all zeros or all 2.
    assert numpy.all(per_channel.min(axis=1) == per_channel.max(axis=1))
    assert set(numpy.unique(out)) <= {0.0, 2.0}
    assert 0.3 < (out == 0).mean() < 0.7
    first = layers.SpatialDropout2D(0.5, data_format="channels_first")(x.transpose(0, 3, 1, 2), training=True)
    per_map = first.numpy().reshape(8, 16, 25)
    assert numpy.all(per_map.min(axis=2) == per_map.max(axis=2))
    numpy.testing.assert_array_equal(layers.SpatialDropout2D(0.5)(x).numpy(), x)
    with pytest.raises(ValueError, match="expected ndim=4"):
        layers.SpatialDropout2D(0.5)(numpy.ones((2, 3, 4), "float32"), training=True)
    config = layers.SpatialDropout2D(0.2, data_format="channels_first").get_config()
    assert config["data_format"] == "channels_first" and "noise_shape" not in config
    assert layers.SpatialDropout2D.from_config(config).rate == 0.2


def test_spatial_dropout_1d():
    out = layers.SpatialDropout1D(0.5)(numpy.ones((4, 9, 6), "float32"), training=True).numpy()
    assert numpy.all(out.min(axis=1) == out.max(axis=1))


def test_gaussian_noise(ones):
    layer = layers.GaussianNoise(0.5)
    numpy.testing.assert_array_equal(layer(ones).numpy(), ones)
    noisy = layer(ones, training=True).numpy() - 1
    assert noisy.std() == pytest.approx(0.5, rel=0.05) and abs(noisy.mean()) < 0.03
    x = Tensor(ones, requires_grad=True)
    layer(x, training=True).sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), numpy.ones_like(ones))
    assert layers.GaussianNoise.from_config(layer.get_config()).stddev == 0.5
    with pytest.raises(ValueError, match="stddev"):
        layers.GaussianNoise(-1.0)


def test_gaussian_dropout(ones):
    out = layers.GaussianDropout(0.2)(ones, training=True).numpy()
    assert out.mean() == pytest.approx(1.0, abs=0.02)
    assert out.std() == pytest.approx((0.2 / 0.8) ** 0.5, rel=0.05)
    numpy.testing.assert_array_equal(layers.GaussianDropout(0.2)(ones).numpy(), ones)
    with pytest.raises(ValueError, match="\\[0, 1\\)"):
        layers.GaussianDropout(1.0)


def test_activity_regularization_adds_a_batch_scaled_loss(rng):
    x = rng.standard_normal((4, 3))
    layer = layers.ActivityRegularization(l1=0.1, l2=0.2, dtype="float64")
    out = layer(x)
    numpy.testing.assert_array_equal(out.numpy(), x)
    (loss,) = layer.losses
    assert loss.item() == pytest.approx((0.1 * numpy.abs(x).sum() + 0.2 * (x ** 2).sum()) / 4)

    def penalty(t):
        regularizer = layers.ActivityRegularization(l1=0.1, l2=0.2, dtype="float64")
        regularizer(t)
        return regularizer.losses[0]

    gradcheck(penalty, [x])
    assert layers.ActivityRegularization.from_config(layer.get_config()).l2 == 0.2
