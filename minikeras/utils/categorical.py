"""to_categorical: integer labels to one-hot rows."""
import numpy

from minikeras.backend.dtypes import is_float_dtype


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot encode integer labels, like ``keras.utils.to_categorical``.

    Args:
        y: integer labels, any shape (a trailing axis of size 1 is dropped).
        num_classes: number of classes (default: max label + 1).
        dtype: dtype of the result.

    Raises:
        ValueError: labels that are negative or >= num_classes.
    """
    if hasattr(y, "numpy") and not isinstance(y, numpy.ndarray):
        y = y.numpy()  # a Tensor: an explicit host copy, which device arrays require
    y = numpy.asarray(y)
    if is_float_dtype(y.dtype):
        if not numpy.all(numpy.equal(numpy.mod(y.astype("float64"), 1), 0)):
            raise ValueError("to_categorical expects integer labels, received non-integer values.")
    y = y.astype("int64")
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y.reshape(y.shape[:-1])
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(
            f"to_categorical: labels must be in [0, {num_classes}), received values in [{y.min()}, {y.max()}]."
        )
    out = numpy.zeros(y.shape + (num_classes,), dtype=dtype)
    numpy.put_along_axis(out, y[..., None], 1, axis=-1)
    return out
