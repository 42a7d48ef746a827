"""The ``assets/`` folder of a ``.keras`` file: lookup layers' vocabularies.

Keras 3 walks a model's objects as it does for the weights (saving_lib's
``_save_state``) and gives each one with ``save_assets`` a folder at the
same path as its ``vars`` group: ``assets/layers/string_lookup/``,
``assets/layers/text_vectorization/`` and, as TextVectorization keeps a
StringLookup in ``_lookup_layer``, ``assets/layers/text_vectorization/
_lookup_layer/`` too. A StringLookup, IntegerLookup or TextVectorization
whose config holds no vocabulary (adapted, or not given one) writes
``vocabulary.txt`` there: every token, special ones first (the mask token,
then the OOV token once per OOV index), joined by newlines, UTF-8 (integers
in decimal). Reading splits the text with ``str.splitlines`` and drops
trailing empty lines, as Keras's ``load_assets``. In "tf_idf" mode the
weights are not an asset: they are the dataset ``<path>/vars/idf_weights``
of ``model.weights.h5`` (one per index, special tokens and padding to
``max_tokens`` included; keras_weights_h5.named_variables writes it).
The config still says how many indices the vocabulary had
(``vocabulary_size``): the layers take it, so that a graph rebuilt before
the assets are read gives the encodings their width (a multi-hot lookup
feeding a Dense), and loading checks the asset against it.

minikeras keeps the vocabulary in the config as well (its ``get_config``
always has it), so Keras reads it from there and skips the asset, as it
does for any vocabulary given inline; the asset is written anyway, for
every lookup object, since Keras reads the asset of a lookup whose config
holds no vocabulary (an un-adapted one) and fails without it.

A vocabulary is data: a member is read only under the exact name the
model's own structure gives (nothing in the archive names a path to open,
nothing is extracted), its size is checked before it is inflated, against
one budget for all the assets of the file, and it is inflated and parsed a
megabyte at a time, each entry counted against the ``vocabulary_size`` the
config declared and charged against the file's loading budget
(load_budget.TOKEN_BYTES) as it comes; a malformed one is the library's
FileLoadError naming the member and the layer.
"""
import codecs

from minikeras._support import load_budget
from minikeras._support.load_budget import DEFAULT_MAX_BYTES, FileLoadError
from minikeras.saving import _safety
from minikeras.saving.keras_weights_h5 import walk_objects
from minikeras.saving.keras_zip import _READ_BYTES, member_size

VOCABULARY = "vocabulary.txt"
#: The vocabularies of one file together are no larger than this (Keras's own are a few megabytes at most).
MAX_VOCABULARY_BYTES = 64 * 1024 * 1024
_IDF = "idf_weights"


def is_lookup(layer):
    """True for the layers whose vocabulary Keras saves as an asset."""
    from minikeras.layers.preprocessing.index_lookup import IntegerLookup, StringLookup
    from minikeras.layers.preprocessing.text_vectorization import TextVectorization

    return isinstance(layer, (IntegerLookup, StringLookup, TextVectorization))


def has_tokens(layer):
    """True once the lookup has a vocabulary beyond its special tokens."""
    return bool(layer.get_vocabulary(include_special_tokens=False))


def member(path):
    """The archive member holding the vocabulary of the object at ``path``."""
    return "/".join(part for part in ("assets", path, VOCABULARY) if part)


def vocabulary_text(layer):
    """``vocabulary.txt`` as Keras writes it: all tokens, special ones first, one a line."""
    return "\n".join(str(token) for token in layer.get_vocabulary(include_special_tokens=True))


class AssetBudget:
    """What all the vocabularies of one file may inflate to together
    (:data:`MAX_VOCABULARY_BYTES`): eight lookups do not get eight times as much."""

    def __init__(self, limit=None):
        self.remaining = MAX_VOCABULARY_BYTES if limit is None else limit


def _is_integer_lookup(layer):
    from minikeras.layers.preprocessing.index_lookup import IntegerLookup

    return isinstance(layer, IntegerLookup)


class _VocabularyReader:
    """Lines of ``vocabulary.txt`` as they inflate, as Keras's ``load_assets``
    reads the whole text (``splitlines``, trailing empty lines dropped),
    checked as they come: no more entries than the config's
    ``vocabulary_size``, every one charged against the loading budget
    (TOKEN_BYTES, _support/load_budget.py), before the next is parsed."""

    def __init__(self, layer, name, source):
        self.layer, self.name, self.source = layer, name, source
        self.what = f"{type(layer).__name__} '{layer.name}'"
        self.declared, self.integers = _declared_size(layer), _is_integer_lookup(layer)
        self.tokens, self.empty_run, self.pending = [], 0, ""
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def feed(self, chunk, final=False):
        try:
            text = self.pending + self.decoder.decode(chunk, final=final)
        except UnicodeDecodeError as error:
            raise FileLoadError(f"The vocabulary '{self.name}' in {self.source} of {self.what} is not UTF-8 "
                                f"text ({error}).") from None
        parts = text.splitlines(keepends=True)
        self.pending = ""
        if parts and not final and (parts[-1].endswith("\r") or parts[-1].splitlines()[0] == parts[-1]):
            self.pending = parts.pop()  # its line break has not come yet (or it may be half of "\r\n")
        for part in parts:
            line = part.splitlines()[0]
            if not line:
                self.empty_run += 1  # kept only if a token follows: trailing empty lines are dropped
                continue
            entries = self.empty_run + 1
            if self.declared is not None and len(self.tokens) + entries > self.declared:
                raise FileLoadError(
                    f"The vocabulary '{self.name}' in {self.source} gives {self.what} more than the {self.declared} "
                    "entries its config says (vocabulary_size): refused before reading the rest.")
            load_budget.charge_bytes(entries * load_budget.TOKEN_BYTES + len(line),
                                     f"the vocabulary of {self.what} (entry {len(self.tokens) + entries})")
            self.tokens.extend([""] * self.empty_run)
            self.empty_run = 0
            self.tokens.append(self._token(line))

    def _token(self, line):
        if not self.integers:
            return line
        try:
            return int(line)
        except ValueError:
            raise FileLoadError(f"The vocabulary '{self.name}' in {self.source} of IntegerLookup "
                                f"'{self.layer.name}' holds a line that is not an integer.") from None


