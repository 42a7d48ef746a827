"""keras.ops called on symbolic tensors while a functional model is built
(``ops.mean(x, axis=1)``, ``x[:, 0]``, ``x + constant_tensor``), as Keras 3
records them: graph nodes that compute, train, save and reload with the model
and are not in ``model.layers``. keras.io's vision examples write models this
way (Token Learner's ``ops.mean`` over attention maps and its position
embedding added as a concrete tensor, CCT's sequence pooling)."""
import json

import numpy
import pytest

import minikeras as mk
from minikeras import layers, ops


def _model():
    inputs = mk.Input((4, 6))
    positions = layers.Embedding(4, 6, embeddings_initializer=mk.initializers.RandomUniform(1.0, 2.0))(
        ops.arange(4))  # called eagerly: a constant of the graph, as in Keras
    x = inputs + positions
    x = positions * x
    attention = ops.softmax(layers.Dense(1, name="score")(x), axis=1)
    pooled = ops.squeeze(ops.matmul(ops.transpose(attention, axes=(0, 2, 1)), x), -2)
    patches = ops.image.extract_patches(ops.expand_dims(x, -1), 2)
    flat = ops.reshape(patches, (-1, 24))
    joined = ops.concatenate([pooled, ops.mean(flat[:, None, 1:], axis=1), x[..., 0]], axis=-1)
    return mk.Model(inputs, layers.Dense(3, name="head")(joined)), positions


def _reference(model, positions, data):
    score_kernel, score_bias, head_kernel, head_bias = model.get_weights()
    x = (data + positions) * positions
    logits = x @ score_kernel + score_bias
    attention = numpy.exp(logits) / numpy.exp(logits).sum(axis=1, keepdims=True)
    pooled = (attention * x).sum(axis=1)
    patches = x.reshape(-1, 2, 2, 3, 2).transpose(0, 1, 3, 2, 4).reshape(-1, 24)  # 2x2 windows of the 4x6 map
    joined = numpy.concatenate([pooled, patches[:, 1:], x[..., 0]], axis=-1)
    return joined @ head_kernel + head_bias


def test_ops_on_symbolic_tensors_build_nodes_that_compute_and_are_not_layers(rng):
    model, positions = _model()
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense", "Dense"]
    assert [layer.name for layer in model.layers[1:]] == ["score", "head"]
    assert len(model.weights) == 4  # the eagerly called Embedding's table is a constant, not a weight
    assert model.output_shape == (None, 3)
    data = rng.standard_normal((5, 4, 6)).astype("float32")
    numpy.testing.assert_allclose(model.predict(data, verbose=0), _reference(model, positions.numpy(), data),
                                  rtol=1e-4, atol=1e-5)


def test_op_nodes_train_and_survive_keras_h5_and_json_configs(rng, tmp_path):
    model, _ = _model()
    data = rng.standard_normal((16, 4, 6)).astype("float32")
    model.compile(optimizer="sgd", loss="mse")
    before = model.get_weights()[0].copy()
    model.fit(data, numpy.zeros((16, 3), "float32"), epochs=1, verbose=0)
    assert not numpy.allclose(model.get_weights()[0], before)  # gradients flow through the op nodes
    expected = model.predict(data, verbose=0)
    for name in ("model.keras", "model.h5"):
        model.save(tmp_path / name)
        loaded = mk.models.load_model(tmp_path / name, compile=False)
        numpy.testing.assert_allclose(loaded.predict(data, verbose=0), expected, rtol=1e-5, atol=1e-6)
    rebuilt = mk.Model.from_config(json.loads(json.dumps(model.get_config())))
    rebuilt.set_weights(model.get_weights())
    numpy.testing.assert_allclose(rebuilt.predict(data, verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_a_constant_array_or_tensor_on_either_side_of_an_operator():
    inputs = mk.Input((3,))
    constant = numpy.array([1.0, 2.0, 3.0], "float32")
    # (a NumPy array on the left converts the KerasTensor and fails, in Keras too)
    outputs = [inputs - constant, ops.convert_to_tensor(constant) - inputs, ops.ones((3,)) * inputs,
               inputs / ops.full((3,), 2.0)]
    model = mk.Model(inputs, outputs)
    data = numpy.array([[4.0, 5.0, 6.0]], "float32")
    results = model.predict(data, verbose=0)
    for got, want in zip(results, [data - constant, constant - data, data, data / 2]):
        numpy.testing.assert_allclose(got, want)


def test_a_bad_op_call_on_a_symbolic_tensor_still_raises_the_ops_error():
    inputs = mk.Input((4, 6))
    with pytest.raises(ValueError, match="reshape"):
        ops.reshape(inputs, (-1, 5))
    with pytest.raises(TypeError):
        ops.mean(inputs, axis="rows")


def test_a_variable_operand_is_read_when_the_model_runs():
    scale = mk.Variable(initializer=numpy.full((3,), 2.0, "float32"), trainable=False)
    inputs = mk.Input((3,))
    model = mk.Model(inputs, ops.multiply(inputs, scale))
    data = numpy.ones((1, 3), "float32")
    numpy.testing.assert_allclose(model.predict(data, verbose=0), 2.0 * data)
    scale.assign(numpy.full((3,), 5.0, "float32"))
    numpy.testing.assert_allclose(model.predict(data, verbose=0), 5.0 * data)
