"""Models: Sequential, functional Model, subclassed Model; load_model."""
from minikeras.models.functional import Functional  # noqa: F401
from minikeras.models.model import Model  # noqa: F401
from minikeras.models.sequential import Sequential  # noqa: F401


def load_model(path, custom_objects=None, compile=True, safe_mode=True, **kwargs):  # noqa: A002  (Keras name)
    """Load a model saved with ``model.save(path)`` (``.keras`` or HDF5, by Keras or
    minikeras); see ``minikeras.saving.load_model`` (``safe_mode``, ``max_bytes``)."""
    from minikeras.saving import load_model as _load

    return _load(path, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode, **kwargs)


def save_model(model, filepath, overwrite=True, zipped=None, **kwargs):
    """Save ``model`` to ``filepath`` (``.keras``, ``.h5``), as ``model.save``
    (Keras's ``models.save_model``; see ``minikeras.saving.save_model``)."""
    from minikeras.saving import save_model as _save

    if zipped is False:
        raise ValueError("save_model(zipped=False) (an unzipped .keras folder) is not supported by minikeras; "
                         "save a .keras zip or an .h5 file.")
    return _save(model, filepath, overwrite=overwrite, **kwargs)


def model_from_json(json_string, custom_objects=None):
    """A new model (fresh weights) from ``model.to_json()`` output, Keras's or
    minikeras's (see ``minikeras.saving.serialization_lib``)."""
    from minikeras.saving import serialization_lib

    return serialization_lib.model_from_json(json_string, custom_objects=custom_objects)


from minikeras.models.cloning import clone_model  # noqa: E402,F401
