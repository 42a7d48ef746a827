"""Models and data shared by the saving tests."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers


def build_sequential(optimizer=None, hidden=8, compile_model=True):
    """Dense -> BatchNormalization (non-trainable weights) -> Dense, compiled with Adam."""
    model = mk.Sequential([
        layers.Dense(hidden, activation="relu", input_shape=(4,), name="hidden"),
        layers.BatchNormalization(name="norm"),
        layers.Dense(1, name="head"),
    ])
    if compile_model:
        model.compile(optimizer=optimizer or mk.optimizers.Adam(learning_rate=0.01), loss="mse", metrics=["mae"])
    return model


def build_functional():
    """Two inputs, two outputs, a layer shared by both branches, compiled per output."""
    a = mk.Input((4,), name="a")
    b = mk.Input((3,), name="b")
    shared = layers.Dense(5, activation="tanh", name="shared")
    hidden_a = shared(a)
    hidden_b = shared(layers.Dense(4, name="project")(b))
    merged = layers.Concatenate(name="merge")([hidden_a, hidden_b])
    first = layers.Dense(1, name="first")(merged)
    second = layers.Dense(2, activation="softmax", name="second")(hidden_b)
    model = mk.Model([a, b], [first, second], name="two_heads")
    model.compile(
        optimizer=mk.optimizers.Adam(learning_rate=0.01),
        loss={"first": mk.losses.MeanSquaredError(), "second": "categorical_crossentropy"},
        loss_weights={"first": 1.0, "second": 0.5},
        metrics={"first": ["mae"], "second": ["accuracy"]},
    )
    return model


@pytest.fixture
def data():
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(48, 4)).astype("float32")
    y = (x @ numpy.array([[1.0], [-2.0], [0.5], [3.0]], dtype="float32")).astype("float32")
    return x, y


@pytest.fixture
def functional_data():
    rng = numpy.random.default_rng(1)
    x = [rng.normal(size=(48, 4)).astype("float32"), rng.normal(size=(48, 3)).astype("float32")]
    y = {"first": rng.normal(size=(48, 1)).astype("float32"),
         "second": numpy.eye(2, dtype="float32")[rng.integers(0, 2, 48)]}
    return x, y


def assert_same_arrays(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype
        numpy.testing.assert_array_equal(a, e)


def assert_same_optimizer_state(actual_model, expected_model):
    """Same step count and slots, both taken in Keras's order of trainable weights: a
    reloaded optimizer is built in that order, which may differ from the order training used."""
    from minikeras.saving.keras_order import keras_trainable_order, state_in_order

    actual = state_in_order(actual_model.optimizer, keras_trainable_order(actual_model))
    expected = state_in_order(expected_model.optimizer, keras_trainable_order(expected_model))
    assert_same_arrays(actual, expected)
