"""The CTC loss for sequence labelling without alignment (speech, handwriting)."""
import numpy

from minikeras.autograd import Tensor
from minikeras.losses.loss import LossFunctionWrapper, as_prediction, checks_inputs
from minikeras.ops.nn.ctc import _ctc_loss


@checks_inputs
def ctc(y_true, y_pred):
    """Per-sample CTC loss, as ``keras.losses.ctc``.

    Args:
        y_true: integer labels ``(batch, max_length)``, padded with 0; class
            0 is the blank and is never a label.
        y_pred: logits ``(batch, time, classes)`` (not softmaxed); every
            time step is used.

    Returns:
        A Tensor of shape ``(batch,)``: ``-log p(labels | logits)``.

    Raises:
        ValueError: ``y_true`` not of rank 2 or ``y_pred`` not of rank 3.
    """
    y_pred = as_prediction(y_pred)
    device = y_pred.device
    data = y_true.data if isinstance(y_true, Tensor) else y_true
    with device.activate():
        labels = device.asarray(data)
        if labels.ndim != 2:
            raise ValueError("Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` in "
                             f"integer format. Received: y_true.shape={tuple(labels.shape)}")
        if y_pred.ndim != 3:
            raise ValueError("Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, "
                             f"num_classes)`. Received: y_pred.shape={tuple(y_pred.shape)}")
        labels = labels.astype(numpy.int64)
        label_length = (labels != 0).sum(axis=-1)
        logit_length = device.xp.full((y_pred.shape[0],), y_pred.shape[1], dtype=numpy.int64)
    return _ctc_loss(labels, y_pred, label_length, logit_length, mask_index=0)


class CTC(LossFunctionWrapper):
    """The CTC loss (``ctc``), reduced.

    Args:
        reduction: see ``Loss`` (default ``"sum_over_batch_size"``).
        name: default ``"ctc"``.
        dtype: kept for Keras compatibility.
    """

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(ctc, reduction=reduction, name=name, dtype=dtype)

    def get_config(self):
        """Name and reduction."""
        return {"name": self.name, "reduction": self.reduction}
