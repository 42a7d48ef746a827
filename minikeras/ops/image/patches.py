"""Patch extraction: extract_patches (2-D) and extract_patches_3d, as Keras
does it: a convolution with an identity kernel, so each output position holds
its flattened ``(patch..., channels)`` block and gradients flow back through
the convolution."""

__all__ = ["extract_patches", "extract_patches_3d"]

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.array.reshaping import expand_dims, squeeze
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.nn.keras_functions import _data_format, conv
from minikeras._support.argument_validation import standardize_tuple


def _patches(op_name, images, size, strides, dilation_rate, padding, data_format, rank):
    sizes = standardize_tuple(op_name, "size", size, rank)
    strides = sizes if strides is None else standardize_tuple(op_name, "strides", strides, rank)
    dilations = standardize_tuple(op_name, "dilation_rate", dilation_rate, rank)
    if max(strides) > 1 and max(dilations) > 1:  # Keras refuses them together
        raise ValueError(f"{op_name}: strides > 1 are not supported together with dilation_rate > 1, received "
                         f"strides={strides} and dilation_rate={dilations}.")
    data_format = _data_format(op_name, data_format)
    x = _as_tensor(op_name, operand(op_name, images))
    if x.ndim not in (rank + 1, rank + 2):
        raise ValueError(f"{op_name}: expected rank {rank + 1} or {rank + 2} inputs, received shape {x.shape}.")
    if x.size == 0:
        raise ValueError(f"{op_name}: images must not be empty, received shape {x.shape}.")
    unbatched = x.ndim == rank + 1
    if unbatched:
        x = expand_dims(x, 0)
    channels = x.shape[-1] if data_format == "channels_last" else x.shape[1]
    out_dim = int(numpy.prod(sizes)) * channels
    integer = x.dtype.kind in "iu"  # copied exactly through float64 and back: Keras keeps the dtype
    compute = x.dtype if is_float_dtype(x.dtype) else numpy.dtype("float64" if integer else "float32")
    kernel = numpy.eye(out_dim, dtype=compute).reshape(sizes + (channels, out_dim))
    out = conv(x.astype(compute) if x.dtype != compute else x, kernel, strides=strides, padding=padding,
               data_format=data_format, dilation_rate=dilation_rate)
    if integer:
        out = out.astype(x.dtype)
    return squeeze(out, 0) if unbatched else out


def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """Patches of ``size`` (an int or ``(h, w)``; 3 entries: 3-D) every ``strides`` (default: ``size``)."""
    if isinstance(size, (tuple, list)) and len(size) == 3:
        return extract_patches_3d(images, size, strides, dilation_rate, padding, data_format)
    return _patches("extract_patches", images, size, strides, dilation_rate, padding, data_format, 2)


def extract_patches_3d(volumes, size, strides=None, dilation_rate=1, padding="valid", data_format=None):
    """3-D patches of ``size`` (an int or ``(d, h, w)``) every ``strides`` (default: ``size``)."""
    return _patches("extract_patches_3d", volumes, size, strides, dilation_rate, padding, data_format, 3)
