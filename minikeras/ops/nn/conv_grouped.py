"""Grouped convolution (Keras's ``Conv1D/2D/3D(groups=...)``), channels-last.

The input channels split into ``groups`` equal groups, and so do the
filters: filter group g sees only input group g, so the kernel is
``(spatial..., in_channels // groups, filters)``. Output channel ``o``
belongs to group ``o // (filters // groups)``, as in TensorFlow.

Two ways to compute it, both from existing differentiable ops (so the
gradients are theirs):

- 2-D with one input channel per group (``groups == in_channels``,
  ConvNeXt's 7x7 "depthwise" Conv2D): exactly a depthwise convolution with multiplier
  ``filters // groups``, because the depthwise op orders its output channels
  ``c * multiplier + m`` just as a grouped convolution does; the kernel is
  only reshaped to the depthwise layout;
- otherwise one convolution per group on a channel slice, concatenated: a
  GEMM per group, the same arithmetic a fused grouped kernel would do.
"""
from minikeras.ops._checks import shape_of
from minikeras.ops.array import concatenate, reshape
from minikeras.ops.nn.conv import conv1d, conv2d
from minikeras.ops.nn.conv3d import conv3d
from minikeras.ops.nn.conv_depthwise import depthwise_conv2d

__all__ = []  # used by the convolution layers and ops.conv; not a Keras op name of its own


def grouped_conv(x, kernel, groups, rank, strides=1, padding="valid", dilation_rate=1):
    """``rank``-D convolution of ``x`` with ``groups`` channel groups.

    Args:
        x: ``(batch, spatial..., in_channels)``.
        kernel: ``(spatial..., in_channels // groups, filters)``; ``filters``
            a multiple of ``groups``.
        groups: the number of groups (1 is an ordinary convolution).
        rank: 1, 2 or 3 spatial axes.
        strides, padding, dilation_rate: as the ``rank``-D convolution op.

    Returns:
        ``(batch, out_spatial..., filters)``.

    Raises:
        ValueError: the channels or filters are not ``groups`` equal groups,
            or the kernel's input axis is not ``in_channels // groups``.
    """
    channels, kernel_shape = shape_of(x)[-1], tuple(shape_of(kernel))
    per_group, filters = kernel_shape[-2], kernel_shape[-1]
    if groups < 1 or channels == 0:
        raise ValueError(f"conv: the input must have channels and the kernel an input axis dividing them, received "
                         f"input shape {tuple(shape_of(x))} and kernel shape {kernel_shape}.")
    if channels % groups or filters % groups or per_group * groups != channels:
        raise ValueError(
            f"conv (groups={groups}): the input channels ({channels}) and the filters ({filters}) must split into "
            f"{groups} equal groups, and the kernel's input axis must be in_channels // groups = "
            f"{channels // groups if channels % groups == 0 else 'not an integer'}; received input shape "
            f"{tuple(shape_of(x))} and kernel shape {kernel_shape}."
        )
    convolve = {1: conv1d, 2: conv2d, 3: conv3d}[rank]
    if groups == 1:
        return convolve(x, kernel, strides, padding, dilation_rate)
    if per_group == 1 and rank == 2:
        depthwise = reshape(kernel, kernel_shape[:-2] + (channels, filters // groups))
        return depthwise_conv2d(x, depthwise, strides, padding, dilation_rate)
    outputs_per_group = filters // groups
    pieces = []
    for group in range(groups):
        inputs = x[..., group * per_group:(group + 1) * per_group]
        weights = kernel[..., group * outputs_per_group:(group + 1) * outputs_per_group]
        pieces.append(convolve(inputs, weights, strides, padding, dilation_rate))
    return concatenate(pieces, axis=-1)
