"""keras.layers.AdaptiveMaxPooling1D."""
from minikeras.layers.pooling.base_adaptive_pooling import _AdaptivePooling

__all__ = ["AdaptiveMaxPooling1D"]


class AdaptiveMaxPooling1D(_AdaptivePooling):
    """Max-pool ``(batch, steps, channels)`` into ``output_size`` steps. Args as AdaptiveAveragePooling1D."""

    rank, mode = 1, "max"
