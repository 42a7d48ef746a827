"""StringLookup and IntegerLookup: map tokens to vocabulary indices (or
back, with ``invert=True``), Keras's preprocessing layers.

They work on the host (NumPy), on arrays or lists of tokens, before the
data reaches the numeric layers; the result is an int64 Tensor (or float32
for the "one_hot"/"multi_hot"/"count" encodings). Index layout, as Keras:
the mask token (if any) is 0, then the OOV index(es), then the vocabulary,
most frequent token first after ``adapt`` (ties: the larger token first).
The vocabulary is part of ``get_config()``, so a saved model keeps it.
"""
import collections
import os

import numpy

from minikeras._support import load_budget
from minikeras._support.safe_mode import UnsafeDeserializationError, refuses_outside_files
from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.categorical_encoding import encode_categorical
from minikeras._support.argument_validation import is_int
from minikeras._support.string_hash import hash_bucket

__all__ = ["StringLookup", "IntegerLookup"]

_OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
#: Keras's spellings of the same modes.
_ALIASES = {"binary": "multi_hot", "tf-idf": "tf_idf"}


def host_tokens(inputs, decode_bytes=True):
    """Tokens as a NumPy array: strings stay strings, and bytes (TensorFlow's
    strings) are decoded as UTF-8 unless ``decode_bytes`` is False (the
    hashing layers hash the bytes themselves, as TensorFlow does)."""
    if isinstance(inputs, Tensor):
        inputs = inputs.numpy()
    array = numpy.asarray(inputs, dtype=object if isinstance(inputs, (list, tuple)) else None)
    if decode_bytes and (array.dtype.kind == "S" or (array.dtype == object and array.size
                                                     and isinstance(array.flat[0], bytes))):
        array = numpy.vectorize(lambda b: decode_text(b) if isinstance(b, bytes) else b, otypes=[object])(array)
    return array


def decode_text(data, encoding="utf-8"):
    """``data`` (bytes) as text; bytes that are not valid in ``encoding``
    become U+FFFD, so malformed input is a token like any other (out of
    the vocabulary, as in Keras) rather than an error in the middle of a batch."""
    return data.decode(encoding, errors="replace")


def _oov_method(class_name, value):
    if value not in ("floormod", "farmhash"):
        raise ValueError(f"{class_name}: oov_method must be 'floormod' or 'farmhash', received {value!r}.")
    return value


def _salt(class_name, salt):
    """Keras's salt: None, or a list of two ints (an int ``s`` is ``[s, s]``)."""
    if salt is None:
        return None
    if isinstance(salt, (tuple, list)) and len(salt) == 2 and all(is_int(s) for s in salt):
        return [int(s) for s in salt]
    if is_int(salt) and not isinstance(salt, bool):
        return [int(salt), int(salt)]
    raise ValueError(f"The `salt` argument for `{class_name}` can only be a tuple of 2 integers, or a single integer. "
                     f"Received: salt={salt}.")


