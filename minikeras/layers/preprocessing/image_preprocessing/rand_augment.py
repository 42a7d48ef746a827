"""keras.layers.RandAugment (Cubuk et al., 2019)."""
import numpy

from minikeras.layers.preprocessing.image_preprocessing.augmentation_policy import (_apply_operation, _draw_operation,
                                                                                    _interpolation, _operation_bank)
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range,
                                                                                        keras_factor)
from minikeras._support.argument_validation import validate_int

__all__ = ["RandAugment"]


class RandAugment(ImageAugmentation):
    """Apply ``num_ops`` operations chosen at random from Keras's eleven
    (the same choice and parameters for the whole batch).

    Args:
        value_range: the images' ``(low, high)`` (default (0, 255)).
        num_ops: how many operations to apply in turn (default 2).
        factor: the operations' strength, a number ``f`` in [0, 1] meaning
            ``(0, f)`` (default 0.5).
        interpolation: "bilinear" (default) or "nearest", for the
            geometric operations.
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    _AUGMENT_LAYERS = ("random_shear", "random_translation", "random_rotation", "random_brightness",
                       "random_color_degeneration", "random_contrast", "random_sharpness", "random_posterization",
                       "solarization", "auto_contrast", "equalization")

    def __init__(self, value_range=(0, 255), num_ops=2, factor=0.5, interpolation="bilinear", seed=None,
                 data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = checked_value_range("RandAugment", value_range)
        self.num_ops = validate_int("RandAugment", "num_ops", num_ops, minimum=0)
        self.factor = keras_factor("RandAugment", factor, (0, 1))
        self.interpolation = _interpolation("RandAugment", interpolation)
        self._bank = _operation_bank(self._AUGMENT_LAYERS, self.factor, self.value_range, interpolation,
                                     self.dtype_policy)

    def _draw(self, rng, shape):
        indices = rng.integers(0, len(self._AUGMENT_LAYERS), size=self.num_ops)
        transforms = {}
        for index in indices:
            name = self._AUGMENT_LAYERS[index]
            if name not in transforms:  # Keras draws each operation once per batch
                transforms[name] = _draw_operation(self._bank[name], rng, shape)
        return {"transforms": transforms, "layer_idxes": indices.astype("int32")}

    def _transform(self, images, transformation):
        transforms = transformation["transforms"]
        for index in numpy.asarray(transformation["layer_idxes"]).reshape(-1)[:self.num_ops]:
            name = self._AUGMENT_LAYERS[int(index)]
            images = _apply_operation(self._bank[name], images, transforms.get(name))
        return images

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range, "num_ops": self.num_ops,
                "factor": self.factor, "interpolation": self.interpolation}
