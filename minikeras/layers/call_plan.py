"""A layer's call plan: what ``Layer.__call__`` decided, kept for the next calls.

Every call of a layer asks the same questions before its ``call`` runs:
is the input a symbolic or TensorFlow tensor, must it be cast to the
compute dtype, does it fit the ``input_spec``, is there a mask to pass on,
which autocast scope to open, does ``call`` take ``training`` and ``mask``.
For a built layer called on one Tensor (or NumPy or device array) of the same shape
and dtype, with no mask, at most ``training=``, inside the same outer
autocast scope, the answers do not change: the first such call records
them in a :class:`CallPlan`, and the next calls with that signature run
``call`` after a few comparisons instead (:class:`PlannedCall`, the
``__call__`` of every Layer).

The plan is dropped when anything its answers depend on changes: the dtype
policy, ``autocast``, ``input_spec``, ``built``, ``trainable``, the name or
the name scope's place, ``call`` itself (``__setattr__`` and ``__delattr__``
of these names, ``PLAN_INPUTS``). Another input signature, a mask, or
another outer autocast scope takes the full path (which records the new
signature's plan). An ``InputSpec`` changed in place, without setting
``input_spec``, is not seen: set the attribute again.
"""
import threading

import numpy

from minikeras.scopes import name_scope
from minikeras.autograd import Tensor
from minikeras.autograd.autocast import autocast_scope, state as _autocast_state
from minikeras.autograd.keras_mask import mask_entry
from minikeras.backend import is_array
from minikeras.backend.dtypes import dtype_name, is_float_dtype
from minikeras._support.argument_validation import entry_point
from minikeras._support.traceback_utils import filtered_traceback, is_traceback_filtering_enabled

_ndarray = numpy.ndarray
_context = threading.local()  # ``training`` of the innermost layer call in this thread (base.py's _context)
_NO_SCOPE = object()  # the plan's autocast answer when the call opens no scope

#: The attributes whose change drops a layer's plan (Layer.__setattr__).
PLAN_INPUTS = frozenset({"_dtype_policy", "autocast", "_casts_inputs", "_passes_text", "input_spec", "built",
                         "_trainable", "name", "_parent_path", "call", "_call_has_training", "_call_has_mask",
                         "compute_mask", "supports_masking"})


def autocast_decision(policy, autocast, current):
    """The autocast scope a layer's call opens (Keras's rules): ``_NO_SCOPE``,
    or the dtype name (None: autocasting off) of the scope to open.

    A layer of a mixed policy opens one casting to its compute dtype; inside
    another layer's scope, a layer with another compute dtype (or not
    autocasting, or not computing in floats) opens its own.

    Args:
        policy: the layer's DTypePolicy.
        autocast: the layer's ``autocast`` flag.
        current: the compute dtype of the open scope (a NumPy dtype), or None.
    """
    compute = policy.compute_dtype
    if current is None:
        return compute if compute != policy.variable_dtype else _NO_SCOPE
    if not autocast or not is_float_dtype(compute):
        return None
    return compute if current.name != compute else _NO_SCOPE


def opens_scope(decision):
    return decision is not _NO_SCOPE


def input_cast(layer, dtype):
    """The dtype name a floating Tensor input of ``dtype`` is cast to on the
    way into ``layer``, or None when it goes in as it is."""
    compute = layer._dtype_policy.compute_dtype
    if not (layer._casts_inputs and layer.autocast and is_float_dtype(compute)) or compute == "float64":
        return None
    return compute if dtype_name(dtype) != compute and is_float_dtype(dtype) else None


class CallPlan:
    """The answers of one input signature (see the module docstring)."""

    __slots__ = ("input_type", "shape", "dtype", "outer_autocast", "cast_to", "spec", "autocast",
                 "takes_training", "takes_mask", "attaches_mask")

    def __init__(self, layer, inputs):
        self.input_type = type(inputs)
        data = inputs.data if self.input_type is Tensor else inputs
        self.shape = data.shape
        self.dtype = data.dtype
        self.outer_autocast = getattr(_autocast_state, "dtype", None)
        self.cast_to = input_cast(layer, self.dtype) if self.input_type is Tensor else None
        self.spec = layer.input_spec
        self.autocast = autocast_decision(layer._dtype_policy, layer.autocast, self.outer_autocast)
        self.takes_training = layer._call_has_training
        self.takes_mask = layer._call_has_mask
        self.attaches_mask = type(layer).compute_mask is not _base_compute_mask(layer)


def _base_compute_mask(layer):
    from minikeras.layers.base import Layer

    return Layer.compute_mask


