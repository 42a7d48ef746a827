"""The per-batch steps of the Trainer, overridable as in Keras 3.

``fit`` calls ``train_step(data)``, ``evaluate`` calls ``test_step(data)``
and ``predict`` calls ``predict_step(data)``, where ``data`` is the batch as
Keras gives it: ``(x, y)``, ``(x, y, sample_weight)`` or ``(x,)``. A
subclass may override any of them; ``train_step``/``test_step`` return a
dict of logs (values may be Tensors, numbers or, as for
``compile_metrics``, dicts of them).

Gradients in a custom step: either

    with minikeras.GradientTape() as tape:
        loss = self.compute_loss(x, y, self(x, training=True))
    grads = tape.gradient(loss, self.trainable_variables)

or ``loss.backward()`` and then each ``variable.grad``.
"""
import inspect
import weakref
import warnings

import numpy

from minikeras import replica_context
from minikeras.autograd import Tensor, no_grad
from minikeras.autograd.function import _QUIET_ACTIVATION, quiet_activation
from minikeras.device import placement_device
from minikeras.layers.state_updates import collect_state_updates
from minikeras.models.running_logs import LazyLogs, detached
from minikeras._support import deferred_checks
from minikeras._support.packing import unpack_x_y_sample_weight
from minikeras._support.nest import flatten, pack_sequence_as


def log_value(value):
    """A log entry as a Python float (Tensors and arrays of one element)."""
    if isinstance(value, Tensor):
        return float(value.item())
    if hasattr(value, "item") and getattr(value, "size", 1) == 1:
        return float(value.item())
    return float(value) if isinstance(value, (int, float, numpy.number)) else value


_ACCEPTS_TRAINING = weakref.WeakKeyDictionary()  # function -> bool: inspect.signature costs ~50 us a step


