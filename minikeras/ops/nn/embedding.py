"""Embedding lookup (a differentiable row gather) and Keras's one_hot."""

__all__ = ["embedding", "one_hot"]

import numpy

from minikeras.autograd import Function, Tensor
from minikeras.ops._checks import shape_of
from minikeras._support.argument_validation import (as_tensor, validate_axis, validate_dtype, validate_flag,
                                                 validate_tensor_input)
from minikeras.ops.array._common import _scatter_add_rows
from minikeras._support import deferred_checks


class Embedding(Function):
    """Gathers table rows; keeps only the indices for backward.

    Args:
        indices_checked: the caller checked the index range already (the
            Embedding layer does): no second device round trip here.
    """

    def __init__(self, indices_checked=False):
        self.indices_checked = indices_checked

    def forward(self, indices, table):
        xp = self.device.xp
        if indices.dtype.kind not in "iu":
            indices = indices.astype(numpy.int64)  # Keras feeds float ids too
        vocab = table.shape[0]
        if not self.indices_checked:
            _check_indices(self.device, indices, vocab)
        if self.needs_input_grad[1]:
            self.save_for_backward(indices)
            self.table_shape = table.shape
        # take is several times faster than table[indices] in NumPy.
        return xp.take(table, indices, axis=0)

    def backward(self, grad):
        (indices,) = self.saved
        xp = self.device.xp
        # Repeated ids accumulate. Measured for (128, 100) ids into a
        # (10000, 64) table: flat add.at 1.8 ms, sort + add.reduceat 4.4 ms,
        # bincount 8.5 ms, add.at on rows 7.6 ms (see _scatter_add_rows).
        rows = xp.ascontiguousarray(grad).reshape(indices.size, self.table_shape[1])
        table_grad = _scatter_add_rows(self.device, indices.reshape(-1), rows, self.table_shape[0])
        return None, table_grad.reshape(self.table_shape)


def _check_indices(device, indices, vocab):
    """Ids in ``[0, vocab)``, or ValueError. In a GPU training or test step
    the check waits for the next read of the logs (_support/deferred_checks.py):
    reading the ids back would stop every step (and a captured step) for a
    host sync; meanwhile CuPy's take wraps a bad id around."""
    if indices.size == 0:
        return
    if deferred_checks.active() and not device.host_kernels:
        deferred_checks.defer_label_range("embedding", device, indices, vocab, _message)
        return
    low, high = device.bounds(indices)  # one transfer for both bounds
    if low < 0 or high >= vocab:
        raise ValueError(_message(vocab, low if low < 0 else high) + ".")


def _message(vocab, bad):
    return f"embedding: indices must be in [0, {vocab}) for a table with vocabulary size {vocab}; received index {bad}"


def embedding(indices, table):
    """Rows of ``table`` at ``indices``: ``table[indices]``.

    Args:
        indices: integer ids of any shape (float ids are truncated to ints).
        table: the embedding matrix, shape ``(vocab, dim)``.

    Returns:
        A tensor of shape ``indices.shape + (dim,)``; its gradient flows to
        ``table`` only, repeated ids accumulating.

    Raises:
        ValueError: an index is outside ``[0, vocab)``.
    """
    indices = as_tensor("embedding", indices, allow_complex=False)
    validate_tensor_input("embedding", table, allow_bool=False, allow_complex=False)
    table_shape = shape_of(table)
    if len(table_shape) != 2:
        raise ValueError(f"embedding: the table must have shape (vocab, dim), received shape {table_shape}.")
    dtype = getattr(indices, "dtype", None)
    if dtype is None or numpy.dtype(dtype).kind not in "iuf":
        raise TypeError(f"embedding: indices must be an integer tensor or array, received {dtype or type(indices)}.")
    return Embedding().apply(indices, table)


