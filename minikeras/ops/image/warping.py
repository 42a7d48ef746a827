"""Geometric warps: affine_transform, perspective_transform,
map_coordinates, elastic_transform.

``affine_transform`` is the projective warp of ``ops.nn.affine_transform``
(TensorFlow's ImageProjectiveTransformV3) with Keras's ``data_format``;
``perspective_transform`` solves the homography that maps ``end_points`` to
``start_points`` (as Keras: an 8x8 linear system per image) and warps with
it. ``map_coordinates`` samples any-rank inputs at given coordinates
(order 0 or 1, SciPy's/JAX's fill modes), as a gather plus weighted sum, so
it is differentiable in the inputs (and, for order 1, in the coordinates).
Its "reflect" and "mirror" are SciPy's (as Keras's JAX backend): Keras's
TensorFlow backend folds negative indices wrongly in "reflect" (-1 reads
pixel 1, not 0) and indexes out of bounds in "mirror".
``elastic_transform`` displaces pixels by Gaussian-smoothed random fields
(seeded by ``seed``) and samples with ``map_coordinates``.
"""

__all__ = ["affine_transform", "perspective_transform", "map_coordinates", "elastic_transform"]

import itertools

import numpy

from minikeras.autograd import Tensor
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.array.indexing import _take_in_range
from minikeras.ops.array.joining import stack
from minikeras.ops.array.reshaping import flatten, reshape
from minikeras.ops.core import convert_to_numpy
from minikeras.ops.image._layout import images_last
from minikeras.ops.math._elementwise import call_without_gradient, operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.compare import logical_and, where
from minikeras.ops.nn import affine_transform as _affine
from minikeras._support.argument_validation import (is_int, is_option, validate_int, validate_number, validate_option,
                                                    validate_tensor_input)

FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _host_numbers(op_name, name, value):
    """``value`` (a tensor, array or nested list of real numbers; bools are 0 and 1) as a float64 host
    array. NaN and inf are kept: the images they warp come out NaN (:func:`_warp`)."""
    validate_tensor_input(op_name, value, allow_complex=False, allow_sequence=True)
    return numpy.asarray(convert_to_numpy(value), dtype="float64")


def _warp(op_name, x, transform, interpolation, fill_mode, fill_value):
    """``ops.nn.affine_transform`` of ``x`` by the (batch, 8) ``transform``, with Keras's answers at the
    edges: an image whose transform holds NaN is all NaN (TensorFlow's and JAX's), and integer
    images are rounded back to their dtype (half to even, as ``map_coordinates`` and ``resize``)."""
    if numpy.isinf(transform).any():  # (TensorFlow gives NaN on some rows and numbers on others)
        raise ValueError(f"{op_name}: the transform must not hold inf, received {transform.tolist()}.")
    bad = numpy.isnan(transform).any(axis=-1)
    integer = not is_float_dtype(x.dtype)
    if bad.any():
        if integer:
            raise ValueError(f"{op_name}: the transform of integer images must be finite (a NaN one warps them "
                             f"to NaN, which integers cannot hold), received {transform.tolist()}.")
        transform = numpy.where(bad[..., None], [1, 0, 0, 0, 1, 0, 0, 0], transform)
    out = _affine.affine_transform(x, transform, interpolation, fill_mode, fill_value)
    if bad.any():
        out = where(bad.reshape((-1,) + (1,) * (out.ndim - 1)), float("nan"), out)
    if integer:
        from minikeras.ops.math.rounding import round as _round

        out = _round(out).astype(x.dtype)
    return out


def affine_transform(images, transform, interpolation="bilinear", fill_mode="constant", fill_value=0,
                     data_format=None):
    """Warp images by ``(8,)`` or ``(batch, 8)`` projective transforms (output -> input coordinates)."""
    x, restore = images_last("affine_transform", images, data_format)
    fill_value = validate_number("affine_transform", "fill_value", fill_value, finite=False)
    transform = _host_numbers("affine_transform", "transform", transform)
    if transform.ndim == 1 and x.shape[0] == 1:
        transform = transform[None]
    if transform.ndim not in (1, 2) or transform.shape[-1] != 8:
        raise ValueError(f"affine_transform: transform must be (8,) or (batch, 8), received shape {transform.shape}.")
    return restore(_warp("affine_transform", x, transform, interpolation, fill_mode, fill_value))


def _homography(start, end):
    """The 8 transform parameters mapping output points ``end`` to input points ``start`` (float32 solve, as Keras)."""
    rows, targets = [], []
    for (sx, sy), (ex, ey) in zip(start, end):
        rows.append([ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey])
        rows.append([0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey])
        targets.extend([sx, sy])
    try:
        return numpy.linalg.solve(numpy.asarray(rows, "float32"), numpy.asarray(targets, "float32"))
    except numpy.linalg.LinAlgError:
        raise ValueError(f"perspective_transform: no perspective transform maps end_points {end.tolist()} to "
                         f"start_points {start.tolist()} (three of the points are on a line).") from None


