"""The base of the activation layers: elementwise, shape-preserving."""
import numbers

from minikeras.layers.base import Layer


def _non_negative(layer_name, argument, value, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        raise ValueError(f"{layer_name}: {argument} must be a non-negative number, received {argument}={value!r}.")
    return float(value)


class _ElementwiseActivation(Layer):
    """Shape-preserving, mask-preserving activation layer."""

    supports_masking = True

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)
