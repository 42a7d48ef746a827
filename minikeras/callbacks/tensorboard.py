"""TensorBoard: Keras's callback, writing event files that TensorBoard reads.

The files are written through the ``tensorboard`` package's own event-file
writer and protocol buffers (``pip install tensorboard``, or minikeras's
``tensorboard`` extra); TensorFlow is not needed. What is written follows
Keras 3's callback (``keras/src/callbacks/tensorboard.py``):

- ``log_dir/train``: ``epoch_<name>`` for every training log at step
  ``epoch``, ``epoch_learning_rate``, ``epoch_steps_per_second`` with
  ``write_steps_per_second``; with ``update_freq`` a number of batches (or
  ``"batch"``), ``batch_<name>`` at the global batch count every that many
  batches; weight histograms ``<weight path>/histogram`` every
  ``histogram_freq`` epochs, and with ``write_images`` the weights as
  images ``<weight path>/image`` (``tensorboard_images.py``); the model's JSON (the graph dashboard's
  "conceptual graph") with ``write_graph``.
- ``log_dir/validation``: ``epoch_<name>`` for the ``val_`` logs (prefix
  dropped) and ``evaluation_<name>_vs_iterations`` at the optimizer's step.

Scalars and histograms are summary-v2 tensors, as Keras 3 (``tf.summary``
2) writes them: a 0-d float tensor under the ``scalars`` plugin and a
``[buckets, 3]`` tensor of (left edge, right edge, count) under the
``histograms`` plugin, made by the tensorboard package's own ``scalar_pb``
and ``histogram_pb``; code that reads Keras's logs
(``EventAccumulator(...).Tensors("epoch_loss")``) reads these, and the
TensorBoard server shows them as it shows Keras's. Without the ``tensorboard`` package, the callback says so once and
writes the same scalars as JSON lines (``scalars.jsonl``, see
``ScalarLogger``) so a script still runs and keeps its curves.

Records are written as they come, in the training thread, through the
tensorboard package's ``gfile`` (TensorFlow's when it is installed: remote
log folders too), not by a background writer thread: a write that fails (a
full disk, a lost network mount) fails here, where the callback can keep it
from ending the training. The first such failure warns once and the
callback writes nothing more until the next ``fit``: logs are worth less
than the run they describe.
"""
import itertools
import json
import os
import socket
import time
import warnings

import numpy

from minikeras.backend.dtypes import is_float_dtype
from minikeras.callbacks.callback import Callback
from minikeras.callbacks.tensorboard_images import image_summary_strings, weight_as_images

_HISTOGRAM_BUCKETS = 30  # tf.summary.histogram's default bucket count
_warned_fallback = []
_file_numbers = itertools.count()  # tells apart the event files one process opens in the same second


def _tensorboard_writer_module():
    """``(record_writer, summary_pb2, event_pb2, tensor_pb2)`` from the
    tensorboard package, or None when it is not installed."""
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2
        from tensorboard.plugins.histogram import summary_v2  # noqa: F401  (the v2 summaries are needed too)
        from tensorboard.plugins.scalar import summary_v2 as scalar_v2  # noqa: F401
        from tensorboard.summary.writer import record_writer
    except ImportError:
        return None
    return record_writer, summary_pb2, event_pb2, tensor_pb2


def _is_write_failure(error):
    """True for an error of the file system under the logs: an OSError (the
    tensorboard package's own ``gfile``), or one of TensorFlow's (or its
    stub's) ``OpError`` classes from TensorFlow's ``gfile``."""
    return isinstance(error, OSError) or any(cls.__name__ == "OpError" for cls in type(error).__mro__)


