"""Pooling layers: MaxPooling1D/2D, AveragePooling1D/2D, Global{Average,Max}Pooling1D/2D.

(Named test_layer_pooling.py: pytest's default import mode needs unique
test module basenames across tests/.)
"""
import math

import numpy
import pytest

from minikeras import layers
from minikeras.autograd import gradcheck
from minikeras.layers import Input
from minikeras.layers.base import get_layer_class


def reference_pool2d(x, pool, strides, padding, reduce):
    """Windowed max/mean, NHWC, TensorFlow's padding (padding never counts)."""
    (ph, pw), (sh, sw) = pool, strides
    height, width = x.shape[1:3]
    if padding == "same":
        out_h, out_w = math.ceil(height / sh), math.ceil(width / sw)
        top = max((out_h - 1) * sh + ph - height, 0) // 2
        left = max((out_w - 1) * sw + pw - width, 0) // 2
    else:
        out_h, out_w = (height - ph) // sh + 1, (width - pw) // sw + 1
        top = left = 0
    out = numpy.empty((x.shape[0], out_h, out_w, x.shape[3]))
    for i in range(out_h):
        for j in range(out_w):
            rows = slice(max(i * sh - top, 0), min(i * sh - top + ph, height))
            cols = slice(max(j * sw - left, 0), min(j * sw - left + pw, width))
            out[:, i, j] = reduce(x[:, rows, cols], axis=(1, 2))
    return out


@pytest.mark.parametrize("cls, reduce", [(layers.MaxPooling2D, numpy.max), (layers.AveragePooling2D, numpy.mean)])
@pytest.mark.parametrize("pool, strides, padding", [
    ((2, 2), None, "valid"), ((3, 3), (2, 2), "same"), ((2, 3), (1, 2), "same"), ((3, 2), (2, 1), "valid"),
    ((2, 2), None, "same"),
])
def test_pool2d_matches_reference_and_output_shape(rng, cls, reduce, pool, strides, padding):
    layer = cls(pool, strides, padding)
    x = rng.standard_normal((2, 7, 8, 3)).astype("float32")
    out = layer(x)
    expected = reference_pool2d(x, pool, strides or pool, padding, reduce)
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cls, reduce", [(layers.MaxPooling1D, numpy.max), (layers.AveragePooling1D, numpy.mean)])
@pytest.mark.parametrize("pool, strides, padding", [(2, None, "valid"), (3, 2, "same"), (3, 1, "valid")])
def test_pool1d_matches_reference(rng, cls, reduce, pool, strides, padding):
    layer = cls(pool, strides, padding)
    x = rng.standard_normal((2, 9, 3)).astype("float32")
    out = layer(x)
    expected = reference_pool2d(x[:, None], (1, pool), (1, strides or pool), padding, reduce)[:, 0]
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_keras_defaults_and_aliases():
    layer = layers.MaxPooling2D()
    assert (layer.pool_size, layer.strides, layer.padding) == ((2, 2), (2, 2), "valid")
    assert layers.AveragePooling2D().pool_size == (2, 2)
    assert layers.MaxPooling1D().pool_size == (2,) and layers.AveragePooling1D(3).strides == (3,)
    assert layers.MaxPool2D is layers.MaxPooling2D and layers.AvgPool2D is layers.AveragePooling2D
    assert layers.MaxPool1D is layers.MaxPooling1D and layers.AvgPool1D is layers.AveragePooling1D
    assert layers.GlobalAvgPool2D is layers.GlobalAveragePooling2D
    assert layers.GlobalMaxPool1D is layers.GlobalMaxPooling1D
    assert get_layer_class("MaxPool2D") is layers.MaxPooling2D
    assert layers.MaxPooling2D().get_config()["strides"] == (2, 2)  # Keras 3.15: tuples
    assert layers.MaxPooling2D(3, strides=1).get_config()["strides"] == (1, 1)


