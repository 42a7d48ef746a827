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
nothing is extracted), its size is checked before it is inflated and it
is inflated with a running count (keras_zip.read_member), and a malformed
one is the library's FileLoadError naming the member and the layer.
"""
from minikeras.saving import _safety
from minikeras.saving.keras_weights_h5 import walk_objects
from minikeras.saving.keras_zip import read_member

VOCABULARY = "vocabulary.txt"
#: A vocabulary larger than this is not one (Keras's own are a few megabytes at most).
MAX_VOCABULARY_BYTES = 64 * 1024 * 1024
_IDF = "idf_weights"


def is_lookup(layer):
    """True for the layers whose vocabulary Keras saves as an asset."""
    from minikeras.layers.index_lookup import IntegerLookup, StringLookup
    from minikeras.layers.text_vectorization import TextVectorization

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


def parse_vocabulary(data, layer, name, source):
    """The tokens in ``vocabulary.txt``'s bytes, as Keras's ``load_assets`` reads them."""
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise _safety.FileLoadError(f"The vocabulary '{name}' in {source} of {type(layer).__name__} "
                                    f"'{layer.name}' is not UTF-8 text ({error}).") from None
    while lines and lines[-1] == "":
        lines.pop()
    if _is_integer_lookup(layer):
        try:
            return [int(line) for line in lines]
        except ValueError:
            raise _safety.FileLoadError(f"The vocabulary '{name}' in {source} of IntegerLookup '{layer.name}' holds "
                                        "a line that is not an integer.") from None
    return lines


def _is_integer_lookup(layer):
    from minikeras.layers.index_lookup import IntegerLookup

    return isinstance(layer, IntegerLookup)


def read_vocabulary(archive, name, layer, source):
    """The tokens of the member ``name`` (size-checked, inflated with a running count)."""
    data = read_member(archive, name, source, MAX_VOCABULARY_BYTES, "a vocabulary").getvalue()
    return parse_vocabulary(data, layer, name, source)


# ------------------------------------------------------------------ writing
def asset_members(model):
    """``{member: text}``: the vocabulary of every lookup object of ``model``, at Keras's paths."""
    return {member(path): vocabulary_text(obj) for path, obj in walk_objects(model) if is_lookup(obj)}


# ------------------------------------------------------------------ reading
def read_assets(archive, model, source):
    """``[(path, layer, tokens or None)]`` for each lookup of ``model`` whose
    config gave it no vocabulary: the asset's tokens, None when the archive
    has no asset for it."""
    names, found = set(archive.namelist()), []
    for path, obj in walk_objects(model):
        if is_lookup(obj) and not has_tokens(obj):
            name = member(path)
            found.append((path, obj, read_vocabulary(archive, name, obj, source) if name in names else None))
    return found


def apply_assets(found, handle, source, max_bytes=_safety.DEFAULT_MAX_BYTES):
    """Give each lookup of :func:`read_assets` its vocabulary (and, in
    "tf_idf" mode, the ``idf_weights`` of the open weights file ``handle``),
    checked against the ``vocabulary_size`` its config declared."""
    for path, layer, tokens in found:
        if has_tokens(layer):
            continue  # a TextVectorization's own asset already gave its _lookup_layer the vocabulary
        size = _declared_size(layer)
        specials = len(layer.get_vocabulary())
        if tokens is None:
            if size is not None and size > specials:
                raise _safety.FileLoadError(
                    f"{source} has no '{member(path)}': the vocabulary of {type(layer).__name__} '{layer.name}' "
                    f"({size} entries, says its config) is missing from the file.")
            continue  # not adapted when saved
        idf = _idf_weights(handle, path, layer, tokens, source, max_bytes) if layer.output_mode == "tf_idf" else None
        try:
            layer.set_vocabulary(tokens, idf) if idf is not None else layer.set_vocabulary(tokens)
        except (TypeError, ValueError) as error:
            raise _safety.FileLoadError(f"The vocabulary '{member(path)}' in {source} does not fit "
                                        f"{type(layer).__name__} '{layer.name}': {error}") from None
        if size is not None and size != layer.vocabulary_size():
            raise _safety.FileLoadError(
                f"The vocabulary '{member(path)}' in {source} gives {type(layer).__name__} '{layer.name}' "
                f"{layer.vocabulary_size()} entries, its config says {size}.")


def _idf_weights(handle, path, layer, tokens, source, max_bytes):
    """The TF-IDF weights Keras saved beside the vocabulary, one per token (padding dropped)."""
    import numpy

    name = "/".join(part for part in (path, "vars", _IDF) if part)
    dataset = handle.get(name) if handle is not None else None
    where = f"'{name}' in {source} ({type(layer).__name__} '{layer.name}', output_mode='tf_idf')"
    if dataset is None:
        raise _safety.FileLoadError(f"No TF-IDF weights for {type(layer).__name__} '{layer.name}' in {source}: "
                                    f"the dataset '{name}' is missing.")
    padded = layer.max_tokens if getattr(layer, "pad_to_max_tokens", False) and layer.max_tokens else None
    lengths = {len(tokens), padded} - {None}
    shape = tuple(getattr(dataset, "shape", ()) or ())
    if len(shape) != 1 or shape[0] not in lengths:
        raise _safety.FileLoadError(f"The TF-IDF weights {where} have shape {shape}, expected one per vocabulary "
                                    f"entry: ({len(tokens)},){f' or ({padded},)' if padded else ''}.")
    _safety.check_dataset(dataset, source, max_bytes=max_bytes, what=name)
    values = numpy.asarray(dataset[()], dtype=numpy.float64)[:len(tokens)]
    if not numpy.all(numpy.isfinite(values)):
        raise _safety.FileLoadError(f"The TF-IDF weights {where} are not all finite.")
    return values


def _declared_size(layer):
    """The ``vocabulary_size`` the layer's config declared (None: not said)."""
    return getattr(layer, "_lookup_layer", layer)._declared_vocabulary_size
