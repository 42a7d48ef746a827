"""Weights as TensorBoard images (``TensorBoard(write_images=True)``), the way
Keras 3 writes them, without TensorFlow.

Keras's ``_log_weight_as_image`` turns a weight into a batch of grey images
(a bias: one 1 x n image; a Dense kernel: one image, transposed so it is
wider than tall; a 2-D convolution kernel squeezed to 3 axes: one image per
input channel) and hands it to ``tf.summary.image``, which converts floats
to bytes (``clip(value * 255.5, 0, 255)``, truncated: TensorFlow's
``convert_image_dtype(..., saturate=True)``; values are taken to be in
[0, 1], so negative weights are black), PNG-encodes the first three images
and writes the tensor ``[width, height, png, ...]`` under the ``images``
plugin. The PNG encoder here is the standard library's zlib: an 8-bit
greyscale, RGB or RGBA image needs nothing else.
"""
import struct
import zlib

import numpy

_MAX_OUTPUTS = 3  # tf.summary.image's default max_outputs
_PNG_COLOR_TYPES = {1: 0, 3: 2, 4: 6}  # channels -> PNG colour type (grey, RGB, RGBA)


def weight_as_images(weight):
    """Keras's image batch ``(images, height, width, channels)`` of a weight
    array, or None when Keras writes none (rank above 3 after squeezing, or
    a last axis that is not 1, 3 or 4 channels)."""
    image = numpy.squeeze(numpy.asarray(weight))
    if image.ndim == 1:  # a bias
        image = image.reshape(1, image.shape[0], 1, 1)
    elif image.ndim == 2:  # a Dense kernel, shown wider than tall
        if image.shape[0] > image.shape[1]:
            image = image.T
        image = image.reshape(1, image.shape[0], image.shape[1], 1)
    elif image.ndim == 3:  # a convolution kernel: one image per input channel (channels_last)
        image = numpy.transpose(image, (2, 0, 1))
        image = image.reshape(image.shape[0], image.shape[1], image.shape[2], 1)
    if image.ndim != 4 or image.shape[-1] not in (1, 3, 4):
        return None
    return image


def to_uint8(images):
    """Floats in [0, 1] to bytes as TensorFlow's saturating conversion does."""
    images = numpy.asarray(images)
    if images.dtype == numpy.uint8:
        return images
    return numpy.clip(images.astype(numpy.float64) * 255.5, 0, 255).astype(numpy.uint8)


def encode_png(image):
    """One ``(height, width, channels)`` uint8 image as PNG bytes."""
    height, width, channels = image.shape
    rows = numpy.concatenate([numpy.zeros((height, 1), numpy.uint8),  # filter type 0 (none) before each row
                              numpy.ascontiguousarray(image).reshape(height, width * channels)], axis=1)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPES[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes()))
            + chunk(b"IEND", b""))


def image_summary_strings(images, max_outputs=_MAX_OUTPUTS):
    """``[width, height, png, ...]``: the string tensor ``tf.summary.image`` writes."""
    images = to_uint8(images)
    return [str(images.shape[2]).encode(), str(images.shape[1]).encode()] + [
        encode_png(image) for image in images[:max_outputs]]
