"""Files in tf.keras 2's HDF5 layout (TensorFlow 2.x ``model.save("m.h5")``) load in minikeras.

No TensorFlow 2 is needed: the file is written here with h5py, field by
field as tf.keras 2.x writes it (config schema without ``module``, dtype
strings, ``batch_input_shape``, nested-list ``inbound_nodes``, weight names
ending in ``:0``, Adam slots saved kind by kind, metrics as
``MeanMetricWrapper``).
"""
import json

import h5py
import numpy
import pytest

import minikeras as mk

GLOROT = {"class_name": "GlorotUniform", "config": {"seed": None}}
ZEROS = {"class_name": "Zeros", "config": {}}


def dense_config(name, units, activation):
    return {"name": name, "trainable": True, "dtype": "float32", "units": units, "activation": activation,
            "use_bias": True, "kernel_initializer": GLOROT, "bias_initializer": ZEROS, "kernel_regularizer": None,
            "bias_regularizer": None, "activity_regularizer": None, "kernel_constraint": None,
            "bias_constraint": None}


MODEL_CONFIG = {"class_name": "Functional", "config": {
    "name": "model", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 4], "dtype": "float32", "sparse": False,
                                                "ragged": False, "name": "input_1"},
         "name": "input_1", "inbound_nodes": []},
        {"class_name": "Dense", "config": dense_config("dense", 3, "relu"), "name": "dense",
         "inbound_nodes": [[["input_1", 0, 0, {}]]]},
        {"class_name": "Dense", "config": dense_config("dense_1", 2, "linear"), "name": "dense_1",
         "inbound_nodes": [[["dense", 0, 0, {}]]]},
        {"class_name": "Add", "config": {"name": "add", "trainable": True, "dtype": "float32"}, "name": "add",
         "inbound_nodes": [[["dense_1", 0, 0, {}], ["dense_1", 0, 0, {}]]]},
    ],
    "input_layers": [["input_1", 0, 0]], "output_layers": [["add", 0, 0]]}}

TRAINING_CONFIG = {
    "loss": "mse", "weighted_metrics": None, "loss_weights": None,
    "metrics": [[{"class_name": "MeanMetricWrapper",
                  "config": {"name": "mae", "dtype": "float32", "fn": "mean_absolute_error"}}]],
    "optimizer_config": {"class_name": "Adam", "config": {
        "name": "Adam", "learning_rate": 0.005, "decay": 0.0, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-07,
        "amsgrad": False}}}


@pytest.fixture
def tf_keras_2_file(tmp_path):
    rng = numpy.random.default_rng(0)
    weights = {"dense": [rng.normal(size=(4, 3)), rng.normal(size=3)],
               "dense_1": [rng.normal(size=(3, 2)), rng.normal(size=2)]}
    weights = {k: [w.astype("float32") for w in v] for k, v in weights.items()}
    moments = {name: [[rng.normal(size=w.shape).astype("float32") for w in arrays],
                      [rng.uniform(0.1, 1, size=w.shape).astype("float32") for w in arrays]]  # velocities >= 0
               for name, arrays in weights.items()}
    path = tmp_path / "tf2.h5"
    with h5py.File(path, "w") as handle:
        handle.attrs["keras_version"] = "2.11.0"
        handle.attrs["backend"] = "tensorflow"
        handle.attrs["model_config"] = json.dumps(MODEL_CONFIG)
        handle.attrs["training_config"] = json.dumps(TRAINING_CONFIG)
        group = handle.create_group("model_weights")
        group.attrs["layer_names"] = numpy.array([b"input_1", b"dense", b"dense_1", b"add"])
        group.attrs["backend"], group.attrs["keras_version"] = "tensorflow", "2.11.0"
        for layer in ("input_1", "dense", "dense_1", "add"):
            layer_group = group.create_group(layer)
            names = [f"{layer}/kernel:0", f"{layer}/bias:0"] if layer in weights else []
            layer_group.attrs["weight_names"] = numpy.array([n.encode() for n in names], dtype="S")
            for name, array in zip(names, weights.get(layer, [])):
                layer_group.create_dataset(name, data=array)
        optimizer = handle.create_group("optimizer_weights")
        names, arrays = ["Adam/iter:0"], [numpy.array(7, dtype="int64")]
        for slot_index, slot in enumerate("mv"):  # tf.keras 2: every m, then every v
            for layer in ("dense", "dense_1"):
                for weight_index, kind in enumerate(("kernel", "bias")):
                    names.append(f"Adam/{layer}/{kind}/{slot}:0")
                    arrays.append(moments[layer][slot_index][weight_index])
        optimizer.attrs["weight_names"] = numpy.array([n.encode() for n in names], dtype="S")
        for name, array in zip(names, arrays):
            optimizer.create_dataset(name, data=array)
    return path, weights, moments


def test_tf_keras_2_model_loads_with_its_weights_and_outputs(tf_keras_2_file):
    path, weights, _ = tf_keras_2_file
    model = mk.models.load_model(path)
    x = numpy.random.default_rng(1).normal(size=(5, 4)).astype("float32")
    hidden = numpy.maximum(x @ weights["dense"][0] + weights["dense"][1], 0)
    expected = 2 * (hidden @ weights["dense_1"][0] + weights["dense_1"][1])
    numpy.testing.assert_allclose(model.predict(x, verbose=0), expected, rtol=1e-6, atol=1e-6)
    assert [layer.name for layer in model.layers] == ["input_1", "dense", "dense_1", "add"]


def test_tf_keras_2_training_config_and_adam_slots_are_restored_variable_by_variable(tf_keras_2_file):
    path, _, moments = tf_keras_2_file
    model = mk.models.load_model(path)
    assert type(model.optimizer) is mk.optimizers.Adam and model.optimizer.learning_rate == pytest.approx(0.005)
    state = model.optimizer.get_state()
    assert int(state[0]) == 7
    expected = []
    for layer in ("dense", "dense_1"):
        for weight_index in range(2):
            expected += [moments[layer][0][weight_index], moments[layer][1][weight_index]]  # momentum, velocity
    assert len(state) == 1 + len(expected)
    for actual, wanted in zip(state[1:], expected):
        numpy.testing.assert_array_equal(actual, wanted)
    history = model.fit(numpy.ones((4, 4), "float32"), numpy.zeros((4, 2), "float32"), epochs=1, verbose=0)
    assert "mae" in history.history


def test_tf_keras_2_decay_is_refused_with_a_clear_message(tf_keras_2_file):
    path, _, _ = tf_keras_2_file
    with h5py.File(path, "a") as handle:
        config = json.loads(handle.attrs["training_config"])
        config["optimizer_config"]["config"]["decay"] = 0.01
        handle.attrs["training_config"] = json.dumps(config)
    with pytest.raises(ValueError, match="decay=0.01.*compile=False"):
        mk.models.load_model(path)
    assert mk.models.load_model(path, compile=False).optimizer is None
