"""Convolution layers: Conv1D, Conv2D, Conv2DTranspose, DepthwiseConv2D, SeparableConv2D.

(Named test_layer_conv.py: pytest's default import mode needs unique test
module basenames across tests/, and tests/ops/test_conv.py exists.)

The forward checks compare against a direct NumPy convolution written here
and against outputs recorded from tf.keras 3.15 (TensorFlow 2.21) in float64
with the same weights.
"""
import math

import numpy
import pytest

from minikeras import layers, regularizers
from minikeras.autograd import gradcheck
from minikeras.layers import Input
from minikeras.layers.naming import reset_names
from minikeras.losses.logits import logits_of
from tests.layers.layer_check import run_layer_test


# ------------------------------------------------------------ references
def _same_padding(size, window, stride):
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def reference_conv2d(x, kernel, strides=(1, 1), padding="valid", dilation=(1, 1)):
    """Cross-correlation, NHWC, TensorFlow's padding, by summing shifted slices."""
    kh, kw = kernel.shape[:2]
    (sh, sw), (dh, dw) = strides, dilation
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if padding == "same":
        pads = [_same_padding(x.shape[1], eh, sh), _same_padding(x.shape[2], ew, sw)]
    elif padding == "causal":  # 1-D seen as height 1: left padding only
        pads = [(0, 0), (ew - 1, 0)]
    else:
        pads = [(0, 0), (0, 0)]
    x = numpy.pad(x, [(0, 0)] + pads + [(0, 0)])
    out_h, out_w = (x.shape[1] - eh) // sh + 1, (x.shape[2] - ew) // sw + 1
    out = numpy.zeros((x.shape[0], out_h, out_w, kernel.shape[3]))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i * dh:i * dh + (out_h - 1) * sh + 1:sh, j * dw:j * dw + (out_w - 1) * sw + 1:sw]
            out += patch @ kernel[i, j]
    return out


def reference_depthwise(x, kernel, strides, padding, dilation=(1, 1)):
    channels, multiplier = kernel.shape[2:]
    outputs = [reference_conv2d(x[..., c:c + 1], kernel[:, :, c:c + 1, m:m + 1], strides, padding, dilation)
               for c in range(channels) for m in range(multiplier)]
    return numpy.concatenate(outputs, axis=-1)


def _random_weights(layer, rng):
    values = [rng.uniform(-0.5, 0.5, size=w.shape).astype(layer.dtype) for w in layer.weights]
    layer.set_weights(values)
    return values


def _call_with_weights(layer, names, x, *weights):
    """``layer(x)`` with its weights swapped for ``weights`` (for gradcheck)."""
    saved = [getattr(layer, name) for name in names]
    for name, weight in zip(names, weights):
        setattr(layer, name, weight)
    try:
        return layer(x)
    finally:
        for name, weight in zip(names, saved):
            setattr(layer, name, weight)


# ----------------------------------------------------------------- Conv2D
@pytest.mark.parametrize("strides, padding, dilation", [
    (1, "valid", 1), (1, "same", 1), (2, "valid", 1), (2, "same", 1), ((2, 3), "same", 1), ((1, 2), "valid", 1),
    (1, "same", 2), (1, "valid", (2, 1)),
])
def test_conv2d_matches_reference_and_output_shape(rng, strides, padding, dilation):
    layer = layers.Conv2D(3, (3, 2), strides=strides, padding=padding, dilation_rate=dilation)
    x = rng.standard_normal((2, 9, 8, 2)).astype("float32")
    layer(x)
    kernel, bias = _random_weights(layer, rng)
    out = layer(x)
    pair = (lambda v: (v, v) if isinstance(v, int) else v)
    expected = reference_conv2d(x, kernel, pair(strides), padding, pair(dilation)) + bias
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_conv2d_output_sizes_follow_keras():
    x = numpy.zeros((1, 7, 7, 1), "float32")
    assert layers.Conv2D(1, 3)(x).shape == (1, 5, 5, 1)
    assert layers.Conv2D(1, 3, padding="same")(x).shape == (1, 7, 7, 1)
    assert layers.Conv2D(1, 3, strides=2)(x).shape == (1, 3, 3, 1)
    assert layers.Conv2D(1, 3, strides=2, padding="same")(x).shape == (1, 4, 4, 1)
    assert layers.Conv2D(1, 2, strides=3, padding="same")(x).shape == (1, 3, 3, 1)
    assert layers.Conv2D(1, 3, dilation_rate=3)(x).shape == (1, 1, 1, 1)


