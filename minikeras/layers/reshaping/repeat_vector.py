"""keras.layers.RepeatVector."""
from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec

__all__ = ["RepeatVector"]


# ----------------------------------------------------------- RepeatVector
class RepeatVector(Layer):
    """Repeat a ``(batch, features)`` input ``n`` times: ``(batch, n, features)``.

    Args:
        n: the number of repetitions (a positive int).
        **kwargs: base Layer arguments.
    """

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"RepeatVector: n must be a positive integer, received n={n!r}.")
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return ops.repeat(ops.expand_dims(inputs, 1), self.n, axis=1)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.n, input_shape[1])

    def get_config(self):
        return {**super().get_config(), "n": self.n}
