"""Tensors made from nothing or from a shape: zeros, ones, full, arange, eye,
*_like, and Keras's array, empty, empty_like, full_like, identity, tri,
linspace, logspace, geomspace and the window functions bartlett, blackman,
hamming, hanning, kaiser.

``linspace``/``logspace``/``geomspace`` are compositions (``start + step *
i``), so they take tensor endpoints (vectors give a grid along ``axis``)
and are differentiable in them, as TensorFlow's ``linspace``. Their dtype
is Keras's: float32 unless an endpoint is a float64 tensor or ``dtype``
says otherwise.
"""

__all__ = ["zeros", "ones", "full", "arange", "eye", "zeros_like", "ones_like",
           "array", "empty", "empty_like", "full_like", "identity", "tri", "linspace", "logspace",
           "geomspace", "bartlett", "blackman", "hamming", "hanning", "kaiser"]

import numpy

from minikeras.autograd import Tensor
from minikeras.autograd.tensor import from_array
from minikeras.backend import keras_helpers
from minikeras.backend.dtypes import as_numpy_dtype, is_float_dtype
from minikeras.device import get_device, placement_device
from minikeras.device import op_errors
from minikeras.ops._promotion import result_type
from minikeras.ops.array.reshaping import expand_dims, moveaxis
from minikeras.ops.math._elementwise import operand
from minikeras._support.argument_validation import (is_int, validate_axis, validate_dtype, validate_flag, validate_int,
                                                 validate_number, validate_shape, validate_tensor_input)


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


def eye(N, M=None, k=0, dtype=None):  # noqa: N803  (keras.ops name)
    """An ``N x M`` matrix (default ``N x N``) with ones on the ``k``-th diagonal, float32 by default."""
    rows = validate_int("eye", "N", N, minimum=0)
    columns = rows if M is None else validate_int("eye", "M", M, minimum=0)
    k = validate_int("eye", "k", k)
    dtype = "float32" if dtype is None else validate_dtype("eye", dtype)
    return _make("eye", lambda xp, dt: xp.eye(rows, columns, k, dtype=dt), dtype, None)


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
    return numpy.asarray(x, dtype=result_type(x))


def array(x, dtype=None):
    """``x`` as a new tensor (``keras.ops.array``; lists of floats become float32)."""
    from minikeras.ops.core import convert_to_tensor

    if isinstance(x, Tensor):
        return Tensor(x.detach().data.copy(), dtype=dtype, device=x.device)
    return convert_to_tensor(x, dtype)


def empty(shape, dtype=None):
    """An uninitialised tensor of ``shape`` (zeros here: reading it is still defined)."""
    dtype = validate_dtype("empty", dtype) if dtype is not None else "float32"
    return zeros(validate_shape("empty", shape), dtype)


def empty_like(x, dtype=None):
    """An uninitialised tensor like ``x`` (zeros here)."""
    x = operand("empty_like", x)
    dtype = validate_dtype("empty_like", dtype) if dtype is not None else result_type(x)
    return zeros(numpy.shape(x) if not hasattr(x, "shape") else x.shape, dtype)


def full_like(x, fill_value, dtype=None):
    """A tensor like ``x`` filled with ``fill_value``: a number, or an array
    broadcast to ``x``'s shape (``numpy.full_like``), cast to ``dtype`` (default
    ``x``'s dtype: ``full_like(0, 1.5)`` is the int32 1, as in Keras, a Python
    int being int32 and a float float32)."""
    x = operand("full_like", x)
    shape = numpy.shape(x) if not hasattr(x, "shape") else x.shape
    dtype = validate_dtype("full_like", dtype) if dtype is not None else result_type(x)
    if numpy.ndim(fill_value) == 0:
        return full(shape, fill_value, dtype)
    from minikeras.ops.array.arranging import broadcast_to
    from minikeras.ops.core import convert_to_tensor

    values = fill_value.detach() if isinstance(fill_value, Tensor) else convert_to_tensor(fill_value)
    try:
        fits = numpy.broadcast_shapes(tuple(values.shape), tuple(shape)) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"full_like: fill_value of shape {tuple(values.shape)} does not broadcast to x's shape "
                         f"{tuple(shape)}.")
    return broadcast_to(values.astype(as_numpy_dtype(dtype)), tuple(shape))  # a copy, as numpy.full_like


def identity(n, dtype=None):
    """The ``n x n`` identity matrix."""
    n = validate_int("identity", "n", n, minimum=0)
    dtype = validate_dtype("identity", dtype) if dtype is not None else "float32"
    return _make("identity", lambda xp, dt: xp.eye(n, dtype=dt), dtype, None)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803  (keras.ops name)
    """An ``N x M`` matrix of ones at and below the ``k``-th diagonal."""
    rows = validate_int("tri", "N", N, minimum=0)
    columns = rows if M is None else validate_int("tri", "M", M, minimum=0)
    k = validate_int("tri", "k", k)
    dtype = validate_dtype("tri", dtype) if dtype is not None else "float32"
    return _make("tri", lambda xp, dt: xp.tri(rows, columns, k, dtype=dt), dtype or "float32", None)


def _endpoints(op_name, start, stop):
    """``start`` and ``stop`` checked: numbers, tensors, or (nested) lists of numbers made tensors."""
    from minikeras.ops.core import convert_to_tensor

    checked = []
    for value in (start, stop):
        validate_tensor_input(op_name, value, allow_bool=False, allow_complex=False, allow_sequence=True)
        checked.append(convert_to_tensor(value) if isinstance(value, (list, tuple)) else value)
    return checked


