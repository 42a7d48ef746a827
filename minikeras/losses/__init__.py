"""Losses with the Keras API: per-sample functions and Loss classes.

Functions (``categorical_crossentropy(y_true, y_pred)``) return one loss
per sample; classes (``CategoricalCrossentropy()(y_true, y_pred,
sample_weight)``) return a scalar Tensor ready for ``backward()``.

Example:
    >>> import minikeras as mk
    >>> loss = mk.losses.get("sparse_categorical_crossentropy")
    >>> logits = mk.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> value = mk.losses.SparseCategoricalCrossentropy(from_logits=True)([0], logits)
    >>> value.backward()
"""
import inspect

from minikeras.losses.crossentropy import (
    BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy, binary_crossentropy,
    categorical_crossentropy, sparse_categorical_crossentropy,
)
from minikeras.losses.circle import Circle, circle
from minikeras.losses.ctc import CTC, ctc
from minikeras.losses.focal import (
    BinaryFocalCrossentropy, CategoricalFocalCrossentropy, binary_focal_crossentropy, categorical_focal_crossentropy,
)
from minikeras.losses.generalized_crossentropy import (
    CategoricalGeneralizedCrossEntropy, categorical_generalized_cross_entropy,
)
from minikeras.losses.hinge import CategoricalHinge, Hinge, SquaredHinge, categorical_hinge, hinge, squared_hinge
from minikeras.losses.loss import Loss, LossFunctionWrapper, reduce_weighted_values
from minikeras.losses.overlap import Dice, Tversky, dice, tversky
from minikeras.losses.probabilistic import KLDivergence, Poisson, kl_divergence, poisson
from minikeras.losses.regression import (
    CosineSimilarity, Huber, LogCosh, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
    MeanSquaredLogarithmicError, cosine_similarity, huber, log_cosh, mean_absolute_error,
    mean_absolute_percentage_error, mean_squared_error, mean_squared_logarithmic_error,
)

# Keras's short names.
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
bce = BCE = binary_crossentropy
logcosh = log_cosh

_CLASSES = (
    Loss, LossFunctionWrapper, BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy,
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Huber,
    LogCosh, CosineSimilarity, KLDivergence, Poisson, Hinge, SquaredHinge, CategoricalHinge,
)
_CLASSES += (
    BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CategoricalGeneralizedCrossEntropy, CTC, Circle, Dice,
    Tversky,
)
_FUNCTIONS = (
    binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy, mean_squared_error,
    mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error, huber, log_cosh,
    cosine_similarity, kl_divergence, poisson, hinge, squared_hinge, categorical_hinge,
)
_FUNCTIONS += (
    binary_focal_crossentropy, categorical_focal_crossentropy, categorical_generalized_cross_entropy, ctc, circle,
    dice, tversky,
)
ALL_OBJECTS = {obj.__name__: obj for obj in _CLASSES + _FUNCTIONS}
ALL_OBJECTS.update({
    "bce": bce, "BCE": bce, "kld": kld, "KLD": kld, "kullback_leibler_divergence": kld,
    "mae": mae, "MAE": mae, "mse": mse, "MSE": mse, "mape": mape, "MAPE": mape, "msle": msle, "MSLE": msle,
    "logcosh": log_cosh,
})


def serialize(loss):
    """A loss as plain data: a function's name, or ``{"class_name", "config"}``.

    Raises:
        ValueError: a function that is not one of the library's.
    """
    if isinstance(loss, Loss):
        return {"class_name": type(loss).__name__, "config": loss.get_config()}
    name = getattr(loss, "__name__", None)
    if ALL_OBJECTS.get(name) is loss:
        return name
    raise ValueError(f"Cannot serialize loss {loss!r}: only minikeras losses and Loss instances can be.")


def deserialize(config, custom_objects=None):
    """The inverse of ``serialize``: a loss function or a new Loss instance."""
    lookup = {**ALL_OBJECTS, **(custom_objects or {})}
    if isinstance(config, str):
        return get(custom_objects[config]) if custom_objects and config in custom_objects else get(config)
    if isinstance(config, dict) and "class_name" in config:
        cls = lookup.get(config["class_name"])
        if not inspect.isclass(cls) or not issubclass(cls, Loss):
            raise ValueError(f"Unknown loss class {config['class_name']!r}; known: {_known_names()}.")
        return cls.from_config(dict(config.get("config") or {}))
    raise ValueError(f"Could not interpret loss configuration {config!r}.")


def _known_names():
    return ", ".join(sorted(ALL_OBJECTS, key=str.lower))


def get(identifier):
    """A loss from a name, a config dict, a class, an instance or a function.

    A function's name gives the function (``"categorical_crossentropy"``), a
    class name gives a new instance with default arguments
    (``"CategoricalCrossentropy"``); callables pass through; None gives None.

    Raises:
        ValueError: an unknown name (the message lists the known ones) or an
            identifier that is not a loss.
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier not in ALL_OBJECTS:
            raise ValueError(f"Unknown loss {identifier!r}. Known losses: {_known_names()}.")
        identifier = ALL_OBJECTS[identifier]
    if inspect.isclass(identifier):
        if not issubclass(identifier, Loss) or identifier in (Loss, LossFunctionWrapper):
            raise ValueError(f"Could not interpret loss identifier {identifier!r}: not a concrete Loss class.")
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier {identifier!r}: expected a name, a Loss or a function.")


__all__ = sorted(
    [obj.__name__ for obj in _CLASSES + _FUNCTIONS]
    + ["mse", "MSE", "mae", "MAE", "mape", "MAPE", "msle", "MSLE", "kld", "KLD", "kullback_leibler_divergence",
       "bce", "BCE", "logcosh", "get", "serialize", "deserialize", "reduce_weighted_values", "ALL_OBJECTS"]
)
