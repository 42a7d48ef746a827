"""Spatial reshaping layers: ZeroPadding1D/2D, Cropping1D/2D, UpSampling1D/2D.

(Named test_layer_reshaping.py: pytest's default import mode needs unique
test module basenames across tests/.)
"""
import numpy
import pytest

from minikeras import layers
from minikeras.layers import Input
from tests.layers.layer_check import run_layer_test


# ----------------------------------------------------------- ZeroPadding
@pytest.mark.parametrize("padding, pairs", [
    (1, ((1, 1), (1, 1))), ((2, 0), ((2, 2), (0, 0))), (((1, 0), (2, 3)), ((1, 0), (2, 3))),
])
def test_zero_padding2d_forms(rng, padding, pairs):
    layer = layers.ZeroPadding2D(padding)
    x = rng.standard_normal((2, 3, 4, 2)).astype("float32")
    out = layer(x)
    expected = numpy.pad(x, ((0, 0),) + pairs + ((0, 0),))
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_array_equal(out.numpy(), expected)


def test_zero_padding_defaults_and_1d(rng):
    assert layers.ZeroPadding2D().padding == ((1, 1), (1, 1))
    assert layers.ZeroPadding2D().get_config()["padding"] == ((1, 1), (1, 1))  # Keras 3.15: tuples
    x = rng.standard_normal((2, 3, 2)).astype("float32")
    numpy.testing.assert_array_equal(layers.ZeroPadding1D()(x).numpy(), numpy.pad(x, ((0, 0), (1, 1), (0, 0))))
    numpy.testing.assert_array_equal(layers.ZeroPadding1D((0, 2))(x).numpy(), numpy.pad(x, ((0, 0), (0, 2), (0, 0))))


# --------------------------------------------------------------- Cropping
@pytest.mark.parametrize("cropping, index", [
    (1, (slice(1, -1), slice(1, -1))), ((1, 0), (slice(1, -1), slice(None))),
    (((0, 2), (1, 0)), (slice(0, -2), slice(1, None))), (((0, 0), (0, 0)), (slice(None), slice(None))),
])
def test_cropping2d_forms(rng, cropping, index):
    layer = layers.Cropping2D(cropping)
    x = rng.standard_normal((2, 5, 4, 2)).astype("float32")
    out = layer(x)
    expected = x[(slice(None),) + index]
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_array_equal(out.numpy(), expected)


def test_cropping1d(rng):
    x = rng.standard_normal((2, 6, 2)).astype("float32")
    numpy.testing.assert_array_equal(layers.Cropping1D()(x).numpy(), x[:, 1:-1])
    numpy.testing.assert_array_equal(layers.Cropping1D((2, 0))(x).numpy(), x[:, 2:])


# ------------------------------------------------------------- UpSampling
@pytest.mark.parametrize("size", [2, (2, 3), (1, 2)])
def test_upsampling2d_nearest_repeats_pixels(rng, size):
    layer = layers.UpSampling2D(size)
    x = rng.standard_normal((2, 3, 4, 2)).astype("float32")
    pair = (size, size) if isinstance(size, int) else size
    out = layer(x)
    expected = x.repeat(pair[0], axis=1).repeat(pair[1], axis=2)
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_array_equal(out.numpy(), expected)


def test_upsampling1d(rng):
    x = rng.standard_normal((2, 3, 2)).astype("float32")
    numpy.testing.assert_array_equal(layers.UpSampling1D(3)(x).numpy(), x.repeat(3, axis=1))
    assert layers.UpSampling1D().get_config()["size"] == 2


