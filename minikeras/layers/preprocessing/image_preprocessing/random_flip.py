"""keras.layers.RandomFlip."""
from minikeras import ops
from minikeras.layers.preprocessing.image_preprocessing.base_augmentation import _Augmentation

__all__ = ["RandomFlip"]


class RandomFlip(_Augmentation):
    """Flip each image with probability 1/2.

    Args:
        mode: "horizontal", "vertical" or "horizontal_and_vertical"
            (default; one draw per image flips both axes, as Keras).
        seed: optional int for reproducible flips.
        data_format: "channels_last" (default) or "channels_first".
    """

    _MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if mode not in self._MODES:
            raise ValueError(f"RandomFlip: mode must be one of {self._MODES}, received mode={mode!r}.")
        self.mode = mode

    def _augment(self, images, rng):
        flips = (rng.uniform(size=images.shape[0]) <= 0.5).reshape(-1, 1, 1, 1)
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            images = ops.where(flips, images[:, :, ::-1, :], images)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            images = ops.where(flips, images[:, ::-1, :, :], images)
        return images

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}
