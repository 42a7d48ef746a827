"""Normalization: standardise features with a mean and variance given up
front or learned from data by ``adapt`` (Keras's preprocessing layer)."""
import numpy

from minikeras import backend, ops
from minikeras.autograd import Tensor
from minikeras.backend.dtypes import as_numpy_dtype
from minikeras.device import to_host
from minikeras.layers.base import Layer

__all__ = ["Normalization"]

_EPSILON = 1e-7  # keras.backend.epsilon(): the smallest standard deviation divided by


class Normalization(Layer):
    """``(inputs - mean) / sqrt(variance)`` per position of ``axis``
    (``invert=True`` undoes it).

    Args:
        axis: the axis (or axes) that keep their own statistics, -1 (the
            features) by default; None for one mean and variance overall.
        mean, variance: fixed statistics (both or neither); without them,
            call ``adapt(data)`` before use.
        invert: map standardised values back to the original scale.
        **kwargs: base Layer arguments.

    Weights (non-trainable, when adapted): ``mean``, ``variance`` (shaped
    like the kept axes) and ``count``, as Keras.

    Example:
        >>> norm = Normalization()
        >>> norm.adapt(x_train)
        >>> model = Sequential([Input((8,)), norm, Dense(1)])
    """

    supports_masking = True

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, (int, numpy.integer)) and not isinstance(axis, bool):
            axis = (int(axis),)
        elif isinstance(axis, (list, tuple)) and all(isinstance(a, (int, numpy.integer)) for a in axis):
            axis = tuple(int(a) for a in axis)
        else:
            raise TypeError(f"Normalization: axis must be an int, a list of ints or None, received axis={axis!r}.")
        self.axis = axis
        if (mean is None) != (variance is None):
            raise ValueError(f"Normalization: give both mean and variance, or neither; received mean={mean!r}, "
                             f"variance={variance!r}.")
        if mean is not None and numpy.shape(mean) != numpy.shape(variance):
            raise ValueError(f"Normalization: mean and variance must have the same shape, received "
                             f"{numpy.shape(mean)} and {numpy.shape(variance)}.")
        if mean is not None and numpy.ndim(mean) > len(self.axis):
            raise ValueError(f"Normalization: mean has rank {numpy.ndim(mean)}, more than the {len(self.axis)} "
                             f"kept axes {self.axis}.")
        self.input_mean = mean
        self.input_variance = variance
        self.invert = bool(invert)
        self.adapt_mean = self.adapt_variance = self.count = None
        self._build_shape = None

    # ------------------------------------------------------------ build
    def build(self, input_shape):
        rank = len(input_shape)
        if any(not -rank <= a < rank for a in self.axis):
            raise ValueError(f"Layer '{self.name}' (Normalization): axis {self.axis} is out of range for inputs of "
                             f"rank {rank} (shape {tuple(input_shape)}).")
        self._keep_axes = tuple(sorted(a % rank for a in self.axis))
        if self.input_mean is not None:
            input_shape = self._sized_by_mean(input_shape)
        for a in self._keep_axes:
            if input_shape[a] is None:
                raise ValueError(f"Layer '{self.name}' (Normalization): kept axis {a} must have a known size, "
                                 f"received input shape {tuple(input_shape)}.")
        self._reduce_axes = tuple(a for a in range(rank) if a not in self._keep_axes)
        self._statistics_shape = tuple(input_shape[a] for a in self._keep_axes)
        self._broadcast_shape = tuple(input_shape[a] if a in self._keep_axes else 1 for a in range(rank))
        self._build_shape = tuple(input_shape)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", self._statistics_shape, initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight("variance", self._statistics_shape, initializer="ones",
                                                  trainable=False)
            self.count = self.add_weight("count", (), initializer="zeros", trainable=False, dtype="int64")
        self.built = True

    def _sized_by_mean(self, input_shape):
        """``input_shape`` with a kept axis of unknown size (the batch axis of
        a 1-D input: one example, as ``Dataset.map`` sees it before batching)
        sized by the given mean, right-aligned on the kept axes as Keras
        aligns it, or 1 (broadcast) where the mean has no such axis."""
        shape = list(input_shape)
        mean_shape = numpy.shape(self.input_mean)
        for position, axis in enumerate(reversed(self._keep_axes)):
            if shape[axis] is None:
                shape[axis] = mean_shape[-1 - position] if position < len(mean_shape) else 1
        return tuple(shape)

    def _build_from(self, inputs):
        if isinstance(inputs, Tensor) and inputs.ndim == 0:  # one value: built for rank 0, as Keras builds it
            self.build(())
            self._build_input_shape = ()
            self.built = True
            return
        super()._build_from(inputs)

    def _statistics(self):
        if self.input_mean is not None:
            dtype = as_numpy_dtype(self.compute_dtype)  # constants in the compute dtype, as Keras
            mean = numpy.broadcast_to(numpy.asarray(self.input_mean, dtype), self._statistics_shape)
            variance = numpy.broadcast_to(numpy.asarray(self.input_variance, dtype), self._statistics_shape)
            return mean.reshape(self._broadcast_shape), variance.reshape(self._broadcast_shape)
        return (ops.reshape(self.adapt_mean, self._broadcast_shape),
                ops.reshape(self.adapt_variance, self._broadcast_shape))

    # ------------------------------------------------------------ adapt
    def adapt(self, data):
        """Learn the mean and variance of ``data``: an array or Tensor, or an
        iterable of batches (arrays, or ``(x, y)`` tuples whose x is used)."""
        if isinstance(data, Tensor) or backend.is_array(data) or isinstance(data, numpy.ndarray):
            batches = iter([data])
        elif hasattr(data, "__iter__") and not isinstance(data, (str, bytes)):
            batches = iter(data)
        else:
            raise TypeError(f"Normalization.adapt expects an array, a Tensor or an iterable of batches, received "
                            f"{type(data).__name__}.")
        total_mean = total_variance = None
        total_count = 0
        for batch in batches:
            batch = self._host_batch(batch)
            if not self.built:
                self.build((None,) + batch.shape[1:] if batch.ndim else batch.shape)
            elif self._keep_axes and (len(batch.shape) != len(self._build_shape) or any(
                    batch.shape[a] != self._build_shape[a] for a in self._keep_axes)):
                raise ValueError(f"Layer '{self.name}' (Normalization) was built for inputs of shape "
                                 f"{self._build_shape}; adapt received a batch of shape {batch.shape}.")
            # axis=None keeps no axis: a batch of any rank is reduced whole (a 1-D
            # column into a model whose input is (None, 1), as Keras adapts it).
            reduce_axes = self._reduce_axes if self._keep_axes else tuple(range(batch.ndim))
            count = int(numpy.prod([batch.shape[a] for a in reduce_axes])) if reduce_axes else 1
            if count == 0:
                continue
            mean = batch.mean(axis=reduce_axes)
            variance = batch.var(axis=reduce_axes)
            if total_mean is None:
                total_mean, total_variance, total_count = mean, variance, count
                continue
            # Chan et al.'s parallel update: exact mean and (population) variance.
            total_count += count
            weight = count / total_count
            new_mean = total_mean * (1 - weight) + mean * weight
            total_variance = ((total_variance + (total_mean - new_mean) ** 2) * (1 - weight)
                              + (variance + (mean - new_mean) ** 2) * weight)
            total_mean = new_mean
        if total_mean is None:
            raise ValueError(f"Layer '{self.name}' (Normalization): adapt received no data.")
        if self.input_mean is not None:
            raise ValueError(f"Layer '{self.name}' (Normalization) has a fixed mean and variance; adapt cannot "
                             "change them.")
        self.adapt_mean.assign(numpy.asarray(total_mean, self.dtype).reshape(self._statistics_shape))
        self.adapt_variance.assign(numpy.asarray(total_variance, self.dtype).reshape(self._statistics_shape))

    def _host_batch(self, batch):
        if isinstance(batch, tuple):
            batch = batch[0]
        if isinstance(batch, Tensor):
            batch = batch.numpy()
        elif backend.is_array(batch):
            batch = to_host(batch)
        return numpy.asarray(batch, dtype=numpy.float64)

    # ------------------------------------------------------------- call
    def call(self, inputs):
        inputs = ops.cast(inputs, self.compute_dtype) if inputs.dtype != self.compute_dtype else inputs
        mean, variance = self._statistics()
        deviation = ops.maximum(ops.sqrt(variance), _EPSILON)
        if self.invert:
            return mean + inputs * deviation
        return (inputs - mean) / deviation

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": tuple(self.axis),
            "invert": self.invert,
            "mean": None if self.input_mean is None else numpy.asarray(self.input_mean).tolist(),
            "variance": None if self.input_variance is None else numpy.asarray(self.input_variance).tolist(),
        }
