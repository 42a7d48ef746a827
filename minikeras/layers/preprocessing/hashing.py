"""keras.layers.Hashing: values hashed into bins (Keras's FarmHash
fingerprint and SipHash for a salt), and the hashing helpers.
"""
import numpy

from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.categorical_encoding import encode_categorical
from minikeras.layers.preprocessing.index_lookup import host_tokens
from minikeras._support.argument_validation import is_int
from minikeras._support.string_hash import hash_bucket

__all__ = ["Hashing"]

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