@pytest.mark.parametrize("activation, reference", [
    ("relu", lambda z: numpy.maximum(z, 0)),
    ("tanh", numpy.tanh),
    ("sigmoid", lambda z: 1 / (1 + numpy.exp(-z))),
    ("softmax", lambda z: numpy.exp(z) / numpy.exp(z).sum(-1, keepdims=True)),
])
def test_conv2d_activations_and_kept_logits(rng, activation, reference):
    layer = layers.Conv2D(4, 3, padding="same", activation=activation)
    x = rng.standard_normal((2, 5, 5, 3)).astype("float32")
    layer(x)
    kernel, bias = _random_weights(layer, rng)
    out = layer(x)
    logits = reference_conv2d(x, kernel, (1, 1), "same") + bias
    numpy.testing.assert_allclose(out.numpy(), reference(logits), rtol=1e-5, atol=1e-5)
    if activation in ("softmax", "sigmoid"):
        numpy.testing.assert_allclose(logits_of(out).numpy(), logits, rtol=1e-5, atol=1e-5)
    else:
        assert logits_of(out) is None


def test_conv2d_without_bias_has_only_a_kernel(rng):
    layer = layers.Conv2D(2, 3, use_bias=False, activation="relu")
    x = rng.standard_normal((1, 4, 4, 1)).astype("float32")
    out = layer(x)
    assert [w.name.split("/")[1] for w in layer.weights] == ["kernel"]
    numpy.testing.assert_allclose(out.numpy(), numpy.maximum(reference_conv2d(x, layer.get_weights()[0]), 0),
                                  rtol=1e-5, atol=1e-6)


def test_conv2d_keras_defaults_weights_and_names(rng):
    reset_names()
    layer = layers.Conv2D(16, 3)
    layer(rng.standard_normal((2, 8, 8, 5)))
    assert layer.name == "conv2d"
    assert [w.name for w in layer.weights] == ["conv2d/kernel", "conv2d/bias"]
    kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 3, 5, 16) and bias.shape == (16,)
    numpy.testing.assert_array_equal(bias, 0)
    limit = math.sqrt(6 / (9 * 5 + 9 * 16))  # glorot_uniform on receptive-field fans
    assert limit * 0.9 < numpy.abs(kernel).max() <= limit
    assert layer.count_params() == 3 * 3 * 5 * 16 + 16
    config = layer.get_config()
    assert config["strides"] == (1, 1) and config["padding"] == "valid" and config["data_format"] == "channels_last"
    assert config["dilation_rate"] == (1, 1) and config["groups"] == 1 and config["activation"] == "linear"


def test_integer_inputs_are_cast(rng):
    layer = layers.Conv2D(2, 2)
    out = layer(numpy.ones((1, 3, 3, 1), dtype="int64"))
    assert out.dtype == numpy.float32 and out.shape == (1, 2, 2, 2)


def test_conv2d_activity_regularizer_adds_a_loss_per_call(rng):
    layer = layers.Conv2D(2, 3, activity_regularizer=regularizers.L2(0.1), kernel_regularizer="l2")
    x = rng.standard_normal((4, 5, 5, 1)).astype("float32")
    out = layer(x)
    assert len(layer.losses) == 2
    numpy.testing.assert_allclose(layer.losses[1].numpy(), 0.1 * (out.numpy() ** 2).sum() / 4, rtol=1e-5)


# ----------------------------------------------------------------- Conv1D
@pytest.mark.parametrize("strides, padding, dilation", [
    (1, "valid", 1), (2, "same", 1), (1, "causal", 1), (1, "causal", 2), (3, "valid", 1),
])
def test_conv1d_matches_reference(rng, strides, padding, dilation):
    layer = layers.Conv1D(4, 3, strides=strides, padding=padding, dilation_rate=dilation)
    x = rng.standard_normal((2, 10, 3)).astype("float32")
    layer(x)
    kernel, bias = _random_weights(layer, rng)
    assert kernel.shape == (3, 3, 4)
    out = layer(x)
    expected = reference_conv2d(x[:, None], kernel[None], (1, strides), padding, (1, dilation))[:, 0] + bias
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_conv1d_causal_output_does_not_see_the_future(rng):
    layer = layers.Conv1D(2, 3, padding="causal", dilation_rate=2)
    x = rng.standard_normal((1, 12, 2)).astype("float32")
    changed = x.copy()
    changed[:, 7:] += 1.0
    a, b = layer(x).numpy(), layer(changed).numpy()
    numpy.testing.assert_array_equal(a[:, :7], b[:, :7])
    assert not numpy.allclose(a[:, 7:], b[:, 7:])


