"""keras.layers.LeakyReLU."""
import warnings

from minikeras import ops
from minikeras.layers.activations.elementwise_activation import _ElementwiseActivation, _non_negative
from minikeras.layers.core.dense import _float_input

__all__ = ["LeakyReLU"]


class LeakyReLU(_ElementwiseActivation):
    """``x`` for ``x > 0``, ``negative_slope * x`` otherwise.

    Args:
        negative_slope: non-negative slope, 0.3 by default (Keras's layer
            default; the ``leaky_relu`` function defaults to 0.2).
        **kwargs: base Layer arguments; the deprecated ``alpha`` is read as
            ``negative_slope`` with a warning, as Keras does.
    """

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            negative_slope = kwargs.pop("alpha")
            warnings.warn("LeakyReLU: argument `alpha` is deprecated, use `negative_slope`.", stacklevel=2)
        super().__init__(**kwargs)
        self.negative_slope = _non_negative("LeakyReLU", "negative_slope", negative_slope)

    def call(self, inputs):
        return ops.leaky_relu(_float_input(self, inputs), negative_slope=self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}
