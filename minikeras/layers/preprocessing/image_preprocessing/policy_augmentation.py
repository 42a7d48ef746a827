"""Augmentation policies that chain other augmentation layers, as Keras 3:
RandAugment (Cubuk et al., 2019) and AugMix (Hendrycks et al., 2019).

Both hold the same bank of operations Keras builds (shear, translation,
rotation, brightness, colour degeneration, contrast, sharpness,
posterization, solarization, auto-contrast, equalization), each made with
the policy's ``factor``, ``value_range`` and ``interpolation``. An operation
chosen for a batch draws its parameters once and applies them to the whole
batch, as Keras does. The transformations have Keras's form, so one Keras
drew replays here exactly.
"""
import numbers

import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import ImageAugmentation, checked_value_range, keras_factor
from minikeras.layers.preprocessing.image_preprocessing.random_contrast import RandomContrast
from minikeras.layers.preprocessing.image_preprocessing.random_rotation import RandomRotation
from minikeras.layers.preprocessing.image_preprocessing.random_translation import RandomTranslation
from minikeras.layers.preprocessing.image_preprocessing.color_augmentation import (AutoContrast, RandomBrightness, RandomPosterization,
                                                 Solarization)
from minikeras.layers.preprocessing.image_preprocessing.color_jitter import RandomColorDegeneration, RandomSharpness
from minikeras.layers.preprocessing.image_preprocessing.equalization import Equalization
from minikeras.layers.preprocessing.image_preprocessing.spatial_augmentation import RandomShear
from minikeras.ops.nn.affine_transform import INTERPOLATIONS
from minikeras.utils.argument_validation import validate_int

__all__ = ["RandAugment", "AugMix"]


def _operation_bank(names, factor, value_range, interpolation, dtype):
    """Keras's sub-layers of a policy, by Keras's attribute names, in the
    policy's dtype."""
    makers = {
        "random_shear": lambda **kw: RandomShear(x_factor=factor, y_factor=factor, interpolation=interpolation, **kw),
        "random_translation": lambda **kw: RandomTranslation(factor, factor, interpolation=interpolation, **kw),
        "random_rotation": lambda **kw: RandomRotation(factor, interpolation=interpolation, **kw),
        "random_brightness": lambda **kw: RandomBrightness(factor, value_range=value_range, **kw),
        "random_color_degeneration": lambda **kw: RandomColorDegeneration(factor, value_range=value_range, **kw),
        "random_contrast": lambda **kw: RandomContrast(factor, value_range=value_range, **kw),
        "random_sharpness": lambda **kw: RandomSharpness(factor, value_range=value_range, **kw),
        "random_posterization": lambda **kw: RandomPosterization(max(1, int(8 * factor[1])), value_range=value_range,
                                                                 **kw),
        "solarization": lambda **kw: Solarization(addition_factor=factor, threshold_factor=factor,
                                                  value_range=value_range, **kw),
        "auto_contrast": lambda **kw: AutoContrast(value_range=value_range, **kw),
        "equalization": lambda **kw: Equalization(value_range=value_range, **kw),
    }
    return {name: makers[name](dtype=dtype) for name in names}


def _draw_operation(layer, rng, shape):
    """One operation's parameters for a batch of ``shape`` (channels last),
    as Keras draws them (None for auto-contrast, which draws nothing)."""
    return layer._draw(rng, shape) if hasattr(layer, "_draw") else None


def _apply_operation(layer, images, transformation):
    """``layer``'s operation with ``transformation`` on a channels-last batch."""
    if isinstance(layer, AutoContrast):  # deterministic
        return layer._augment(images, None)
    if transformation is None:  # Keras draws nothing for equalization
        return layer._transform(images, {}) if isinstance(layer, Equalization) else images
    return layer._transform(images, transformation)


def _interpolation(layer_name, interpolation):
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"{layer_name}: interpolation must be one of {INTERPOLATIONS}, received "
                         f"interpolation={interpolation!r}.")
    return interpolation


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


