"""Image augmentation cases recorded from Keras 3.15 (issue 25).

Each random layer's deterministic part is pinned by replaying Keras's own
draws: the recorder asks Keras's layer for ``get_random_transformation``
(seeded) and ``transform_images``, and stores the transformation, the
output and the config; the test hands the same transformation to the
minikeras layer's ``transform_images``. Layers that draw inside their
transform (RandomColorJitter) use factors that make every draw the same,
and the deterministic ones (Equalization) are called as they are.

Run ``/work/side/bin/python -m tests.layers.keras_augmentation_cases`` from
the repository root (TensorFlow/Keras 3 installed) to rewrite
``fixtures/keras_augmentation_outputs.npz`` and
``fixtures/keras_augmentation_configs.json``.
"""
import json
import os

import numpy

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_augmentation_outputs.npz")
CONFIGS = os.path.join(os.path.dirname(__file__), "fixtures", "keras_augmentation_configs.json")

_RGB = numpy.random.default_rng(300).uniform(0, 255, (3, 5, 6, 3)).astype("float32")
_UNIT = numpy.random.default_rng(301).uniform(0.0, 1.0, (3, 5, 6, 3)).astype("float32")
_RGB_FIRST = numpy.ascontiguousarray(_RGB.transpose(0, 3, 1, 2))
_LOW_CONTRAST = numpy.random.default_rng(302).uniform(60, 140, (2, 6, 7, 3)).round().astype("float32")
_LABELS = numpy.eye(3, dtype="float32")[[2, 0, 1]]

# name: (class name, config, images, mode); mode "replay" (Keras's transformation replayed),
# "replay_labels" (labels too), "call" / "inference" (layer(images, training=True / False)),
# "boxes" (a detection dict in, its bounding boxes out) or "config" (the config only).
CASES = {
    "saturation": ("RandomSaturation", {"factor": 0.5, "seed": 1}, _RGB, "replay"),
    "saturation_high_unit": ("RandomSaturation", {"factor": (0.6, 0.9), "value_range": (0, 1)}, _UNIT, "replay"),
    "hue": ("RandomHue", {"factor": 0.8}, _RGB, "replay"),
    "hue_unit_channels_first": ("RandomHue", {"factor": 1.0, "value_range": (0, 1), "data_format": "channels_first"},
                                numpy.ascontiguousarray(_UNIT.transpose(0, 3, 1, 2)), "replay"),
    "color_degeneration": ("RandomColorDegeneration", {"factor": 0.7}, _RGB, "replay"),
    "sharpness": ("RandomSharpness", {"factor": 0.9}, _RGB, "replay"),
    "mix_up": ("MixUp", {"alpha": 0.4}, _RGB, "replay_labels"),
    "cut_mix": ("CutMix", {}, _RGB, "replay_labels"),
    "cut_mix_channels_first": ("CutMix", {"factor": 0.5, "data_format": "channels_first"}, _RGB_FIRST,
                               "replay_labels"),
    "erasing_noise": ("RandomErasing", {"scale": (0.2, 0.5)}, _RGB, "replay"),
    "erasing_per_channel_fill": ("RandomErasing", {"factor": 0.8, "fill_value": [10.0, 300.0, -5.0]}, _RGB,
                                 "replay"),
    "erasing_unit_channels_first": ("RandomErasing", {"fill_value": 0.5, "value_range": (0, 1),
                                                      "data_format": "channels_first"},
                                    numpy.ascontiguousarray(_UNIT.transpose(0, 3, 1, 2)), "replay"),
    "crop_random": ("RandomCrop", {"height": 3, "width": 4}, _RGB, "replay"),
    "crop_center_resize": ("RandomCrop", {"height": 6, "width": 4}, _RGB, "replay"),
    "crop_channels_first": ("RandomCrop", {"height": 4, "width": 4, "data_format": "channels_first"}, _RGB_FIRST,
                            "replay"),
    "shear": ("RandomShear", {"x_factor": 0.3, "y_factor": 0.2}, _RGB, "replay"),
    "shear_constant_nearest": ("RandomShear", {"x_factor": (0.2, 0.5), "fill_mode": "constant", "fill_value": 7.0,
                                               "interpolation": "nearest"}, _RGB, "replay"),
    "gaussian_blur": ("RandomGaussianBlur", {"factor": 0.7, "kernel_size": 5, "sigma": (0.3, 0.9)}, _RGB, "replay"),
    "gaussian_blur_rectangular": ("RandomGaussianBlur", {"kernel_size": (3, 5), "sigma": 0.8, "value_range": (0, 1)},
                                  _UNIT, "replay"),
    "color_jitter_fixed": ("RandomColorJitter", {"brightness_factor": (0.1, 0.1), "contrast_factor": (0.0, 0.0),
                                                 "saturation_factor": (0.8, 0.8), "hue_factor": (1.0, 1.0)},
                           _RGB, "call"),
    "color_jitter_unit_hue_only": ("RandomColorJitter", {"value_range": (0, 1), "hue_factor": (1.0, 1.0)}, _UNIT,
                                   "call"),
    "equalization": ("Equalization", {}, _LOW_CONTRAST, "call"),
    "equalization_unit_bins": ("Equalization", {"value_range": (0, 1), "bins": 32}, _UNIT, "call"),
    "equalization_channels_first": ("Equalization", {"data_format": "channels_first"},
                                    numpy.ascontiguousarray(_LOW_CONTRAST.transpose(0, 3, 1, 2)), "call"),
}


