"""Tensors made from nothing: zeros, ones, full, arange, eye, *_like."""

__all__ = ["zeros", "ones", "full", "arange", "eye", "zeros_like", "ones_like"]

import numpy

from minikeras.autograd import Tensor
from minikeras.autograd.function import _wrap
from minikeras.device import get_device, placement_device


def _target(device):
    return get_device(device) if device is not None else placement_device()


def _make(builder, dtype, device, requires_grad=False):
    target = _target(device)
    dtype = numpy.dtype(dtype or "float32")
    with target.activate():
        data = builder(target.xp, dtype)
    if requires_grad:
        return Tensor(data, requires_grad=True, device=target)
    return _wrap(data, target, None, 0)


def _shape(shape):
    if isinstance(shape, (int, numpy.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def zeros(shape, dtype="float32", device=None, requires_grad=False):
    """A tensor of zeros."""
    return _make(lambda xp, dt: xp.zeros(_shape(shape), dtype=dt), dtype, device, requires_grad)


def ones(shape, dtype="float32", device=None, requires_grad=False):
    """A tensor of ones."""
    return _make(lambda xp, dt: xp.ones(_shape(shape), dtype=dt), dtype, device, requires_grad)


def full(shape, fill_value, dtype="float32", device=None, requires_grad=False):
    """A tensor filled with ``fill_value``."""
    return _make(lambda xp, dt: xp.full(_shape(shape), fill_value, dtype=dt), dtype, device, requires_grad)


def arange(start, stop=None, step=1, dtype=None, device=None):
    """Evenly spaced values in ``[start, stop)`` (int64 for ints, else float32)."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = "int64" if all(isinstance(v, (int, numpy.integer)) for v in (start, stop, step)) else "float32"
    return _make(lambda xp, dt: xp.arange(start, stop, step, dtype=dt), dtype, device)


def eye(n, m=None, dtype="float32", device=None):
    """An ``n x m`` identity matrix."""
    return _make(lambda xp, dt: xp.eye(n, m, dtype=dt), dtype, device)


def zeros_like(x, dtype=None, device=None):
    """Zeros with ``x``'s shape, dtype and device (unless given)."""
    return zeros(x.shape, dtype or x.dtype, device or getattr(x, "device", None))


def ones_like(x, dtype=None, device=None):
    """Ones with ``x``'s shape, dtype and device (unless given)."""
    return ones(x.shape, dtype or x.dtype, device or getattr(x, "device", None))