class OneHot(Function):
    """Non-differentiable one-hot encoding."""

    def __init__(self, depth, dtype, axis):
        self.depth, self.dtype, self.axis = depth, dtype, axis

    def forward(self, indices):
        xp = self.device.xp
        if indices.dtype.kind not in "iu":
            indices = indices.astype(numpy.int64)
        # Comparing against every class leaves out-of-range ids as zero rows.
        out = (indices[..., None] == xp.arange(self.depth)).astype(self.dtype)
        if self.axis != out.ndim - 1:
            out = xp.moveaxis(out, -1, self.axis)
        return out

    def backward(self, grad):  # pragma: no cover - indices never require grad
        return None


def one_hot(x, num_classes=None, axis=-1, dtype=None, sparse=False, depth=None):
    """One-hot encode integer ids (``keras.ops.one_hot``); not differentiable.

    An id outside ``[0, num_classes)`` gives an all-zero row, as in Keras.

    Args:
        x: integer ids, a Tensor or array of any shape.
        num_classes: the number of classes (``depth`` is accepted as TensorFlow's name).
        axis: where the class axis goes (default: last).
        dtype: the result's dtype (default float32).
        sparse: must be False: minikeras has no sparse tensors.

    Returns:
        A float tensor with ``num_classes`` inserted at ``axis``.

    Raises:
        ValueError: no ``num_classes``, both spellings given, or ``sparse=True``.
    """
    if validate_flag("one_hot", "sparse", sparse):
        raise ValueError("one_hot: sparse=True is not supported (minikeras has no sparse tensors).")
    if num_classes is None and depth is None:
        raise ValueError("one_hot expects num_classes, received none.")
    if num_classes is not None and depth is not None and num_classes != depth:
        raise ValueError(f"one_hot: received num_classes={num_classes!r} and depth={depth!r}; give one.")
    if not isinstance(x, Tensor) and not hasattr(x, "dtype"):
        try:
            host = numpy.asarray(x)
        except ValueError:  # a ragged list
            raise ValueError(f"one_hot: indices must be a Tensor, an array or a (rectangular) list of ints, "
                             f"received a ragged {type(x).__name__}.") from None
        if host.dtype.kind not in "iuf":
            raise TypeError(f"one_hot: indices must be a Tensor, an array or a list of ints, "
                            f"received {type(x).__name__} of dtype {host.dtype}.")
        from minikeras.ops.core import convert_to_tensor

        x = convert_to_tensor(x)
    return _one_hot_ids(x, num_classes if num_classes is not None else depth,
                        dtype="float32" if dtype is None else dtype, axis=axis)


def _one_hot_ids(indices, depth, dtype="float32", axis=-1):
    """One-hot encode integer ids (not differentiable): :func:`one_hot` once its arguments are Keras's.

    As in Keras and TensorFlow, an id outside ``[0, depth)`` (e.g. -1 used
    for padding) gives an all-zero row instead of an error.

    Args:
        indices: integer ids of any shape.
        depth: the number of classes.
        dtype: the dtype of the result.
        axis: where the new class axis goes (default: last).

    Returns:
        A tensor of shape ``indices.shape`` with ``depth`` inserted at ``axis``.
    """
    if isinstance(depth, bool) or not isinstance(depth, (int, numpy.integer)) or depth < 0:
        raise ValueError(f"one_hot: depth must be a non-negative int, received {depth!r}.")
    if indices is not None and not isinstance(indices, (list, tuple)):
        indices = as_tensor("one_hot", indices, allow_complex=False)
    index_dtype = getattr(indices, "dtype", None)
    if index_dtype is None:
        raise TypeError(f"one_hot: indices must be a Tensor or an array, received {type(indices).__name__}.")
    if numpy.dtype(index_dtype).kind not in "biuf":
        raise TypeError(f"one_hot: indices must be integer ids, received dtype {index_dtype}.")
    if numpy.dtype(index_dtype).kind == "b":
        indices = indices.astype("int32")  # False and True are the ids 0 and 1, as Keras's cast
    axis = validate_axis("one_hot", axis, len(shape_of(indices)) + 1)
    return OneHot(int(depth), validate_dtype("one_hot", dtype), axis).apply(indices)