def _check_axis(op_name, axis, start, stop):
    """``axis`` of the result (one more axis than the endpoints), checked as Keras's does."""
    ndim = max(numpy.ndim(start), numpy.ndim(stop)) if not isinstance(start, Tensor) and not isinstance(
        stop, Tensor) else max(getattr(start, "ndim", 0), getattr(stop, "ndim", 0))
    return validate_axis(op_name, axis, ndim + 1)


def _endpoint(op_name, value, dtype):
    value = operand(op_name, value)
    if not isinstance(value, Tensor):
        value = Tensor(numpy.asarray(value), dtype=dtype)
    return value.astype(dtype) if value.dtype != dtype else value


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless ``endpoint=False``).

    Returns:
        The values, and the step too when ``retstep``.
    """
    num = validate_int("linspace", "num", num, minimum=0)
    endpoint = validate_flag("linspace", "endpoint", endpoint)
    retstep = validate_flag("linspace", "retstep", retstep)
    dtype = validate_dtype("linspace", dtype) if dtype is not None else None
    start, stop = _endpoints("linspace", start, stop)
    axis = _check_axis("linspace", axis, start, stop)
    compute = dtype if dtype is not None else result_type(start, stop, 1.0)
    if not is_float_dtype(compute):
        compute = numpy.dtype("float64") if dtype is not None else numpy.dtype("float32")
    start_t, stop_t = _endpoint("linspace", start, compute), _endpoint("linspace", stop, compute)
    divisor = (num - 1) if endpoint else num
    step = (stop_t - start_t) / divisor if divisor > 0 else (stop_t - start_t) * numpy.nan
    positions = Tensor(numpy.arange(num).astype(compute), device=start_t.device)
    ndim = max(start_t.ndim, stop_t.ndim)
    positions = positions.reshape((num,) + (1,) * ndim)
    values = start_t + positions * (step if divisor > 0 else (stop_t - start_t) * 0)
    if endpoint and num > 1:
        from minikeras.ops.array.joining import concatenate

        values = concatenate([values[:-1], expand_dims(stop_t + values[-1] * 0, 0)], 0)
    if ndim:
        values = moveaxis(values, 0, axis)
    if dtype is not None and as_numpy_dtype(dtype) != compute:
        values = values.astype(dtype)
    return (values, step) if retstep else values


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``."""
    validate_number("logspace", "base", base)
    dtype = validate_dtype("logspace", dtype) if dtype is not None else None
    start, stop = _endpoints("logspace", start, stop)
    axis = _check_axis("logspace", axis, start, stop)
    exponents = linspace(start, stop, num, validate_flag("logspace", "endpoint", endpoint), dtype=None, axis=axis)
    values = float(base) ** exponents
    return values.astype(dtype) if dtype is not None else values


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values from ``start`` to ``stop`` evenly spaced on a log scale (same-signed endpoints).

    Raises:
        ValueError: an endpoint is 0.
    """
    from minikeras.ops.math.abs_sign import abs as _abs, sign
    from minikeras.ops.math.exp_log import exp, log

    num = validate_int("geomspace", "num", num, minimum=0)
    endpoint = validate_flag("geomspace", "endpoint", endpoint)
    dtype = validate_dtype("geomspace", dtype) if dtype is not None else None
    start, stop = _endpoints("geomspace", start, stop)
    axis = _check_axis("geomspace", axis, start, stop)
    # Keras computes geomspace in floatx whatever the endpoints' dtype (TensorFlow casts them, torch's
    # result_type(start, stop, float) gives floatx too), unlike linspace.
    compute = dtype if dtype is not None and is_float_dtype(dtype) else numpy.dtype(keras_helpers.floatx())
    start_t, stop_t = _endpoint("geomspace", start, compute), _endpoint("geomspace", stop, compute)
    if bool((start_t.numpy() == 0).any()) or bool((stop_t.numpy() == 0).any()):
        raise ValueError("geomspace: the endpoints must not be 0.")
    # Built along axis 0 (where the endpoints broadcast), moved to ``axis`` at the end.
    values = sign(start_t) * exp(linspace(log(_abs(start_t)), log(_abs(stop_t)), num, endpoint))
    if num and endpoint:
        from minikeras.ops.array.joining import concatenate
        from minikeras.ops.array.indexing import getitem

        first = expand_dims(start_t + getitem(values, 0) * 0, 0)  # the endpoints exactly
        middle = [getitem(values, slice(1, -1))] if num > 2 else []
        last = [expand_dims(stop_t + getitem(values, -1) * 0, 0)] if num > 1 else []
        values = concatenate([first] + middle + last, 0)
    if values.ndim > 1:
        values = moveaxis(values, 0, axis)
    return values.astype(dtype) if dtype is not None else values


def _window(op_name, x, build):
    if getattr(x, "ndim", None) == 0 and getattr(x, "dtype", None) is not None and x.dtype.kind in "iu":
        x = int(x.item())  # a 0-d integer array is a length; a longer array is none (Keras: an int)
    length = validate_int(op_name, "x", x, minimum=0)
    return _make(op_name, lambda xp, dt: build(xp, length).astype(dt), "float32", None)


def bartlett(x):
    """The Bartlett (triangular) window of length ``x``."""
    return _window("bartlett", x, lambda xp, n: xp.bartlett(n))


def blackman(x):
    """The Blackman window of length ``x``."""
    return _window("blackman", x, lambda xp, n: xp.blackman(n))


def hamming(x):
    """The Hamming window of length ``x``."""
    return _window("hamming", x, lambda xp, n: xp.hamming(n))


def hanning(x):
    """The Hann window of length ``x``."""
    return _window("hanning", x, lambda xp, n: xp.hanning(n))


def kaiser(x, beta):
    """The Kaiser window of length ``x`` and shape ``beta``."""
    validate_number("kaiser", "beta", beta)
    return _window("kaiser", x, lambda xp, n: xp.kaiser(n, float(beta)))
