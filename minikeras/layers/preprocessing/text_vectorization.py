"""TextVectorization: raw strings to token indices or bag-of-words
vectors (Keras's preprocessing layer), on the host with Python's string
methods, on top of StringLookup.

Steps, as Keras: standardise (lower-case and strip ASCII punctuation by
default), split (on whitespace by default), add n-grams (joined by a
space), then look up. With ``output_mode="int"`` the result is
``(batch, length)`` int64, padded with 0 (the mask token "") to the longest
text or to ``output_sequence_length``; index 1 is "[UNK]".
"""
import re

import numpy

from minikeras._support import load_budget
from minikeras.autograd import Tensor
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.index_lookup import StringLookup, decode_text, host_tokens

__all__ = ["TextVectorization"]

_PUNCTUATION = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')
_STANDARDIZE = (None, "lower_and_strip_punctuation", "lower", "strip_punctuation")
_SPLIT = (None, "whitespace", "character")


class TextVectorization(Layer):
    """Turn strings into sequences of token indices or token-count vectors.

    Args:
        max_tokens: cap on the vocabulary (with "" and "[UNK]" in int mode).
        standardize: "lower_and_strip_punctuation" (default), "lower",
            "strip_punctuation", None, or a function ``str -> str``.
        split: "whitespace" (default), "character", None, or a function
            ``str -> list of str``.
        ngrams: None, n (all 1..n-grams) or a tuple of the sizes to use.
        output_mode: "int" (default), "multi_hot", "count" or "tf_idf"
            (counts times the IDF weights ``adapt`` computes, each text
            one document, or ``idf_weights``).
        output_sequence_length: pad/truncate int output to this length.
        pad_to_max_tokens: encode to ``max_tokens`` columns.
        vocabulary: a list of tokens, or the path of a text file holding
            one token a line (else call ``adapt``).
        idf_weights: one weight per vocabulary token, with ``vocabulary``,
            in "tf_idf" mode only.
        **kwargs: base Layer arguments; ``encoding``/``ragged``/``sparse``
            are accepted at their defaults.

    Example:
        >>> vectorize = TextVectorization(output_sequence_length=4)
        >>> vectorize.adapt(["the cat sat", "the dog ran"])
        >>> vectorize(["The cat ran!"]).numpy()
    """

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", vocabulary_size=None, **kwargs):
        super().__init__(**kwargs)
        if standardize not in _STANDARDIZE and not callable(standardize):
            raise ValueError(f"TextVectorization: standardize must be one of {_STANDARDIZE} or a function, received "
                             f"{standardize!r}.")
        if split not in _SPLIT and not callable(split):
            raise ValueError(f"TextVectorization: split must be one of {_SPLIT} or a function, received {split!r}.")
        if ragged or sparse:
            raise ValueError("TextVectorization: ragged and sparse outputs are not implemented.")
        if output_mode not in ("int", "multi_hot", "count", "tf_idf"):
            raise ValueError(f"TextVectorization: output_mode must be 'int', 'multi_hot', 'count' or 'tf_idf', "
                             f"received {output_mode!r}.")
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError("TextVectorization: output_sequence_length needs output_mode='int'.")
        if output_sequence_length is not None and (isinstance(output_sequence_length, bool) or not isinstance(
                output_sequence_length, (int, numpy.integer)) or output_sequence_length < 1):
            raise ValueError(f"TextVectorization: output_sequence_length must be None or a positive int, received "
                             f"{output_sequence_length!r}.")
        if isinstance(ngrams, int) and not isinstance(ngrams, bool):
            if ngrams < 1:
                raise ValueError(f"TextVectorization: ngrams must be a positive int, received {ngrams}.")
            self._ngram_sizes = tuple(range(1, ngrams + 1))
        elif ngrams is None:
            self._ngram_sizes = (1,)
        elif isinstance(ngrams, (list, tuple)) and all(isinstance(n, int) and n > 0 for n in ngrams):
            self._ngram_sizes = tuple(ngrams)
        else:
            raise ValueError(f"TextVectorization: ngrams must be None, an int or a tuple of ints, received {ngrams!r}.")
        self.standardize, self.split, self.ngrams = standardize, split, ngrams
        self.output_mode, self.output_sequence_length = output_mode, output_sequence_length
        self.max_tokens, self.pad_to_max_tokens, self.encoding = max_tokens, bool(pad_to_max_tokens), encoding
        self._lookup_layer = StringLookup(max_tokens=max_tokens, mask_token="" if output_mode == "int" else None,
                                          output_mode=output_mode, pad_to_max_tokens=pad_to_max_tokens,
                                          vocabulary=vocabulary, idf_weights=idf_weights,
                                          vocabulary_size=vocabulary_size, name=f"{self.name}_lookup")

    # -------------------------------------------------------------- text
    def _standardize(self, text):
        if callable(self.standardize):
            return self.standardize(text)
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            text = text.lower()
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            text = _PUNCTUATION.sub("", text)
        return text

    def _tokens(self, text):
        text = self._standardize(_decoded(text, self.encoding))
        if callable(self.split):
            tokens = list(self.split(text))
        elif self.split == "whitespace":
            tokens = text.split()
        elif self.split == "character":
            tokens = list(text)
        else:
            tokens = [text]
        return self._grams(tokens)

    def _grams(self, tokens):
        grams = []
        for size in self._ngram_sizes:
            grams.extend(" ".join(tokens[i:i + size]) for i in range(len(tokens) - size + 1))
        return grams

    def _texts(self, inputs):
        texts = host_tokens(inputs)
        if texts.ndim == 2 and texts.shape[1] == 1:
            texts = texts[:, 0]
        if texts.ndim > 1:
            raise ValueError(f"Layer '{self.name}' (TextVectorization) expects a batch of strings (batch,) or "
                             f"(batch, 1), received shape {texts.shape}.")
        return texts.reshape(-1).tolist()

    def _token_lists(self, inputs):
        """``(token_lists, leading_shape, rank)``: the tokens of each example,
        the axes the output keeps before its last one (None: the batch of
        texts), as Keras shapes them, and the input's rank. A rank-0 input is
        one text (no batch axis out, as ``Dataset.map`` sees it before
        batching); with ``split=None`` the strings along the last axis are
        one example's tokens (Keras's lookup semantics)."""
        strings = host_tokens(inputs)
        if self.split is not None:
            return [self._tokens(text) for text in self._texts(strings)], (() if strings.ndim == 0 else None), \
                strings.ndim
        rows = strings.reshape(1, 1) if strings.ndim == 0 else strings.reshape(-1, strings.shape[-1])
        token_lists = [self._grams([self._standardize(_decoded(s, self.encoding)) for s in row])
                       for row in rows.tolist()]
        return token_lists, strings.shape[:-1], strings.ndim

    # ------------------------------------------------------- vocabulary
    def adapt(self, data, steps=None):
        """Learn the vocabulary from strings (an array/list or an iterable
        of batches), most frequent tokens first."""
        batches = [data] if isinstance(data, (Tensor, numpy.ndarray, list, tuple)) else data
        batches = (batch[0] if isinstance(batch, tuple) else batch for step, batch in enumerate(batches)
                   if steps is None or step < steps)
        if self.output_mode == "tf_idf":  # each text is a document: the lookup counts a 1-D batch as one
            token_batches = (self._tokens(text) for batch in batches for text in self._texts(batch))
        else:
            token_batches = ([token for text in self._texts(batch) for token in self._tokens(text)]
                             for batch in batches)
        self._lookup_layer.adapt(token_batches)

    def get_vocabulary(self, include_special_tokens=True):
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights)

    # ------------------------------------------------------------- call
    def _convert_input(self, value):
        return value

    def call(self, inputs):
        token_lists, leading, rank = self._token_lists(inputs)
        if self.output_mode != "int":
            lookup = self._lookup_layer
            rows = [lookup._encode(lookup._lookup(numpy.array(tokens, dtype=object))) for tokens in token_lists]
            result = numpy.stack(rows).astype(numpy.float32)
        else:
            length = self.output_sequence_length or max([len(tokens) for tokens in token_lists] + [0])
            # While a file loads, the output_sequence_length its config declares is charged before the ids are
            # allocated.
            load_budget.charge((len(token_lists), length), "int64", f"the token ids of layer '{self.name}'",
                               cumulative=False)
            result = numpy.zeros((len(token_lists), length), dtype=numpy.int64)
            for row, tokens in enumerate(token_lists):
                tokens = tokens[:length]
                if tokens:
                    result[row, :len(tokens)] = self._lookup_layer(numpy.array(tokens, dtype=object)).numpy()
        if leading is not None:  # one text (rank 0), or split=None's own layout
            result = result.reshape(tuple(leading) + result.shape[-1:])
            one_token = self.split is None and rank == 0 and self.ngrams is None
            if one_token and self.output_mode == "int" and self.output_sequence_length is None:
                result = result.reshape(())  # a single token looked up, as StringLookup gives it
        return Tensor(result)

    def _keras_named_variables(self):
        return self._lookup_layer._keras_named_variables()  # Keras saves them for both, as it does the vocabulary

    def _keras_assign_named(self, key, value):
        self._lookup_layer._keras_assign_named(key, value)

    def _sublayers(self):
        return []  # the lookup holds no weights; keep it out of weight lists and summaries

    def get_config(self):
        # No vocabulary yet is None, as Keras writes it (Keras cannot rebuild the layer from []).
        return {
            **super().get_config(), "max_tokens": self.max_tokens,
            "standardize": self.standardize if not callable(self.standardize) else None,
            "split": self.split if not callable(self.split) else None, "ngrams": self.ngrams,
            "output_mode": self.output_mode, "output_sequence_length": self.output_sequence_length,
            "pad_to_max_tokens": self.pad_to_max_tokens, "vocabulary": self.get_vocabulary(False) or None,
            "idf_weights": self._lookup_layer._token_idf_weights(),
            "vocabulary_size": self._lookup_layer.get_config()["vocabulary_size"],
            "encoding": self.encoding,
        }


def _decoded(text, encoding):
    """A text as a str: bytes decoded (invalid bytes become U+FFFD, an OOV token), anything else str()'d."""
    return decode_text(text, encoding) if isinstance(text, bytes) else str(text)
