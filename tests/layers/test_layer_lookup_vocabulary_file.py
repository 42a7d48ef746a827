"""A lookup's vocabulary given as a file path, as Keras takes it: one token a
line, the special tokens left out; TF-IDF refuses a file, as Keras does."""
import numpy
import pytest

from minikeras import layers


def test_string_lookup_reads_a_vocabulary_file(tmp_path):
    path = tmp_path / "vocabulary.txt"
    path.write_text("cat\ndog\némile\n", encoding="utf-8")
    lookup = layers.StringLookup(vocabulary=str(path))
    assert lookup.get_vocabulary() == ["[UNK]", "cat", "dog", "émile"]
    numpy.testing.assert_array_equal(lookup([["dog", "ox", "émile"]]).numpy(), [[2, 0, 3]])
    # The config holds the tokens, not the path: the saved model does not depend on the file.
    assert layers.StringLookup.from_config(lookup.get_config()).get_vocabulary() == lookup.get_vocabulary()


def test_integer_lookup_and_text_vectorization_read_a_vocabulary_file(tmp_path):
    numbers, words = tmp_path / "numbers.txt", tmp_path / "words.txt"
    numbers.write_text("42\n7")
    words.write_text("the\ncat\n")
    assert layers.IntegerLookup(vocabulary=numbers).get_vocabulary() == [-1, 42, 7]
    vectorize = layers.TextVectorization(vocabulary=str(words))
    numpy.testing.assert_array_equal(vectorize(["The cat sat"]).numpy(), [[2, 3, 1]])


def test_a_bad_vocabulary_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="vocabulary file .*missing.txt' does not exist"):
        layers.StringLookup(vocabulary=str(tmp_path / "missing.txt"))
    words = tmp_path / "words.txt"
    words.write_text("7\nseven\n")
    with pytest.raises(ValueError, match="holds a line that is not an integer"):
        layers.IntegerLookup(vocabulary=str(words))
    with pytest.raises(ValueError, match="'tf_idf' does not support loading a vocabulary from a file"):
        layers.StringLookup(output_mode="tf_idf").set_vocabulary(str(words), idf_weights=[1.0, 2.0])
