"""keras.layers.AugMix (Hendrycks et al., 2019)."""
import numbers

import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.augmentation_policy import (_apply_operation, _draw_operation,
                                                                                    _interpolation, _operation_bank)
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range,
                                                                                        keras_factor)
from minikeras._support.argument_validation import validate_int

__all__ = ["AugMix"]


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
