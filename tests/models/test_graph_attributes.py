"""``layer.input`` / ``layer.output`` / ``model.input`` / ``model.output``,
written as keras.io's "Functional API" and "Sequential model" guides use them
(feature extraction), with Keras 3.15's answers where they raise."""
import numpy
import pytest

import minikeras as keras
from minikeras import layers


def test_functional_guide_extracts_every_layers_output():
    # keras.io, "The Functional API": "Extract and reuse nodes in the graph of layers".
    inputs = keras.Input(shape=(16, 16, 3), name="img")
    x = layers.Conv2D(4, 3, activation="relu", name="conv_1")(inputs)
    x = layers.MaxPooling2D(2, name="pool")(x)
    x = layers.Conv2D(8, 3, activation="relu", name="conv_2")(x)
    x = layers.GlobalAveragePooling2D(name="gap")(x)
    outputs = layers.Dense(5, name="logits")(x)
    model = keras.Model(inputs, outputs, name="small_cnn")

    features_list = [layer.output for layer in model.layers]
    feat_extraction_model = keras.Model(inputs=model.input, outputs=features_list)
    img = numpy.random.default_rng(0).random((2, 16, 16, 3)).astype("float32")
    extracted_features = feat_extraction_model(img)

    assert [tuple(f.shape) for f in extracted_features] == [(2, 16, 16, 3), (2, 14, 14, 4), (2, 7, 7, 4),
                                                            (2, 5, 5, 8), (2, 8), (2, 5)]
    expected = img  # the same layers applied one after the other
    for layer, feature in zip(model.layers[1:], extracted_features[1:]):
        expected = layer(expected).numpy()
        numpy.testing.assert_allclose(feature.numpy(), expected, rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(extracted_features[-1].numpy(), model(img).numpy(), rtol=1e-6)
    # The extractor shares the model's weights (the same variables, not copies).
    assert {id(w) for w in feat_extraction_model.weights} == {id(w) for w in model.weights}


def test_get_layer_output_builds_an_intermediate_model_that_trains_the_shared_layers():
    inputs = keras.Input((6,), name="features")
    hidden = layers.Dense(4, activation="relu", name="hidden")(inputs)
    outputs = layers.Dense(1, name="head")(hidden)
    model = keras.Model(inputs=inputs, outputs=outputs)
    encoder = keras.Model(inputs=model.input, outputs=model.get_layer("hidden").output)

    assert encoder.input is inputs and encoder.output is hidden
    assert model.get_layer("hidden").input is inputs
    x = numpy.random.default_rng(1).normal(size=(32, 6)).astype("float32")
    before = encoder.predict(x, verbose=0)
    model.compile("sgd", "mse")
    model.fit(x, numpy.ones((32, 1), "float32"), epochs=1, verbose=0)
    assert not numpy.allclose(encoder.predict(x, verbose=0), before)  # it reads the trained weights


def test_model_input_and_output_keep_the_structure_the_model_was_built_with():
    a, b = keras.Input((2,), name="a"), keras.Input((3,), name="b")
    merged = layers.Concatenate(name="merge")([a, b])
    first, second = layers.Dense(1, name="one")(merged), layers.Dense(2, name="two")(merged)

    by_name = keras.Model({"a": a, "b": b}, first)
    assert by_name.input == {"a": a, "b": b} and by_name.output is first
    as_list = keras.Model([a, b], [first, second])
    assert as_list.input == [a, b] and as_list.output == [first, second]
    single = layers.Dense(1)(a)
    assert keras.Model([a], [single]).input == [a]  # a list of one stays a list, as Keras
    assert as_list.inputs == [a, b] and as_list.input_shape == [(None, 2), (None, 3)]
    assert as_list.output_shape == [(None, 1), (None, 2)]
    # A layer reading several tensors lists them; an InputLayer reads none.
    assert as_list.get_layer("merge").input == [a, b]
    assert as_list.get_layer("a").input == [] and as_list.get_layer("a").output is a


def test_a_layer_called_several_times_answers_for_its_first_call():
    shared = layers.Dense(3, name="shared")
    first_input, second_input = keras.Input((4,), name="left"), keras.Input((4,), name="right")
    first_output = shared(first_input)
    shared(second_input)
    assert shared.input is first_input and shared.output is first_output


def test_several_outputs_come_as_a_list():
    class Split(layers.Layer):
        def call(self, x):
            return x[:, :2], x[:, 2:]

    inputs = keras.Input((5,))
    left, right = Split(name="split")(inputs)
    assert keras.Model(inputs, left).get_layer("split").output == [left, right]


def test_attributes_that_raise_in_keras_raise_with_keras_messages():
    never_called = layers.Dense(2, name="lonely")
    with pytest.raises(AttributeError, match="The layer lonely has never been called and thus has no defined input"):
        never_called.input
    never_called(numpy.ones((1, 3), "float32"))  # eager calls record no graph node
    with pytest.raises(AttributeError, match="has no defined output"):
        never_called.output
    # Keras 3 layers have no input_shape / output_shape (models do).
    assert not hasattr(never_called, "input_shape") and not hasattr(never_called, "output_shape")

    class Subclassed(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, x):
            return self.dense(x)

    model = Subclassed()
    model(numpy.ones((1, 3), "float32"))
    with pytest.raises(AttributeError, match="has never been called and thus has no defined input"):
        model.input


def test_sequential_guide_feature_extractor():
    # keras.io, "The Sequential model": "Feature extraction with a Sequential model".
    initial_model = keras.Sequential([
        keras.Input(shape=(25, 25, 3)),
        layers.Conv2D(4, 5, strides=2, activation="relu"),
        layers.Conv2D(4, 3, activation="relu", name="my_intermediate_layer"),
        layers.Conv2D(4, 3, activation="relu"),
    ])
    feature_extractor = keras.Model(inputs=initial_model.inputs,
                                    outputs=initial_model.get_layer(name="my_intermediate_layer").output)
    x = numpy.ones((1, 25, 25, 3), "float32")
    features = feature_extractor(x)
    expected = initial_model.layers[1](initial_model.layers[0](x))
    numpy.testing.assert_allclose(features.numpy(), expected.numpy(), rtol=1e-6)

    every_layer = keras.Model(inputs=initial_model.inputs, outputs=[layer.output for layer in initial_model.layers])
    assert [tuple(f.shape) for f in every_layer(x)] == [(1, 11, 11, 4), (1, 9, 9, 4), (1, 7, 7, 4)]
    # After pop() the stack is rebuilt on the same input, so the layers' outputs stay reachable.
    initial_model.pop()
    initial_model.add(layers.Flatten())
    rebuilt = keras.Model(inputs=initial_model.inputs, outputs=[layer.output for layer in initial_model.layers])
    assert tuple(rebuilt(x)[-1].shape) == (1, 324)
    # As in Keras 3, a Sequential model's own input/output come from calls of the model itself.
    with pytest.raises(AttributeError, match="The layer .* has never been called"):
        initial_model.output
