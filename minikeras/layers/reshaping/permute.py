"""keras.layers.Permute."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec

__all__ = ["Permute"]


# ---------------------------------------------------------------- Permute
class Permute(Layer):
    """Permute the non-batch axes, numbered from 1 as in Keras.

    Args:
        dims: a permutation of ``1..rank-1``; ``(2, 1)`` swaps the two axes
            of a ``(batch, a, b)`` input.
        **kwargs: base Layer arguments.
    """

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(
                f"Permute: dims must be a permutation of 1..{len(dims)} (axis 0, the batch, stays first), "
                f"received dims={dims}."
            )
        self.dims = tuple(int(d) for d in dims)
        self.input_spec = InputSpec(ndim=len(self.dims) + 1)

    def call(self, inputs):
        return ops.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def get_config(self):
        return {**super().get_config(), "dims": tuple(self.dims)}
