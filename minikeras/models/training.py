"""Trainer: compile, fit, evaluate, predict and the *_on_batch methods.

The loop speaks to the outside only through callbacks (progress bar,
history, checkpoints, early stopping are all callbacks) and reads
``model.stop_training``.
"""
import contextlib
import functools
import itertools
import warnings

import numpy

from minikeras import backend, random
from minikeras.autograd import Tensor, no_grad
from minikeras.callbacks import CallbackList, History, ProgbarLogger
from minikeras.device import to_host
from minikeras.models.running_logs import LazyLogs
from minikeras.models import prefetch, training_arguments
from minikeras.models.steps import TrainingSteps, flatten_logs
from minikeras.data import data_adapter
from minikeras._support.packing import pack_x_y_sample_weight
from minikeras._support.traceback_utils import filter_traceback

_NO_CONTEXT = contextlib.nullcontext()  # reusable: the run context of a model without a distribution


def _host(value):
    return value.numpy() if isinstance(value, Tensor) else value


def _concatenate(batches):
    if isinstance(batches[0], dict):
        return {key: numpy.concatenate([b[key] for b in batches]) for key in batches[0]}
    if isinstance(batches[0], (list, tuple)):
        return [numpy.concatenate([b[i] for b in batches]) for i in range(len(batches[0]))]
    return numpy.concatenate(batches)


def _executions(batches, steps_per_execution):
    """``(begin, end, group)`` for every ``steps_per_execution`` batches, as
    Keras 3's EpochIterator yields them: batch-level callbacks run once per
    group, told its first step and ``begin + steps_per_execution - 1`` (also
    for a last group that is shorter, as in Keras)."""
    iterator = iter(batches)
    begin = 0
    while True:
        group = list(itertools.islice(iterator, steps_per_execution))
        if not group:
            return
        yield begin, begin + steps_per_execution - 1, group
        begin += steps_per_execution


@contextlib.contextmanager
def _in_runner(runner):
    with runner._run_context():
        try:
            yield
        finally:
            runner._sync_wrapped()


