"""Keras's core ops that are about tensors rather than math: convert_to_tensor,
convert_to_numpy, is_tensor, shape, dtype, ndim, size, saturate_cast,
stop_gradient, custom_gradient, view, vectorize.

``custom_gradient`` works as Keras's decorator: the decorated function
returns ``(output, grad_fn)``; the forward runs without recording a graph
and backward calls ``grad_fn(upstream)`` (one upstream Tensor per output),
which returns one gradient per Tensor argument.
"""

__all__ = ["convert_to_tensor", "convert_to_numpy", "is_tensor", "shape", "dtype", "ndim", "size", "saturate_cast",
           "stop_gradient", "custom_gradient", "view", "vectorize"]

import functools

import numpy

from minikeras.autograd import Function, Tensor, no_grad
from minikeras.autograd.tensor import from_array
from minikeras.backend.dtypes import finfo, is_float_dtype
from minikeras.device import to_host
from minikeras.ops.math._elementwise import call_without_gradient, operand
from minikeras.ops.math._operands import _as_tensor
from minikeras.backend import keras_helpers
from minikeras._support.argument_validation import (check_dtype, is_int, validate_dtype, validate_flag,
                                                 validate_tensor_input)


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """``x`` as a Tensor on the current device (``keras.ops.convert_to_tensor``).

    A Tensor of the right dtype is returned as is; one of another dtype is
    cast. Python lists and numbers become float32 when they hold floats and
    int32 when they hold ints, as in Keras; arrays keep their dtype.

    Args:
        x: a Tensor, array, number or nested list.
        dtype: the dtype wanted (default: see above).
        sparse: must be falsy: minikeras has no sparse tensors.
        ragged: must be falsy: minikeras has no ragged tensors.

    Raises:
        ValueError: ``sparse=True`` or ``ragged=True``, or ``x`` is not numeric.
    """
    if ragged is not None and validate_flag("convert_to_tensor", "ragged", ragged):
        raise ValueError("convert_to_tensor: ragged=True is not supported (minikeras has no ragged tensors).")
    if sparse is not None and validate_flag("convert_to_tensor", "sparse", sparse):
        raise ValueError("convert_to_tensor: sparse=True is not supported (minikeras has no sparse tensors).")
    if dtype is not None:
        dtype = validate_dtype("convert_to_tensor", dtype)
    if isinstance(x, Tensor):
        return x if dtype is None or x.dtype == numpy.dtype(dtype) else x.astype(dtype)
    if dtype is None and not hasattr(x, "dtype"):
        try:
            kind = numpy.asarray(x).dtype.kind
        except ValueError:  # a ragged list
            raise ValueError(f"convert_to_tensor expects numbers in a rectangular nesting, received a ragged "
                             f"{type(x).__name__}.") from None
        if kind == "f":
            dtype = "float32"
        elif kind in "iu":
            dtype = "int32"
        elif kind != "b":
            raise ValueError(f"convert_to_tensor expects numbers, received {type(x).__name__} "
                             f"of dtype {numpy.asarray(x).dtype}.")
    return Tensor(x, dtype=dtype)


def shape(x):
    """The shape of a tensor or array as a tuple of ints (``keras.ops.shape``).

    Args:
        x: a Tensor, a NumPy/CuPy array, or anything ``numpy.shape`` accepts
            (a number, a nested list).

    Returns:
        A tuple of Python ints (a KerasTensor's unknown sizes are None, as in Keras).
    """
    if isinstance(x, Tensor) or hasattr(x, "shape"):
        return tuple(None if size is None else int(size) for size in x.shape)
    validate_tensor_input("shape", x, allow_sequence=True)  # None, strings: refused (Keras converts first)
    return tuple(numpy.shape(x))


def convert_to_numpy(x):
    """``x`` as a NumPy array on the host (Tensors are copied from their device)."""
    if isinstance(x, Tensor):
        return x.numpy()
    return numpy.asarray(to_host(x) if hasattr(x, "shape") else x)


def is_tensor(x):
    """Whether ``x`` is a minikeras Tensor (Variables included)."""
    return isinstance(x, Tensor)


