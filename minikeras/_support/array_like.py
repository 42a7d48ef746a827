"""Arrays from other libraries, converted at the model's boundary.

Keras 3 takes anything array-like as model data: NumPy arrays, its own
tensors, torch tensors, TensorFlow EagerTensors, JAX arrays, pandas
DataFrames and Series, and (as tf.keras did) nested Python lists of
numbers. minikeras recognises them by protocol, never by importing their
library:

- a minikeras Tensor gives its array, on the device where it lives;
- ``__dlpack__`` on a CUDA device (``__dlpack_device__() == (2, id)``) or
  ``__cuda_array_interface__`` lands on the minikeras GPU with that CUDA
  id through the GPU's array module (``cupy.from_dlpack`` /
  ``cupy.asarray``): zero copy, no host round trip;
- ``__array__`` (or ``__array_interface__``) goes through
  ``numpy.asarray`` (zero copy for a torch CPU tensor or a DataFrame of
  one dtype), and a host ``__dlpack__`` through ``numpy.from_dlpack``;
- a torch tensor that requires grad is detached first (``.detach()``),
  as Keras's ``convert_to_numpy`` does.

Strings are data too (a model starting with TextVectorization): NumPy
arrays of ``str``/``bytes`` stay on the host, as Keras keeps them in
``tf.string`` tensors.
"""
import numbers

import numpy

from minikeras import backend
from minikeras.device import registry
from minikeras.device.scope import placement_device
from minikeras.errors import TensorFlowAPIError

_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
_HOST_DLPACK = (_KDL_CPU, _KDL_CUDA_HOST)


_TENSOR = []  # minikeras's Tensor class, looked up on first use (autograd imports this module)
# What is never another library's array (checked first: these calls run every step).
_NOT_FOREIGN = (numpy.ndarray, numpy.generic, numbers.Number, str, bytes, list, tuple, dict, set, frozenset,
                type(None))


def _tensor_type():
    if not _TENSOR:
        from minikeras.autograd.tensor import Tensor

        _TENSOR.append(Tensor)
    return _TENSOR[0]


def speaks_array_protocol(value):
    """True for an object that some array protocol can convert (and is not
    a string, a number or a Python container)."""
    if isinstance(value, (str, bytes, numbers.Number, list, tuple, dict, set, frozenset)) or value is None:
        return False
    return (hasattr(value, "__array__") or hasattr(value, "__dlpack__") or hasattr(value, "__array_interface__")
            or hasattr(value, "__cuda_array_interface__"))


def is_array_like(value):
    """True for a minikeras Tensor, a NumPy/CuPy array, or an object an
    array protocol converts (torch/TF/JAX tensors, pandas objects)."""
    return isinstance(value, _tensor_type()) or backend.is_array(value) or speaks_array_protocol(value)


def foreign_to_array(value):
    """``value`` as an array when another library's object (an array
    protocol speaker: torch, TF, JAX, pandas), else ``value`` unchanged: the
    boundary of losses and metrics, which a custom training loop calls with
    its data pipeline's batches."""
    if isinstance(value, _NOT_FOREIGN) or isinstance(value, _tensor_type()) or backend.is_array(value):
        return value
    if speaks_array_protocol(value):
        return _from_protocol(value, "Loss or metric input")
    return value


def is_nested_numbers(value):
    """True for a non-empty list/tuple whose first elements, followed down,
    end at a number or a string: one array written as Python lists (the rule
    of tf.keras's lists-of-scalars adapter), as opposed to a list of arrays
    (one per model input)."""
    while isinstance(value, (list, tuple)):
        if not value:
            return True
        value = value[0]
    return isinstance(value, (numbers.Number, str, bytes, numpy.generic))


def is_string_array(value):
    """True for a host array of text: ``str``/``bytes`` dtypes, or objects
    that are all ``str``/``bytes``."""
    if not isinstance(value, numpy.ndarray):
        return False
    if value.dtype.kind in "US":
        return True
    return value.dtype.kind == "O" and value.size > 0 and all(isinstance(item, (str, bytes))
                                                            for item in value.reshape(-1).tolist())