def read_vocabulary(archive, name, layer, source, budget=None):
    """The tokens of the member ``name``: its declared size checked against
    what the file's assets may still inflate to (``budget``, an
    :class:`AssetBudget`), then inflated and parsed a megabyte at a time
    (:class:`_VocabularyReader`), the count kept in ``budget``."""
    budget = budget or AssetBudget()
    member_size(archive, name, source, budget.remaining, "the vocabularies of one file")
    reader, total = _VocabularyReader(layer, name, source), 0
    with archive.open(name) as stream:
        while True:
            chunk = stream.read(_READ_BYTES)
            total += len(chunk)
            if total > budget.remaining:
                raise FileLoadError(f"'{name}' in {source} inflates past {budget.remaining} bytes, more than "
                                    "the vocabularies of one file can be (its zip directory understates it: "
                                    "the file is crafted).")
            reader.feed(chunk, final=not chunk)
            if not chunk:
                budget.remaining -= total
                return reader.tokens


# ------------------------------------------------------------------ writing
def asset_members(model):
    """``{member: text}``: the vocabulary of every lookup object of ``model``, at Keras's paths."""
    return {member(path): vocabulary_text(obj) for path, obj in walk_objects(model) if is_lookup(obj)}


# ------------------------------------------------------------------ reading
def read_assets(archive, model, source, budget=None):
    """``[(path, layer, tokens or None)]`` for each lookup of ``model`` whose
    config gave it no vocabulary: the asset's tokens, None when the archive
    has no asset for it. All of them share one :class:`AssetBudget`."""
    names, found, budget = set(archive.namelist()), [], budget or AssetBudget()
    for path, obj in walk_objects(model):
        if is_lookup(obj) and not has_tokens(obj):
            name = member(path)
            found.append((path, obj, read_vocabulary(archive, name, obj, source, budget) if name in names else None))
    return found


def apply_assets(found, handle, source, max_bytes=DEFAULT_MAX_BYTES):
    """Give each lookup of :func:`read_assets` its vocabulary (and, in
    "tf_idf" mode, the ``idf_weights`` of the open weights file ``handle``),
    checked against the ``vocabulary_size`` its config declared."""
    for path, layer, tokens in found:
        if has_tokens(layer):
            continue  # a TextVectorization's own asset already gave its _lookup_layer the vocabulary
        size = _declared_size(layer)
        specials = layer.vocabulary_size()  # no tokens yet: the special ones
        if tokens is None:
            if size is not None and size > specials:
                raise FileLoadError(
                    f"{source} has no '{member(path)}': the vocabulary of {type(layer).__name__} '{layer.name}' "
                    f"({size} entries, says its config) is missing from the file.")
            continue  # not adapted when saved
        idf = _idf_weights(handle, path, layer, tokens, source, max_bytes) if layer.output_mode == "tf_idf" else None
        try:
            layer.set_vocabulary(tokens, idf) if idf is not None else layer.set_vocabulary(tokens)
        except (TypeError, ValueError) as error:
            raise FileLoadError(f"The vocabulary '{member(path)}' in {source} does not fit "
                                f"{type(layer).__name__} '{layer.name}': {error}") from None
        if size is not None and size != layer.vocabulary_size():
            raise FileLoadError(
                f"The vocabulary '{member(path)}' in {source} gives {type(layer).__name__} '{layer.name}' "
                f"{layer.vocabulary_size()} entries, its config says {size}.")


def _idf_weights(handle, path, layer, tokens, source, max_bytes):
    """The TF-IDF weights Keras saved beside the vocabulary, one per token (padding dropped)."""
    import numpy

    name = "/".join(part for part in (path, "vars", _IDF) if part)
    dataset = handle.get(name) if handle is not None else None
    where = f"'{name}' in {source} ({type(layer).__name__} '{layer.name}', output_mode='tf_idf')"
    if dataset is None:
        raise FileLoadError(f"No TF-IDF weights for {type(layer).__name__} '{layer.name}' in {source}: "
                            f"the dataset '{name}' is missing.")
    padded = layer.max_tokens if getattr(layer, "pad_to_max_tokens", False) and layer.max_tokens else None
    lengths = {len(tokens), padded} - {None}
    shape = tuple(getattr(dataset, "shape", ()) or ())
    if len(shape) != 1 or shape[0] not in lengths:
        raise FileLoadError(f"The TF-IDF weights {where} have shape {shape}, expected one per vocabulary "
                            f"entry: ({len(tokens)},){f' or ({padded},)' if padded else ''}.")
    _safety.check_dataset(dataset, source, max_bytes=max_bytes, what=name)
    values = numpy.asarray(dataset[()], dtype=numpy.float64)[:len(tokens)]
    if not numpy.all(numpy.isfinite(values)):
        raise FileLoadError(f"The TF-IDF weights {where} are not all finite.")
    return values


def _declared_size(layer):
    """The ``vocabulary_size`` the layer's config declared (None: not said)."""
    return getattr(layer, "_lookup_layer", layer)._declared_vocabulary_size
