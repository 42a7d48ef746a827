"""Pickling a model, as Keras 3 does: through the bytes of its ``.keras`` file.

``pickle.dumps(model)`` (and so multiprocessing, joblib, Ray, ``copy.copy``)
holds the model's ``.keras`` zip, written into memory: its architecture,
weights, compile arguments, optimizer state and random generators. Loading
reads it back, compiled, so that predictions are the same and training goes
on where it was (``Model.__reduce__``).

As in Keras, the bytes are read with ``safe_mode=False`` and no size
limit: unpickling runs whatever code the pickle names anyway, so a pickle
must come from a source one trusts; ``load_model`` is the way to read a
file that may not.
"""
import io

from minikeras.saving import _safety, keras_zip

_SOURCE = "a pickled model"


def model_to_keras_bytes(model):
    """``model``'s ``.keras`` zip, as bytes."""
    buffer = io.BytesIO()
    keras_zip.write_archive(model, buffer)
    return buffer.getvalue()


def model_from_keras_bytes(data):
    """The model whose ``.keras`` zip is ``data`` (what ``pickle.loads`` calls)."""
    with _safety.load_errors(_SOURCE):
        return keras_zip.load_model(io.BytesIO(data), compile=True, safe_mode=False, source=_SOURCE,
                                    max_bytes=None)
