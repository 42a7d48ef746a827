"""``layers.serialize/deserialize`` and ``saving.serialize_keras_object /
deserialize_keras_object`` with classes registered by
``register_keras_serializable``, nested inside each other, written as
keras.io's "Save, serialize, and export models" guide writes them (a custom
layer whose ``get_config`` returns its sublayers)."""
import json

import numpy
import pytest

import minikeras as keras


@keras.saving.register_keras_serializable(package="MyLayers")
class MyDense(keras.layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", name="w")

    def call(self, inputs):
        return keras.ops.matmul(inputs, self.w)

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


@keras.saving.register_keras_serializable(package="ComplexModels")
class CustomModel(keras.layers.Layer):
    def __init__(self, first_layer, second_layer=None, **kwargs):
        super().__init__(**kwargs)
        self.first_layer = first_layer
        if second_layer is not None:
            self.second_layer = second_layer
        else:
            self.second_layer = keras.layers.Dense(8)

    def get_config(self):
        config = super().get_config()
        config.update({"first_layer": self.first_layer, "second_layer": self.second_layer})
        return config

    @classmethod
    def from_config(cls, config):
        # Note that you can also use `keras.saving.deserialize_keras_object` here
        config["first_layer"] = keras.layers.deserialize(config["first_layer"])
        config["second_layer"] = keras.layers.deserialize(config["second_layer"])
        return cls(**config)

    def call(self, inputs):
        return self.first_layer(self.second_layer(inputs))


@keras.saving.register_keras_serializable(package="Blocks", name="Stack")
class Stack(keras.layers.Layer):
    """Holds a list of layers and a regularizer object in its config."""

    def __init__(self, blocks, regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.blocks = blocks
        self.regularizer = regularizer

    def get_config(self):
        return {**super().get_config(), "blocks": self.blocks, "regularizer": self.regularizer}

    @classmethod
    def from_config(cls, config):
        config["blocks"] = [keras.saving.deserialize_keras_object(block) for block in config["blocks"]]
        config["regularizer"] = keras.saving.deserialize_keras_object(config["regularizer"])
        return cls(**config)

    def call(self, inputs):
        for block in self.blocks:
            inputs = block(inputs)
        return inputs


# keras.layers.serialize(CustomModel(MyDense(3, name="inner_md"), name="cm")) as Keras 3.15 writes it.
KERAS_SERIALIZED = json.loads("""{"module": null, "class_name": "CustomModel", "config": {"name": "cm", "trainable": true,
 "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null},
 "first_layer": {"module": null, "class_name": "MyDense", "config": {"name": "inner_md", "trainable": true,
 "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": null},
 "units": 3}, "registered_name": "MyLayers>MyDense"}, "second_layer": {"module": "keras.layers", "class_name": "Dense",
 "config": {"name": "dense", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config":
 {"name": "float32"}, "registered_name": null}, "units": 8, "activation": "linear", "use_bias": true,
 "kernel_initializer": {"module": "keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null,
 "input_axes": null, "output_axes": null}, "registered_name": null}, "bias_initializer": {"module":
 "keras.initializers", "class_name": "Zeros", "config": {}, "registered_name": null}, "kernel_regularizer": null,
 "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null, "quantization_config": null},
 "registered_name": null}}, "registered_name": "ComplexModels>CustomModel"}""")


def _names(spec):
    """Every (class_name, registered_name) in a serialized structure, depth first."""
    found = []
    if isinstance(spec, dict):
        if "class_name" in spec and "registered_name" in spec:
            found.append((spec["class_name"], spec["registered_name"]))
        for value in spec.values():
            found.extend(_names(value))
    elif isinstance(spec, list):
        for value in spec:
            found.extend(_names(value))
    return found


def test_layers_serialize_writes_registered_names_at_every_level_as_keras():
    layer = CustomModel(MyDense(3, name="inner_md"), name="cm")
    serialized_layer = keras.layers.serialize(layer)
    assert _names(serialized_layer) == _names(KERAS_SERIALIZED)
    assert serialized_layer["registered_name"] == "ComplexModels>CustomModel"
    assert serialized_layer["config"]["first_layer"]["registered_name"] == "MyLayers>MyDense"
    assert serialized_layer["config"]["first_layer"]["config"]["units"] == 3
    text = json.dumps(serialized_layer)  # plain data all the way down

    new_layer = keras.layers.deserialize(json.loads(text))
    assert type(new_layer) is CustomModel and new_layer.name == "cm"
    assert type(new_layer.first_layer) is MyDense and new_layer.first_layer.units == 3
    assert type(new_layer.second_layer) is keras.layers.Dense and new_layer.second_layer.units == 8


def test_keras_serialized_config_deserializes():
    new_layer = keras.layers.deserialize(json.loads(json.dumps(KERAS_SERIALIZED)))
    assert (type(new_layer), type(new_layer.first_layer), type(new_layer.second_layer)) == \
        (CustomModel, MyDense, keras.layers.Dense)
    assert new_layer(numpy.ones((2, 5), "float32")).shape == (2, 3)


def test_serialize_keras_object_nests_lists_of_layers_and_keras_objects():
    stack = Stack([MyDense(4, name="first"), keras.layers.Activation("relu"), MyDense(2, name="second")],
                  regularizer=keras.regularizers.L2(0.01), name="stack")
    config = keras.saving.serialize_keras_object(stack)
    assert config["registered_name"] == "Blocks>Stack"
    assert [block["registered_name"] for block in config["config"]["blocks"]] == \
        ["MyLayers>MyDense", None, "MyLayers>MyDense"]
    assert config["config"]["regularizer"]["class_name"] == "L2"
    restored = keras.saving.deserialize_keras_object(json.loads(json.dumps(config)))
    assert [type(block) for block in restored.blocks] == [MyDense, keras.layers.Activation, MyDense]
    assert (restored.blocks[0].name, restored.blocks[0].units, restored.blocks[2].name) == ("first", 4, "second")
    assert isinstance(restored.regularizer, keras.regularizers.L2) and restored.regularizer.l2 == pytest.approx(0.01)


def test_a_wrapper_of_a_registered_layer_round_trips():
    wrapped = keras.layers.TimeDistributed(MyDense(2, name="per_step"))
    config = keras.layers.serialize(wrapped)
    assert config["config"]["layer"]["registered_name"] == "MyLayers>MyDense"
    restored = keras.layers.deserialize(config)
    assert type(restored.layer) is MyDense and restored.layer.units == 2


def test_models_holding_nested_registered_layers_save_and_load(tmp_path):
    inputs = keras.Input((3,))
    model = keras.Model(inputs, CustomModel(MyDense(2, name="md"), name="cm")(inputs))
    x = numpy.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    expected = model.predict(x, verbose=0)
    model.save(tmp_path / "nested.keras")
    loaded = keras.models.load_model(tmp_path / "nested.keras")
    numpy.testing.assert_allclose(loaded.predict(x, verbose=0), expected, rtol=1e-6)
    assert type(loaded.get_layer("cm").first_layer) is MyDense
    from_json = keras.models.model_from_json(model.to_json())
    assert type(from_json.get_layer("cm").first_layer) is MyDense


def test_an_unregistered_nested_class_is_named_in_the_error():
    config = keras.layers.serialize(CustomModel(MyDense(3)))
    config["config"]["first_layer"]["class_name"] = "Missing"
    config["config"]["first_layer"]["registered_name"] = "MyLayers>Missing"
    with pytest.raises(ValueError, match="Unknown layer class 'MyLayers>Missing'"):
        keras.layers.deserialize(config)
    with pytest.raises(ValueError, match="expects a layer's config"):
        keras.layers.deserialize(keras.saving.serialize_keras_object(keras.optimizers.SGD()))
