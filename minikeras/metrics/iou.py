"""Intersection-over-union metrics for segmentation and classification.

All of them accumulate one ``(num_classes, num_classes)`` confusion matrix
(rows: true class, columns: predicted class) and read IoU per class off it
as ``tp / (tp + fp + fn)``; they differ in how labels and predictions come
in (class ids, one-hot rows, thresholded probabilities) and in which classes
are averaged. As in Keras, the matrix has the metric's dtype, ``"int64"`` by
default, so float sample weights are truncated unless ``dtype`` is a float.
"""
import warnings

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.metrics.base import Metric, squeeze_or_expand_to_same_rank, to_host

_EPSILON = 1e-7  # keras.backend.epsilon()


def _standard_dtype(dtype):
    return "int64" if dtype in (None, "int") else str(numpy.dtype(dtype))


def _cast(values, dtype):
    """Keras's cast: float to int truncates toward zero."""
    return values.astype(dtype)


class _IoUBase(Metric):
    """The confusion-matrix state and its update, shared by the IoU metrics."""

    _summed_state = ("total_cm",)

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True, sparse_y_pred=True,
                 axis=-1):
        super().__init__(name=name, dtype=_standard_dtype(dtype))
        self.num_classes, self.ignore_class, self.axis = num_classes, ignore_class, axis
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        self.reset_state()

    def reset_state(self):
        """Zero the confusion matrix."""
        self.total_cm = numpy.zeros((self.num_classes, self.num_classes), dtype=self.dtype)

    def _classes(self, values, sparse):
        values = to_host(values)
        if not sparse:
            values = values.argmax(axis=self.axis)
        return _cast(values, self.dtype).reshape(-1)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Add one batch of labels and predictions to the confusion matrix."""
        y_true = self._classes(y_true, self.sparse_y_true)
        y_pred = self._classes(y_pred, self.sparse_y_pred)
        if y_true.shape != y_pred.shape:
            raise ValueError(f"{type(self).__name__}: y_true and y_pred must hold as many entries, received "
                             f"{y_true.shape[0]} labels and {y_pred.shape[0]} predictions.")
        if sample_weight is None:
            weights = numpy.ones(y_true.shape, dtype=self.dtype)
        else:
            raw = to_host(sample_weight)
            if is_float_dtype(raw.dtype) and numpy.dtype(self.dtype).kind in "iu":
                warnings.warn("You are passing weight as `float`, but dtype is `int`. This may result in an "
                              "incorrect weight due to type casting Consider using integer weights.", stacklevel=3)
            weights = numpy.broadcast_to(_cast(raw, self.dtype).reshape(-1), y_true.shape)
        valid = (y_true >= 0) & (y_true < self.num_classes) & (y_pred >= 0) & (y_pred < self.num_classes)
        if self.ignore_class is not None:
            valid &= y_true != self.ignore_class
        matrix = numpy.zeros(self.num_classes * self.num_classes, dtype=numpy.float64)
        numpy.add.at(matrix, (y_true * self.num_classes + y_pred)[valid].astype(numpy.int64),
                     weights[valid].astype(numpy.float64))
        self.total_cm = self.total_cm + matrix.reshape(self.num_classes, self.num_classes).astype(self.dtype)


class IoU(_IoUBase):
    """The mean IoU over ``target_class_ids`` (classes that never occur,
    neither true nor predicted, are left out of the mean).

    Args:
        num_classes: the number of classes.
        target_class_ids: the classes to average over.
        name: default ``"io_u"`` (Keras's snake case of the class name).
        dtype: the confusion matrix's dtype (default ``"int64"``).
        ignore_class: a class id whose entries are left out.
        sparse_y_true: labels are class ids (True) or one-hot rows.
        sparse_y_pred: predictions are class ids (True) or scores per class.
        axis: the class axis of one-hot inputs.

    Example:
        >>> m = IoU(num_classes=2, target_class_ids=[0])
        >>> m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
        >>> m.result()
        0.33333332
    """

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred, axis=axis)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is [0, {num_classes}).")
        self.target_class_ids = list(target_class_ids)

    def result(self):
        """The mean IoU of the target classes, a float32 number as Keras's."""
        matrix = self.total_cm.astype(numpy.float64)
        true_positives = numpy.diag(matrix)
        denominator = matrix.sum(axis=0) + matrix.sum(axis=1) - true_positives
        true_positives = true_positives[self.target_class_ids].astype(numpy.float32)
        denominator = denominator[self.target_class_ids].astype(numpy.float32)
        valid = denominator > 1e-9
        iou = numpy.where(valid, true_positives / (denominator + numpy.float32(_EPSILON)), numpy.float32(0.0))
        return float(iou.sum(dtype=numpy.float32) / (numpy.float32(valid.sum()) + numpy.float32(_EPSILON)))

    def get_config(self):
        """Name, dtype, num_classes, target_class_ids, ignore_class, sparse_y_true, sparse_y_pred and axis."""
        return {**super().get_config(), "num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class BinaryIoU(IoU):
    """IoU of binary masks: predictions ``>= threshold`` are class 1.

    Args:
        target_class_ids: the classes to average over, among 0 and 1 (default both).
        threshold: default 0.5.
        name: default ``"binary_io_u"``.
        dtype: the confusion matrix's dtype (default ``"int64"``).
    """

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Threshold the predictions and add the batch."""
        predicted = (to_host(y_pred, numpy.float32) >= self.threshold).astype(self.dtype)
        super().update_state(y_true, predicted, sample_weight=sample_weight)

    def get_config(self):
        """Keras's keys: target_class_ids, threshold, name and dtype."""
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold, "name": self.name,
                "dtype": self.dtype}


class MeanIoU(IoU):
    """The IoU averaged over all ``num_classes`` classes.

    Args:
        num_classes: the number of classes.
        name: default ``"mean_io_u"``.
        dtype: the confusion matrix's dtype (default ``"int64"``).
        ignore_class: a class id whose entries are left out.
        sparse_y_true: labels are class ids (True) or one-hot rows.
        sparse_y_pred: predictions are class ids (True) or scores per class.
        axis: the class axis of one-hot inputs.
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True, sparse_y_pred=True,
                 axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        """Keras's keys: num_classes, name, dtype, ignore_class, sparse_y_true, sparse_y_pred and axis."""
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class OneHotIoU(IoU):
    """``IoU`` for one-hot labels and per-class scores (the argmax is the prediction).

    Args:
        num_classes: the number of classes.
        target_class_ids: the classes to average over.
        name: default ``"one_hot_io_u"``.
        dtype: the confusion matrix's dtype (default ``"int64"``).
        ignore_class: a class id whose entries are left out.
        sparse_y_pred: predictions are class ids (default False: scores).
        axis: the class axis.
    """

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_pred=False,
                 axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        """Keras's keys: num_classes, target_class_ids, name, dtype, ignore_class, sparse_y_pred and axis."""
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids, "name": self.name,
                "dtype": self.dtype, "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


class OneHotMeanIoU(MeanIoU):
    """``MeanIoU`` for one-hot labels and per-class scores.

    Args:
        num_classes: the number of classes.
        name: default ``"one_hot_mean_io_u"``.
        dtype: the confusion matrix's dtype (default ``"int64"``).
        ignore_class: a class id whose entries are left out.
        sparse_y_pred: predictions are class ids (default False: scores).
        axis: the class axis.
    """

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self):
        """Keras's keys: num_classes, name, dtype, ignore_class, sparse_y_pred and axis."""
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}
