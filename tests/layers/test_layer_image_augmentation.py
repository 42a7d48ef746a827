"""Keras 3's newer image augmentation layers (issue 25): Keras's own draws
replayed through ``transform_images`` against Keras 3.15's outputs
(recorded; live where Keras is installed), Keras's config keys and values,
inference-mode identity, seeded reproducibility, label mixing, bad
arguments, and the shared layer check on every device."""
import json

import numpy
import pytest

from minikeras import layers, ops
from tests.layers.keras_augmentation_cases import (_LABELS, CASES, CONFIGS, FIXTURE, keras_case,
                                                    recorded_transformation)
from tests.layers.layer_check import run_layer_test

TOLERANCE = {"atol": 2e-3, "rtol": 2e-4}  # outputs up to 255; HSV round trips in float32


@pytest.fixture(scope="module")
def recorded():
    with numpy.load(FIXTURE) as data:
        return {key: data[key] for key in data.files}


def minikeras_case(name, transformation):
    class_name, config, images, mode = CASES[name]
    layer = getattr(layers, class_name)(**config)
    if mode in ("call", "inference"):
        return {"output": layer(images, training=mode == "call").numpy()}, layer
    if mode == "config":
        return {}, layer
    if mode == "boxes":
        return {key: value.numpy() for key, value in layer(images)["bounding_boxes"].items()}, layer
    outputs = {"output": layer.transform_images(images, transformation, training=True).numpy()}
    if mode == "replay_labels":
        outputs["labels"] = layer.transform_labels(ops.convert_to_tensor(_LABELS), transformation).numpy()
    return outputs, layer


