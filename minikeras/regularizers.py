"""Weight regularizers: penalties added to the loss, as in Keras.

A regularizer is called on a weight Tensor and returns a differentiable
scalar Tensor of the weight's dtype: ``L2(0.01)(w) = 0.01 * sum(w ** 2)``.
``Layer.losses`` collects them for every weight created with
``regularizer=...``; the training loop adds them to the loss.

Example:
    >>> from minikeras import layers, regularizers
    >>> layer = layers.Dense(10, kernel_regularizer=regularizers.L2(1e-4))
    >>> regularizers.get("l1")             # L1(l1=0.01)
"""
import math

from minikeras.backend.dtypes import is_float_dtype
from minikeras._registry import Configurable, ObjectRegistry
from minikeras.autograd import Tensor
from minikeras.ops.nn.weight_penalty import weight_penalty

__all__ = ["Regularizer", "L1", "L2", "L1L2", "l1", "l2", "l1_l2", "get", "serialize", "deserialize"]
__all__ += ["OrthogonalRegularizer", "orthogonal_regularizer"]


def _coefficient(class_name, name, value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{class_name}: {name} must be a number, received {name}={value!r}.") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{class_name}: {name} must be a finite non-negative number, received {name}={value}.")
    return value


class Regularizer(Configurable):
    """Base class: ``penalty = regularizer(weight)``, a scalar Tensor.

    Subclasses implement ``__call__`` and ``get_config``.
    """

    def __call__(self, x):  # pragma: no cover - abstract
        raise NotImplementedError


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``.

    Args:
        l1: the L1 factor (default 0.0).
        l2: the L2 factor (default 0.0).
    """

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _coefficient(type(self).__name__, "l1", l1)
        self.l2 = _coefficient(type(self).__name__, "l2", l2)

    def __call__(self, x):
        if not isinstance(x, Tensor):
            x = Tensor(x)
        if not is_float_dtype(x.dtype):
            raise TypeError(f"{type(self).__name__} needs a floating-point weight, received dtype {x.dtype}.")
        return weight_penalty(x, self.l1, self.l2)

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """``l1 * sum(|x|)``.

    Args:
        l1: the factor (Keras default 0.01).
    """

    def __init__(self, l1=0.01):
        super().__init__(l1=l1, l2=0.0)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    """``l2 * sum(x ** 2)`` (Keras' weight decay as a loss term).

    Args:
        l2: the factor (Keras default 0.01).
    """

    def __init__(self, l2=0.01):
        super().__init__(l1=0.0, l2=l2)

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """Pushes the rows (or columns) of a 2-D kernel towards orthogonality:
    ``factor * 0.5 * mean over pairs i < j of |<u_i, u_j>|`` for the
    L2-normalized rows ``u`` (``mode="rows"``) or columns (``"columns"``).

    Args:
        factor: the penalty's scale (default 0.01).
        mode: ``"rows"`` (default) or ``"columns"``.

    Raises:
        ValueError: a bad mode, or (when called) a weight not of rank 2.
    """

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _coefficient(type(self).__name__, "factor", factor)
        if mode not in ("rows", "columns"):
            raise ValueError(f'Invalid value for argument `mode`. Expected one of {{"rows", "columns"}}. Received: '
                             f"mode={mode}")
        self.mode = mode

    def __call__(self, x):
        from minikeras import ops

        if not isinstance(x, Tensor):
            x = Tensor(x)
        if x.ndim != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={x.shape}")
        axis = 1 if self.mode == "rows" else 0
        # Keras's L2 normalisation: x * min(rsqrt(sum(x^2)), 1 / epsilon).
        inverse_norm = ops.minimum(ops.rsqrt(ops.sum(ops.square(x), axis=axis, keepdims=True)), 1e7)
        unit = x * inverse_norm
        product = ops.matmul(unit, ops.transpose(unit)) if axis == 1 else ops.matmul(ops.transpose(unit), unit)
        size = x.shape[1 - axis]
        with x.device.activate():
            off_diagonal = Tensor(1.0 - x.device.xp.eye(size, dtype=x.dtype), device=x.device)
        pairs = size * (size - 1.0) / 2.0
        return self.factor * 0.5 * ops.sum(ops.abs(product * off_diagonal)) / pairs

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode}


# Keras' lowercase names are aliases of the classes.
orthogonal_regularizer = OrthogonalRegularizer
l1 = L1
l2 = L2
l1_l2 = L1L2

_CLASSES = (L1, L2, L1L2, OrthogonalRegularizer)
_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2})
_BY_NAME.update({"orthogonal_regularizer": OrthogonalRegularizer})


_REGISTRY = ObjectRegistry("regularizer", Regularizer, _BY_NAME)


def serialize(regularizer):
    """``{"class_name": ..., "config": {...}}`` (None for None; a plain
    function gives its name)."""
    return _REGISTRY.serialize(regularizer)


def deserialize(config, custom_objects=None):
    """Rebuild a regularizer from :func:`serialize`'s output (or a name).

    Args:
        config: a name, or a dict with "class_name" and "config".
        custom_objects: optional ``{name: class or function}`` for user ones.
    """
    return _REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """A regularizer from None, a name ("l1", "l2", "l1_l2"), a config dict,
    an instance, a class or a callable ``(weight) -> scalar Tensor``.

    Raises:
        ValueError: an unknown name (the message lists the known ones) or
            an object that is none of the above.
    """
    return _REGISTRY.get(identifier)