class _IndexLookup(Layer):
    """Shared vocabulary logic of StringLookup and IntegerLookup."""

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, invert, output_mode,
                 pad_to_max_tokens, sparse, idf_weights=None, vocabulary_size=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if vocabulary_size is not None and (isinstance(vocabulary_size, bool) or not is_int(vocabulary_size)
                                            or vocabulary_size < 0):
            raise ValueError(f"{name}: vocabulary_size must be None or a non-negative int, received "
                             f"{vocabulary_size!r}.")
        output_mode = _ALIASES.get(output_mode, output_mode) if isinstance(output_mode, str) else output_mode
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                       or max_tokens <= 1):
            raise ValueError(f"{name}: max_tokens must be None or an int > 1, received max_tokens={max_tokens!r}.")
        if isinstance(num_oov_indices, bool) or not isinstance(num_oov_indices, int) or num_oov_indices < 0:
            raise ValueError(f"{name}: num_oov_indices must be a non-negative int, received {num_oov_indices!r}.")
        if output_mode not in _OUTPUT_MODES:
            raise ValueError(f"{name}: output_mode must be one of {_OUTPUT_MODES} (or 'binary', 'tf-idf'), "
                             f"received output_mode={output_mode!r}.")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(f"{name}: idf_weights should only be set if output_mode is 'tf_idf', received "
                             f"output_mode={output_mode!r}.")
        if output_mode == "tf_idf" and vocabulary is not None and idf_weights is None:
            raise ValueError(f"{name}: when a vocabulary is given in TF-IDF output mode, the idf_weights argument "
                             "must be given too.")
        if invert and output_mode != "int":
            raise ValueError(f"{name}: invert=True needs output_mode='int', received output_mode={output_mode!r}.")
        if sparse:
            raise ValueError(f"{name}: sparse=True is not supported (minikeras has no sparse tensors).")
        self.max_tokens, self.num_oov_indices = max_tokens, num_oov_indices
        self.mask_token, self.oov_token = mask_token, oov_token
        self.invert, self.output_mode = bool(invert), output_mode
        self.pad_to_max_tokens, self.sparse = bool(pad_to_max_tokens), False
        self._vocabulary, self._index = [], {}
        # The size Keras's config records (``vocabulary_size``): the encoding's width until the vocabulary
        # arrives, when a file keeps it in its assets (saving/keras_assets.py) and the graph is rebuilt first.
        self._declared_vocabulary_size = None if vocabulary_size is None else int(vocabulary_size)
        self._idf = None  # per output index, special tokens included (tf_idf only)
        # The budget is charged before anything the config's sizes ask for is built (the special tokens included).
        self._charge_declared_sizes(vocabulary)
        self._check_tokens(self._special_tokens())
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    def _charge_declared_sizes(self, vocabulary):
        """While a file loads, what its config's sizes make the layer hold
        counts against the loading budget (_support/load_budget.py) before any of
        it is allocated: the OOV tokens, the vocabulary it declares (checked
        now, charged as its asset is read), one given inline."""
        if not load_budget.loading():
            return
        what = f"{type(self).__name__} '{self.name}'"
        # get_vocabulary() lists the OOV token once per index (twice over while it joins the lists).
        load_budget.charge_bytes(16 * self.num_oov_indices, f"the OOV tokens of {what} (num_oov_indices="
                                 f"{self.num_oov_indices})", cumulative=False)
        if self._declared_vocabulary_size is not None:
            load_budget.charge_bytes(load_budget.TOKEN_BYTES * self._declared_vocabulary_size, f"the vocabulary of {what} "
                                     f"(vocabulary_size={self._declared_vocabulary_size})", cumulative=False)
        if isinstance(vocabulary, (list, tuple)):
            load_budget.charge_bytes(load_budget.TOKEN_BYTES * len(vocabulary), f"the vocabulary of {what} "
                                     f"({len(vocabulary)} tokens in its config)")
        if self.pad_to_max_tokens and self.max_tokens and self.output_mode == "tf_idf":
            load_budget.charge((self.max_tokens,), "float64", f"the TF-IDF weights of {what} padded to max_tokens")

    # ------------------------------------------------------- vocabulary
    def _uses_mask(self):
        # Keras keeps the mask token (index 0) only for integer outputs.
        return self.mask_token is not None and self.output_mode == "int"

    def _special_tokens(self):
        special = [self.mask_token] if self._uses_mask() else []
        return special + [self.oov_token] * self.num_oov_indices

    def get_vocabulary(self, include_special_tokens=True):
        """The tokens in index order (with the mask and OOV tokens first)."""
        vocabulary = list(self._vocabulary)
        return self._special_tokens() + vocabulary if include_special_tokens else vocabulary

    def vocabulary_size(self):
        """How many indices the layer produces (special tokens included)."""
        return int(self._uses_mask()) + self.num_oov_indices + len(self._vocabulary)

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Use ``vocabulary`` (a list or array of unique tokens, without the
        special tokens) and, in "tf_idf" mode, its ``idf_weights`` (one per
        token; the special tokens get their mean, as Keras)."""
        name = type(self).__name__
        if self.output_mode == "tf_idf" and idf_weights is None:
            raise ValueError(f"{name}: idf_weights must be set if output_mode is 'tf_idf'.")
        if self.output_mode != "tf_idf" and idf_weights is not None:
            raise ValueError(f"{name}: idf_weights should only be set if output_mode is 'tf_idf', received "
                             f"output_mode={self.output_mode!r}.")
        if isinstance(vocabulary, (str, os.PathLike)):
            vocabulary = self._vocabulary_file(vocabulary)
        tokens = [self._token(t) for t in host_tokens(vocabulary).reshape(-1).tolist()]
        self._check_tokens(tokens + self._special_tokens())
        special = set(self._special_tokens())
        found_special = bool(tokens) and tokens[:len(self._special_tokens())] == self._special_tokens()
        if found_special:
            tokens = tokens[len(self._special_tokens()):]  # a vocabulary saved with its special tokens
        repeated = [t for t, n in collections.Counter(tokens).items() if n > 1]
        if repeated:
            raise ValueError(f"{type(self).__name__}: the vocabulary repeats {repeated[:5]}.")
        clash = [t for t in tokens if t in special]
        if clash:
            raise ValueError(f"{type(self).__name__}: the vocabulary contains the special token(s) {clash}.")
        if self.max_tokens is not None and len(tokens) + len(special and self._special_tokens()) > self.max_tokens:
            raise ValueError(f"{type(self).__name__}: the vocabulary ({len(tokens)} tokens plus special tokens) "
                             f"exceeds max_tokens={self.max_tokens}.")
        self._vocabulary = tokens
        self._index = {token: i + len(self._special_tokens()) for i, token in enumerate(tokens)}
        if idf_weights is not None:
            self._idf = self._padded_idf(idf_weights, found_special)

    def _keras_named_variables(self):
        """What Keras's ``save_own_variables`` writes: in "tf_idf" mode the
        weights per index as ``vars/idf_weights`` (saving/keras_assets.py)."""
        return {"idf_weights": self._idf} if self.output_mode == "tf_idf" else {}

    def _keras_assign_named(self, key, value):
        self._idf = numpy.asarray(value, dtype=numpy.float32)  # "idf_weights", checked against _idf's shape

    def _vocabulary_file(self, path):
        """The tokens of a vocabulary file (a path, as Keras takes it): one a
        line, without the special tokens. A config being deserialized in safe
        mode (a file loading, ``from_config``, ``model_from_json``) may not
        name one: it would read whatever file the config points to."""
        name = type(self).__name__
        if refuses_outside_files():
            raise UnsafeDeserializationError(
                f"{name} '{self.name}': the config being loaded asks for the vocabulary file {str(path)!r}, outside "
                "the model file or config. Reading it could expose any file, so it is refused in safe mode; if you "
                "trust the config, pass safe_mode=False to load_model (or deserialize_keras_object), or call "
                "minikeras.config.enable_unsafe_deserialization().")
        if self.output_mode == "tf_idf":
            raise ValueError(f"{name}: output_mode 'tf_idf' does not support loading a vocabulary from a file.")
        if not os.path.isfile(path):
            raise ValueError(f"{name}: vocabulary file {str(path)!r} does not exist.")
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # the last line's newline
        if isinstance(self, IntegerLookup):
            try:
                return [int(line) for line in lines]
            except ValueError:
                raise ValueError(f"{name}: vocabulary file {str(path)!r} holds a line that is not an integer.") from None
        return lines

    def _token_idf_weights(self):
        """The vocabulary's idf weights (given or adapted), for the config."""
        if self._idf is None or not self._vocabulary:
            return None
        start = len(self._special_tokens())
        return [float(w) for w in self._idf[start:start + len(self._vocabulary)]]

    def _padded_idf(self, idf_weights, found_special):
        """Weights per output index: special tokens first (their mean, unless
        the vocabulary came with them), zeros up to max_tokens if padded."""
        weights = numpy.asarray(host_tokens(idf_weights), dtype=numpy.float64).reshape(-1)
        expected = len(self._vocabulary) + (len(self._special_tokens()) if found_special else 0)
        if weights.size != expected:
            raise ValueError(f"{type(self).__name__}: idf_weights must be the same length as the vocabulary, "
                             f"received {weights.size} weights for {expected} tokens.")
        if not found_special:
            front = numpy.full(len(self._special_tokens()), weights.mean() if weights.size else 0.0)
            weights = numpy.concatenate([front, weights])
        if self.pad_to_max_tokens and self.max_tokens:
            weights = numpy.pad(weights, (0, max(0, self.max_tokens - weights.size)))
        return weights.astype(numpy.float32)

    def adapt(self, data, steps=None):
        """Learn the vocabulary from ``data`` (an array or an iterable of
        batches): tokens by descending frequency, ties by descending token."""
        if isinstance(data, (Tensor, numpy.ndarray, list, tuple)):
            batches = [data]
        elif hasattr(data, "__iter__"):
            batches = data
        else:
            raise TypeError(f"{type(self).__name__}.adapt expects an array or an iterable of batches, received "
                            f"{type(data).__name__}.")
        counts, document_counts, documents = collections.Counter(), collections.Counter(), 0
        for step, batch in enumerate(batches):
            if steps is not None and step >= steps:
                break
            batch = batch[0] if isinstance(batch, tuple) else batch
            counts.update(self._token(t) for t in self._tokens_of(batch))
            if self.output_mode == "tf_idf":  # each row is a document (a 1-D batch is one document)
                rows = host_tokens(batch)
                rows = rows.reshape(1, -1) if rows.ndim <= 1 else rows.reshape(rows.shape[0], -1)
                for row in rows:
                    document_counts.update({self._token(t) for t in row.tolist()})
                documents += rows.shape[0]
        for special in self._special_tokens():
            counts.pop(special, None)
        ordered = sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)
        limit = None if self.max_tokens is None else self.max_tokens - len(self._special_tokens())
        vocabulary = [token for token, _ in ordered[:limit]]
        idf = None
        if self.output_mode == "tf_idf":  # Keras: log(1 + documents / (1 + documents containing the token))
            idf = [numpy.log(1 + documents / (1 + document_counts[token])) for token in vocabulary]
        self.set_vocabulary(vocabulary, idf)

    def _tokens_of(self, batch):
        return host_tokens(batch).reshape(-1).tolist()

    # ------------------------------------------------------------- call
    def _convert_input(self, value):
        return value  # tokens stay on the host, strings included

    def _lookup(self, tokens):
        """Indices of a NumPy array of tokens."""
        oov_start = 1 if self._uses_mask() else 0
        flat = tokens.reshape(-1).tolist()
        indices = numpy.empty(len(flat), dtype=numpy.int64)
        for position, token in enumerate(flat):
            token = self._token(token)
            if self._uses_mask() and token == self.mask_token:
                indices[position] = 0
            elif token in self._index:
                indices[position] = self._index[token]
            elif self.num_oov_indices == 0:
                raise ValueError(f"Layer '{self.name}' ({type(self).__name__}): {token!r} is not in the vocabulary "
                                 "and num_oov_indices=0; set num_oov_indices=1.")
            else:
                indices[position] = oov_start + self._oov_bucket(token)
        return indices.reshape(tokens.shape)

    def _oov_bucket(self, token):
        return 0

    def _check_tokens(self, tokens):
        """Refuse tokens a vocabulary cannot hold (StringLookup: text UTF-8 cannot encode)."""

    def _depth(self):
        if self.pad_to_max_tokens and self.max_tokens:
            return self.max_tokens
        if not self._vocabulary and self._declared_vocabulary_size is not None:
            return self._declared_vocabulary_size  # the vocabulary is still to be loaded
        return self.vocabulary_size()

    def _encode(self, indices):
        depth = self._depth()
        # While a file loads, its config declares the width (max_tokens, vocabulary_size, num_oov_indices):
        # within what its weights justify (float64: the counts and the copy their clipping or weighting makes).
        rows = indices.shape[0] if indices.ndim else 1
        shape = (rows, depth) if self.output_mode != "one_hot" else tuple(indices.shape) + (depth,)
        load_budget.charge(shape, "float64", f"the {self.output_mode} encoding of layer '{self.name}'", cumulative=False)
        counts = encode_categorical(indices, "count" if self.output_mode == "tf_idf" else self.output_mode, depth)
        if self.output_mode == "tf_idf":
            # Not adapted yet (a graph being rebuilt from a file probes it before its vocabulary loads): no weights.
            idf = self._idf if self._idf is not None else numpy.zeros(depth, numpy.float32)
            return counts * idf[:depth]
        return counts

    def call(self, inputs):
        tokens = host_tokens(inputs)
        if self.invert:
            vocabulary = self.get_vocabulary()
            indices = numpy.asarray(tokens, dtype=numpy.int64)
            if indices.size and (indices.min() < 0 or indices.max() >= len(vocabulary)):
                raise ValueError(f"Layer '{self.name}' ({type(self).__name__}, invert=True): indices must lie in "
                                 f"[0, {len(vocabulary)}), received {int(indices.min())}..{int(indices.max())}.")
            result = numpy.array([vocabulary[i] for i in indices.reshape(-1)], dtype=object).reshape(indices.shape)
            return self._inverted(result)
        indices = self._lookup(tokens)
        if self.output_mode == "int":
            return Tensor(indices)
        return Tensor(self._encode(indices))

    def _inverted(self, tokens):
        return tokens

    def compute_mask(self, inputs, previous_mask):
        if not self._uses_mask() or self.invert:
            return None
        return Tensor(host_tokens(inputs) != self.mask_token)

    def get_config(self):
        # No vocabulary yet is None, as Keras writes it (Keras cannot rebuild the layer from []).
        return {**super().get_config(), "max_tokens": self.max_tokens, "num_oov_indices": self.num_oov_indices,
                "mask_token": self.mask_token, "oov_token": self.oov_token,
                "vocabulary": list(self._vocabulary) or None, "idf_weights": self._token_idf_weights(),
                "vocabulary_size": self.vocabulary_size() if self._vocabulary else self._declared_vocabulary_size,
                "invert": self.invert, "output_mode": self.output_mode,
                "pad_to_max_tokens": self.pad_to_max_tokens, "sparse": self.sparse}