def to_array(value, what="Model data"):
    """The array holding ``value``'s data: a NumPy array, or a device array
    for a Tensor or a CUDA array (see the module docstring).

    Args:
        value: a Tensor, an array, an array-like, nested lists of numbers or
            strings, or a number.
        what: who asks, for the error message.

    Raises:
        TypeError: ``value`` is none of these (a dict, a set, an object).
    """
    if isinstance(value, numpy.ndarray):
        return value
    if isinstance(value, _tensor_type()):
        return value.data
    if backend.is_array(value):
        return value
    if isinstance(value, (list, tuple)) and is_nested_numbers(value):
        try:
            return numpy.asarray(value)
        except ValueError as error:  # ragged nesting
            raise ValueError(f"{what}: cannot make an array from a ragged nested list ({error}).") from None
    if isinstance(value, (numbers.Number, numpy.generic, str, bytes)):
        return numpy.asarray(value)
    if speaks_array_protocol(value):
        return _from_protocol(value, what)
    raise TypeError(f"{what}: expected an array, a Tensor, an array-like (with __array__ or __dlpack__) or "
                    f"nested lists of numbers, received {type(value).__name__} {_describe(value)}.")


def _describe(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _from_protocol(value, what):
    if getattr(value, "requires_grad", False) and callable(getattr(value, "detach", None)):
        value = value.detach()  # a torch tensor in a graph: its data, as Keras's convert_to_numpy
    device_type, device_id = _dlpack_device(value)
    if device_type not in (None,) + _HOST_DLPACK or hasattr(value, "__cuda_array_interface__"):
        return _to_gpu(value, device_id, what)
    try:
        if hasattr(value, "__array__") or hasattr(value, "__array_interface__"):
            return numpy.asarray(value)
        return numpy.from_dlpack(value)
    except NotImplementedError as error:
        if _is_symbolic_tf_tensor(value):  # "Cannot convert a symbolic tf.Tensor to a numpy array"
            from minikeras.autograd.tensor import tf_function_message

            raise TensorFlowAPIError(f"{what}: " + tf_function_message("a symbolic tf.Tensor")) from error
        raise


def _is_symbolic_tf_tensor(value):
    """A TensorFlow graph tensor (no value): what ``tf.function`` passes while tracing."""
    module = type(value).__module__ or ""
    return module.startswith("tensorflow") and not hasattr(value, "numpy")


def _dlpack_device(value):
    if not hasattr(value, "__dlpack_device__"):
        return None, None
    try:
        device_type, device_id = value.__dlpack_device__()
        return int(device_type), int(device_id)
    except Exception:  # a broken protocol: let the other protocols try
        return None, None


def _to_gpu(value, cuda_id, what):
    """A CUDA array on the minikeras GPU with the same CUDA id, zero copy."""

    devices = registry.initialize()["gpu"]
    if cuda_id is None:
        cuda_id = _cuda_interface_device(value)
    preferred = placement_device()
    candidates = ([preferred] if preferred in devices else []) + list(devices)
    target = next((d for d in candidates if cuda_id is None or d.physical.index == cuda_id), None)
    if target is None:
        seen = ", ".join(d.name for d in devices) or "none"
        raise TypeError(f"{what}: received a CUDA array ({type(value).__name__} on CUDA device {cuda_id}) but "
                        f"minikeras has no GPU with that id (its GPUs: {seen}). Move it to the host first "
                        "(e.g. tensor.cpu() in torch).")
    with target.activate():
        if hasattr(value, "__dlpack__"):
            return target.xp.from_dlpack(value)
        return target.xp.asarray(value)


def _cuda_interface_device(value):
    interface = getattr(value, "__cuda_array_interface__", None)
    if not interface:
        return None
    cupy = backend.cupy_module()
    try:
        return int(cupy.cuda.runtime.pointerGetAttributes(interface["data"][0]).device)
    except Exception:  # no CuPy or driver, or an unusual pointer: the placement device decides
        return None
