"""The Metric base class and the reducing metrics: Mean, Sum, MeanMetricWrapper.

Metrics are stateful and run on the host: every input (Tensor, NumPy or
CuPy array, list) is brought to a NumPy array first and no graph is
recorded. State is accumulated in float64, so a long evaluation does not
drift the way float32 running sums would.
"""
import functools
import re

import numpy

from minikeras import backend, replica_context
from minikeras.autograd import no_grad
from minikeras.device import to_host as device_to_host
from minikeras._support.array_like import foreign_to_array
from minikeras._support.argument_validation import entry_point, validate_tensor_input


def to_host(value, dtype=None):
    """``value`` as a NumPy array (Tensors and CuPy arrays are copied to host)."""
    data = getattr(value, "data", None)
    if data is not None and backend.is_array(data):  # a Tensor
        value = data
    if not isinstance(value, numpy.ndarray) and backend.is_array(value):
        value = device_to_host(value)
    array = numpy.asarray(value)
    if dtype is not None and array.dtype != dtype:
        array = array.astype(dtype)
    return array


def squeeze_or_expand_to_same_rank(first, second, expand_rank_1=True):
    """Keras's rank fix-up: when ranks differ by one and the longer one ends
    in a size-1 axis, squeeze that axis (or, for rank-1 partners, expand the
    other one), so that ``(N,)`` labels meet ``(N, 1)`` predictions."""
    if first.ndim == second.ndim:
        return first, second
    if first.ndim == second.ndim + 1 and first.shape[-1] == 1:
        if second.ndim == 1 and expand_rank_1:
            second = second[..., None]
        else:
            first = first[..., 0]
    if second.ndim == first.ndim + 1 and second.shape[-1] == 1:
        if first.ndim == 1 and expand_rank_1:
            first = first[..., None]
        else:
            second = second[..., 0]
    return first, second


def snake_case(name):
    """``MeanSquaredError`` -> ``mean_squared_error``, ``AUC`` -> ``auc``."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _checked_update(update_state):
    """``update_state`` refusing non-numeric batches and naming the metric
    in the argument errors raised under it."""

    @functools.wraps(update_state)
    def checked(self, *args, **kwargs):
        context = replica_context.current()
        if context is not None and context.keeps_company:
            return None  # a replica with no rows of this batch (distribute/): it counts nothing
        owner = type(self).__name__
        args = tuple(foreign_to_array(value) for value in args)  # torch/TF/pandas batches: arrays
        kwargs = {key: foreign_to_array(value) for key, value in kwargs.items()}
        with entry_point(owner, self.name):
            for value in args:
                validate_tensor_input(owner, value, allow_complex=False, allow_sequence=True)
            for value in kwargs.values():
                if value is not None:
                    validate_tensor_input(owner, value, allow_complex=False, allow_sequence=True)
            return update_state(self, *args, **kwargs)

    checked._checks_inputs = True
    return checked


class Metric:
    """Base class of stateful metrics.

    A subclass implements ``update_state(y_true, y_pred, sample_weight=None)``,
    ``result()`` and ``reset_state()``. Calling the metric updates it with one
    batch and returns the running result.

    Args:
        name: the metric's name (default: the class name in snake_case).
        dtype: kept for Keras compatibility; results are float64 on host.

    Example:
        >>> m = BinaryAccuracy()
        >>> m.update_state([[1], [0]], [[0.9], [0.7]])
        >>> m.result()
        0.5
    """

    # The attributes holding this metric's accumulated state (host floats or
    # NumPy arrays, added when replicas' copies are combined: metrics/state.py),
    # and those holding metrics whose state is part of this one's.
    _summed_state = ()
    _held_metrics = ()

    def __init__(self, name=None, dtype=None):
        self.name = name or snake_case(type(self).__name__)
        self.dtype = dtype or "float32"
        self._variables = []

    def add_variable(self, shape=(), initializer="zeros", dtype=None, aggregation="sum", name=None):
        """A state Variable (never trainable) for a custom metric, as Keras 3.

        Its path is ``"<metric>/<name>"``; ``reset_state`` sets it back to
        zeros unless the subclass resets differently.
        """
        from minikeras.variables import Variable

        index = len(self.variables)
        variable = Variable(initializer, shape=tuple(shape), dtype=dtype or self.dtype, trainable=False,
                            name=name or f"variable_{index}" if index else name or "variable",
                            aggregation=aggregation)
        variable._path = f"{self.name}/{variable.name}"
        self._variables.append(variable)
        return variable

    def add_weight(self, name=None, shape=(), aggregation="sum", initializer="zeros", dtype=None):
        """``add_variable`` with Keras's ``add_weight`` argument order."""
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, aggregation=aggregation,
                                 name=name)

    @property
    def variables(self):
        """The Variables made by ``add_variable`` / ``add_weight``."""
        return list(self.__dict__.get("_variables", []))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Every metric's update_state gets the same input check, once.
        own = cls.__dict__.get("update_state")
        if own is not None and not getattr(own, "_checks_inputs", False):
            cls.update_state = _checked_update(own)

    def update_state(self, *args, **kwargs):  # pragma: no cover - abstract
        """Accumulate statistics from one batch."""
        raise NotImplementedError

    def result(self):  # pragma: no cover - abstract
        """The metric's value from everything seen since the last reset."""
        raise NotImplementedError

    def reset_state(self):
        """Forget everything accumulated: by default, zero every variable."""
        for variable in self.variables:
            variable.assign(numpy.zeros(variable.shape, dtype=variable.dtype))

    def reset_states(self):
        """Alias of ``reset_state`` (the tf.keras 2 name)."""
        self.reset_state()

    def __call__(self, *args, **kwargs):
        """Update with one batch and return the running result."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        """The constructor arguments, for ``from_config``."""
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        """A new metric built from ``get_config()``'s output."""
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


