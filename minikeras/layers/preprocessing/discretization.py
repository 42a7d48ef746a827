"""keras.layers.Discretization (Keras's quantile summaries in adapt)."""
import numpy

from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.categorical_encoding import encode_categorical
from minikeras.layers.preprocessing.category_encoding import _ENCODINGS
from minikeras.layers.preprocessing.index_lookup import host_tokens

__all__ = ["Discretization"]


# ------------------------------------------------------------ quantile summaries
def _summarize(values, epsilon):
    """A weighted sample of the sorted values: about ``1 / epsilon`` of them,
    each standing for ``step`` values (Keras's streaming quantile summary)."""
    values = numpy.sort(numpy.asarray(values, numpy.float32).reshape(-1))
    step = max(values.size * epsilon, 1)
    kept = values[int(step - 1)::int(step)]
    return numpy.stack([kept, numpy.full(kept.shape, step, dtype=kept.dtype)])


def _compress(summary, epsilon):
    """At most ``1 / epsilon`` points, re-interpolated on the cumulative weights."""
    if summary.shape[1] * epsilon < 1:
        return summary
    targets = numpy.arange(0.0, 1.0, epsilon) + epsilon
    cumulative = summary[1].cumsum()
    fraction = cumulative / cumulative[-1]
    points = numpy.interp(targets, fraction, summary[0])
    new_cumulative = numpy.interp(targets, fraction, cumulative)
    weights = numpy.diff(new_cumulative, prepend=0.0)
    return numpy.stack((points, weights)).astype("float32")


def _merge(first, second, epsilon):
    merged = numpy.concatenate((first, second), axis=1)
    return _compress(merged[:, numpy.argsort(merged[0], kind="stable")], epsilon)


class Discretization(Layer):
    """Bucket numbers by boundaries: id ``i`` for ``boundaries[i-1] <= x <
    boundaries[i]``, then optionally one-hot / multi-hot / count encode.

    Args:
        bin_boundaries: the sorted boundaries; or None with ``num_bins``.
        num_bins: the number of buckets, the boundaries being learned by
            ``adapt`` (quantiles of the data, Keras's summary algorithm).
        epsilon: the quantile summary's error bound (default 0.01).
        output_mode: "int" (default, int32 ids), "one_hot", "multi_hot", "count".
        sparse: only False.
        dtype, name: base Layer arguments.
    """

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False, dtype=None,
                 name=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        if sparse:
            raise ValueError("Discretization: sparse=True is not supported; minikeras tensors are dense.")
        if output_mode not in ("int",) + _ENCODINGS:
            raise ValueError(f"Discretization: output_mode must be one of ('int', 'one_hot', 'multi_hot', 'count'), "
                             f"received {output_mode!r}.")
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. Received: "
                             f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else [float(b) for b in bin_boundaries]
        self.num_bins, self.epsilon, self.output_mode, self.sparse = num_bins, epsilon, output_mode, sparse
        self.summary = None if self.bin_boundaries else numpy.zeros((2, 0), "float32")

    def adapt(self, data, batch_size=None, steps=None):
        """Learn ``num_bins`` boundaries from ``data`` (an array or an iterable of batches)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                             "use `num_bins` instead.")
        self.summary = numpy.zeros((2, 0), "float32")
        # As Keras: an array is one batch; any other iterable yields batches.
        batches = [data] if isinstance(data, (numpy.ndarray, Tensor)) or not hasattr(data, "__iter__") else data
        for index, batch in enumerate(batches):
            if steps is not None and index >= steps:
                break
            values = host_tokens(batch).astype(numpy.float32)
            self.summary = _merge(_summarize(values, self.epsilon), self.summary, self.epsilon)
        self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at construction time or call "
                             "`adapt(dataset)` before you can start using the `Discretization` layer.")
        values = numpy.asarray(host_tokens(inputs), numpy.float64)
        ids = numpy.searchsorted(numpy.asarray(self.bin_boundaries, numpy.float64), values, side="right")
        if self.output_mode == "int":
            return Tensor(ids.astype(numpy.int32))
        return Tensor(encode_categorical(ids, self.output_mode, len(self.bin_boundaries) + 1, dtype=self.dtype))

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else self.num_bins
        if self.output_mode == "one_hot":
            if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
                return tuple(input_shape[:-1]) + (depth,)
            return tuple(input_shape) + (depth,)
        return tuple(input_shape[:-1]) + (depth,) if len(input_shape) > 1 else (depth,)

    def get_config(self):
        config = {**super().get_config(), "bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                  "epsilon": self.epsilon, "output_mode": self.output_mode, "sparse": self.sparse}
        config.pop("trainable", None)  # Keras's config has no such key (nothing to train)
        return config

    @classmethod
    def from_config(cls, config):
        """As Keras: adapted boundaries and num_bins together restore both."""
        config = dict(config)
        if config.get("bin_boundaries") is not None and config.get("num_bins") is not None:
            boundaries = config.pop("bin_boundaries")
            layer = cls(**config)
            layer.bin_boundaries = boundaries
            return layer
        return cls(**config)
