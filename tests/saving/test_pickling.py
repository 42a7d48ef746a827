"""Pickling models, layers and optimizers (Keras 3 pickles a model through
its ``.keras`` bytes): the loaded object predicts the same and training
goes on from where the pickled one was."""
import copy
import pickle

import numpy
import pytest

import minikeras as mk
from minikeras import layers, optimizers


def _data(count=64):
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=(count, 5)).astype("float32")
    return x, (x @ rng.normal(size=(5, 3))).astype("float32")


def _trained_model(optimizer="adam"):
    mk.random.seed(3)
    model = mk.Sequential([layers.Input((5,)), layers.Dense(16, activation="relu"),
                           layers.BatchNormalization(), layers.Dense(3)])
    model.compile(optimizer=optimizer, loss="mse", metrics=["mae"])
    x, y = _data()
    model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    return model


def test_a_trained_model_round_trips_and_trains_on_identically():
    model = _trained_model()
    loaded = pickle.loads(pickle.dumps(model))
    x, y = _data()
    assert type(loaded) is type(model) and loaded is not model
    numpy.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.optimizer.iterations == model.optimizer.iterations == 8
    # The same next steps (optimizer state, BatchNormalization statistics and compile arguments came along).
    before = loaded.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    after = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history
    assert before == after and set(before) == {"loss", "mae"}
    for got, want in zip(loaded.get_weights(), model.get_weights()):
        numpy.testing.assert_array_equal(got, want)


def test_functional_and_unbuilt_models_pickle():
    inputs = layers.Input((4,))
    functional = mk.Model(inputs, layers.Dense(2, name="head")(inputs))
    loaded = pickle.loads(pickle.dumps(functional))
    x = numpy.ones((2, 4), "float32")
    numpy.testing.assert_array_equal(loaded(x).numpy(), functional(x).numpy())
    assert loaded.get_layer("head").units == 2 and loaded.optimizer is None  # not compiled: loads uncompiled
    unbuilt = pickle.loads(pickle.dumps(mk.Sequential([layers.Dense(3)])))
    assert not unbuilt.built and unbuilt(x).shape == (2, 3)


@pytest.mark.parametrize("make_optimizer", [lambda: optimizers.SGD(0.1, momentum=0.9),
                                            lambda: optimizers.Adam(weight_decay=0.01),
                                            lambda: optimizers.LossScaleOptimizer(optimizers.RMSprop()),
                                            lambda: optimizers.Adam(use_ema=True)],
                         ids=["sgd", "adam_weight_decay", "loss_scale", "ema"])
def test_an_optimizer_pickles_with_its_state_and_steps_on_identically(make_optimizer):
    model = _trained_model(make_optimizer())
    original = model.optimizer
    loaded = pickle.loads(pickle.dumps(original))
    assert type(loaded) is type(original) and loaded.get_config() == original.get_config()
    for got, want in zip(loaded.get_state(), original.get_state()):
        numpy.testing.assert_array_equal(got, want)
    # Built for the variables pickled with it (copies): the same update from the same gradients.
    variables = original._trainable_variables
    copies = loaded._trainable_variables
    assert [v.path for v in copies] == [v.path for v in variables] and not set(map(id, copies)) & set(map(id, variables))
    gradients = [numpy.full(v.shape, 0.25, "float32") for v in variables]
    original.apply(gradients, variables)
    loaded.apply(gradients, copies)
    for got, want in zip(copies, variables):
        numpy.testing.assert_array_equal(got.numpy(), want.numpy())


def test_layers_variables_and_tensors_pickle_onto_their_device():
    dense = layers.Dense(3)
    dense.build((None, 2))
    loaded = pickle.loads(pickle.dumps(dense))
    x = numpy.ones((1, 2), "float32")
    numpy.testing.assert_array_equal(loaded(x).numpy(), dense(x).numpy())
    kernel = loaded.kernel
    assert kernel.device is dense.kernel.device and kernel.path == dense.kernel.path and kernel.trainable
    # A pickled tensor is a leaf holding the value; copy.deepcopy still copies on the device.
    t = mk.tensor([1.0, 2.0], requires_grad=True) * 3.0
    restored = pickle.loads(pickle.dumps(t))
    assert restored.is_leaf and restored.requires_grad and restored.device is t.device
    numpy.testing.assert_array_equal(restored.numpy(), [3.0, 6.0])
    clone = copy.deepcopy(dense.kernel)
    assert clone.device is dense.kernel.device and clone.data is not dense.kernel.data


def test_a_layers_regularizers_and_constraints_survive_pickle_and_deepcopy():
    # Regularizers live beside the weights (layers/weight_info.py), constraints on them: both copies keep both.
    layer = layers.Dense(3, kernel_regularizer="l2", kernel_constraint="non_neg")
    layer.build((None, 4))
    for clone in (pickle.loads(pickle.dumps(layer)), copy.deepcopy(layer)):
        assert len(clone.losses) == 1
        numpy.testing.assert_allclose(clone.losses[0].numpy(), layer.losses[0].numpy(), rtol=1e-6)
        assert type(clone.kernel.constraint).__name__ == "NonNeg"
    model = mk.Sequential([layers.Input((4,)), layers.Dense(2, kernel_regularizer="l1", kernel_constraint="non_neg")])
    copied = copy.deepcopy(model)
    assert len(copied.losses) == len(model.losses) == 1
    copied.compile(optimizer=optimizers.SGD(1.0), loss="mse")
    copied.fit(numpy.ones((8, 4), "float32"), numpy.full((8, 2), -50.0, "float32"), epochs=2, verbose=0)
    assert (copied.layers[0].kernel.numpy() >= 0).all()  # the constraint held against a pull below 0
