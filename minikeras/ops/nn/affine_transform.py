"""Projective image warps (``keras.ops.image.affine_transform``), the core
of RandomRotation, RandomZoom and RandomTranslation.

Semantics follow TensorFlow's ImageProjectiveTransformV3, which Keras's
TensorFlow backend calls: a transform ``[a0, a1, a2, b0, b1, b2, c0, c1]``
maps each *output* pixel ``(x, y)`` to the *input* point
``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``, ``k = c0 x + c1 y + 1``;
points outside the image are first folded back by ``fill_mode``
("reflect": d c b a | a b c d | d c b a, "wrap", "nearest", or "constant",
which reads ``fill_value``), then sampled bilinearly or at the nearest pixel.

The warp is data augmentation, applied to inputs: it has no gradient (the
result is a constant Tensor), which is also all Keras's layers need.
"""
import numpy

from minikeras import backend
from minikeras.autograd import Tensor
from minikeras.backend.dtypes import is_float_dtype
from minikeras.device import to_host
from minikeras.ops.math.unary import _as_tensor
from minikeras._support.argument_validation import validate_number, validate_option

__all__ = ["affine_transform"]

FILL_MODES = ("constant", "nearest", "wrap", "reflect")
INTERPOLATIONS = ("nearest", "bilinear")


def _fold(xp, coordinate, length, fill_mode):
    """Map (float) coordinates outside ``[0, length - 1]`` back inside."""
    if fill_mode == "constant":
        return coordinate
    if length <= 1:
        return xp.zeros_like(coordinate)
    if fill_mode == "nearest":
        return xp.clip(coordinate, 0, length - 1)
    if fill_mode == "wrap":
        # TensorFlow's float wrap: shift by whole multiples of ``length``
        # counted in steps of ``length - 1``, then clamp.
        span = length - 1.0
        below = coordinate + length * (xp.floor(-coordinate / span) + 1.0)
        above = coordinate - length * xp.floor(coordinate / span)
        folded = xp.where(coordinate < 0, below, xp.where(coordinate > length - 1, above, coordinate))
        return xp.clip(folded, 0, length - 1)
    # reflect about the edges, the edge pixel repeated (period 2 * length)
    period = 2.0 * length
    folded = xp.mod(coordinate + 0.5, period) - 0.5
    folded = xp.where(folded > length - 0.5, period - 1.0 - folded, folded)
    return xp.clip(folded, 0, length - 1)


def _read(xp, images, batch_index, rows, columns, fill_value):
    """``images[n, rows, columns, :]``, ``fill_value`` where out of bounds."""
    height, width = images.shape[1], images.shape[2]
    inside = (rows >= 0) & (rows < height) & (columns >= 0) & (columns < width)
    values = images[batch_index, xp.clip(rows, 0, height - 1), xp.clip(columns, 0, width - 1)]
    return xp.where(inside[..., None], values, xp.asarray(fill_value, dtype=images.dtype))


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant", fill_value=0.0):
    """Warp ``(batch, height, width, channels)`` images by projective transforms.

    Args:
        images: a 4-D channels-last Tensor or array.
        transform: ``(8,)`` or ``(batch, 8)`` transforms, output -> input
            coordinates (see module docstring).
        interpolation: "bilinear" (default) or "nearest".
        fill_mode: "constant" (default, as keras.ops), "nearest", "wrap"
            or "reflect".
        fill_value: the value read outside the image in "constant" mode.

    Returns:
        A Tensor like ``images`` (float images keep their dtype), with no
        gradient.

    Raises:
        ValueError: bad shapes or an unknown interpolation/fill mode.
    """
    images = _as_tensor("affine_transform", images)
    if images.ndim != 4:
        raise ValueError(
            f"affine_transform expects (batch, height, width, channels) images, received shape {images.shape}.")
    validate_option("affine_transform", "interpolation", interpolation, INTERPOLATIONS)
    validate_option("affine_transform", "fill_mode", fill_mode, FILL_MODES)
    fill_value = validate_number("affine_transform", "fill_value", fill_value, finite=False)
    device = images.device
    xp = device.xp
    with device.activate():
        data = images.data if is_float_dtype(images.dtype) else images.data.astype(numpy.float32)
    batch, height, width = data.shape[:3]
    if isinstance(transform, Tensor):
        transform = transform.numpy()
    elif backend.is_array(transform):
        transform = to_host(transform)  # a device array: one small host copy
    transform = numpy.asarray(transform)
    transform = numpy.asarray(transform, dtype=numpy.float32).reshape(-1, 8) if transform.size else transform
    if transform.shape[-1:] != (8,) or transform.shape[0] not in (1, batch):
        raise ValueError(f"affine_transform expects transforms of shape (8,) or (batch={batch}, 8), received "
                         f"shape {transform.shape}.")
    transform = numpy.broadcast_to(transform, (batch, 8))
    with device.activate():
        t = xp.asarray(transform)[:, :, None, None]
        # float32 coordinates, as TensorFlow: ties of "nearest" then round the same way.
        y, x = xp.meshgrid(xp.arange(height, dtype=xp.float32), xp.arange(width, dtype=xp.float32), indexing="ij")
        k = t[:, 6] * x + t[:, 7] * y + 1.0
        source_x = _fold(xp, (t[:, 0] * x + t[:, 1] * y + t[:, 2]) / k, width, fill_mode)
        source_y = _fold(xp, (t[:, 3] * x + t[:, 4] * y + t[:, 5]) / k, height, fill_mode)
        batch_index = xp.arange(batch)[:, None, None]
        if interpolation == "nearest":
            # Round half away from zero (std::round), not to even.
            rows = (xp.sign(source_y) * xp.floor(xp.abs(source_y) + 0.5)).astype(xp.int64)
            columns = (xp.sign(source_x) * xp.floor(xp.abs(source_x) + 0.5)).astype(xp.int64)
            out = _read(xp, data, batch_index, rows, columns, fill_value)
        else:
            row_low, column_low = xp.floor(source_y), xp.floor(source_x)
            row_weight = (source_y - row_low)[..., None].astype(data.dtype)
            column_weight = (source_x - column_low)[..., None].astype(data.dtype)
            row_low, column_low = row_low.astype(xp.int64), column_low.astype(xp.int64)

            def corner(dr, dc):
                return _read(xp, data, batch_index, row_low + dr, column_low + dc, fill_value)

            top = corner(0, 0) * (1 - column_weight) + corner(0, 1) * column_weight
            bottom = corner(1, 0) * (1 - column_weight) + corner(1, 1) * column_weight
            out = top * (1 - row_weight) + bottom * row_weight
        out = xp.ascontiguousarray(out.astype(data.dtype, copy=False))
    return Tensor(out, device=device)
