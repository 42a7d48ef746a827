"""keras.saving / keras.utils / keras.models serialization names:
serialize/deserialize_keras_object, the custom-object table and scopes,
Model.to_json + model_from_json, clone_model, save_model, KerasFileEditor."""
import json

import numpy
import pytest

import minikeras as mk
from minikeras import layers


class Doubler(layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, inputs):
        return inputs * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


def _functional():
    inputs = mk.Input((4,), name="features")
    hidden = layers.Dense(3, activation="relu", name="hidden")(inputs)
    return mk.Model(inputs, layers.Dense(2, name="head")(hidden), name="net")


def test_serialize_and_deserialize_keras_objects_round_trip():
    for obj in (mk.optimizers.Adam(learning_rate=0.01), mk.losses.Huber(delta=2.0), mk.metrics.AUC(num_thresholds=7),
                mk.initializers.HeNormal(seed=3), mk.regularizers.L2(0.5), mk.constraints.MaxNorm(2.0),
                layers.Dense(3, activation="tanh", name="d")):
        spec = mk.utils.serialize_keras_object(obj)
        assert set(spec) >= {"module", "class_name", "config", "registered_name"}
        assert spec["module"].startswith("keras") and spec["class_name"] == type(obj).__name__
        json.dumps(spec)
        rebuilt = mk.saving.deserialize_keras_object(spec)
        assert type(rebuilt) is type(obj) and rebuilt.get_config() == obj.get_config()
    assert mk.utils.serialize_keras_object(mk.activations.relu)["config"] == "relu"
    assert mk.utils.deserialize_keras_object(mk.utils.serialize_keras_object(mk.activations.relu)) is \
        mk.activations.relu
    array = numpy.arange(6, dtype="int16").reshape(2, 3)
    rebuilt = mk.utils.deserialize_keras_object(mk.utils.serialize_keras_object({"a": [1, "x", array]}))
    assert rebuilt["a"][:2] == [1, "x"] and rebuilt["a"][2].dtype == numpy.int16
    with pytest.raises(TypeError, match="Cannot serialize"):
        mk.utils.serialize_keras_object(lambda x: x)


def test_unknown_classes_are_refused_until_registered_or_scoped():
    spec = mk.saving.serialize_keras_object(Doubler(3.0, name="doubler"))
    assert spec["registered_name"] == "Custom>Doubler"
    with pytest.raises(ValueError, match="Doubler"):
        mk.saving.deserialize_keras_object(spec)
    with mk.saving.custom_object_scope({"Doubler": Doubler}):
        assert mk.saving.deserialize_keras_object(spec).factor == 3.0
        assert mk.utils.get_registered_object("Doubler") is Doubler
    assert mk.utils.get_registered_object("Doubler") is None
    with mk.utils.CustomObjectScope({"Custom>Doubler": Doubler}):
        assert isinstance(mk.utils.deserialize_keras_object(spec), Doubler)
    table = mk.utils.get_custom_objects()
    table["Doubler"] = Doubler
    try:
        assert isinstance(mk.saving.deserialize_keras_object(spec), Doubler)
    finally:
        del table["Doubler"]


def test_register_keras_serializable_names():
    @mk.utils.register_keras_serializable(package="names_test")
    def triple(x):
        return x * 3

    assert mk.saving.get_registered_name(triple) == "names_test>triple"
    assert mk.utils.get_custom_objects()["names_test>triple"] is triple
    assert mk.saving.get_registered_object("names_test>triple") is triple
    assert mk.utils.get_registered_name(numpy.mean) == "mean"
    assert mk.utils.get_registered_object("nothing", module_objects={"nothing": 5}) == 5
    spec = mk.utils.serialize_keras_object(triple)
    assert spec == {"module": __name__, "class_name": "function", "config": "triple",
                    "registered_name": "names_test>triple"}
    assert mk.utils.deserialize_keras_object(spec) is triple