def dtype(x):
    """The dtype name of ``x`` as Keras's standardised string (``"float32"``; Python floats: ``"float32"``)."""
    if isinstance(x, float):
        return "float32"
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int32"
    return numpy.dtype(getattr(x, "dtype", None) or numpy.asarray(x).dtype).name


def ndim(x):
    """The number of dimensions of ``x``."""
    validate_tensor_input("ndim", x, allow_sequence=True)
    return len(x.shape) if hasattr(x, "shape") else numpy.ndim(x)


def size(x):
    """The number of elements of ``x`` (a Python int)."""
    validate_tensor_input("size", x, allow_sequence=True)
    shape = x.shape if hasattr(x, "shape") else numpy.shape(x)
    return int(numpy.prod(shape, dtype=numpy.int64))


def saturate_cast(x, dtype):  # noqa: A002
    """Cast to ``dtype``, clipping to its range first (no wrap-around, NaN of floats to ints gives 0)."""
    target = validate_dtype("saturate_cast", keras_helpers.floatx() if dtype is None else dtype)  # None: floatx
    x = _as_tensor("saturate_cast", operand("saturate_cast", x))
    if target.kind in "iu":
        info = numpy.iinfo(target)
        low, high = float(info.min), float(info.max)
        if x.dtype.kind in "iu":
            source = numpy.iinfo(x.dtype)
            low, high = max(low, source.min), min(high, source.max)
            return call_without_gradient("saturate_cast",
                                         lambda xp, a: xp.clip(a, int(low), int(high)).astype(target), x)

        def compute(xp, a):
            # A bound the float dtype cannot hold (int32's max in float32) rounds up past it;
            # clip at the largest float below it instead.
            upper = numpy.asarray(high, a.dtype)
            if float(upper) > high:
                upper = numpy.nextafter(upper, numpy.asarray(0, a.dtype))
            clipped = xp.clip(xp.nan_to_num(a, nan=0.0), low, float(upper))
            return clipped.astype(target)

        return call_without_gradient("saturate_cast", compute, x)
    if is_float_dtype(target) and is_float_dtype(x.dtype) and finfo(target).max < finfo(x.dtype).max:
        info = finfo(target)
        from minikeras.ops.math.compare import clip

        if x.dtype.itemsize == 2:  # bfloat16 to float16: float16's max rounds up in bfloat16, not in float32
            x = x.astype("float32")
        return clip(x, float(info.min), float(info.max)).astype(target)
    return x.astype(target)


def stop_gradient(variable):
    """``variable`` cut from the graph: the result has no gradient."""
    x = _as_tensor("stop_gradient", operand("stop_gradient", variable))
    return x.detach()


class CustomGradient(Function):
    def __init__(self, function, args, kwargs, positions):
        self.function, self.args, self.kwargs, self.positions = function, args, kwargs, positions

    @property
    def name(self):
        return getattr(self.function, "__name__", "custom_gradient")

    def forward(self, *arrays):
        args = list(self.args)
        for position, array in zip(self.positions, arrays):
            args[position] = from_array(array, self.device)
        with no_grad():
            result = self.function(*args, **self.kwargs)
        if not isinstance(result, (tuple, list)) or len(result) != 2 or not callable(result[1]):
            raise TypeError("custom_gradient: the decorated function must return (output, grad_fn).")
        output, self.grad_fn = result
        self.several = isinstance(output, (tuple, list))
        outputs = tuple(output) if self.several else (output,)
        arrays_out = tuple(_as_tensor("custom_gradient", value).data for value in outputs)
        return arrays_out if self.several else arrays_out[0]

    def backward(self, *grads):
        upstream = [from_array(grad, self.device) for grad in grads]
        with no_grad():
            result = self.grad_fn(*upstream)
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if len(result) != len(self.positions):
            raise ValueError(f"custom_gradient: grad_fn returned {len(result)} gradients for "
                             f"{len(self.positions)} tensor arguments.")
        return tuple(None if value is None else _as_tensor("custom_gradient", value).data for value in result)