class AugMix(ImageAugmentation):
    """Mix the image with ``num_chains`` chains of up to ``chain_depth``
    random operations: ``w x + (1 - w) sum_i m_i chain_i(x)``, clipped to
    ``value_range``, with ``m ~ Dirichlet(alpha)`` and ``w ~ Beta(alpha, alpha)``
    drawn once per batch.

    Args:
        value_range: the images' ``(low, high)`` (default (0, 255)).
        num_chains: the number of chains (default 3).
        chain_depth: the operations drawn per chain; each draw may also be
            "none", so a chain holds 0 to ``chain_depth`` (default 3).
        factor: the operations' strength, a number ``f`` in [0, 1] meaning
            ``(0, f)`` (default 0.3).
        alpha: the Dirichlet and Beta parameter (default 1.0).
        all_ops: True (default) adds brightness, colour degeneration,
            contrast and sharpness to the seven geometric and tonal operations.
        interpolation: "bilinear" (default) or "nearest".
        seed: optional int for reproducible draws.
        data_format: "channels_last" (default) or "channels_first".
    """

    _SOME_LAYERS = ("random_shear", "random_translation", "random_rotation", "random_posterization", "solarization",
                    "auto_contrast", "equalization")
    _ALL_LAYERS = _SOME_LAYERS + ("random_brightness", "random_color_degeneration", "random_contrast",
                                  "random_sharpness")

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3, alpha=1.0, all_ops=True,
                 interpolation="bilinear", seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = checked_value_range("AugMix", value_range)
        self.num_chains = validate_int("AugMix", "num_chains", num_chains, minimum=1)
        self.chain_depth = validate_int("AugMix", "chain_depth", chain_depth, minimum=0)
        self.factor = keras_factor("AugMix", factor, (0, 1))
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or alpha <= 0:
            raise ValueError(f"AugMix: alpha must be a positive number, received alpha={alpha!r}.")
        self.alpha = alpha
        self.all_ops = bool(all_ops)
        self.interpolation = _interpolation("AugMix", interpolation)
        self._augment_layers = self._ALL_LAYERS if self.all_ops else self._SOME_LAYERS
        self._bank = _operation_bank(self._augment_layers, self.factor, self.value_range, interpolation,
                                     self.dtype_policy)

    def _draw(self, rng, shape):
        chain_weights = rng.dirichlet([self.alpha] * self.num_chains).astype("float32")
        weight_sample = numpy.float32(rng.beta(self.alpha, self.alpha))
        chains = []
        for _ in range(self.num_chains):
            chain = []
            for _ in range(self.chain_depth):
                choice = int(rng.integers(len(self._augment_layers) + 1))
                if choice == len(self._augment_layers):  # Keras's None: this step does nothing
                    continue
                name = self._augment_layers[choice]
                chain.append({"layer_name": name, "transformation": _draw_operation(self._bank[name], rng, shape)})
            chains.append(chain)
        return {"chain_mixing_weights": chain_weights, "weight_sample": weight_sample, "chain_transforms": chains}

    def _transform(self, images, transformation):
        weights = numpy.asarray(transformation["chain_mixing_weights"], "float32")
        mixed = None
        for index, chain in enumerate(transformation["chain_transforms"]):
            chained = images
            for step in chain:
                name = str(numpy.asarray(step["layer_name"]))
                chained = _apply_operation(self._bank[name], chained, step["transformation"])
            term = chained * float(weights[index])
            mixed = term if mixed is None else mixed + term
        weight = float(numpy.asarray(transformation["weight_sample"]))
        result = images * weight + mixed * (1.0 - weight)
        return ops.clip(result, float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range, "num_chains": self.num_chains,
                "chain_depth": self.chain_depth, "factor": self.factor, "alpha": self.alpha,
                "all_ops": self.all_ops, "interpolation": self.interpolation}
