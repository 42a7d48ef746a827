"""Preprocessing layers inside tf.data pipelines (Keras 3 documents this for
every backend): lookups, Normalization, TextVectorization and augmentation
called in ``Dataset.map`` return tf.Tensors with static shapes, ``adapt``
takes a Dataset, and the mapped dataset trains a minikeras model, as in
keras.io's "Structured data classification from scratch".

TensorFlow is never a minikeras dependency: this file skips where it is
not installed (CI); run it in an environment that has it. A last test,
which always runs, checks that layers never import TensorFlow themselves.
"""
import subprocess
import sys

import numpy
import pytest

import minikeras as mk
from minikeras import layers


def _tf():
    return pytest.importorskip("tensorflow", reason="TensorFlow is not installed: tf.data pipelines cannot be built")


def test_lookups_adapt_on_a_dataset_and_map_to_tf_tensors():
    tf = _tf()
    strings = layers.StringLookup(output_mode="one_hot")
    strings.adapt(tf.data.Dataset.from_tensor_slices(["a", "b", "a", "c"]).batch(2))
    assert strings.get_vocabulary() == ["[UNK]", "a", "c", "b"]
    integers = layers.IntegerLookup()
    integers.adapt(tf.data.Dataset.from_tensor_slices([3, 3, 7]).batch(2))
    dataset = tf.data.Dataset.from_tensor_slices((["a", "z"], [3, 9])).batch(2).map(
        lambda s, i: (strings(s), integers(i)))
    assert dataset.element_spec[0].shape.as_list() == [None, 4]
    assert dataset.element_spec[0].dtype == tf.float32 and dataset.element_spec[1].dtype == tf.int64
    (one_hot, index), = list(dataset)
    numpy.testing.assert_array_equal(one_hot.numpy(), [[0, 1, 0, 0], [1, 0, 0, 0]])
    numpy.testing.assert_array_equal(index.numpy(), [1, 0])


def test_text_vectorization_and_inverse_lookup_in_a_pipeline():
    tf = _tf()
    vectorize = layers.TextVectorization(max_tokens=10, output_sequence_length=4)
    vectorize.adapt(tf.data.Dataset.from_tensor_slices(["the cat sat", "the dog ran far away"]).batch(2))
    dataset = tf.data.Dataset.from_tensor_slices(["the cat ran", "a dog"]).batch(2).map(vectorize)
    assert dataset.element_spec.shape.as_list() == [None, 4] and dataset.element_spec.dtype == tf.int64
    ids = next(iter(dataset)).numpy()
    numpy.testing.assert_array_equal(ids, vectorize(numpy.array(["the cat ran", "a dog"])).numpy())
    invert = layers.StringLookup(vocabulary=["a", "b"], invert=True)
    words = next(iter(tf.data.Dataset.from_tensor_slices([[1, 2, 0]]).map(invert)))
    assert words.dtype == tf.string and [w.decode() for w in words.numpy()] == ["a", "b", "[UNK]"]


def test_structured_data_pipeline_trains_a_model():
    tf = _tf()
    rng = numpy.random.default_rng(0)
    ages = rng.integers(20, 70, 256).astype("float32")
    colours = rng.choice(["red", "green", "blue"], 256)
    labels = ((ages > 45) ^ (colours == "red")).astype("int64")
    normalize = layers.Normalization(axis=None)
    normalize.adapt(tf.data.Dataset.from_tensor_slices(ages).batch(32))
    encode = layers.StringLookup(output_mode="one_hot", num_oov_indices=0)
    encode.adapt(tf.data.Dataset.from_tensor_slices(colours).batch(32))

    def features(age, colour, label):
        return tf.concat([tf.reshape(normalize(age), (-1, 1)), encode(colour)], axis=1), label

    dataset = tf.data.Dataset.from_tensor_slices((ages, colours, labels)).batch(32).map(features)
    model = mk.Sequential([layers.Input(shape=(4,)), layers.Dense(16, activation="relu"),
                           layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=mk.optimizers.Adam(0.03), loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(dataset, epochs=15, verbose=0)
    assert history.history["accuracy"][-1] > 0.9, history.history


def test_augmentation_in_a_pipeline_changes_images_with_the_input_shape():
    tf = _tf()
    flip = layers.RandomFlip("horizontal", seed=1)
    images = numpy.random.default_rng(1).random((8, 6, 6, 3)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices(images).batch(8).map(lambda x: flip(x, training=True))
    assert dataset.element_spec.shape.as_list() == [None, 6, 6, 3]
    flipped = next(iter(dataset)).numpy()
    same = [numpy.array_equal(a, b) for a, b in zip(flipped, images)]
    mirrored = [numpy.array_equal(a, b[:, ::-1]) for a, b in zip(flipped, images)]
    assert all(s or m for s, m in zip(same, mirrored)) and any(mirrored)


def test_layers_do_not_import_tensorflow():
    code = ("import sys, numpy, minikeras as mk; mk.layers.StringLookup(vocabulary=['a'])(numpy.array(['a']));"
            "print('tensorflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False", result.stderr
