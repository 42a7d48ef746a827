"""Core layers: Dense, Activation, Flatten, Reshape, Permute, RepeatVector, Lambda.

(Named test_layer_core.py: pytest's default import mode needs unique test
module basenames across tests/.)
"""
import numpy
import pytest

from minikeras import constraints, layers, ops, regularizers
from minikeras.autograd import Tensor, gradcheck
from minikeras.layers.base import weight_constraint
from minikeras.layers.naming import reset_names
from minikeras.losses.logits import logits_of
from tests.layers.layer_check import run_layer_test


def _call_with_weights(layer, names, x, *weights):
    """Run ``layer(x)`` with its weights swapped for the given Tensors, so
    gradcheck can differentiate with respect to them."""
    saved = [getattr(layer, name) for name in names]
    for name, weight in zip(names, weights):
        setattr(layer, name, weight)
    try:
        return layer(x)
    finally:
        for name, weight in zip(names, saved):
            setattr(layer, name, weight)


# ------------------------------------------------------------------ Dense
@pytest.mark.parametrize("activation, reference", [
    (None, lambda z: z),
    ("relu", lambda z: numpy.maximum(z, 0)),
    ("tanh", numpy.tanh),
    ("sigmoid", lambda z: 1 / (1 + numpy.exp(-z))),
    ("softmax", lambda z: numpy.exp(z) / numpy.exp(z).sum(-1, keepdims=True)),
])
def test_dense_matches_numpy(rng, activation, reference):
    layer = layers.Dense(4, activation=activation)
    x = rng.standard_normal((5, 3)).astype("float32")
    out = layer(x)
    kernel, bias = rng.standard_normal((3, 4)).astype("float32"), rng.standard_normal(4).astype("float32")
    layer.set_weights([kernel, bias])
    out = layer(x)
    assert out.shape == (5, 4) and out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), reference(x @ kernel + bias), rtol=1e-5, atol=1e-6)


def test_dense_applies_to_the_last_axis_of_higher_rank_inputs(rng):
    layer = layers.Dense(2, use_bias=False)
    x = rng.standard_normal((2, 3, 5)).astype("float32")
    out = layer(x)
    assert out.shape == (2, 3, 2)
    numpy.testing.assert_allclose(out.numpy(), x @ layer.get_weights()[0], rtol=1e-5, atol=1e-6)
    assert len(layer.weights) == 1


def test_dense_weights_follow_keras_shapes_and_defaults(rng):
    reset_names()
    layer = layers.Dense(7)
    layer(rng.standard_normal((2, 300)))
    kernel, bias = layer.get_weights()
    assert kernel.shape == (300, 7) and bias.shape == (7,)
    assert [w.name for w in layer.weights] == ["dense/kernel", "dense/bias"]
    numpy.testing.assert_array_equal(bias, 0)
    limit = numpy.sqrt(6 / 307)  # glorot_uniform
    assert numpy.abs(kernel).max() <= limit and numpy.abs(kernel).max() > 0.9 * limit
    assert layer.count_params() == 300 * 7 + 7


def test_default_names_count_like_keras():
    reset_names()
    names = [layers.Dense(1).name, layers.Dense(1).name, layers.Activation("relu").name, layers.Dense(1).name]
    assert names == ["dense", "dense_1", "activation", "dense_2"]
    assert layers.BatchNormalization().name == "batch_normalization"
    assert layers.RepeatVector(2).name == "repeat_vector"


@pytest.mark.parametrize("activation", [None, "relu", "tanh", "softmax"])
@pytest.mark.parametrize("use_bias", [True, False])
def test_dense_passes_the_layer_check(rng, tmp_path, activation, use_bias):
    x = rng.standard_normal((4, 5)).astype("float32")
    run_layer_test(lambda **kw: layers.Dense(3, activation=activation, use_bias=use_bias, **kw), x,
                   expected_output_shape=(4, 3), tmp_path=tmp_path,
                   expected_num_trainable_weights=2 if use_bias else 1, expected_num_non_trainable_weights=0)


