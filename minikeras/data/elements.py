"""What flows through a ``Dataset``: elements, and the steps every
transformation shares.

An element is a leaf or a nest (``minikeras._support.nest``) of leaves. Leaves
are host data, as tf.data keeps its tensors on the CPU: NumPy arrays
(strings as arrays of ``str`` objects, or Python ``str`` for one string),
produced by the loaders or converted from what a user function returns.
User functions (``map``, ``filter``) run as tf.data runs them: on the CPU
(a ``minikeras.device("cpu:0")`` scope) and recording no gradients, in
whichever thread pulls the element.
"""
import contextlib
import numbers

import numpy

from minikeras import backend
from minikeras._support import array_like, nest


class HostArray(numpy.ndarray):
    """A NumPy array as iterating a Dataset yields it: an ndarray with
    tf's ``.numpy()``, so ``text_batch.numpy()[i]`` and
    ``images[i].numpy().astype("uint8")`` (keras.io's habits with tf.data
    tensors) work. Any other use is plain NumPy's."""

    def numpy(self):
        """The array as a plain ``numpy.ndarray`` (no copy)."""
        return self.view(numpy.ndarray)


def _as_host_array(leaf):
    if type(leaf) is numpy.ndarray:
        return leaf.view(HostArray)
    if isinstance(leaf, numpy.generic) and not isinstance(leaf, (numpy.str_, numpy.bytes_)):
        return numpy.asarray(leaf).view(HostArray)
    return leaf


def yielded(elements):
    """The elements of a pass as ``Dataset.__iter__`` gives them (arrays as
    `HostArray`), closing the pass when closed."""
    try:
        for element in elements:
            yield nest.map_structure(_as_host_array, element)
    finally:
        close = getattr(elements, "close", None)
        if close is not None:
            close()


@contextlib.contextmanager
def pipeline_scope():
    """The CPU device and no gradient recording, for a user function's call."""
    from minikeras.autograd.grad_mode import no_grad  # on first use: importing minikeras.data stays light
    from minikeras.device.scope import device

    with device("cpu:0"), no_grad():
        yield


def call_on_element(function, element):
    """``function(*element)`` for a tuple element (tf.data unpacks tuples),
    ``function(element)`` otherwise, inside `pipeline_scope`."""
    with pipeline_scope():
        if type(element) is tuple:
            return function(*element)
        return function(element)


def _is_string(value):
    return isinstance(value, (str, bytes, numpy.str_, numpy.bytes_))


def as_leaf(value, what):
    """A function's output leaf as host data: a NumPy array (numbers as
    tf.data types them: int32, float32, bool), a ``str``/``bytes``, or None.

    Raises:
        TypeError: ``value`` is not data (naming ``what`` produced it).
    """
    if isinstance(value, numpy.ndarray) or value is None or _is_string(value):
        return value
    if isinstance(value, (bool, numpy.bool_)):
        return numpy.asarray(value, dtype=bool)
    if isinstance(value, numpy.generic):
        return numpy.asarray(value)
    if isinstance(value, numbers.Integral):
        return numpy.asarray(value, dtype=numpy.int32 if -2 ** 31 <= value < 2 ** 31 else numpy.int64)
    if isinstance(value, numbers.Real):
        return numpy.asarray(value, dtype=numpy.float32)
    if array_like.is_array_like(value):  # minikeras Tensors, tf/torch tensors, pandas
        return backend.to_numpy(array_like.to_array(value, what))
    raise TypeError(f"{what} expects arrays, tensors, numbers or strings (in tuples, lists or dicts), received "
                    f"{type(value).__name__} {str(value)[:60]!r}.")


def as_element(value, what):
    """``value`` (a user function's output) with every leaf made host data (`as_leaf`)."""
    return nest.map_structure(lambda leaf: as_leaf(leaf, what), value)


