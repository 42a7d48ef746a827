"""``keras.ops.nn``'s rank-generic and functional spellings over minikeras's ops:
conv, conv_transpose, depthwise_conv, separable_conv, max_pool,
average_pool, adaptive_max_pool, adaptive_average_pool, depth_to_space,
space_to_depth, unfold, fold, extract_sequences (normalisations and losses
are in ``keras_normalization_losses``).

``data_format`` follows Keras: None means ``keras.config.image_data_format()``
("channels_last" unless set); channels-first inputs are transposed to
channels-last around the channels-last kernels, which the gradient follows.
"""

__all__ = ["conv", "conv_transpose", "depthwise_conv", "separable_conv", "max_pool", "average_pool",
           "adaptive_max_pool", "adaptive_average_pool", "depth_to_space", "space_to_depth", "unfold", "fold",
           "extract_sequences"]

import numpy

from minikeras.backend import keras_helpers
from minikeras.ops.array.indexing import _take_in_range, getitem
from minikeras.ops.array.joining import stack
from minikeras.ops.array.reshaping import expand_dims, reshape, squeeze, transpose
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.nn import conv as _conv, conv3d as _conv3d, pool as _pool
from minikeras.ops.nn import conv3d_transpose as _conv3d_transpose

from minikeras.ops.nn.conv_grouped import grouped_conv
from minikeras.ops.reduce import max as _max, mean
from minikeras._support.argument_validation import standardize_tuple, validate_int


def _tensor(op_name, x):
    return _as_tensor(op_name, operand(op_name, x))


def _data_format(op_name, data_format):
    data_format = keras_helpers.image_data_format() if data_format is None else data_format
    if not isinstance(data_format, str) or data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"{op_name}: data_format must be 'channels_last' or 'channels_first', "
                         f"received {data_format!r}.")
    return data_format


def _to_last(x, data_format):
    if data_format == "channels_first":
        return transpose(x, (0,) + tuple(range(2, x.ndim)) + (1,))
    return x


def _from_last(x, data_format):
    if data_format == "channels_first":
        return transpose(x, (0, x.ndim - 1) + tuple(range(1, x.ndim - 1)))
    return x


def _spatial_rank(op_name, x, allowed=(1, 2, 3)):
    rank = x.ndim - 2
    if rank not in allowed:
        raise ValueError(f"{op_name}: expected inputs of rank {', '.join(str(r + 2) for r in allowed)} "
                         f"(batch, spatial..., channels), received shape {x.shape}.")
    return rank


def _as_2d(x, kernel=None):
    """A 1-D channels-last input (and kernel) seen as 2-D with height 1."""
    return expand_dims(x, 1), (expand_dims(kernel, 0) if kernel is not None else None)


def _pair(op_name, name, value, allow_zero=False):
    """A 1-D op's size argument (an int or a 1-tuple) as the (1, size) of its 2-D view."""
    return (1,) + standardize_tuple(op_name, name, value, 1, allow_zero)


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """N-D convolution (1-D, 2-D or 3-D by the input's rank); kernel ``(spatial..., in, out)``, or
    ``(spatial..., in // groups, out)`` for a grouped convolution (the groups inferred, as Keras does)."""
    data_format = _data_format("conv", data_format)
    x, kernel = _to_last(_tensor("conv", inputs), data_format), _tensor("conv", kernel)
    rank = _spatial_rank("conv", x)
    channels = x.shape[-1]
    # (a kernel of the wrong rank is refused, clearly, by the convolution itself)
    kernel_channels = kernel.shape[-2] if kernel.ndim == x.ndim else channels
    if kernel_channels != channels and kernel_channels and channels % kernel_channels == 0:
        # As Keras's backends: a kernel over in_channels // groups channels is a grouped convolution.
        out = grouped_conv(x, kernel, channels // kernel_channels, rank, strides, padding, dilation_rate)
    elif rank == 1:
        out = _conv.conv1d(x, kernel, strides, padding, dilation_rate)
    elif rank == 2:
        out = _conv.conv2d(x, kernel, strides, padding, dilation_rate)
    else:
        out = _conv3d.conv3d(x, kernel, strides, padding, dilation_rate)
    return _from_last(out, data_format)


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None, data_format=None,
                   dilation_rate=1):
    """Transposed convolution, 1-D, 2-D or 3-D; kernel ``(spatial..., out, in)`` as Keras's."""
    data_format = _data_format("conv_transpose", data_format)
    x, kernel = _to_last(_tensor("conv_transpose", inputs), data_format), _tensor("conv_transpose", kernel)
    rank = _spatial_rank("conv_transpose", x)
    if rank == 3:
        out = _conv3d_transpose.conv3d_transpose(x, kernel, strides, padding, output_padding, dilation_rate)
    elif rank == 1:
        x2, kernel2 = _as_2d(x, kernel)
        out_padding = None if output_padding is None else \
            (0,) + standardize_tuple("conv_transpose", "output_padding", output_padding, 1, True)
        out = squeeze(_conv.conv2d_transpose(x2, kernel2, _pair("conv_transpose", "strides", strides), padding,
                                             out_padding, _pair("conv_transpose", "dilation_rate", dilation_rate)), 1)
    else:
        out = _conv.conv2d_transpose(x, kernel, strides, padding, output_padding, dilation_rate)
    return _from_last(out, data_format)


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """Depthwise convolution, 1-D or 2-D; kernel ``(spatial..., in, multiplier)``."""
    data_format = _data_format("depthwise_conv", data_format)
    x, kernel = _to_last(_tensor("depthwise_conv", inputs), data_format), _tensor("depthwise_conv", kernel)
    rank = _spatial_rank("depthwise_conv", x, (1, 2))
    if rank == 1:
        x2, kernel2 = _as_2d(x, kernel)
        out = squeeze(_conv.depthwise_conv2d(x2, kernel2, _pair("depthwise_conv", "strides", strides), padding,
                                             _pair("depthwise_conv", "dilation_rate", dilation_rate)), 1)
    else:
        out = _conv.depthwise_conv2d(x, kernel, strides, padding, dilation_rate)
    return _from_last(out, data_format)


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    """A depthwise convolution followed by a 1x1 (pointwise) convolution."""
    data_format = _data_format("separable_conv", data_format)
    depthwise = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return conv(depthwise, pointwise_kernel, 1, "valid", data_format, 1)


