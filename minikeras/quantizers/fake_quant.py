"""``fake_quant_with_min_max_vars`` (Keras 3's quantization-aware training op)."""
from minikeras import ops
from minikeras.backend.dtypes import is_float_dtype
from minikeras.ops.nn.fake_quant import FakeQuantWithMinMaxVars

__all__ = ["fake_quant_with_min_max_vars"]


def fake_quant_with_min_max_vars(inputs, min_vals, max_vals, num_bits=8, narrow_range=False, axis=None):
    """Quantize ``inputs`` to ``2**num_bits`` levels over ``[min_vals, max_vals]``
    and back to floats, per tensor or per channel of ``axis``.

    The range is nudged so that zero is a level; the gradient passes
    unchanged inside the range and goes to ``min_vals`` / ``max_vals``
    where the inputs were clamped, so that a layer can train its range
    (ops/nn/fake_quant.py).

    Args:
        inputs: a float tensor.
        min_vals, max_vals: scalars, or one value per index of ``axis``.
        num_bits: bits of the levels (8: 256 levels).
        narrow_range: use levels ``[1, 2**num_bits - 1]``.
        axis: the channel axis, or None for one range.

    Returns:
        A tensor of the inputs' dtype and shape.

    Raises:
        ValueError: an ``axis`` outside the inputs' rank, or ranges whose
            size does not match that axis. TypeError: integer inputs.

    Example:
        >>> fake_quant_with_min_max_vars(numpy.array([-2.0, 0.3, 2.0], "float32"), -1.0, 1.0).numpy()
        array([-1.0039216 ,  0.3019608 ,  0.99607843], dtype=float32)
    """
    inputs = ops.convert_to_tensor(inputs)
    if not is_float_dtype(inputs.dtype):
        raise TypeError(f"fake_quant_with_min_max_vars expects float inputs, received dtype {inputs.dtype}.")
    min_vals, max_vals = ops.convert_to_tensor(min_vals), ops.convert_to_tensor(max_vals)
    num_bits = int(num_bits)
    if axis is not None:
        if not -inputs.ndim <= axis < inputs.ndim:
            raise ValueError(f"fake_quant_with_min_max_vars: axis {axis} is out of range for inputs of rank "
                             f"{inputs.ndim}.")
        axis = axis % inputs.ndim
        channels = inputs.shape[axis]
        for name, value in (("min_vals", min_vals), ("max_vals", max_vals)):
            if value.size not in (1, channels):
                raise ValueError(f"fake_quant_with_min_max_vars expects {name} with 1 or {channels} values (the "
                                 f"size of axis {axis}), received shape {tuple(value.shape)}.")
    elif min_vals.size != 1 or max_vals.size != 1:
        raise ValueError("fake_quant_with_min_max_vars expects scalar min_vals and max_vals without an axis, "
                         f"received shapes {tuple(min_vals.shape)} and {tuple(max_vals.shape)}.")
    return FakeQuantWithMinMaxVars(num_bits, bool(narrow_range), axis).apply(inputs, min_vals, max_vals)
