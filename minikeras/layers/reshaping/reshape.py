"""keras.layers.Reshape."""
import math

from minikeras import ops
from minikeras.layers.base import Layer
from minikeras._support.argument_validation import is_int

__all__ = ["Reshape"]


# ---------------------------------------------------------------- Reshape
class Reshape(Layer):
    """Reshape every sample to ``target_shape`` (the batch axis is kept).

    Args:
        target_shape: the new sample shape, without the batch axis; one
            entry may be -1 (inferred from the input's size).
        **kwargs: base Layer arguments.

    Raises:
        ValueError: an invalid target shape, or an input whose size does
            not fit it.
    """

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        # A tuple or list of ints, as Keras (which refuses a bare int such as -1 with a TypeError);
        # a float size is refused, not truncated.
        if not isinstance(target_shape, (tuple, list)) or not all(is_int(size) for size in target_shape):
            raise TypeError(f"Reshape: target_shape must be a tuple of ints such as (-1,) or (4, 3), received "
                            f"{type(target_shape).__name__} {target_shape!r}.")
        target_shape = tuple(int(size) for size in target_shape)
        if sum(size == -1 for size in target_shape) > 1 or any(size == 0 or size < -1 for size in target_shape):
            raise ValueError(
                f"Reshape: target_shape must hold positive sizes and at most one -1, received {target_shape}."
            )
        self.target_shape = target_shape

    def _output_sample_shape(self, sample_shape):
        size = math.prod(sample_shape)
        known = math.prod(s for s in self.target_shape if s != -1)
        if -1 in self.target_shape:
            if size % known:
                raise ValueError(
                    f"Layer '{self.name}' cannot reshape an input of sample shape {tuple(sample_shape)} "
                    f"({size} elements) to target shape {self.target_shape}: {size} is not divisible by {known}."
                )
            return tuple(size // known if s == -1 else s for s in self.target_shape)
        if known != size:
            raise ValueError(
                f"Layer '{self.name}' cannot reshape an input of sample shape {tuple(sample_shape)} "
                f"({size} elements) to target shape {self.target_shape} ({known} elements)."
            )
        return self.target_shape

    def call(self, inputs):
        if not inputs.shape:
            raise ValueError(f"Layer '{self.name}' (Reshape) expects inputs with a batch axis, received a 0-d input.")
        return ops.reshape(inputs, (inputs.shape[0],) + self._output_sample_shape(inputs.shape[1:]))

    def compute_output_shape(self, input_shape):
        if None in input_shape[1:]:
            return (input_shape[0],) + tuple(None if s == -1 else s for s in self.target_shape)
        return (input_shape[0],) + self._output_sample_shape(input_shape[1:])

    def get_config(self):
        return {**super().get_config(), "target_shape": tuple(self.target_shape)}
