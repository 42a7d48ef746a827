"""``saving.KerasFileEditor``: inspect and edit the weights of a ``.keras`` or
``.weights.h5`` file without building its model, as Keras's.

The weights are read into a nested dict that mirrors the file's groups
(``{"layers": {"dense": {"0": kernel, "1": bias}}}``, the ``vars`` level of
Keras's layout folded away), edited by name or path, and written back as a
Keras 3 ``.weights.h5``. Reading checks, as loading does, that the file
reaches nothing outside itself (hdf5_links.py), then every dataset's
header and what all of them together inflate to (_inflation.py), before a
byte of them is read.
"""
import collections
import io
import json
import zipfile

import h5py
import numpy

from minikeras._support.load_budget import DEFAULT_MAX_BYTES, FileLoadError
from minikeras.saving import _bfloat16, _safety, hdf5_links, keras_weights_h5
from minikeras.saving.atomic import atomic_write

_VARS = "vars"


def _read_group(group, source, path=""):
    """The nested dict of a group: sub-groups as dicts, the datasets of a
    ``vars`` group folded into their object's dict, empty objects skipped."""
    tree = collections.OrderedDict()
    for key in group.keys():
        link = group.get(key, getlink=True)
        if isinstance(link, (h5py.ExternalLink, h5py.SoftLink)):
            raise FileLoadError(f"{source}: '{path}/{key}' is a {type(link).__name__}; refused.")
        value = group[key]
        if isinstance(value, h5py.Group):
            inner = _read_group(value, source, f"{path}/{key}")
            if key == _VARS:
                tree.update(inner)
            elif inner:
                tree[key] = inner
        elif isinstance(value, h5py.Dataset):
            _safety.check_dataset(value, source, what=f"{path}/{key}")
            tree[key] = _bfloat16.as_read(value, value[()])
    return tree


def _write_group(group, tree):
    arrays = {name: value for name, value in tree.items() if not isinstance(value, dict)}
    if arrays:
        variables = group.create_group(_VARS)
        for name, value in arrays.items():
            _bfloat16.create_dataset(variables, name, value)
    for name, value in tree.items():
        if isinstance(value, dict) and value:
            _write_group(group.create_group(name), value)


def _find(tree, name, found, path=()):
    for key, value in tree.items():
        if key == name:
            found.append(path + (key,))
        if isinstance(value, dict):
            _find(value, name, found, path + (key,))
    return found


