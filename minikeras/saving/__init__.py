"""Saving and loading models and weights in Keras's formats, atomically.

``.keras`` (Keras 3's zip), ``.weights.h5`` (Keras 3's weights layout) and
``.h5`` (tf.keras's HDF5) are read and written; see model_io.py.

Loading is safe on untrusted files: see ``_safety.py`` (declared sizes
checked before a read), ``_checksum.py`` (integrity), and, in ``_support/``,
``safe_mode.py``, ``object_registration.py`` (the allow-list of names) and
``load_budget.py`` (bounded memory), which the layers consult too.
h5py is imported on first use, not with ``import minikeras``.

Example:
    >>> model.save("model.keras")                       # doctest: +SKIP
    >>> model = minikeras.models.load_model("model.keras")  # doctest: +SKIP
    >>> model.save_weights("model.weights.h5")       # doctest: +SKIP
    >>> model.load_weights("model.weights.h5")       # doctest: +SKIP
"""
from minikeras._support.load_budget import FileLoadError
from minikeras._support.object_registration import register_keras_serializable
from minikeras._support.safe_mode import UnsafeDeserializationError, enable_unsafe_deserialization

_MODEL_IO = ("save_model", "load_model", "save_weights", "load_weights")

from minikeras._support.object_registration import (  # noqa: E402,F401  (Keras's custom-object names)
    CustomObjectScope, custom_object_scope, get_custom_objects, get_registered_name, get_registered_object,
)
from minikeras.saving.serialization_lib import deserialize_keras_object, serialize_keras_object  # noqa: E402,F401

__all__ = list(_MODEL_IO) + ["register_keras_serializable", "enable_unsafe_deserialization", "FileLoadError",
                             "UnsafeDeserializationError"]
__all__ += ["CustomObjectScope", "custom_object_scope", "get_custom_objects", "get_registered_name",
            "get_registered_object", "serialize_keras_object", "deserialize_keras_object", "KerasFileEditor"]


def __getattr__(name):
    if name == "KerasFileEditor":
        from minikeras.saving.file_editor import KerasFileEditor

        return KerasFileEditor
    if name in _MODEL_IO:
        from minikeras.saving import model_io

        return getattr(model_io, name)
    raise AttributeError(f"module 'minikeras.saving' has no attribute {name!r}")
