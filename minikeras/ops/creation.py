"""Tensors made from nothing: zeros, ones, full, arange, eye, *_like."""

__all__ = ["zeros", "ones", "full", "arange", "eye", "zeros_like", "ones_like"]

import numpy

from minikeras.autograd import Tensor
from minikeras.autograd.tensor import from_array
from minikeras.device import get_device, placement_device
from minikeras.device import op_errors
from minikeras._support.argument_validation import (is_int, validate_dtype, validate_flag, validate_number, validate_shape,
                                                    validate_tensor_input)


def _target(device):
    return get_device(device) if device is not None else placement_device()


def _make(op_name, builder, dtype, device, requires_grad=False):
    target = _target(device)
    dtype = validate_dtype(op_name, "float32" if dtype is None else dtype)
    requires_grad = validate_flag(op_name, "requires_grad", requires_grad)
    with target.activate(), op_errors.translated(target, op_name):
        data = builder(target.xp, dtype)
    if requires_grad:
        return Tensor(data, requires_grad=True, device=target)
    return from_array(data, target)


def zeros(shape, dtype="float32", device=None, requires_grad=False):
    """A tensor of zeros."""
    shape = validate_shape("zeros", shape)
    return _make("zeros", lambda xp, dt: xp.zeros(shape, dtype=dt), dtype, device, requires_grad)


def ones(shape, dtype="float32", device=None, requires_grad=False):
    """A tensor of ones."""
    shape = validate_shape("ones", shape)
    return _make("ones", lambda xp, dt: xp.ones(shape, dtype=dt), dtype, device, requires_grad)


def full(shape, fill_value, dtype="float32", device=None, requires_grad=False):
    """A tensor filled with ``fill_value`` (a number; None is refused, not NaN)."""
    shape = validate_shape("full", shape)
    validate_tensor_input("full", fill_value)
    if getattr(fill_value, "ndim", 0) != 0:
        raise ValueError(f"full: fill_value must be a single number, received shape {tuple(fill_value.shape)}.")
    if hasattr(fill_value, "item"):
        fill_value = fill_value.item()
    _check_fill("full", fill_value, "float32" if dtype is None else dtype)
    return _make("full", lambda xp, dt: xp.full(shape, fill_value, dtype=dt), dtype, device, requires_grad)


def _check_fill(op_name, fill_value, dtype):
    """Refuse a fill value the dtype cannot hold at all (Keras refuses them too):
    a complex number in a real dtype (NumPy would drop its imaginary part), a
    NaN or an infinity in an integer one (NumPy raises deep inside)."""
    dtype = validate_dtype(op_name, dtype)
    if isinstance(fill_value, complex) and dtype.kind != "c":
        raise TypeError(f"{op_name}: fill_value {fill_value!r} is complex but the dtype is {dtype}; pass a complex "
                        f"dtype such as 'complex64' to keep its imaginary part.")
    if dtype.kind in "biu" and isinstance(fill_value, float) and not numpy.isfinite(fill_value):
        raise ValueError(f"{op_name}: fill_value {fill_value!r} cannot be held by dtype {dtype}.")


def arange(start, stop=None, step=None, dtype=None, device=None):
    """Evenly spaced values in ``[start, stop)``; ``step=None`` (Keras's default) is 1.

    The dtype is Keras's ``result_type`` of the arguments: Python ints give
    int32 (int64 past its range), floats float32, and NumPy scalars and 0-d
    arrays their own dtype (``np.int64(5)`` gives int64, as in Keras).
    """
    from minikeras.ops._promotion import result_type

    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    given = (start, stop, step)
    start, stop, step = (value[()] if isinstance(value, numpy.ndarray) and value.ndim == 0 else value
                         for value in given)
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        validate_number("arange", name, value)
    if step == 0:
        raise ValueError(f"arange: step must not be 0, received start={start!r}, stop={stop!r}, step=0.")
    if dtype is None:
        if all(type(v) is int for v in (start, stop, step)) and not all(-2**31 <= v < 2**31 for v in (start, stop, step)):
            dtype = "int64"  # past int32's range
        else:  # Keras: result_type of each argument's dtype, or of its Python type
            dtype = result_type(*(numpy.dtype(v.dtype) if hasattr(v, "dtype") else v for v in given))
    return _make("arange", lambda xp, dt: xp.arange(start, stop, step, dtype=dt), dtype, device)


def eye(n, m=None, dtype="float32", device=None):
    """An ``n x m`` identity matrix."""
    n, m = validate_shape("eye", (n, n if m is None else m), name="size")
    return _make("eye", lambda xp, dt: xp.eye(n, m, dtype=dt), dtype, device)


def zeros_like(x, dtype=None, device=None):
    """Zeros with ``x``'s shape, dtype and device (unless given)."""
    x = _like("zeros_like", x)
    dtype = x.dtype if dtype is None else validate_dtype("zeros_like", dtype)
    return zeros(x.shape, dtype, device or getattr(x, "device", None))


def ones_like(x, dtype=None, device=None):
    """Ones with ``x``'s shape, dtype and device (unless given)."""
    x = _like("ones_like", x)
    dtype = x.dtype if dtype is None else validate_dtype("ones_like", dtype)
    return ones(x.shape, dtype, device or getattr(x, "device", None))


def _like(op_name, x):
    """``x`` checked, and as an array of Keras's dtype when it is a plain Python number
    (int32, float32, bool, complex64)."""
    validate_tensor_input(op_name, x)
    if hasattr(x, "shape"):
        return x
    from minikeras.ops._promotion import result_type

    return numpy.asarray(x, dtype=result_type(x))
