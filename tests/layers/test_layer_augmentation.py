"""Augmentation layers: active only in training, seeded, the right
transform per image, config/save round trips, and training through fit.
Fixed-parameter parity with Keras is in test_layer_keras_parity.py."""
import numpy
import pytest

import minikeras as mk
from minikeras import Sequential, layers
from minikeras.layers import Input
from tests.layers.layer_check import run_layer_test

MAKERS = {
    "RandomFlip": lambda **kw: layers.RandomFlip(seed=3, **kw),
    "RandomRotation": lambda **kw: layers.RandomRotation(0.2, seed=3, **kw),
    "RandomZoom": lambda **kw: layers.RandomZoom(0.3, 0.2, seed=3, **kw),
    "RandomTranslation": lambda **kw: layers.RandomTranslation(0.2, 0.3, seed=3, **kw),
    "RandomContrast": lambda **kw: layers.RandomContrast(0.4, seed=3, **kw),
}


@pytest.fixture
def images(rng):
    return rng.uniform(0, 255, (6, 8, 7, 3)).astype("float32")


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_identity_in_inference_and_round_trips(name, images, tmp_path):
    run_layer_test(MAKERS[name], images, expected_output=images, tmp_path=tmp_path)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_training_changes_images_reproducibly(name, images):
    first, second = MAKERS[name](), MAKERS[name]()
    out = first(images, training=True).numpy()
    assert out.shape == images.shape and out.dtype == numpy.float32
    assert not numpy.allclose(out, images)
    numpy.testing.assert_array_equal(second(images, training=True).numpy(), out)  # same seed, same draws
    assert not numpy.array_equal(first(images, training=True).numpy(), out)  # the stream advances


def test_unseeded_layers_follow_the_library_seed(images):
    mk.random.seed(5)
    out = layers.RandomRotation(0.3)(images, training=True).numpy()
    mk.random.seed(5)
    numpy.testing.assert_array_equal(layers.RandomRotation(0.3)(images, training=True).numpy(), out)


def test_flip_gives_each_image_flipped_or_not(images):
    for mode, flip in (("horizontal", lambda x: x[:, ::-1]), ("vertical", lambda x: x[::-1]),
                       ("horizontal_and_vertical", lambda x: x[::-1, ::-1])):
        out = layers.RandomFlip(mode, seed=0)(images, training=True).numpy()
        flipped = [numpy.array_equal(o, flip(i)) for o, i in zip(out, images)]
        kept = [numpy.array_equal(o, i) for o, i in zip(out, images)]
        assert all(f or k for f, k in zip(flipped, kept)) and any(flipped) and any(kept)
    with pytest.raises(ValueError, match="mode"):
        layers.RandomFlip("diagonal")


def test_contrast_scales_around_the_channel_mean(images):
    layer = layers.RandomContrast((0.5, 0.5), value_range=(-1e9, 1e9), seed=1)
    out = layer(images, training=True).numpy()
    mean = images.mean(axis=(1, 2), keepdims=True)
    factors = ((out - mean) / (images - mean)).reshape(6, -1)
    numpy.testing.assert_allclose(factors, factors[:, :1].repeat(factors.shape[1], axis=1), rtol=1e-3)
    assert ((factors >= 0.5 - 1e-4) & (factors <= 1.5 + 1e-4)).all()
    clipped = layers.RandomContrast(0.9, seed=1)(images, training=True).numpy()
    assert clipped.min() >= 0 and clipped.max() <= 255


def test_rotation_by_half_a_turn_flips_both_axes(images):
    out = layers.RandomRotation((0.5, 0.5))(images, training=True).numpy()
    numpy.testing.assert_allclose(out, images[:, ::-1, ::-1], atol=1e-3)


def test_translation_by_whole_pixels_shifts(images):
    out = layers.RandomTranslation((0.25, 0.25), (0.0, 0.0), fill_mode="constant")(images, training=True).numpy()
    numpy.testing.assert_allclose(out[:, 2:], images[:, :-2], atol=1e-3)
    assert (out[:, :2] == 0).all()


def test_factor_validation():
    with pytest.raises(ValueError, match="factor"):
        layers.RandomRotation(1.5)
    with pytest.raises(ValueError, match="height_factor"):
        layers.RandomZoom((0.1, 0.2, 0.3))
    with pytest.raises(ValueError, match="fill_mode"):
        layers.RandomTranslation(0.1, 0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match="value_range"):
        layers.RandomContrast(0.1, value_range=(1, 0))
    with pytest.raises(ValueError, match="seed"):
        layers.RandomFlip(seed=-1)


def test_augmentation_in_fit_and_not_in_predict(rng):
    x = rng.uniform(0, 1, (32, 8, 8, 1)).astype("float32")
    y = (x.mean(axis=(1, 2, 3)) > 0.5).astype("float32")
    model = Sequential([Input((8, 8, 1)), layers.RandomFlip(seed=0), layers.RandomRotation(0.1, seed=0),
                        layers.Flatten(), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert numpy.isfinite(history.history["loss"]).all()
    numpy.testing.assert_array_equal(model.predict(x, verbose=0), model.predict(x, verbose=0))
