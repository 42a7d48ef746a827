"""What ``compile`` sets up: the losses and metrics of each output."""
import numpy

from minikeras.autograd import Tensor
from minikeras._support.argument_validation import validate_number


def _per_output(value, output_names, what):
    """Spread a single value, list or dict over the outputs."""
    count = len(output_names)
    if isinstance(value, dict):
        unknown = [key for key in value if key not in output_names]
        if unknown:
            raise ValueError(f"Unknown output name(s) {unknown} in {what}; the outputs are {output_names}.")
        return [value.get(name) for name in output_names]
    if isinstance(value, (list, tuple)) and count > 1:
        if len(value) != count:
            raise ValueError(f"{what} has {len(value)} entries but the model has {count} outputs.")
        return list(value)
    return [value] * count


def _loss_weights(loss_weights, output_names):
    """One float per output, as Keras reads ``compile(loss_weights=...)``:
    a number for every output, a list with one per output (``[1.0]`` for a
    single output too), or a dict by output name (missing names weigh 1)."""
    if loss_weights is None:
        return [1.0] * len(output_names)
    if isinstance(loss_weights, (list, tuple)) and len(output_names) == 1:
        if len(loss_weights) != 1:
            raise ValueError(f"loss_weights must match the number of losses: the model has 1 output, received "
                             f"{len(loss_weights)} weights {list(loss_weights)!r}.")
        weights = list(loss_weights)
    else:
        weights = _per_output(loss_weights, output_names, "loss_weights")
    return [1.0 if weight is None else validate_number("compile", "loss_weights", weight) for weight in weights]


class LossContainer:
    """The compiled loss: per-output losses, weighted and summed."""

    def __init__(self, loss, loss_weights, output_names):
        from minikeras import losses

        from minikeras.metrics import Mean

        self.output_names = output_names
        self.loss_tracker = None  # the model's "loss" Mean, set by compile()
        self.losses = [_as_loss_object(item) for item in _per_output(loss, output_names, "loss")]
        # Without a loss the model must add its own (add_loss) or compute it in a custom train_step.
        self.has_losses = any(item is not None for item in self.losses)
        self.metrics = [Mean(name=f"{name}_loss") for name, item in zip(output_names, self.losses)
                        if item is not None] if len(output_names) > 1 else []
        self.weights = _loss_weights(loss_weights, output_names)
        self.loss_specs = [loss] if not isinstance(loss, (list, dict)) else loss

    def __call__(self, y_true, y_pred, sample_weight=None, regularization_losses=None):
        """The total loss Tensor, as tf.keras's ``model.compiled_loss(y, y_pred,
        sample_weight, regularization_losses=model.losses)``; like tf.keras,
        it also updates the model's ``loss`` metric (``loss_tracker``)."""
        total = self.compute(y_true, y_pred, sample_weight)[0] if self.has_losses else None
        for term in regularization_losses or []:
            total = term if total is None else total + term
        if total is None:
            raise ValueError("compiled_loss: compile() was given no loss and no regularization losses were passed.")
        if self.loss_tracker is not None:
            first = _predictions(y_pred, self.output_names)[0]
            self.loss_tracker.update_state(float(total.item()), sample_weight=first.shape[0] if first.shape else 1)
        return total

    def compute(self, y_true, y_pred, sample_weight=None):
        """Returns ``(total loss Tensor, {output_name_loss: loss Tensor})``."""
        y_true = _as_list(y_true, self.output_names, "y")
        y_pred = _predictions(y_pred, self.output_names)
        weights = _sample_weights(sample_weight, self.output_names) if sample_weight is not None \
            else [None] * len(y_pred)
        total, parts = None, {}
        for name, loss, weight, target, prediction, sw in zip(
            self.output_names, self.losses, self.weights, y_true, y_pred, weights
        ):
            if loss is None:
                continue
            if target is None:
                raise ValueError(f"No target (y) given for output '{name}'.")
            value = loss(target, prediction, sample_weight=sw)
            if len(self.output_names) > 1:
                parts[f"{name}_loss"] = value
            value = value * weight if weight != 1.0 else value
            total = value if total is None else total + value
        return total, parts


