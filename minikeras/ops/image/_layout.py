"""Shared argument handling of the image ops: data_format, batching, channels-last views."""
from minikeras.ops.array.reshaping import expand_dims, squeeze, transpose
from minikeras.ops.math._elementwise import operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.ops.nn.keras_functions import _data_format


def images_last(op_name, images, data_format, ranks=(3, 4)):
    """``images`` as a channels-last batch, and a function that restores the caller's layout.

    Raises:
        ValueError: the rank is not in ``ranks`` (a single image or a batch).
    """
    data_format = _data_format(op_name, data_format)
    x = _as_tensor(op_name, operand(op_name, images))
    if x.ndim not in ranks:
        raise ValueError(f"{op_name}: invalid images rank: expected rank {ranks[0]} (single image) or rank "
                         f"{ranks[-1]} (batch of images), received shape {x.shape}.")
    unbatched = x.ndim == ranks[0]
    if unbatched:
        x = expand_dims(x, 0)
    first = data_format == "channels_first"
    if first:
        x = transpose(x, (0,) + tuple(range(2, x.ndim)) + (1,))

    def restore(y):
        if first:
            y = transpose(y, (0, y.ndim - 1) + tuple(range(1, y.ndim - 1)))
        return squeeze(y, 0) if unbatched else y

    return x, restore
