"""Histogram equalization, global and contrast-limited adaptive (CLAHE),
on channels-last image batches, as Keras 3's Equalization and
ContrastLimitedAdaptiveHistogramEqualization layers compute them.

Keras has no ``keras.ops.image`` function for these, so they are not in
``ops.image.__all__``; the layers call them. Both map pixels through lookup
tables built from histograms, which has no gradient: the results are new
tensors outside the graph. The arithmetic follows Keras step for step in
float32 (bin indices at bin edges depend on it).
"""
import numpy

from minikeras.autograd import Tensor

_255 = numpy.float32(255.0)


def _on_the_0_255_scale(images, value_range):
    """The images' pixels (float32, on their device) mapped from ``value_range`` to 0-255, and the inverse map."""
    low, high = (numpy.float32(value) for value in value_range)
    pixels = images.data.astype(numpy.float32)
    if (low, high) == (0, 255):
        return pixels, lambda result: result
    return (pixels - low) / (high - low) * _255, lambda result: result / _255 * (high - low) + low


def equalize(images, value_range=(0, 255), bins=256):
    """Histogram-equalize each channel of a ``(batch, height, width,
    channels)`` Tensor; one histogram per channel over the whole batch (as
    Keras's Equalization layer). A channel with one value is left as it is.
    """
    device = images.device
    xp = device.xp
    low, high = (numpy.float32(value) for value in value_range)
    with device.activate():
        to_255 = _255 / (high - low)
        scaled = images.data.astype(numpy.float32) * to_255 + (-low * to_255)
        channels = [_equalize_channel(xp, scaled[..., index], bins) for index in range(images.shape[-1])]
        result = (xp.stack(channels, axis=-1) * ((high - low) / _255) + low).astype(images.dtype)
    return Tensor(result, device=device)


def _equalize_channel(xp, channel, bins):
    """One channel (0-255 scale, any shape) through its equalization table."""
    last = numpy.float32(bins - 1)
    indices = (channel * last / _255).astype(numpy.int32)
    histogram = xp.bincount(xp.clip(indices, 0, bins - 1).reshape(-1), minlength=bins)
    cdf = xp.cumsum(histogram)
    cdf_min = cdf[xp.argmax(cdf > 0)]
    denominator = cdf[-1] - cdf_min
    denominator = xp.where(denominator == 0, 1, denominator)
    table = xp.clip(xp.round((cdf - cdf_min) * 255 / denominator), 0, 255)
    lookup = xp.clip(channel / _255 * last, 0, last).astype(numpy.int32)
    equalized = table[lookup].astype(numpy.float32)
    return xp.where(xp.count_nonzero(histogram) <= 1, channel, equalized)


def clahe(images, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8)):
    """Contrast-limited adaptive histogram equalization of a ``(batch,
    height, width, channels)`` Tensor.

    The image is cut into ``tile_grid_size`` tiles (padded by mirroring to a
    whole number of tiles); each tile's 256-bin histogram is clipped at
    ``clip_limit`` times the mean bin count (0 or less: no limit), the excess
    spread evenly, and its cumulative histogram becomes the tile's lookup
    table. Every pixel is mapped through the four nearest tiles' tables,
    blended bilinearly by its distance to their centres. The histograms are
    one ``bincount`` over (image, tile, channel, value), where Keras sums
    one-hot vectors (256 times the memory).
    """
    device = images.device
    xp = device.xp
    with device.activate():
        pixels, back = _on_the_0_255_scale(images, value_range)
        batch, height, width, channels = pixels.shape
        grid_h, grid_w = tile_grid_size
        tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
        padded = xp.pad(pixels, ((0, 0), (0, tile_h * grid_h - height), (0, tile_w * grid_w - width), (0, 0)),
                        mode="symmetric")
        values = xp.clip(padded.astype(numpy.int32), 0, 255)
        tables = _tile_tables(xp, values, tile_grid_size, clip_limit, tile_h, tile_w)
        row0, row1, row_weight = _neighbours(xp, tile_h * grid_h, tile_h, grid_h)
        col0, col1, col_weight = _neighbours(xp, tile_w * grid_w, tile_w, grid_w)
        image_index = xp.arange(batch, dtype=numpy.int32)[:, None, None, None]
        channel_index = xp.arange(channels, dtype=numpy.int32)[None, None, None, :]

        def read(row, column):
            return tables[image_index, row[None, :, None, None], column[None, None, :, None], channel_index, values]

        col_weight = col_weight[None, None, :, None]
        row_weight = row_weight[None, :, None, None]
        top = read(row0, col0) * (1.0 - col_weight) + read(row0, col1) * col_weight
        bottom = read(row1, col0) * (1.0 - col_weight) + read(row1, col1) * col_weight
        result = back((top * (1.0 - row_weight) + bottom * row_weight)[:, :height, :width, :]).astype(images.dtype)
    return Tensor(result, device=device)


def _tile_tables(xp, values, tile_grid_size, clip_limit, tile_h, tile_w):
    """Per tile and channel, the clipped, normalised cumulative histogram:
    ``(batch, grid_h + 2, grid_w + 2, channels, 256)``, the edge tiles
    repeated once around the grid."""
    batch, channels = values.shape[0], values.shape[3]
    grid_h, grid_w = tile_grid_size
    tiles = values.reshape(batch, grid_h, tile_h, grid_w, tile_w, channels).transpose(0, 1, 3, 5, 2, 4)
    tile_number = xp.arange(batch * grid_h * grid_w * channels, dtype=numpy.int64).reshape(
        batch, grid_h, grid_w, channels, 1)
    flat = (tile_number * 256 + tiles.reshape(batch, grid_h, grid_w, channels, tile_h * tile_w)).reshape(-1)
    counts = xp.bincount(flat, minlength=batch * grid_h * grid_w * channels * 256)
    histograms = counts.astype(numpy.float32).reshape(batch, grid_h, grid_w, channels, 256)
    if clip_limit > 0:
        limit = numpy.float32(clip_limit * (tile_h * tile_w) / 256.0)
        clipped = xp.clip(histograms, 0, limit)
        excess = xp.sum(histograms - clipped, axis=-1, keepdims=True)
        histograms = clipped + excess / numpy.float32(256.0)
    cdf = xp.cumsum(histograms, axis=-1)
    cdf_min = xp.min(cdf, axis=-1, keepdims=True)
    denominator = -cdf_min + numpy.float32(tile_h * tile_w)  # the device array first, as the simulated GPU needs
    denominator = xp.where(denominator == 0, xp.ones_like(denominator), denominator)
    tables = xp.clip((cdf - cdf_min) * _255 / denominator, 0, 255)
    tables = xp.concatenate([tables[:, :1], tables, tables[:, -1:]], axis=1)
    return xp.concatenate([tables[:, :, :1], tables, tables[:, :, -1:]], axis=2)


def _neighbours(xp, length, tile, grid):
    """For each pixel row (or column): the tiles before and after its centre
    in the padded table grid, and the weight of the second."""
    position = (xp.arange(length, dtype=numpy.float32) - numpy.float32(tile / 2.0)) / numpy.float32(tile) + 1.0
    first = xp.floor(position)
    weight = position - first
    second = xp.clip(first + 1.0, 0, grid + 1).astype(numpy.int32)
    return xp.clip(first, 0, grid + 1).astype(numpy.int32), second, weight
