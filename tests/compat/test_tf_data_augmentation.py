"""Issue 25's augmentation layers inside tf.data pipelines, as Keras 3
documents them: image layers in ``Dataset.map`` (static shapes kept), and
MixUp/CutMix on ``{"images": ..., "labels": ...}`` dicts, mixing the labels.

Skips where TensorFlow is not installed (CI); run it where it is.
"""
import numpy
import pytest

from minikeras import layers


def _tf():
    return pytest.importorskip("tensorflow", reason="TensorFlow is not installed: tf.data pipelines cannot be built")


def test_image_augmentation_maps_with_static_shapes():
    tf = _tf()
    images = numpy.random.default_rng(0).uniform(0, 255, (8, 10, 12, 3)).astype("float32")
    crop, jitter = layers.RandomCrop(6, 7, seed=1), layers.RandomColorJitter(brightness_factor=0.2, seed=1)
    policy = layers.RandAugment(seed=1)
    dataset = tf.data.Dataset.from_tensor_slices(images).batch(4).map(lambda x: policy(jitter(crop(x))))
    assert dataset.element_spec.shape.as_list() == [None, 6, 7, 3] and dataset.element_spec.dtype == tf.float32
    batches = [batch.numpy() for batch in dataset]
    assert [batch.shape for batch in batches] == [(4, 6, 7, 3)] * 2
    assert all(batch.min() >= 0 and batch.max() <= 255 for batch in batches)


@pytest.mark.parametrize("layer_class", ["MixUp", "CutMix"])
def test_mixing_layers_take_dicts_and_mix_labels(layer_class):
    tf = _tf()
    rng = numpy.random.default_rng(1)
    images = rng.uniform(0, 255, (8, 6, 6, 3)).astype("float32")
    labels = numpy.eye(4, dtype="float32")[rng.integers(0, 4, 8)]
    mix = getattr(layers, layer_class)(seed=2)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(4).map(
        lambda x, y: mix({"images": x, "labels": y})).map(lambda data: (data["images"], data["labels"]))
    assert [spec.shape.as_list() for spec in dataset.element_spec] == [[None, 6, 6, 3], [None, 4]]
    for batch_images, batch_labels in dataset:
        numpy.testing.assert_allclose(batch_labels.numpy().sum(axis=1), 1.0, rtol=1e-5)
        assert batch_images.shape == (4, 6, 6, 3)
    eager = mix({"images": tf.constant(images), "labels": tf.constant(labels)})
    assert isinstance(eager["labels"], tf.Tensor) and eager["images"].shape == images.shape