def to_numpy_element(element):
    """An element as ``as_numpy_iterator`` gives it: NumPy arrays, text as
    ``bytes`` (tf.data's string tensors become bytes there)."""
    def convert(leaf):
        if isinstance(leaf, str):
            return leaf.encode("utf-8")
        if isinstance(leaf, HostArray):
            leaf = leaf.view(numpy.ndarray)
        if isinstance(leaf, numpy.ndarray) and (leaf.dtype.kind == "U" or array_like.is_string_array(leaf)):
            return numpy.array([item.encode("utf-8") if isinstance(item, str) else item
                                for item in leaf.reshape(-1).tolist()], dtype=object).reshape(leaf.shape)
        if leaf is None or isinstance(leaf, bytes):
            return leaf
        leaf = numpy.asarray(leaf)
        return leaf[()] if leaf.ndim == 0 else leaf  # a scalar as NumPy's scalar, as tf gives it

    return nest.map_structure(convert, element)


def _stack_leaves(leaves, component):
    if all(_is_string(leaf) for leaf in leaves):
        stacked = numpy.empty(len(leaves), dtype=object)
        stacked[:] = [str(leaf) if isinstance(leaf, numpy.str_) else leaf for leaf in leaves]
        return stacked
    arrays = [numpy.asarray(leaf) for leaf in leaves]
    shapes = {array.shape for array in arrays}
    if len(shapes) != 1:
        first = arrays[0].shape
        other = next(index for index, array in enumerate(arrays) if array.shape != first)
        raise ValueError(f"Dataset.batch cannot batch elements of different shapes in component {component}: the "
                         f"first element has shape {first} and element {other} has shape {arrays[other].shape}. "
                         "Resize or pad them to one shape first (e.g. in a map).")
    return numpy.stack(arrays)


def stack_elements(elements):
    """One batch from a list of elements of the same structure: every leaf
    stacked on a new first axis (strings into an object array)."""
    first = elements[0]
    for element in elements[1:]:
        nest.assert_same_structure(first, element)
    columns = zip(*(nest.flatten(element) for element in elements))
    return nest.pack_sequence_as(first, [_stack_leaves(list(column), index) for index, column in enumerate(columns)])


def split_batch(element):
    """The rows of a batched element, one element each (``unbatch``)."""
    leaves = nest.flatten(element)
    sizes = set()
    for index, leaf in enumerate(leaves):
        if _is_string(leaf) or numpy.ndim(leaf) == 0:
            raise ValueError(f"Dataset.unbatch expects every component to have a batch axis; component {index} is "
                             f"a scalar ({str(leaf)[:40]!r}).")
        sizes.add(len(leaf))
    if len(sizes) > 1:
        raise ValueError(f"Dataset.unbatch expects every component to have the same batch size, received sizes "
                         f"{sorted(sizes)}.")
    for row in range(sizes.pop() if sizes else 0):
        yield nest.pack_sequence_as(element, [leaf[row] for leaf in leaves])


def as_scalar_bool(value, what):
    """A predicate's result as a Python bool (a bool, or a one-element
    array or tensor of one)."""
    if isinstance(value, (bool, numpy.bool_)):
        return bool(value)
    array = as_leaf(value, what)
    if not isinstance(array, numpy.ndarray) or array.size != 1 or array.dtype != bool:
        shape = getattr(array, "shape", None)
        raise TypeError(f"{what} expects the predicate to return a scalar bool, received "
                        f"{type(value).__name__} of dtype {getattr(array, 'dtype', None)} and shape {shape}.")
    return bool(array.reshape(()))


def check_count(what, count, minimum=-1):
    """``count`` as an int (an int, a 0-d integer array or tensor), at least ``minimum``."""
    try:
        value = int(count.__index__()) if hasattr(count, "__index__") else None
    except TypeError:
        value = None
    if value is None and array_like.is_array_like(count):
        array = backend.to_numpy(array_like.to_array(count, what))
        if array.size == 1 and array.dtype.kind in "iu":
            value = int(array.reshape(()))
    if value is None or isinstance(count, bool) or value < minimum:
        bound = "-1 (all)" if minimum == -1 else minimum
        raise ValueError(f"{what} expects an int of at least {bound}, received {count!r}.")
    return value