def custom_gradient(f):
    """Decorate ``f`` (returning ``(output, grad_fn)``) so that backward uses ``grad_fn``.

    Example:
        ```python
        @ops.custom_gradient
        def log1pexp(x):
            e = ops.exp(x)

            def grad(*args, upstream=None):
                if upstream is None:
                    (upstream,) = args
                return upstream * (1.0 - 1.0 / (1 + e))

            return ops.log(1 + e), grad
        ```
    """
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        positions = [i for i, value in enumerate(args) if isinstance(value, Tensor)]
        return CustomGradient(f, args, kwargs, positions).apply(*[args[i] for i in positions])

    return wrapper


def view(x, dtype=None):  # noqa: A002
    """The bytes of ``x`` reinterpreted as ``dtype`` (the last axis rescales); no gradient."""
    x = _as_tensor("view", operand("view", x))
    if dtype is None:
        return x
    target = validate_dtype("view", dtype)
    if x.ndim == 0 and target.itemsize != x.dtype.itemsize:
        raise ValueError(f"view: a scalar of {x.dtype} cannot be viewed as {target} (different sizes).")
    if x.ndim and (x.shape[-1] * x.dtype.itemsize) % target.itemsize:
        raise ValueError(f"view: the last axis of {x.shape} in {x.dtype} does not divide into {target}.")
    # (ascontiguousarray makes a 0-d array 1-d: a scalar's view is reshaped back to a scalar)
    return call_without_gradient("view", lambda xp, a: xp.ascontiguousarray(a).view(target).reshape(
        a.shape[:-1] + (-1,) if a.ndim else ()), x)


def _parse_signature(signature):
    inputs_text, output_text = signature.replace(" ", "").split("->")

    def groups(text):
        import re

        return [tuple(part for part in group.split(",") if part) for group in re.findall(r"\(([^)]*)\)", text)]

    return groups(inputs_text), groups(output_text)


def vectorize(pyfunc, excluded=None, signature=None):
    """``numpy.vectorize`` for tensor functions: ``pyfunc`` runs on each element (or each core slice
    of ``signature``, e.g. ``"(n),(n)->()"``) and the results are stacked back (eagerly)."""
    from minikeras.ops.array.joining import stack
    from minikeras.ops.array.reshaping import reshape

    if not callable(pyfunc):
        raise TypeError(f"vectorize: pyfunc must be a function, received {type(pyfunc).__name__} {pyfunc!r:.60}.")
    if excluded is not None and (not isinstance(excluded, (set, frozenset, tuple, list)) or not all(
            is_int(item) and item >= 0 or isinstance(item, str) for item in excluded)):
        raise TypeError(f"vectorize: excluded must be a set of argument positions (or names), received "
                        f"{excluded!r:.60}.")
    if signature is not None and (not isinstance(signature, str) or "->" not in signature):
        raise ValueError(f"vectorize: signature must be a string such as '(n),(n)->()', received {signature!r:.60}.")
    excluded = set(excluded or ())

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        positions = [i for i in range(len(args)) if i not in excluded]
        tensors = {i: _as_tensor("vectorize", operand("vectorize", args[i])) for i in positions}
        cores = _parse_signature(signature)[0] if signature else [()] * len(positions)
        if len(cores) != len(positions):
            raise ValueError(f"vectorize: signature {signature!r} names {len(cores)} inputs, received "
                             f"{len(positions)}.")
        batch_shapes = [tensors[i].shape[:tensors[i].ndim - len(core)] for i, core in zip(positions, cores)]
        batch = numpy.broadcast_shapes(*batch_shapes) if batch_shapes else ()
        from minikeras.ops.array.arranging import broadcast_to

        flat = {}
        for i, core in zip(positions, cores):
            core_shape = tensors[i].shape[tensors[i].ndim - len(core):]
            flat[i] = reshape(broadcast_to(tensors[i], batch + core_shape), (-1,) + core_shape)
        count = int(numpy.prod(batch, dtype=numpy.int64))
        results = []
        for index in range(count):
            call_args = list(args)
            for i in positions:
                call_args[i] = flat[i][index]
            results.append(pyfunc(*call_args, **kwargs))
        if isinstance(results[0], (tuple, list)):
            return tuple(reshape(stack([r[k] for r in results]), batch + tuple(results[0][k].shape))
                         for k in range(len(results[0])))
        first = _as_tensor("vectorize", results[0])
        return reshape(stack([_as_tensor("vectorize", r) for r in results]), batch + first.shape)

    return wrapped