class _EventWriter:
    """One event file (one run folder): scalars, histograms and a text tensor,
    named and framed as TensorBoard's own ``EventFileWriter`` writes them."""

    def __init__(self, folder, modules):
        record_writer, self._summary_pb2, self._event_pb2, self._tensor_pb2 = modules
        from tensorboard.compat import tf  # TensorFlow where installed, else tensorboard's stub
        from tensorboard.compat.proto import tensor_shape_pb2

        self._tensor_shape_pb2 = tensor_shape_pb2
        tf.io.gfile.makedirs(folder)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{next(_file_numbers)}.v2")
        self._file = tf.io.gfile.GFile(os.path.join(folder, name), "wb")
        self._records = record_writer.RecordWriter(self._file)
        self._closed = False
        self._write_event(self._event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2"))
        self.flush()

    def _write_event(self, event):
        self._records.write(event.SerializeToString())

    def _add(self, step, value):
        self._write_summary(step, self._summary_pb2.Summary(value=[value]))

    def _write_summary(self, step, summary):
        self._write_event(self._event_pb2.Event(wall_time=time.time(), step=int(step), summary=summary))

    def scalar(self, tag, value, step):
        from tensorboard.plugins.scalar.summary_v2 import scalar_pb

        self._write_summary(step, scalar_pb(tag, numpy.float32(value)))

    def histogram(self, tag, values, step):
        from tensorboard.plugins.histogram.summary_v2 import histogram_pb

        values = numpy.asarray(values, dtype=numpy.float64).ravel()
        self._write_summary(step, histogram_pb(tag, values[numpy.isfinite(values)], buckets=_HISTOGRAM_BUCKETS))

    def image(self, tag, strings, step):
        """An image summary as ``tf.summary.image`` writes it: the string
        tensor ``[width, height, png, ...]`` under the ``images`` plugin."""
        metadata = self._summary_pb2.SummaryMetadata(
            plugin_data=self._summary_pb2.SummaryMetadata.PluginData(plugin_name="images"))
        shape = self._tensor_shape_pb2.TensorShapeProto(dim=[self._tensor_shape_pb2.TensorShapeProto.Dim(
            size=len(strings))])
        tensor = self._tensor_pb2.TensorProto(dtype=7, tensor_shape=shape, string_val=strings)  # 7: DT_STRING
        self._add(step, self._summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor))

    def keras_model(self, tag, model_json, step):
        """The model's JSON under the ``graph_keras_model`` plugin, which the
        graph dashboard draws (as Keras's ``keras_model_summary`` does)."""
        metadata = self._summary_pb2.SummaryMetadata(
            plugin_data=self._summary_pb2.SummaryMetadata.PluginData(plugin_name="graph_keras_model", content=b"1"))
        tensor = self._tensor_pb2.TensorProto(dtype=7, string_val=[model_json.encode("utf-8")])  # 7: DT_STRING
        self._add(step, self._summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor))

    def flush(self):
        self._records.flush()

    def close(self):
        if not self._closed:
            self._closed = True
            self._records.close()


class _JsonLinesWriter:
    """The fallback without the tensorboard package: one JSON object per
    scalar in ``<folder>/scalars.jsonl`` (``{"step", "wall_time", tag: value}``)."""

    def __init__(self, folder):
        os.makedirs(folder, exist_ok=True)
        self._path = os.path.join(folder, "scalars.jsonl")

    def scalar(self, tag, value, step):
        with open(self._path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"step": int(step), "wall_time": time.time(), tag: float(value)}) + "\n")

    def histogram(self, tag, values, step):
        pass  # the JSON-lines fallback keeps scalars only (said in the warning)

    def image(self, tag, strings, step):
        pass

    def keras_model(self, tag, model_json, step):
        pass

    def flush(self):
        pass

    def close(self):
        pass


def _as_float(value):
    """A log value as a Python float, or None when it is not a scalar."""
    try:
        array = numpy.asarray(value.numpy() if hasattr(value, "numpy") else value)
    except (TypeError, ValueError):
        return None
    if array.size != 1 or (array.dtype.kind not in "biu" and not is_float_dtype(array.dtype)):  # bfloat16 too
        return None
    return float(array.reshape(()))


