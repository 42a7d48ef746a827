"""Keras's rule for the plain string "accuracy" (or "acc") in ``compile``:
binary, sparse categorical or categorical accuracy, chosen from the loss and
the shapes of the labels and predictions."""
from minikeras.metrics.accuracy import BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy
from minikeras.metrics.base import Metric, to_host

ACCURACY_NAMES = ("accuracy", "acc")

_LOSS_KINDS = {
    "binary_crossentropy": "binary", "bce": "binary", "binarycrossentropy": "binary",
    "binary_focal_crossentropy": "binary", "binaryfocalcrossentropy": "binary",
    "sparse_categorical_crossentropy": "sparse", "sparsecategoricalcrossentropy": "sparse",
    "categorical_crossentropy": "categorical", "categoricalcrossentropy": "categorical",
}


def _loss_kind(loss):
    """"binary", "sparse", "categorical" or None for a loss name, function or object."""
    if loss is None:
        return None
    if isinstance(loss, str):
        name = loss
    else:
        fn = getattr(loss, "fn", None)  # a LossFunctionWrapper: judge by its function
        target = fn if fn is not None and type(loss).__name__ == "LossFunctionWrapper" else loss
        name = getattr(target, "__name__", None) or type(target).__name__
    return _LOSS_KINDS.get(name.lower())


def resolve_accuracy(loss=None, y_true_shape=None, y_pred_shape=None, name="accuracy"):
    """The accuracy metric Keras picks for ``metrics=["accuracy"]``.

    In order: binary accuracy when the output's last axis has size 1 or the
    loss is binary cross-entropy; sparse categorical accuracy when the loss
    is sparse categorical cross-entropy; categorical accuracy when it is
    categorical cross-entropy; otherwise, from the shapes (Keras 3's rule),
    sparse when the labels have lower rank than the predictions or end in
    1 where the predictions do not, else categorical.

    Args:
        loss: the compiled loss (a name, function or Loss), or None.
        y_true_shape: the labels' shape, if known.
        y_pred_shape: the predictions' shape, if known.
        name: the returned metric's name.

    Returns:
        A new BinaryAccuracy, SparseCategoricalAccuracy or CategoricalAccuracy.
    """
    pred_last = y_pred_shape[-1] if y_pred_shape else None
    kind = _loss_kind(loss)
    if pred_last == 1 or kind == "binary":
        return BinaryAccuracy(name=name)
    if kind == "sparse":
        return SparseCategoricalAccuracy(name=name)
    if kind is None and y_true_shape is not None and y_pred_shape is not None:
        sparse = len(y_true_shape) < len(y_pred_shape) or (
            len(y_true_shape) > 0 and y_true_shape[-1] == 1 and (pred_last or 0) > 1
        )
        if sparse:
            return SparseCategoricalAccuracy(name=name)
    return CategoricalAccuracy(name=name)


class AutoAccuracy(Metric):
    """"accuracy" that picks its kind (binary, sparse categorical or
    categorical) on the first batch, with ``resolve_accuracy``.

    Args:
        name: metric name (default ``"accuracy"``).
        dtype: kept for Keras compatibility.
        loss: the compiled loss, a hint for the choice (optional).

    Example:
        >>> m = AutoAccuracy()
        >>> m([2, 0], [[0.1, 0.2, 0.7], [0.3, 0.6, 0.1]])  # picks sparse categorical
        0.5
    """

    _held_metrics = ("resolved",)

    def __init__(self, name="accuracy", dtype=None, loss=None):
        super().__init__(name=name, dtype=dtype)
        self.loss = loss
        self.resolved = None

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Pick the accuracy kind (first call only), then update it."""
        if self.resolved is None:
            true_shape = tuple(getattr(y_true, "shape", None) or to_host(y_true).shape)
            pred_shape = tuple(getattr(y_pred, "shape", None) or to_host(y_pred).shape)
            self.resolved = resolve_accuracy(self.loss, true_shape, pred_shape, name=self.name)
        self.resolved.update_state(y_true, y_pred, sample_weight=sample_weight)

    def result(self):
        """The chosen accuracy's result (0.0 before the first batch)."""
        return 0.0 if self.resolved is None else self.resolved.result()

    def reset_state(self):
        """Reset the chosen accuracy (the choice itself is kept)."""
        if self.resolved is not None:
            self.resolved.reset_state()

    def get_config(self):
        """Name and dtype (the loss hint is not serialized)."""
        return {"name": self.name, "dtype": self.dtype}
