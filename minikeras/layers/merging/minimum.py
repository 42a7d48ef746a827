"""keras.layers.Minimum and ``minimum``."""
from minikeras import ops
from minikeras.layers.merging.base_merge import _Merge

__all__ = ["Minimum", "minimum"]


class Minimum(_Merge):
    """Elementwise minimum of the inputs."""

    def _merge_pair(self, a, b):
        return ops.minimum(a, b)


def minimum(inputs, **kwargs):
    """``Minimum(**kwargs)(inputs)``."""
    return Minimum(**kwargs)(inputs)
