"""What the fused recurrent sequences share: activations and their
derivatives on raw arrays (in place), and the time-major layout."""

from minikeras.utils.argument_validation import as_tensor

__all__ = []


def operands(op_name, x, *weights):
    """``x`` and the weights/states as Tensors (None stays None), ``x`` a
    float ``(batch, time, features)``."""
    x = as_tensor(op_name, x, allow_bool=False, allow_complex=False)
    if x.ndim != 3 or x.dtype.kind != "f":
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
