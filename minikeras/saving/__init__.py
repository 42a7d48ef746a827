"""Saving and loading models and weights in Keras's formats, atomically.

``.keras`` (Keras 3's zip), ``.weights.h5`` (Keras 3's weights layout) and
``.h5`` (tf.keras's HDF5) are read and written; see model_io.py.

Example:
    >>> model.save("model.keras")                       # doctest: +SKIP
    >>> model = minikeras.models.load_model("model.keras")  # doctest: +SKIP
    >>> model.save_weights("model.weights.h5")       # doctest: +SKIP
    >>> model.load_weights("model.weights.h5")       # doctest: +SKIP
"""
from minikeras.saving.keras_config_writer import register_keras_serializable
from minikeras.saving.model_io import load_model, load_weights, save_model, save_weights

__all__ = ["save_model", "load_model", "save_weights", "load_weights", "register_keras_serializable"]
