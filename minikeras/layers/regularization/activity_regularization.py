"""keras.layers.ActivityRegularization."""
from minikeras import regularizers
from minikeras.layers.base import Layer

__all__ = ["ActivityRegularization"]


class ActivityRegularization(Layer):
    """Pass the input through and add ``l1 * sum(|x|) + l2 * sum(x**2)``,
    divided by the batch size (as Keras 3), to the layer's losses.

    Args:
        l1, l2: the penalty factors (default 0.0).
        **kwargs: base Layer arguments.
    """

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(**kwargs)
        self.l1, self.l2 = float(l1), float(l2)
        self._penalty = regularizers.L1L2(l1=self.l1, l2=self.l2)

    def call(self, inputs):
        loss = self._penalty(inputs)
        if inputs.ndim > 0 and inputs.shape[0] > 0:
            loss = loss * (1.0 / inputs.shape[0])
        self.add_loss(loss)
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "l1": self.l1, "l2": self.l2}
