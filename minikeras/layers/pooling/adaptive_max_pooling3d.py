"""keras.layers.AdaptiveMaxPooling3D."""
from minikeras.layers.pooling.base_adaptive_pooling import _AdaptivePooling

__all__ = ["AdaptiveMaxPooling3D"]


class AdaptiveMaxPooling3D(_AdaptivePooling):
    """Max-pool volumes into ``output_size``. Args as AdaptiveAveragePooling1D."""

    rank, mode = 3, "max"
