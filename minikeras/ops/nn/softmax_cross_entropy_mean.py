"""The mean sparse softmax cross-entropy of a batch, as one op.

Keras's default loss for classifiers, ``SparseCategoricalCrossentropy(from_logits=True)``
with ``reduction="sum_over_batch_size"`` and no sample weights, is the per-sample
cross-entropy averaged. As two ops it costs five kernel launches on a GPU per training
step (the per-row loss, the mean, the backward pass's seed of ones, the mean's
backward and the per-row backward); as this one op it costs one: the forward kernel
writes the mean loss and, when the logits need a gradient, ``(softmax - one_hot) / rows``
(the gradient of the mean), and backward returns that array as it is when the loss is
the root of ``backward()`` (``takes_unit_gradient``: the engine passes no seed of ones),
or scaled by the incoming gradient otherwise (a loss weight, a loss scale).

The losses decide when to use it (``Loss._fused_mean``); the per-row op and the mean
stay the general path.
"""
import numpy

from minikeras import kernels
from minikeras.autograd import Function
from minikeras.kernels.reductions import MEAN_MAX_ROWS
from minikeras.ops.nn.softmax import _check_labels

FUSED_DTYPES = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


class SparseSoftmaxCrossEntropyMean(Function):
    """``mean(-log_softmax(logits)[label])`` over the rows of 2-D logits.

    Args:
        labels_checked: the caller checked the label range already (or
            deferred the check): no device round trip for it here.
    """

    takes_unit_gradient = True  # backward(None) means a gradient of one (engine.backward's root)

    def __init__(self, labels_checked=False):
        self.labels_checked = labels_checked

    def forward(self, logits, labels):
        if labels.dtype != numpy.int64:
            labels = labels.astype(numpy.int64)  # Keras accepts float class ids
        if not self.labels_checked:
            _check_labels(self.device, labels, logits.shape[-1])
        needs_grad = self.needs_input_grad[0]
        loss, grad_logits = kernels.get("sparse_softmax_cross_entropy_mean", self.device)(logits, labels, needs_grad)
        if needs_grad:
            self.save_for_backward(grad_logits)
        return loss

    def backward(self, grad):
        (grad_logits,) = self.saved
        if grad is None:
            return grad_logits, None
        return grad_logits * grad.astype(grad_logits.dtype, copy=False), None


def fusable(logits, labels):
    """Whether ``sparse_softmax_cross_entropy_mean`` takes these arguments:
    2-D float32/float64 logits (rows, classes) with at most ``MEAN_MAX_ROWS``
    rows (one block of threads loops over them) and one label per row."""
    shape = tuple(logits.shape)
    return (len(shape) == 2 and 0 < shape[0] <= MEAN_MAX_ROWS and shape[1] > 0
            and numpy.dtype(logits.dtype) in FUSED_DTYPES and tuple(labels.shape) == shape[:1])


def sparse_softmax_cross_entropy_mean(logits, labels, labels_checked=False):
    """The mean over the rows of ``sparse_softmax_cross_entropy(logits, labels)``, as one op.

    Args:
        logits: a Tensor (rows, classes) that ``fusable`` accepts.
        labels: a Tensor of ``rows`` integer (or float) class ids.
        labels_checked: the label range was checked by the caller.

    Returns:
        A 0-d Tensor of the logits' dtype.
    """
    if not fusable(logits, labels):
        raise ValueError(f"sparse_softmax_cross_entropy_mean: expected 2-D float32/float64 logits of at most "
                         f"{MEAN_MAX_ROWS} rows and one label per row, received logits {tuple(logits.shape)} "
                         f"{logits.dtype} and labels {tuple(labels.shape)}.")
    return SparseSoftmaxCrossEntropyMean(labels_checked).apply(logits, labels)
