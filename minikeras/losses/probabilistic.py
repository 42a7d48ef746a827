"""Distribution losses: Kullback-Leibler divergence and Poisson."""
from minikeras import ops
from minikeras.losses.loss import EPSILON, LossFunctionWrapper, checks_inputs, prepare


@checks_inputs
def kl_divergence(y_true, y_pred):
    """``sum(y_true * log(y_true / y_pred), axis=-1)``, both clipped to ``[1e-7, 1]``.

    Example:
        >>> kl_divergence([[0.5, 0.5]], minikeras.tensor([[0.25, 0.75]])).numpy()
        array([0.14384106], dtype=float32)
    """
    y_true, y_pred = prepare("kl_divergence", y_true, y_pred)
    y_true = ops.clip(y_true, EPSILON, 1.0)
    y_pred = ops.clip(y_pred, EPSILON, 1.0)
    return ops.sum(y_true * ops.log(y_true / y_pred), axis=-1)


@checks_inputs
def poisson(y_true, y_pred):
    """``mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1)``: the negative
    log-likelihood of counts ``y_true`` under rates ``y_pred`` (up to a constant)."""
    y_true, y_pred = prepare("poisson", y_true, y_pred)
    return ops.mean(y_pred - y_true * ops.log(y_pred + EPSILON), axis=-1)


class KLDivergence(LossFunctionWrapper):
    """Kullback-Leibler divergence (``name="kl_divergence"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="kl_divergence", dtype=None):
        super().__init__(kl_divergence, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}


class Poisson(LossFunctionWrapper):
    """Poisson loss (``name="poisson"``)."""

    def __init__(self, reduction="sum_over_batch_size", name="poisson", dtype=None):
        super().__init__(poisson, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}
