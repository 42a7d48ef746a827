"""keras.layers.ReLU."""
from minikeras import activations
from minikeras.layers.activations.elementwise_activation import _ElementwiseActivation, _non_negative
from minikeras.layers.core.dense import _float_input

__all__ = ["ReLU"]


class ReLU(_ElementwiseActivation):
    """Rectified linear unit with Keras's options: ``max_value`` caps the
    output, values below ``threshold`` give ``negative_slope * (x - threshold)``.

    Args:
        max_value: None (no cap) or a non-negative number.
        negative_slope: non-negative slope below the threshold (default 0).
        threshold: non-negative threshold (default 0).
        **kwargs: base Layer arguments.
    """

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value = _non_negative("ReLU", "max_value", max_value, allow_none=True)
        self.negative_slope = _non_negative("ReLU", "negative_slope", negative_slope)
        self.threshold = _non_negative("ReLU", "threshold", threshold)

    def call(self, inputs):
        return activations.relu(_float_input(self, inputs), negative_slope=self.negative_slope,
                                max_value=self.max_value, threshold=self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value, "negative_slope": self.negative_slope,
                "threshold": self.threshold}