def _accepts_training(method):
    """Whether ``method`` takes ``training=`` (by name or ``**kwargs``);
    remembered per function (a bound method's ``__func__``)."""
    function = getattr(method, "__func__", method)
    try:
        return _ACCEPTS_TRAINING[function]
    except (KeyError, TypeError):  # TypeError: not weakly referenceable, asked every time
        pass
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    accepts = any(p.name == "training" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    try:
        _ACCEPTS_TRAINING[function] = accepts
    except TypeError:
        pass
    return accepts


def flatten_logs(logs, sort=False):
    """``{"loss": t, "compile_metrics": {"acc": a}}`` -> ``{"loss": 0.3, "acc": 0.9}``.

    With ``sort``, keys are sorted at every level before flattening: the
    order Keras's History and callbacks show (its TensorFlow and JAX
    backends sort the step's output dict), so a custom step returning
    ``{"loss": ..., "compile_metrics": {"mae": ...}}`` logs ``mae`` first.
    """
    flat = {}
    for key in (sorted(logs or {}) if sort else (logs or {})):
        value = logs[key]
        if isinstance(value, dict):
            flat.update(flatten_logs(value, sort))
        else:
            flat[key] = log_value(value)
    return flat


class TrainingSteps:
    """train/test/predict steps, losses and metrics, mixed into the Trainer."""

    # ------------------------------------------------------------- metrics
    @property
    def metrics(self):
        """The metrics fit reports, in Keras 3's order: the loss tracker,
        the compiled metrics (one object, ``compile_metrics``), per-output
        loss trackers, then Metric objects held as model attributes."""
        found = []
        if getattr(self, "_loss_tracker", None) is not None:
            found.append(self._loss_tracker)
            if self.compiled_metrics is None and self.built and getattr(self, "_compile_args", None):
                self._make_metrics()
            if self.compiled_metrics is not None:
                found.append(self.compiled_metrics)
            found.extend(self.compiled_loss.metrics)
        from minikeras.metrics import Metric

        for value in vars(self).values():
            candidates = value if isinstance(value, (list, tuple)) else [value]
            for item in candidates:
                if isinstance(item, Metric) and not any(item is seen for seen in found):
                    found.append(item)
        return found

    @property
    def metrics_names(self):
        """``[metric.name for metric in self.metrics]``, as Keras 3."""
        return [metric.name for metric in self.metrics]

    def reset_metrics(self):
        """Reset the state of every metric in ``self.metrics`` (every
        replica's, under a distribution)."""
        runner = self._distributed_runner()
        if runner is not None:
            runner.reset_metrics()
            return
        self.reset_own_metrics()

    def reset_own_metrics(self):
        """Reset this model's own metrics (and drop the logs waiting)."""
        self._pending_logs = []
        for metric in self.metrics:
            metric.reset_state()

    def get_metrics_result(self):
        """The current results of ``self.metrics`` as a flat dict of floats
        (every replica's combined, under a distribution)."""
        runner = self._distributed_runner()
        if runner is not None:
            return runner.get_metrics_result()
        self.flush_logs()
        logs = {}
        for metric in self.metrics:
            result = metric.result()
            if isinstance(result, dict):
                logs.update(flatten_logs(result))
            else:
                logs[metric.name] = log_value(result)
        return logs

    # --------------------------------------------------------------- losses
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss of ``y_pred`` against ``y`` plus the model's own
        losses (``add_loss`` and weight regularizers), as one scalar Tensor.

        Raises:
            ValueError: no loss was compiled and the model adds none.
        """
        total, parts = None, {}
        if self.compiled_loss is not None and self.compiled_loss.has_losses:
            total, parts = self.compiled_loss.compute(y, y_pred, sample_weight)
        for term in self.losses:
            total = term if total is None else total + term
        if total is None:
            raise ValueError("No loss to compute: pass loss= to compile(), or add losses with add_loss().")
        self.__dict__["_loss_parts"] = parts
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Update the compiled metrics with one batch; returns the logs dict
        (``get_metrics_result()``), as Keras 3."""
        if self.compiled_metrics is None:
            self._make_metrics()
        self.compiled_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def _forward_loss(self, x, y, sample_weight, training):
        self._clear_call_losses()
        self.__dict__["_loss_parts"] = {}  # (a dict: none of __setattr__'s layer bookkeeping)
        # Range checks of ids (an Embedding's) and labels wait for the logs'
        # read (_support/deferred_checks.py): no host sync inside the step.
        with deferred_checks.deferring():
            y_pred = self(x, training=training)
            if self.compiled_metrics is None:
                self._make_metrics()
            if _accepts_training(self.compute_loss):
                loss = self.compute_loss(x, y, y_pred, sample_weight, training=training)
            else:  # an override with Keras 3's older signature (no ``training``), as Keras allows
                loss = self.compute_loss(x, y, y_pred, sample_weight)
        return loss, y_pred, self._loss_parts

    # ---------------------------------------------------------------- steps
    def train_step(self, data):
        """One optimizer step on the batch ``data``; returns the logs dict.

        Keras 3's default step: forward, ``compute_loss``, gradients,
        ``optimizer.apply_gradients`` (which applies weight constraints).
        Every way of running the model runs this method (fit,
        ``train_on_batch``, each replica of a MirroredModel or of a
        multi-worker model), so an override is honoured everywhere; only
        ``jit_compile=True`` on a GPU replays the built-in step from a CUDA
        graph instead (an override then runs eagerly, with one warning).

        When the step fails (e.g. ResourceExhaustedError), the gradients are
        released, layer state (BatchNormalization's moving statistics) is
        left as it was (state_updates.py), and an optimizer first built by
        this step is put back unbuilt, so that a retry (e.g. with a smaller
        batch) starts from the model as it was.
        """
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        loss, y_pred, parts = self.optimizer_step(x, y, sample_weight)
        self.record_step_logs(loss, y, y_pred, sample_weight, parts)
        return LazyLogs(self.get_metrics_result)  # read (host syncs on a GPU) only if looked at

    def test_step(self, data):
        """Loss and metrics on the batch ``data``; returns the logs dict."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with no_grad():
            loss, y_pred, parts = self._forward_loss(x, y, sample_weight, training=False)
        self.record_step_logs(loss, y, y_pred, sample_weight, parts)
        return LazyLogs(self.get_metrics_result)

    def predict_step(self, data):
        """The model's outputs for the batch ``data``."""
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    def optimizer_step(self, x, y, sample_weight=None):
        """Forward, loss, backward and optimizer update of one batch (the
        built-in ``train_step`` without its logs, and what ``jit_compile``
        captures); returns ``(loss, y_pred, loss parts)``."""
        trainable = []
        try:
            loss, y_pred, parts = self._forward_loss(x, y, sample_weight, training=True)
            # Collected after the forward pass: a model that builds lazily has
            # its weights only now.
            trainable = self.trainable_weights
            if not trainable:
                self._warn_no_trainable_weights()
            else:
                for weight in trainable:
                    weight.grad = None
                self.optimizer.scale_loss(loss).backward()  # LossScaleOptimizer: scaled; others: as is
                self.optimizer.apply_gradients([(w.grad, w) for w in trainable])
        finally:
            for weight in trainable:
                weight.grad = None
        return loss, y_pred, parts

    # ------------------------------------------------------ step functions
    def _distributed_runner(self):
        """The data-parallel trainer of this model under the distribution
        ``keras.distribution.set_distribution`` set (a MirroredModel), or
        None: no distribution, one device, or this is a replica's own step."""
        distribution = replica_context.active_distribution()
        if distribution is None or replica_context.current() is not None:
            return None
        return distribution.runner_for(self)

    def make_train_function(self, force=False):
        """The callable ``fit`` and ``train_on_batch`` run (Keras's name),
        made once per compile: given the batches of one execution
        (``steps_per_execution`` of them) it runs ``train_step`` on each,
        inside the step's state-update scope, and returns the last logs;
        with ``jit_compile=True`` on a GPU it replays the built-in step from
        CUDA graphs (models/captured_step.py). Under a distribution it is
        the distribution's (every replica runs ``train_step``)."""
        runner = self._distributed_runner()
        if runner is not None:
            return runner.make_train_function(force)
        if self.__dict__.get("train_function") is None or force:
            captured = self.__dict__.get("_captured_step")
            self.train_function = _TrainFunction(self) if captured is None else captured
        return self.train_function

    def make_test_function(self, force=False):
        """The callable ``evaluate`` and ``test_on_batch`` run: ``test_step``
        on each batch of one execution; returns the last logs."""
        runner = self._distributed_runner()
        if runner is not None:
            return runner.make_test_function(force)
        if self.__dict__.get("test_function") is None or force:
            self.test_function = _TestFunction(self)
        return self.test_function

    def make_predict_function(self, force=False):
        """The callable ``predict`` and ``predict_on_batch`` run:
        ``predict_step`` on each batch of one execution, without gradients;
        returns the list of their outputs."""
        runner = self._distributed_runner()
        if runner is not None:
            return runner.make_predict_function(force)
        if self.__dict__.get("predict_function") is None or force:
            self.predict_function = _PredictFunction(self)
        return self.predict_function

    def run_train_step(self, data):
        """``train_step(data)`` as every step runs: layer state changes
        kept only if it succeeds (and, on a replica, combined across
        replicas: layers/state_updates.py), inside one activation of the
        device the batch is on (a GPU's: every op's own activation inside
        it then enters none of CuPy's contexts, device/gpu.py; the CPU's
        does nothing and is not entered)."""
        first = data[0] if type(data) is tuple and data else data
        device = first.device if isinstance(first, Tensor) else placement_device()  # a host batch goes there
        quiet = _QUIET_ACTIVATION.get(type(device))
        if quiet is None:
            quiet = quiet_activation(device)
        with collect_state_updates():
            if quiet:
                return self.train_step(data)
            with device.activation_context:
                return self.train_step(data)

    def _warn_no_trainable_weights(self):
        if not getattr(self, "_warned_no_trainable", False):
            self._warned_no_trainable = True
            warnings.warn(f"The model '{self.name}' does not have any trainable weights: fit() only computes "
                          "the loss and metrics.", UserWarning, stacklevel=4)

    def record_step_logs(self, loss, y, y_pred, sample_weight, parts):
        """Hand one step's loss, predictions and loss parts to the logs.

        No host read in the step: the loss trackers and compiled metrics get
        the batch when the logs are next read (progress bar redraw, epoch
        end), in order (``get_metrics_result``)."""
        context = replica_context.current()
        if context is not None and context.keeps_company:
            return  # a replica with no rows of this batch counts nothing (distribute/replica_step.py)
        pending = self.__dict__.setdefault("_pending_logs", [])
        pending.append((detached(loss), y, detached(y_pred), sample_weight,
                        {name: detached(part) for name, part in parts.items()}))
        if len(pending) >= _PENDING_BATCHES:
            self.flush_logs()

    def flush_logs(self):
        """Bring every step whose logs wait (``record_step_logs``) into the
        trackers and metrics now (the host reads, in one transfer)."""
        deferred_checks.run()
        pending = self.__dict__.get("_pending_logs") or []
        self.__dict__["_pending_logs"] = []  # (__setattr__'s bookkeeping is for layers: never one here)
        # Every pending loss, loss part and prediction (the metrics run on the
        # host) in one transfer per device and dtype: on a GPU one host sync
        # per read of the logs, not one per batch, part and prediction.
        leaves = [[entry[0], *entry[4].values(), *_leaves(entry[2])] for entry in pending]
        host = iter(_to_host([leaf for batch in leaves for leaf in batch]))
        for entry, batch in zip(pending, leaves):
            values = [next(host) for _ in batch]
            parts = {name: float(value) for name, value in zip(entry[4], values[1:])} if entry[4] else {}
            y_pred = values[1] if type(entry[2]) is Tensor and not parts else \
                pack_sequence_as(entry[2], values[1 + len(parts):])
            self._apply_logs(float(values[0]), entry[1], y_pred, entry[3], parts)

    def _apply_logs(self, loss, y, y_pred, sample_weight, parts):
        """Update the loss trackers (with the host values of the batch's loss
        and loss parts) and the compiled metrics."""
        count = _batch_size(y_pred)
        self._loss_tracker.update_state(loss, sample_weight=count)
        trackers = {tracker.name: tracker for tracker in self.compiled_loss.metrics}
        for name, part in parts.items():
            tracker = trackers.get(name)
            if tracker is not None:
                tracker.update_state(part, sample_weight=count)
        if self.compiled_metrics is None:
            self._make_metrics()
        self.compiled_metrics.update_state(y, y_pred, sample_weight)


# Batches whose log updates may wait for the next read of the logs: a bound
# on the device memory their predictions hold (one read per this many steps
# at most when nobody looks at the logs).
_PENDING_BATCHES = 64


def _to_host(values):
    """NumPy copies of ``values`` (Tensors; anything else passes as is), in
    order, read in one transfer per device and dtype: the arrays of each
    are raveled into one, copied, and split back into their shapes."""
    result = list(values)
    groups = {}
    for index, value in enumerate(values):
        if isinstance(value, Tensor):
            groups.setdefault((value.device, value.data.dtype), []).append(index)
    for (device, _), indices in groups.items():
        arrays = [values[i].data for i in indices]
        if len(arrays) == 1 or device.kind == "cpu":  # a host array is read where it is: nothing to join
            host = [device.to_host(array) for array in arrays]
        else:
            with device.activate():
                joined = device.xp.concatenate([array.reshape(-1) for array in arrays])
            flat = device.to_host(joined)
            ends = numpy.cumsum([array.size for array in arrays])
            host = [part.reshape(array.shape) for part, array in zip(numpy.split(flat, ends[:-1]), arrays)]
        for index, array in zip(indices, host):
            result[index] = array
    return result


def _leaves(structure):
    """``flatten(structure)``, without its walk for one Tensor."""
    return (structure,) if type(structure) is Tensor else flatten(structure)


def _batch_size(y_pred):
    first = y_pred if type(y_pred) is numpy.ndarray else flatten(y_pred)[0]
    return int(first.shape[0]) if getattr(first, "shape", None) else 1


class _TrainFunction:
    """``make_train_function``'s callable (an object, not a closure, so that
    a copied model's points at the copy)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, batches):
        logs = None
        for data in batches:
            logs = self.model.run_train_step(data)
        return logs


class _TestFunction(_TrainFunction):
    def __call__(self, batches):
        logs = None
        for data in batches:
            logs = self.model.test_step(data)
        return logs


class _PredictFunction(_TrainFunction):
    def __call__(self, batches):
        with no_grad():
            return [self.model.predict_step(data) for data in batches]
