"""Layers inside ``tf.data`` pipelines, as Keras 3 documents for every backend.

Keras users preprocess in ``dataset.map(lambda x, y: (layer(x), y))``: the
layer is called on TensorFlow tensors, symbolic ones while ``map`` traces
its function. minikeras never imports TensorFlow itself: a layer called on
a ``tf.Tensor`` (recognised by its type's module, so this costs nothing
where TensorFlow is absent) computes with minikeras on the host and hands
back a ``tf.Tensor``:

- eagerly, by converting the input with ``.numpy()`` and the output with
  ``tf.convert_to_tensor``;
- inside a graph (``Dataset.map``), through ``tf.numpy_function``. Its
  output dtype and static shape are found at trace time by running the
  layer on two small host probes of the input's static shape (unknown
  axes of sizes 1 and 2; an axis whose output size changes with them is
  unknown), as the functional API finds shapes.

``Layer.autograph_info__`` keeps TensorFlow's AutoGraph from rewriting the
layer's Python code while ``map`` traces. Strings cross as bytes (TensorFlow's string type); a layer that returns
text (``StringLookup(invert=True)``) returns ``tf.string``.
"""
import numpy

from minikeras._support.nest import flatten as _flatten, map_structure as _map_structure, \
    pack_sequence_as as _pack_sequence_as


def is_tf_tensor(value):
    """Whether ``value`` is a TensorFlow tensor (eager or symbolic)."""
    module = type(value).__module__ or ""
    return module.startswith("tensorflow") and hasattr(value, "dtype") and hasattr(value, "shape")


def has_tf_tensors(inputs):
    return any(is_tf_tensor(leaf) for leaf in _flatten(inputs))


def call_on_tf_tensors(layer, inputs, args, kwargs):
    """``layer(inputs, *args, **kwargs)`` for TensorFlow tensor inputs; the
    outputs are TensorFlow tensors (see the module docstring)."""
    import tensorflow as tf  # the input is a TensorFlow tensor, so TensorFlow is loaded

    if isinstance(inputs, dict) and all(is_tf_tensor(leaf) for leaf in _flatten(inputs)):
        return _dict_call(tf, layer, inputs, args, kwargs)
    if not is_tf_tensor(inputs):
        raise TypeError(f"Layer '{layer.name}' ({type(layer).__name__}): inside tf.data a layer takes one "
                        f"TensorFlow tensor or a dict of them, received {type(inputs).__name__}.")
    if tf.executing_eagerly():
        return _to_tf(tf, _host_outputs(layer, inputs.numpy(), args, kwargs))
    return _traced_call(tf, layer, inputs, args, kwargs)


def _traced_call(tf, layer, inputs, args, kwargs):
    probes = [_probe_outputs(tf, layer, inputs, size, args, kwargs) for size in (1, 2)]
    dtype = _tf_dtype(tf, probes[0])
    shape = [a if a == b else None for a, b in zip(probes[0].shape, probes[1].shape)]

    def compute(array):
        return _as_tf_array(_host_outputs(layer, array, args, kwargs))

    output = tf.numpy_function(compute, [inputs], dtype, stateful=True)
    output.set_shape(shape)
    return output


def _dict_call(tf, layer, inputs, args, kwargs):
    """A dict of tensors in (``{"images": ..., "labels": ...}``, as Keras's
    augmentation layers take), a dict of tensors out: every leaf crosses
    in one ``numpy_function``, the output structure found by the probes."""
    leaves = _flatten(inputs)
    if tf.executing_eagerly():
        outputs = _host_structure(layer, inputs, [leaf.numpy() for leaf in leaves], args, kwargs)
        return _map_structure(lambda array: _to_tf(tf, array), outputs)
    probes = [_host_structure(layer, inputs, [_zeros_like_static(tf, leaf, size) for leaf in leaves], args, kwargs)
              for size in (1, 2)]
    flat_probes = [_flatten(probe) for probe in probes]

    def compute(*arrays):
        return [_as_tf_array(array) for array in _flatten(_host_structure(layer, inputs, arrays, args, kwargs))]

    outputs = tf.numpy_function(compute, leaves, [_tf_dtype(tf, probe) for probe in flat_probes[0]], stateful=True)
    for output, small, large in zip(outputs, *flat_probes):
        output.set_shape([a if a == b else None for a, b in zip(small.shape, large.shape)])
    return _pack_sequence_as(probes[0], outputs)


def _zeros_like_static(tf, tensor, unknown_size):
    shape = [unknown_size if size is None else size for size in tensor.shape.as_list()]
    return numpy.zeros(shape, dtype=tensor.dtype.as_numpy_dtype)


def _host_structure(layer, structure, arrays, args, kwargs):
    """``layer`` on ``structure``'s leaves replaced by host ``arrays``; the
    output's leaves as host arrays."""
    from minikeras.autograd import Tensor

    output = layer(_pack_sequence_as(structure, [_host_array(array) for array in arrays]), *args, **kwargs)
    return _map_structure(lambda leaf: numpy.asarray(leaf.numpy() if isinstance(leaf, Tensor) else leaf), output)


def _host_outputs(layer, array, args, kwargs):
    from minikeras.autograd import Tensor

    array = _host_array(array)
    if array.dtype.kind in "OS":  # tf.string arrives as bytes
        array = array.astype(object)
    output = layer(array, *args, **kwargs)
    if isinstance(output, (list, tuple)):
        raise TypeError(f"Layer '{layer.name}' ({type(layer).__name__}) returns several tensors; inside tf.data "
                        "a layer must return one.")
    return numpy.asarray(output.numpy() if isinstance(output, Tensor) else output)


def _host_array(value):
    """``tf.numpy_function`` hands a rank-0 string over as ``bytes``: an array of it."""
    return numpy.array(value, dtype=object) if isinstance(value, bytes) else value


def _probe_outputs(tf, layer, tensor, unknown_size, args, kwargs):
    """The layer's output on a host probe of ``tensor``'s static shape:
    zeros, or for text an empty string, else a token of the layer's own
    vocabulary (a lookup with no OOV index refuses unknown tokens)."""
    shape = [unknown_size if size is None else size for size in tensor.shape.as_list()]
    if tensor.dtype != tf.string:
        return _host_outputs(layer, numpy.zeros(shape, dtype=tensor.dtype.as_numpy_dtype), args, kwargs)
    tokens = [b""] + [str(t).encode("utf-8") for t in (getattr(layer, "get_vocabulary", list)() or [])[-1:]]
    for token in tokens:
        try:
            return _host_outputs(layer, numpy.full(shape, token, dtype=object), args, kwargs)
        except ValueError:
            if token is tokens[-1]:
                raise


def _as_tf_array(array):
    if array.dtype.kind in "OU":  # text out: TensorFlow wants bytes
        return numpy.vectorize(lambda s: s if isinstance(s, bytes) else str(s).encode("utf-8"),
                               otypes=[object])(array) if array.size else array.astype(object)
    return array


def _tf_dtype(tf, array):
    return tf.string if array.dtype.kind in "OUS" else tf.as_dtype(array.dtype)


def _to_tf(tf, array):
    return tf.convert_to_tensor(_as_tf_array(array), dtype=_tf_dtype(tf, array))