def _pool_call(op_name, functions, inputs, pool_size, strides, padding, data_format):
    data_format = _data_format(op_name, data_format)
    x = _to_last(_tensor(op_name, inputs), data_format)
    rank = _spatial_rank(op_name, x)
    return _from_last(functions[rank - 1](x, pool_size, strides, padding), data_format)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Max pooling, 1-D/2-D/3-D by the input's rank."""
    return _pool_call("max_pool", (_pool.max_pool1d, _pool.max_pool2d, _conv3d.max_pool3d),
                      inputs, pool_size, strides, padding, data_format)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """Average pooling, 1-D/2-D/3-D by the input's rank."""
    return _pool_call("average_pool", (_pool.avg_pool1d, _pool.avg_pool2d, _conv3d.avg_pool3d),
                      inputs, pool_size, strides, padding, data_format)


def _adaptive(op_name, reducer, inputs, output_size, data_format):
    data_format = _data_format(op_name, data_format)
    x = _to_last(_tensor(op_name, inputs), data_format)
    rank = _spatial_rank(op_name, x)
    sizes = standardize_tuple(op_name, "output_size", _int_list(output_size), rank)
    for axis, out_size in enumerate(sizes, start=1):
        length = x.shape[axis]
        pieces = []
        for i in range(out_size):
            start, stop = (i * length) // out_size, -((-(i + 1) * length) // out_size)
            index = (slice(None),) * axis + (slice(start, stop),)
            pieces.append(reducer(getitem(x, index), axis))
        x = stack(pieces, axis)
    return _from_last(x, data_format)


def adaptive_max_pool(inputs, output_size, data_format=None):
    """Max pooling to a fixed output size (PyTorch's bins: ``floor(i*L/n)`` to ``ceil((i+1)*L/n)``)."""
    return _adaptive("adaptive_max_pool", lambda t, axis: _max(t, axis), inputs, output_size, data_format)


def adaptive_average_pool(inputs, output_size, data_format=None):
    """Average pooling to a fixed output size (PyTorch's bins)."""
    return _adaptive("adaptive_average_pool", lambda t, axis: mean(t, axis), inputs, output_size, data_format)


def _check_block(op_name, x, block_size):
    block_size = validate_int(op_name, "block_size", block_size, minimum=2)  # Keras: at least 2
    if x.ndim != 4:
        raise ValueError(f"{op_name} expects a 4-D image batch, received shape {x.shape}.")
    return block_size


