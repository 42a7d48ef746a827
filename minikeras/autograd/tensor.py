"""Tensor: one array on one device, and the node of the graph that made it.

The autograd core imports in one direction: ``tensor`` (this module) needs
nothing else of autograd at import time; ``engine`` and ``function`` import
it; ``transfer`` imports ``function``. The two Tensor methods that call
upward (``backward`` and ``to``) import their module when called, as
``torch.Tensor.backward`` does.

Every tensor is made by :func:`from_array` (an array already on its device:
op results, gradients, creation ops) or by ``Tensor(data)`` (anything
array-like: converts and checks it, then goes through the same fields).
"""
import copy

import numpy

from minikeras import backend, errors
from minikeras.device import registry, scope
from minikeras._support import array_like
from minikeras._support.argument_validation import check_dtype

_FLOAT_KINDS = "fc"


def _is_float_dtype(dtype):
    dtype = numpy.dtype(dtype)
    return dtype.kind in _FLOAT_KINDS or dtype.name == "bfloat16"  # ml_dtypes' kind is "V"


class Tensor:
    """A multi-dimensional array that records the ops applied to it.

    Args:
        data: an array, a nested list, a number, or another Tensor.
        requires_grad: track gradients for this tensor (floating dtypes only).
        dtype: convert to this dtype. Python floats and lists of them
            default to float32; arrays keep their dtype.
        device: a device name or Device; default: the current
            ``minikeras.device`` scope, else the default device.
        name: an optional label.

    Example:
        >>> x = Tensor([[1.0, 2.0]], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad.numpy()
        array([[2., 4.]], dtype=float32)
    """

    __slots__ = ("data", "device", "requires_grad", "grad", "_node", "_index", "name", "__weakref__")
    __array_ufunc__ = None  # numpy defers to our reflected operators

    def __init__(self, data, requires_grad=False, dtype=None, device=None, name=None):
        target = registry.get_device(device) if device is not None else scope.placement_device()
        if isinstance(data, Tensor):
            data = data.data
        self.data = _to_device_array(data, target, dtype)
        if requires_grad and not _is_float_dtype(self.data.dtype):
            raise TypeError(
                f"Only floating-point tensors can require gradients; received dtype {self.data.dtype}. "
                "Cast it first, e.g. tensor.astype('float32')."
            )
        _fill(self, self.data, target, None, 0, bool(requires_grad), name)

    # ----------------------------------------------------------- properties
    @property
    def _keras_mask(self):
        """The ``(batch, steps)`` mask a layer attached to this tensor, or
        None: Keras's attribute, read and written as in Keras's guides."""
        from minikeras.autograd.keras_mask import get_keras_mask  # tensor.py imports no autograd module up front

        return get_keras_mask(self)

    @_keras_mask.setter
    def _keras_mask(self, mask):
        from minikeras.autograd.keras_mask import set_keras_mask

        set_keras_mask(self, mask)

    @property
    def shape(self):
        return tuple(self.data.shape)

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def size(self):
        return int(self.data.size)

    @property
    def is_leaf(self):
        return self._node is None

    def __len__(self):
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    # ------------------------------------------------------------- host side
    def numpy(self):
        """A host (NumPy) copy of the data; for CPU tensors the array itself."""
        return self.device.to_host(self.data)

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.data.size != 1:
            raise ValueError(f"item() needs a tensor with one element, received shape {self.shape}.")
        return self.device.item(self.data)

    def tolist(self):
        return self.numpy().tolist()

    def __array__(self, dtype=None, copy=None):
        """NumPy's conversion (``numpy.asarray(t)``, ``numpy.array(t)``),
        honouring NumPy 2's ``copy``: True always returns a new array, False
        returns the tensor's own buffer or raises ValueError when that needs
        a copy (a GPU tensor, another dtype), None copies only when needed."""
        host = self.device.to_host(self.data)
        copied = host is not self.data
        if dtype is not None and host.dtype != numpy.dtype(dtype):
            host, copied = host.astype(dtype), True
        if copy is False and copied:
            raise ValueError(f"Unable to avoid a copy converting a tensor of dtype {self.dtype} on "
                             f"{self.device.canonical} to a NumPy array{'' if dtype is None else f' of {dtype}'} "
                             "(copy=False): its data must be copied to the host or cast.")
        return host.copy() if copy and not copied else host

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.data.size != 1:
            raise ValueError(
                f"The truth value of a tensor with {self.data.size} elements is ambiguous; use .any() or .all()."
            )
        return bool(self.item())

    def __format__(self, format_spec):
        """``f"{loss:.4f}"`` formats a one-element tensor's value (as a
        TensorFlow/NumPy scalar does); an empty spec gives ``str(tensor)``."""
        if not format_spec:
            return str(self)
        if self.data.size != 1:
            raise TypeError(f"Tensor.__format__ expects a tensor of one element for the format spec "
                            f"{format_spec!r}, received shape {self.shape}; format tensor.numpy() instead.")
        return format(self.item(), format_spec)

    # ------------------------------------------- TensorFlow APIs in ported scripts
    @property
    def _id(self):
        # tf.GradientTape.gradient reads ``_id`` from its targets and sources.
        raise errors.TensorFlowTapeError(
            "tf.GradientTape cannot differentiate minikeras tensors: minikeras records its own graph, which "
            "TensorFlow does not see. Use minikeras.GradientTape (same API: `with minikeras.GradientTape() as "
            "tape:` ... `tape.gradient(loss, model.trainable_weights)`), or override Model.train_step and call "
            "fit (compile(jit_compile=True) captures the whole step on a GPU).")

    def __tf_tensor__(self, dtype=None, name=None):
        """TensorFlow's conversion protocol: eagerly, the host value as a
        ``tf.Tensor``; while ``tf.function`` traces, the library's error
        (the result would be frozen into the graph as a constant)."""
        import sys

        tf = sys.modules["tensorflow"]  # TensorFlow is calling, so it is loaded; minikeras never imports it
        if not tf.executing_eagerly():
            raise errors.TensorFlowAPIError(tf_function_message("a minikeras Tensor"))
        return tf.convert_to_tensor(self.numpy(), dtype=dtype, name=name)

    def __repr__(self):
        grad = ", requires_grad=True" if self.requires_grad else ""
        body = numpy.array2string(self.numpy(), separator=", ", prefix="Tensor(")
        return f"Tensor({body}, dtype={self.dtype}, device={self.device.name!r}{grad})"

    # -------------------------------------------------------------- autograd
    def backward(self, gradient=None, retain_graph=False):
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that
        requires grad. See :func:`minikeras.autograd.engine.backward`."""
        from minikeras.autograd.engine import backward  # engine imports this module (a module: no package look-up)

        backward(self, gradient, retain_graph)

    def detach(self):
        """A tensor sharing this data, cut from the graph."""
        return from_array(self.data, self.device)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad in place (leaves only); returns self."""
        if requires_grad and not _is_float_dtype(self.data.dtype):
            raise TypeError(f"Only floating-point tensors can require gradients; received dtype {self.data.dtype}.")
        if not self.is_leaf and not requires_grad:
            raise RuntimeError("requires_grad can only be turned off on leaf tensors; use detach().")
        self.requires_grad = requires_grad
        return self

    def zero_grad(self):
        self.grad = None

    def to(self, device):
        """This tensor on ``device`` (a copy unless it is already there).

        Differentiable: the gradient flows back to the original device.
        """
        target = registry.get_device(device)
        if target is self.device:
            return self
        from minikeras.autograd.transfer import ToDevice  # an op: built on this module

        return ToDevice(target).apply(self)

    def cpu(self):
        return self.to("cpu:0")

    def assign(self, value):
        """Overwrite the data in place (e.g. weights), keeping shape and dtype."""
        value = value.data if isinstance(value, Tensor) else value
        if tuple(getattr(value, "shape", ())) != self.shape and numpy.ndim(value) != 0:
            raise ValueError(f"assign() expects shape {self.shape}, received {tuple(numpy.shape(value))}.")
        device = self.device
        with device.activate():
            self.data[...] = _to_device_array(value, device, self.dtype)
        return self

    # -------------------------------------------------------------- pickling
    def __reduce_ex__(self, protocol):
        """A pickle holds the value (a host copy), the device's name and the
        fields; never the graph that made the tensor (it loads as a leaf)."""
        return _unpickle, (type(self), self.device, self.device.to_host(self.data), _fields(self, graph=False))

    def __copy__(self):
        clone = _new(type(self))
        for slot, value in _fields(self).items():
            setattr(clone, slot, value)
        return clone

    def __deepcopy__(self, memo):
        """``copy.deepcopy`` (of a model, a layer, a tensor): the copy's array
        is made by its device, inside ``activate()``, with no trip to the host.
        CuPy's own deepcopy of an array copies on the legacy null stream into
        CuPy's default pool, where the device neither orders nor counts it
        (found by the simulated CuPy, which refuses work outside a device's
        streams)."""
        clone = _new(type(self))
        memo[id(self)] = clone
        for slot, value in _fields(self).items():
            if slot == "data" and self.device.is_array(value):
                memo[id(value)] = value = self.device.copy_array(value)
            else:
                value = copy.deepcopy(value, memo)
            setattr(clone, slot, value)
        return clone


