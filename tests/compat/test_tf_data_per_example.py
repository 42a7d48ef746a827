"""Preprocessing layers mapped over a ``tf.data.Dataset`` before ``batch()``
(one rank-0 or rank-1 example per call), as keras.io's structured-data and
text examples map them: the static shapes and values Keras 3.15 gives.
Skips where TensorFlow is not installed (it is never a minikeras dependency).
"""
import numpy
import pytest

from minikeras import layers


def _tf():
    return pytest.importorskip("tensorflow", reason="TensorFlow is not installed: tf.data pipelines cannot be built")


def test_lookups_and_text_vectorization_per_example_then_batch():
    tf = _tf()
    multi_hot = layers.StringLookup(vocabulary=["a", "b", "c"], output_mode="multi_hot")
    one_hot = layers.IntegerLookup(vocabulary=[10, 20, 30], output_mode="one_hot")
    vectorize = layers.TextVectorization(vocabulary=["the", "cat", "sat"], output_sequence_length=4)
    dataset = tf.data.Dataset.from_tensor_slices((["b", "z"], [20, 99], ["the cat sat on", "cat"]))
    mapped = dataset.map(lambda s, i, t: (multi_hot(s), one_hot(i), vectorize(t)))
    assert [spec.shape.as_list() for spec in mapped.element_spec] == [[4], [1, 4], [4]]  # Keras 3.15's shapes
    batches = list(mapped.batch(2))
    assert len(batches) == 1
    hot, ids, tokens = (tensor.numpy() for tensor in batches[0])
    numpy.testing.assert_array_equal(hot, [[0, 0, 1, 0], [1, 0, 0, 0]])
    numpy.testing.assert_array_equal(ids, [[[0, 0, 1, 0]], [[1, 0, 0, 0]]])
    numpy.testing.assert_array_equal(tokens, [[2, 3, 4, 1], [3, 0, 0, 0]])


def test_rank_one_examples_of_ids_and_numbers():
    tf = _tf()
    counts = layers.StringLookup(vocabulary=["a", "b", "c"], output_mode="count")
    buckets = layers.Discretization(bin_boundaries=[0.0, 1.0], output_mode="multi_hot")
    normalize = layers.Normalization(mean=[1.0, 2.0], variance=[1.0, 4.0])
    dataset = tf.data.Dataset.from_tensor_slices(([["a", "a", "c"], ["b", "z", "b"]],
                                                  [[0.5, 1.5], [-1.0, -2.0]], [[2.0, 4.0], [1.0, 2.0]]))
    mapped = dataset.map(lambda s, x, f: (counts(s), buckets(x), normalize(f)))
    assert [spec.shape.as_list() for spec in mapped.element_spec] == [[4], [3], [2]]
    (word_counts, hot, standardized), = [tuple(t.numpy() for t in batch) for batch in mapped.batch(2)]
    numpy.testing.assert_array_equal(word_counts, [[0, 2, 0, 1], [1, 0, 2, 0]])
    numpy.testing.assert_array_equal(hot, [[0, 1, 1], [1, 0, 0]])
    numpy.testing.assert_allclose(standardized, [[1.0, 1.0], [0.0, 0.0]])
