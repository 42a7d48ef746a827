"""Parity with Keras 3.15 under mixed_float16 and mixed_bfloat16, on fixtures
recorded by fixtures/make_mixed_precision_fixtures.py (Keras is not needed).

Tolerances, as a fraction of the largest |output|: float16 3e-3 (float16's
step is 1e-3 relative; the products accumulate in float32 on both sides, in
another order); bfloat16 1.5e-2 (its step is 7.8e-3), 4e-2 for
MultiHeadAttention: its 16-bit roundings in a row (projections, scores,
context, output) differ by an ulp here and there, and TensorFlow's CPU
bfloat16 products are less exact than float32 accumulation: on this fixture
Keras's bfloat16 output is 0.245 from the float32 result, minikeras's 0.13.
"""
import json
import pathlib

import numpy
import pytest

import minikeras as mk
from minikeras import layers

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
POLICIES = ("mixed_float16", "mixed_bfloat16")

LAYERS = {
    "dense": lambda: layers.Dense(7, activation="relu"),
    "conv2d": lambda: layers.Conv2D(3, 3, padding="same"),
    "batch_norm_train": layers.BatchNormalization,
    "batch_norm_infer": layers.BatchNormalization,
    "layer_norm": layers.LayerNormalization,
    "embedding": lambda: layers.Embedding(12, 5),
    "lstm": lambda: layers.LSTM(5, return_sequences=True),
    "attention": lambda: layers.MultiHeadAttention(2, key_dim=3),
    "softmax_float32": lambda: layers.Activation("softmax", dtype="float32"),
}


def _tolerance(policy, name):
    if policy == "mixed_float16":
        return 3e-3
    return 4e-2 if name == "attention" else 1.5e-2


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_outputs_match_keras(policy, name):
    recorded = numpy.load(FIXTURES / f"layers_{policy}.npz")
    mk.mixed_precision.set_global_policy(policy)
    layer = LAYERS[name]()
    x = recorded[f"{name}/x"]
    kwargs = {"training": True} if name == "batch_norm_train" else {}

    def run():
        return layer(x, x) if name == "attention" else layer(x, **kwargs)

    run()
    layer.set_weights([recorded[f"{name}/w{index}"] for index in range(len(layer.weights))])
    assert [str(w.dtype) for w in layer.weights] == list(recorded[f"{name}/variable_dtypes"])
    output = run()
    expected = recorded[f"{name}/y"]
    assert str(output.dtype) == str(recorded[f"{name}/y_dtype"])
    got = output.numpy().astype(numpy.float32)
    assert numpy.all(numpy.isfinite(got))
    error = numpy.abs(got - expected).max()
    assert error <= _tolerance(policy, name) * numpy.abs(expected).max(), error


def _classifier():
    inputs = mk.Input((6,), name="features")
    x = layers.Dense(16, activation="relu", name="hidden")(inputs)
    x = layers.LayerNormalization(name="norm")(x)
    x = layers.Dense(3, name="logits")(x)
    outputs = layers.Activation("softmax", dtype="float32", name="probabilities")(x)
    return mk.Model(inputs, outputs, name="classifier")


@pytest.mark.parametrize("policy", POLICIES)
def test_training_losses_track_keras(policy):
    recorded = numpy.load(FIXTURES / f"fit_{policy}.npz")
    mk.mixed_precision.set_global_policy(policy)
    model = _classifier()
    model.compile(optimizer=mk.optimizers.SGD(0.2), loss="sparse_categorical_crossentropy")
    assert type(model.optimizer).__name__ == str(recorded["optimizer"])  # wrapped under mixed_float16 only
    model.set_weights([recorded[f"initial{index}"] for index in range(len(model.weights))])
    x, y = recorded["x"], recorded["y"]
    losses, scales = [], []
    for _ in range(3):
        for start in range(0, 48, 16):
            losses.append(model.train_on_batch(x[start:start + 16], y[start:start + 16]))
            if policy == "mixed_float16":
                scales.append(float(model.optimizer.dynamic_scale))
    tolerance = 5e-4 if policy == "mixed_float16" else 5e-3
    numpy.testing.assert_allclose(losses, recorded["losses"], atol=tolerance)
    if scales:
        numpy.testing.assert_array_equal(scales, recorded["scales"])
    for index, weight in enumerate(model.get_weights()):
        assert weight.dtype == numpy.float32
        numpy.testing.assert_allclose(weight, recorded[f"final{index}"], atol=10 * tolerance)
    predictions = model.predict(x[:5], verbose=0)
    assert predictions.dtype == numpy.float32
    numpy.testing.assert_allclose(predictions, recorded["predictions"], atol=10 * tolerance)


