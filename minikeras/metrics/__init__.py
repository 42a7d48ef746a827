"""Metrics with the Keras API: stateful objects updated batch by batch on the host.

``metric.update_state(y_true, y_pred, sample_weight=None)`` accumulates,
``metric.result()`` reads (a Python float), ``metric.reset_state()`` forgets;
``metric(y_true, y_pred)`` updates and reads. ``get(name)`` builds one from
a Keras name; ``resolve(identifier, loss)`` is what ``compile`` uses, with
Keras's rule for the plain string "accuracy".

Example:
    >>> import minikeras as mk
    >>> m = mk.metrics.get("sparse_categorical_accuracy")
    >>> m.update_state([1, 0], [[0.2, 0.8], [0.3, 0.7]])
    >>> m.result()
    0.5
"""
import inspect

from minikeras.metrics.accuracy import (
    Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy, accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    sparse_top_k_categorical_accuracy, top_k_categorical_accuracy,
)
from minikeras.metrics.auc import AUC
from minikeras.metrics.base import Mean, MeanMetricWrapper, Metric, Sum, snake_case
from minikeras.metrics.confusion import FalseNegatives, FalsePositives, Precision, Recall, TrueNegatives, TruePositives
from minikeras.metrics.probabilistic import (
    BinaryCrossentropy, CategoricalCrossentropy, CategoricalHinge, Hinge, KLDivergence, LogCoshError, Poisson,
    SparseCategoricalCrossentropy, SquaredHinge,
)
from minikeras.metrics.regression import (
    CosineSimilarity, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError,
    RootMeanSquaredError,
)
from minikeras.metrics.correlation import (
    ConcordanceCorrelation, PearsonCorrelation, concordance_correlation, pearson_correlation,
)
from minikeras.metrics.f_score import F1Score, FBetaScore
from minikeras.metrics.iou import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from minikeras.metrics.r2_score import R2Score
from minikeras.metrics.sensitivity_specificity import (
    PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity,
)
from minikeras.metrics.resolve import ACCURACY_NAMES, AutoAccuracy, _loss_kind, resolve_accuracy

_CLASSES = (
    Mean, Sum, Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, RootMeanSquaredError, CosineSimilarity, Precision, Recall, AUC, TruePositives,
    FalsePositives, TrueNegatives, FalseNegatives, BinaryCrossentropy, CategoricalCrossentropy,
    SparseCategoricalCrossentropy, KLDivergence, Poisson, Hinge, SquaredHinge, CategoricalHinge, LogCoshError,
)
_CLASSES += (
    F1Score, FBetaScore, R2Score, IoU, MeanIoU, BinaryIoU, OneHotIoU, OneHotMeanIoU, PearsonCorrelation,
    ConcordanceCorrelation, PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity,
)
ALL_OBJECTS = {cls.__name__: cls for cls in _CLASSES}
ALL_OBJECTS.update({snake_case(cls.__name__): cls for cls in _CLASSES})
ALL_OBJECTS.update({
    "mse": MeanSquaredError, "MSE": MeanSquaredError, "mae": MeanAbsoluteError, "MAE": MeanAbsoluteError,
    "mape": MeanAbsolutePercentageError, "MAPE": MeanAbsolutePercentageError,
    "msle": MeanSquaredLogarithmicError, "MSLE": MeanSquaredLogarithmicError,
    "bce": BinaryCrossentropy, "BCE": BinaryCrossentropy, "kld": KLDivergence, "KLD": KLDivergence,
    "logcosh": LogCoshError, "AutoAccuracy": AutoAccuracy,
})
# "accuracy" means Keras's compile-time choice, not exact match (that is Accuracy()).
for _name in ACCURACY_NAMES:
    ALL_OBJECTS[_name] = AutoAccuracy
del _name

# Keras exports the loss functions under keras.metrics too (the same
# functions: per-sample values as Tensors); the names above that are also
# metric classes' snake case keep resolving to the classes in ``get``.
from minikeras.losses import (  # noqa: E402
    binary_crossentropy, binary_focal_crossentropy, categorical_crossentropy, categorical_focal_crossentropy,
    categorical_hinge, hinge, huber, kl_divergence, log_cosh, mean_absolute_error, mean_absolute_percentage_error,
    mean_squared_error, mean_squared_logarithmic_error, poisson, sparse_categorical_crossentropy, squared_hinge,
)

