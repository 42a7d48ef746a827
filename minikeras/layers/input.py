"""The functional API's symbolic engine: KerasTensor (a symbolic value with
shape and dtype), Node (the layer call that made it) and ``symbolic_call``,
which runs a layer on KerasTensors by probing it with small concrete arrays.
"""
import numpy

from minikeras._support import load_budget
from minikeras.autograd import Tensor, no_grad
from minikeras.backend.dtypes import as_numpy_dtype
from minikeras.layers.base import Layer, _context
from minikeras.layers.keras_mask import get_keras_mask, set_keras_mask
from minikeras.layers.rnn.rnn_state import PROBING
from minikeras.ops import _entry
from minikeras._support.nest import flatten as _flatten
from minikeras._support.nest import map_structure as _map


def _operator(name, reflected=False):
    """A KerasTensor operator method recording the operation ``name``."""
    def method(self, other=None):
        from minikeras.layers import symbolic_ops

        return symbolic_ops.apply(name, self, other, reflected)

    method.__name__ = f"__{'r' if reflected else ''}{name}__"
    return method


def _record_op_call(function, args, kwargs):
    from minikeras.layers import symbolic_ops

    return symbolic_ops.record_call(function, args, kwargs)


_entry.symbolic_hook = _record_op_call  # keras.ops on KerasTensors record graph nodes (ops/_entry.py)


class KerasTensor:
    """A symbolic tensor: a shape (batch axis None), a dtype and the node
    that produces it.

    Attributes:
        shape: tuple, ``None`` for unknown sizes.
        dtype: numpy dtype name, or ``"string"`` for text (Keras's name).
        node: the Node that outputs it; ``index`` its position there.
    """

    _is_symbolic_tensor = True  # Tensor operators hand it to the op, which records a node

    def __init__(self, shape, dtype="float32", node=None, index=0, name=None):
        self.shape = tuple(shape)
        self.dtype = "string" if is_string_dtype(dtype) else as_numpy_dtype(dtype).name
        self.node = node
        self.index = index
        self.name = name
        #: The symbolic mask (a bool KerasTensor) the producing layer attaches,
        #: as Keras's ``_keras_mask``; None when the output carries no mask.
        self._keras_mask = None

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        layer = self.node.layer.name if self.node is not None else None
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, from layer '{layer}'>"

    # Arithmetic records a graph node (layers/symbolic_ops.py), as Keras's operations do.
    __add__, __radd__ = _operator("add"), _operator("add", reflected=True)
    __sub__, __rsub__ = _operator("subtract"), _operator("subtract", reflected=True)
    __mul__, __rmul__ = _operator("multiply"), _operator("multiply", reflected=True)
    __truediv__, __rtruediv__ = _operator("true_divide"), _operator("true_divide", reflected=True)
    __pow__, __rpow__ = _operator("power"), _operator("power", reflected=True)
    __matmul__, __rmatmul__ = _operator("matmul"), _operator("matmul", reflected=True)
    __neg__, __abs__ = _operator("negative"), _operator("absolute")

    def __getitem__(self, key):
        """``x[:, 0]``, ``x[..., None]``: recorded as a node, as Keras records its GetItem."""
        from minikeras import ops

        return ops.getitem(self, key)

    def __array__(self, *args, **kwargs):
        raise TypeError(
            "A symbolic KerasTensor (from Input) has no value: use it only to build a Model, "
            "then call the model on data."
        )


def is_string_dtype(dtype):
    """True for Keras's text dtype: ``"string"`` (or ``str``)."""
    return dtype is str or (isinstance(dtype, str) and dtype in ("string", "str"))


class Node:
    """One call of a layer in a functional graph."""

    def __init__(self, layer, inputs, args, kwargs, outputs):
        self.layer = layer
        self.inputs = inputs  # structure of KerasTensors (the first argument)
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs
        layer._inbound_nodes.append(self)

    @property
    def parent_tensors(self):
        found = _flatten(self.inputs) + _flatten(list(self.args)) + _flatten(list(self.kwargs.values()))
        return [t for t in found if isinstance(t, KerasTensor)]


_PROBE_SIZES = (11, 12)  # unknown axes: large enough for kernels and pools


def _probe_shape(shape, unknown_size, batch=2):
    return [batch if i == 0 and size is None else (unknown_size if size is None else size)
            for i, size in enumerate(shape)]


def _probe_value(keras_tensor, unknown_size, batch=2):
    shape = _probe_shape(keras_tensor.shape, unknown_size, batch)
    # While a model is rebuilt from a file, a probe batch may not be larger
    # than the file's weights justify (a config declaring a huge input).
    if keras_tensor.dtype == "string":
        return numpy.full(shape, "", dtype=str)  # empty texts: strings never become Tensors
    load_budget.charge(shape, keras_tensor.dtype, f"a probe batch for input {keras_tensor.name or ''!r}",
                       cumulative=False)
    value = Tensor(numpy.zeros(shape, dtype=keras_tensor.dtype))
    if keras_tensor._keras_mask is not None:
        # A masked symbolic input probes with an all-kept mask, so that a
        # layer's call(..., mask=...) sees a mask while the graph is built,
        # as in Keras (and no step is padding, so the probe stays finite).
        mask_shape = _probe_shape(keras_tensor._keras_mask.shape, unknown_size)
        set_keras_mask(value, Tensor(numpy.ones(mask_shape, dtype=bool)))
    return value


