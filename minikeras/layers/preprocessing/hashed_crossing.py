"""keras.layers.HashedCrossing: crossed features hashed into bins."""
import numpy

from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.categorical_encoding import encode_categorical
from minikeras.layers.preprocessing.index_lookup import host_tokens
from minikeras._support.argument_validation import is_int
from minikeras._support.string_hash import cross_hash

__all__ = ["HashedCrossing"]


class HashedCrossing(Layer):
    """Cross two or more categorical features into ``num_bins`` bins by a hash
    of their values (TensorFlow's ``sparse.cross_hashed``, Keras's bins).

    Args:
        num_bins: the number of bins.
        output_mode: "int" (bin ids, default) or "one_hot".
        sparse: only False (minikeras's tensors are dense).
        name, dtype: as for any layer (dtype defaults to "int64" for "int").

    Call arguments:
        inputs: a list of at least two arrays of equal shape ``()``,
            ``(batch,)`` or ``(batch, 1)``, of integers or strings.

    Example:
        >>> HashedCrossing(num_bins=5)([np.array([1, 2]), np.array(["a", "b"])]).shape
        (2,)
    """

    def __init__(self, num_bins, output_mode="int", sparse=False, name=None, dtype=None, **kwargs):
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype, **{k: v for k, v in kwargs.items() if k == "trainable"})
        if num_bins is None or isinstance(num_bins, bool) or not is_int(num_bins) or num_bins <= 0:
            raise ValueError(f"HashedCrossing: num_bins must be a positive int, received num_bins={num_bins!r}.")
        if output_mode not in ("int", "one_hot"):
            raise ValueError(f"The `output_mode` argument of HashedCrossing must be one of 'int', 'one_hot'. "
                             f"Received: output_mode={output_mode}")
        if sparse:
            raise ValueError(f"HashedCrossing: sparse=True is not supported (minikeras tensors are dense); received "
                             f"sparse={sparse!r}.")
        self.num_bins, self.output_mode, self.sparse = int(num_bins), output_mode, bool(sparse)

    def _convert_input(self, value):
        return value  # values stay on the host, strings included

    def _check_inputs(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"`HashedCrossing` should be called on a list or tuple of inputs. Received: "
                             f"inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError(f"`HashedCrossing` should be called on at least two inputs. Received: inputs={inputs}")
        columns = [numpy.asarray(host_tokens(value, decode_bytes=False)) for value in inputs]
        shape = columns[0].shape
        if len(shape) > 2 or (len(shape) == 2 and shape[-1] != 1):
            raise ValueError(f"All `HashedCrossing` inputs should have shape `()`, `(batch_size)` or "
                             f"`(batch_size, 1)`. Received shapes {[c.shape for c in columns]}.")
        if any(column.shape != shape for column in columns[1:]):
            raise ValueError(f"All `HashedCrossing` inputs should have equal shape. Received shapes "
                             f"{[c.shape for c in columns]}.")
        for column in columns:
            strings = column.dtype.kind in "SU" or (column.dtype == object and all(
                isinstance(v, (str, bytes)) for v in column.reshape(-1).tolist()))
            if column.dtype.kind not in "iu" and not strings:
                raise ValueError(f"All `HashedCrossing` inputs should have an integer or string dtype. Received "
                                 f"dtype {column.dtype}.")
        return columns, shape

    def call(self, inputs):
        columns, shape = self._check_inputs(inputs)
        flat = [column.reshape(-1).tolist() for column in columns]
        bins = numpy.array([cross_hash(features, self.num_bins) for features in zip(*flat)], numpy.int64)
        bins = bins.reshape(shape)
        if self.output_mode == "int":
            return Tensor(bins.astype(str(self.dtype)))
        return Tensor(encode_categorical(bins, "one_hot", self.num_bins, dtype=self.compute_dtype))

    def compute_output_shape(self, input_shape):
        first = tuple(input_shape[0])
        if self.output_mode == "int":
            return first
        if first and first[-1] == 1:
            return first[:-1] + (self.num_bins,)
        return first + (self.num_bins,)

    def get_config(self):
        # Keras's HashedCrossing writes only these (no "trainable").
        config = super().get_config()
        return {"num_bins": self.num_bins, "output_mode": self.output_mode, "sparse": self.sparse,
                "name": config["name"], "dtype": config["dtype"]}
