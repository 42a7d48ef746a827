"""keras.layers.InputLayer and ``keras.Input``: a model's entry point."""
import numpy

from minikeras.layers.base import Layer
from minikeras.layers.input import KerasTensor, Node, is_string_dtype
from minikeras._support.argument_validation import is_int


class InputLayer(Layer):
    """The layer behind ``Input``: it passes its input through."""

    _passes_text = True  # an Input(dtype="string") feeds text to the next layer

    def __init__(self, input_shape=None, batch_size=None, dtype=None, name=None, batch_input_shape=None,
                 sparse=None, **kwargs):
        if batch_input_shape is None:
            if input_shape is None:
                raise ValueError("InputLayer needs input_shape (without the batch axis) or batch_input_shape.")
            batch_input_shape = (batch_size,) + tuple(input_shape)
        _check_batch_shape(name, batch_input_shape)
        text = is_string_dtype(dtype)
        super().__init__(name=name, dtype="float32" if text else dtype or "float32",
                         batch_input_shape=batch_input_shape, **kwargs)
        # The input's dtype: a numeric one, or "string" (text stays NumPy
        # strings on the host; the layer holds no weights, so its own dtype
        # is only that of the data).
        self._input_dtype = "string" if text else self.dtype
        self.built = True
        tensor = KerasTensor(self._batch_input_shape, self._input_dtype, name=self.name)
        tensor.node = Node(self, [], (), {}, tensor)  # its output, as ``self.output``

    def call(self, inputs):
        return inputs

    def get_config(self):
        return {"batch_input_shape": list(self._batch_input_shape), "dtype": self._input_dtype, "name": self.name}


def _check_batch_shape(name, batch_input_shape):
    """Sizes are ints >= 0 or None (a file may say otherwise)."""
    valid = isinstance(batch_input_shape, (list, tuple)) and all(
        size is None or (is_int(size) and size >= 0) for size in batch_input_shape)
    if not valid:
        label = f"InputLayer {name!r}" if name else "InputLayer"
        raise ValueError(f"{label}: the batch shape must be a list of sizes (ints >= 0, or None), "
                         f"received {batch_input_shape!r}.")


def Input(shape=None, batch_size=None, name=None, dtype="float32", batch_shape=None):  # noqa: N802  (Keras name)
    """A symbolic input for the functional API.

    Args:
        shape: the shape of one sample, e.g. ``(784,)``; None for unknown sizes.
        batch_size: fixed batch size, usually None.
        name: the input's name.
        dtype: its dtype; ``"string"`` for text (NumPy arrays of ``str`` or
            ``bytes``, read by TextVectorization or StringLookup).

    Example:
        >>> x = Input(shape=(784,))
        >>> y = layers.Dense(10)(x)
        >>> model = Model(x, y)
    """
    if shape is None and batch_shape is None:
        raise ValueError("Input needs shape=(...) (one sample's shape, without the batch axis).")
    if shape is not None:
        if isinstance(shape, int):
            shape = (shape,)
        for size in shape:
            if size is not None and (not isinstance(size, (int, numpy.integer)) or size <= 0):
                raise ValueError(f"Input shape sizes must be positive ints or None, received shape {shape!r}.")
    layer = InputLayer(input_shape=shape, batch_size=batch_size, dtype=dtype, name=name,
                       batch_input_shape=batch_shape)
    return layer.output