@pytest.mark.parametrize("cls, reduce, axes", [
    (layers.GlobalAveragePooling2D, numpy.mean, (1, 2)), (layers.GlobalMaxPooling2D, numpy.max, (1, 2)),
    (layers.GlobalAveragePooling1D, numpy.mean, (1,)), (layers.GlobalMaxPooling1D, numpy.max, (1,)),
])
@pytest.mark.parametrize("keepdims", [False, True])
def test_global_pooling(rng, cls, reduce, axes, keepdims):
    layer = cls(keepdims=keepdims)
    x = rng.standard_normal((3, 4, 5, 2) if len(axes) == 2 else (3, 4, 2)).astype("float32")
    out = layer(x)
    expected = reduce(x, axis=axes, keepdims=keepdims)
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("layer, shape", [
    (layers.MaxPooling2D(2, padding="same", dtype="float64"), (2, 5, 5, 2)),
    (layers.AveragePooling2D(3, 2, "same", dtype="float64"), (2, 5, 6, 2)),
    (layers.MaxPooling1D(3, 2, dtype="float64"), (2, 7, 2)),
    (layers.AveragePooling1D(2, padding="same", dtype="float64"), (2, 5, 2)),
    (layers.GlobalAveragePooling2D(dtype="float64"), (2, 3, 3, 2)),
    (layers.GlobalMaxPooling2D(dtype="float64"), (2, 3, 3, 2)),
    (layers.GlobalAveragePooling1D(keepdims=True, dtype="float64"), (2, 4, 3)),
    (layers.GlobalMaxPooling1D(dtype="float64"), (2, 4, 3)),
])
def test_pooling_gradcheck(rng, layer, shape):
    # Distinct values, so max pooling has no ties for finite differences.
    x = rng.permutation(numpy.prod(shape)).reshape(shape) * 0.1
    gradcheck(layer, [x])


@pytest.mark.parametrize("layer, shape", [
    (layers.MaxPooling2D((3, 2), strides=1, padding="same"), (2, 6, 6, 3)),
    (layers.AveragePooling1D(2, padding="same"), (2, 5, 3)),
    (layers.GlobalMaxPooling2D(keepdims=True), (2, 4, 4, 3)),
])
def test_config_round_trip(rng, layer, shape):
    x = rng.standard_normal(shape).astype("float32")
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    numpy.testing.assert_array_equal(clone(x).numpy(), layer(x).numpy())


def test_symbolic_shapes():
    x = Input(shape=(9, 8, 3))
    assert layers.MaxPooling2D()(x).shape == (None, 4, 4, 3)
    assert layers.AveragePooling2D(3, 2, "same")(x).shape == (None, 5, 4, 3)
    assert layers.GlobalAveragePooling2D()(x).shape == (None, 3)
    assert layers.MaxPooling1D(2, strides=1)(Input(shape=(None, 4))).shape == (None, None, 4)


def test_bad_arguments_and_inputs_raise():
    with pytest.raises(ValueError, match="channels_first.*not supported"):
        layers.MaxPooling2D(data_format="channels_first")
    with pytest.raises(ValueError, match="channels_first.*not supported"):
        layers.GlobalAveragePooling2D(data_format="channels_first")
    with pytest.raises(ValueError, match="AveragePooling2D: padding must be 'valid' or 'same'"):
        layers.AveragePooling2D(padding="causal")
    with pytest.raises(ValueError, match="pool_size must be an int or a tuple of 2 ints"):
        layers.MaxPooling2D(pool_size=(2, 2, 2))
    with pytest.raises(ValueError, match="strides must be positive"):
        layers.MaxPooling1D(strides=0)
    with pytest.raises(ValueError, match="expected ndim=4"):
        layers.MaxPooling2D()(numpy.zeros((2, 4, 4), "float32"))
    with pytest.raises(ValueError, match="expected ndim=3"):
        layers.GlobalMaxPooling1D()(numpy.zeros((2, 4, 4, 1), "float32"))
