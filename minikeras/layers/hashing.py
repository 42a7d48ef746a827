"""Hashing and HashedCrossing: Keras's preprocessing layers that bucket
values (or crosses of values) by a string hash.

Each value becomes a string (integers in decimal; floats truncated to
int64 first; bools "true"/"false", as TensorFlow's ``as_string``) and is
bucketed by FarmHash Fingerprint64, or by SipHash-2-4 keyed by ``salt``
(``_support/string_hash.py``): the same bins Keras gives, so a model trained
in Keras finds its embeddings at the same rows here. Like the other lookup
layers it runs on the host (NumPy) and returns a Tensor.
"""
import numpy

from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.categorical_encoding import encode_categorical
from minikeras.layers.index_lookup import host_tokens
from minikeras._support.argument_validation import is_int
from minikeras._support.string_hash import cross_hash, hash_bucket

__all__ = ["Hashing", "HashedCrossing"]

_OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count")


def as_strings(values):
    """TensorFlow's ``as_string`` of a host array (floats cast to int64 first), as bytes."""
    values = numpy.asarray(values)
    if values.dtype.kind == "f":
        values = values.astype(numpy.int64)
    if values.dtype.kind == "b":
        return [b"true" if value else b"false" for value in values.reshape(-1).tolist()]
    if values.dtype.kind in "iu":
        return [str(value).encode("ascii") for value in values.reshape(-1).tolist()]
    flat = []
    for value in values.reshape(-1).tolist():
        if isinstance(value, bytes):
            flat.append(value)
        elif isinstance(value, str):
            flat.append(value.encode("utf-8", "surrogatepass"))  # any str hashes, a lone surrogate too
        else:
            raise TypeError(f"Hashing expects strings or numbers, received {type(value).__name__} {value!r}.")
    return flat


def hash_values_to_bins(values, num_bins, mask_value=None, salt=None):
    """Bin ids (int64, the values' shape) of a host array, as Keras's Hashing."""
    values = numpy.asarray(values)
    bins, mask = num_bins, None
    if mask_value is not None and num_bins > 1:  # bin 0 is kept for the mask value
        bins -= 1
        holds_bytes = values.dtype.kind == "S" or (values.dtype == object and values.size
                                                   and isinstance(values.flat[0], bytes))
        if holds_bytes and isinstance(mask_value, str):  # bytes are hashed undecoded: compare them as bytes
            mask_value = mask_value.encode("utf-8", "surrogatepass")
        mask = values == mask_value
    hashed = numpy.array([hash_bucket(value, bins, salt) for value in as_strings(values)], numpy.int64)
    hashed = hashed.reshape(values.shape)
    if mask is not None:
        hashed = numpy.where(mask, 0, hashed + 1)
    return hashed


class Hashing(Layer):
    """Bucket strings or numbers into ``num_bins`` bins by a hash.

    Args:
        num_bins: the number of bins (including the mask bin, if any).
        mask_value: values equal to it go to bin 0 and the others hash into
            bins 1..num_bins-1 (default None: no mask bin).
        salt: None (FarmHash Fingerprint64, TensorFlow's
            ``to_hash_bucket_fast``), an int or two ints: the SipHash key
            (``to_hash_bucket_strong``; an int ``s`` is the key ``[s, s]``).
        output_mode: "int" (bin ids, default), "one_hot", "multi_hot" or
            "count" (encoded into ``num_bins`` values along the last axis).
        sparse: only False (minikeras's tensors are dense).
        **kwargs: base Layer arguments; dtype defaults to "int64" for
            "int" output and floatx otherwise.

    Example:
        >>> Hashing(num_bins=3)(np.array([["A"], ["B"], ["C"], ["D"], ["E"]])).numpy().ravel()
        array([1, 0, 1, 1, 2])
    """

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or isinstance(num_bins, bool) or not is_int(num_bins) or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        if output_mode not in _OUTPUT_MODES:
            raise ValueError(f"Invalid value for argument `output_mode`. Expected one of {_OUTPUT_MODES}. "
                             f"Received: output_mode={output_mode}")
        if output_mode == "int" and str(self.dtype) not in ("int32", "int64"):
            raise ValueError(f"When `output_mode=\"int\"`, `dtype` should be an integer type, 'int32' or 'int64'. "
                             f"Received: dtype={kwargs['dtype']}")
        if sparse:
            raise ValueError(f"Hashing: sparse=True is not supported (minikeras tensors are dense); received "
                             f"sparse={sparse!r} with output_mode={output_mode!r}.")
        self.salt = None
        if salt is not None:
            if isinstance(salt, (tuple, list)) and len(salt) == 2 and all(is_int(s) for s in salt):
                self.salt = [int(s) for s in salt]
            elif is_int(salt) and not isinstance(salt, bool):
                self.salt = [int(salt), int(salt)]
            else:
                raise ValueError(f"The `salt` argument for `Hashing` can only be a tuple of size 2 integers, or a "
                                 f"single integer. Received: salt={salt}.")
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.strong_hash = self.salt is not None
        self.output_mode = output_mode
        self.sparse = bool(sparse)

    def _convert_input(self, value):
        return value  # values stay on the host, strings included

    def call(self, inputs):
        values = host_tokens(inputs, decode_bytes=False)
        if self.output_mode == "one_hot" and values.ndim and values.shape[-1] == 1:
            values = values[..., 0]
        bins = hash_values_to_bins(values, self.num_bins, self.mask_value, self.salt)
        if self.output_mode == "int":
            return Tensor(bins.astype(str(self.dtype)))
        return Tensor(encode_categorical(bins, self.output_mode, self.num_bins, dtype=str(self.dtype)))

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_bins,)
        return tuple(input_shape[:-1]) + (self.num_bins,)

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins, "salt": self.salt,
                "mask_value": self.mask_value, "output_mode": self.output_mode, "sparse": self.sparse}


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