@pytest.mark.parametrize("name", sorted(name for name in CASES if CASES[name][3] != "config"))
def test_matches_recorded_keras_output(name, recorded):
    outputs, _ = minikeras_case(name, recorded_transformation(recorded, name))
    for key, value in outputs.items():
        numpy.testing.assert_allclose(value, recorded[f"{name}/{key}"], **TOLERANCE, err_msg=f"{name}/{key}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_config_has_keras_keys_and_values(name, recorded):
    with open(CONFIGS) as handle:
        theirs = json.load(handle)[name]
    _, layer = minikeras_case(name, recorded_transformation(recorded, name))
    ours = json.loads(json.dumps({k: v for k, v in layer.get_config().items() if k not in ("name", "dtype")}))
    if CASES[name][0] == "RandomCrop":
        theirs.pop("seed")  # Keras stores a made-up seed when none is given
        ours.pop("seed")
    assert ours == theirs


@pytest.mark.parametrize("name", sorted(name for name in CASES if CASES[name][3] != "config"))
def test_matches_live_keras_output(name):
    pytest.importorskip("tensorflow")
    pytest.importorskip("keras")
    expected, arrays, _ = keras_case(name)
    transformation = recorded_transformation(arrays, name)
    outputs, _ = minikeras_case(name, transformation)
    for key, value in outputs.items():
        numpy.testing.assert_allclose(value, expected[key], **TOLERANCE, err_msg=f"{name}/{key}")


MAKERS = {
    "RandomSaturation": lambda **kw: layers.RandomSaturation(0.5, seed=3, **kw),
    "RandomHue": lambda **kw: layers.RandomHue(0.5, seed=3, **kw),
    "RandomColorDegeneration": lambda **kw: layers.RandomColorDegeneration(0.8, seed=3, **kw),
    "RandomSharpness": lambda **kw: layers.RandomSharpness(0.9, seed=3, **kw),
    "RandomColorJitter": lambda **kw: layers.RandomColorJitter(brightness_factor=0.2, contrast_factor=0.3,
                                                               saturation_factor=0.6, hue_factor=0.4, seed=3, **kw),
    "MixUp": lambda **kw: layers.MixUp(seed=3, **kw),
    "CutMix": lambda **kw: layers.CutMix(seed=3, **kw),
    "RandomErasing": lambda **kw: layers.RandomErasing(seed=3, **kw),
    "RandomShear": lambda **kw: layers.RandomShear(0.3, 0.3, seed=3, **kw),
    "RandomGaussianBlur": lambda **kw: layers.RandomGaussianBlur(kernel_size=5, seed=3, **kw),
    "RandomCrop": lambda **kw: layers.RandomCrop(4, 5, seed=3, **kw),
    "Equalization": lambda **kw: layers.Equalization(**kw),
    "RandAugment": lambda **kw: layers.RandAugment(num_ops=3, seed=3, **kw),
    "AugMix": lambda **kw: layers.AugMix(seed=3, **kw),
    "RandomPerspective": lambda **kw: layers.RandomPerspective(scale=0.5, seed=3, **kw),
    "RandomElasticTransform": lambda **kw: layers.RandomElasticTransform(scale=(0.5, 1.0), seed=3, **kw),
}


@pytest.fixture
def images(rng):
    return rng.uniform(0, 255, (4, 6, 7, 3)).astype("float32")


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_inference_is_identity_and_round_trips(name, images, tmp_path):
    if name == "RandomCrop":  # Keras 3.15 returns uncropped images in inference; its output shape is the crop's
        images = images[:, :4, :5]
    run_layer_test(MAKERS[name], images, expected_output=images, tmp_path=tmp_path, gradient=False)


@pytest.mark.parametrize("name", sorted(set(MAKERS) - {"Equalization"}))
def test_training_draws_reproducibly_from_the_seed(name, images):
    first, second = MAKERS[name](), MAKERS[name]()
    out = first(images).numpy()  # no training flag: augments, as Keras's call(training=True) default
    assert out.dtype == numpy.float32 and out.shape[0] == images.shape[0]
    assert out.shape != images.shape or not numpy.allclose(out, images)
    numpy.testing.assert_array_equal(second(images, training=True).numpy(), out)
    assert not numpy.array_equal(first(images, training=True).numpy(), out)  # the stream moves on


@pytest.mark.parametrize("name", sorted(set(MAKERS) - {"Equalization", "RandomCrop"}))
def test_channels_first_equals_channels_last(name, images):
    last = MAKERS[name]()(images, training=True).numpy()
    first = MAKERS[name](data_format="channels_first")(images.transpose(0, 3, 1, 2), training=True).numpy()
    numpy.testing.assert_allclose(first.transpose(0, 2, 3, 1), last, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("make_layer", [
    lambda **kw: layers.RandomSaturation((0.7, 0.7), **kw),
    lambda **kw: layers.RandomColorDegeneration((0.4, 0.4), **kw),
    lambda **kw: layers.RandomSharpness((0.8, 0.8), value_range=(-100, 100), **kw),
    lambda **kw: layers.RandomGaussianBlur((1.0, 1.0), kernel_size=3, sigma=(0.5, 0.5), value_range=(-100, 100),
                                           **kw),
    lambda **kw: layers.RandomCrop(3, 4, **kw),  # height equal: the deterministic centre crop
], ids=["saturation", "degeneration", "sharpness", "blur", "crop"])
def test_fixed_draws_layer_check_with_gradients(make_layer, rng, tmp_path):
    images = rng.uniform(0.1, 0.9, (2, 3, 6, 3)).astype("float32")
    run_layer_test(make_layer, images, training=True, tmp_path=tmp_path, atol=1e-3, rtol=1e-3)


def test_mix_up_mixes_labels_with_the_images_weights(images):
    labels = numpy.eye(4, dtype="float32")
    layer = layers.MixUp(alpha=0.5, seed=2)
    transformation = layer.get_random_transformation(images, seed=11)
    out = layer({"images": images, "labels": labels}, training=True)
    twin = layers.MixUp(alpha=0.5, seed=2)
    drawn = twin.get_random_transformation(images)
    weight, order = drawn["mix_weight"], drawn["permutation_order"]
    numpy.testing.assert_allclose(out["images"].numpy(), weight[:, None, None, None] * images +
                                  (1 - weight[:, None, None, None]) * images[order], rtol=1e-5, atol=1e-3)
    numpy.testing.assert_allclose(out["labels"].numpy(), weight[:, None] * labels + (1 - weight[:, None]) *
                                  labels[order], rtol=1e-6, atol=1e-6)
    numpy.testing.assert_allclose(out["labels"].numpy().sum(axis=1), 1.0, rtol=1e-6)
    assert set(transformation) == {"mix_weight", "permutation_order"}
    unchanged = layer({"images": images, "labels": labels}, training=False)
    numpy.testing.assert_array_equal(unchanged["labels"].numpy(), labels)
    with pytest.raises(NotImplementedError, match="bounding_boxes"):
        layer({"images": images, "bounding_boxes": {"boxes": numpy.zeros((4, 1, 4), "float32")}})


def test_cut_mix_label_weights_are_the_kept_area(images):
    labels = numpy.eye(4, dtype="float32")
    layer = layers.CutMix(seed=5)
    drawn = layers.CutMix(seed=5).get_random_transformation(images)
    out = layer({"images": images, "labels": labels}, training=True)
    masks, order = drawn["batch_masks"], drawn["permutation_order"]
    numpy.testing.assert_array_equal(out["images"].numpy(), numpy.where(masks, images[order], images))
    kept = 1.0 - masks[..., 0].mean(axis=(1, 2))
    expected = kept[:, None] * labels + (1 - kept[:, None]) * labels[order]
    numpy.testing.assert_allclose(out["labels"].numpy(), expected, atol=0.05)  # box area vs whole pixels
    single = layer(images[0], training=True).numpy()
    numpy.testing.assert_array_equal(single, images[0])  # one image: nothing to mix with (Keras)


def test_erasing_fills_a_box_within_the_value_range(images):
    out = layers.RandomErasing(factor=(1.0, 1.0), scale=(0.3, 0.3), fill_value=[1.0, 2.0, 300.0], seed=1)(
        images, training=True).numpy()
    changed = out != images
    assert changed.any(axis=(1, 2, 3)).all()
    numpy.testing.assert_array_equal(out[changed.any(axis=-1)], numpy.broadcast_to([1.0, 2.0, 255.0],
                                                                                    out[changed.any(axis=-1)].shape))
    noise = layers.RandomErasing(factor=(1.0, 1.0), seed=1)(images, training=True).numpy()
    assert noise.min() >= 0 and noise.max() <= 255


def test_random_crop_windows_come_from_the_image(images):
    out = layers.RandomCrop(4, 5, seed=0)(images, training=True).numpy()
    windows = {(top, left) for top in range(3) for left in range(3)
               if numpy.array_equal(out, images[:, top:top + 4, left:left + 5])}
    assert len(windows) == 1
    starts = set()
    layer = layers.RandomCrop(4, 5, seed=0)
    for _ in range(30):
        starts.add(tuple(int(v) for v in layer.get_random_transformation(images)))
    assert starts == {(top, left) for top in range(3) for left in range(3)}  # every window, bounds included
    model_output = layers.RandomCrop(4, 5).compute_output_shape((None, 6, 7, 3))
    assert model_output == (None, 4, 5, 3)


def test_hue_by_half_a_turn_is_the_same_both_ways(images):
    layer = layers.RandomHue((1.0, 1.0))
    shifted = [layer.transform_images(images, {"factor": numpy.full(4, sign * 0.5, "float32")}).numpy()
               for sign in (1, -1)]
    numpy.testing.assert_allclose(shifted[0], shifted[1], atol=1e-2)
    back = layer.transform_images(shifted[0], {"factor": numpy.full(4, 0.5, "float32")}).numpy()
    numpy.testing.assert_allclose(back, images, atol=0.05)


def test_saturation_half_is_identity_and_zero_is_grey(images):
    numpy.testing.assert_allclose(layers.RandomSaturation((0.5, 0.5))(images, training=True).numpy(), images,
                                  atol=0.05)
    grey = layers.RandomSaturation((0.0, 0.0))(images, training=True).numpy()
    numpy.testing.assert_allclose(grey.min(axis=-1), grey.max(axis=-1), atol=1e-3)


def test_equalization_flattens_the_histogram_and_keeps_constant_channels(rng):
    images = rng.normal(120, 10, (2, 16, 16, 1)).clip(0, 255).astype("float32")
    out = layers.Equalization()(images).numpy()
    assert out.min() == 0 and out.max() == 255  # stretched to the full range
    assert abs(numpy.median(out) - 127.5) < 20
    constant = numpy.full((1, 4, 4, 2), 42.0, "float32")
    numpy.testing.assert_array_equal(layers.Equalization()(constant).numpy(), constant)


def test_color_jitter_steps_compose_in_keras_order(images):
    jitter = layers.RandomColorJitter(brightness_factor=(0.1, 0.1), saturation_factor=(0.5, 0.5))
    numpy.testing.assert_allclose(jitter(images, training=True).numpy(), numpy.clip(images + 25.5, 0, 255),
                                  atol=0.05)
    assert numpy.array_equal(layers.RandomColorJitter()(images, training=True).numpy(), images)
    jitter = layers.RandomColorJitter(brightness_factor=0.3, contrast_factor=0.3, hue_factor=0.5, seed=1)
    transformation = jitter.get_random_transformation(images)
    numpy.testing.assert_array_equal(jitter.transform_images(images, transformation).numpy(),
                                     jitter.transform_images(images, transformation).numpy())  # replays


@pytest.mark.parametrize("make, error, match", [
    (lambda: layers.RandomSaturation(1.5), ValueError, "factor"),
    (lambda: layers.RandomSaturation(0.5, value_range=(0, 1, 2)), ValueError, "value_range"),
    (lambda: layers.RandomHue(-0.5), ValueError, "factor"),
    (lambda: layers.RandomHue((0.1, 0.2, 0.3)), ValueError, "factor"),
    (lambda: layers.RandomSharpness("big"), ValueError, "factor"),
    (lambda: layers.MixUp(alpha=0), ValueError, "alpha"),
    (lambda: layers.CutMix(factor=2.0), ValueError, "factor"),
    (lambda: layers.RandomErasing(scale=(0.1, 1.5, 2)), ValueError, "scale"),
    (lambda: layers.RandomErasing(fill_value=(1, 2)), ValueError, "fill_value"),
    (lambda: layers.RandomErasing(value_range=5), ValueError, "value_range"),
    (lambda: layers.RandomCrop(0, 3), ValueError, "height"),
    (lambda: layers.RandomCrop(3, 2.5), (TypeError, ValueError), "width"),
    (lambda: layers.RandomShear(x_factor=1.5), ValueError, "x_factor"),
    (lambda: layers.RandomShear(y_factor=-0.2), ValueError, "y_factor"),
    (lambda: layers.RandomShear(y_factor=(-1.2, 0.2)), ValueError, "y_factor"),
    (lambda: layers.RandomShear(fill_mode="mirror"), NotImplementedError, "fill_mode"),
    (lambda: layers.RandomShear(interpolation="bicubic"), NotImplementedError, "interpolation"),
    (lambda: layers.RandomGaussianBlur(kernel_size=4), ValueError, "kernel_size"),
    (lambda: layers.RandomGaussianBlur(sigma=2.0), ValueError, "sigma"),
    (lambda: layers.Equalization(bins=0), ValueError, "bins"),
    (lambda: layers.RandomColorJitter(hue_factor=3.0), ValueError, "factor"),
    (lambda: layers.MixUp(seed=-2), ValueError, "seed"),
    (lambda: layers.RandAugment(num_ops=-1), ValueError, "num_ops"),
    (lambda: layers.RandAugment(factor=1.5), ValueError, "factor"),
    (lambda: layers.RandAugment(interpolation="area"), ValueError, "interpolation"),
    (lambda: layers.AugMix(num_chains=0), ValueError, "num_chains"),
    (lambda: layers.AugMix(alpha=-1.0), ValueError, "alpha"),
    (lambda: layers.AugMix(value_range=(0,)), ValueError, "value_range"),
    (lambda: layers.RandomPerspective(scale=1.5), ValueError, "scale"),
    (lambda: layers.RandomPerspective(interpolation="bicubic"), NotImplementedError, "interpolation"),
    (lambda: layers.RandomElasticTransform(fill_mode="mirror"), NotImplementedError, "fill_mode"),
    (lambda: layers.RandomElasticTransform(scale=2.0), ValueError, "scale"),
    (lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(0, 2)), ValueError,
     "tile_grid_size"),
    (lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(clip_limit="high"), ValueError, "clip_limit"),
    (lambda: layers.MaxNumBoundingBoxes(0), ValueError, "max_number"),
    (lambda: layers.MaxNumBoundingBoxes(2, bounding_box_format=3), ValueError, "bounding_box_format"),
])
def test_bad_arguments_are_refused(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_bad_inputs_are_refused(images):
    with pytest.raises(ValueError, match="rank 3 or 4"):
        layers.RandomHue(0.3)(images[None], training=True)
    with pytest.raises(ValueError, match="3 channels"):
        layers.RandomSaturation(0.3)(images[..., :2], training=True)


def test_augmentation_trains_in_fit_and_stays_out_of_predict(rng):
    from minikeras import Sequential
    from minikeras.layers import Input

    x = rng.uniform(0, 255, (16, 8, 8, 3)).astype("float32")
    y = (x.mean(axis=(1, 2, 3)) > 127).astype("float32")
    model = Sequential([Input((8, 8, 3)), layers.RandomShear(0.2, seed=0), layers.RandomColorJitter(
        brightness_factor=0.1, hue_factor=0.1, seed=0), layers.MixUp(seed=0), layers.RandomErasing(seed=0),
        layers.Rescaling(1 / 255), layers.Flatten(), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert numpy.isfinite(history.history["loss"]).all()
    numpy.testing.assert_array_equal(model.predict(x, verbose=0), model.predict(x, verbose=0))


@pytest.mark.parametrize("name", ["MixUp", "CutMix", "RandomErasing", "RandomColorDegeneration", "RandomHue"])
def test_gradients_through_a_fixed_transformation(name, rng):
    from minikeras.autograd import gradcheck

    layer = MAKERS[name](dtype="float64")
    images = rng.uniform(30, 220, (2, 3, 3, 3))
    transformation = layer.get_random_transformation(images, seed=4)
    gradcheck(lambda x: layer.transform_images(x, transformation), [images], atol=1e-4, rtol=1e-3)