def _run_probe(layer, inputs, args, kwargs, unknown_size, batch=2):
    def substitute(value):
        return _probe_value(value, unknown_size, batch) if isinstance(value, KerasTensor) else value

    probe_inputs = _map(substitute, inputs)
    probe_args = _map(substitute, list(args))
    probe_kwargs = {key: _map(substitute, value) for key, value in kwargs.items()}
    probe_kwargs.setdefault("training", False)
    outer = getattr(_context, "training", None)
    outer_probing = getattr(_context, PROBING, False)
    # Stateful layers keep no state from a probe; they need the batch size.
    batches = [t.shape[0] for t in _flatten(inputs) if isinstance(t, KerasTensor) and t.shape]
    setattr(_context, PROBING, batches[0] if batches else None)
    # The probe's zeros are placeholders: a 1 / x node dividing by them is no error worth a warning.
    with no_grad(), numpy.errstate(divide="ignore", invalid="ignore", over="ignore"):
        try:
            return layer(probe_inputs, *probe_args, **probe_kwargs)
        finally:
            _context.training = outer
            setattr(_context, PROBING, outer_probing)


def _charge_probe_outputs(layer, outputs, unknown_size, declared=None):
    """While a model is rebuilt from a file, count what a probe returns (or,
    before it runs, what the layer declares it will return) against the
    file's budget: a config's sizes (``RepeatVector(n)``, ``ops.repeat``'s
    repeats, a padding) may not make the probe allocate more than the
    file's weights justify."""
    if not load_budget.loading():
        return
    what = f"the output of {type(layer).__name__} {getattr(layer, 'name', '')!r} on a probe batch"
    if declared is not None:
        load_budget.charge(_probe_shape(declared, unknown_size), "float32", what, cumulative=False)
        return
    for tensor in _flatten(outputs):
        if isinstance(tensor, Tensor):
            load_budget.charge(tensor.shape, tensor.dtype, what, cumulative=False)


def _builds_nothing(cls):
    return cls.build is Layer.build


def _empty_batch_output_shape(layer, inputs, args, kwargs):
    """An op node's output shape from a probe of batch 0 (an op that keeps
    the batch axis allocates nothing then: ``ops.repeat(x, n, axis=1)`` with
    a file's huge ``n``), the batch axis None; None when that probe fails or
    its output is not one empty array (the full probe then decides)."""
    try:
        output = _run_probe(layer, inputs, args, kwargs, _PROBE_SIZES[1], batch=0)
    except Exception:  # noqa: BLE001  (a batch of 0 is no valid input for every op)
        return None
    if not isinstance(output, Tensor) or not output.shape or output.shape[0] != 0:
        return None
    return (None,) + tuple(output.shape[1:])


def symbolic_call(layer, inputs, args, kwargs):
    """Record ``layer(inputs, *args, **kwargs)`` in the functional graph."""
    leaves = [t for t in _flatten(inputs) + _flatten(list(args)) if isinstance(t, KerasTensor)]
    has_unknown = any(size is None for t in leaves for size in t.shape[1:])
    # Refuse a size the file declares before the probe allocates it; a layer
    # that builds weights is left to charge them first (its message names them).
    if load_budget.loading() and (layer.built or _builds_nothing(type(layer))):
        declared = _declared_output_shape(layer, inputs)
        if declared is None and getattr(layer, "_is_operation", False):
            declared = _empty_batch_output_shape(layer, inputs, args, kwargs)
        if declared is not None:
            _charge_probe_outputs(layer, None, _PROBE_SIZES[1], declared)
    first = _run_probe(layer, inputs, args, kwargs, _PROBE_SIZES[0])
    _charge_probe_outputs(layer, first, _PROBE_SIZES[0])
    second = _run_probe(layer, inputs, args, kwargs, _PROBE_SIZES[1]) if has_unknown else first
    batch_unknown = any(t.shape and t.shape[0] is None for t in leaves)

    def symbolic_shape(one, two):
        shape = list(one.shape)
        for axis, (a, b) in enumerate(zip(one.shape, two.shape)):
            if a != b:
                shape[axis] = None
        if batch_unknown and shape:
            shape[0] = None
        return tuple(shape)

    def to_symbolic(pair):
        one, two = pair.first, pair.second
        tensor = KerasTensor(symbolic_shape(one, two), one.dtype)
        mask_one, mask_two = get_keras_mask(one), get_keras_mask(two)
        if isinstance(mask_one, Tensor) and isinstance(mask_two, Tensor):
            tensor._keras_mask = KerasTensor(symbolic_shape(mask_one, mask_two), "bool")
        return tensor

    outputs = _map(to_symbolic, _zip_structures(first, second))
    declared = _declared_output_shape(layer, inputs)
    if declared is not None and isinstance(outputs, KerasTensor) and len(declared) == len(outputs.shape):
        outputs.shape = tuple(declared)
    node = Node(layer, inputs, tuple(args), dict(kwargs), outputs)
    for index, tensor in enumerate(_flatten(outputs)):
        tensor.node = node
        tensor.index = index
    return outputs


def _declared_output_shape(layer, inputs):
    """The layer's own compute_output_shape for one symbolic input, if any."""
    if not isinstance(inputs, KerasTensor):
        return None
    try:
        shape = layer.compute_output_shape(inputs.shape)
    except Exception:  # layers without a usable rule fall back to the probe
        return None
    if isinstance(shape, (list, tuple)) and all(s is None or isinstance(s, int) for s in shape):
        return tuple(shape)
    return None


def _zip_structures(first, second):
    if isinstance(first, (list, tuple)):
        return type(first)(_zip_structures(a, b) for a, b in zip(first, second))
    if isinstance(first, dict):
        return {key: _zip_structures(first[key], second[key]) for key in first}
    return _Pair(first, second)


class _Pair:
    __slots__ = ("first", "second")

    def __init__(self, first, second):
        self.first, self.second = first, second