_RANDAUGMENT_ORDERS = {"rand_augment_shear_degeneration": [0, 4], "rand_augment_sharpness_equalization": [6, 10],
                       "rand_augment_auto_contrast_twice_shear": [9, 9, 0],
                       "rand_augment_brightness_contrast": [3, 5], "rand_augment_posterize_solarize": [7, 8],
                       "rand_augment_translate_rotate": [1, 2]}
CASES.update({name: ("RandAugment",
                     {"factor": 0.7, **({"value_range": (0, 1), "num_ops": 3} if "twice" in name else {})},
                     _UNIT if "twice" in name else _RGB, "replay") for name in _RANDAUGMENT_ORDERS})
_AUGMIX_CHAINS = {"aug_mix": [["random_shear", "equalization"], ["auto_contrast"],
                              ["random_sharpness", "random_color_degeneration", "random_shear"]],
                  "aug_mix_unit_empty_chain": [[], ["random_color_degeneration"]],
                  "aug_mix_tonal": [["random_brightness", "random_posterization"], ["solarization", "random_contrast"],
                                    ["random_contrast"]],
                  "aug_mix_geometric": [["random_translation"], ["random_rotation", "random_shear"]]}
CASES.update({
    "aug_mix": ("AugMix", {"factor": 0.5}, _RGB, "replay"),
    "aug_mix_unit_empty_chain": ("AugMix", {"num_chains": 2, "value_range": (0, 1), "alpha": 0.5}, _UNIT, "replay"),
    "aug_mix_tonal": ("AugMix", {"factor": 0.6}, _RGB, "replay"),
    "aug_mix_geometric": ("AugMix", {"num_chains": 2, "factor": 0.2, "interpolation": "nearest"}, _RGB, "replay"),
})

_BOXES = {"images": _RGB, "bounding_boxes": {"boxes": numpy.arange(24, dtype="float32").reshape(3, 2, 4),
                                             "labels": numpy.array([[1, 2], [3, 4], [5, 6]], "float32")}}
CASES.update({
    "perspective": ("RandomPerspective", {"factor": 0.8, "scale": 0.6}, _RGB, "replay"),
    "perspective_nearest_channels_first": ("RandomPerspective", {"interpolation": "nearest", "fill_value": 9.0,
                                                                 "data_format": "channels_first"}, _RGB_FIRST,
                                           "replay"),
    "elastic_transform": ("RandomElasticTransform", {"factor": 0.5, "scale": (0.2, 0.6), "fill_mode": "constant",
                                                     "value_range": (0, 1)}, _UNIT, "config"),
    "clahe": ("ContrastLimitedAdaptiveHistogramEqualization", {"tile_grid_size": (2, 3)}, _LOW_CONTRAST, "call"),
    "clahe_unit_no_limit_padded": ("ContrastLimitedAdaptiveHistogramEqualization",
                                   {"value_range": (0, 1), "clip_limit": 0, "tile_grid_size": (2, 4)}, _UNIT, "call"),
    "clahe_inference_channels_first": ("ContrastLimitedAdaptiveHistogramEqualization",
                                       {"clip_limit": 2.0, "tile_grid_size": (3, 3), "data_format": "channels_first"},
                                       numpy.ascontiguousarray(_LOW_CONTRAST.transpose(0, 3, 1, 2)), "inference"),
    "max_boxes_pad": ("MaxNumBoundingBoxes", {"max_number": 4, "fill_value": -2, "bounding_box_format": "xyxy"},
                      _BOXES, "boxes"),
    "max_boxes_truncate": ("MaxNumBoundingBoxes", {"max_number": 1, "bounding_box_format": "xyxy"}, _BOXES, "boxes"),
})