class KerasFileEditor:
    """Inspect and edit a Keras weights file.

    Args:
        filepath: a ``.keras`` or ``.weights.h5`` file (Keras's or minikeras's).

    Attributes:
        weights_dict: the nested ``{name: dict or array}`` of the weights.
        config, metadata: a ``.keras`` file's ``config.json`` and
            ``metadata.json`` (None for ``.weights.h5``).

    Example:
        >>> editor = KerasFileEditor("model.weights.h5")        # doctest: +SKIP
        >>> editor.rename_object("dense_3", "dense_4")           # doctest: +SKIP
        >>> editor.save("edited.weights.h5")                     # doctest: +SKIP
    """

    def __init__(self, filepath):
        self.filepath = str(filepath)
        self.config = self.metadata = None
        source = repr(self.filepath)
        if self.filepath.endswith(".keras"):
            from minikeras.saving.keras_zip import CONFIG, METADATA, WEIGHTS, read_member, weights_limit

            with zipfile.ZipFile(self.filepath) as archive:
                self.config = json.loads(read_member(archive, CONFIG, source, 64 * 2**20, "a model config").getvalue())
                self.metadata = json.loads(read_member(archive, METADATA, source, 2**20, "metadata").getvalue())
                handle = read_member(archive, WEIGHTS, source, weights_limit(DEFAULT_MAX_BYTES), "weights")
        elif self.filepath.endswith(".weights.h5"):
            handle = self.filepath
        else:
            raise ValueError("Invalid filename: expected a `.keras` `.weights.h5` extension. "
                             f"Received: filepath={self.filepath}")
        with hdf5_links.open_contained(handle, source) as file:
            # The same inflation budget as load_model: every dataset's header, and their sum, before any is read.
            keras_weights_h5.declared_bytes(file, source, DEFAULT_MAX_BYTES)
            self.weights_dict = _read_group(file, source)

    # -- inspection ----------------------------------------------------------------------------------------

    def summary(self, print_fn=print):
        """Print the tree of objects and weight shapes."""
        print_fn(f"Keras weights file ({self.filepath}):")

        def show(tree, depth):
            for name, value in tree.items():
                if isinstance(value, dict):
                    print_fn("  " * depth + f"{name}/")
                    show(value, depth + 1)
                else:
                    print_fn("  " * depth + f"{name}: shape={tuple(value.shape)}, dtype={value.dtype}")

        show(self.weights_dict, 1)

    def compare(self, reference_model):
        """Compare the file's weights with what ``reference_model`` would save.

        Returns:
            ``{"status": "success" or "error", "error_count", "match_count"}``;
            each mismatch (missing object, missing weight, other shape) is printed.
        """
        buffer = io.BytesIO()
        with h5py.File(buffer, "w") as file:
            keras_weights_h5.write_model(file, reference_model)
        with h5py.File(buffer, "r") as file:
            reference = _read_group(file, "the reference model")
        errors, matches = [], [0]

        def walk(expected, found, path):
            for name, value in expected.items():
                where = f"{path}/{name}"
                if name not in found:
                    errors.append(f"Object or weight '{where}' is missing from the file.")
                elif isinstance(value, dict) != isinstance(found[name], dict):
                    errors.append(f"'{where}' is a weight in one and an object in the other.")
                elif isinstance(value, dict):
                    walk(value, found[name], where)
                elif tuple(value.shape) != tuple(found[name].shape):
                    errors.append(f"Weight '{where}' has shape {tuple(found[name].shape)} in the file, the model "
                                  f"expects {tuple(value.shape)}.")
                else:
                    matches[0] += 1
            for name in found:
                if name not in expected:
                    errors.append(f"'{path}/{name}' is in the file but not in the model.")

        walk(reference, self.weights_dict, "")
        for message in errors:
            print(message)
        return {"status": "error" if errors else "success", "error_count": len(errors), "match_count": matches[0]}

    # -- edits ---------------------------------------------------------------------------------------------

    def _locate(self, object_name):
        """(parent dict, key) of an object given by name (unique) or path."""
        if "/" in object_name:
            parts = object_name.strip("/").split("/")
            parent = self.weights_dict
            for part in parts[:-1]:
                if not isinstance(parent.get(part), dict):
                    raise ValueError(f"Path '{object_name}' not found in model.")
                parent = parent[part]
            if parts[-1] not in parent:
                raise ValueError(f"Path '{object_name}' not found in model.")
            return parent, parts[-1]
        found = _find(self.weights_dict, object_name, [])
        if len(found) > 1:
            raise ValueError(f"Name '{object_name}' occurs more than once in the model; try passing a complete path")
        if not found:
            raise ValueError(f"Source name '{object_name}' does not appear in the model. Use `editor.summary()` "
                             "to list all objects.")
        parent = self.weights_dict
        for part in found[0][:-1]:
            parent = parent[part]
        return parent, found[0][-1]

    def rename_object(self, object_name, new_name):
        """Rename an object (``"dense_2"`` or ``"layers/dense_2"``) to ``new_name`` (a leaf name)."""
        if "/" in new_name:
            raise ValueError(f"Argument `target_name` should be a leaf name, not a full path name. Received: "
                             f"target_name='{new_name}'")
        parent, key = self._locate(object_name)
        parent[new_name] = parent.pop(key)

    def delete_object(self, object_name):
        """Remove an object (a layer, by name or path) and its weights."""
        parent, key = self._locate(object_name)
        del parent[key]

    def add_object(self, object_path, weights):
        """Add an object at ``object_path`` with ``weights`` (``{"0": array, ...}``)."""
        _check_weights(weights)
        parts = object_path.strip("/").split("/")
        parent = self.weights_dict
        for part in parts[:-1]:
            if not isinstance(parent.get(part), dict):
                raise ValueError(f"Path '{'/'.join(parts[:-1])}' not found in model.")
            parent = parent[part]
        parent[parts[-1]] = {name: numpy.asarray(value) for name, value in weights.items()}

    def delete_weight(self, object_name, weight_name):
        """Remove one weight (e.g. ``"1"``) of an object."""
        parent, key = self._locate(object_name)
        if weight_name not in parent[key]:
            raise ValueError(f"Weight {weight_name} not found in object {object_name}. Weights found: "
                             f"{list(parent[key].keys())}")
        del parent[key][weight_name]

    def add_weights(self, object_name, weights):
        """Add weights (``{"2": array}``) to an existing object."""
        _check_weights(weights)
        parent, key = self._locate(object_name)
        parent[key].update({name: numpy.asarray(value) for name, value in weights.items()})

    def save(self, filepath):
        """Write the edited weights as a Keras 3 ``.weights.h5`` file (atomically)."""
        filepath = str(filepath)
        if not filepath.endswith(".weights.h5"):
            raise ValueError(f"Invalid `filepath` argument: expected a `.weights.h5` extension. Received: "
                             f"filepath={filepath}")
        with atomic_write(filepath) as temporary, h5py.File(temporary, "w") as file:
            _write_group(file, self.weights_dict)

    def resave_weights(self, filepath):
        """Same as ``save``."""
        self.save(filepath)


def _check_weights(weights):
    if not isinstance(weights, dict):
        raise ValueError("Argument `weights` should be a dict where keys are weight names (usually '0', '1', etc.) "
                         f"and values are NumPy arrays. Received: type(weights)={type(weights)}")