# -------------------------------------------------------- Conv2DTranspose
@pytest.mark.parametrize("strides, padding, output_padding, expected_hw", [
    (1, "valid", None, (7, 6)), (2, "valid", None, (11, 9)), (2, "same", None, (10, 8)),
    (3, "valid", None, (15, 12)), (2, "valid", 1, (12, 10)), ((2, 3), "same", (1, 2), (10, 12)),
])
def test_conv2d_transpose_output_sizes_follow_keras(strides, padding, output_padding, expected_hw):
    layer = layers.Conv2DTranspose(2, 3, strides=strides, padding=padding, output_padding=output_padding)
    x = numpy.zeros((1, 5, 4, 3), "float32")
    out = layer(x)
    assert out.shape == (1,) + expected_hw + (2,) == layer.compute_output_shape(x.shape)
    assert layer.get_weights()[0].shape == (3, 3, 2, 3)


@pytest.mark.parametrize("strides, padding", [(1, "valid"), (2, "same"), (2, "valid")])
def test_conv2d_transpose_is_the_adjoint_of_conv2d(rng, strides, padding):
    """<conv2d(y, K), x> == <y, conv2d_transpose(x, K)> with the same kernel."""
    layer = layers.Conv2DTranspose(3, 3, strides=strides, padding=padding, use_bias=False, dtype="float64")
    x = rng.standard_normal((2, 4, 5, 2))
    y_shape = layer.compute_output_shape(x.shape)
    layer(x)
    (kernel,) = _random_weights(layer, rng)
    y = rng.standard_normal(y_shape)
    forward = reference_conv2d(y, kernel, (strides, strides), padding)
    assert forward.shape == x.shape
    numpy.testing.assert_allclose((forward * x).sum(), (y * layer(x).numpy()).sum(), rtol=1e-10)


# -------------------------------------------------------- DepthwiseConv2D
@pytest.mark.parametrize("strides, padding, multiplier, dilation", [
    (1, "valid", 1, 1), (2, "same", 2, 1), (1, "same", 3, 2),
])
def test_depthwise_conv2d_matches_reference(rng, strides, padding, multiplier, dilation):
    layer = layers.DepthwiseConv2D(3, strides=strides, padding=padding, depth_multiplier=multiplier,
                                   dilation_rate=dilation)
    x = rng.standard_normal((2, 7, 6, 3)).astype("float32")
    layer(x)
    kernel, bias = _random_weights(layer, rng)
    assert kernel.shape == (3, 3, 3, multiplier) and bias.shape == (3 * multiplier,)
    out = layer(x)
    expected = reference_depthwise(x, kernel, (strides, strides), padding, (dilation, dilation)) + bias
    assert out.shape == expected.shape == layer.compute_output_shape(x.shape)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    assert [w.name.split("/")[1] for w in layer.weights] == ["kernel", "bias"]


# -------------------------------------------------------- SeparableConv2D
def test_separable_conv2d_is_depthwise_then_pointwise(rng):
    layer = layers.SeparableConv2D(5, 3, strides=2, padding="same", depth_multiplier=2, activation="relu")
    x = rng.standard_normal((2, 7, 7, 3)).astype("float32")
    layer(x)
    assert [w.name.split("/")[1] for w in layer.weights] == ["depthwise_kernel", "pointwise_kernel", "bias"]
    depthwise, pointwise, bias = _random_weights(layer, rng)
    assert depthwise.shape == (3, 3, 3, 2) and pointwise.shape == (1, 1, 6, 5) and bias.shape == (5,)
    expected = numpy.maximum(reference_depthwise(x, depthwise, (2, 2), "same") @ pointwise[0, 0] + bias, 0)
    out = layer(x)
    assert out.shape == (2, 4, 4, 5) == layer.compute_output_shape(x.shape)
    numpy.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


