"""Weight constraints: projections applied to a weight after each update.

A constraint is a callable ``(array) -> array`` on the raw weight array
(NumPy or CuPy, through ``xp``), outside the autograd graph; the optimizer
writes the result back into the weight after each update
(``Optimizer.apply``, as Keras's does; ``add_weight`` sets it as
``variable.constraint``). The result keeps the array's dtype.

Example:
    >>> from minikeras import constraints, layers
    >>> layer = layers.Dense(64, kernel_constraint=constraints.MaxNorm(3))
    >>> constraints.get("non_neg")         # NonNeg()
"""
import math

from minikeras import backend
from minikeras._registry import Configurable, ObjectRegistry
from minikeras.device import registry

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm", "min_max_norm", "non_neg",
           "unit_norm", "get", "serialize", "deserialize"]

# Keras' backend epsilon: keeps the division finite for all-zero columns.
_EPSILON = 1e-7


def _raw(array):
    """The array of a Tensor (constraints work on raw arrays)."""
    if backend.is_array(array):
        return array
    from minikeras.autograd import Tensor

    return array.data if isinstance(array, Tensor) else backend.get_array_module(array).asarray(array)


def _on_device(method):
    """Run a constraint on the raw array inside its device's context."""
    import functools

    @functools.wraps(method)
    def call(self, w):
        w = _raw(w)
        device = registry.owner_of(w)
        if device is None:
            return method(self, w)
        with device.activate():
            return method(self, w)

    return call


def _norms(xp, w, axis):
    return xp.sqrt(xp.sum(xp.square(w), axis=axis, keepdims=True))


def _check_axis(class_name, axis):
    if isinstance(axis, (list, tuple)):
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in axis):
            raise TypeError(f"{class_name}: axis must be an int or a list of ints, received axis={axis!r}.")
        return list(axis)
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{class_name}: axis must be an int or a list of ints, received axis={axis!r}.")
    return axis


def _check_weight_axis(class_name, w, axis):
    for a in axis if isinstance(axis, list) else [axis]:
        if not -w.ndim <= a < w.ndim:
            raise ValueError(
                f"{class_name}: axis {a} is out of range for a weight of shape {tuple(w.shape)} (rank {w.ndim})."
            )


class Constraint(Configurable):
    """Base class: ``new_weight_array = constraint(weight_array)``."""

    def __call__(self, w):
        return w


class MaxNorm(Constraint):
    """Rescale so that the norm along ``axis`` is at most ``max_value``.

    Args:
        max_value: the largest norm allowed (Keras default 2).
        axis: the axis (or axes) the norm is taken over; 0 for a Dense
            kernel ``(in, out)`` constrains each unit's incoming weights,
            ``[0, 1, 2]`` does so for a Conv2D kernel.
    """

    def __init__(self, max_value=2, axis=0):
        if not float(max_value) >= 0:
            raise ValueError(f"MaxNorm: max_value must be >= 0, received max_value={max_value}.")
        self.max_value = max_value
        self.axis = _check_axis("MaxNorm", axis)

    @_on_device
    def __call__(self, w):
        _check_weight_axis("MaxNorm", w, self.axis)
        xp = backend.get_array_module(w)
        axis = tuple(self.axis) if isinstance(self.axis, list) else self.axis
        norms = _norms(xp, w, axis)
        desired = xp.clip(norms, 0, self.max_value)
        return (w * (desired / (norms + _EPSILON))).astype(w.dtype, copy=False)

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class MinMaxNorm(Constraint):
    """Move the norm along ``axis`` towards ``[min_value, max_value]``.

    ``new_norm = rate * clip(norm, min_value, max_value) + (1 - rate) * norm``.

    Args:
        min_value, max_value: the norm bounds.
        rate: 1.0 for a strict projection, smaller to move part way.
        axis: as in :class:`MaxNorm`.
    """

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        if not 0 <= float(min_value) <= float(max_value):
            raise ValueError(
                f"MinMaxNorm needs 0 <= min_value <= max_value, received min_value={min_value}, max_value={max_value}."
            )
        if not 0 < float(rate) <= 1 or math.isnan(float(rate)):
            raise ValueError(f"MinMaxNorm: rate must be in (0, 1], received rate={rate}.")
        self.min_value, self.max_value, self.rate = float(min_value), float(max_value), float(rate)
        self.axis = _check_axis("MinMaxNorm", axis)

    @_on_device
    def __call__(self, w):
        _check_weight_axis("MinMaxNorm", w, self.axis)
        xp = backend.get_array_module(w)
        axis = tuple(self.axis) if isinstance(self.axis, list) else self.axis
        norms = _norms(xp, w, axis)
        desired = self.rate * xp.clip(norms, self.min_value, self.max_value) + (1.0 - self.rate) * norms
        return (w * (desired / (norms + _EPSILON))).astype(w.dtype, copy=False)

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


class NonNeg(Constraint):
    """Set negative weights to zero."""

    @_on_device
    def __call__(self, w):
        xp = backend.get_array_module(w)
        return xp.maximum(w, 0).astype(w.dtype, copy=False)


class UnitNorm(Constraint):
    """Rescale to norm 1 along ``axis``.

    Args:
        axis: as in :class:`MaxNorm` (Keras default 0).
    """

    def __init__(self, axis=0):
        self.axis = _check_axis("UnitNorm", axis)

    @_on_device
    def __call__(self, w):
        _check_weight_axis("UnitNorm", w, self.axis)
        xp = backend.get_array_module(w)
        axis = tuple(self.axis) if isinstance(self.axis, list) else self.axis
        return (w / (_norms(xp, w, axis) + _EPSILON)).astype(w.dtype, copy=False)

    def get_config(self):
        return {"axis": self.axis}


# Keras' lowercase names are aliases of the classes.
max_norm = MaxNorm
min_max_norm = MinMaxNorm
non_neg = NonNeg
unit_norm = UnitNorm

_CLASSES = (MaxNorm, MinMaxNorm, NonNeg, UnitNorm)
_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({"max_norm": MaxNorm, "min_max_norm": MinMaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm})


_REGISTRY = ObjectRegistry("constraint", Constraint, _BY_NAME)


def serialize(constraint):
    """``{"class_name": ..., "config": {...}}`` (None for None; a plain
    function gives its name)."""
    return _REGISTRY.serialize(constraint)


def deserialize(config, custom_objects=None):
    """Rebuild a constraint from :func:`serialize`'s output (or a name).

    Args:
        config: a name, or a dict with "class_name" and "config".
        custom_objects: optional ``{name: class or function}`` for user ones.
    """
    return _REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """A constraint from None, a name ("max_norm", "non_neg", "unit_norm",
    "min_max_norm"), a config dict, an instance, a class or a callable
    ``(array) -> array``.

    Raises:
        ValueError: an unknown name (the message lists the known ones) or
            an object that is none of the above.
    """
    return _REGISTRY.get(identifier)