_new = object.__new__


def _fields(tensor, graph=True):
    """The slots a tensor (or a subclass) has set, by name; ``graph=False``
    leaves out the array, its device and the node that made it."""
    skipped = {"__weakref__"} if graph else {"__weakref__", "data", "device", "_node", "_index"}
    return {slot: getattr(tensor, slot) for cls in type(tensor).__mro__ for slot in getattr(cls, "__slots__", ())
            if slot not in skipped and hasattr(tensor, slot)}


def _unpickle(cls, device, host, fields):
    """A tensor of class ``cls`` from what ``Tensor.__reduce_ex__`` pickled."""
    host = numpy.require(host, requirements="W")  # a copy of a read-only buffer (pickle 5's out-of-band data)
    with device.activate():
        array = device.asarray(host)
    tensor = _new(cls)
    _fill(tensor, array, device, None, 0, fields.pop("requires_grad"), fields.pop("name"))
    for slot, value in fields.items():
        setattr(tensor, slot, value)
    return tensor


def _fill(tensor, array, device, node, index, requires_grad, name):
    """Set every field of a new tensor (the one place that lists them)."""
    tensor.data = array
    tensor.device = device
    tensor.grad = None
    tensor._node = node
    tensor._index = index
    tensor.requires_grad = requires_grad
    tensor.name = name
    device.memory.track(array)


