"""Image resizing, padding and cropping: resize, pad_images, crop_images,
scale_and_translate.

Every resize is separable: one ``(out, in)`` weight matrix per spatial
axis, built on the host in float64 from TensorFlow's definition of the
method, applied axis by axis as a gather of the taps each output weighs and
their weighted sum (:func:`_resample`; differentiable through the gather),
so a NaN or inf pixel reaches only the outputs that weigh it, as in
TensorFlow (a dense product would spread it through the zero weights):

- "bilinear", "nearest": half-pixel centres (``tf.image.resize``);
- "bicubic": Keys' cubic (a = -0.5) on the four nearest pixels, taps outside
  the image dropped and the weights renormalised (``ResizeBicubic`` with
  half-pixel centres);
- "area": each output pixel averages the input area it covers
  (``ResizeArea``);
- "lanczos3", "lanczos5", and "bilinear"/"bicubic" with ``antialias=True``:
  ``scale_and_translate``'s kernels (triangle, Keys cubic, Lanczos), widened
  by the downscaling factor when antialiasing.
"""

__all__ = ["resize", "pad_images", "crop_images", "scale_and_translate"]

import math

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.array.arranging import slice as _slice
from minikeras.ops.array.joining import concatenate
from minikeras.ops.array.padding import pad
from minikeras.ops.creation import full
from minikeras.ops.image._layout import images_last
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.math.products import tensordot
from minikeras.ops.nn.resize import interpolation_matrix
from minikeras._support.argument_validation import (is_option, validate_axis, validate_flag, validate_int,
                                                    validate_number, validate_option, validate_shape,
                                                    validate_tensor_input)

INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


def _triangle(x):
    return numpy.maximum(0.0, 1.0 - numpy.abs(x))


def _keys_cubic(x):
    x = numpy.abs(x)
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = numpy.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return numpy.where(x >= 2.0, 0.0, out)


def _lanczos(radius):
    def kernel(x):
        x = numpy.abs(x)
        y = radius * numpy.sin(numpy.pi * x) * numpy.sin(numpy.pi * x / radius)
        out = numpy.where(x > 1e-3, y / numpy.where(x != 0, numpy.pi ** 2 * x ** 2, 1), 1.0)
        return numpy.where(x > radius, 0.0, out)
    return kernel


KERNELS = {"linear": _triangle, "cubic": _keys_cubic, "lanczos3": _lanczos(3.0), "lanczos5": _lanczos(5.0)}


def kernel_matrix(in_size, out_size, scale, translation, kernel, antialias):
    """The ``(out, in)`` weights of ``scale_and_translate`` along one axis (JAX's/TensorFlow's); a NaN or
    infinite scale or translation weighs nothing (all zeros, as JAX's)."""
    with numpy.errstate(all="ignore"):
        return _kernel_matrix(in_size, out_size, scale, translation, kernel, antialias)


def _kernel_matrix(in_size, out_size, scale, translation, kernel, antialias):
    inverse = 1.0 / scale
    kernel_scale = max(inverse, 1.0) if antialias else 1.0
    sample = (numpy.arange(out_size) + 0.5) * inverse - translation * inverse - 0.5
    weights = kernel(numpy.abs(sample[None, :] - numpy.arange(in_size)[:, None]) / kernel_scale)
    total = weights.sum(axis=0, keepdims=True)
    weights = numpy.where(numpy.abs(total) > 1000.0 * float(numpy.finfo(numpy.float32).eps),
                          weights / numpy.where(total != 0, total, 1), 0)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return numpy.where(inside[None, :], weights, 0).T


_TABLE_SIZE = 1024  # ResizeBicubic reads its weights from a table of 1024 steps per pixel


def _bicubic_matrix(out_size, in_size):
    scale = numpy.float32(in_size) / numpy.float32(out_size)
    matrix = numpy.zeros((out_size, in_size))
    for i in range(out_size):
        position = numpy.float32((i + 0.5) * scale - 0.5)
        base = math.floor(position)
        step = int(numpy.rint((position - base) * _TABLE_SIZE)) / _TABLE_SIZE  # lrintf: nearest table entry
        taps = [base - 1, base, base + 1, base + 2]
        weights = [numpy.float32(_keys_cubic(step + 1)), numpy.float32(_keys_cubic(step)),
                   numpy.float32(_keys_cubic(1 - step)), numpy.float32(_keys_cubic(2 - step))]
        kept = [(tap, w) for tap, w in zip(taps, weights) if 0 <= tap < in_size]
        total = sum(w for _, w in kept)
        for tap, w in kept:
            matrix[i, tap] += w / total
    return matrix


