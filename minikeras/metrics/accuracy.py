"""Accuracy metrics: exact match, binary, categorical, sparse, and top-k.

Each has a per-sample function (``categorical_accuracy(y_true, y_pred)``
returning 1.0/0.0 per sample as a NumPy array) and a Metric class that
averages it, with Keras's names and defaults.
"""
import numpy

from minikeras.metrics.base import MeanMetricWrapper, squeeze_or_expand_to_same_rank, to_host
from minikeras._support.argument_validation import validate_int


def _host_pair(y_true, y_pred, true_dtype=None):
    y_pred = to_host(y_pred)
    y_true = to_host(y_true, true_dtype)
    return y_true, y_pred


def _check_same_shape(name, y_true, y_pred):
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape, received y_true shape {y_true.shape} "
            f"and y_pred shape {y_pred.shape}."
        )


def accuracy(y_true, y_pred):
    """1.0 where ``y_pred`` equals ``y_true`` exactly, else 0.0 (per element).

    Example:
        >>> accuracy([1, 2, 3], [1, 2, 4])
        array([1., 1., 0.])
    """
    y_true, y_pred = _host_pair(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    _check_same_shape("accuracy", y_true, y_pred)
    return (y_true == y_pred).astype(numpy.float64)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1.0 where ``(y_pred > threshold)`` equals the 0/1 label, per element.

    Example:
        >>> binary_accuracy([[1], [0]], [[0.9], [0.7]])
        array([[1.],
               [0.]])
    """
    y_true, y_pred = _host_pair(y_true, y_pred)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    _check_same_shape("binary_accuracy", y_true, y_pred)
    return (y_true == (y_pred > threshold)).astype(numpy.float64)


def _check_classes(name, y_pred):
    if y_pred.ndim < 1 or y_pred.shape[-1] < 1:
        raise ValueError(f"{name}: y_pred must have a class axis last, received shape {y_pred.shape}.")


def categorical_accuracy(y_true, y_pred):
    """1.0 where the arg-max of ``y_pred`` matches the arg-max of one-hot ``y_true``.

    Example:
        >>> categorical_accuracy([[0, 1], [1, 0]], [[0.2, 0.8], [0.3, 0.7]])
        array([1., 0.])
    """
    y_true, y_pred = _host_pair(y_true, y_pred)
    _check_classes("categorical_accuracy", y_pred)
    _check_same_shape("categorical_accuracy", y_true, y_pred)
    return (y_true.argmax(axis=-1) == y_pred.argmax(axis=-1)).astype(numpy.float64)


def _sparse_labels(name, y_true, y_pred):
    """Integer labels of shape ``y_pred.shape[:-1]`` (a trailing 1 is dropped)."""
    if y_true.ndim == y_pred.ndim and y_true.ndim > 0 and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    if y_true.shape != y_pred.shape[:-1]:
        raise ValueError(
            f"{name}: received y_true shape {y_true.shape} and y_pred shape {y_pred.shape}; expected integer "
            f"labels of shape {y_pred.shape[:-1]} (or with a trailing 1)."
        )
    return y_true


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where the arg-max of ``y_pred`` equals the integer label.

    ``y_true`` has shape ``y_pred.shape[:-1]`` or that with a trailing 1.

    Example:
        >>> sparse_categorical_accuracy([1, 0], [[0.2, 0.8], [0.3, 0.7]])
        array([1., 0.])
    """
    y_true, y_pred = _host_pair(y_true, y_pred)
    _check_classes("sparse_categorical_accuracy", y_pred)
    y_true = _sparse_labels("sparse_categorical_accuracy", y_true, y_pred)
    return (y_true == y_pred.argmax(axis=-1)).astype(numpy.float64)


def _in_top_k(labels, y_pred, k):
    """Whether each label's score is among the ``k`` largest of its row.

    Ties at the k-th score count as in (as ``keras.ops.in_top_k``): the
    label is in when its score is at least the k-th largest score.
    """
    classes = y_pred.shape[-1]
    rows = y_pred.reshape(-1, classes)
    labels = labels.reshape(-1).astype(numpy.int64)
    if k >= classes:
        kth = rows.min(axis=-1)
    else:
        kth = numpy.partition(rows, classes - k, axis=-1)[:, classes - k]
    label_scores = numpy.take_along_axis(rows, labels[:, None], axis=-1)[:, 0]
    return label_scores >= kth


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the true class (arg-max of one-hot ``y_true``) is in the top ``k`` of ``y_pred``.

    Example:
        >>> top_k_categorical_accuracy([[0, 0, 1], [1, 0, 0]], [[0.1, 0.5, 0.4], [0.05, 0.15, 0.8]], k=2)
        array([1., 0.])
    """
    k = validate_int("top_k_categorical_accuracy", "k", k, minimum=1)
    y_true, y_pred = _host_pair(y_true, y_pred)
    _check_classes("top_k_categorical_accuracy", y_pred)
    _check_same_shape("top_k_categorical_accuracy", y_true, y_pred)
    labels = y_true.argmax(axis=-1)
    return _in_top_k(labels, y_pred, k).reshape(labels.shape).astype(numpy.float64)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where the integer label is among the top ``k`` scores of ``y_pred``.

    Example:
        >>> sparse_top_k_categorical_accuracy([2, 0], [[0.1, 0.5, 0.4], [0.05, 0.15, 0.8]], k=2)
        array([1., 0.])
    """
    k = validate_int("sparse_top_k_categorical_accuracy", "k", k, minimum=1)
    y_true, y_pred = _host_pair(y_true, y_pred)
    _check_classes("sparse_top_k_categorical_accuracy", y_pred)
    labels = _sparse_labels("sparse_top_k_categorical_accuracy", y_true, y_pred)
    classes = y_pred.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise ValueError(
            f"sparse_top_k_categorical_accuracy: labels must lie in [0, {classes}), received values from "
            f"{labels.min()} to {labels.max()}."
        )
    return _in_top_k(labels, y_pred, k).reshape(labels.shape).astype(numpy.float64)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels exactly.

    Example:
        >>> Accuracy()([1, 2, 3, 4], [0, 2, 3, 4])
        0.75
    """

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name=name, dtype=dtype)

    def get_config(self):
        """Name and dtype."""
        return {"name": self.name, "dtype": self.dtype}


class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` matches the binary label.

    Args:
        name: metric name.
        dtype: kept for Keras compatibility.
        threshold: the decision threshold on ``y_pred`` (default 0.5).

    Example:
        >>> BinaryAccuracy()([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])
        0.75
    """

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold

    def get_config(self):
        """Name, dtype and threshold."""
        return {"name": self.name, "dtype": self.dtype, "threshold": self.threshold}


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of ``y_pred`` matches that of one-hot ``y_true``.

    Example:
        >>> CategoricalAccuracy()([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])
        0.5
    """

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name=name, dtype=dtype)

    def get_config(self):
        """Name and dtype."""
        return {"name": self.name, "dtype": self.dtype}


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of ``y_pred`` equals the integer label.

    Example:
        >>> SparseCategoricalAccuracy()([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])
        0.5
    """

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)

    def get_config(self):
        """Name and dtype."""
        return {"name": self.name, "dtype": self.dtype}


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot target is among the ``k`` highest scores.

    Args:
        k: how many top scores count (default 5).
        name: metric name.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        k = validate_int(type(self).__name__, "k", k, minimum=1)
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k

    def get_config(self):
        """Name, dtype and k."""
        return {"name": self.name, "dtype": self.dtype, "k": self.k}


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the ``k`` highest scores.

    Args:
        k: how many top scores count (default 5).
        name: metric name.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None):
        k = validate_int(type(self).__name__, "k", k, minimum=1)
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k

    def get_config(self):
        """Name, dtype and k."""
        return {"name": self.name, "dtype": self.dtype, "k": self.k}
