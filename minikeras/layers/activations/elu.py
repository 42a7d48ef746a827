"""keras.layers.ELU."""
import numbers

from minikeras import ops
from minikeras.layers.activations.elementwise_activation import _ElementwiseActivation
from minikeras.layers.core.dense import _float_input

__all__ = ["ELU"]


class ELU(_ElementwiseActivation):
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise.

    Args:
        alpha: the scale of the negative part (default 1.0).
        **kwargs: base Layer arguments.
    """

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
            raise TypeError(f"ELU: alpha must be a number, received alpha={alpha!r}.")
        self.alpha = float(alpha)

    def call(self, inputs):
        return ops.elu(_float_input(self, inputs), alpha=self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}
