"""ContrastLimitedAdaptiveHistogramEqualization (CLAHE), as Keras 3.

The image is cut into a ``tile_grid_size`` grid of tiles (padded by
mirroring to a whole number of tiles); each tile's 256-bin histogram is
clipped at ``clip_limit`` times the mean bin count, the excess spread evenly
over all bins, and its cumulative histogram becomes that tile's lookup
table. Every pixel is mapped through the four nearest tiles' tables and
bilinearly blended by its distance to their centres, which avoids the
blocky edges of plain per-tile equalization.

Keras's layer applies CLAHE in training and inference alike, and so does
this one. The histograms are one ``bincount`` over (image, tile, channel,
value) instead of Keras's one-hot sum, which needs 256 times less memory.
The lookup has no gradient.
"""
import numpy

from minikeras.autograd import Tensor
from minikeras.layers._image_augmentation_base import ImageAugmentation, checked_value_range

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
        device = images.device
        low, high = (numpy.float32(value) for value in self.value_range)
        with device.activate():
            pixels = images.data.astype(numpy.float32)
            if (low, high) != (0, 255):
                pixels = (pixels - low) / (high - low) * numpy.float32(255.0)
            result = self._clahe(device.xp, pixels)
            if (low, high) != (0, 255):
                result = result / numpy.float32(255.0) * (high - low) + low
            result = result.astype(images.dtype)
        return Tensor(result, device=device)

    def _clahe(self, xp, images):
        batch, height, width, channels = images.shape
        grid_h, grid_w = self.tile_grid_size
        tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
        padded = xp.pad(images, ((0, 0), (0, tile_h * grid_h - height), (0, tile_w * grid_w - width), (0, 0)),
                        mode="symmetric")
        values = xp.clip(padded.astype(numpy.int32), 0, 255)
        tables = self._tile_tables(xp, values, batch, channels, tile_h, tile_w)
        # each row/column's two neighbouring tiles (in the table grid padded by one tile) and its weight
        rows = self._neighbours(xp, tile_h * grid_h, tile_h, grid_h)
        columns = self._neighbours(xp, tile_w * grid_w, tile_w, grid_w)
        image_index = xp.arange(batch, dtype=numpy.int32)[:, None, None, None]
        channel_index = xp.arange(channels, dtype=numpy.int32)[None, None, None, :]

        def read(row, column):
            return tables[image_index, row[None, :, None, None], column[None, None, :, None], channel_index, values]

        (row0, row1, row_weight), (col0, col1, col_weight) = rows, columns
        col_weight = col_weight[None, None, :, None]
        row_weight = row_weight[None, :, None, None]
        top = read(row0, col0) * (1.0 - col_weight) + read(row0, col1) * col_weight
        bottom = read(row1, col0) * (1.0 - col_weight) + read(row1, col1) * col_weight
        result = top * (1.0 - row_weight) + bottom * row_weight
        return result[:, :height, :width, :]

    def _tile_tables(self, xp, values, batch, channels, tile_h, tile_w):
        """Per tile and channel, the clipped, normalised cumulative
        histogram: ``(batch, grid_h + 2, grid_w + 2, channels, 256)`` with
        the edge tiles repeated once around the grid."""
        grid_h, grid_w = self.tile_grid_size
        tiles = values.reshape(batch, grid_h, tile_h, grid_w, tile_w, channels).transpose(0, 1, 3, 5, 2, 4)
        tile_number = xp.arange(batch * grid_h * grid_w * channels, dtype=numpy.int64).reshape(
            batch, grid_h, grid_w, channels, 1)
        flat = (tile_number * 256 + tiles.reshape(batch, grid_h, grid_w, channels, tile_h * tile_w)).reshape(-1)
        counts = xp.bincount(flat, minlength=batch * grid_h * grid_w * channels * 256)
        histograms = counts.astype(numpy.float32).reshape(batch, grid_h, grid_w, channels, 256)
        pixels = numpy.float32(tile_h * tile_w)
        if self.clip_limit > 0:
            limit = numpy.float32(self.clip_limit * (tile_h * tile_w) / 256.0)
            clipped = xp.clip(histograms, 0, limit)
            excess = xp.sum(histograms - clipped, axis=-1, keepdims=True)
            histograms = clipped + excess / numpy.float32(256.0)
        cdf = xp.cumsum(histograms, axis=-1)
        cdf_min = xp.min(cdf, axis=-1, keepdims=True)
        denominator = -cdf_min + pixels  # the device array first: a NumPy scalar on the left would convert it
        denominator = xp.where(denominator == 0, xp.ones_like(denominator), denominator)
        tables = xp.clip((cdf - cdf_min) * numpy.float32(255.0) / denominator, 0, 255)
        tables = xp.concatenate([tables[:, :1], tables, tables[:, -1:]], axis=1)
        return xp.concatenate([tables[:, :, :1], tables, tables[:, :, -1:]], axis=2)

    @staticmethod
    def _neighbours(xp, length, tile, grid):
        """For each pixel row (or column): the tiles before and after its
        centre in the padded table grid, and the weight of the second."""
        position = (xp.arange(length, dtype=numpy.float32) - numpy.float32(tile / 2.0)) / numpy.float32(tile) + 1.0
        first = xp.floor(position)
        weight = position - first
        second = xp.clip(first + 1.0, 0, grid + 1).astype(numpy.int32)
        return xp.clip(first, 0, grid + 1).astype(numpy.int32), second, weight

    def get_config(self):
        config = super().get_config()
        config.pop("seed", None)  # not in Keras's config
        return {**config, "value_range": self.value_range, "clip_limit": self.clip_limit,
                "tile_grid_size": self.tile_grid_size}