def perspective_transform(images, start_points, end_points, interpolation="bilinear", fill_value=0,
                          data_format=None):
    """Warp images so that ``start_points`` (4 corners ``(x, y)``) move to ``end_points``.

    Raises:
        ValueError: the point arrays are not ``(4, 2)`` or ``(batch, 4, 2)`` of the same shape.
    """
    fill_value = validate_number("perspective_transform", "fill_value", fill_value, finite=False)
    start = _host_numbers("perspective_transform", "start_points", start_points).astype("float32")
    end = _host_numbers("perspective_transform", "end_points", end_points).astype("float32")
    if start.ndim not in (2, 3) or start.shape[-2:] != (4, 2) or start.shape != end.shape:
        raise ValueError(f"perspective_transform: start_points and end_points must both be (4, 2) or (N, 4, 2), "
                         f"received {start.shape} and {end.shape}.")
    if start.ndim == 2:
        start, end = start[None], end[None]
    with numpy.errstate(invalid="ignore"):  # (NaN points: a NaN homography, an all-NaN image)
        transform = numpy.stack([_homography(s, e) for s, e in zip(start, end)])
    x, restore = images_last("perspective_transform", images, data_format)
    if transform.shape[0] == 1 and x.shape[0] > 1:
        transform = numpy.repeat(transform, x.shape[0], axis=0)
    return restore(_warp("perspective_transform", x, transform.astype("float64"), interpolation, "constant",
                         fill_value))


def _mirror(xp, index, size):
    """SciPy's "mirror" (about the edge pixels: ... 2 1 | 0 1 2 3 | 2 1 ...), JAX's formula."""
    period = max(size - 1, 1)
    return xp.abs(xp.mod(index + period, 2 * period) - period) if size > 1 else index * 0


def _fix_indices(xp, index, size, fill_mode):
    """Indices moved inside ``[0, size)`` by ``fill_mode`` (SciPy's/JAX's modes) and whether they were inside."""
    if fill_mode == "constant":
        return xp.clip(index, 0, size - 1), (index >= 0) & (index < size)
    if fill_mode == "nearest":
        return xp.clip(index, 0, size - 1), None
    if fill_mode == "wrap":
        return xp.mod(index, size), None
    if fill_mode == "mirror":
        return _mirror(xp, index, size), None
    # "reflect" (... b a | a b c d | d c ...): mirror of the half-pixel grid
    return xp.floor_divide(_mirror(xp, 2 * index + 1, 2 * size + 1) - 1, 2), None


def map_coordinates(inputs, coordinates, order, fill_mode="constant", fill_value=0):
    """Sample ``inputs`` at ``coordinates`` (shape ``(inputs.ndim, ...)``) by nearest (order 0) or linear
    (order 1) interpolation; points outside are handled by ``fill_mode``.

    Raises:
        ValueError: coordinates of the wrong leading size, an unknown fill_mode.
        NotImplementedError: order above 1 (as Keras).
    """
    x = _as_tensor("map_coordinates", operand("map_coordinates", inputs))
    if isinstance(coordinates, (list, tuple)):
        coordinates = stack([_as_tensor("map_coordinates", operand("map_coordinates", c)) for c in coordinates])
    coordinates = _as_tensor("map_coordinates", operand("map_coordinates", coordinates))
    if coordinates.ndim < 2 or coordinates.shape[0] != x.ndim:
        raise ValueError(f"map_coordinates: the first dim of `coordinates` must be the rank of `inputs` ({x.ndim}), "
                         f"received coordinates of shape {coordinates.shape}.")
    validate_option("map_coordinates", "fill_mode", fill_mode, FILL_MODES)
    fill_value = validate_number("map_coordinates", "fill_value", fill_value, finite=False)
    if x.size == 0:
        raise ValueError(f"map_coordinates: inputs must not be empty, received shape {x.shape}.")
    order = int(order) if is_int(order) else order  # (a NumPy integer is the int it holds)
    if not is_option(order, (0, 1)):  # Keras: 0 or 1 (its ValueError for a negative one, NotImplemented above 1)
        raise ValueError(f"map_coordinates: order must be 0 or 1 (map_coordinates currently requires order<=1), "
                         f"received {order!r}.")
    compute_dtype = x.dtype if is_float_dtype(x.dtype) else numpy.dtype("float32")
    if not is_float_dtype(coordinates.dtype):
        coordinates = coordinates.astype(compute_dtype)
    nodes_per_axis = []
    for axis in range(x.ndim):
        coordinate = coordinates[axis]
        if order == 0:
            index = call_without_gradient("map_coordinates", lambda xp, c: xp.round(c).astype("int64"), coordinate)
            nodes = [(index, None)]
        else:
            lower = call_without_gradient("map_coordinates", lambda xp, c: xp.floor(c), coordinate)
            upper_weight = coordinate - lower
            index = lower.astype("int64")
            nodes = [(index, 1 - upper_weight), (index + 1, upper_weight)]
        size = x.shape[axis]
        fixed = []
        for index, weight in nodes:
            safe = call_without_gradient("map_coordinates",
                                         lambda xp, i, s=size: _fix_indices(xp, i, s, fill_mode)[0], index)
            valid = None
            if fill_mode == "constant":
                valid = call_without_gradient("map_coordinates", lambda xp, i, s=size: (i >= 0) & (i < s), index)
            fixed.append((safe, valid, weight))
        nodes_per_axis.append(fixed)
    strides = numpy.cumprod((x.shape[1:] + (1,))[::-1])[::-1]
    flat = flatten(x.astype(compute_dtype) if x.dtype != compute_dtype else x)
    result = None
    for combination in itertools.product(*nodes_per_axis):
        position = None
        valid = None
        weight = None
        for (safe, inside, node_weight), stride in zip(combination, strides):
            term = safe * int(stride)
            position = term if position is None else position + term
            if inside is not None:
                valid = inside if valid is None else logical_and(valid, inside)
            if node_weight is not None:
                weight = node_weight if weight is None else weight * node_weight
        gathered = reshape(_take_in_range(flat, flatten(position), 0), position.shape)  # fixed: in range
        if valid is not None:
            gathered = where(valid, gathered, float(fill_value))
        contribution = gathered if weight is None else gathered * weight.astype(compute_dtype)
        result = contribution if result is None else result + contribution
    if x.dtype.kind in "iub":
        from minikeras.ops.math.rounding import round as _round

        result = _round(result).astype(x.dtype)
    return result


