"""keras.layers.Subtract and ``subtract``."""
from minikeras import ops
from minikeras.layers.merging.base_merge import _Merge

__all__ = ["Subtract", "subtract"]


class Subtract(_Merge):
    """``Subtract()([a, b]) = a - b`` (exactly two inputs)."""

    _min_inputs = _max_inputs = 2

    def _merge_pair(self, a, b):
        return ops.subtract(a, b)


def subtract(inputs, **kwargs):
    """``Subtract(**kwargs)(inputs)``."""
    return Subtract(**kwargs)(inputs)
