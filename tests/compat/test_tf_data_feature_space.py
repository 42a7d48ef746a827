"""FeatureSpace in tf.data pipelines, as keras.io's "Structured data
classification with FeatureSpace" uses it: ``adapt`` on a dataset of dicts,
``dataset.map(lambda x, y: (feature_space(x), y))`` giving tf.Tensors with
static shapes, and a minikeras model trained on the mapped dataset.
TensorFlow is never a minikeras dependency: this file skips where it is not
installed (CI); run it in an environment that has it."""
import numpy
import pytest

import minikeras as mk


def test_feature_space_adapts_on_and_maps_a_dataset():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed: tf.data pipelines cannot be built")
    rng = numpy.random.default_rng(0)
    columns = {"age": rng.normal(40, 10, 32).astype("float32"),
               "city": rng.choice(["paris", "lyon", "nice"], 32), "rooms": rng.integers(1, 4, 32).astype("int32")}
    labels = rng.integers(0, 2, 32).astype("float32")
    FS = mk.utils.FeatureSpace
    space = FS({"age": "float_normalized", "city": "string_categorical", "rooms": FS.integer_categorical()})
    dataset = tf.data.Dataset.from_tensor_slices((columns, labels)).batch(8)
    space.adapt(dataset.map(lambda x, _: x))
    reference = FS({"age": "float_normalized", "city": "string_categorical", "rooms": FS.integer_categorical()})
    reference.adapt(columns)
    encoded = dataset.map(lambda x, y: (space(x), y))
    assert encoded.element_spec[0].shape.as_list() == [None, 9] and encoded.element_spec[0].dtype == tf.float32
    mapped = numpy.concatenate([x.numpy() for x, _ in encoded])
    numpy.testing.assert_allclose(mapped, reference(columns).numpy(), atol=1e-5)
    one = tf.data.Dataset.from_tensor_slices(columns).map(space)
    assert one.element_spec.shape.as_list() == [9]
    numpy.testing.assert_allclose(next(iter(one)).numpy(), reference(columns).numpy()[0], atol=1e-5)
    by_name = FS({"city": "string_categorical", "age": "float"}, output_mode="dict")
    by_name.adapt(columns)
    spec = tf.data.Dataset.from_tensor_slices(columns).batch(4).map(by_name).element_spec
    assert spec["city"].shape.as_list() == [None, 4] and spec["age"].shape.as_list() == [None, 1]
    crossed = FS({"city": "string_hashed", "rooms": "integer_categorical"}, output_mode="dict",
                 crosses=[FS.cross(("city", "rooms"), crossing_dim=8)])
    crossed.adapt(columns)
    mapped_dict = next(iter(tf.data.Dataset.from_tensor_slices(columns).batch(32).map(crossed)))
    assert list(mapped_dict) == ["city", "rooms", "city_X_rooms"] and mapped_dict["city_X_rooms"].shape == (32, 8)
    numpy.testing.assert_array_equal(mapped_dict["city_X_rooms"].numpy(), crossed(columns)["city_X_rooms"].numpy())
    model = mk.Sequential([mk.Input((9,)), mk.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(encoded, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
