"""``Dataset.cache(filename)``'s file: the elements of one complete pass,
written as they stream by and read back by later passes (and later runs).

The file is ``<filename>.npz``, a zip of ``.npy`` arrays (element ``i``'s
leaf ``j`` is ``i/j.npy``) and ``structure.json`` (the elements' nesting
and leaf kinds, and their count), written under a temporary name and
renamed when the pass completes, so an interrupted pass leaves no file.
Arrays are read with ``allow_pickle=False``: the file is data, never code.
"""
import json
import os
import zipfile

import numpy

from minikeras._support import nest


def path_of(filename):
    """The cache file of ``Dataset.cache(filename)``."""
    return filename if filename.endswith(".npz") else filename + ".npz"


def exists(filename):
    return os.path.isfile(path_of(filename))


def _leaf_kind(leaf):
    if leaf is None:
        return "none"
    if isinstance(leaf, str):
        return "str"
    if isinstance(leaf, bytes):
        return "bytes"
    if isinstance(leaf, numpy.ndarray) and leaf.dtype == object:
        return "object_text"
    return "array"


def _encode_structure(element):
    if isinstance(element, dict):
        return {"dict": [[key, _encode_structure(element[key])] for key in element]}
    if isinstance(element, (list, tuple)):
        return {"list" if isinstance(element, list) else "tuple": [_encode_structure(item) for item in element]}
    return "leaf"


def _decode_structure(encoded):
    if encoded == "leaf":
        return None
    if not isinstance(encoded, dict) or len(encoded) != 1:
        raise ValueError(f"Dataset cache file: unreadable structure entry {encoded!r:.60}.")
    (kind, items), = encoded.items()
    if kind == "dict":
        return {key: _decode_structure(value) for key, value in items}
    if kind in ("list", "tuple"):
        children = [_decode_structure(item) for item in items]
        return children if kind == "list" else tuple(children)
    raise ValueError(f"Dataset cache file: unknown structure kind {kind!r}.")


class Writer:
    """Streams elements into a temporary file; ``finish(True)`` publishes it."""

    def __init__(self, filename):
        self._path = path_of(filename)
        self._temporary = f"{self._path}.tmp-{os.getpid()}"
        self._zip = zipfile.ZipFile(self._temporary, "w", allowZip64=True)
        self._structure, self._kinds, self._count = None, None, 0

    def add(self, element):
        leaves = nest.flatten(element)
        kinds = [_leaf_kind(leaf) for leaf in leaves]
        if self._structure is None:
            self._structure, self._kinds = _encode_structure(element), kinds
        elif _encode_structure(element) != self._structure or kinds != self._kinds:
            raise ValueError("Dataset.cache(filename) expects every element to have the same structure and "
                             f"component kinds; element {self._count} differs from the first.")
        for index, leaf in enumerate(leaves):
            if leaf is None:
                continue
            array = numpy.asarray(leaf)
            if array.dtype == object:
                array = array.astype(str if all(isinstance(item, str) for item in array.reshape(-1).tolist())
                                     else bytes)
            with self._zip.open(f"{self._count}/{index}.npy", "w", force_zip64=True) as handle:
                numpy.lib.format.write_array(handle, array, allow_pickle=False)
        self._count += 1

    def finish(self, complete):
        if complete:
            self._zip.writestr("structure.json", json.dumps(
                {"structure": self._structure, "kinds": self._kinds or [], "count": self._count}))
        self._zip.close()
        if complete:
            os.replace(self._temporary, self._path)
        else:
            os.remove(self._temporary)


def read(filename):
    """Yields the elements cached in ``filename``'s file, in order."""
    path = path_of(filename)
    with zipfile.ZipFile(path) as archive:
        try:
            header = json.loads(archive.read("structure.json"))
            count, kinds = int(header["count"]), list(header["kinds"])
            structure = _decode_structure(header["structure"]) if count else None
        except (KeyError, ValueError, TypeError) as error:
            raise ValueError(f"{path} is not a minikeras Dataset cache file ({error}).") from None
        for position in range(count):
            leaves = []
            for index, kind in enumerate(kinds):
                if kind == "none":
                    leaves.append(None)
                    continue
                with archive.open(f"{position}/{index}.npy") as handle:
                    array = numpy.lib.format.read_array(handle, allow_pickle=False)
                if kind == "object_text":
                    array = array.astype(object)
                elif kind in ("str", "bytes"):
                    array = array.item()
                leaves.append(array)
            yield nest.pack_sequence_as(structure, leaves) if structure is not None else leaves[0]