def _in_run_context(method):
    """Run ``method`` inside ``self._run_context()`` (the trainer's hook)."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self._run_context():
            return method(self, *args, **kwargs)

    return run


class Trainer(TrainingSteps):
    """Training methods mixed into Model (the per-batch steps are in steps.py)."""

    def _run_context(self):
        """The context fit, evaluate, predict and the ``*_on_batch`` methods
        run in: a hook for trainers that share the hardware (MirroredModel
        limits the BLAS threads of its CPU replicas here); under a
        distribution, its runner's (and the model is brought up to date
        with the replicas afterwards)."""
        runner = self._distributed_runner()
        if runner is None:
            return _NO_CONTEXT
        return _in_runner(runner)

    def _init_training(self):
        self.train_function = self.test_function = self.predict_function = None
        self.optimizer = None
        self.compiled_loss = None
        self.compiled_metrics = None
        self.loss = None  # what compile() was given, as Keras's Trainer keeps it
        self.stop_training = False
        self.history = None
        self._loss_tracker = None

    # ------------------------------------------------------------ compile
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, weighted_metrics=None,
                run_eagerly=None, steps_per_execution=None, jit_compile=None, auto_scale_loss=True):
        """Configure training, like ``keras.Model.compile``.

        Args:
            optimizer: name or Optimizer instance.
            loss: name, Loss, function; or a list/dict with one per output;
                may be None when the model adds its own (``add_loss``) or
                computes it in a custom ``train_step``.
            metrics: list of names/Metric objects (list/dict per output).
            loss_weights: scalar weights of the outputs' losses.
            auto_scale_loss: under a ``mixed_float16`` policy, wrap the
                optimizer in a LossScaleOptimizer (as Keras).
        """
        from minikeras import metrics as metrics_module
        from minikeras import optimizers

        training_arguments.check_compile(loss_weights, metrics, weighted_metrics, run_eagerly, steps_per_execution,
                                         jit_compile)
        self.optimizer = optimizers.get(optimizer)
        if (auto_scale_loss and self.dtype_policy.name == "mixed_float16" and self.optimizer is not None
                and not isinstance(self.optimizer, optimizers.LossScaleOptimizer)):
            self.optimizer = optimizers.LossScaleOptimizer(self.optimizer, name="loss_scale_optimizer")
        self._compile_args = {"loss": loss, "metrics": metrics, "loss_weights": loss_weights}
        self.steps_per_execution = 1 if steps_per_execution is None else int(steps_per_execution)
        self._set_jit_compile(jit_compile)
        self.train_function = self.test_function = self.predict_function = None  # made anew on first use
        names = self._output_names()
        self.compiled_loss = LossContainer(loss, loss_weights, names)
        if loss is not None:  # Keras keeps the previous one when compile() is given none
            self.loss = loss
        self.compiled_metrics = None
        self._loss_tracker = metrics_module.Mean(name="loss")
        self.compiled_loss.loss_tracker = self._loss_tracker
        if self.built:
            self._make_metrics()
        self.stop_training = False

    def _steps_per_execution(self):
        return getattr(self, "steps_per_execution", 1) or 1

    def _set_jit_compile(self, jit_compile):
        """``jit_compile=True``: on a GPU, each training step runs as one CUDA
        graph after warm-up (models/captured_step.py); on the CPU, or where a
        step cannot be captured (one warning says why), the eager step runs.
        ``None``/``"auto"`` (Keras's default) and False run the eager step."""
        previous = self.__dict__.get("_captured_step")
        if previous is not None:
            previous.release()
        self.jit_compile = jit_compile is True
        self._captured_step = None
        if self.jit_compile:
            from minikeras.models.captured_step import CapturedTrainStep

            self._captured_step = CapturedTrainStep(self)

    def _output_names(self):
        structure = getattr(self, "_outputs_structure", None)
        if isinstance(structure, dict):  # Keras names dict outputs by their keys
            return sorted(structure)
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

    # ----------------------------------------------------------------- fit
    @filter_traceback
    @_in_run_context
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1):
        """Train for ``epochs`` epochs, like ``keras.Model.fit``; returns History."""
        self._check_compiled("fit")
        if self.optimizer is None:
            raise ValueError("fit: the model was compiled without an optimizer (optimizer=None); compile it with "
                             "one, e.g. model.compile(optimizer='adam', loss=...).")
        verbose = training_arguments.check_fit(batch_size, epochs, verbose, shuffle, class_weight, validation_split,
                                               initial_epoch, steps_per_epoch, validation_steps,
                                               validation_batch_size, validation_freq)
        epochs = _capped_epochs(epochs)
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
        callback_list = _callback_list(callbacks, self, verbose, epochs=epochs, steps=data.steps, history=History())
        history = next(c for c in callback_list.callbacks if isinstance(c, History))
        self.stop_training = False
        rng = random.shuffle_rng()  # one stream across fit calls: resumable
        self._initial_epoch = None
        callback_list.on_train_begin()
        # A callback restoring a backup (BackupAndRestore) says where to go on.
        initial_epoch = self._initial_epoch if self._initial_epoch is not None else initial_epoch
        training_logs = {}
        train_function = self.make_train_function()
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callback_list.on_epoch_begin(epoch)
            logs = {}
            step = -1
            batches = prefetch.batches(self, data.batches(rng), training=True)  # GPU: uploads one batch ahead
            for begin, end, group in _executions(batches, self._steps_per_execution()):
                callback_list.on_train_batch_begin(begin)
                result = train_function([pack_x_y_sample_weight(bx, by, bw) for bx, by, bw in group])
                step = end
                # Flattened (read: host syncs on a GPU) only if a callback looks.
                logs = LazyLogs(lambda result=result: flatten_logs(result, sort=True))
                callback_list.on_train_batch_end(end, logs)
                if self.stop_training:
                    break
            ran_out = getattr(data, "ran_out", False)
            if step < 0 and (not ran_out or epoch == initial_epoch):
                # A loss of 0.0 from no batch at all would be made up.
                raise ValueError(f"fit: epoch {epoch + 1} got no data (0 batches); the training data is empty "
                                 "or the generator is exhausted.")
            if ran_out:  # a finite generator ended: Keras warns and stops
                self.stop_training = True
                if not data.batches_seen:
                    break  # no batch this epoch: log no empty epoch
            epoch_logs = dict(logs)
            if validation is not None and (epoch + 1) % validation_freq == 0:
                # The same callbacks see the validation pass (on_test_*), as in Keras.
                val_logs = self._run_evaluation(validation, callback_list)
                epoch_logs.update({f"val_{key}": value for key, value in val_logs.items()})
            callback_list.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break
        callback_list.on_train_end(training_logs)
        return history

    def _validation_source(self, validation_data, batch_size, steps):
        if data_adapter.is_batch_source(validation_data):
            return lambda: data_adapter.SourceData(validation_data, steps)
        if not isinstance(validation_data, tuple) or len(validation_data) not in (2, 3):
            raise ValueError("validation_data must be (x_val, y_val) or (x_val, y_val, sample_weight_val).")
        vx, vy = validation_data[0], validation_data[1]
        vw = validation_data[2] if len(validation_data) == 3 else None
        return lambda: data_adapter.ArrayData(vx, vy, vw, batch_size or 32, False, steps)

    def _run_evaluation(self, make_data, callback_list):
        self.reset_metrics()
        data = make_data()
        callback_list.on_test_begin()
        logs = {}
        step = -1
        test_function = self.make_test_function()
        for begin, step, group in _executions(prefetch.batches(self, data.batches()), self._steps_per_execution()):
            callback_list.on_test_batch_begin(begin)
            result = test_function([pack_x_y_sample_weight(bx, by, bw) for bx, by, bw in group])
            logs = LazyLogs(lambda result=result: flatten_logs(result, sort=True))
            callback_list.on_test_batch_end(step, logs)
        if step < 0:  # no batch: there is no loss to report (not 0.0)
            raise ValueError("evaluate: got no data (0 batches); the evaluation or validation data is empty.")
        logs = dict(logs)
        callback_list.on_test_end(logs)
        return logs

    # ------------------------------------------------------------ evaluate
    @filter_traceback
    @_in_run_context
    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False):
        """Loss and metrics on the data; a scalar, a list (in ``metrics``
        order: loss first), or a dict."""
        self._check_compiled("evaluate")
        verbose = training_arguments.check_evaluate(batch_size, verbose, steps, return_dict)
        data = data_adapter.make_data(x, y, sample_weight, batch_size, False, steps)
        callback_list = _callback_list(callbacks, self, verbose, epochs=1, steps=data.steps)
        logs = self._run_evaluation(lambda: data, callback_list)
        return self._format(logs, return_dict)

    # ------------------------------------------------------------- predict
    @filter_traceback
    @_in_run_context
    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Model outputs for ``x`` as NumPy arrays (a list for several outputs)."""
        verbose = training_arguments.check_predict(batch_size, verbose, steps)
        data = data_adapter.make_data(x, None, None, batch_size, False, steps)
        callback_list = _callback_list(callbacks, self, verbose, epochs=1, steps=data.steps)
        callback_list.on_predict_begin()
        outputs = []
        predict_function = self.make_predict_function()
        with no_grad():
            for begin, end, group in _executions(prefetch.batches(self, data.batches()), self._steps_per_execution()):
                callback_list.on_predict_batch_begin(begin)
                outputs.extend(_map_host(result)
                               for result in predict_function([pack_x_y_sample_weight(bx) for bx, _, _ in group]))
                group_outputs = outputs[-1] if len(group) == 1 else _concatenate(outputs[-len(group):])
                callback_list.on_predict_batch_end(end, {"outputs": group_outputs})
        callback_list.on_predict_end()
        if not outputs:
            raise ValueError("predict() got no data: the input is empty.")
        return _concatenate(outputs)

    # ------------------------------------------------------------ on_batch
    @filter_traceback
    @_in_run_context
    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True,
                       return_dict=False):
        """One optimizer step on one batch; returns loss (and metrics)."""
        self._check_compiled("train_on_batch")
        if class_weight is not None:
            sample_weight = _class_weights_to_sample_weights(class_weight, y, sample_weight)
        if reset_metrics:
            self.reset_metrics()
        logs = flatten_logs(self.make_train_function()([_batch(x, y, sample_weight)]))
        return self._format(logs, return_dict)

    @filter_traceback
    @_in_run_context
    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True, return_dict=False):
        """Loss (and metrics) on one batch, without training."""
        self._check_compiled("test_on_batch")
        if reset_metrics:
            self.reset_metrics()
        logs = flatten_logs(self.make_test_function()([_batch(x, y, sample_weight)]))
        return self._format(logs, return_dict)

    @filter_traceback
    @_in_run_context
    def predict_on_batch(self, x):
        """Model outputs for one batch as NumPy arrays."""
        (result,) = self.make_predict_function()([_batch(x)])
        return _map_host(result)

    def _flat_metric_order(self):
        """Keras 3's order of evaluate's list: the loss, the compiled
        metrics of a single-output model, each output's loss in the order
        the outputs were declared, then other tracked metrics (the rest,
        e.g. the per-output metrics of a multi-output model, follow sorted)."""
        order = []
        for metric in self.metrics:
            if metric is self.compiled_metrics:
                if len(self.compiled_metrics.output_names) == 1:
                    order += [sub.name for sub in metric.metrics]
            elif any(metric is tracker for tracker in self.compiled_loss.metrics):
                continue  # placed below, in declared output order
            else:
                order.append(metric.name)
            if metric is self._loss_tracker and self.compiled_loss is not None:
                structure = getattr(self, "_outputs_structure", None)
                declared = list(structure) if isinstance(structure, dict) else self.compiled_loss.output_names
                names = {tracker.name for tracker in self.compiled_loss.metrics}
                order += [f"{name}_loss" for name in declared if f"{name}_loss" in names]
        return order

    def _format(self, logs, return_dict):
        """Logs as a dict (sorted keys, as Keras), or their values in
        ``metrics`` order: the loss first, then the compiled metrics."""
        if return_dict:
            return _sorted(logs)
        order = self._flat_metric_order()
        values = [logs[key] for key in order if key in logs] + [logs[key] for key in sorted(logs)
                                                               if key not in order]
        return values[0] if len(values) == 1 else values


def _batch(x, y=None, sample_weight=None):
    """One batch given to a ``*_on_batch`` method, packed with its arrays
    converted at the boundary (array-likes, lists), as fit's batches are."""
    if y is None and sample_weight is None:  # predict_on_batch's
        return pack_x_y_sample_weight(data_adapter.as_arrays(x))

    def convert(value):
        return None if value is None else data_adapter.as_arrays(value)

    return pack_x_y_sample_weight(convert(x), convert(y), convert(sample_weight))