def record(layer, inputs, args, kwargs):
    """Keep the plan of this call when its signature can have one: a built
    layer of a class that keeps Layer's call protocol, one Tensor or numeric
    array (NumPy's, or a GPU's: what a model on a GPU hands its first layer)
    in, nothing but ``training=`` besides, no mask."""
    kind = type(inputs)
    if args or not layer.built or (kwargs and (len(kwargs) != 1 or "training" not in kwargs)):
        return
    if kind is not Tensor and (not (kind is _ndarray or _is_device_array(inputs)) or inputs.dtype.kind not in "biuf"):
        return
    if mask_entry(id(inputs)) is not None or not _keeps_call_protocol(type(layer)):
        return
    layer.__dict__["_call_plan"] = CallPlan(layer, inputs)


_PROTOCOL = ("_checked_call", "_convert_input", "_autocast_scope", "_call_unplanned")  # Layer's, not overridden
_CHECKED_CLASSES = {}


def _is_device_array(value):
    """An array of a device's array module other than NumPy (CuPy's)."""
    return not isinstance(value, numpy.ndarray) and is_array(value)


def _keeps_call_protocol(cls):
    found = _CHECKED_CLASSES.get(cls)
    if found is None:
        from minikeras.layers.base import Layer

        found = _CHECKED_CLASSES[cls] = all(getattr(cls, name) is getattr(Layer, name) for name in _PROTOCOL)
    return found


class PlannedCall:
    """``Layer.__call__``: the plan's short path when the call's signature
    has one, else the full protocol (``Layer._call_unplanned``)."""

    __slots__ = ()
    _call_plan = None

    def __call__(self, inputs, *args, **kwargs):
        # Errors leave named by the layer (entry_point) and, as Keras filters
        # them, with the user's frames only: this frame re-raises them.
        try:
            plan = self._call_plan
            if plan is None or args or type(inputs) is not plan.input_type:
                return self._call_unplanned(inputs, *args, **kwargs)
            if kwargs:
                if len(kwargs) != 1 or "training" not in kwargs:
                    return self._call_unplanned(inputs, *args, **kwargs)
                training = kwargs["training"]
            else:
                training = None
            data = inputs.data if plan.input_type is Tensor else inputs
            if (data.shape != plan.shape or data.dtype is not plan.dtype or mask_entry(id(inputs)) is not None
                    or getattr(_autocast_state, "dtype", None) is not plan.outer_autocast
                    or self.input_spec is not plan.spec):
                return self._call_unplanned(inputs, *args, **kwargs)
            outer = getattr(_context, "training", None)
            if training is None:
                training = outer
            scope = name_scope(self.name, caller=self)  # as open_name_scope: its place is set (_parent_path)
            scope.__enter__()
            try:
                if plan.cast_to is not None:
                    inputs = inputs.astype(plan.cast_to)
                elif plan.input_type is not Tensor:  # a NumPy or device array
                    inputs = self._convert_input(inputs)
                call_kwargs = {"training": training} if plan.takes_training else {}
                if plan.takes_mask:
                    call_kwargs["mask"] = None
                self.__dict__["_losses"] = []  # a new list each call, as _checked_call
                _context.training = training
                try:
                    if plan.autocast is _NO_SCOPE:
                        outputs = self.call(inputs, **call_kwargs)
                    else:
                        with autocast_scope(plan.autocast):
                            outputs = self.call(inputs, **call_kwargs)
                finally:
                    _context.training = outer
                if plan.attaches_mask:
                    self._attach_mask(inputs, outputs, None)
                return outputs
            finally:
                scope.__exit__(None, None, None)
        except Exception as error:  # noqa: BLE001
            # Only ``error`` holds the exception here: Python clears it when the
            # block is left, so this frame and the exception make no cycle (one
            # would keep a failed step's activations alive until a gc pass).
            if not is_traceback_filtering_enabled() and _named(self, error) is error:
                raise
            error = _named(self, error)
            if is_traceback_filtering_enabled():
                raise error.with_traceback(filtered_traceback(error.__traceback__))  # noqa: B904
            raise error  # noqa: B904  (entry_point's relabeled error, its context suppressed)


def _named(layer, error):
    """``error`` as the layer's ``entry_point`` lets it leave: relabeled with
    the layer's name when it is a library check's that names no one, else
    as it is (the full path's errors are named already)."""
    try:
        entry_point(type(layer).__name__, layer.name).__exit__(type(error), error, error.__traceback__)
    except Exception as relabeled:  # noqa: BLE001
        return relabeled
    return error