# -------------------------------------------------------------- gradcheck
@pytest.mark.parametrize("make, shape", [
    (lambda **kw: layers.Conv2D(2, 3, strides=2, padding="same", **kw), (2, 5, 5, 2)),
    (lambda **kw: layers.Conv2D(2, (2, 3), activation="relu", **kw), (2, 5, 5, 2)),
    (lambda **kw: layers.Conv2D(2, 2, activation="tanh", use_bias=False, **kw), (2, 5, 5, 2)),
    (lambda **kw: layers.Conv2D(3, (3, 2), strides=(2, 1), padding="same", activation="relu", kernel_regularizer="l2",
                                bias_initializer="ones", **kw), (2, 6, 6, 2)),
    (lambda **kw: layers.Conv1D(2, 3, padding="causal", dilation_rate=2, activation="sigmoid", **kw), (2, 6, 2)),
    (lambda **kw: layers.Conv2DTranspose(2, 3, strides=2, padding="same", **kw), (2, 5, 5, 2)),
    (lambda **kw: layers.Conv2DTranspose(3, 3, strides=2, padding="valid", output_padding=1, activation="sigmoid",
                                         **kw), (2, 4, 4, 2)),
    (lambda **kw: layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", depthwise_regularizer="l1", **kw),
     (2, 5, 5, 2)),
    (lambda **kw: layers.SeparableConv2D(2, 3, activation="relu", **kw), (2, 5, 5, 2)),
    (lambda **kw: layers.SeparableConv2D(3, 2, depth_multiplier=2, pointwise_initializer="he_normal", use_bias=False,
                                         **kw), (2, 5, 5, 2)),
])
def test_conv_layers_pass_the_layer_check(rng, tmp_path, make, shape):
    run_layer_test(make, rng.standard_normal(shape).astype("float32"), tmp_path=tmp_path)


def test_set_weights_checks_shapes(rng):
    layer = layers.Conv2D(2, 3)
    layer(numpy.zeros((1, 4, 4, 3), "float32"))
    with pytest.raises(ValueError, match=r"has shape \(3, 3, 3, 2\), received an array of shape \(3, 3, 2, 2\)"):
        layer.set_weights([numpy.zeros((3, 3, 2, 2)), numpy.zeros(2)])


def test_functional_input_gives_symbolic_shapes():
    x = Input(shape=(12, 10, 3))
    y = layers.Conv2D(4, 3, strides=2, padding="same")(x)
    assert y.shape == (None, 6, 5, 4)
    z = layers.SeparableConv2D(2, 3)(layers.DepthwiseConv2D(3)(y))
    assert z.shape == (None, 2, 1, 2)
    assert layers.Conv2DTranspose(2, 2, strides=2)(x).shape == (None, 24, 20, 2)
    assert layers.Conv1D(5, 3, padding="causal")(Input(shape=(None, 4))).shape == (None, None, 5)


# ------------------------------------------------------------------ errors
def test_channels_first_is_refused_clearly():
    for make in (lambda: layers.Conv2D(2, 3, data_format="channels_first"),
                 lambda: layers.Conv1D(2, 3, data_format="channels_first"),
                 lambda: layers.DepthwiseConv2D(3, data_format="channels_first")):
        with pytest.raises(ValueError, match="channels_first.*not supported"):
            make()