@pytest.mark.parametrize("make, shape, expected", [
    (lambda **kw: layers.Dense(2, activation="relu", **kw), (2, 3, 4), (2, 3, 2)),
    (lambda **kw: layers.Activation("tanh", **kw), (2, 3), (2, 3)),
    (lambda **kw: layers.Flatten(**kw), (2, 3, 4), (2, 12)),
    (lambda **kw: layers.Reshape((6, 2), **kw), (2, 3, 4), (2, 6, 2)),
    (lambda **kw: layers.Permute((2, 1), **kw), (2, 3, 4), (2, 4, 3)),
    (lambda **kw: layers.RepeatVector(3, **kw), (2, 4), (2, 3, 4)),
])
def test_core_layers_pass_the_layer_check(rng, tmp_path, make, shape, expected):
    run_layer_test(make, rng.standard_normal(shape).astype("float32"), expected_output_shape=expected,
                   tmp_path=tmp_path)


def test_fused_relu_gradient_matches_composed_ops(rng):
    layer = layers.Dense(6, activation="relu")
    x = Tensor(rng.standard_normal((8, 5)).astype("float32"), requires_grad=True)
    layer(x).sum().backward()
    fused = [x.grad.numpy(), layer.kernel.grad.numpy(), layer.bias.grad.numpy()]
    kernel = Tensor(layer.kernel.numpy(), requires_grad=True)
    bias = Tensor(layer.bias.numpy(), requires_grad=True)
    x2 = Tensor(x.numpy(), requires_grad=True)
    ops.relu(ops.add(ops.matmul(x2, kernel), bias)).sum().backward()
    for got, expected in zip(fused, [x2.grad.numpy(), kernel.grad.numpy(), bias.grad.numpy()]):
        numpy.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_dense_keeps_logits_for_softmax_and_sigmoid(rng):
    x = rng.standard_normal((3, 4)).astype("float32")
    for activation in ("softmax", "sigmoid"):
        layer = layers.Dense(2, activation=activation)
        out = layer(x)
        logits = logits_of(out)
        assert logits is not None and logits.shape == (3, 2)
        kernel, bias = layer.get_weights()
        numpy.testing.assert_allclose(logits.numpy(), x @ kernel + bias, rtol=1e-5, atol=1e-6)
    assert logits_of(layers.Dense(2, activation="relu")(x)) is None
    assert logits_of(layers.Activation("softmax")(x)) is not None


def test_dense_input_spec_and_bad_arguments(rng):
    layer = layers.Dense(3, name="head")
    layer(rng.standard_normal((2, 4)))
    with pytest.raises(ValueError, match="Layer 'head' expects the last input axis to be 4, received shape \\(2, 5\\)"):
        layer(rng.standard_normal((2, 5)))
    with pytest.raises(ValueError, match="min_ndim=2"):
        layers.Dense(3)(numpy.zeros(4, "float32"))
    with pytest.raises(ValueError, match="units must be a positive integer"):
        layers.Dense(0)
    with pytest.raises(ValueError, match="units must be a positive integer"):
        layers.Dense(2.5)
    with pytest.raises(ValueError, match="Unknown activation 'rellu'"):
        layers.Dense(2, activation="rellu")
    with pytest.raises(TypeError, match="unexpected keyword"):
        layers.Dense(2, kernel_init="zeros")


def test_dense_set_weights_round_trip_and_mismatch(rng):
    layer = layers.Dense(3)
    layer(rng.standard_normal((2, 4)))
    values = [rng.standard_normal((4, 3)).astype("float32"), rng.standard_normal(3).astype("float32")]
    layer.set_weights(values)
    for got, expected in zip(layer.get_weights(), values):
        numpy.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="shape \\(4, 3\\).*\\(3, 4\\)"):
        layer.set_weights([values[0].T, values[1]])
    with pytest.raises(ValueError, match="expects 2 weight"):
        layer.set_weights(values[:1])


