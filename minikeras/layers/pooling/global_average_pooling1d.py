"""keras.layers.GlobalAveragePooling1D (GlobalAvgPool1D)."""
from minikeras import ops
from minikeras.layers.base import _LAYER_CLASSES
from minikeras.layers.pooling.base_global_pooling import _GlobalPooling

__all__ = ["GlobalAveragePooling1D"]


class GlobalAveragePooling1D(_GlobalPooling):
    """Mean over the steps of ``(batch, steps, channels)``. Args as
    GlobalAveragePooling2D."""

    rank = 1
    _reduce_name = "mean"

    def call(self, inputs, mask=None):
        """With a ``(batch, steps)`` mask (e.g. from Embedding(mask_zero=True)),
        the mean runs over the kept steps only, as in Keras."""
        if mask is None:
            return super().call(inputs)
        weights = ops.expand_dims(ops.cast(mask, inputs.dtype), -1)
        total = ops.sum(inputs * weights, axis=1, keepdims=self.keepdims)
        return total / ops.sum(weights, axis=1, keepdims=self.keepdims)


# Keras's short alias, also known by name when loading a Keras config.
GlobalAvgPool1D = GlobalAveragePooling1D
_LAYER_CLASSES.setdefault("GlobalAvgPool1D", GlobalAvgPool1D)