class StringLookup(_IndexLookup):
    """Map strings to indices (or indices to strings with ``invert=True``).

    Args:
        max_tokens: cap on the vocabulary size (special tokens included).
        num_oov_indices: OOV indices (default 1; 0: unknown tokens raise);
            with more, an unknown token goes to the bucket Keras gives it
            (FarmHash Fingerprint64, or SipHash with ``salt``;
            _support/string_hash.py).
        mask_token: a padding token mapped to 0 (default None: no mask).
        oov_token: the token returned for OOV indices with invert (default "[UNK]").
        vocabulary: a list of tokens, or the path of a text file holding
            one token a line, special tokens left out (else call ``adapt``).
        invert: map indices back to tokens.
        output_mode: "int" (default), "one_hot", "multi_hot" (alias
            "binary"), "count" or "tf_idf" (counts times the
            ``idf_weights``, or those ``adapt`` computes as Keras:
            ``log(1 + documents / (1 + documents with the token))``).
        idf_weights: one weight per vocabulary token, with ``vocabulary``,
            in "tf_idf" mode only.
        pad_to_max_tokens: encode to ``max_tokens`` columns.
        salt: an int or two ints keying the OOV hash (SipHash-2-4).
        **kwargs: base Layer arguments; ``encoding`` is accepted (utf-8).

    Example:
        >>> lookup = StringLookup(vocabulary=["a", "b", "c"])
        >>> lookup([["a", "c", "z"]]).numpy()
        array([[1, 3, 0]])
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", salt=None, **kwargs):
        self.oov_method = _oov_method("StringLookup", kwargs.pop("oov_method", "floormod"))
        self.salt = _salt("StringLookup", salt)
        self.encoding = encoding
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, invert, output_mode,
                         pad_to_max_tokens, sparse, idf_weights=idf_weights, **kwargs)

    @staticmethod
    def _token(token):
        return decode_text(token) if isinstance(token, bytes) else str(token)

    def _oov_bucket(self, token):
        return hash_bucket(token, self.num_oov_indices, self.salt)  # strings always hash, as in Keras

    def _check_tokens(self, tokens):
        """A vocabulary is UTF-8 text (a saved one is ``vocabulary.txt``): a
        token holding a lone surrogate (``"\\ud800"``), which no UTF-8 byte
        sequence encodes, is refused here rather than when the model is saved."""
        tokens = [str(token) for token in tokens]
        try:
            "".join(tokens).encode("utf-8")
        except UnicodeEncodeError:
            token = next(token for token in tokens if not _is_utf8_text(token))
            raise ValueError(f"Layer '{self.name}' (StringLookup): the token {token!r} holds a lone surrogate, "
                             "which UTF-8 cannot encode (a vocabulary is UTF-8 text). Decode bytes with "
                             "errors='replace', or fix the token.") from None

    def get_config(self):
        return {**super().get_config(), "encoding": self.encoding, "oov_method": self.oov_method,
                "salt": self.salt}


class IntegerLookup(_IndexLookup):
    """Map integers to indices (or back with ``invert=True``).

    Args as StringLookup, with integer tokens: ``mask_token`` None by
    default, ``oov_token=-1``; with ``num_oov_indices > 1`` an unknown
    value ``v`` goes to OOV bucket ``v mod num_oov_indices`` (Keras's
    ``oov_method="floormod"``), or with ``oov_method="farmhash"`` to the
    hash bucket of its decimal string (SipHash-2-4 keyed by ``salt``).
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, oov_method="floormod", salt=None, **kwargs):
        oov_method = _oov_method("IntegerLookup", oov_method)
        if salt is not None and oov_method != "farmhash":
            raise ValueError(f"`salt` can only be used when `oov_method='farmhash'`. Received: oov_method={oov_method}")
        self.vocabulary_dtype = vocabulary_dtype
        self.oov_method, self.salt = oov_method, _salt("IntegerLookup", salt)
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, invert, output_mode,
                         pad_to_max_tokens, sparse, idf_weights=idf_weights, **kwargs)

    @staticmethod
    def _token(token):
        if isinstance(token, (bool, numpy.bool_)) or not isinstance(token, (int, numpy.integer)) and \
                not (isinstance(token, (float, numpy.floating)) and float(token).is_integer()):
            raise TypeError(f"IntegerLookup expects integer tokens, received {token!r}.")
        return int(token)

    def _oov_bucket(self, token):
        if self.oov_method == "farmhash":  # the decimal string's hash, as Keras
            return hash_bucket(str(token), self.num_oov_indices, self.salt)
        return token % self.num_oov_indices

    def _inverted(self, tokens):
        return Tensor(tokens.astype(numpy.int64))

    def get_config(self):
        return {**super().get_config(), "vocabulary_dtype": self.vocabulary_dtype, "oov_method": self.oov_method,
                "salt": self.salt}


def _is_utf8_text(token):
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
