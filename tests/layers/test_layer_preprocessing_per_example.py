"""Preprocessing layers called on one example (rank 0 or rank 1), as inside
``Dataset.map`` before ``batch()``: Keras 3.15's output shapes and values
(recorded from Keras with its TensorFlow backend), and each example's output
equal to its row of the batched call.

Keras's rules, which these follow: a rank-0 id is upranked to one id, so
"one_hot" gives ``(1, depth)`` and "multi_hot"/"count"/"tf_idf" give
``(depth,)``; a rank-1 input is one example's ids (``(depth,)``) for the
reducing modes and ``(n, depth)`` for "one_hot"; "int" keeps the input's
shape. TextVectorization reads a rank-0 string as one text (no batch axis
out). Keras returns lookups' encodings as int64 when eager and float32 in a
graph; minikeras gives float32 (the graph's dtype) in both.
"""
import numpy
import pytest

from minikeras import layers

VOCAB = ["a", "b", "c"]
MODES = ["int", "one_hot", "multi_hot", "count", "tf_idf"]


def _lookup(cls, mode):
    extra = {"idf_weights": [0.5, 1.0, 1.5]} if mode == "tf_idf" else {}
    vocabulary = VOCAB if cls is layers.StringLookup else [10, 20, 30]
    return cls(vocabulary=vocabulary, output_mode=mode, **extra)


# Keras 3.15, StringLookup(vocabulary=["a", "b", "c"]) (IntegerLookup with [10, 20, 30] gives the same).
KERAS_LOOKUP = {
    ("int", 0): 2,
    ("int", 1): [2, 3, 2, 0],
    ("one_hot", 0): [[0, 0, 1, 0]],
    ("one_hot", 1): [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 0]],
    ("multi_hot", 0): [0, 0, 1, 0],
    ("multi_hot", 1): [1, 0, 1, 1],
    ("count", 0): [0, 0, 1, 0],
    ("count", 1): [1, 0, 2, 1],
    ("tf_idf", 0): [0.0, 0.0, 1.0, 0.0],
    ("tf_idf", 1): [1.0, 0.0, 2.0, 1.5],
}


@pytest.mark.parametrize("cls", [layers.StringLookup, layers.IntegerLookup])
@pytest.mark.parametrize("mode", MODES)
def test_lookups_on_one_example_give_keras_shapes_and_values(cls, mode):
    layer = _lookup(cls, mode)
    scalar, example = ("b", ["b", "c", "b", "z"]) if cls is layers.StringLookup else (20, [20, 30, 20, 99])
    for rank, value in ((0, numpy.array(scalar)), (1, numpy.array(example))):
        expected = numpy.array(KERAS_LOOKUP[(mode, rank)])
        output = layer(value).numpy()
        assert output.shape == expected.shape, (mode, rank)
        numpy.testing.assert_allclose(output, expected)


@pytest.mark.parametrize("mode", ["multi_hot", "count", "tf_idf"])
def test_each_examples_encoding_is_its_row_of_the_batch(mode):
    # The StringLookup docstring's multi_hot data, one row at a time as Dataset.map sees it.
    layer = layers.StringLookup(vocabulary=["a", "b", "c", "d"], output_mode=mode,
                                **({"idf_weights": [0.25, 0.75, 0.6, 0.4]} if mode == "tf_idf" else {}))
    data = numpy.array([["a", "c", "d", "d"], ["d", "z", "b", "z"]])
    batched = layer(data).numpy()
    assert batched.shape == (2, 5)
    for row, example in enumerate(data):
        numpy.testing.assert_allclose(layer(example).numpy(), batched[row])
    column = numpy.array([["a"], ["z"], ["d"]])  # one id per example: rank 0 per example
    for row, token in enumerate(column[:, 0]):
        numpy.testing.assert_allclose(layer(numpy.array(token)).numpy(), layer(column).numpy()[row])


def test_rank_three_multi_hot_no_longer_crashes():
    encoded = layers.StringLookup(vocabulary=VOCAB, output_mode="multi_hot")(numpy.array([[["a", "b"], ["c", "c"]]]))
    assert encoded.shape == (1, 2, 4)


# Keras 3.15: TextVectorization(vocabulary=["the", "cat", "sat"], ...).
@pytest.mark.parametrize("mode, extra, one, batch", [
    ("int", {"output_sequence_length": 4}, [2, 3, 4, 1], [[2, 3, 4, 1], [3, 0, 0, 0]]),
    ("int", {}, [2, 3, 4, 1], [[2, 3, 4, 1], [3, 0, 0, 0]]),
    ("multi_hot", {}, [1, 1, 1, 1], [[1, 1, 1, 1], [0, 0, 1, 0]]),
    ("count", {}, [1, 1, 1, 1], [[1, 1, 1, 1], [0, 0, 1, 0]]),
    ("tf_idf", {"idf_weights": [0.5, 1.0, 1.5]}, [1.0, 0.5, 1.0, 1.5], [[1.0, 0.5, 1.0, 1.5], [0.0, 0.0, 1.0, 0.0]]),
])
def test_text_vectorization_reads_a_rank_zero_string_as_one_text(mode, extra, one, batch):
    layer = layers.TextVectorization(output_mode=mode, vocabulary=["the", "cat", "sat"], **extra)
    numpy.testing.assert_allclose(layer(numpy.array("the cat sat on")).numpy(), one)
    assert layer(numpy.array("the cat sat on")).shape == (4,)
    numpy.testing.assert_allclose(layer(numpy.array(["the cat sat on", "cat"])).numpy(), batch)
    numpy.testing.assert_allclose(layer(numpy.array([["the cat sat on"], ["cat"]])).numpy(), batch)