def _reduce_trailing(values, start, reduce_fn):
    if values.ndim > start:
        return reduce_fn(values, axis=tuple(range(start, values.ndim)))
    return values


def reduce_to_samplewise_values(values, sample_weight, reduce_fn):
    """Weight ``values`` and reduce them to one value per sample, as Keras's
    reduction metrics do.

    ``sample_weight`` may have fewer axes than ``values`` (extra value axes
    are reduced first) or more size-1 axes; it is broadcast to the values.

    Returns:
        ``(values, sample_weight)``: 1-D (or 0-D) weighted values, and the
        per-sample weights (None when none were given).
    """
    if sample_weight is not None:
        sample_weight = to_host(sample_weight, numpy.float64)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        values = _reduce_trailing(values, sample_weight.ndim, reduce_fn)
        try:
            sample_weight = numpy.broadcast_to(sample_weight, values.shape)
        except ValueError:
            raise ValueError(
                f"sample_weight of shape {sample_weight.shape} does not broadcast to the per-sample "
                f"values of shape {values.shape}; expected shape {values.shape[:1]} or broadcastable."
            ) from None
        values = values * sample_weight
        if sample_weight.ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=tuple(range(1, sample_weight.ndim)))
    return _reduce_trailing(values, 1, reduce_fn), sample_weight


class Sum(Metric):
    """The (weighted) sum of the values given to ``update_state(values, sample_weight)``.

    Example:
        >>> s = Sum()
        >>> s.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
        >>> s.result()
        4.0
    """

    _summed_state = ("total",)

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = 0.0

    def update_state(self, values, sample_weight=None):
        """Add the (weighted) sum of ``values``."""
        values, _ = reduce_to_samplewise_values(to_host(values, numpy.float64), sample_weight, numpy.sum)
        self.total += float(values.sum())

    def result(self):
        """The running sum, a Python float."""
        return self.total

    def reset_state(self):
        """Set the sum back to 0."""
        self.total = 0.0


class Mean(Metric):
    """The (weighted) mean of the values given to ``update_state(values, sample_weight)``.

    With ``sample_weight`` the mean is ``sum(w * v) / sum(w)``; values with
    more axes than the weights are first averaged over the extra axes.

    Example:
        >>> m = Mean()
        >>> m.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
        >>> m.result()
        2.0
    """

    _summed_state = ("total", "count")

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = 0.0
        self.count = 0.0

    def update_state(self, values, sample_weight=None):
        """Add a batch of values (any shape; the first axis is the batch)."""
        values, sample_weight = reduce_to_samplewise_values(to_host(values, numpy.float64), sample_weight, numpy.mean)
        self.total += float(values.sum())
        if sample_weight is not None:
            self.count += float(sample_weight.sum())
        else:
            self.count += values.shape[0] if values.ndim >= 1 else 1

    def result(self):
        """``total / count`` as a Python float (0.0 before any update)."""
        return self.total / self.count if self.count else 0.0

    def reset_state(self):
        """Forget all values."""
        self.total = 0.0
        self.count = 0.0


class MeanMetricWrapper(Mean):
    """The running mean of a per-sample function ``fn(y_true, y_pred, **kwargs)``.

    ``fn`` may return a NumPy array or a Tensor (e.g. a loss function from
    ``minikeras.losses``, which then runs without recording a graph).

    Args:
        fn: the per-sample function.
        name: the metric's name (default: ``fn.__name__``).
        dtype: kept for Keras compatibility.
        **kwargs: passed on to ``fn``.

    Example:
        >>> def absolute_error(y_true, y_pred):
        ...     return abs(to_host(y_true) - to_host(y_pred))
        >>> m = MeanMetricWrapper(absolute_error)
        >>> m([1.0, 2.0], [1.5, 2.0])
        0.25
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None) or "mean_metric_wrapper", dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Evaluate ``fn`` on one batch and add its per-sample values."""
        with no_grad():
            values = self._fn(y_true, y_pred, **self._fn_kwargs)
        super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        """Name, dtype, the function and its keyword arguments."""
        return {**super().get_config(), "fn": self._fn, **self._fn_kwargs}

