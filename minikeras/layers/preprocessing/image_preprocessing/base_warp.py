"""The base of the affine random layers (rotation, zoom,
translation): fill mode, interpolation, the warp.
"""
import numpy

from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation
from minikeras.ops.nn.affine_transform import FILL_MODES, INTERPOLATIONS


class _Warp(_Augmentation):
    """Geometric augmentation: a transform per image, then affine_transform."""

    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        name = type(self).__name__
        if fill_mode not in FILL_MODES:
            raise ValueError(f"{name}: fill_mode must be one of {FILL_MODES}, received fill_mode={fill_mode!r}.")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"{name}: interpolation must be one of {INTERPOLATIONS}, "
                             f"received interpolation={interpolation!r}.")
        self.fill_mode, self.interpolation, self.fill_value = fill_mode, interpolation, float(fill_value)

    def _augment(self, images, rng):
        return self._transform(images, self._draw(rng, images.shape))

    def _draw(self, rng, shape):
        """The transformation of a batch of ``shape`` (channels last); the
        rotation and the translation give Keras's (RandAugment replays it)."""
        return {"transforms": self._transforms(rng, shape[0], shape[1], shape[2])}

    def _matrices(self, transformation):
        return transformation["transforms"]

    def _transform(self, images, transformation):
        matrices = numpy.asarray(self._matrices(transformation), "float64").reshape(-1, 8)
        return ops.affine_transform(images, matrices, interpolation=self.interpolation, fill_mode=self.fill_mode,
                                    fill_value=self.fill_value)

    def get_config(self):
        return {**super().get_config(), "fill_mode": self.fill_mode, "interpolation": self.interpolation,
                "fill_value": self.fill_value}