class TensorBoard(Callback):
    """Write training curves, weight histograms and the model graph for
    TensorBoard (``tensorboard --logdir <log_dir>``); see the module docstring.

    Args:
        log_dir: the folder of the logs (``train/`` and ``validation/`` runs
            are made under it).
        histogram_freq: every how many epochs to write weight histograms
            (0: never).
        write_graph: write the model's JSON for the graph dashboard.
        write_images: with ``histogram_freq``, also write the weights as
            images (``<weight path>/image``), as Keras does.
        write_steps_per_second: also write ``epoch_steps_per_second`` and
            ``batch_steps_per_second``.
        update_freq: ``"epoch"``, ``"batch"`` (every batch) or an int: write
            ``batch_<name>`` every that many training batches.
        profile_batch: must be 0 (profiling belongs to TensorFlow/JAX's
            profilers; Keras refuses it on its torch and numpy backends too).
        embeddings_freq: every how many epochs to save the weights as
            ``train/keras_embedding.ckpt-<epoch>.weights.h5``, as Keras does.
        embeddings_metadata: accepted for Keras compatibility (the projector
            config is not written).

    Example:
        >>> model.fit(x, y, epochs=5, callbacks=[TensorBoard("logs", histogram_freq=1)])  # doctest: +SKIP
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        update_freq = 1 if update_freq == "batch" else update_freq
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(f"TensorBoard update_freq must be 'epoch', 'batch' or a positive int, received "
                             f"{update_freq!r}.")
        if profile_batch:
            raise ValueError("Profiling is not available with the minikeras backend (as with Keras's torch and "
                             f"numpy backends). Received: profile_batch={profile_batch!r} (must be 0)")
        if not isinstance(histogram_freq, int) or histogram_freq < 0:
            raise ValueError(f"TensorBoard histogram_freq must be a non-negative int, received {histogram_freq!r}.")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = update_freq
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._modules = _tensorboard_writer_module()
        if self._modules is None and not _warned_fallback:
            _warned_fallback.append(True)
            warnings.warn("The tensorboard package is not installed (pip install tensorboard): the TensorBoard "
                          "callback falls back to writing scalars as JSON lines (scalars.jsonl under "
                          "log_dir/train and log_dir/validation); histograms and the graph are not written.",
                          UserWarning, stacklevel=2)
        self._writers = {}
        self._stopped_writing = False
        self._global_train_batch = 0
        self._batch_start_time = 0.0
        self._epoch_start_time = 0.0
        self._epoch_start_iterations = 0

    # -- writers ---------------------------------------------------------------------------------------------

    def _writer(self, run):
        if run not in self._writers:
            folder = os.path.join(self.log_dir, run)
            self._writers[run] = (_EventWriter(folder, self._modules) if self._modules is not None
                                  else _JsonLinesWriter(folder))
        return self._writers[run]

    def _write(self, run, what, *args):
        """``writer.<what>(*args)`` on the writer of ``run`` (made on first
        use), unless writing has stopped (module docstring)."""
        self._guarded(lambda: getattr(self._writer(run), what)(*args))

    def _guarded(self, write):
        """Run ``write`` unless writing has stopped; its first failure to
        write warns once and stops the callback's writing until the next fit."""
        if self._stopped_writing:
            return
        try:
            write()
        except Exception as error:  # noqa: BLE001  (_is_write_failure picks; anything else is re-raised)
            if not _is_write_failure(error):
                raise
            self._stopped_writing = True
            warnings.warn(f"TensorBoard: writing the logs under {self.log_dir!r} failed ({type(error).__name__}: "
                          f"{error}). The callback writes nothing more in this fit; training goes on.",
                          RuntimeWarning, stacklevel=2)
            self._close_writers()

    def _close_writers(self):
        for writer in self._writers.values():
            try:
                writer.close()
            except Exception as error:  # noqa: BLE001  (a full disk fails the last flush too)
                if not (self._stopped_writing and _is_write_failure(error)):
                    raise
        self._writers = {}

    def _scalars(self, run, prefix, logs, step):
        for name, value in logs.items():
            number = _as_float(value)
            if number is not None:
                self._write(run, "scalar", f"{prefix}{name}", number, step)

    # -- hooks ---------------------------------------------------------------------------------------------

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._stopped_writing = False
        if self.write_graph and hasattr(self.model, "to_json"):
            try:
                model_json = self.model.to_json()
            except Exception as error:  # as Keras: a model that cannot be serialised is not fatal
                warnings.warn(f"Model failed to serialize as JSON. Ignoring... {error}", UserWarning, stacklevel=2)
            else:
                self._write("train", "keras_model", "keras", model_json, 0)

    def on_train_end(self, logs=None):
        self._guarded(self._close_writers)

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self.write_steps_per_second:
            self._batch_start_time = time.time()

    def on_train_batch_end(self, batch, logs=None):
        if self.update_freq == "epoch" or self._global_train_batch % self.update_freq:
            return
        step = self._global_train_batch
        if self.write_steps_per_second:
            elapsed = max(time.time() - self._batch_start_time, 1e-9)
            self._write("train", "scalar", "batch_steps_per_second", 1.0 / elapsed, step)
        if isinstance(logs, dict):
            self._scalars("train", "batch_", logs, step)

    def on_epoch_begin(self, epoch, logs=None):
        if self.write_steps_per_second:
            self._epoch_start_time = time.time()
            self._epoch_start_iterations = self._optimizer_iterations()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        train = {name: value for name, value in logs.items() if not name.startswith("val_")}
        validation = {name[4:]: value for name, value in logs.items() if name.startswith("val_")}
        if logs:
            train.update(self._learning_rates())
            if self.write_steps_per_second:
                elapsed = max(time.time() - self._epoch_start_time, 1e-9)
                train["steps_per_second"] = (self._optimizer_iterations() - self._epoch_start_iterations) / elapsed
            self._scalars("train", "epoch_", train, epoch)
            if validation:
                self._scalars("validation", "epoch_", validation, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        if self.embeddings_freq and epoch % self.embeddings_freq == 0:
            self._guarded(lambda: self._save_embeddings(epoch))
        for run in list(self._writers):
            self._write(run, "flush")

    def _save_embeddings(self, epoch):
        path = os.path.join(self.log_dir, "train", f"keras_embedding.ckpt-{epoch}.weights.h5")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.model.save_weights(path)

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if logs and optimizer is not None and hasattr(optimizer, "iterations"):
            self._scalars("validation", "evaluation_", {f"{name}_vs_iterations": value for name, value in logs.items()},
                          int(optimizer.iterations))
            self._write("validation", "flush")

    # -- what is written -----------------------------------------------------------------------------------

    def _optimizer_iterations(self):
        optimizer = getattr(self.model, "optimizer", None)
        return int(getattr(optimizer, "iterations", 0) or 0)

    def _learning_rates(self):
        """``{"learning_rate": lr}`` (through a LossScaleOptimizer to its inner
        optimizer), as Keras's ``_collect_learning_rate``."""
        optimizer = getattr(self.model, "optimizer", None)
        optimizer = getattr(optimizer, "inner_optimizer", optimizer)
        if optimizer is None or not hasattr(optimizer, "learning_rate"):
            return {}
        rate = _as_float(optimizer.learning_rate)
        return {} if rate is None else {"learning_rate": rate}

    def _log_weights(self, epoch):
        if self._stopped_writing:
            return  # nor read the weights to the host
        for layer in self.model.layers:
            for weight in layer.weights:
                name = getattr(weight, "path", None) or weight.name
                values = weight.numpy()
                self._write("train", "histogram", f"{name.replace(':', '_')}/histogram", values, epoch)
                images = weight_as_images(values) if self.write_images else None
                if images is not None:
                    self._write("train", "image", f"{name.replace(':', '_')}/image", image_summary_strings(images),
                                epoch)
        self._write("train", "flush")
