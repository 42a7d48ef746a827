"""Circle loss (Sun et al., 2020): a metric-learning loss on unit-norm embeddings.

Every pair of samples in the batch (or of a sample and a reference set)
has a cosine distance; same-label pairs are pulled together and others
pushed apart, each weighted by how far it is from its optimum, so the pairs
that are furthest off dominate the gradient.
"""
import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.losses.loss import LossFunctionWrapper, as_prediction, checks_inputs

# Stands in for -inf in the masked log-sum-exps: a row with no pair then
# gives softplus(-1e30) = 0 with a zero gradient, where -inf would give NaN.
_MASKED = -1e30


def _labels(name, labels, device):
    data = labels.data if isinstance(labels, Tensor) else labels
    with device.activate():
        array = device.asarray(data)
        if array.ndim == 2 and array.shape[1] == 1:
            array = array[:, 0]
        if array.ndim != 1:
            raise ValueError(f"{name}: labels must have shape (batch,) or (batch, 1), received shape "
                             f"{tuple(array.shape)}.")
        return array.astype(numpy.int64)


def _pair_masks(device, query_labels, key_labels, remove_diagonal):
    """Same-label (positive) and other-label (negative) pair masks, as arrays."""
    xp = device.xp
    with device.activate():
        positive = query_labels[:, None] == key_labels[None, :]
        negative = ~positive
        if remove_diagonal:
            positive = positive & ~xp.eye(query_labels.shape[0], key_labels.shape[0], dtype=bool)
        return positive, negative


def circle_with_mask(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80,
                     margin=0.4):
    """``circle`` and the mask Keras attaches to it (``loss > 0``), which
    makes the Loss class average over the samples with a non-zero loss."""
    name = "circle"
    y_pred = as_prediction(y_pred)
    if y_pred.ndim != 2:
        raise ValueError(f"{name}: y_pred must be embeddings of shape (batch, dim), received shape "
                         f"{tuple(y_pred.shape)}.")
    device = y_pred.device
    labels = _labels(name, y_true, device)
    if labels.shape[0] != y_pred.shape[0]:
        raise ValueError(f"{name}: {labels.shape[0]} labels for {y_pred.shape[0]} embeddings.")
    ref_embeddings = y_pred if ref_embeddings is None else as_prediction(ref_embeddings)
    ref_labels = labels if ref_labels is None else _labels(name, ref_labels, device)
    distances = ops.maximum(1.0 - ops.matmul(y_pred, ops.transpose(ref_embeddings)), 0.0)
    positive, negative = _pair_masks(device, labels, ref_labels, remove_diagonal)
    with device.activate():
        positive_weight = Tensor(positive.astype(distances.dtype), device=device)
        negative_weight = Tensor(negative.astype(distances.dtype), device=device)
    positive_scale = ops.maximum((margin + distances) * positive_weight, 0.0)
    negative_scale = ops.maximum((1.0 + margin - distances) * negative_weight, 0.0)
    positive_terms = -gamma * positive_scale * (margin - distances)
    negative_terms = gamma * negative_scale * ((1.0 - margin) - distances)
    positive_loss = ops.logsumexp(ops.where(Tensor(positive, device=device), positive_terms, _MASKED), axis=1)
    negative_loss = ops.logsumexp(ops.where(Tensor(negative, device=device), negative_terms, _MASKED), axis=1)
    losses = ops.softplus(positive_loss + negative_loss)
    with device.activate():
        mask = losses.data > 0
    return losses, mask


@checks_inputs
def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True, gamma=80, margin=0.4):
    """Per-sample Circle loss.

    Args:
        y_true: integer labels ``(batch,)``.
        y_pred: L2-normalized embeddings ``(batch, dim)``.
        ref_labels: labels of the reference embeddings (default ``y_true``).
        ref_embeddings: L2-normalized reference embeddings (default ``y_pred``).
        remove_diagonal: leave each sample's pair with itself out of the positives.
        gamma: the scale of the similarities (default 80).
        margin: the relaxation margin (default 0.4).

    Returns:
        A Tensor of shape ``(batch,)``.
    """
    return circle_with_mask(y_true, y_pred, ref_labels, ref_embeddings, remove_diagonal, gamma, margin)[0]


class Circle(LossFunctionWrapper):
    """Circle loss between integer labels and unit-norm embeddings, averaged
    over the samples with a non-zero loss (Keras's mask).

    Args:
        gamma: default 80.0.
        margin: default 0.4.
        remove_diagonal: default True.
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"circle"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, gamma=80.0, margin=0.4, remove_diagonal=True, reduction="sum_over_batch_size", name="circle",
                 dtype=None):
        super().__init__(circle, reduction=reduction, name=name, dtype=dtype, gamma=gamma, margin=margin,
                         remove_diagonal=remove_diagonal)
        self.gamma, self.margin, self.remove_diagonal = gamma, margin, remove_diagonal

    def call_with_mask(self, y_true, y_pred):
        """Per-sample losses and the ``loss > 0`` mask."""
        return circle_with_mask(y_true, y_pred, remove_diagonal=self.remove_diagonal, gamma=self.gamma,
                                margin=self.margin)

    def get_config(self):
        """Name, reduction, gamma, margin and remove_diagonal."""
        return {"name": self.name, "reduction": self.reduction, "gamma": self.gamma, "margin": self.margin,
                "remove_diagonal": self.remove_diagonal}
