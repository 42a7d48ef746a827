"""The Loss base class, the function wrapper, and Keras's weighted reduction.

A loss function maps ``(y_true, y_pred)`` to one loss per sample (the mean
over the last axis); a Loss object weights those values with
``sample_weight`` and reduces them to a scalar Tensor, so that
``loss.backward()`` trains the model.
"""
import re

import numpy

from minikeras import ops
from minikeras.autograd import Tensor
from minikeras.autograd.keras_mask import get_keras_mask
from minikeras._support.array_like import foreign_to_array
from minikeras._support.argument_validation import entry_point, validate_tensor_input

EPSILON = 1e-7  # keras.backend.epsilon(): the clipping margin of probabilities
REDUCTIONS = ("sum_over_batch_size", "sum", "none", None, "mean", "mean_with_sample_weight")


def _snake_case(name):
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def standardize_reduction(reduction):
    """Check ``reduction`` against the Keras names and return it."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"Invalid reduction {reduction!r}; expected one of {list(REDUCTIONS)}.")
    return reduction


# ----------------------------------------------------------- input handling
def as_prediction(y_pred):
    """``y_pred`` as a floating Tensor (arrays and lists are wrapped; integer
    data becomes float32). float16/bfloat16 predictions (a mixed-precision
    model's outputs) are cast to float32 as well: losses are computed in
    float32, as Keras does (float64 stays float64 for gradient checks)."""
    if not isinstance(y_pred, Tensor):
        y_pred = Tensor(y_pred)
    if y_pred.dtype.kind not in "fc" or y_pred.dtype.itemsize == 2:
        y_pred = ops.cast(y_pred, "float32")
    return y_pred


def as_target(y_true, like, dtype=None):
    """``y_true`` as a Tensor of ``like``'s dtype on ``like``'s device.

    Labels are constants, so arrays are converted once here instead of in
    every op that reads them; a Tensor that requires grad (e.g. a teacher's
    output) stays in the graph.
    """
    dtype = numpy.dtype(dtype or like.dtype)
    if isinstance(y_true, Tensor):
        if y_true.dtype == dtype:
            return y_true
        if y_true.requires_grad:
            return ops.cast(y_true, dtype)
        return ops.cast(y_true, dtype)
    return Tensor(y_true, dtype=dtype, device=like.device)


def matched_shapes(first_shape, second_shape, expand_rank_1=True):
    """Keras's ``squeeze_or_expand_to_same_rank`` on shapes.

    When the ranks differ by one and the longer shape ends in 1, that axis is
    squeezed, or, when the other shape has rank 1, the other gets a trailing
    1 instead: ``(N,)`` labels meet ``(N, 1)`` predictions.
    """
    first, second = tuple(first_shape), tuple(second_shape)
    if len(first) == len(second) + 1 and first[-1] == 1:
        if len(second) == 1 and expand_rank_1:
            second = second + (1,)
        else:
            first = first[:-1]
    elif len(second) == len(first) + 1 and second[-1] == 1:
        if len(first) == 1 and expand_rank_1:
            first = first + (1,)
        else:
            second = second[:-1]
    return first, second


def reshaped(tensor, shape):
    """``tensor`` with ``shape`` (no op recorded when it already has it)."""
    return tensor if tensor.shape == tuple(shape) else ops.reshape(tensor, shape)


def check_same_shape(name, y_true, y_pred, received=None):
    """Raise ValueError naming the loss and both shapes when they differ.

    ``received``: the (y_true, y_pred) shapes as the caller gave them, to
    name in the message when they were rank-matched since.
    """
    if tuple(y_true.shape) != tuple(y_pred.shape):
        true_shape, pred_shape = received or (y_true.shape, y_pred.shape)
        raise ValueError(
            f"{name}: y_true and y_pred must have the same shape, received y_true shape "
            f"{tuple(true_shape)} and y_pred shape {tuple(pred_shape)}."
        )


def prepare(name, y_true, y_pred):
    """Convert and rank-match a (labels, predictions) pair, checking shapes.

    Returns:
        ``(y_true, y_pred)`` as Tensors of one dtype and equal shape.
    """
    y_pred = as_prediction(y_pred)
    y_true = as_target(y_true, y_pred)
    received = (y_true.shape, y_pred.shape)
    true_shape, pred_shape = matched_shapes(*received)
    y_true, y_pred = reshaped(y_true, true_shape), reshaped(y_pred, pred_shape)
    check_same_shape(name, y_true, y_pred, received)
    return y_true, y_pred


# ---------------------------------------------------------------- reduction
def _inverse_total(weights, factor):
    """``1 / (sum(weights) * factor)``, 0 for a zero total, as a device
    array (a constant: sample weights get no gradient)."""
    device = weights.device
    xp = device.xp
    with device.activate():
        total = weights.data.sum() * factor
        safe = xp.where(total != 0, total, 1.0)
        return xp.where(total != 0, 1.0 / safe, 0.0).astype(weights.dtype)


def _with_keras_mask(mask, y_pred, values):
    """``mask`` and-ed with the mask a layer attached to ``y_pred`` (e.g. a
    sequence output after Embedding(mask_zero=True)), as Keras 3 does: padded
    timesteps then count as absent. A mask that does not match the per-sample
    losses' shape is ignored."""
    from minikeras.layers.keras_mask import get_keras_mask

    keras_mask = get_keras_mask(y_pred) if isinstance(y_pred, Tensor) else None
    if keras_mask is None or tuple(keras_mask.shape) != tuple(values.shape):
        return mask
    device = values.device
    with device.activate():
        keras_mask = device.asarray(keras_mask.data).astype(bool)
        return keras_mask if mask is None else device.xp.logical_and(device.asarray(mask), keras_mask)


def _has_keras_mask(y_pred):
    return isinstance(y_pred, Tensor) and get_keras_mask(y_pred) is not None


def reduce_weighted_values(values, sample_weight=None, mask=None, reduction="sum_over_batch_size"):
    """Weight per-sample losses and reduce them as Keras 3 does.

    ``"sum_over_batch_size"`` (and ``"mean"``) is ``sum(w * loss) / n``,
    where ``n`` is the number of loss values (not the sum of the weights);
    ``"mean_with_sample_weight"`` divides by ``sum(w)``; ``"sum"`` sums;
    ``"none"``/None returns the weighted values.

    Args:
        values: per-sample losses (a Tensor).
        sample_weight: None, or weights of the values' shape, of their
            leading axes (``(N,)`` for ``(N, T)`` losses), or broadcastable.
        mask: None or a boolean array of the values' shape; masked-out
            values count as absent (the mean is over the valid ones).
        reduction: one of the Keras reduction names.

    Returns:
        A scalar Tensor (or the weighted values for ``"none"``).
    """
    reduction = standardize_reduction(reduction)
    weights = None
    if mask is not None:
        device = values.device
        xp = device.xp
        with device.activate():
            mask = device.asarray(mask).astype(bool)
            if reduction in ("mean", "sum_over_batch_size"):
                # Valid entries get total/valid, so that dividing by the total
                # count averages over the valid entries only (on the device:
                # no host read in the training step).
                valid = mask.sum()
                scale = xp.where(valid > 0, mask.size / xp.maximum(valid, 1), 0.0)
                mask_weight = mask.astype(values.dtype) * scale.astype(values.dtype)
            else:
                mask_weight = mask.astype(values.dtype)
        weights = Tensor(mask_weight, device=values.device)
    if sample_weight is not None:
        sample_weight = as_target(sample_weight, values)
        if weights is not None:
            sample_weight = _weight_like(sample_weight, weights) * weights
        weights = sample_weight
    if weights is not None:
        values, weights = _matched_weights(values, weights)
        values = values * weights
    if reduction in (None, "none") or values.shape in ((), (0,)):
        return values
    if reduction == "sum":
        return ops.sum(values)
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        return ops.sum(values) * _inverse_total(weights, values.size / weights.size)
    if weights is None:
        return ops.mean(values)
    return ops.sum(values) * (1.0 / values.size)


def _weight_like(weight, values):
    """``weight`` reshaped so that it broadcasts against ``values``."""
    _, weight_shape = matched_shapes(values.shape, weight.shape)
    weight = reshaped(weight, weight_shape)
    if weight.ndim < len(values.shape) and tuple(weight.shape) == tuple(values.shape[: weight.ndim]):
        # Per-sample weights for losses with more axes (e.g. (N, T) for
        # sequences): weigh every value of a sample alike.
        weight = reshaped(weight, tuple(weight.shape) + (1,) * (len(values.shape) - weight.ndim))
    return weight


def _matched_weights(values, weights):
    values_shape, weights_shape = matched_shapes(values.shape, weights.shape)
    values, weights = reshaped(values, values_shape), reshaped(weights, weights_shape)
    weights = _weight_like(weights, values)
    try:
        numpy.broadcast_shapes(tuple(values.shape), tuple(weights.shape))
    except ValueError:
        raise ValueError(
            f"sample_weight of shape {tuple(weights.shape)} does not broadcast to the per-sample losses of "
            f"shape {tuple(values.shape)}; expected shape {tuple(values.shape)[:1]} or broadcastable."
        ) from None
    return values, weights


# --------------------------------------------------------------- base classes
class Loss:
    """Base class of losses: ``loss(y_true, y_pred, sample_weight=None)``
    returns a scalar Tensor.

    Subclasses implement ``call(y_true, y_pred)`` returning per-sample losses.

    Args:
        name: the loss name (default: the class name in snake_case).
        reduction: ``"sum_over_batch_size"`` (default), ``"sum"``,
            ``"mean"``, ``"mean_with_sample_weight"``, ``"none"`` or None.
        dtype: kept for Keras compatibility; the loss takes y_pred's dtype.

    Example:
        >>> class MyMeanSquaredError(Loss):
        ...     def call(self, y_true, y_pred):
        ...         return ops.mean(ops.square(y_pred - y_true), axis=-1)
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self.dtype = dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        """The reduced, weighted loss of a batch (a scalar Tensor)."""
        owner = type(self).__name__
        y_true, y_pred = foreign_to_array(y_true), foreign_to_array(y_pred)  # a tf.data batch, a torch tensor
        sample_weight = foreign_to_array(sample_weight)
        with entry_point(owner, self.name):
            _validate_inputs(owner, y_true, y_pred, sample_weight)
            if sample_weight is None and self.reduction in ("sum_over_batch_size", "mean") \
                    and not _has_keras_mask(y_pred):
                mean = self._fused_mean(y_true, y_pred)
                if mean is not None:
                    return mean
            values, mask = self.call_with_mask(y_true, y_pred)
            mask = _with_keras_mask(mask, y_pred, values)
            return reduce_weighted_values(values, sample_weight, mask, self.reduction)

    def call(self, y_true, y_pred):  # pragma: no cover - abstract
        """Per-sample losses (a Tensor)."""
        raise NotImplementedError

    def _fused_mean(self, y_true, y_pred):
        """The mean of the per-sample losses as one fused op, or None (the
        default) to take ``call`` and the mean. Asked only when the reduction
        is a plain mean (no sample weights, no Keras mask); a loss whose
        mean is one kernel on a GPU (SparseCategoricalCrossentropy from
        logits) answers it, and must give what ``call`` and the mean give."""
        return None

    def call_with_mask(self, y_true, y_pred):
        """Per-sample losses and a validity mask (None: all valid)."""
        return self.call(y_true, y_pred), None

    def get_config(self):
        """The constructor arguments, for ``from_config``."""
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        """A new loss built from ``get_config()``'s output."""
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r} reduction={self.reduction!r}>"


