"""Keras 3's augmentation policies and the warping, local-equalization and
box layers (issue 25): RandAugment and AugMix apply the operations they
drew, RandomPerspective and RandomElasticTransform warp as their ops do,
CLAHE stretches local contrast in inference too, MaxNumBoundingBoxes pads
and truncates. Keras parity, configs and the layer check are in
test_layer_image_augmentation.py."""
import numpy
import pytest

from minikeras import layers, ops
from minikeras.layers.preprocessing.image_preprocessing import augmentation_policy as policy
from tests.layers.layer_check import run_layer_test


@pytest.fixture
def images(rng):
    return rng.uniform(0, 255, (4, 6, 7, 3)).astype("float32")


def test_rand_augment_applies_the_drawn_operations_in_order(images):
    layer = layers.RandAugment(num_ops=2, factor=0.6, seed=8)
    transformation = layer.get_random_transformation(images, seed=1)
    names = [layers.RandAugment._AUGMENT_LAYERS[i] for i in transformation["layer_idxes"]]
    assert set(transformation["transforms"]) == set(names)
    by_hand = images
    for name in names:
        step = layer._bank[name]
        by_hand = policy._apply_operation(step, ops.convert_to_tensor(by_hand),
                                          transformation["transforms"][name]).numpy()
    numpy.testing.assert_allclose(layer.transform_images(images, transformation).numpy(), by_hand, rtol=1e-6)
    identity = numpy.tile(numpy.eye(3).reshape(-1)[:8], (4, 1))
    unrotated = layer.transform_images(images, {"transforms": {"random_rotation": {"rotation_matrix": identity}},
                                                "layer_idxes": numpy.array([2, 2])})
    numpy.testing.assert_allclose(unrotated.numpy(), images, atol=1e-3)
    chosen = set()
    for _ in range(40):
        chosen.update(int(i) for i in layer.get_random_transformation(images)["layer_idxes"])
    assert chosen == set(range(11))


def test_aug_mix_is_a_convex_mix_of_its_chains(images):
    layer = layers.AugMix(num_chains=2, chain_depth=2, seed=4)
    transformation = layer.get_random_transformation(images, seed=2)
    weights = transformation["chain_mixing_weights"]
    numpy.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-6)
    empty = {**transformation, "chain_transforms": [[], []]}  # no operations: the image itself
    numpy.testing.assert_allclose(layer.transform_images(images, empty).numpy(), images, rtol=1e-5, atol=1e-3)
    out = layer(images, training=True).numpy()
    assert out.min() >= 0 and out.max() <= 255
    few = layers.AugMix(all_ops=False, chain_depth=5, seed=0)
    names = {step["layer_name"] for _ in range(10) for chain in few.get_random_transformation(images)[
        "chain_transforms"] for step in chain}
    assert names == set(layers.AugMix._SOME_LAYERS)


def test_perspective_moves_the_corners_it_drew(images):
    layer = layers.RandomPerspective(factor=(1.0, 1.0), scale=0.4, fill_value=-1.0, seed=2)
    transformation = layer.get_random_transformation(images)
    assert transformation["apply_perspective"].all()
    start, end = transformation["start_points"], transformation["end_points"]
    numpy.testing.assert_array_equal(start[0], [[0, 0], [6, 0], [0, 5], [6, 5]])
    moved = (end - start) / numpy.where(start == 0, 1, start)
    assert (numpy.abs(moved) <= 0.2 + 1e-6).all() and (end[:, 0] == 0).all()  # the origin corner stays put
    still = {**transformation, "end_points": start, "apply_perspective": numpy.ones(4, bool)}
    numpy.testing.assert_allclose(layer.transform_images(images, still).numpy(), images, atol=1e-3)
    never = layers.RandomPerspective(factor=(0.0, 0.0), seed=2)
    numpy.testing.assert_array_equal(never(images, training=True).numpy(), images)