@pytest.mark.parametrize("make, message", [
    (lambda: layers.Conv2D(3, 3, groups=2), "filters must be evenly divisible by the number of groups"),
    (lambda: layers.Conv2D(2, 3, groups=0), "groups must be positive"),
    (lambda: layers.Conv2D(0, 3), "filters must be positive, received 0"),
    (lambda: layers.Conv2D(2, (3, 3, 3)), "kernel_size must be an int or a tuple of 2 ints"),
    (lambda: layers.Conv2D(2, 3, padding="full"), "padding must be 'valid' or 'same', received 'full'"),
    (lambda: layers.Conv2D(2, 3, padding="causal"), "padding must be 'valid' or 'same', received 'causal'"),
    (lambda: layers.Conv2D(2, 3, strides=0), "strides must be positive"),
    (lambda: layers.Conv2D(2, 3, strides=2, dilation_rate=2), "strides > 1 cannot be combined with dilation"),
    (lambda: layers.Conv2DTranspose(2, 3, strides=2, output_padding=2), "output_padding .* smaller than strides"),
    (lambda: layers.DepthwiseConv2D(3, depth_multiplier=0), "depth_multiplier must be positive"),
])
def test_bad_arguments_raise(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_wrong_rank_and_channel_mismatch_raise():
    layer = layers.Conv2D(2, 3)
    with pytest.raises(ValueError, match=r"expects inputs of rank 4 \(batch, height, width, channels\)"):
        layer(numpy.zeros((2, 5, 5), "float32"))
    layer(numpy.zeros((2, 5, 5, 3), "float32"))
    with pytest.raises(ValueError, match=r"expects the last input axis to be 3, received shape \(2, 5, 5, 4\)"):
        layer(numpy.zeros((2, 5, 5, 4), "float32"))
    with pytest.raises(ValueError, match="expected ndim=4"):
        layer(numpy.zeros((5, 5, 3), "float32"))
    with pytest.raises(ValueError, match="expects inputs of rank 3"):
        layers.Conv1D(2, 3)(numpy.zeros((2, 5, 5, 3), "float32"))


# ------------------------------------------------- recorded tf.keras outputs
def _keras_weights(layer):
    """The weights the recorded tf.keras outputs were computed with."""
    rng = numpy.random.default_rng(7)
    layer.set_weights([rng.uniform(-0.5, 0.5, size=w.shape) for w in layer.weights])


def _keras_image():
    rng = numpy.random.default_rng(3)
    rng.uniform(-1, 1, size=(2, 4, 3))  # the recorded recurrent layers' input came first
    return rng.uniform(-1, 1, size=(1, 5, 5, 2))


def test_conv2d_matches_recorded_tf_keras_output():
    layer = layers.Conv2D(2, 3, strides=2, padding="same", dtype="float64")
    x = _keras_image()
    layer(x)
    _keras_weights(layer)
    expected = [[[0.569812656734, -0.508019090282], [-0.580538019138, -0.031064517934],
                 [-0.079802673989, -0.025455813029]],
                [[-0.671454133096, -0.262960711858], [0.726697900049, -0.418599962903],
                 [0.146765659957, 0.068217833062]],
                [[0.090809528884, -0.300596622625], [0.157928432693, -0.774489059051],
                 [0.065753743522, -0.164327166729]]]
    numpy.testing.assert_allclose(layer(x).numpy()[0], expected, atol=1e-11)


def test_conv2d_transpose_matches_recorded_tf_keras_output():
    layer = layers.Conv2DTranspose(2, 3, strides=2, padding="same", dtype="float64")
    x = _keras_image()[:, :3, :3]
    layer(x)
    _keras_weights(layer)
    out = layer(x).numpy()[0]
    assert out.shape == (6, 6, 2)
    # The first two rows and a corner of the recorded output.
    numpy.testing.assert_allclose(out[0, :, 0], [0.0351946589770, -0.223392027062, 0.306726308899,
                                                 0.0851700399940, -0.118119398552, 0.211866763910], atol=1e-11)
    numpy.testing.assert_allclose(out[1, :, 1], [-0.483590567620, -0.317265277115, -0.456800008305,
                                                 -0.236033349957, -0.734111731160, -0.408634316250], atol=1e-11)
    numpy.testing.assert_allclose(out[5, 5], [0.154070070488, -0.514527520241], atol=1e-11)


def test_depthwise_conv2d_matches_recorded_tf_keras_output():
    layer = layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", dtype="float64")
    x = _keras_image()[:, :4, :4]
    layer(x)
    _keras_weights(layer)
    out = layer(x).numpy()[0]
    numpy.testing.assert_allclose(out[0], [[0.39545677375, -0.131589011672, 0.504403612786, -0.721968997548],
                                           [-0.080699405493, -0.388014700978, 0.325847892087, -0.10307158274],
                                           [-0.587474660126, -0.885235341971, 0.336984370789, 0.508631905098],
                                           [-0.145886081334, -0.502353579194, 0.24997741911, -1.037803566459]],
                                  atol=1e-11)
    numpy.testing.assert_allclose(out[3, 3], [-0.407025477434, -0.433116553697, 0.679066311402, -0.305505893405],
                                  atol=1e-11)


def test_separable_conv2d_matches_recorded_tf_keras_output():
    layer = layers.SeparableConv2D(2, 3, dtype="float64")
    x = _keras_image()
    layer(x)
    _keras_weights(layer)
    expected = [[[0.165105879376, -0.140339163122], [0.163936816132, -0.469044703294],
                 [0.007448020003, -0.691925410973]],
                [[0.136780868276, -0.490632082981], [-0.097519350301, -0.900517523593],
                 [0.081476524761, -0.520658225202]],
                [[-0.012571599266, -0.628383416921], [0.257209518, -0.157923094069],
                 [0.092799124784, -0.598434890815]]]
    numpy.testing.assert_allclose(layer(x).numpy()[0], expected, atol=1e-11)


@pytest.mark.parametrize("make, message", [
    (lambda: layers.Conv2D(2.5, 3), "Conv2D: filters must be an int, received float 2.5"),
    (lambda: layers.SeparableConv2D(2, 3, depth_multiplier="2"), "SeparableConv2D: depth_multiplier must be an int"),
])
def test_non_integer_counts_raise_type_errors(make, message):
    with pytest.raises(TypeError, match=message):
        make()
