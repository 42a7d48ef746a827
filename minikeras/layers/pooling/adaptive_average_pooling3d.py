"""keras.layers.AdaptiveAveragePooling3D."""
from minikeras.layers.pooling.base_adaptive_pooling import _AdaptivePooling

__all__ = ["AdaptiveAveragePooling3D"]


class AdaptiveAveragePooling3D(_AdaptivePooling):
    """Average volumes into ``output_size`` (an int or 3 ints). Args as 1D."""

    rank, mode = 3, "average"
