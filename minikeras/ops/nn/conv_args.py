"""Argument checks shared by the convolution ops."""
from minikeras.ops._checks import shape_of
from minikeras.ops.nn.sliding_window import window_geometry, as_pair, as_single, check_padding
from minikeras._support.argument_validation import validate_tensor_input


def conv_geometry(op_name, x, kernel, rank, strides, padding, dilation_rate, kernel_in_axis=-2):
    """Check a convolution's arguments and return the WindowGeometry of its 4-D view.

    Args:
        op_name: the op, for error messages.
        x, kernel: the operands (rank + 2 dimensions each).
        rank: 1 or 2 spatial dimensions.
        strides, padding, dilation_rate: as the ops take them.
        kernel_in_axis: the kernel axis that must equal the input channels.

    Raises:
        ValueError: see conv2d.
    """
    validate_tensor_input(op_name, x, allow_bool=False, allow_complex=False)
    validate_tensor_input(op_name, kernel, allow_bool=False, allow_complex=False)
    x_shape, kernel_shape = shape_of(x), shape_of(kernel)
    axes = "(batch, height, width, channels)" if rank == 2 else "(batch, width, channels)"
    if len(x_shape) != rank + 2:
        raise ValueError(f"{op_name} expects a {rank + 2}-D input {axes}, received shape {x_shape}.")
    if len(kernel_shape) != rank + 2:
        raise ValueError(
            f"{op_name} expects a {rank + 2}-D kernel, received kernel shape {kernel_shape} for input shape {x_shape}."
        )
    if x_shape[-1] != kernel_shape[kernel_in_axis]:
        raise ValueError(
            f"{op_name}: the input has {x_shape[-1]} channels (shape {x_shape}) but the kernel (shape "
            f"{kernel_shape}) expects {kernel_shape[kernel_in_axis]} on its axis {kernel_in_axis % (rank + 2)}."
        )
    if min(kernel_shape) < 1:
        raise ValueError(f"{op_name}: the kernel has an empty axis, shape {kernel_shape}.")
    if rank == 2:
        strides = as_pair(op_name, "strides", strides)
        dilation = as_pair(op_name, "dilation_rate", dilation_rate)
        padding = check_padding(op_name, padding)
        images_shape, window = x_shape, kernel_shape[:2]
    else:
        strides = (1, as_single(op_name, "strides", strides))
        dilation = (1, as_single(op_name, "dilation_rate", dilation_rate))
        padding = check_padding(op_name, padding, ("valid", "same", "causal"))
        images_shape, window = (x_shape[0], 1, x_shape[1], x_shape[2]), (1, kernel_shape[0])
    note = f"input shape {x_shape} and kernel shape {kernel_shape}"
    return window_geometry(op_name, images_shape, tuple(window), strides, dilation, padding, note)