class LossFunctionWrapper(Loss):
    """A Loss from a per-sample function ``fn(y_true, y_pred, **kwargs)``.

    Args:
        fn: the function. Library functions check and match shapes
            themselves; for other functions, ``y_true`` is converted to a
            Tensor of y_pred's dtype and ranks are matched first.
        reduction: see ``Loss``.
        name: the loss name (default: ``fn.__name__``).
        dtype: kept for Keras compatibility.
        **kwargs: passed on to ``fn``.
    """

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", None), reduction=reduction, dtype=dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        """``fn(y_true, y_pred, **kwargs)``."""
        if not getattr(self.fn, "_checks_inputs", False):
            y_pred = as_prediction(y_pred)
            y_true = as_target(y_true, y_pred)
            true_shape, pred_shape = matched_shapes(y_true.shape, y_pred.shape)
            y_true, y_pred = reshaped(y_true, true_shape), reshaped(y_pred, pred_shape)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        """Name, reduction, the function and its keyword arguments."""
        return {**super().get_config(), "fn": self.fn, **self._fn_kwargs}

    def __repr__(self):
        return f"<LossFunctionWrapper({getattr(self.fn, '__name__', self.fn)}, kwargs={self._fn_kwargs})>"


def checks_inputs(fn):
    """Mark a library loss function as converting and checking its own inputs."""
    fn._checks_inputs = True
    return fn


def _validate_inputs(owner, y_true, y_pred, sample_weight):
    """Numeric targets and predictions (never None, objects or strings)."""
    validate_tensor_input(owner, y_true, allow_complex=False, allow_sequence=True)
    validate_tensor_input(owner, y_pred, allow_complex=False, allow_sequence=True)
    if sample_weight is not None:
        validate_tensor_input(owner, sample_weight, allow_complex=False, allow_sequence=True)
