"""What the fused recurrent sequences share: activations and their
derivatives on raw arrays (in place), and the time-major layout."""

from minikeras.backend.dtypes import is_float_dtype
from minikeras._support.argument_validation import as_tensor, validate_flag

__all__ = []

# The activations the fused sequences compute (None is linear, as in Keras).
KINDS = ("tanh", "sigmoid", "relu", "hard_sigmoid", "linear", None)


def check_settings(op_name, activations, flags):
    """``activations`` (``{argument: name}``) among :data:`KINDS` and ``flags``
    (``{argument: value}``) bools; returns the flags as bools.

    Raises:
        ValueError: an activation the fused kernels do not compute (an
            unknown name would otherwise run as the identity).
        TypeError: a flag that is not a bool.
    """
    for argument, kind in activations.items():
        if not (kind is None or isinstance(kind, str)) or kind not in KINDS:
            raise ValueError(f"{op_name}: {argument} must be one of {KINDS}, received {kind!r}.")
    return [validate_flag(op_name, argument, value) for argument, value in flags.items()]


def operands(op_name, x, *weights):
    """``x`` and the weights/states as Tensors (None stays None), ``x`` a
    float ``(batch, time, features)``."""
    x = as_tensor(op_name, x, allow_bool=False, allow_complex=False)
    if x.ndim != 3 or not is_float_dtype(x.dtype):
        raise ValueError(f"{op_name}: x must be a float Tensor (batch, time, features), received shape "
                         f"{tuple(x.shape)} and dtype {x.dtype}.")
    return [x] + [None if w is None else as_tensor(op_name, w, allow_bool=False, allow_complex=False)
                  for w in weights]


def activate(xp, kind, source, out=None):
    """``out = kind(source)``, in place on ``source`` when ``out`` is None."""
    if out is None:
        out = source
    elif kind in ("linear", None):
        out[...] = source
    if kind == "tanh":
        xp.tanh(source, out=out)
    elif kind == "sigmoid":
        # 0.5 * tanh(x / 2) + 0.5: sigmoid without exp overflow for large |x|.
        xp.multiply(source, 0.5, out=out)
        xp.tanh(out, out=out)
        out *= 0.5
        out += 0.5
    elif kind == "relu":
        xp.maximum(source, 0, out=out)
    elif kind == "hard_sigmoid":
        xp.multiply(source, 1.0 / 6.0, out=out)
        out += 0.5
        xp.clip(out, 0.0, 1.0, out=out)


def times_derivative(xp, kind, target, output):
    """``target *= kind'(pre)``, the derivative written through the
    activation's ``output`` (every fused activation allows it)."""
    if kind == "tanh":
        target *= 1.0 - output * output
    elif kind == "sigmoid":
        target *= output * (1.0 - output)
    elif kind == "relu":
        target *= output > 0
    elif kind == "hard_sigmoid":
        target *= ((output > 0) & (output < 1)) * (1.0 / 6.0)


def time_major(xp, x, go_backwards):
    """(batch, time, features) -> contiguous (time, batch, features) in
    processing order."""
    return xp.ascontiguousarray((x[:, ::-1] if go_backwards else x).transpose(1, 0, 2))


def batch_major(xp, x, go_backwards):
    """The inverse of :func:`time_major` (for the input's gradient)."""
    return xp.ascontiguousarray((x[::-1] if go_backwards else x).transpose(1, 0, 2))


# ------------------------------------------------------------------ layer


def sequence_outputs(xp, hidden, return_sequences):
    """The op's outputs from the time-major ``hidden`` (steps + 1 rows, the
    initial state first): the last state, after the whole sequence
    batch-major when ``return_sequences``."""
    last = hidden[-1].copy()
    if return_sequences:
        return xp.ascontiguousarray(hidden[1:].transpose(1, 0, 2)), last
    return last


def input_gradients(xp, needs, flat, inputs, kernel, steps, batch, go_backwards):
    """Gradients of the sequence input and of the input kernel from the
    gate gradients ``flat`` (steps * batch, width), as ``(grad_x,
    grad_kernel)``; None where ``needs`` says the input needs none."""
    grad_x = grad_kernel = None
    if needs[0]:
        grad_x = batch_major(xp, (flat @ kernel.T).reshape(steps, batch, -1), go_backwards)
    if needs[1]:
        grad_kernel = inputs.reshape(steps * batch, -1).T @ flat
    return grad_x, grad_kernel
