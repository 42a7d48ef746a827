"""Operand helpers every op family shares: check and convert an argument to
a Tensor, and compute integer inputs in float32.
"""

from minikeras._support.argument_validation import as_tensor, validate_tensor_input


def _as_tensor(op_name, value, allow_bool=True, allow_complex=True):
    """``value`` as a Tensor: Tensors pass, numbers and arrays are wrapped
    (see :func:`minikeras._support.argument_validation.as_tensor`).

    Raises:
        TypeError: ``value`` is not numeric data, or a bool/complex the op
            does not take.
    """
    return as_tensor(op_name, value, allow_bool, allow_complex)


def _check_operand(op_name, value):
    """Raise TypeError unless ``value`` may be an operand of a binary op."""
    validate_tensor_input(op_name, value)


def _float_array(x):
    """``x`` itself when floating, else ``x`` cast to float32 (ints, bools)."""
    if x.dtype.kind in "fcV":  # V: bfloat16
        return x
    return x.astype("float32")