def test_dense_config_round_trip_gives_identical_output(rng):
    layer = layers.Dense(5, activation="gelu", use_bias=True, kernel_initializer="he_normal",
                         bias_initializer="ones", kernel_regularizer=regularizers.L2(0.02),
                         activity_regularizer="l1", kernel_constraint=constraints.MaxNorm(3), name="proj")
    x = rng.standard_normal((3, 4)).astype("float32")
    out = layer(x)
    config = layer.get_config()
    assert config["activation"] == "gelu" and config["units"] == 5
    assert config["kernel_initializer"] == {"class_name": "HeNormal", "config": {"seed": None}}
    assert config["kernel_regularizer"] == {"class_name": "L2", "config": {"l2": 0.02}}
    clone = layers.Dense.from_config(config)
    clone(x)
    clone.set_weights(layer.get_weights())
    numpy.testing.assert_array_equal(clone(x).numpy(), out.numpy())
    assert clone.get_config() == config
    assert isinstance(weight_constraint(clone.kernel), constraints.MaxNorm)


def test_dense_regularization_losses(rng):
    layer = layers.Dense(2, kernel_regularizer="l2", activity_regularizer=regularizers.L1(0.5))
    x = rng.standard_normal((4, 3)).astype("float32")
    out = layer(x)
    losses = layer.losses
    assert len(losses) == 2
    kernel = layer.get_weights()[0]
    assert losses[0].item() == pytest.approx(0.01 * (kernel ** 2).sum(), rel=1e-5)
    # The activity penalty is divided by the batch size (Keras 3).
    assert losses[1].item() == pytest.approx(0.5 * numpy.abs(out.numpy()).sum() / 4, rel=1e-5)


def test_dense_via_input_and_integer_inputs(rng):
    x = layers.Input(shape=(6,))
    y = layers.Dense(4)(x)
    assert y.shape == (None, 4)
    sequence = layers.Input(shape=(None, 6))
    assert layers.Dense(3)(sequence).shape == (None, None, 3)
    out = layers.Dense(2)(numpy.arange(6).reshape(2, 3))
    assert out.dtype == numpy.float32


def test_dense_float64_layer_keeps_float64(rng):
    layer = layers.Dense(2, dtype="float64")
    out = layer(rng.standard_normal((3, 2)))
    assert out.dtype == numpy.float64 and layer.kernel.dtype == numpy.float64


# ------------------------------------------------------------- Activation
def test_activation_layer(rng):
    x = rng.standard_normal((2, 3)).astype("float32")
    numpy.testing.assert_allclose(layers.Activation("relu")(x).numpy(), numpy.maximum(x, 0))
    layer = layers.Activation("tanh")
    clone = layers.Activation.from_config(layer.get_config())
    numpy.testing.assert_array_equal(clone(x).numpy(), layer(x).numpy())
    gradcheck(lambda t: layers.Activation("softplus", dtype="float64")(t), [x.astype("float64")])
    assert layers.Activation("relu")(layers.Input((3, 4))).shape == (None, 3, 4)


