"""Function: one differentiable op, working on raw arrays through ``xp``.

A subclass defines ``forward(*arrays)`` returning an array (or a tuple of
arrays) and ``backward(*grad_outputs)`` returning one gradient per input
(None where an input needs none). It keeps for backward only what it passes
to ``save_for_backward``, which backward() releases afterwards.

``Function.apply(*inputs)`` places the op, runs forward, and records the
node when an input requires grad and grad mode is on. Non-Tensor inputs
(Python numbers, arrays) are constants: numbers go to forward as they are,
so that ``x * 2.0`` keeps x's float32; arrays are moved to the op's device.

``half_in_float32 = True`` on a subclass is for ops whose kernels take no
16-bit floats or would be slow or inexact in them (``xp.linalg``,
``xp.fft``, ``einsum``, attention's fused softmax): ``apply`` then hands forward float32 copies of float16/bfloat16
inputs and rounds the float outputs back to that 16-bit type when it is the
only float type among the inputs; backward likewise gets float32 gradients
and returns each input's gradient in that input's dtype. Keras's JAX and
TensorFlow backends compute these ops in float32 internally too. Ops
without the flag pay nothing for it; a flagged class's own ``backward`` is
wrapped when the class is defined (``__init_subclass__``).

:func:`in_float32` is the same path chosen at a call site, for ops whose
class serves every dtype (convolution, the recurrent sequences: written
with ``@`` and in-place updates NumPy cannot do in bfloat16 and does ~300x
slower in float16). It also keeps what forward saved for backward in 16
bits (cast up again in backward), so activations cost half the memory as
mixed precision promises, and rounds the outputs to the first 16-bit
input's dtype: the result of a 16-bit kernel with float32 accumulation,
cuDNN's and the tensor cores' arithmetic, with Keras's output dtype.
"""
import functools
import types

import numpy

from minikeras import backend
from minikeras.autograd import autocast as _autocast
from minikeras.autograd.grad_mode import mode as _grad_mode
from minikeras.autograd.tensor import Tensor, _new, from_array
from minikeras.backend.dtypes import is_half_dtype
from minikeras.device import op_errors, registry
from minikeras.device.device import Device
from minikeras.device.scope import current_scope_device

_ndarray = numpy.ndarray
_FLOAT32 = numpy.dtype(numpy.float32)
_autocast_state = _autocast.state
_QUIET_ACTIVATION = {}  # device class -> True when its activate() is Device's (a context that does nothing)


def quiet_activation(device):
    """Whether ``device.activate()`` is Device's context that does nothing
    (the CPU): then ``apply`` and ``backward`` enter none, two Python calls
    fewer per op (read from ``_QUIET_ACTIVATION`` inline where it counts)."""
    quiet = _QUIET_ACTIVATION.get(type(device))
    if quiet is None:
        quiet = _QUIET_ACTIVATION[type(device)] = type(device).activate is Device.activate
    return quiet