def from_array(array, device, node=None, index=0):
    """A Tensor around ``array``, which already lives on ``device``
    (no copy, no checks: for op results, gradients and creation ops).

    Args:
        array: an array of ``device``.
        device: its Device.
        node: the Function whose output ``index`` it is (None: a leaf that
            does not require grad).
        index: which output of ``node``.
    """
    tensor = _new(Tensor)
    _fill(tensor, array, device, node, index, node is not None, None)
    return tensor


def _to_device_array(data, device, dtype):
    if dtype is not None:
        dtype = check_dtype("tensor", dtype)
    if data is None:
        raise TypeError("Cannot make a tensor from None: expected an array, a nested list or a number.")
    if not backend.is_array(data) and array_like.speaks_array_protocol(data):
        data = array_like.to_array(data, "tensor")  # torch/TF/JAX/pandas: DLPack (zero copy) or __array__
    if backend.is_array(data):
        check_dtype("tensor", data.dtype)  # object/string arrays would compute as garbage
        return device.asarray(data, dtype)
    try:
        host = numpy.asarray(data)
    except ValueError as error:  # ragged nested lists
        raise ValueError(f"Cannot make a tensor from a ragged nested sequence: {error}") from None
    if host.dtype.kind not in "biufc":
        raise TypeError(f"Cannot make a tensor from {type(data).__name__} {data!r:.80}: it is not numeric "
                        f"(dtype {host.dtype}).")
    if dtype is None and host.dtype == numpy.float64 and not isinstance(data, (numpy.ndarray, numpy.generic)):
        dtype = numpy.dtype("float32")  # Python floats default to float32, like Keras
    if dtype is not None and host.dtype != dtype:
        host = host.astype(dtype)
    return device.asarray(host)


def tf_function_message(what):
    """The library's error text for ``what`` met while ``tf.function`` traces."""
    return (f"tf.function is tracing code that uses {what}: TensorFlow cannot trace minikeras, and would freeze "
            "the value computed while tracing into its graph as a constant (a training step would never change "
            "again). Remove @tf.function and run the code eagerly; to capture a training step, compile the model "
            "with jit_compile=True (minikeras captures fit's step itself).")


def tensor(data, dtype=None, device=None, requires_grad=False):
    """Make a Tensor (``minikeras.tensor(data, dtype=None, device=None)``)."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def array_of(value):
    """The array inside a Tensor, or ``value`` itself (an array, a number).

    Not ``getattr(value, "data", value)``: a CuPy array has a ``data``
    attribute too (its MemoryPointer), which is not an array.
    """
    return value.data if isinstance(value, Tensor) else value
