"""Keras 3 spellings of ops that minikeras names differently.

``ops.shape(x)`` (the ``ops.shape`` name is otherwise the shape-ops module),
``ops.one_hot(x, num_classes)`` and ``ops.convert_to_tensor(x, dtype)``, as
in ``keras.ops``. Imported last by ``minikeras.ops``, so these names win.

Since ``minikeras.ops.shape`` is now this function, import the shape ops
from the package (``from minikeras.ops import reshape``) or with
``from minikeras.ops.shape import reshape``; ``import minikeras.ops.shape as
module`` would give the function.
"""

__all__ = ["shape", "one_hot", "convert_to_tensor"]

import numpy

from minikeras.autograd import Tensor
from minikeras.ops.nn import embedding as _embedding
from minikeras._support.argument_validation import validate_dtype, validate_flag, validate_tensor_input


def shape(x):
    """The shape of a tensor or array as a tuple of ints (``keras.ops.shape``).

    Args:
        x: a Tensor, a NumPy/CuPy array, or anything ``numpy.shape`` accepts
            (a number, a nested list).

    Returns:
        A tuple of Python ints.
    """
    if isinstance(x, Tensor) or hasattr(x, "shape"):
        return tuple(int(size) for size in x.shape)
    validate_tensor_input("shape", x, allow_sequence=True)  # None, strings: refused (Keras converts first)
    return tuple(numpy.shape(x))


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
        x = convert_to_tensor(x)
    return _embedding.one_hot(x, num_classes if num_classes is not None else depth,
                              dtype="float32" if dtype is None else dtype, axis=axis)


def convert_to_tensor(x, dtype=None, sparse=None):
    """``x`` as a Tensor on the current device (``keras.ops.convert_to_tensor``).

    A Tensor of the right dtype is returned as is; one of another dtype is
    cast. Python lists and numbers become float32 when they hold floats and
    int32 when they hold ints, as in Keras; arrays keep their dtype.

    Args:
        x: a Tensor, array, number or nested list.
        dtype: the dtype wanted (default: see above).
        sparse: must be falsy: minikeras has no sparse tensors.

    Raises:
        ValueError: ``sparse=True``, or ``x`` is not numeric.
    """
    if sparse is not None and validate_flag("convert_to_tensor", "sparse", sparse):
        raise ValueError("convert_to_tensor: sparse=True is not supported (minikeras has no sparse tensors).")
    if dtype is not None:
        dtype = validate_dtype("convert_to_tensor", dtype)
    if isinstance(x, Tensor):
        return x if dtype is None or x.dtype == numpy.dtype(dtype) else x.astype(dtype)
    if dtype is None and not hasattr(x, "dtype"):
        try:
            kind = numpy.asarray(x).dtype.kind
        except ValueError:  # a ragged list
            raise ValueError(f"convert_to_tensor expects numbers in a rectangular nesting, received a ragged "
                             f"{type(x).__name__}.") from None
        if kind == "f":
            dtype = "float32"
        elif kind in "iu":
            dtype = "int32"
        elif kind != "b":
            raise ValueError(f"convert_to_tensor expects numbers, received {type(x).__name__} "
                             f"of dtype {numpy.asarray(x).dtype}.")
    return Tensor(x, dtype=dtype)
