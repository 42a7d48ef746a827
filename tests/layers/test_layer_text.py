"""StringLookup, IntegerLookup and TextVectorization: vocabularies and
outputs against Keras 3 recordings (keras_text_cases.py), inversion,
masks, config round trips and errors."""
import json

import numpy
import pytest

from minikeras import Sequential, layers
from minikeras.layers import Input
from minikeras.layers.keras_mask import get_keras_mask
from tests.layers.keras_text_cases import CASES, FIXTURE


@pytest.fixture(scope="module")
def recorded():
    with open(FIXTURE) as handle:
        return json.load(handle)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_keras(name, recorded):
    class_name, config, adapt_data, call_input = CASES[name]
    layer = getattr(layers, class_name)(**config)
    layer.adapt(numpy.array(adapt_data))
    assert layer.get_vocabulary() == recorded[name]["vocabulary"]
    out = layer(numpy.array(call_input))
    numpy.testing.assert_array_equal(out.numpy(), numpy.array(recorded[name]["output"]))
    assert out.dtype == (numpy.int64 if layer.output_mode == "int" else numpy.float32)
    twin = type(layer).from_config(layer.get_config())  # the vocabulary travels in the config
    numpy.testing.assert_array_equal(twin(numpy.array(call_input)).numpy(), out.numpy())


def test_string_lookup_invert_and_fixed_vocabulary():
    lookup = layers.StringLookup(vocabulary=["a", "b", "c"])
    indices = lookup([["a", "c", "zz"], ["b", "b", "a"]])
    numpy.testing.assert_array_equal(indices.numpy(), [[1, 3, 0], [2, 2, 1]])
    inverse = layers.StringLookup(vocabulary=["a", "b", "c"], invert=True)
    assert inverse(indices).tolist() == [["a", "c", "[UNK]"], ["b", "b", "a"]]
    assert lookup.vocabulary_size() == 4
    with pytest.raises(ValueError, match=r"indices must lie in \[0, 4\)"):
        inverse(numpy.array([4]))


def test_lookup_mask_and_errors():
    lookup = layers.StringLookup(vocabulary=["x", "y"], mask_token="")
    out = lookup(numpy.array([["x", "", "y"]]))
    numpy.testing.assert_array_equal(get_keras_mask(out).numpy(), [[True, False, True]])
    strict = layers.StringLookup(vocabulary=["x"], num_oov_indices=0)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        strict(["q"])
    with pytest.raises(ValueError, match="repeats"):
        layers.StringLookup(vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="num_oov_indices"):
        layers.StringLookup(num_oov_indices=-1)
    with pytest.raises(ValueError, match="output_mode"):
        layers.StringLookup(output_mode="tf_idf_weights")
    with pytest.raises(TypeError, match="integer tokens"):
        layers.IntegerLookup(vocabulary=[1, 2])(["a"])


def test_text_vectorization_feeds_a_model():
    vectorize = layers.TextVectorization(max_tokens=20, output_sequence_length=5)
    vectorize.adapt(["good movie", "bad movie", "really good film", "really bad film"])
    x = vectorize(["good film", "bad movie really", "good", "bad"]).numpy()
    assert x.shape == (4, 5) and x.dtype == numpy.int64
    model = Sequential([Input((5,), dtype="int64"), layers.Embedding(20, 4, mask_zero=True),
                        layers.GlobalAveragePooling1D(), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(x, numpy.array([1.0, 0.0, 1.0, 0.0]), epochs=30, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_text_vectorization_options_and_errors():
    vectorize = layers.TextVectorization(standardize=lambda text: text.upper(), split=lambda text: text.split(","))
    vectorize.adapt(["a,b", "b,c"])
    assert vectorize.get_vocabulary() == ["", "[UNK]", "B", "C", "A"]
    with pytest.raises(ValueError, match="standardize"):
        layers.TextVectorization(standardize="upper")
    with pytest.raises(ValueError, match="output_sequence_length needs"):
        layers.TextVectorization(output_mode="count", output_sequence_length=3)
    with pytest.raises(ValueError, match=r"\(batch,\) or \(batch, 1\)"):
        vectorize(numpy.array([["a", "b"]]))