def test_elastic_transform_is_the_op_on_the_chosen_images(images):
    layer = layers.RandomElasticTransform(factor=(1.0, 1.0), scale=(0.8, 0.8), fill_mode="nearest", seed=6)
    transformation = layer.get_random_transformation(images)
    alpha, sigma = layer.get_elastic_transform_params(6, 7, 0.8)
    assert (alpha, sigma) == pytest.approx((0.56, 0.24))
    expected = ops.image.elastic_transform(images, alpha=alpha, sigma=sigma, fill_mode="nearest",
                                           seed=transformation["seed"]).numpy()
    numpy.testing.assert_allclose(layer.transform_images(images, transformation).numpy(), numpy.clip(expected, 0, 255),
                                  rtol=1e-5, atol=1e-3)
    skipped = {**transformation, "apply_transform": numpy.array([True, False, True, False])}
    out = layer.transform_images(images, skipped).numpy()
    numpy.testing.assert_array_equal(out[1::2], images[1::2])
    assert layers.RandomElasticTransform(scale=0.0).get_random_transformation(images) is None
    numpy.testing.assert_array_equal(layers.RandomElasticTransform(factor=0.0)(images).numpy(), images)


def test_clahe_applies_in_inference_too_and_round_trips(rng, tmp_path):
    images = rng.normal(100, 8, (2, 8, 9, 1)).clip(0, 255).round().astype("float32")  # 8-bit pixel values
    make = lambda **kw: layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(2, 2), **kw)  # noqa
    layer = run_layer_test(make, images, tmp_path=tmp_path, gradient=False, atol=1e-3)
    out = layer(images, training=False).numpy()
    assert out.std() > 2 * images.std()  # local contrast stretched
    numpy.testing.assert_array_equal(layer(images, training=True).numpy(), out)
    limited = layers.ContrastLimitedAdaptiveHistogramEqualization(clip_limit=1.0, tile_grid_size=(2, 2))(images)
    assert limited.numpy().std() < out.std()  # the limit caps the stretch
    flat = numpy.full((1, 4, 4, 3), 77.0, "float32")
    flat_out = layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(2, 2))(flat).numpy()
    assert numpy.isfinite(flat_out).all()


def test_max_num_bounding_boxes_pads_truncates_and_needs_a_format(images, tmp_path):
    boxes = numpy.arange(4 * 3 * 4, dtype="float32").reshape(4, 3, 4)
    labels = numpy.arange(12, dtype="float32").reshape(4, 3)
    data = {"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}}
    out = layers.MaxNumBoundingBoxes(5, fill_value=-3, bounding_box_format="xyxy")(data)
    numpy.testing.assert_array_equal(out["images"].numpy(), images)
    numpy.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy()[:, :3], boxes)
    assert (out["bounding_boxes"]["boxes"].numpy()[:, 3:] == -3).all()
    assert (out["bounding_boxes"]["labels"].numpy()[:, 3:] == -3).all()
    cut = layers.MaxNumBoundingBoxes(2, bounding_box_format="xyxy")(data)["bounding_boxes"]
    numpy.testing.assert_array_equal(cut["labels"].numpy(), labels[:, :2])
    layer = layers.MaxNumBoundingBoxes(2, bounding_box_format="xyxy")
    assert layer.compute_output_shape({"bounding_boxes": {"boxes": (None, 7, 4), "labels": (None, 7)}}) == {
        "bounding_boxes": {"boxes": (None, 2, 4), "labels": (None, 2)}}
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()
    numpy.testing.assert_array_equal(layers.MaxNumBoundingBoxes(2)(images).numpy(), images)
    with pytest.raises(ValueError, match="bounding_box_format"):
        layers.MaxNumBoundingBoxes(2)(data)
    with pytest.raises(KeyError, match="unsupported"):
        layers.MaxNumBoundingBoxes(2, bounding_box_format="xyxy")(
            {"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels, "scores": labels}})
