"""Arithmetic on symbolic tensors while a functional model is built
(``inputs + x``, ``2 * x``, ``-x``), as Keras 3 records operations: nodes
of the graph that run, save and reload with the model, but are not in
``model.layers`` (ConvNeXt's residuals rely on both)."""
import json
import pathlib
import zipfile

import numpy
import pytest

import minikeras as mk
from minikeras import layers


def _model():
    inputs = mk.Input((4,))
    hidden = layers.Dense(4, name="dense_a")(inputs)
    x = inputs + hidden
    x = 2.0 * x - 1.0
    x = x / 4.0 + (-hidden) * x
    x = 1.0 - x ** 2
    return mk.Model(inputs, layers.Dense(3, name="dense_b")(x))


def _reference(model, data):
    kernel_a, bias_a, kernel_b, bias_b = model.get_weights()
    hidden = data @ kernel_a + bias_a
    x = 2.0 * (data + hidden) - 1.0
    x = x / 4.0 + (-hidden) * x
    return (1.0 - x ** 2) @ kernel_b + bias_b


def test_operators_build_nodes_that_compute_and_are_not_layers(rng):
    model = _model()
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense", "Dense"]
    operations = [layer.operation for layer in model._layers if getattr(layer, "_is_operation", False)]
    assert operations == ["add", "multiply", "subtract", "true_divide", "negative", "multiply", "add", "power",
                          "subtract"]
    assert model.output_shape == (None, 3) and len(model.weights) == 4
    data = rng.standard_normal((5, 4)).astype("float32")
    numpy.testing.assert_allclose(model.predict(data, verbose=0), _reference(model, data), rtol=1e-5, atol=1e-5)


def test_operations_train_and_survive_a_keras_file(rng, tmp_path):
    model = _model()
    data = rng.standard_normal((16, 4)).astype("float32")
    model.compile(optimizer="sgd", loss="mse")
    before = model.get_weights()[0].copy()
    model.fit(data, numpy.zeros((16, 3), "float32"), epochs=1, verbose=0)
    assert not numpy.allclose(model.get_weights()[0], before)  # gradients flow through the operations
    model.save(tmp_path / "model.keras")
    loaded = mk.models.load_model(tmp_path / "model.keras")
    numpy.testing.assert_allclose(loaded.predict(data, verbose=0), model.predict(data, verbose=0), rtol=1e-6)


def test_two_tensor_operands_and_matmul():
    a, b = mk.Input((2, 3)), mk.Input((3, 2))
    product = a @ b
    assert product.shape == (None, 2, 2)
    model = mk.Model([a, b], product)
    left, right = numpy.ones((1, 2, 3), "float32"), numpy.full((1, 3, 2), 2.0, "float32")
    numpy.testing.assert_allclose(model.predict([left, right], verbose=0), numpy.full((1, 2, 2), 6.0))


def test_unsupported_operands_raise_type_error():
    with pytest.raises(TypeError):
        mk.Input((2,)) + "text"
    with pytest.raises(TypeError):
        mk.Input((2,)) + [1.0, 2.0]


FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def _operation_nodes(path):
    """The operation nodes of a .keras file's config: (class, name, args with
    tensors as their keras_history)."""
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))

    def plain(arg):
        return tuple(arg["config"]["keras_history"]) if isinstance(arg, dict) else arg

    return [(spec["class_name"], spec["module"], spec["name"], [[plain(arg) for arg in node["args"]]
                                                                for node in spec["inbound_nodes"]])
            for spec in config["config"]["layers"] if spec["module"].startswith("keras.src.ops")]


def test_keras_files_with_operations_load_and_are_written_as_keras_writes_them(tmp_path):
    """Keras 3.15 saved the fixture (fixtures/record_keras_operations.py):
    its operation nodes load as SymbolicOperations giving Keras's outputs,
    and minikeras writes them back in Keras's schema, node for node."""
    recorded = numpy.load(FIXTURES / "keras_operations.npz")
    model = mk.models.load_model(FIXTURES / "keras_operations.keras")
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense", "Dense"]
    numpy.testing.assert_allclose(model.predict(recorded["inputs"], verbose=0), recorded["outputs"], rtol=1e-5,
                                  atol=1e-6)
    model.save(tmp_path / "again.keras")
    assert _operation_nodes(tmp_path / "again.keras") == _operation_nodes(FIXTURES / "keras_operations.keras")
    again = mk.models.load_model(tmp_path / "again.keras")
    numpy.testing.assert_allclose(again.predict(recorded["inputs"], verbose=0), recorded["outputs"], rtol=1e-5,
                                  atol=1e-6)


def test_summary_lists_operations_as_keras_does():
    from minikeras.layers.symbolic_ops import SymbolicOperation
    from minikeras.saving.keras_operations import KERAS_CLASSES

    assert {name: SymbolicOperation(name).keras_class_name for name in KERAS_CLASSES} == KERAS_CLASSES
    inputs = mk.Input((4,))
    hidden = layers.Dense(4, name="d")(inputs)
    model = mk.Model(inputs, layers.Dense(2, name="o")((inputs + hidden) / 2.0))
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    add_row = next(line for line in lines if "(Add)" in line)
    assert add_row.split()[1].startswith("add") and "d[0][0]" in add_row and "(TrueDivide)" in text
    assert "Total params: 30" in text
    from minikeras.utils.model_visualization import model_to_graph  # the DOT text needs no pydot

    drawing = model_to_graph(model).to_string()
    # input->d, input->add, d->add, add->true_divide, true_divide->o: the operations are drawn, as in Keras
    assert "(Add)</font>" in drawing and "(TrueDivide)</font>" in drawing and drawing.count("->") == 5