def _keras_override(name, layer, images, transformation):
    """Policies: Keras's draw with the operations fixed to ones minikeras can
    replay from Keras's own parameters (Keras's other choices are random)."""
    import keras

    if name in _RANDAUGMENT_ORDERS:
        transformation["layer_idxes"] = numpy.array(_RANDAUGMENT_ORDERS[name], "int32")
    if name in _AUGMIX_CHAINS:
        seeds = iter(range(20, 100))
        transformation["chain_transforms"] = [
            [{"layer_name": op, "transformation": getattr(layer, op).get_random_transformation(
                images, training=True, seed=keras.random.SeedGenerator(next(seeds)))} for op in chain]
            for chain in _AUGMIX_CHAINS[name]]
    return transformation


def _plain(value):
    return json.loads(json.dumps(value))


def flatten_transformation(value, prefix, out):
    """A nested transformation (dicts, lists, None, arrays) as flat NumPy entries."""
    if isinstance(value, dict):
        out[f"{prefix}/__dict__"] = numpy.array(len(value))
        for key, item in value.items():
            flatten_transformation(item, f"{prefix}/{key}", out)
    elif isinstance(value, (list, tuple)):
        out[f"{prefix}/__list__"] = numpy.array(len(value))
        for index, item in enumerate(value):
            flatten_transformation(item, f"{prefix}/{index}", out)
    elif value is None:
        out[f"{prefix}/__none__"] = numpy.array(0)
    else:
        out[prefix] = numpy.asarray(value)
    return out


def _unflatten(arrays, prefix):
    if f"{prefix}/__none__" in arrays:
        return None
    if f"{prefix}/__list__" in arrays:
        return [_unflatten(arrays, f"{prefix}/{index}") for index in range(int(arrays[f"{prefix}/__list__"]))]
    if f"{prefix}/__dict__" in arrays:
        start = len(prefix) + 1
        keys = {key[start:].split("/")[0] for key in arrays if key.startswith(prefix + "/")} - {"__dict__"}
        return {key: _unflatten(arrays, f"{prefix}/{key}") for key in keys}
    return arrays[prefix]


def recorded_transformation(arrays, name):
    """The transformation stored for ``name``, in the form the layer takes."""
    return _unflatten(arrays, f"{name}/t") if any(key.startswith(f"{name}/t/") for key in arrays) else None


def keras_case(name):
    """Run one case in Keras: (output arrays, transformation arrays, config)."""
    import keras

    class_name, config, images, mode = CASES[name]
    layer = getattr(keras.layers, class_name)(**config)
    if mode in ("call", "inference"):
        return {"output": numpy.asarray(layer(images, training=mode == "call"))}, {}, layer.get_config()
    if mode == "config":
        return {}, {}, layer.get_config()
    if mode == "boxes":
        output = layer(images)["bounding_boxes"]
        return {key: numpy.asarray(value) for key, value in output.items()}, {}, layer.get_config()
    transformation = layer.get_random_transformation(images, training=True, seed=keras.random.SeedGenerator(7))
    transformation = _keras_override(name, layer, images, transformation)
    outputs = {"output": numpy.asarray(layer.transform_images(keras.ops.convert_to_tensor(images), transformation,
                                                                training=True))}
    if mode == "replay_labels":
        outputs["labels"] = numpy.asarray(layer.transform_labels(keras.ops.convert_to_tensor(_LABELS),
                                                                 transformation, training=True))
    if name in _RANDAUGMENT_ORDERS:  # keep only the operations applied (the others' draws are large)
        chosen = {layer._AUGMENT_LAYERS[index] for index in _RANDAUGMENT_ORDERS[name]}
        transformation["transforms"] = {key: value for key, value in transformation["transforms"].items()
                                        if key in chosen}
    return outputs, flatten_transformation(transformation, f"{name}/t", {}), layer.get_config()


def main():
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    arrays, configs = {}, {}
    for name in CASES:
        outputs, transformation, config = keras_case(name)
        for key, value in outputs.items():
            arrays[f"{name}/{key}"] = value
        arrays.update(transformation)
        configs[name] = _plain({key: value for key, value in config.items() if key not in ("name", "dtype")})
    numpy.savez_compressed(FIXTURE, **arrays)
    with open(CONFIGS, "w") as handle:
        json.dump(configs, handle, indent=1, sort_keys=True)
    print(f"wrote {len(CASES)} cases to {FIXTURE}")


if __name__ == "__main__":
    main()