def _area_matrix(out_size, in_size):
    scale = in_size / out_size
    matrix = numpy.zeros((out_size, in_size))
    for i in range(out_size):
        start, stop = i * scale, (i + 1) * scale
        for j in range(int(math.floor(start)), min(int(math.ceil(stop)), in_size)):
            matrix[i, j] = (min(stop, j + 1) - max(start, j)) / scale
    return matrix


def resize_matrix(out_size, in_size, interpolation, antialias):
    """The ``(out, in)`` float64 weights resizing one axis as ``tf.image.resize`` does."""
    if interpolation == "nearest":
        return interpolation_matrix(out_size, in_size, "nearest")
    if interpolation == "area":
        return _area_matrix(out_size, in_size)
    if interpolation in ("lanczos3", "lanczos5") or antialias:
        kernel = {"bilinear": "linear", "bicubic": "cubic"}.get(interpolation, interpolation)
        return kernel_matrix(in_size, out_size, out_size / in_size, 0.0, KERNELS[kernel], antialias)
    if interpolation == "bicubic":
        return _bicubic_matrix(out_size, in_size)
    return interpolation_matrix(out_size, in_size, "bilinear")


def _aspect_box(height, width, target_height, target_width, grow):
    """The (height, width) of the box with the target's aspect ratio that fits inside
    (``grow=False``, crop) or around (``grow=True``, pad) the image (TensorFlow's rounding)."""
    box_height = int(numpy.float32(width * target_height) / numpy.float32(target_width))
    box_width = int(numpy.float32(height * target_width) / numpy.float32(target_height))
    if grow:
        return max(height, box_height), max(width, box_width)
    return max(min(height, box_height), 1), max(min(width, box_width), 1)


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """Resize images to ``size = (height, width)`` (``keras.ops.image.resize``), differentiable.

    Integer images keep their dtype: the resized values are rounded (half to
    even) and clipped to it (Keras's ``round`` and ``saturate_cast``).

    Raises:
        ValueError: an unknown interpolation, a fill_mode other than "constant",
            both aspect-ratio options, or a bad size.
    """
    validate_option("resize", "interpolation", interpolation, INTERPOLATIONS)
    if not is_option(fill_mode, ("constant",)):
        raise ValueError(f"resize: only fill_mode='constant' is supported, received fill_mode={fill_mode!r}.")
    antialias = validate_flag("resize", "antialias", antialias)
    crop_to_aspect_ratio = validate_flag("resize", "crop_to_aspect_ratio", crop_to_aspect_ratio)
    pad_to_aspect_ratio = validate_flag("resize", "pad_to_aspect_ratio", pad_to_aspect_ratio)
    fill_value = validate_number("resize", "fill_value", fill_value, finite=False)
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("resize: only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be True.")
    if not isinstance(size, (list, tuple)) or len(size) != 2 or any(
            isinstance(s, bool) or not isinstance(s, (int, numpy.integer)) or s <= 0 for s in size):
        raise ValueError(f"resize: argument `size` must be two positive ints (height, width), received size={size!r}.")
    x, restore = images_last("resize", images, data_format)
    height, width = x.shape[1], x.shape[2]
    if x.size == 0:
        raise ValueError(f"resize: the images must not be empty, received shape {x.shape}.")
    target_height, target_width = int(size[0]), int(size[1])
    if crop_to_aspect_ratio:
        crop_height, crop_width = _aspect_box(height, width, target_height, target_width, grow=False)
        top, left = (height - crop_height) // 2, (width - crop_width) // 2
        x = x[:, top:top + crop_height, left:left + crop_width, :]
    elif pad_to_aspect_ratio:
        pad_height, pad_width = _aspect_box(height, width, target_height, target_width, grow=True)
        top, left = (pad_height - height) // 2, (pad_width - width) // 2
        # TensorFlow pads the same amount on both sides (the box can end up an odd pixel smaller).
        if top > 0:
            band = full((x.shape[0], top, x.shape[2], x.shape[3]), fill_value, dtype=x.dtype)
            x = concatenate([band, x, band], axis=1)
        if left > 0:
            band = full((x.shape[0], x.shape[1], left, x.shape[3]), fill_value, dtype=x.dtype)
            x = concatenate([band, x, band], axis=2)
    integer = not is_float_dtype(x.dtype)
    rows = resize_matrix(target_height, x.shape[1], interpolation, antialias)
    columns = resize_matrix(target_width, x.shape[2], interpolation, antialias)
    if integer and interpolation == "nearest":  # an exact gather
        return restore(x[:, rows.argmax(axis=1)][:, :, columns.argmax(axis=1)])
    out = _resample(_resample(x.astype("float32") if integer else x, rows, 1), columns, 2)
    if integer:
        from minikeras.ops.core import saturate_cast
        from minikeras.ops.math.rounding import round as _round

        out = saturate_cast(_round(out), str(x.dtype))
    return restore(out)


