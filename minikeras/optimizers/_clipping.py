"""Gradient clipping with Keras semantics: by norm, by value, by global norm."""
import contextlib

import numpy


def clip_gradients(grads, variables, clipnorm=None, clipvalue=None, global_clipnorm=None):
    """Clip gradient arrays as Keras does (at most one option is set).

    Args:
        grads: gradient arrays, one per variable.
        variables: the Tensors they belong to (for devices).
        clipnorm: scale each gradient to an L2 norm of at most this.
        clipvalue: clip each element to ``[-clipvalue, clipvalue]``.
        global_clipnorm: scale all gradients together to a joint L2 norm of
            at most this.

    Returns:
        New arrays when clipping is on, else ``grads`` itself (never
        modified in place: they may be the caller's arrays).
    """
    if global_clipnorm:
        return _clip_by_global_norm(grads, variables, global_clipnorm)
    if not (clipnorm or clipvalue):
        return grads
    clipped = []
    for grad, variable in zip(grads, variables):
        with variable.device.activate():
            if clipnorm:
                clipped.append(_clip_by_norm(grad, variable.device.xp, clipnorm))
            else:
                clipped.append(variable.device.xp.clip(grad, -clipvalue, clipvalue))
    return clipped


def _clip_by_norm(grad, xp, clipnorm):
    # Keras: g * clipnorm / max(||g||, clipnorm), applied even below the norm.
    norm = xp.sqrt(xp.sum(grad * grad))
    return grad * clipnorm / xp.maximum(norm, clipnorm)


def _clip_by_global_norm(grads, variables, clipnorm):
    # Keras: scale = clipnorm * min(1 / norm, 1 / clipnorm). The norm stays on
    # the device when all gradients share one (no host round trip per step).
    devices = {variable.device for variable in variables}
    squares = []
    for grad, variable in zip(grads, variables):
        with variable.device.activate():
            squares.append(variable.device.xp.sum(grad * grad))
    if len(devices) == 1:
        (device,) = devices
        xp, context = device.xp, device.activate()
    else:
        xp, context = numpy, contextlib.nullcontext()
        squares = [numpy.float64(float(square)) for square in squares]
    with context, numpy.errstate(divide="ignore", invalid="ignore"):
        total = squares[0]
        for square in squares[1:]:
            total = total + square
        norm = xp.sqrt(total)
        # An inf/NaN norm makes the scale NaN (as in Keras) rather than silently zeroing the update.
        scale = clipnorm * xp.minimum(1.0 / norm, 1.0 / clipnorm) + (norm - norm)
    clipped = []
    for grad, variable in zip(grads, variables):
        with variable.device.activate():
            clipped.append(grad * scale.astype(grad.dtype))
    return clipped
