"""The zero-padding and cropping layers' shared argument check, and the
base of ZeroPadding1D/2D/3D.
"""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.convolutional.base_conv import _check_channels_last
from minikeras.layers.input_spec import InputSpec
from minikeras._support.argument_validation import is_int


def _pairs(class_name, name, value, rank):
    """Keras's spatial (before, after) amounts: an int (all sides), ``rank``
    ints (symmetric per axis), or ``rank`` pairs; for rank 1 also one pair."""
    pairs = None
    if is_int(value):
        pairs = ((int(value), int(value)),) * rank
    elif isinstance(value, (tuple, list)):
        if rank == 1 and len(value) == 2 and all(is_int(v) for v in value):
            pairs = ((int(value[0]), int(value[1])),)
        elif rank == 2 and len(value) == 2 and all(is_int(v) for v in value):
            pairs = tuple((int(v), int(v)) for v in value)
        elif len(value) == rank and all(isinstance(p, (tuple, list)) and len(p) == 2 and all(is_int(v) for v in p)
                                        for p in value):
            pairs = tuple((int(p[0]), int(p[1])) for p in value)
    if pairs is None:
        shapes = "an int or a pair of ints (before, after)" if rank == 1 else \
            "an int, a pair of ints (height, width), or ((top, bottom), (left, right))"
        raise ValueError(f"{class_name}: {name} must be {shapes}, received {value!r}.")
    if any(v < 0 for pair in pairs for v in pair):
        raise ValueError(f"{class_name}: {name} must be non-negative, received {value!r}.")
    return pairs


# ------------------------------------------------------------ ZeroPadding
class _ZeroPadding(Layer):
    rank = 2

    def __init__(self, padding, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(type(self).__name__, "padding", padding, self.rank)
        self.data_format = _check_channels_last(type(self).__name__, data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        return ops.pad(inputs, ((0, 0),) + self.padding + ((0, 0),))

    def compute_output_shape(self, input_shape):
        spatial = tuple(None if size is None else size + a + b
                        for size, (a, b) in zip(input_shape[1:-1], self.padding))
        return (input_shape[0],) + spatial + (input_shape[-1],)

    def get_config(self):
        padding = self.padding[0] if self.rank == 1 else self.padding
        return {**super().get_config(), "padding": tuple(tuple(p) for p in padding) if self.rank == 2 else tuple(padding),
                "data_format": self.data_format}