def depth_to_space(x, block_size, data_format="channels_last"):
    """Move channel blocks into ``block_size x block_size`` spatial tiles (TensorFlow's layout: DCR)."""
    data_format = _data_format("depth_to_space", data_format)
    x = _to_last(_tensor("depth_to_space", x), data_format)
    b = _check_block("depth_to_space", x, block_size)
    n, h, w, c = x.shape
    if c % (b * b):
        raise ValueError(f"depth_to_space: channels ({c}) must be divisible by block_size**2 ({b * b}).")
    out = reshape(transpose(reshape(x, (n, h, w, b, b, c // (b * b))), (0, 1, 3, 2, 4, 5)),
                  (n, h * b, w * b, c // (b * b)))
    return _from_last(out, data_format)


def space_to_depth(x, block_size, data_format="channels_last"):
    """Move ``block_size x block_size`` spatial tiles into channels (the inverse of depth_to_space)."""
    data_format = _data_format("space_to_depth", data_format)
    x = _to_last(_tensor("space_to_depth", x), data_format)
    b = _check_block("space_to_depth", x, block_size)
    n, h, w, c = x.shape
    if h % b or w % b:
        raise ValueError(f"space_to_depth: height and width ({h}, {w}) must be divisible by block_size {b}.")
    out = reshape(transpose(reshape(x, (n, h // b, b, w // b, b, c)), (0, 1, 3, 2, 4, 5)),
                  (n, h // b, w // b, b * b * c))
    return _from_last(out, data_format)


def _pairs(op_name, value, name):
    return standardize_tuple(op_name, name, _int_list(value), 2, allow_zero=name == "padding")


def _int_list(value):
    """A 1-D integer NumPy array as the tuple of its ints (Keras's adaptive pools and unfold take one)."""
    if isinstance(value, numpy.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        return tuple(value.tolist())
    return value


def _block_count(op_name, size, kernel, dilation, padding, stride):
    """(out_h, out_w) of unfold/fold; ValueError when a dilated kernel is larger than the padded image."""
    counts = tuple((size[a] + 2 * padding[a] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1 for a in (0, 1))
    if min(counts) < 1:
        raise ValueError(f"{op_name}: a kernel of {kernel} with dilation {dilation} does not fit an image of "
                         f"{size} padded by {padding}.")
    return counts


def _unfold_positions(channels, height, width, kernel, dilation, padding, stride):
    """Flat positions in the padded (C, Hp, Wp) image of every (C*kh*kw, L) unfold entry."""
    kh, kw = kernel
    hp, wp = height + 2 * padding[0], width + 2 * padding[1]
    out_h = (hp - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (wp - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    c, i, j = numpy.meshgrid(numpy.arange(channels), numpy.arange(kh), numpy.arange(kw), indexing="ij")
    rows = i.reshape(-1, 1) * dilation[0] + (numpy.arange(out_h) * stride[0]).repeat(out_w)[None, :]
    cols = j.reshape(-1, 1) * dilation[1] + numpy.tile(numpy.arange(out_w) * stride[1], out_h)[None, :]
    return (c.reshape(-1, 1) * hp + rows) * wp + cols, (hp, wp), out_h * out_w


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a ``(N, C, H, W)`` batch as ``(N, C*kh*kw, L)`` (PyTorch's ``unfold``)."""
    from minikeras.ops.array.padding import pad

    x = _tensor("unfold", x)
    if x.ndim != 4:
        raise ValueError(f"unfold expects (N, C, H, W), received shape {x.shape}.")
    kernel, dilation, padding, stride = (_pairs("unfold", v, name) for v, name in (
        (kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"), (stride, "stride")))
    n, c, h, w = x.shape
    _block_count("unfold", (h, w), kernel, dilation, padding, stride)
    positions, (hp, wp), _ = _unfold_positions(c, h, w, kernel, dilation, padding, stride)
    padded = pad(x, [(0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2])
    return _take_in_range(reshape(padded, (n, c * hp * wp)), positions, 1)  # computed: in range


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of :func:`unfold`: sum ``(N, C*kh*kw, L)`` blocks into ``(N, C, H, W)``."""
    from minikeras.ops.array.scatter import _scatter

    x = _tensor("fold", x)
    output_size, kernel, dilation, padding, stride = (_pairs("fold", v, name) for v, name in (
        (output_size, "output_size"), (kernel_size, "kernel_size"), (dilation, "dilation"),
        (padding, "padding"), (stride, "stride")))
    if x.ndim != 3 or x.shape[1] % (kernel[0] * kernel[1]):
        raise ValueError(f"fold expects (N, C*kh*kw, L), received shape {x.shape}.")
    n = x.shape[0]
    c = x.shape[1] // (kernel[0] * kernel[1])
    _block_count("fold", output_size, kernel, dilation, padding, stride)
    positions, (hp, wp), blocks = _unfold_positions(c, output_size[0], output_size[1], kernel, dilation,
                                                    padding, stride)
    if x.shape[2] != blocks:
        raise ValueError(f"fold: expected {blocks} blocks for output_size {output_size}, received {x.shape[2]}.")
    values = transpose(x, (1, 2, 0))  # (C*kh*kw, L, N)
    summed = _scatter(positions[..., None], values, (c * hp * wp, n), checked=False)  # computed, in range
    image = reshape(transpose(summed, (1, 0)), (n, c, hp, wp))
    return getitem(image, (slice(None), slice(None), slice(padding[0], hp - padding[0]),
                           slice(padding[1], wp - padding[1])))


def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of ``sequence_length`` every ``sequence_stride`` along the last axis: ``(..., frames, length)``."""
    x = _tensor("extract_sequences", x)
    length = validate_int("extract_sequences", "sequence_length", sequence_length, minimum=1)
    stride = validate_int("extract_sequences", "sequence_stride", sequence_stride, minimum=1)
    if x.ndim == 0:
        raise ValueError("extract_sequences expects a tensor of at least 1 dimension, received a 0-d one.")
    total = x.shape[-1]
    if total < length:
        raise ValueError(f"extract_sequences: the last axis ({total}) is shorter than sequence_length {length}.")
    frames = 1 + (total - length) // stride
    index = numpy.arange(frames)[:, None] * stride + numpy.arange(length)[None, :]
    return _take_in_range(x, index, x.ndim - 1)  # computed: in range

