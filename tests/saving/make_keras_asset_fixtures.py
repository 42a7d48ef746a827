"""Writes Keras-made ``.keras`` files whose lookup vocabularies live only in the archive's ``assets/``.

    /path/to/env-with-keras/bin/python tests/saving/make_keras_asset_fixtures.py

Keras 3 writes an adapted StringLookup / IntegerLookup / TextVectorization's
vocabulary to ``assets/<object path>/vocabulary.txt`` (special tokens first,
one per line) and leaves ``vocabulary`` None in config.json; in "tf_idf"
mode the weights are the dataset ``<object path>/vars/idf_weights`` of
model.weights.h5. For each model below it writes, in
tests/saving/fixtures/keras_assets/:
    <name>.keras   model.save()
    tf_idf_lookups.weights.h5   model.save_weights() (the vocabularies are not in it)
    <name>.npz     the inputs ``x0, x1, ...``, Keras's outputs ``y0, y1, ...`` and, for the
                   TF-IDF models, the data each layer was adapted on (``adapt0, ...``)
The tests never need Keras: they only read these files.
"""
import os
import zipfile

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy  # noqa: E402
import tensorflow  # noqa: E402
from keras import layers  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "keras_assets")

WORDS = numpy.array([["cat", "dog", "cat", "fish"], ["dog", "dog", "bird", "cat"], ["émile", "cat", "ox", "dog"]])
IDS = numpy.array([[3, 7, 3, 11], [7, 7, 42, 3], [5, 3, 9, 7]], dtype="int64")
TEXTS = numpy.array([["The cat sat on the mat."], ["The dog ate the cat's food!"], ["A bird, a cat; a dog."]])


def lookups():
    """Three lookups in one model: their asset paths are layers/string_lookup, string_lookup_1, integer_lookup."""
    words = keras.Input((4,), dtype="string", name="words")
    ids = keras.Input((4,), dtype="int64", name="ids")
    strings = layers.StringLookup(name="strings")
    strings.adapt(WORDS)
    hashed = layers.StringLookup(num_oov_indices=2, mask_token="[MASK]", name="strings_masked")
    hashed.adapt(WORDS[:2])
    integers = layers.IntegerLookup(name="integers")
    integers.adapt(IDS)
    model = keras.Model([words, ids], [strings(words), hashed(words), integers(ids)], name="lookups")
    queries = [numpy.array([["cat", "dog", "zebra", "émile"], ["ox", "[MASK]", "bird", "fish"]]),
               numpy.array([[3, 7, 100, 9], [42, 5, -1, 0]], dtype="int64")]
    return model, queries, []


def tf_idf_lookups():
    words = keras.Input((4,), dtype="string", name="words")
    ids = keras.Input((4,), dtype="int64", name="ids")
    strings = layers.StringLookup(output_mode="tf_idf", name="strings")
    strings.adapt(WORDS)
    integers = layers.IntegerLookup(output_mode="tf_idf", name="integers")
    integers.adapt(IDS)
    model = keras.Model([words, ids], [strings(words), integers(ids)], name="tf_idf_lookups")
    queries = [numpy.array([["cat", "dog", "zebra", "cat"], ["ox", "ox", "bird", "fish"]]),
               numpy.array([[3, 7, 100, 3], [42, 5, 5, 0]], dtype="int64")]
    return model, queries, [WORDS, IDS]


def encoded():
    """A multi-hot lookup feeding a Dense: the Dense's kernel is (vocabulary size, 2), known from the config's
    ``vocabulary_size`` before the vocabulary is read from the assets."""
    words = keras.Input((4,), dtype="string", name="words")
    bag = layers.StringLookup(output_mode="multi_hot", name="bag")
    bag.adapt(WORDS)
    model = keras.Model(words, layers.Dense(2, name="head")(bag(words)), name="encoded")
    return model, [numpy.array([["cat", "dog", "zebra", "cat"], ["ox", "ox", "bird", "fish"]])], []


def text():
    texts = keras.Input((1,), dtype="string", name="text")
    sequences = layers.TextVectorization(output_sequence_length=6, name="sequences")
    sequences.adapt(TEXTS)
    counts = layers.TextVectorization(output_mode="count", ngrams=2, name="counts")
    counts.adapt(TEXTS)
    model = keras.Model(texts, [sequences(texts), counts(texts)], name="text")
    return model, [numpy.array([["The cat ate a fish."], ["dog dog mat zebra"]])], []


def text_tf_idf():
    texts = keras.Input((1,), dtype="string", name="text")
    weighted = layers.TextVectorization(output_mode="tf_idf", name="weighted")
    weighted.adapt(TEXTS)
    model = keras.Model(texts, weighted(texts), name="text_tf_idf")
    return model, [numpy.array([["The cat ate a fish."], ["dog dog mat zebra"]])], [TEXTS]


def main():
    os.makedirs(OUT, exist_ok=True)
    keras.utils.set_random_seed(0)
    for make in (lookups, tf_idf_lookups, encoded, text, text_tf_idf):
        model, inputs, adapted = make()
        tensors = [tensorflow.constant(x) for x in inputs]  # predict() refuses NumPy string arrays
        outputs = model(tensors if len(tensors) > 1 else tensors[0])
        outputs = [keras.ops.convert_to_numpy(y) for y in (outputs if isinstance(outputs, list) else [outputs])]
        path = os.path.join(OUT, f"{make.__name__}.keras")
        model.save(path)
        if make is tf_idf_lookups:  # Keras's weights file holds the TF-IDF weights too (vars/idf_weights)
            model.save_weights(os.path.join(OUT, f"{make.__name__}.weights.h5"))
        arrays = {f"x{i}": x for i, x in enumerate(inputs)}
        arrays.update({f"y{i}": numpy.asarray(y) for i, y in enumerate(outputs)})
        arrays.update({f"adapt{i}": data for i, data in enumerate(adapted)})
        numpy.savez(os.path.join(OUT, f"{make.__name__}.npz"), **arrays)
        with zipfile.ZipFile(path) as archive:
            print(path, archive.namelist())


if __name__ == "__main__":
    main()