def _sorted(logs):
    """Logs with sorted keys: the order Keras's History and callbacks show."""
    return {key: logs[key] for key in sorted(logs)}


def _map_host(result):
    if isinstance(result, dict):
        return {key: _host(value) for key, value in result.items()}
    if isinstance(result, (list, tuple)):
        return [_host(value) for value in result]
    return _host(result)


def _capped_epochs(epochs):
    """``epochs`` under ``config.set_max_epochs``'s cap (with Keras's warning)."""
    from minikeras.backend import run_limits

    cap = run_limits.max_epochs()
    if cap and cap < epochs:
        warnings.warn(f"Limiting epochs to {cap}", stacklevel=3)
        return cap
    return epochs


def _callback_list(callbacks, model, verbose, epochs, steps, history=None):
    """The user's callbacks, then History (fit) and the progress bar, with
    Keras's params ``{"verbose", "epochs", "steps"}``. As in Keras, a History
    or ProgbarLogger the user passes is used instead of a new one."""
    callbacks = list(callbacks or [])
    if history is not None and not any(isinstance(c, History) for c in callbacks):
        callbacks.append(history)
    if verbose and not any(isinstance(c, ProgbarLogger) for c in callbacks):
        callbacks.append(ProgbarLogger())
    callback_list = CallbackList(callbacks, model=model)
    callback_list.set_params({"verbose": verbose, "epochs": epochs, "steps": steps})
    return callback_list


def _class_weights_to_sample_weights(class_weight, y, sample_weight):
    y = data_adapter.as_arrays(y)  # labels as nested lists or another library's array: one array
    if isinstance(y, (list, tuple, dict)):
        raise ValueError("class_weight is only supported for models with a single output.")
    labels = numpy.asarray(to_host(_host(y)) if backend.is_array(y) else _host(y))
    if labels.ndim > 1 and labels.shape[-1] > 1:
        labels = labels.argmax(axis=-1)
    labels = labels.reshape(len(labels), -1)[:, 0].astype(numpy.int64)
    weights = numpy.ones(len(labels), dtype=numpy.float32)
    for cls, weight in class_weight.items():
        weights[labels == int(cls)] = weight
    if sample_weight is not None:
        weights = weights * numpy.asarray(to_host(data_adapter.as_arrays(sample_weight)), dtype=numpy.float32)
    return weights


from minikeras.models.compile_utils import LossContainer, MetricsContainer  # noqa: E402