def _predictions(y_pred, output_names):
    """The model's outputs as a list in ``output_names`` order."""
    if isinstance(y_pred, dict):
        missing = [name for name in output_names if name not in y_pred]
        if missing:
            raise ValueError(f"The model's outputs {sorted(y_pred)} lack {missing}, named in compile().")
        return [y_pred[name] for name in output_names]
    return list(y_pred) if isinstance(y_pred, (list, tuple)) else [y_pred]


def _sample_weights(sample_weight, output_names):
    """One sample_weight per output: a single array applies to every
    output, as in Keras; a list or dict gives one per output."""
    if len(output_names) > 1 and not isinstance(sample_weight, (list, tuple, dict)):
        return [sample_weight] * len(output_names)
    return _as_list(sample_weight, output_names, "sample_weight")


def _as_loss_object(identifier):
    """A Loss object (functions are wrapped, as Keras's compile does)."""
    from minikeras import losses

    loss = losses.get(identifier)
    if loss is None or isinstance(loss, losses.Loss):
        return loss
    return losses.LossFunctionWrapper(loss)


def _as_list(value, output_names, what):
    if len(output_names) == 1:
        if isinstance(value, dict) and len(value) == 1:
            return [value.get(output_names[0], next(iter(value.values())))]
        if isinstance(value, (list, tuple)) and len(value) == 1 and not hasattr(value, "shape"):
            return [value[0]]
        return [value]
    if isinstance(value, dict):
        return [value.get(name) for name in output_names]
    if isinstance(value, (list, tuple)) and len(value) == len(output_names):
        return list(value)
    raise ValueError(f"The model has {len(output_names)} outputs; {what} must be a list or dict with one entry each.")


class MetricsContainer:
    """The compiled metrics of every output, updated on host arrays.

    Seen from ``model.metrics`` it is one metric named ``compile_metrics``
    whose ``result()`` is a dict, as in Keras 3.
    """

    name = "compile_metrics"

    def __init__(self, metrics, losses, output_names, output_shapes):
        from minikeras import metrics as metrics_module

        self.output_names = output_names
        self.entries = []  # (output index, metric)
        per_output = _per_output(metrics, output_names, "metrics") if metrics is not None else []
        if metrics is not None and len(output_names) > 1 and isinstance(metrics, (list, tuple)) and \
                not any(isinstance(m, (list, tuple, dict)) for m in metrics) and len(metrics) != len(output_names):
            per_output = [list(metrics)] * len(output_names)
        for index, specs in enumerate(per_output):
            if specs is None:
                continue
            if not isinstance(specs, (list, tuple)):
                specs = [specs]
            for spec in specs:
                metric = metrics_module.get_for_compile(spec, losses[index], output_shapes[index])
                if len(output_names) > 1:
                    metric.name = f"{output_names[index]}_{metric.name}"
                self.entries.append((index, metric))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Update every metric with its output's targets and predictions."""
        if not self.entries:
            return
        y_true = _as_list(y_true, self.output_names, "y")
        y_pred = _predictions(y_pred, self.output_names)
        weights = _sample_weights(sample_weight, self.output_names) if sample_weight is not None \
            else [None] * len(y_pred)
        host_pred = [p.numpy() if isinstance(p, Tensor) else numpy.asarray(p) for p in y_pred]
        for index, metric in self.entries:
            metric.update_state(y_true[index], host_pred[index], sample_weight=weights[index])

    update = update_state

    def reset_state(self):
        """Reset every metric."""
        for _, metric in self.entries:
            metric.reset_state()

    reset = reset_state

    def result(self):
        """``{metric name: value}`` for every compiled metric."""
        return {metric.name: float(metric.result()) for _, metric in self.entries}

    results = result

    @property
    def metrics(self):
        return [metric for _, metric in self.entries]