class Function:
    """Base class of differentiable ops (see module docstring)."""

    saved = ()
    keeps_input_devices = False  # True for ops that move data themselves
    autocasts = True  # inside a layer's autocast scope, variables arrive cast (autocast.py)
    keeps_dtype = True  # outputs stay bfloat16 when the inputs are (False for casts)
    half_in_float32 = False  # True: 16-bit float inputs computed in float32 (module docstring)
    _half_kept = None  # in_float32's 16-bit dtype: the outputs' and the saved arrays' (module docstring)
    # True: backward(None) stands for a gradient of ones, which engine.backward then passes
    # to this op when its one-element output is the root, instead of launching a fill.
    takes_unit_gradient = False
    _half_inputs = None  # per input, its 16-bit dtype when half_in_float32 widened it
    _parents = None
    _freed = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.half_in_float32 and "backward" in cls.__dict__:
            cls.backward = _float32_backward(cls.__dict__["backward"])

    def save_for_backward(self, *arrays):
        """Keep ``arrays`` for backward; they are released after it."""
        self.saved = arrays
        device = self.device
        for array in arrays:
            if array is not None and hasattr(array, "base"):
                device.memory.track(array)

    def forward(self, *arrays):  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, *grad_outputs):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def name(self):
        return type(self).__name__

    def placement(self, tensors):
        """The device this op runs on: the scope's, else its first input's."""
        scoped = current_scope_device()
        if scoped is not None:
            return scoped
        for value in tensors:
            if isinstance(value, Tensor):
                return value.device
        return registry.default_device()

    def apply(self, *inputs):
        """Run the op on Tensors (or constants) and wrap the result(s).

        The hot path of every op: the thread-local reads (device scope, grad
        mode, autocast scope) and the wrapping of the outputs are inline."""
        device = current_scope_device()
        if self.keeps_input_devices or type(self).placement is not _BASE_PLACEMENT:
            device = self.placement(inputs)
        elif device is None:  # placement(), inline: the first input's device
            for value in inputs:
                if isinstance(value, Tensor):
                    device = value.device
                    break
            else:
                device = registry.default_device()
        self.device = device
        record = getattr(_grad_mode, "enabled", True)  # is_grad_enabled(), inline
        arrays = []
        needs = []
        any_needs = False
        autocast_to = getattr(_autocast_state, "dtype", None)  # autocast.current_dtype(), inline
        if autocast_to is not None and self.autocasts:
            inputs = tuple(_autocast.maybe_cast(value, autocast_to) for value in inputs)
        bfloat16 = None  # the dtype to keep when every floating input is bfloat16 (see _keep_bfloat16)
        other_float = False
        for value in inputs:
            if type(value) is Tensor or isinstance(value, Tensor):  # Variable is a Tensor subclass
                if value.device is not device and not self.keeps_input_devices:
                    value = value.to(device)
                kind = value.data.dtype.kind
                if kind == "V":
                    bfloat16 = value.data.dtype
                elif kind == "f":
                    other_float = True
                arrays.append(value.data)
                flag = record and value.requires_grad
                needs.append(flag)
                if flag:
                    any_needs = True
            else:
                arrays.append(_constant(value, device, self))
                needs.append(False)
        self.needs_input_grad = needs
        if registry.get_log_device_placement():
            registry.log_placement(self.name, device)
        half = None
        if self.half_in_float32:
            arrays, half = _widen_half(self, arrays)
        keep = bfloat16 if bfloat16 is not None and not other_float and self.keeps_dtype else None
        quiet = _QUIET_ACTIVATION.get(type(device))
        if quiet is None:
            quiet = quiet_activation(device)
        if quiet:
            try:
                outputs = self.forward(*arrays)
            except Exception:  # noqa: BLE001  (a host/GPU failure becomes the library's error)
                op_errors.reraise(device, self.name)
            if self._half_kept is not None:  # in_float32: outputs and saved arrays back in 16 bits
                outputs, half = _keep_half(self, outputs), None
            if type(outputs) is not _ndarray or half is not None or keep is not None:
                outputs = _finish_outputs(outputs, device, half, keep)
        else:
            with device.activation_context:  # device.activate(), without the call
                try:
                    outputs = self.forward(*arrays)
                except Exception:  # noqa: BLE001
                    op_errors.reraise(device, self.name)
                if self._half_kept is not None:
                    outputs, half = _keep_half(self, outputs), None
                if type(outputs) is not device.array_type or half is not None or keep is not None:
                    outputs = _finish_outputs(outputs, device, half, keep)
        if any_needs:
            parents = []
            for value, flag in zip(inputs, needs):
                if not flag:
                    parents.append(None)
                elif value._node is None:
                    parents.append((value, -1))
                else:
                    parents.append((value._node, value._index))
            self._parents = parents
            self._input_shapes = [getattr(array, "shape", ()) for array in arrays]
            node = self
        else:
            self.saved = ()
            node = None
        if type(outputs) is tuple:
            self._n_outputs = len(outputs)
            if any_needs:
                self._output_meta = [(out.shape, out.dtype) for out in outputs]
            return tuple(from_array(out, device, node, i) for i, out in enumerate(outputs))
        self._n_outputs = 1
        tensor = _new(Tensor)  # from_array(outputs, device, node, 0), inline (tensor.py's _fill lists the fields)
        tensor.data = outputs
        tensor.device = device
        tensor.grad = None
        tensor._node = node
        tensor._index = 0
        tensor.requires_grad = node is not None
        tensor.name = None
        device.memory.track(outputs)
        return tensor


_BASE_PLACEMENT = Function.placement


def _finish_outputs(outputs, device, half, keep):
    """``forward``'s outputs as arrays of the device: rounded back to 16 bits
    (``half``), numbers and scalars made arrays, rounded back to bfloat16
    (``keep``) when every floating input was."""
    if half is not None:
        outputs = _cast_floats(outputs, half)
    array_type = device.array_type
    if type(outputs) is not array_type and type(outputs) is not tuple:
        outputs = _as_array(outputs, device)
    elif type(outputs) is tuple:
        outputs = tuple(out if type(out) is array_type else _as_array(out, device) for out in outputs)
    if keep is not None:
        outputs = _keep_bfloat16(outputs, keep)
    return outputs


def _keep_bfloat16(outputs, dtype):
    """Float32/float64 outputs of an op whose floating inputs are all
    bfloat16, rounded back to bfloat16: ops keep their dtype. ml_dtypes'
    bfloat16 has no weak scalar promotion (``x * 0.5`` and ``x @ y`` give
    float32 in NumPy), and CuPy computes bfloat16 in float32 internally;
    either way the result is the float32 value rounded once, as a bfloat16
    kernel gives."""
    if type(outputs) is tuple:
        return tuple(_keep_bfloat16(out, dtype) for out in outputs)
    kind = getattr(getattr(outputs, "dtype", None), "kind", None)
    return outputs.astype(dtype) if kind == "f" else outputs


