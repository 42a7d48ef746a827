"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter, 2019)."""
from minikeras.optimizers.adam import Adam


class AdamW(Adam):
    """Adam with decoupled weight decay, as in Keras 3.

    Before each Adam step every variable (except those passed to
    ``exclude_from_weight_decay``) shrinks: ``w -= lr * weight_decay * w``.

    Args:
        learning_rate: a float, a LearningRateSchedule or a callable.
        weight_decay: the decay rate (required; default 0.004).
        beta_1, beta_2, epsilon, amsgrad: as in :class:`Adam`.
        **kwargs: the base Optimizer arguments.

    Raises:
        ValueError: when ``weight_decay`` is None.

    Example:
        >>> optimizer = AdamW(learning_rate=1e-3, weight_decay=1e-2)
    """

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="adamw", **kwargs):
        if weight_decay is None:
            raise ValueError("AdamW: argument `weight_decay` must be a float. Received: weight_decay=None")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, amsgrad=amsgrad,
                         name=name, weight_decay=weight_decay, **kwargs)