def test_loss_scale_sequence_matches_keras_on_planted_infs_and_nans():
    recorded = numpy.load(FIXTURES / "loss_scale.npz")
    variable = mk.Variable(numpy.array([1.0, -2.0], "float32"), name="v")
    optimizer = mk.optimizers.LossScaleOptimizer(mk.optimizers.SGD(0.5), initial_scale=8.0, dynamic_growth_steps=3)
    scales, counters, iterations, values = [], [], [], []
    for grad in recorded["grads"]:
        optimizer.apply([mk.tensor(grad)], [variable])
        scales.append(float(optimizer.dynamic_scale))
        counters.append(optimizer.step_counter)
        iterations.append(optimizer.iterations)
        values.append(variable.numpy().copy())
    numpy.testing.assert_array_equal(scales, recorded["scales"])
    numpy.testing.assert_array_equal(counters, recorded["counters"])
    numpy.testing.assert_array_equal(iterations, recorded["iterations"])
    numpy.testing.assert_array_equal(values, recorded["values"])
    keras_config = json.loads(str(recorded["config"]))
    config = optimizer.get_config()
    assert set(config) == set(keras_config)
    assert config["inner_optimizer"]["config"]["learning_rate"] == 0.5
    rebuilt = mk.optimizers.LossScaleOptimizer.from_config(keras_config)
    assert (rebuilt.initial_scale, rebuilt.dynamic_growth_steps) == (8.0, 3)
    assert isinstance(rebuilt.inner_optimizer, mk.optimizers.SGD)


@pytest.mark.parametrize("policy", POLICIES)
def test_keras_mixed_precision_file_loads_and_predicts_as_keras(policy):
    recorded = numpy.load(FIXTURES / f"model_{policy}.npz")
    model = mk.models.load_model(FIXTURES / f"model_{policy}.keras", compile=False)
    policies = [layer.dtype_policy.name for layer in model.layers]
    assert policies[1:-1] == [policy] * 4 and policies[-1] == "float32"
    predictions = model.predict(recorded["x"], verbose=0)
    assert str(predictions.dtype) == str(recorded["y_dtype"])
    numpy.testing.assert_allclose(predictions, recorded["y"], atol=2e-3 if policy == "mixed_float16" else 1e-2)


def test_loss_scale_optimizer_state_loads_from_keras_and_round_trips(tmp_path):
    # Keras restores a mixed_float16 model's LossScaleOptimizer only when the
    # global policy is mixed_float16 at load time (the Functional config holds
    # no policy, so compile() wraps the optimizer only then): the same here.
    mk.mixed_precision.set_global_policy("mixed_float16")
    model = mk.models.load_model(FIXTURES / "model_mixed_float16.keras")
    optimizer = model.optimizer
    saved = json.loads((FIXTURES / "optimizer_mixed_float16.json").read_text())
    assert isinstance(optimizer, mk.optimizers.LossScaleOptimizer)
    assert [optimizer.step_counter, float(optimizer.dynamic_scale), optimizer.iterations] == saved["values"][2:5]
    assert optimizer.inner_optimizer.learning_rate == pytest.approx(saved["values"][5])
    model.save(tmp_path / "again.keras")
    again = mk.models.load_model(tmp_path / "again.keras")
    for ours, theirs in zip(optimizer.get_state(), again.optimizer.get_state()):
        numpy.testing.assert_array_equal(ours, theirs)
