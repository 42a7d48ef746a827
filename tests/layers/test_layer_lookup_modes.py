"""StringLookup/IntegerLookup output modes beyond "int", against values
Keras 3.15.1 printed for the same calls (recorded by hand from the side
environment, see the comments): "binary" (Keras's alias of multi_hot),
"tf-idf"/"tf_idf" with given and adapted idf weights, and their configs."""
import numpy
import pytest

from minikeras import layers


def test_binary_is_multi_hot():
    layer = layers.IntegerLookup(output_mode="binary", vocabulary=[12, 36, 1138, 42])
    assert layer.output_mode == "multi_hot" and layer.get_config()["output_mode"] == "multi_hot"
    numpy.testing.assert_array_equal(layer(numpy.array([[12, 1138], [42, 7]])).numpy(),
                                     [[0, 1, 0, 1, 0], [1, 0, 0, 0, 1]])


def test_tf_idf_with_given_weights_pads_the_oov_index_with_their_mean():
    layer = layers.StringLookup(output_mode="tf-idf", vocabulary=["a", "b", "c"], idf_weights=[0.5, 0.25, 0.125])
    # Keras 3.15.1: [[0.29166666 1. 0.25 0.]]
    numpy.testing.assert_allclose(layer(numpy.array([["a", "b", "a", "z"]])).numpy(),
                                  [[0.29166666, 1.0, 0.25, 0.0]], rtol=1e-6)


def test_tf_idf_adapt_computes_keras_idf_and_survives_the_config():
    layer = layers.StringLookup(output_mode="tf_idf")
    layer.adapt(numpy.array([["a", "b", "a"], ["c", "a", "b"], ["d", "d", "d"]]))
    assert layer.get_vocabulary() == ["[UNK]", "d", "a", "b", "c"]
    expected = [[0.804719, 0.0, 1.3862944, 0.6931472, 0.0]]  # Keras 3.15.1
    numpy.testing.assert_allclose(layer(numpy.array([["a", "b", "a", "z"]])).numpy(), expected, rtol=1e-6)
    rebuilt = layers.StringLookup.from_config(layer.get_config())
    numpy.testing.assert_allclose(rebuilt(numpy.array([["a", "b", "a", "z"]])).numpy(), expected, rtol=1e-6)


def test_integer_tf_idf_and_padding_to_max_tokens():
    layer = layers.IntegerLookup(output_mode="tf_idf", vocabulary=[5, 6], idf_weights=[1.0, 3.0], max_tokens=5,
                                 pad_to_max_tokens=True)
    numpy.testing.assert_allclose(layer(numpy.array([[5, 6, 6, 9]])).numpy(), [[2.0, 1.0, 6.0, 0.0, 0.0]])


def test_idf_weights_are_checked():
    with pytest.raises(ValueError, match="idf_weights should only be set"):
        layers.StringLookup(vocabulary=["a"], idf_weights=[1.0])
    with pytest.raises(ValueError, match="idf_weights argument must be given"):
        layers.StringLookup(output_mode="tf_idf", vocabulary=["a"])
    with pytest.raises(ValueError, match="same length as the vocabulary"):
        layers.StringLookup(output_mode="tf_idf", vocabulary=["a", "b"], idf_weights=[1.0])
    with pytest.raises(ValueError, match="oov_method must be 'floormod' or 'farmhash'"):
        layers.IntegerLookup(oov_method="siphash")
