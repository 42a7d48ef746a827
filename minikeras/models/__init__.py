"""Models: Sequential, functional Model, subclassed Model; load_model."""
from minikeras.models.functional import Functional  # noqa: F401
from minikeras.models.model import Model  # noqa: F401
from minikeras.models.sequential import Sequential  # noqa: F401


def load_model(path, custom_objects=None, compile=True, safe_mode=True, **kwargs):  # noqa: A002  (Keras name)
    """Load a model saved with ``model.save(path)`` (``.keras`` or HDF5, by Keras or
    minikeras); see ``minikeras.saving.load_model`` (``safe_mode``, ``max_bytes``)."""
    from minikeras.saving import load_model as _load

    return _load(path, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode, **kwargs)