def _widen_half(function, arrays):
    """float32 copies of the 16-bit float arrays, and the dtype to round the
    outputs back to (None when other float types are mixed in). Records the
    inputs' dtypes for the float32 backward."""
    dtypes = [getattr(array, "dtype", None) for array in arrays]
    halves = [dtype if dtype is not None and dtype.itemsize == 2 and dtype.kind in "fV" else None
              for dtype in dtypes]
    if not any(half is not None for half in halves):
        return arrays, None
    function._half_inputs = halves
    with function.device.activate():
        arrays = [array if half is None else array.astype(numpy.float32) for array, half in zip(arrays, halves)]
    floats = {dtype for dtype in dtypes if dtype is not None and dtype.kind in "fVc"}
    return arrays, floats.pop() if len(floats) == 1 else None


def in_float32(function, *inputs):
    """``function.apply(*inputs)``, computed in float32 when an input is a
    16-bit float Tensor, keeping its saved arrays in 16 bits (module docstring).

    Args:
        function: a Function instance (not yet applied).
        inputs: its inputs (Tensors, None or constants).

    Returns:
        The output(s), float32 ones in the dtype of the first 16-bit input.
    """
    half = next((value.dtype for value in inputs if isinstance(value, Tensor) and is_half_dtype(value.dtype)), None)
    if half is not None and not type(function).half_in_float32:
        function.half_in_float32, function._half_kept, function.keeps_dtype = True, half, False
        function.backward = types.MethodType(_float32_backward(type(function).backward), function)
    return function.apply(*inputs)


def _keep_half(function, outputs):
    """An :func:`in_float32` op's float32 outputs, and the arrays it saved, in its 16-bit dtype."""
    half = function._half_kept
    if function.saved:
        function.save_for_backward(*[_down(array, half) for array in function.saved])
    if type(outputs) is tuple:
        return tuple(_down(out, half) for out in outputs)
    return _down(outputs, half)


def _down(array, half):
    return array.astype(half) if array is not None and getattr(array, "dtype", None) == _FLOAT32 else array


def _up(array):
    return array.astype(_FLOAT32) if array is not None and is_half_dtype(getattr(array, "dtype", None)) else array


def _float32_backward(backward):
    """``backward`` of a ``half_in_float32`` op: float32 gradients in, each
    input's gradient out in that input's 16-bit dtype (and, for an
    :func:`in_float32` op, its 16-bit saved arrays cast up while it runs)."""

    @functools.wraps(backward)
    def float32_backward(self, *grad_outputs):
        halves = self._half_inputs
        if halves is None:
            return backward(self, *grad_outputs)
        grad_outputs = tuple(None if grad is None else _cast_floats(grad, _FLOAT32) for grad in grad_outputs)
        if self._half_kept is not None:
            kept = self.saved
            self.saved = tuple(_up(array) for array in kept)
            try:
                grads = backward(self, *grad_outputs)
            finally:
                self.saved = kept
        else:
            grads = backward(self, *grad_outputs)
        single = type(grads) not in (tuple, list)
        grads = tuple(grad if grad is None or half is None else grad.astype(half)
                      for grad, half in zip((grads,) if single else grads, halves))
        return grads[0] if single else grads

    return float32_backward


def _cast_floats(outputs, dtype):
    """The float arrays of ``outputs`` (an array or a tuple) cast to ``dtype``:
    a ``half_in_float32`` op's outputs back to 16 bits, its 16-bit gradients
    up to float32 for backward."""
    if type(outputs) is tuple:
        return tuple(_cast_floats(out, dtype) for out in outputs)
    kind = getattr(getattr(outputs, "dtype", None), "kind", "")
    return outputs.astype(dtype) if kind and kind in "fV" and outputs.dtype != dtype else outputs


# The old private name of the construction path, for callers not yet moved.
_wrap = from_array


def _as_array(value, device):
    """Op results that are not arrays (NumPy scalars from 0-d math, Python
    numbers) become 0-d arrays; Python floats become float32."""
    if isinstance(value, numpy.generic) and device.xp is numpy:  # a 0-d reduction's scalar on the host
        return numpy.asarray(value)
    if device.is_array(value):
        return value
    if backend.is_array(value) or isinstance(value, numpy.generic):
        return device.asarray(value)
    if isinstance(value, float):
        return device.xp.asarray(value, dtype=numpy.float32)
    return device.xp.asarray(value)


def _constant(value, device, function):
    if isinstance(value, numpy.generic):
        return value.item()  # a Python number: weak typing keeps float32 float32
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{function.name}: operands must be Tensors, arrays or numbers, received {value!r}.")
    if backend.is_array(value):
        return device.asarray(value)
    if isinstance(value, (list, tuple)):
        raise TypeError(
            f"{function.name}: ops take Tensors, arrays and numbers; received a {type(value).__name__}. "
            "Wrap it with minikeras.tensor(...) first."
        )
    return value  # numpy scalars and other numbers