# ------------------------------------------------------- reshaping layers
def test_flatten(rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype("float32")
    out = layers.Flatten()(x)
    assert out.shape == (2, 60)
    numpy.testing.assert_array_equal(out.numpy(), x.reshape(2, -1))
    first = layers.Flatten(data_format="channels_first")(x)
    numpy.testing.assert_array_equal(first.numpy(), x.transpose(0, 2, 3, 1).reshape(2, -1))
    assert layers.Flatten()(numpy.zeros((3,), "float32")).shape == (3, 1)
    assert layers.Flatten()(layers.Input((4, 5))).shape == (None, 20)
    gradcheck(lambda t: layers.Flatten(dtype="float64")(t) * 2.0, [x[:, :2, :2, :2].astype("float64")])
    with pytest.raises(ValueError, match="data_format"):
        layers.Flatten(data_format="nhwc")


def test_reshape(rng):
    x = rng.standard_normal((2, 12)).astype("float32")
    numpy.testing.assert_array_equal(layers.Reshape((3, 4))(x).numpy(), x.reshape(2, 3, 4))
    assert layers.Reshape((-1, 2))(x).shape == (2, 6, 2)
    assert layers.Reshape((2, -1))(layers.Input((12,))).shape == (None, 2, 6)
    layer = layers.Reshape((4, 3), name="r")
    assert layers.Reshape.from_config(layer.get_config()).target_shape == (4, 3)
    gradcheck(lambda t: layers.Reshape((2, 2), dtype="float64")(t) * 3.0, [x[:, :4].astype("float64")])
    with pytest.raises(ValueError, match="Layer 'r' cannot reshape an input of sample shape \\(10,\\)"):
        layer(numpy.zeros((2, 10), "float32"))
    with pytest.raises(ValueError, match="at most one -1"):
        layers.Reshape((-1, -1))
    with pytest.raises(ValueError, match="not divisible"):
        layers.Reshape((-1, 5))(x)


def test_permute(rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype("float32")
    out = layers.Permute((3, 1, 2))(x)
    numpy.testing.assert_array_equal(out.numpy(), x.transpose(0, 3, 1, 2))
    assert layers.Permute((2, 1))(layers.Input((3, 7))).shape == (None, 7, 3)
    gradcheck(lambda t: layers.Permute((2, 1), dtype="float64")(t) * numpy.arange(6.0).reshape(3, 2),
              [x[:, :2, :3, 0].astype("float64")])
    assert layers.Permute.from_config(layers.Permute((2, 1)).get_config()).dims == (2, 1)
    with pytest.raises(ValueError, match="permutation of 1..2"):
        layers.Permute((0, 1))
    with pytest.raises(ValueError, match="expected ndim=3"):
        layers.Permute((2, 1))(x)


def test_repeat_vector(rng):
    x = rng.standard_normal((2, 3)).astype("float32")
    out = layers.RepeatVector(4)(x)
    assert out.shape == (2, 4, 3)
    numpy.testing.assert_array_equal(out.numpy(), numpy.repeat(x[:, None, :], 4, axis=1))
    gradcheck(lambda t: layers.RepeatVector(2, dtype="float64")(t) * numpy.arange(6.0).reshape(2, 3), [x])
    assert layers.RepeatVector(5)(layers.Input((3,))).shape == (None, 5, 3)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        layers.RepeatVector(0)
    with pytest.raises(ValueError, match="expected ndim=2"):
        layers.RepeatVector(2)(numpy.zeros((2, 3, 4), "float32"))


# ----------------------------------------------------------------- Lambda
def _double(x):
    return x * 2.0


def test_lambda_runs_the_function_and_passes_training(rng):
    x = rng.standard_normal((2, 3)).astype("float32")
    numpy.testing.assert_allclose(layers.Lambda(lambda t: t + 1.0)(x).numpy(), x + 1.0)
    seen = []

    def spy(t, training=None):
        seen.append(training)
        return t

    layer = layers.Lambda(spy)
    layer(x, training=True)
    layer(x)
    assert seen == [True, None]
    scaled = layers.Lambda(lambda t, factor: t * factor, arguments={"factor": 3.0})
    numpy.testing.assert_allclose(scaled(x).numpy(), 3 * x, rtol=1e-6)
    assert layers.Lambda(_double)(layers.Input((4,))).shape == (None, 4)


def test_lambda_config_is_refused_in_safe_mode_and_needs_custom_objects(rng):
    x = rng.standard_normal((2, 3)).astype("float32")
    config = layers.Lambda(lambda t: t * 5.0, name="times5").get_config()
    assert config["function"] == "<lambda>" and config["function_type"] == "lambda"
    with pytest.raises(ValueError, match="Refused to deserialize the Lambda layer 'times5'.*safe_mode"):
        layers.Lambda.from_config(config, custom_objects={"<lambda>": lambda t: t * 5.0})
    with pytest.raises(ValueError, match="Cannot rebuild Lambda layer 'times5'.*custom_objects"):
        layers.Lambda.from_config(config, safe_mode=False)
    rebuilt = layers.Lambda.from_config(config, custom_objects={"<lambda>": lambda t: t * 5.0}, safe_mode=False)
    numpy.testing.assert_allclose(rebuilt(x).numpy(), 5 * x, rtol=1e-6)
    # A named function is never looked up in its module, even unsafe: it must be passed.
    named_config = layers.Lambda(_double).get_config()
    with pytest.raises(ValueError, match="not in custom_objects"):
        layers.Lambda.from_config(named_config, safe_mode=False)
    named = layers.Lambda.from_config(named_config, custom_objects={"_double": _double}, safe_mode=False)
    numpy.testing.assert_allclose(named(x).numpy(), 2 * x, rtol=1e-6)
    with pytest.raises(TypeError, match="callable"):
        layers.Lambda("x * 2")
