"""ContrastLimitedAdaptiveHistogramEqualization (CLAHE), as Keras 3: local
histogram equalization over a grid of tiles, each tile's histogram clipped
so noise is not amplified, blended between tiles
(``ops.image.histogram_equalization.clahe`` holds the computation).

Keras's layer applies CLAHE in training and inference alike, and so does
this one. The lookup has no gradient.
"""
from minikeras.layers.preprocessing.image_preprocessing.base_image_augmentation import (ImageAugmentation,
                                                                                        checked_value_range)
from minikeras.ops.image.histogram_equalization import clahe

__all__ = ["ContrastLimitedAdaptiveHistogramEqualization"]


class ContrastLimitedAdaptiveHistogramEqualization(ImageAugmentation):
    """Local histogram equalization with a contrast limit (CLAHE).

    Args:
        value_range: the images' ``(low, high)`` (default (0, 255)); values
            are mapped to 0-255 for the histograms and back.
        clip_limit: the largest bin, as a multiple of the mean bin count;
            0 or less turns the limit off (default 4.0).
        tile_grid_size: ``(rows, columns)`` of tiles (default (8, 8)).
        data_format: "channels_last" (default) or "channels_first".
    """

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = checked_value_range("ContrastLimitedAdaptiveHistogramEqualization", value_range)
        if isinstance(clip_limit, bool) or not isinstance(clip_limit, (int, float)):
            raise ValueError(f"ContrastLimitedAdaptiveHistogramEqualization: clip_limit must be a number, received "
                             f"clip_limit={clip_limit!r}.")
        if not isinstance(tile_grid_size, (tuple, list)) or len(tile_grid_size) != 2 or not all(
                isinstance(size, int) and not isinstance(size, bool) and size >= 1 for size in tile_grid_size):
            raise ValueError(f"ContrastLimitedAdaptiveHistogramEqualization: tile_grid_size must be two positive "
                             f"ints, received tile_grid_size={tile_grid_size!r}.")
        self.clip_limit = clip_limit
        self.tile_grid_size = tile_grid_size

    def call(self, inputs, training=None):
        """Applied whatever ``training`` says, as Keras's layer."""
        return super().call(inputs, training=True)

    def _draw(self, rng, shape):
        return {}

    def transform_images(self, images, transformation=None, training=True):
        return super().transform_images(images, {}, training=True)

    def _transform(self, images, transformation):
        return clahe(images, self.value_range, self.clip_limit, self.tile_grid_size)

    def get_config(self):
        config = super().get_config()
        config.pop("seed", None)  # not in Keras's config
        return {**config, "value_range": self.value_range, "clip_limit": self.clip_limit,
                "tile_grid_size": self.tile_grid_size}
