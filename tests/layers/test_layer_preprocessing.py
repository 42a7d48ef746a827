"""Preprocessing layers: Rescaling, Resizing, CenterCrop, Normalization
(with adapt). Keras parity is in test_layer_keras_parity.py."""
import numpy
import pytest

from minikeras import Sequential, layers
from minikeras.autograd import Tensor
from minikeras.layers import Input
from minikeras.models import load_model
from tests.layers.layer_check import run_layer_test


@pytest.fixture
def images(rng):
    return rng.uniform(0, 255, (2, 6, 5, 3)).astype("float32")


def test_rescaling(images, tmp_path):
    run_layer_test(lambda **kw: layers.Rescaling(1 / 255, **kw), images, expected_output=images / 255,
                   tmp_path=tmp_path)
    per_channel = layers.Rescaling([1.0, 2.0, 3.0], offset=[0.0, 1.0, -1.0])(images).numpy()
    numpy.testing.assert_allclose(per_channel, images * [1, 2, 3] + [0, 1, -1], rtol=1e-6)
    out = layers.Rescaling(0.5)(images.astype("uint8"))
    assert out.dtype == numpy.float32
    with pytest.raises(TypeError, match="scale"):
        layers.Rescaling("half")


def test_resizing(images, tmp_path):
    run_layer_test(lambda **kw: layers.Resizing(4, 7, **kw), images, expected_output_shape=(2, 4, 7, 3),
                   tmp_path=tmp_path, atol=1e-4)
    same = layers.Resizing(6, 5)(images).numpy()
    numpy.testing.assert_allclose(same, images, rtol=1e-6)
    single = layers.Resizing(3, 3)(images[0])
    assert single.shape == (3, 3, 3)
    first = layers.Resizing(3, 4, data_format="channels_first")(images.transpose(0, 3, 1, 2)).numpy()
    numpy.testing.assert_allclose(first.transpose(0, 2, 3, 1), layers.Resizing(3, 4)(images).numpy(), rtol=1e-5)
    with pytest.raises(ValueError, match="interpolation"):
        layers.Resizing(2, 2, interpolation="bicubic")
    with pytest.raises(ValueError, match="not implemented"):
        layers.Resizing(2, 2, pad_to_aspect_ratio=True)
    with pytest.raises(ValueError, match="Resizing: height must be positive"):
        layers.Resizing(0, 2)
    with pytest.raises(ValueError, match="rank 3 or 4"):
        layers.Resizing(2, 2)(numpy.zeros((4, 4), "float32"))


def test_center_crop(images, tmp_path):
    run_layer_test(lambda **kw: layers.CenterCrop(3, 2, **kw), images, expected_output=images[:, 1:4, 1:3],
                   tmp_path=tmp_path)
    assert layers.CenterCrop(8, 4)(images).shape == (2, 8, 4, 3)  # smaller input: crop to aspect, upsample


def test_normalization_adapt_matches_numpy(rng, tmp_path):
    data = rng.normal(3.0, 2.0, (64, 5)).astype("float32")
    layer = layers.Normalization()
    layer.adapt(data)
    assert [w.name.split("/")[-1] for w in layer.weights] == ["mean", "variance", "count"]
    assert layer.trainable_weights == []
    numpy.testing.assert_allclose(layer.get_weights()[0], data.mean(axis=0), rtol=1e-5)
    numpy.testing.assert_allclose(layer.get_weights()[1], data.var(axis=0), rtol=1e-5)
    out = layer(data).numpy()
    numpy.testing.assert_allclose(out.mean(axis=0), 0, atol=1e-5)
    numpy.testing.assert_allclose(out.std(axis=0), 1, rtol=1e-4)
    # Batches give the same statistics as the whole (exact parallel update).
    batched = layers.Normalization()
    batched.adapt(data[i:i + 10] for i in range(0, 64, 10))
    for mine, whole in zip(batched.get_weights(), layer.get_weights()):
        numpy.testing.assert_allclose(mine, whole, rtol=1e-5, atol=1e-6)
    inverse = layers.Normalization(invert=True)
    inverse.adapt(data)
    numpy.testing.assert_allclose(inverse(out).numpy(), data, rtol=1e-4, atol=1e-4)
    # In a model: the adapted statistics save and load.
    model = Sequential([Input((5,)), layer, layers.Dense(1)])
    path = str(tmp_path / "norm.h5")
    model.save(path)
    with pytest.warns(UserWarning):
        loaded = load_model(path)
    numpy.testing.assert_allclose(loaded.predict(data, verbose=0), model.predict(data, verbose=0), rtol=1e-6)


def test_normalization_axes_fixed_statistics_and_gradient(rng, tmp_path):
    images = rng.normal(size=(4, 3, 3, 2)).astype("float32")
    overall = layers.Normalization(axis=None)
    overall.adapt(images)
    assert overall.get_weights()[0].shape == ()
    numpy.testing.assert_allclose(overall(images).numpy().std(), 1, rtol=1e-4)
    per_row = layers.Normalization(axis=(1, 3))
    per_row.adapt(images)
    assert per_row.get_weights()[0].shape == (3, 2)
    run_layer_test(lambda **kw: layers.Normalization(mean=[1.0, -1.0], variance=[4.0, 0.25], **kw), images,
                   expected_output=(images - [1.0, -1.0]) / [2.0, 0.5], tmp_path=tmp_path)


def test_normalization_errors(rng):
    with pytest.raises(ValueError, match="both mean and variance"):
        layers.Normalization(mean=[1.0])
    with pytest.raises(ValueError, match="same shape"):
        layers.Normalization(mean=[1.0, 2.0], variance=[1.0])
    layer = layers.Normalization()
    layer.adapt(rng.normal(size=(8, 3)))
    with pytest.raises(ValueError, match=r"built for inputs of shape \(None, 3\)"):
        layer.adapt(rng.normal(size=(8, 4)))
    with pytest.raises(ValueError, match="no data"):
        layers.Normalization().adapt([])
    with pytest.raises(TypeError, match="iterable of batches"):
        layers.Normalization().adapt(3.0)
    with pytest.raises(ValueError, match="out of range"):
        layers.Normalization(axis=3)(Tensor(numpy.zeros((2, 3), "float32")))