def _resample(x, matrix, axis):
    """``x`` resampled along ``axis`` by the host ``(out, in)`` weights: each output the weighted
    sum of the inputs its row weighs, gathered (padding taps of a shorter row re-read its first
    tap with weight 0)."""
    from minikeras.ops.array.indexing import _take_in_range
    from minikeras.ops.array.reshaping import reshape
    from minikeras.ops.reduce import sum as _sum

    weighed = matrix != 0
    counts = weighed.sum(axis=1)
    taps = max(int(counts.max()) if counts.size else 0, 1)
    order = numpy.argsort(~weighed, axis=1, kind="stable")[:, :taps]
    weights = numpy.take_along_axis(matrix, order, axis=1)
    index = numpy.where(numpy.take_along_axis(weighed, order, axis=1), order, order[:, :1])
    gathered = _take_in_range(x, index.reshape(-1), axis)  # computed: in range
    gathered = reshape(gathered, x.shape[:axis] + index.shape + x.shape[axis + 1:])
    weights = weights.reshape(index.shape + (1,) * (x.ndim - axis - 1)).astype(x.dtype)
    return _sum(gathered * weights, axis + 1)


def _box_arguments(op_name, kind, top, left, bottom, right, target_height, target_width):
    """Check Keras's box arguments (two of each triple, none negative); return them as ints (a 0-d
    integer array or Tensor is its int: a box computed with ops, as keras.io's CutMix does) in the
    order given."""
    from minikeras.autograd.tensor import Tensor

    names = {"top": f"top_{kind}", "bottom": f"bottom_{kind}", "left": f"left_{kind}", "right": f"right_{kind}",
             "target_height": "target_height", "target_width": "target_width"}
    values = {"top": top, "bottom": bottom, "left": left, "right": right, "target_height": target_height,
              "target_width": target_width}
    for name, value in values.items():
        if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "iu":
            value = value.numpy()
        if value is not None:
            value = values[name] = validate_int(op_name, names[name], value)
            if value < 0:
                raise ValueError(f"{op_name}: {names[name]} must be >= 0. Received: {names[name]}={value}")
    for group in (("top", "bottom", "target_height"), ("left", "right", "target_width")):
        if [values[name] for name in group].count(None) != 1:
            raise ValueError(f"{op_name}: must specify exactly two of " + ", ".join(names[n] for n in group)
                             + ". Received: " + ", ".join(f"{names[n]}={values[n]}" for n in group))
    return tuple(values[name] for name in ("top", "left", "bottom", "right", "target_height", "target_width"))


def _check_inferred(op_name, pairs):
    for name, value in pairs:
        if value < 0:
            raise ValueError(f"{op_name}: {name} must be >= 0. Received: {name}={value}")


def pad_images(images, top_padding=None, left_padding=None, bottom_padding=None, right_padding=None,
               target_height=None, target_width=None, data_format=None):
    """Zero-pad images to a box: give two of (top, bottom, target height) and two of (left, right, target width)."""
    top_padding, left_padding, bottom_padding, right_padding, target_height, target_width = _box_arguments(
        "pad_images", "padding", top_padding, left_padding, bottom_padding, right_padding, target_height,
        target_width)
    x, restore = images_last("pad_images", images, data_format)
    height, width = x.shape[1], x.shape[2]
    top = top_padding if top_padding is not None else target_height - bottom_padding - height
    bottom = bottom_padding if bottom_padding is not None else target_height - top - height
    left = left_padding if left_padding is not None else target_width - right_padding - width
    right = right_padding if right_padding is not None else target_width - left - width
    _check_inferred("pad_images", (("top_padding", top), ("bottom_padding", bottom), ("left_padding", left),
                                   ("right_padding", right)))
    return restore(pad(x, [(0, 0), (top, bottom), (left, right), (0, 0)]))


