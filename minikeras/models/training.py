"""Trainer: compile, fit, evaluate, predict and the *_on_batch methods.

The loop speaks to the outside only through callbacks (progress bar,
history, checkpoints, early stopping are all callbacks) and reads
``model.stop_training``.
"""
import copy
import math

import numpy

from minikeras import backend, random
from minikeras.autograd import Tensor, no_grad
from minikeras.callbacks import CallbackList, History, ProgbarLogger
from minikeras.layers.base import weight_constraint
from minikeras.layers.normalization import moving_statistics
from minikeras.utils import data_adapter
from minikeras.utils.argument_validation import is_int, validate_int


def _host(value):
    return value.numpy() if isinstance(value, Tensor) else value


def _concatenate(batches):
    if isinstance(batches[0], (list, tuple)):
        return [numpy.concatenate([b[i] for b in batches]) for i in range(len(batches[0]))]
    return numpy.concatenate(batches)


class Trainer:
    """Training methods mixed into Model."""

    def _init_training(self):
        self.optimizer = None
        self.compiled_loss = None
        self.compiled_metrics = None
        self.stop_training = False
        self.history = None
        self._loss_total = 0.0
        self._loss_count = 0

    # ------------------------------------------------------------ compile
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, weighted_metrics=None,
                run_eagerly=None, steps_per_execution=None, jit_compile=None):
        """Configure training, like ``keras.Model.compile``.

        Args:
            optimizer: name or Optimizer instance.
            loss: name, Loss, function; or a list/dict with one per output.
            metrics: list of names/Metric objects (list/dict per output).
            loss_weights: scalar weights of the outputs' losses.
        """
        from minikeras import optimizers

        self.optimizer = optimizers.get(optimizer)
        self._compile_args = {"loss": loss, "metrics": metrics, "loss_weights": loss_weights}
        names = self._output_names()
        self.compiled_loss = LossContainer(loss, loss_weights, names)
        self.compiled_metrics = None
        if self.built:
            self._make_metrics()
        self.stop_training = False

    def _output_names(self):
        outputs = getattr(self, "outputs", None)
        if outputs:
            return [t.node.layer.name for t in outputs]
        return ["output"]

    def _make_metrics(self):
        outputs = getattr(self, "outputs", None) or []
        shapes = [t.shape for t in outputs] or [None]
        self.compiled_metrics = MetricsContainer(
            self._compile_args["metrics"], self.compiled_loss.losses, self._output_names(), shapes
        )

    def _check_compiled(self, what):
        if self.compiled_loss is None:
            raise RuntimeError(f"You must compile the model before calling {what}(): model.compile(optimizer, loss).")

    @property
    def metrics_names(self):
        names = ["loss"]
        if self.compiled_metrics is not None:
            names += [m.name for m in self.compiled_metrics.metrics]
        return names

    @property
    def metrics(self):
        return [] if self.compiled_metrics is None else self.compiled_metrics.metrics

    # --------------------------------------------------------------- steps
    def _forward_loss(self, x, y, sample_weight, training):
        self._clear_call_losses()
        y_pred = self(x, training=training)
        if self.compiled_metrics is None:
            self._make_metrics()
        loss, parts = self.compiled_loss(y, y_pred, sample_weight)
        regularization = self.losses
        for term in regularization:
            loss = loss + term
        return loss, y_pred, parts

    def train_step(self, x, y, sample_weight=None):
        """One optimizer step on a batch; returns the batch's loss value.

        When the step fails (e.g. ResourceExhaustedError), the gradients are
        released, the BatchNormalization moving statistics the forward pass
        updated are put back, and an optimizer first built by this step is
        put back unbuilt, so that a retry (e.g. with a smaller batch) starts
        from the model as it was.
        """
        moving = moving_statistics(self)
        trainable = []
        unbuilt = None if self.optimizer.built else _unbuilt_state(self.optimizer)
        try:
            loss, y_pred, parts = self._forward_loss(x, y, sample_weight, training=True)
            # Collected after the forward pass: a model that builds lazily has
            # its weights only now.
            trainable = self.trainable_weights
            for weight in trainable:
                weight.grad = None
            loss.backward()
            self.optimizer.apply_gradients([(w.grad, w) for w in trainable])
        except BaseException:
            for weight in trainable:
                weight.grad = None
            for weight, value in moving:
                weight.data[...] = value
            if unbuilt is not None:  # a half-built optimizer (slots missing) would fail every later step
                self.optimizer.__dict__.clear()
                self.optimizer.__dict__.update(unbuilt)
            raise
        for weight in trainable:
            constraint = weight_constraint(weight)
            if constraint is not None:
                weight.data[...] = constraint(weight.data)
            weight.grad = None
        self._update_logs(loss, y, y_pred, sample_weight, parts)
        return loss

    def test_step(self, x, y, sample_weight=None):
        """Loss and metrics on a batch, without training."""
        with no_grad():
            loss, y_pred, parts = self._forward_loss(x, y, sample_weight, training=False)
        self._update_logs(loss, y, y_pred, sample_weight, parts)
        return loss

    def _update_logs(self, loss, y, y_pred, sample_weight, parts):
        value = float(loss.item())
        count = _batch_size(y_pred)
        self._loss_total += value * count
        self._loss_count += count
        for name, part in parts.items():
            total, seen = self._part_totals.get(name, (0.0, 0))
            self._part_totals[name] = (total + float(part.item()) * count, seen + count)
        self.compiled_metrics.update(y, y_pred, sample_weight)

    def _reset_logs(self):
        self._loss_total, self._loss_count = 0.0, 0
        self._part_totals = {}
        if self.compiled_metrics is not None:
            self.compiled_metrics.reset()

    def _logs(self):
        logs = {"loss": self._loss_total / max(self._loss_count, 1)}
        for name, (total, seen) in self._part_totals.items():
            logs[name] = total / max(seen, 1)
        if self.compiled_metrics is not None:
            logs.update(self.compiled_metrics.results())
        return logs

    # ----------------------------------------------------------------- fit
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1):
        """Train for ``epochs`` epochs, like ``keras.Model.fit``; returns History."""
        self._check_compiled("fit")
        verbose = 1 if verbose == "auto" else int(verbose)
        if not is_int(epochs) or epochs < 0:
            raise ValueError(f"epochs must be a non-negative int, received {epochs!r}.")
        if steps_per_epoch is not None:
            validate_int("fit", "steps_per_epoch", steps_per_epoch, minimum=1)
        if validation_split and data_adapter.is_batch_source(x):
            raise ValueError("validation_split is only supported for array inputs, not generators or Sequences.")
        if class_weight is not None and y is not None:
            sample_weight = _class_weights_to_sample_weights(class_weight, y, sample_weight)
        if validation_split:
            train, valid = data_adapter.ArrayData(x, y, sample_weight, 32 if batch_size is None else batch_size).split(
                validation_split)
            x, y, sample_weight = train
            validation_data = valid
        data = data_adapter.make_data(x, y, sample_weight, batch_size, shuffle, steps_per_epoch)
        validation = None
        if validation_data is not None:
            validation = self._validation_source(validation_data, validation_batch_size or batch_size,
                                                 validation_steps)
        history = History()
        callback_list = CallbackList(list(callbacks or []), model=self)
        if verbose:
            callback_list.append(ProgbarLogger(verbose))
        callback_list.append(history)
        callback_list.set_params({"epochs": epochs, "steps": data.steps, "verbose": verbose, "mode": "fit"})
        self.stop_training = False
        rng = random.shuffle_rng()  # one stream across fit calls: resumable
        callback_list.on_train_begin()
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self._reset_logs()
            callback_list.on_epoch_begin(epoch)
            step = -1
            for step, (bx, by, bw) in enumerate(data.batches(rng)):
                callback_list.on_train_batch_begin(step)
                self.train_step(bx, by, bw)
                logs = self._logs()
                if not math.isfinite(logs["loss"]):
                    logs = dict(logs)
                callback_list.on_train_batch_end(step, logs)
                if self.stop_training:
                    break
            if step < 0:  # a loss of 0.0 from no batch at all would be made up
                raise ValueError(f"fit: epoch {epoch + 1} got no data (0 batches); the training data is empty "
                                 "or the generator is exhausted.")
            logs = self._logs()
            if validation is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self._run_evaluation(validation, CallbackList([]), verbose=0)
                logs.update({f"val_{key}": value for key, value in val_logs.items()})
            callback_list.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        callback_list.on_train_end(logs)
        return history

    def _validation_source(self, validation_data, batch_size, steps):
        if data_adapter.is_batch_source(validation_data):
            return lambda: data_adapter.SourceData(validation_data, steps)
        if not isinstance(validation_data, tuple) or len(validation_data) not in (2, 3):
            raise ValueError("validation_data must be (x_val, y_val) or (x_val, y_val, sample_weight_val).")
        vx, vy = validation_data[0], validation_data[1]
        vw = validation_data[2] if len(validation_data) == 3 else None
        return lambda: data_adapter.ArrayData(vx, vy, vw, batch_size or 32, False, steps)

    def _run_evaluation(self, make_data, callback_list, verbose):
        self._reset_logs()
        data = make_data()
        callback_list.on_test_begin()
        step = -1
        for step, (bx, by, bw) in enumerate(data.batches()):
            callback_list.on_test_batch_begin(step)
            self.test_step(bx, by, bw)
            callback_list.on_test_batch_end(step, self._logs())
        if step < 0:  # no batch: there is no loss to report (not 0.0)
            raise ValueError("evaluate: got no data (0 batches); the evaluation or validation data is empty.")
        logs = self._logs()
        callback_list.on_test_end(logs)
        return logs

    # ------------------------------------------------------------ evaluate
    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False):
        """Loss and metrics on the data; a scalar, a list, or a dict."""
        self._check_compiled("evaluate")
        if steps is not None:
            validate_int("evaluate", "steps", steps, minimum=1)
        verbose = 1 if verbose == "auto" else int(verbose)
        callback_list = CallbackList(list(callbacks or []), model=self)
        if verbose:
            callback_list.append(ProgbarLogger(verbose))

        def make():
            return data_adapter.make_data(x, y, sample_weight, batch_size, False, steps)

        first = make()
        callback_list.set_params({"steps": first.steps, "verbose": verbose, "mode": "evaluate"})
        logs = self._run_evaluation(lambda: first, callback_list, verbose)
        if return_dict:
            return logs
        values = [logs[name] for name in logs]
        return values[0] if len(values) == 1 else values

    # ------------------------------------------------------------- predict
    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Model outputs for ``x`` as NumPy arrays (a list for several outputs)."""
        verbose = 0 if verbose == "auto" else int(verbose)
        data = data_adapter.make_data(x, None, None, batch_size, False, steps)
        callback_list = CallbackList(list(callbacks or []), model=self)
        if verbose:
            callback_list.append(ProgbarLogger(verbose))
        callback_list.set_params({"steps": data.steps, "verbose": verbose, "mode": "predict"})
        callback_list.on_predict_begin()
        outputs = []
        with no_grad():
            for step, (bx, _, _) in enumerate(data.batches()):
                callback_list.on_predict_batch_begin(step)
                result = self(bx, training=False)
                outputs.append([_host(r) for r in result] if isinstance(result, (list, tuple)) else _host(result))
                callback_list.on_predict_batch_end(step, {"outputs": outputs[-1]})
        callback_list.on_predict_end()
        if not outputs:
            raise ValueError("predict() got no data: the input is empty.")
        return _concatenate(outputs)

    # ------------------------------------------------------------ on_batch
    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True,
                       return_dict=False):
        """One optimizer step on one batch; returns loss (and metrics)."""
        self._check_compiled("train_on_batch")
        if class_weight is not None:
            sample_weight = _class_weights_to_sample_weights(class_weight, y, sample_weight)
        if reset_metrics or not hasattr(self, "_part_totals"):
            self._reset_logs()
        self.train_step(x, y, sample_weight)
        return self._format(self._logs(), return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True, return_dict=False):
        """Loss (and metrics) on one batch, without training."""
        self._check_compiled("test_on_batch")
        if reset_metrics or not hasattr(self, "_part_totals"):
            self._reset_logs()
        self.test_step(x, y, sample_weight)
        return self._format(self._logs(), return_dict)

    def predict_on_batch(self, x):
        """Model outputs for one batch as NumPy arrays."""
        with no_grad():
            result = self(x, training=False)
        return [_host(r) for r in result] if isinstance(result, (list, tuple)) else _host(result)

    @staticmethod
    def _format(logs, return_dict):
        if return_dict:
            return logs
        values = list(logs.values())
        return values[0] if len(values) == 1 else values


def _unbuilt_state(optimizer):
    """A copy of an optimizer's attributes before its first update (no
    arrays yet), to put back if that update fails half way; the learning
    rate (possibly a user's schedule or callable) is shared, not copied.
    None when the attributes cannot be copied."""
    rate = vars(optimizer).get("_learning_rate")
    try:
        return copy.deepcopy(vars(optimizer), {id(rate): rate})
    except Exception:  # an attribute of a custom optimizer that cannot be copied
        return None


def _batch_size(y_pred):
    first = y_pred[0] if isinstance(y_pred, (list, tuple)) else y_pred
    return int(first.shape[0]) if first.shape else 1


def _class_weights_to_sample_weights(class_weight, y, sample_weight):
    if isinstance(y, (list, tuple, dict)):
        raise ValueError("class_weight is only supported for models with a single output.")
    labels = numpy.asarray(backend.to_numpy(_host(y)))
    if labels.ndim > 1 and labels.shape[-1] > 1:
        labels = labels.argmax(axis=-1)
    labels = labels.reshape(len(labels), -1)[:, 0].astype(numpy.int64)
    weights = numpy.ones(len(labels), dtype=numpy.float32)
    for cls, weight in class_weight.items():
        weights[labels == int(cls)] = weight
    if sample_weight is not None:
        weights = weights * numpy.asarray(sample_weight, dtype=numpy.float32)
    return weights


from minikeras.models.compile_utils import LossContainer, MetricsContainer  # noqa: E402
