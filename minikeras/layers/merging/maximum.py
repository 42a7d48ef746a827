"""keras.layers.Maximum and ``maximum``."""
from minikeras import ops
from minikeras.layers.merging.base_merge import _Merge

__all__ = ["Maximum", "maximum"]


class Maximum(_Merge):
    """Elementwise maximum of the inputs."""

    def _merge_pair(self, a, b):
        return ops.maximum(a, b)


def maximum(inputs, **kwargs):
    """``Maximum(**kwargs)(inputs)``."""
    return Maximum(**kwargs)(inputs)
