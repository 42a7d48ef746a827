"""Saving and loading models and weights in HDF5 (h5py), atomically.

Example:
    >>> model.save("model.h5")                       # doctest: +SKIP
    >>> model = minikeras.models.load_model("model.h5")  # doctest: +SKIP
    >>> model.save_weights("model.weights.h5")       # doctest: +SKIP
    >>> model.load_weights("model.weights.h5")       # doctest: +SKIP
"""
from minikeras.saving.model_io import load_model, load_weights, save_model, save_weights

__all__ = ["save_model", "load_model", "save_weights", "load_weights"]