_LOSS_FUNCTIONS = (
    "binary_crossentropy", "binary_focal_crossentropy", "categorical_crossentropy", "categorical_focal_crossentropy",
    "categorical_hinge", "hinge", "huber", "kl_divergence", "log_cosh", "mean_absolute_error",
    "mean_absolute_percentage_error", "mean_squared_error", "mean_squared_logarithmic_error", "poisson",
    "sparse_categorical_crossentropy", "squared_hinge",
)


def _known_names():
    return ", ".join(sorted(ALL_OBJECTS, key=str.lower))


def get(identifier):
    """A Metric from a name, a config dict, a class, an instance or a function.

    Names are Keras's: class names (``"Precision"``), their snake_case
    (``"sparse_categorical_accuracy"``, ``"auc"``) and the aliases ``"mse"``,
    ``"mae"``, ``"mape"``, ``"msle"``, ``"bce"``, ``"kld"``. ``"accuracy"``
    and ``"acc"`` give an ``AutoAccuracy`` that picks binary, sparse or
    categorical accuracy on its first batch (use ``Accuracy()`` for exact
    match). A function becomes a ``MeanMetricWrapper``; None gives None.

    Raises:
        ValueError: an unknown name (the message lists the known ones), or an
            identifier that is not a metric.
    """
    if identifier is None:
        return None
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        if identifier not in ALL_OBJECTS:
            raise ValueError(f"Unknown metric {identifier!r}. Known metrics: {_known_names()}.")
        return ALL_OBJECTS[identifier]()
    if inspect.isclass(identifier):
        if not issubclass(identifier, Metric):
            raise ValueError(f"Could not interpret metric identifier {identifier!r}: not a Metric class.")
        return identifier()
    if callable(identifier):
        return MeanMetricWrapper(identifier)
    raise ValueError(f"Could not interpret metric identifier {identifier!r}: expected a name, a Metric or a function.")


def resolve(identifier, loss=None, y_true_shape=None, y_pred_shape=None):
    """The metric ``compile(metrics=[identifier])`` means, named as Keras names it.

    ``"accuracy"``/``"acc"`` follow ``resolve_accuracy`` (decided now when
    the shapes are given, else on the first batch); other strings go through
    ``get`` and the metric takes the string as its name (``"mse"`` shows as
    ``mse``, as in Keras); functions are wrapped and named after themselves.

    Args:
        identifier: a metric name, Metric, class or function.
        loss: the compiled loss, used for "accuracy".
        y_true_shape, y_pred_shape: the shapes, if already known.
    """
    if isinstance(identifier, str) and identifier.lower() in ACCURACY_NAMES:
        decided_now = y_pred_shape is not None and (
            y_true_shape is not None or y_pred_shape[-1] == 1 or _loss_kind(loss) is not None
        )
        if decided_now:
            return resolve_accuracy(loss, y_true_shape, y_pred_shape, name=identifier)
        return AutoAccuracy(name=identifier, loss=loss)
    metric = get(identifier)
    if metric is None:
        raise ValueError("Expected a metric, received None.")
    if isinstance(identifier, str):
        metric.name = identifier
    return metric


def get_for_compile(identifier, loss=None, output_shape=None, y_true_shape=None):
    """``resolve`` with the model's output shape: what ``compile`` calls for
    each metric of an output (``output_shape`` may hold None for the batch)."""
    return resolve(identifier, loss=loss, y_true_shape=y_true_shape, y_pred_shape=output_shape)


def serialize(metric):
    """A metric as ``{"class_name", "config"}``."""
    return {"class_name": type(metric).__name__, "config": metric.get_config()}


def deserialize(config, custom_objects=None):
    """The inverse of ``serialize``: a new Metric."""
    lookup = {**ALL_OBJECTS, **(custom_objects or {})}
    cls = lookup.get(config.get("class_name")) if isinstance(config, dict) else None
    if not inspect.isclass(cls) or not issubclass(cls, Metric):
        raise ValueError(f"Could not interpret metric configuration {config!r}; known metrics: {_known_names()}.")
    return cls.from_config(dict(config.get("config") or {}))


__all__ = sorted(
    [cls.__name__ for cls in _CLASSES]
    + ["Metric", "MeanMetricWrapper", "AutoAccuracy", "accuracy", "binary_accuracy", "categorical_accuracy",
       "sparse_categorical_accuracy", "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy",
       "get", "get_for_compile", "resolve", "resolve_accuracy", "serialize", "deserialize", "ALL_OBJECTS"]
    + ["pearson_correlation", "concordance_correlation", *_LOSS_FUNCTIONS]
)