def test_text_vectorization_shapes_of_keras_for_ngrams_characters_and_no_split():
    vocabulary = ["the", "cat", "sat"]
    bigrams = layers.TextVectorization(vocabulary=vocabulary, ngrams=2)
    numpy.testing.assert_array_equal(bigrams(numpy.array("the cat sat")).numpy(), [2, 3, 4, 1, 1])
    characters = layers.TextVectorization(vocabulary=vocabulary, split="character", output_sequence_length=4)
    numpy.testing.assert_array_equal(characters(numpy.array("cat")).numpy(), [1, 1, 1, 0])
    assert layers.TextVectorization(vocabulary=vocabulary)(numpy.array("")).shape == (0,)
    # split=None: each string is one token, and (as Keras's lookups) a rank-1 input is one example.
    unsplit = layers.TextVectorization(vocabulary=vocabulary, split=None)
    assert unsplit(numpy.array("cat")).numpy().tolist() == 3
    numpy.testing.assert_array_equal(unsplit(numpy.array(["cat", "the", "dog"])).numpy(), [3, 2, 1])
    numpy.testing.assert_array_equal(unsplit(numpy.array([["cat"], ["the"]])).numpy(), [[3], [2]])
    bag = layers.TextVectorization(vocabulary=vocabulary, split=None, output_mode="multi_hot")
    numpy.testing.assert_array_equal(bag(numpy.array(["cat", "the", "dog"])).numpy(), [1, 1, 1, 0])
    numpy.testing.assert_array_equal(bag(numpy.array([["cat"], ["dog"]])).numpy(), [[0, 0, 1, 0], [1, 0, 0, 0]])


def test_normalization_on_one_example():
    # Keras 3.15's answers: a given mean broadcasts over a 1-D example.
    numpy.testing.assert_allclose(layers.Normalization(mean=2.0, variance=4.0)(
        numpy.array([4.0, 6.0, 8.0], "float32")).numpy(), [1.0, 2.0, 3.0])
    numpy.testing.assert_allclose(layers.Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 9.0])(
        numpy.array([2.0, 4.0, 6.0], "float32")).numpy(), [1.0, 1.0, 1.0])
    scalar = layers.Normalization(axis=None, mean=2.0, variance=4.0)(numpy.array(4.0, "float32"))
    assert scalar.shape == () and float(scalar.numpy()) == 1.0
    with pytest.raises(ValueError, match=r"axis \(-1,\) is out of range for inputs of rank 0"):
        layers.Normalization(mean=2.0, variance=4.0)(numpy.array(4.0, "float32"))
    # Adapted on batches, its statistics keep a batch axis of 1: an example
    # comes out as (1, features), as Keras gives it.
    adapted = layers.Normalization(axis=-1)
    adapted.adapt(numpy.array([[1.0, 2.0], [3.0, 6.0]], "float32"))
    example = adapted(numpy.array([2.0, 4.0], "float32"))
    assert example.shape == (1, 2)
    numpy.testing.assert_allclose(example.numpy(), [[0.0, 0.0]], atol=1e-6)


@pytest.mark.parametrize("mode, scalar, example", [
    ("int", 2, [0, 2, 3, 2]),
    ("one_hot", [[0, 0, 1, 0]], [[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 1, 0]]),
    ("multi_hot", [0, 0, 1, 0], [1, 0, 1, 1]),
    ("count", [0, 0, 1, 0], [1, 0, 2, 1]),
])
def test_discretization_on_one_example(mode, scalar, example):
    layer = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode=mode)
    for value, expected in ((numpy.array(1.5, "float32"), scalar),
                            (numpy.array([-1.0, 1.5, 2.5, 1.6], "float32"), example)):
        output = layer(value).numpy()
        assert output.shape == numpy.shape(expected)
        numpy.testing.assert_array_equal(output, expected)


@pytest.mark.parametrize("mode, scalar, example", [
    ("int", 2, [2, 2, 2]),
    ("multi_hot", [0, 0, 1, 0, 0], [0, 0, 1, 0, 0]),
    ("count", [0, 0, 1, 0, 0], [0, 0, 3, 0, 0]),
])
def test_hashing_on_one_example(mode, scalar, example):
    layer = layers.Hashing(num_bins=5, output_mode=mode)  # Keras 3.15 hashes "b" to bin 2
    numpy.testing.assert_array_equal(layer(numpy.array("b")).numpy(), scalar)
    numpy.testing.assert_array_equal(layer(numpy.array(["b", "b", "b"])).numpy(), example)
    # Keras 3.15 raises IndexError for a rank-0 one_hot; minikeras upranks it as the other layers.
    assert layers.Hashing(num_bins=5, output_mode="one_hot")(numpy.array("b")).shape == (1, 5)


@pytest.mark.parametrize("mode, scalar, example", [
    ("one_hot", [[0, 0, 1, 0]], [[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 1, 0]]),
    ("multi_hot", [0, 0, 1, 0], [0, 0, 1, 1]),
    ("count", [0, 0, 1, 0], [0, 0, 2, 1]),
])
def test_category_encoding_on_one_example(mode, scalar, example):
    layer = layers.CategoryEncoding(num_tokens=4, output_mode=mode)
    numpy.testing.assert_array_equal(layer(numpy.array(2)).numpy(), scalar)
    numpy.testing.assert_array_equal(layer(numpy.array([2, 3, 2])).numpy(), example)
