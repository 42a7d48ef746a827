"""Generalized cross-entropy (Zhang & Sabuncu, 2018): ``(1 - p ** q) / q``.

It sits between cross-entropy (q -> 0) and mean absolute error (q = 1), and
so is less thrown off by mislabelled samples than cross-entropy is.
"""
import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.losses.loss import LossFunctionWrapper, as_prediction, checks_inputs


def _one_hot(name, y_true, y_pred):
    device = y_pred.device
    data = y_true.data if isinstance(y_true, Tensor) else y_true
    with device.activate():
        labels = device.asarray(data)
        if labels.ndim == y_pred.ndim and labels.shape[-1] == 1:
            labels = labels[..., 0]
        if tuple(labels.shape) != tuple(y_pred.shape[:-1]):
            raise ValueError(f"{name}: y_true must be class ids of shape {tuple(y_pred.shape[:-1])}, received "
                             f"shape {tuple(labels.shape)}.")
        classes = device.xp.arange(y_pred.shape[-1])
        return Tensor((labels.astype(numpy.int64)[..., None] == classes).astype(y_pred.dtype), device=device)


@checks_inputs
def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """Per-sample ``(1 - p ** q) / q``, ``p`` the probability of the true class.

    Args:
        y_true: integer class ids ``(batch,)`` (or ``(batch, 1)``).
        y_pred: class probabilities ``(batch, classes)``.
        q: in (0, 1).

    Returns:
        A Tensor of shape ``(batch,)``.
    """
    name = "categorical_generalized_cross_entropy"
    y_pred = as_prediction(y_pred)
    if y_pred.ndim < 1:
        raise ValueError(f"{name}: y_pred must have a class axis, received shape {tuple(y_pred.shape)}.")
    probability = ops.sum(y_pred * _one_hot(name, y_true, y_pred), axis=-1)
    return (1.0 - ops.power(probability, q)) / q


class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    """Generalized cross-entropy between integer labels and probabilities.

    Args:
        q: the noise parameter in (0, 1) (default 0.5).
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"categorical_generalized_cross_entropy"``.
        dtype: kept for Keras compatibility.

    Raises:
        ValueError: ``q`` outside (0, 1).
    """

    def __init__(self, q=0.5, reduction="sum_over_batch_size", name="categorical_generalized_cross_entropy",
                 dtype=None):
        if not 0 < q < 1:
            raise ValueError(f"CategoricalGeneralizedCrossEntropy: q must be in the interval (0, 1), received {q!r}.")
        super().__init__(categorical_generalized_cross_entropy, reduction=reduction, name=name, dtype=dtype, q=q)
        self.q = q

    def get_config(self):
        """Name, reduction and q."""
        return {"name": self.name, "reduction": self.reduction, "q": self.q}