def test_upsampling2d_bilinear_matches_recorded_tf_keras_output():
    rng = numpy.random.default_rng(3)
    rng.uniform(-1, 1, size=(2, 4, 3))  # the recorded input was the second draw
    x = rng.uniform(-1, 1, size=(1, 5, 5, 2))[:, :2, :3]
    out = layers.UpSampling2D(2, interpolation="bilinear", dtype="float64")(x).numpy()[0]
    assert out.shape == (4, 6, 2)
    # Channel 0 of the output of keras.layers.UpSampling2D(2, interpolation="bilinear").
    expected = [[0.783422112465, 0.573221445084, 0.152819991112, -0.277862489223, -0.718826174736, -0.93930798769],
                [0.44116216898, 0.294883161783, 0.002325043082, -0.256315112114, -0.481037437916, -0.593398571014],
                [-0.243357777596, -0.261793375015, -0.298664867878, -0.213220342994, -0.005459964275,
                 0.098420321941],
                [-0.585617661476, -0.540131688118, -0.449159801006, -0.191672965884, 0.232328772545,
                 0.444329619408]]
    # TensorFlow computes the resize coordinates in float32.
    numpy.testing.assert_allclose(out[..., 0], expected, atol=1e-6)


def test_upsampling2d_bilinear_properties(rng):
    constant = numpy.full((1, 3, 4, 2), 1.5)
    numpy.testing.assert_allclose(layers.UpSampling2D(3, interpolation="bilinear")(constant).numpy(), 1.5,
                                  rtol=1e-6)
    # A linear ramp stays linear inside (half-pixel centres: step 1 / factor).
    ramp = numpy.arange(4, dtype="float64").reshape(1, 1, 4, 1) * numpy.ones((1, 2, 1, 1))
    out = layers.UpSampling2D((1, 2), interpolation="bilinear", dtype="float64")(ramp).numpy()[0, 0, :, 0]
    numpy.testing.assert_allclose(out, [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3])


@pytest.mark.parametrize("make, shape", [
    (lambda **kw: layers.ZeroPadding2D(((1, 0), (0, 2)), **kw), (2, 3, 3, 2)),
    (lambda **kw: layers.ZeroPadding1D((2, 1), **kw), (2, 3, 2)),
    (lambda **kw: layers.Cropping2D(((1, 0), (1, 1)), **kw), (2, 4, 4, 2)),
    (lambda **kw: layers.Cropping1D((0, 1), **kw), (2, 4, 2)),
    (lambda **kw: layers.UpSampling2D((2, 3), **kw), (2, 2, 3, 2)),
    (lambda **kw: layers.UpSampling1D(3, **kw), (2, 3, 2)),
    (lambda **kw: layers.UpSampling2D((3, 2), interpolation="bilinear", **kw), (2, 3, 2, 2)),
])
def test_reshaping_layers_pass_the_layer_check(rng, tmp_path, make, shape):
    run_layer_test(make, rng.standard_normal(shape).astype("float32"), tmp_path=tmp_path,
                   expected_num_trainable_weights=0)


def test_symbolic_shapes():
    x = Input(shape=(6, 5, 2))
    assert layers.ZeroPadding2D(((1, 0), (2, 2)))(x).shape == (None, 7, 9, 2)
    assert layers.Cropping2D(((1, 1), (0, 2)))(x).shape == (None, 4, 3, 2)
    assert layers.UpSampling2D((2, 3))(x).shape == (None, 12, 15, 2)
    assert layers.UpSampling1D(2)(Input(shape=(None, 3))).shape == (None, None, 3)


def test_bad_arguments_and_inputs_raise():
    with pytest.raises(ValueError, match=r"padding must be an int, a pair of ints \(height, width\)"):
        layers.ZeroPadding2D((1, 2, 3))
    with pytest.raises(ValueError, match="padding must be non-negative"):
        layers.ZeroPadding2D(-1)
    with pytest.raises(ValueError, match="cropping must be an int or a pair"):
        layers.Cropping1D((1, 2, 3))
    with pytest.raises(ValueError, match="channels_first.*not supported"):
        layers.UpSampling2D(data_format="channels_first")
    with pytest.raises(ValueError, match="interpolation must be 'nearest' or 'bilinear'"):
        layers.UpSampling2D(interpolation="bicubic")
    with pytest.raises(ValueError, match="size must be positive"):
        layers.UpSampling2D(0)
    with pytest.raises(ValueError, match=r"removes every element of axis 1 \(size 4\)"):
        layers.Cropping2D(((2, 2), (0, 0)))(numpy.zeros((1, 4, 4, 1), "float32"))
    with pytest.raises(ValueError, match="expected ndim=4"):
        layers.ZeroPadding2D()(numpy.zeros((1, 4, 4), "float32"))
