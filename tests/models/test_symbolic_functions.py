"""Any ``keras.ops`` function called on KerasTensors while a functional model
is built (``ops.square(x)``, ``ops.stack([a, b], axis=1)``,
``ops.expand_dims(x, -1)``) records a graph node, as Keras 3 records its
operations: keras.io's examples build models this way (the subclassing
guide's VAE loss, TabTransformer's stacked features)."""
import numpy
import pytest

import minikeras as mk
from minikeras import layers, ops


def test_ops_on_keras_tensors_give_keras_tensors_of_keras_shapes():
    x, y = mk.Input((4, 3)), mk.Input((4, 3))
    assert ops.square(x).shape == (None, 4, 3)
    assert ops.mean(x, axis=1).shape == (None, 3)
    assert ops.stack([x, y], axis=1).shape == (None, 2, 4, 3)
    assert ops.concatenate([x, y], axis=-1).shape == (None, 4, 6)
    assert ops.expand_dims(x, -1).shape == (None, 4, 3, 1)
    assert ops.cast(x, "int32").dtype == "int32"
    assert ops.einsum("bij,bkj->bik", x, y).shape == (None, 4, 4)
    assert ops.shape(x) == (None, 4, 3)
    sequence = mk.Input((None, 3))
    assert ops.sum(sequence, axis=-1).shape == (None, None)


def test_the_nodes_compute_and_are_not_layers():
    x, y = mk.Input((4, 3), name="x"), mk.Input((4, 3), name="y")
    out = ops.where(ops.greater(x, 0), ops.square(x), ops.exp(y))
    out = ops.concatenate([ops.mean(out, axis=1), ops.max(y, axis=1)], axis=-1)
    model = mk.Model([x, y], out)
    assert [layer.name for layer in model.layers] == ["x", "y"]
    a = numpy.linspace(-1, 1, 24, dtype="float32").reshape(2, 4, 3)
    b = numpy.linspace(0, 2, 24, dtype="float32").reshape(2, 4, 3)
    expected = numpy.concatenate([numpy.where(a > 0, a**2, numpy.exp(b)).mean(1), b.max(1)], -1)
    numpy.testing.assert_allclose(model.predict([a, b], verbose=0), expected, rtol=1e-6)


def _vae_style_model():
    inputs = mk.Input((8,))
    z_mean = layers.Dense(4, name="z_mean")(inputs)
    z_log_var = layers.Dense(4, name="z_log_var")(inputs)
    kl = -0.5 * ops.mean(z_log_var - ops.square(z_mean) - ops.exp(z_log_var) + 1, axis=-1)
    return mk.Model(inputs, ops.expand_dims(kl, -1))


def test_gradients_flow_through_the_nodes():
    mk.utils.set_random_seed(0)
    model = _vae_style_model()
    model.compile(optimizer=mk.optimizers.Adam(0.05), loss="mae")
    data = numpy.random.default_rng(0).normal(size=(64, 8)).astype("float32")
    history = model.fit(data, numpy.zeros((64, 1), "float32"), epochs=20, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


def test_the_nodes_survive_config_and_a_keras_file(tmp_path):
    model = _vae_style_model()
    data = numpy.random.default_rng(1).normal(size=(3, 8)).astype("float32")
    expected = model.predict(data, verbose=0)
    rebuilt = mk.Model.from_config(model.get_config())
    rebuilt.set_weights(model.get_weights())
    numpy.testing.assert_allclose(rebuilt.predict(data, verbose=0), expected, rtol=1e-6)
    model.save(tmp_path / "model.keras")
    loaded = mk.models.load_model(tmp_path / "model.keras")
    numpy.testing.assert_allclose(loaded.predict(data, verbose=0), expected, rtol=1e-6)


def test_other_bad_arguments_keep_their_errors():
    with pytest.raises(TypeError, match="square: expected a Tensor, an array or a number"):
        ops.square("text")
    with pytest.raises(TypeError, match="shape"):
        ops.shape(None)
    symbolic = mk.Input((3,))
    with pytest.raises(TypeError, match="has no value"):
        ops.convert_to_numpy(symbolic)
    with pytest.raises(TypeError, match="ndim: expected a Tensor"):
        ops.ndim(symbolic)


def test_a_symbolic_loss_is_refused_as_keras_refuses_it():
    inputs = mk.Input((3,))
    model = mk.Model(inputs, layers.Dense(2)(inputs))
    with pytest.raises(ValueError, match=r"add_loss\(\) can only be called from inside build\(\) or call\(\).*"
                                         r"KerasTensor"):
        model.add_loss(ops.mean(ops.square(model.output)))


def test_indexing_a_keras_tensor_is_a_node_that_survives_a_file(tmp_path):
    inputs = mk.Input((3, 4))
    picked = inputs[:, 0]
    assert picked.shape == (None, 4)
    model = mk.Model(inputs, ops.concatenate([picked, inputs[..., 1:3][:, -1]], axis=-1))
    data = numpy.arange(24, dtype="float32").reshape(2, 3, 4)
    expected = numpy.concatenate([data[:, 0], data[..., 1:3][:, -1]], axis=-1)
    numpy.testing.assert_allclose(model.predict(data, verbose=0), expected)
    model.save(tmp_path / "model.keras")
    numpy.testing.assert_allclose(mk.models.load_model(tmp_path / "model.keras").predict(data, verbose=0), expected)


def test_a_keras_file_with_ops_nodes_loads_and_gives_keras_outputs():
    """Keras 3.15 saved the fixture (fixtures/record_keras_functions.py): its
    Square, Mean, Sum, ExpandDims, GetItem, Stack, Reshape, Concatenate and
    Softmax nodes load as SymbolicOperations giving Keras's outputs."""
    import pathlib

    fixtures = pathlib.Path(__file__).parent / "fixtures"
    recorded = numpy.load(fixtures / "keras_functions.npz")
    model = mk.models.load_model(fixtures / "keras_functions.keras")
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense", "Dense"]
    numpy.testing.assert_allclose(model.predict(recorded["inputs"], verbose=0), recorded["outputs"], rtol=1e-5,
                                  atol=1e-6)


def test_keras_operation_classes_name_their_ops_as_keras_spells_them():
    from minikeras.saving.keras_operations import _op_of_class

    assert [_op_of_class(name) for name in ("ExpandDims", "GetItem", "IsNan", "LogicalAnd", "Square")] == \
        ["expand_dims", "get_item", "isnan", "logical_and", "square"]
    assert _op_of_class("NoSuchOperation") is None


def test_a_keras_operation_minikeras_cannot_run_is_refused_by_name():
    from minikeras.saving.keras_operations import function_to_minikeras

    spec = {"module": "keras.src.ops.numpy", "class_name": "NoSuchOperation", "config": {"name": "odd"},
            "inbound_nodes": []}
    with pytest.raises(ValueError, match="model.keras: the operation 'NoSuchOperation' \\('odd'\\) has no minikeras op"):
        function_to_minikeras(spec, lambda reference: reference, "model.keras")
