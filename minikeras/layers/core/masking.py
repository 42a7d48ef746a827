"""Masking: mark the timesteps whose features all equal ``mask_value`` as
padding, for the layers downstream that read masks (RNNs, Softmax,
attention, GlobalAveragePooling1D)."""
import numbers

from minikeras import ops
from minikeras.layers.base import Layer
from minikeras.layers.keras_mask import set_keras_mask

__all__ = ["Masking"]


class Masking(Layer):
    """Skip timesteps that are padding.

    A timestep ``inputs[b, t]`` is masked (mask False) when every feature
    equals ``mask_value``; the output is the input with masked timesteps
    set to 0, and carries the ``(batch, timesteps)`` mask.

    Args:
        mask_value: the padding value (default 0.0).
        **kwargs: base Layer arguments.

    Example:
        >>> model = Sequential([Input((None, 8)), Masking(), LSTM(16)])
    """

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(mask_value, bool) or not isinstance(mask_value, numbers.Real):
            raise TypeError(f"Masking: mask_value must be a number, received mask_value={mask_value!r}.")
        self.mask_value = float(mask_value)

    def _keep(self, inputs, keepdims):
        differs = ops.cast(ops.not_equal(inputs, self.mask_value), "float32")
        return ops.greater(ops.max(differs, axis=-1, keepdims=keepdims), 0.0)

    def call(self, inputs):
        keep = self._keep(inputs, keepdims=True)
        outputs = ops.where(keep, inputs, ops.zeros_like(inputs))
        set_keras_mask(outputs, ops.squeeze(keep, axis=-1))
        return outputs

    def compute_mask(self, inputs, previous_mask=None):
        return self._keep(inputs, keepdims=False)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}