def test_to_json_and_model_from_json_rebuild_the_architecture():
    model = _functional()
    text = model.to_json()
    spec = json.loads(text)
    assert spec["class_name"] == "Functional" and spec["config"]["name"] == "net"
    rebuilt = mk.models.model_from_json(text)
    assert [layer.name for layer in rebuilt.layers] == [layer.name for layer in model.layers]
    assert [w.shape for w in rebuilt.get_weights()] == [w.shape for w in model.get_weights()]
    rebuilt.set_weights(model.get_weights())
    x = numpy.random.default_rng(0).normal(size=(5, 4)).astype("float32")
    numpy.testing.assert_allclose(rebuilt.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    sequential = mk.Sequential([layers.Dense(3, input_shape=(2,)), Doubler(name="doubler")])
    with pytest.raises(ValueError, match="Doubler"):
        mk.models.model_from_json(sequential.to_json())
    again = mk.models.model_from_json(sequential.to_json(indent=2), custom_objects={"Doubler": Doubler})
    assert again.count_params() == sequential.count_params() and again.layers[-1].factor == 2.0
    with pytest.raises(ValueError, match="does not parse"):
        mk.models.model_from_json("{not json")


def test_clone_model_functional_sequential_and_functions():
    model = _functional()
    clone = mk.models.clone_model(model)
    assert clone is not model and clone.name == "net"
    assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
    assert all(a is not b for a, b in zip(clone.layers[1:], model.layers[1:]))
    assert clone.count_params() == model.count_params()
    clone.set_weights(model.get_weights())
    x = numpy.ones((2, 4), "float32")
    numpy.testing.assert_allclose(clone.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)

    def wider(layer):
        config = layer.get_config()
        if layer.name == "hidden":
            config["units"] = 7
        return type(layer).from_config(config)

    assert mk.models.clone_model(model, clone_function=wider).layers[1].units == 7
    seen = []

    def call_function(layer, *args, **kwargs):
        seen.append(layer.name)
        return layer(*args, **kwargs)

    mk.models.clone_model(model, call_function=call_function)
    assert seen == ["hidden", "head"]
    new_input = mk.Input((4,), name="other")
    on_input = mk.models.clone_model(model, input_tensors=new_input)
    assert on_input.inputs[0] is new_input

    sequential = mk.Sequential([layers.Dense(3, input_shape=(2,)), layers.Dense(1)], name="seq")
    copy = mk.models.clone_model(sequential)
    assert isinstance(copy, mk.Sequential) and copy.name == "seq" and copy.count_params() == 13
    with pytest.raises(TypeError, match="expects a Model"):
        mk.models.clone_model(layers.Dense(2))


def test_models_save_model_and_keras_file_editor(tmp_path):
    model = mk.Sequential([layers.Dense(3, input_shape=(4,), name="first"), layers.Dense(2, name="second")])
    mk.models.save_model(model, tmp_path / "model.keras")
    editor = mk.saving.KerasFileEditor(str(tmp_path / "model.keras"))
    assert editor.config["class_name"] == "Sequential"
    # Keras's weights layout names objects by class, not by layer name
    assert set(editor.weights_dict["layers"]) == {"dense", "dense_1"}
    numpy.testing.assert_array_equal(editor.weights_dict["layers"]["dense_1"]["0"], model.layers[1].get_weights()[0])
    assert editor.compare(model) == {"status": "success", "error_count": 0, "match_count": 4}
    lines = []
    editor.summary(print_fn=lines.append)
    assert any("shape=(4, 3)" in line for line in lines)

    editor.rename_object("dense_1", "renamed")
    assert editor.compare(model)["status"] == "error"
    editor.rename_object("layers/renamed", "dense_1")
    editor.add_weights("dense_1", {"0": numpy.full((3, 2), 7.0, "float32")})
    editor.save(tmp_path / "edited.weights.h5")
    model.load_weights(tmp_path / "edited.weights.h5")
    assert (model.layers[1].get_weights()[0] == 7.0).all()

    editor.delete_weight("dense_1", "1")
    assert editor.compare(model)["error_count"] == 1
    editor.delete_object("dense_1")
    editor.add_object("layers/dense_1", {"0": numpy.zeros((3, 2), "float32"), "1": numpy.zeros(2, "float32")})
    assert editor.compare(model)["status"] == "success"
    with pytest.raises(ValueError, match="not found"):
        editor.delete_weight("dense_1", "9")
    with pytest.raises(ValueError, match="does not appear"):
        editor.delete_object("third")
    with pytest.raises(ValueError, match=".weights.h5"):
        editor.save(tmp_path / "x.h5")
    with pytest.raises(ValueError, match="extension"):
        mk.saving.KerasFileEditor(str(tmp_path / "model.txt"))
