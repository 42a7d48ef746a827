"""The wrappers' models: made, checked, cloned and pickled.

A scikit-learn estimator is cloned and pickled freely (``clone`` in every
cross-validation fold, joblib's workers, ``pickle.dump`` of a fitted
pipeline). A minikeras model is neither picklable nor cloneable with its
compile arguments by itself, so the wrappers do it here: a clone is
Keras's ``clone_model`` (new layers, fresh weights) compiled like the
original with a fresh optimizer; a pickled model is its ``.keras`` file
(architecture, weights, compile arguments, optimizer state) as bytes.
"""
import copy
import os
import tempfile

from minikeras.models import Model, clone_model, load_model


def build_model(owner, model, model_kwargs, X, y):
    """The model ``owner`` trains: ``model`` itself or a fresh clone of it, or what the callable builds.

    Args:
        owner: the wrapper's class name, for messages.
        model: a compiled `Model`, or a callable ``model(X=X, y=y, **model_kwargs)`` returning one.
        model_kwargs: keyword arguments of the callable (None: none).
        X, y: the validated data; ``y`` as the model will see it (one-hot for classifiers).

    Returns:
        A compiled `Model`.

    Raises:
        TypeError: ``model`` is neither, or the callable returned something else.
        RuntimeError: the model is not compiled with a loss and an optimizer.
    """
    if isinstance(model, Model):
        check_compiled(owner, model)
        built = clone_compiled(model)
    elif callable(model):
        built = model(X=X, y=y, **(model_kwargs or {}))
        if not isinstance(built, Model):
            raise TypeError(f"{owner} expects its model callable to return a compiled minikeras Model, received "
                            f"{type(built).__name__} from {getattr(model, '__name__', model)!r}.")
    else:
        raise TypeError(f"{owner} expects model to be a compiled minikeras Model or a callable "
                        f"model(X=X, y=y, **model_kwargs) returning one, received {type(model).__name__}.")
    check_compiled(owner, built)
    return built


def check_compiled(owner, model):
    """RuntimeError unless ``model`` is compiled with a loss and an optimizer (Keras's rule)."""
    arguments = getattr(model, "_compile_args", None) or {}
    if getattr(model, "optimizer", None) is None or arguments.get("loss") is None:
        raise RuntimeError(f"{owner} expects a compiled model with a loss and an optimizer; model "
                           f"'{model.name}' is not: call model.compile(loss=..., optimizer=...) before fitting.")


def clone_compiled(model):
    """``clone_model(model)`` (fresh weights), compiled as ``model`` is, with a fresh optimizer.

    The loss and metrics are deep copies (metrics keep their own state); the
    optimizer is remade from its config, so the clone starts with no slots and
    step 0 whatever the original has been through.
    """
    clone = clone_model(model)
    optimizer = model.optimizer
    arguments = copy.deepcopy(getattr(model, "_compile_args", None) or {})
    clone.compile(optimizer=type(optimizer).from_config(optimizer.get_config()), **arguments,
                  steps_per_execution=getattr(model, "steps_per_execution", 1) or 1,
                  jit_compile=bool(getattr(model, "jit_compile", False)))
    return clone


class PickledModel:
    """A `Model` as the bytes of its ``.keras`` file, for pickling; `restore` loads it back.

    Loading keeps ``load_model``'s safe mode: a model with a ``Lambda`` layer
    or an unregistered custom class does not unpickle (register it with
    ``minikeras.saving.register_keras_serializable``, as for Keras files).
    """

    def __init__(self, model):
        with tempfile.TemporaryDirectory(prefix="minikeras-pickle-") as folder:
            path = os.path.join(folder, "model.keras")
            model.save(path)
            with open(path, "rb") as stream:
                self.keras_file = stream.read()

    def restore(self):
        """The model, loaded from the stored ``.keras`` bytes."""
        with tempfile.TemporaryDirectory(prefix="minikeras-unpickle-") as folder:
            path = os.path.join(folder, "model.keras")
            with open(path, "wb") as stream:
                stream.write(self.keras_file)
            return load_model(path)