def crop_images(images, top_cropping=None, left_cropping=None, bottom_cropping=None, right_cropping=None,
                target_height=None, target_width=None, data_format=None):
    """Crop images to a box: give two of (top, bottom, target height) and two of (left, right, target width)."""
    top_cropping, left_cropping, bottom_cropping, right_cropping, target_height, target_width = _box_arguments(
        "crop_images", "cropping", top_cropping, left_cropping, bottom_cropping, right_cropping, target_height,
        target_width)
    x, restore = images_last("crop_images", images, data_format)
    height, width = x.shape[1], x.shape[2]
    top = top_cropping if top_cropping is not None else height - target_height - bottom_cropping
    box_height = target_height if target_height is not None else height - bottom_cropping - top
    left = left_cropping if left_cropping is not None else width - target_width - right_cropping
    box_width = target_width if target_width is not None else width - right_cropping - left
    _check_inferred("crop_images", (("top_cropping", top), ("target_height", box_height), ("left_cropping", left),
                                    ("target_width", box_width)))
    if top + box_height > height or left + box_width > width:
        raise ValueError(f"crop_images: the box (top {top}, left {left}, {box_height} x {box_width}) does not fit "
                         f"in images of {height} x {width}.")
    return restore(_slice(x, (0, top, left, 0), (x.shape[0], box_height, box_width, x.shape[3])))


SCALE_AND_TRANSLATE_METHODS = {"linear": "linear", "bilinear": "linear", "trilinear": "linear",
                               "cubic": "cubic", "bicubic": "cubic", "tricubic": "cubic",
                               "lanczos3": "lanczos3", "lanczos5": "lanczos5"}


def _per_axis(name, value, count):
    """``value`` (one number per spatial axis) as a float64 vector."""
    from minikeras.ops.core import convert_to_numpy

    validate_tensor_input("scale_and_translate", value, allow_complex=False, allow_sequence=True)
    host = numpy.asarray(convert_to_numpy(value), dtype="float64")  # (bools are 0 and 1, as Keras)
    if host.shape != (count,):
        raise ValueError(f"scale_and_translate: {name} must hold {count} numbers (one per spatial axis), "
                         f"received {value!r}.")
    return host  # a NaN or inf scale or translation weighs nothing: zeros, as JAX's (kernel_matrix)


def scale_and_translate(images, output_shape, scale, translation, spatial_dims, method, antialias=True):
    """JAX's ``scale_and_translate``: resample ``spatial_dims`` to ``output_shape`` with the given scale
    and translation per axis (differentiable in ``images``; integers are rounded and clipped back)."""
    validate_option("scale_and_translate", "method", method, tuple(SCALE_AND_TRANSLATE_METHODS))
    antialias = validate_flag("scale_and_translate", "antialias", antialias)
    from minikeras.ops.array.reshaping import moveaxis
    from minikeras.ops.core import convert_to_numpy

    x = _as_tensor("scale_and_translate", operand("scale_and_translate", images))
    output_shape = validate_shape("scale_and_translate", output_shape, name="output_shape")
    if len(output_shape) != x.ndim:
        raise ValueError(f"scale_and_translate: output_shape must have one size per axis of images {x.shape}, "
                         f"received {output_shape}.")
    if not isinstance(spatial_dims, (tuple, list)):
        raise TypeError(f"scale_and_translate: spatial_dims must be a tuple of axes, received {spatial_dims!r}.")
    spatial_dims = [validate_axis("scale_and_translate", dim, x.ndim, "spatial_dims") for dim in spatial_dims]
    scales = _per_axis("scale", scale, len(spatial_dims))
    translations = _per_axis("translation", translation, len(spatial_dims))
    kernel = KERNELS[SCALE_AND_TRANSLATE_METHODS[method]]
    integer = x.dtype.kind in "iub"
    out = x.astype("float32") if integer else x
    for index, dim in enumerate(spatial_dims):
        weights = kernel_matrix(x.shape[dim], int(output_shape[dim]), scales[index], translations[index], kernel,
                                antialias).T.astype(out.dtype)
        out = moveaxis(tensordot(out, weights, axes=([dim], [0])), -1, dim)
    if integer:
        from minikeras.ops.math.compare import clip
        from minikeras.ops.math.rounding import round as _round

        out = clip(_round(out), float(convert_to_numpy(x).min()), float(convert_to_numpy(x).max())).astype(x.dtype)
    return out