def elastic_transform(images, alpha=20.0, sigma=5.0, interpolation="bilinear", fill_mode="reflect", fill_value=0.0,
                      seed=None, data_format=None):
    """Elastic distortion: pixels move by ``alpha *`` Gaussian-blurred (``sigma``) N(0, sigma^2) fields.

    ``seed`` (an int, a SeedGenerator or None) makes the fields reproducible;
    they are minikeras's draws, not TensorFlow's, so the same seed gives a
    different (equally distributed) distortion than Keras.
    """
    from minikeras.ops.image.filters import gaussian_blur
    from minikeras import random as _random

    validate_option("elastic_transform", "interpolation", interpolation, ("nearest", "bilinear"))
    if not is_option(fill_mode, ("constant", "nearest", "wrap", "reflect")):
        raise ValueError(f"elastic_transform: fill_mode must be 'constant', 'nearest', 'wrap' or 'reflect', "
                         f"received {fill_mode!r}.")
    alpha = validate_number("elastic_transform", "alpha", alpha, minimum=0)
    sigma = validate_number("elastic_transform", "sigma", sigma, minimum=0)
    fill_value = validate_number("elastic_transform", "fill_value", fill_value, finite=False)
    x, restore = images_last("elastic_transform", images, data_format)
    batch, height, width, channels = x.shape
    if 6 * sigma > 2 * max(height, width) + 1:  # Keras's kernel is 6 sigma wide: past the image it only adds zeros
        sigma_for_size = (2 * max(height, width) + 1) / 6
    else:
        sigma_for_size = sigma
    if sigma == 0 or x.size == 0:
        raise ValueError(f"elastic_transform: sigma must be positive and images non-empty, received sigma={sigma} "
                         f"and images of shape {x.shape}.")
    dtype = x.dtype if is_float_dtype(x.dtype) else numpy.dtype("float32")
    size = 6 * int(sigma_for_size) | 1
    fields = _random.normal((2, batch, height, width, 1), stddev=1.0, dtype=str(dtype), seed=seed) * sigma
    blurred = [gaussian_blur(fields[i], kernel_size=(size, size), sigma=(sigma, sigma))[..., 0] for i in range(2)]
    grid_y, grid_x = numpy.meshgrid(numpy.arange(height, dtype=dtype), numpy.arange(width, dtype=dtype),
                                    indexing="ij")
    order = 0 if interpolation == "nearest" else 1
    outputs = []
    for b in range(batch):
        rows = blurred[1][b] * alpha + grid_y
        columns = blurred[0][b] * alpha + grid_x
        outputs.append(stack([map_coordinates(x[b, :, :, c], stack([rows, columns]), order, fill_mode, fill_value)
                              for c in range(channels)], -1))
    out = stack(outputs, 0)
    return restore(out if out.dtype == x.dtype else out.astype(x.dtype))


del Tensor
