"""The base of the Adam-family optimizers that take exactly ``beta_1``,
``beta_2`` and ``epsilon`` beside the base arguments (Adamax, Nadam, Lamb):
the checks, the attributes and the get_config entries live here once."""
from minikeras.optimizers._checks import moment_config, set_moment_arguments
from minikeras.optimizers.optimizer import Optimizer


class _MomentOptimizer(Optimizer):
    """A subclass keeps its own Keras signature and defaults and passes them on;
    it builds its slots and implements the update."""

    def __init__(self, learning_rate, beta_1, beta_2, epsilon, name, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        set_moment_arguments(self, beta_1, beta_2, epsilon)

    def get_config(self):
        config = super().get_config()
        config.update(moment_config(self))
        return config
