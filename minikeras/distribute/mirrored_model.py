"""MirroredModel: synchronous data parallelism over several devices.

Like TensorFlow's MirroredStrategy, as one wrapper object: a replica of the
model per device, each batch split across the replicas, the replicas run at
once (one persistent worker thread per device), and the same update applied
by every replica.

Every replica runs the model's own step: ``fit`` calls
``replica.train_step(shard)`` on each replica's thread, so a model's
``train_step``, ``test_step``, ``predict_step``, ``compute_loss``,
``compute_metrics`` and metrics are honoured exactly as on one device
(distribute/replica_step.py says how the step is made data-parallel: the
optimizers' ``apply_gradients`` all-reduce the gradients, each replica's
weighted by its share of the rows, and the layer state changes are
combined by their variables' ``aggregation``). Each replica counts its own
rows in its own copies of the metrics; the logs are the results of the
copies' combined state (metrics/state.py), read only when looked at (no
host read per step).

BatchNormalization: by default each replica normalises with its own
shard's statistics and the moving statistics take the mean of the
replicas' changes weighted by their rows (the variables' ``aggregation="mean"``),
so they stay identical. With ``sync_batch_norm=True`` (or a layer built
with ``synchronized=True``) the batch statistics are those of the whole
global batch, through cross-replica sums in forward and backward
(batch_norm_sync.py): training then matches one device on the whole batch.
"""
import warnings
import weakref

from minikeras import replica_context
from minikeras.autograd import Tensor, no_grad
from minikeras.device import Device, registry, replicas_share_cores
from minikeras.device import device as device_scope
from minikeras.distribute import batches
from minikeras.distribute import replicas as replica_tools
from minikeras.distribute.all_reduce import AllReduce, default_all_reduce
from minikeras.distribute.batch_norm_sync import CrossReplicaStats, running
from minikeras.distribute.local_all_reduce import LocalAllReduce
from minikeras.distribute.model_facade import WrappedModelFacade
from minikeras.distribute.replica_step import ReplicaContext, ReplicaOptimizer, UpdateRelay, optimizers_replaced
from minikeras.distribute.workers import DeviceWorkers
from minikeras.layers.base import walk_layers
from minikeras.metrics import state as metric_state
from minikeras.models.running_logs import LazyLogs
from minikeras.models.steps import flatten_logs, log_value
from minikeras.models.training import Trainer
from minikeras._support.packing import pack_x_y_sample_weight, unpack_x_y_sample_weight


def _default_devices():
    gpus = registry.list_logical_devices("GPU")
    return gpus if len(gpus) >= 2 else registry.list_logical_devices("CPU")


def _resolve_devices(devices):
    if devices is None:
        return _default_devices()
    if isinstance(devices, (str, Device)):
        devices = [devices]
    if not isinstance(devices, (list, tuple)):
        raise TypeError(f"MirroredModel: devices must be a list of device names or Devices, received {devices!r}.")
    resolved = [registry.get_device(device) for device in devices]
    if not resolved:
        raise ValueError("MirroredModel: devices is empty; pass at least one device (or None for all).")
    names = [device.name for device in resolved]
    if len(set(names)) != len(names):
        raise ValueError(f"MirroredModel: each device may appear once, received {names}.")
    return resolved


class MirroredModel(WrappedModelFacade, Trainer):
    """Train a Model on several devices at once (see the module docstring).

    Gradients are combined as the SAMPLE-WEIGHTED MEAN of the replicas'
    gradients: each replica's mean-loss gradient weighted by its share of
    the batch (Chainer sums them; minikeras averages, so that N steps on k
    devices give the weights of N steps on one device). Batches are split
    in order, the first replicas taking one extra sample when the size does
    not divide; a replica with no samples (a last batch smaller than the
    number of devices) contributes nothing but still applies the update
    (replica_step.py).

    Every replica runs the model's own ``train_step``/``test_step``/
    ``predict_step`` (with its ``compute_loss`` and metrics), so the
    numbers are those of one device on the whole batch. ``compile`` is the
    wrapped model's own (a custom ``compile``, e.g. a GAN's with two
    optimizers, works); ``fit``, ``evaluate``, ``predict``,
    ``train_on_batch``, ``summary`` and ``save`` behave as the wrapped
    model's (the same loop, callbacks, progress bar and History). Saving
    writes the plain wrapped model, loadable without MirroredModel.
    ``jit_compile=True`` runs every replica's step eagerly (a captured
    graph is one device's step), with one warning.

    Args:
        model: a minikeras Model. When its weights all live on the first
            device it is itself the first replica; otherwise it is kept in
            sync with the first replica after fit/train_on_batch and before
            saving.
        devices: device names or Devices; default all logical GPUs, or all
            logical CPUs when there are fewer than two GPUs.
        sync_batch_norm: compute BatchNormalization's batch statistics over
            the global batch (cross-replica sums) instead of per replica.
        all_reduce: an :class:`~minikeras.distribute.AllReduce` within
            this process (default: NCCL when possible, else local copies);
            across processes use ``MultiWorkerMirroredModel``.

    Attributes:
        cpu_blas_threads: while replicas share the CPU, BLAS may use at most
            this many threads (``"auto"``: cores // CPU replicas; None:
            leave BLAS alone). Replicas are threads already; BLAS threads
            on top of them oversubscribe the cores
            (``minikeras.device.replicas_share_cores``).

    Example:
        >>> cpu = mk.config.list_physical_devices("CPU")[0]
        >>> mk.config.set_logical_device_configuration(cpu, [mk.config.LogicalDeviceConfiguration()] * 2)
        >>> mirrored = mk.MirroredModel(model)            # cpu:0 and cpu:1
        >>> mirrored.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
        >>> history = mirrored.fit(x, y, batch_size=128, epochs=2)  # doctest: +SKIP
        >>> model.save("model.h5")                        # the plain model, trained
    """

    cpu_blas_threads = "auto"
    _spans_processes = False  # True in MultiWorkerMirroredModel

    def __init__(self, model, devices=None, sync_batch_norm=False, all_reduce=None):
        from minikeras.models.model import Model

        if isinstance(model, MirroredModel) or not isinstance(model, Model):
            raise TypeError(f"MirroredModel wraps a minikeras Model, received {type(model).__name__}.")
        if not isinstance(sync_batch_norm, bool):
            raise TypeError(f"MirroredModel: sync_batch_norm must be True or False, received {sync_batch_norm!r}.")
        self.model = model
        self.devices = _resolve_devices(devices)
        self.sync_batch_norm = sync_batch_norm
        self.stop_training = False
        self.history = None
        self.train_function = self.test_function = self.predict_function = None
        if all_reduce is None:
            all_reduce = default_all_reduce(self.devices)
        elif not isinstance(all_reduce, AllReduce):
            raise TypeError(f"MirroredModel: all_reduce must be an AllReduce, received {type(all_reduce).__name__}.")
        elif list(all_reduce.devices) != self.devices:
            raise ValueError(
                "MirroredModel: the all_reduce was made for devices "
                f"{[d.name for d in all_reduce.devices]}, the model runs on {[d.name for d in self.devices]}."
            )
        if all_reduce.process_count > 1 and not self._spans_processes:
            raise ValueError(
                f"MirroredModel: this all_reduce spans {all_reduce.process_count} processes; use "
                "minikeras.distribute.MultiWorkerMirroredModel, which makes loss and metrics global, starts every "
                "worker from worker 0's weights and checks the data."
            )
        self._collective = all_reduce
        self._workers = DeviceWorkers(self.devices)
        self._finalizer = weakref.finalize(self, _shut_down, self._workers, all_reduce)
        self._replicas = None
        self._state_weights = None  # per replica: the variables whose step changes are combined
        self._mirrored_compile = None  # the wrapped model's compiled loss the replicas were compiled like
        self._outdated_wrapped = False
        self._groups = {}
        self._step_group = None
        if model.built:
            self._build_replicas()

    # ------------------------------------------------------------ replicas
    @property
    def replicas(self):
        """The per-device models (built on first use); replica 0 is
        ``model`` itself when it lives on the first device."""
        return list(self._replicas or ())

    def _build_replicas(self, sample_inputs=None):
        model = self.model
        if not model.built:
            if sample_inputs is None:
                raise RuntimeError("MirroredModel: the model is not built yet; call fit/predict with data first.")
            replica_tools._build_with(model, sample_inputs)
        first = self.devices[0]
        replicas = [model] if all(w.device is first for w in model.weights) else \
            [replica_tools.clone_model(model, first, sample_inputs)]
        replicas += [replica_tools.clone_model(model, device, sample_inputs) for device in self.devices[1:]]
        self._synchronized_statistics = False
        for rank, replica in enumerate(replicas):
            # Layers that can normalise with the global batch's statistics say so
            # by a ``_cross_replica_stats`` hook (BatchNormalization); they use it
            # when asked, by the layer's ``synchronized`` or by sync_batch_norm.
            for layer in walk_layers(replica):
                if hasattr(layer, "_cross_replica_stats") and (self.sync_batch_norm or
                                                               bool(getattr(layer, "synchronized", False))):
                    layer._cross_replica_stats = CrossReplicaStats(self, rank)
                    self._synchronized_statistics = True
        self._state_weights = [[weight for weight in replica.non_trainable_weights if weight.aggregation != "none"]
                               for replica in replicas]
        # On logical CPUs replica 0 computes each update and the others copy
        # its weights (replica_step.UpdateRelay): they share the cores.
        self._leader_weights = None
        if len(replicas) > 1 and all(device.host_kernels for device in self.devices):
            self._leader_weights = [{id(weight): leader for weight, leader in zip(replica.weights, replicas[0].weights)}
                                    for replica in replicas]
        self._replicas = replicas
        self._mirrored_compile = None

    def _ensure_replicas(self, x):
        if self._replicas is None:
            self._build_replicas(x)

    def _compile_replicas(self):
        """Compile every replica that is a copy like the wrapped model (once
        per compile), and give their optimizers the wrapped model's current
        hyperparameters (a callback may have changed the learning rate)."""
        model = self.model
        if model.__dict__.get("compiled_loss") is None:
            raise RuntimeError("MirroredModel: compile it before training: mirrored.compile(optimizer, loss).")
        if model.compiled_metrics is None and model.built:
            model._make_metrics()
        if self._mirrored_compile is not model.compiled_loss:
            for replica in self._replicas:
                if replica is model:
                    continue
                replica_tools.mirror_compiled_state(model, replica)
                for (_, source), (_, target) in zip(replica_tools.optimizer_attributes(model),
                                                    replica_tools.optimizer_attributes(replica)):
                    replica_tools.copy_optimizer_state(source, model, target, replica)
            self._mirrored_compile = model.compiled_loss
        sources = replica_tools.optimizer_attributes(model)
        for replica in self._replicas:
            if replica is not model:
                for (_, source), (_, target) in zip(sources, replica_tools.optimizer_attributes(replica)):
                    replica_tools.copy_hyperparameters(source, target)

    # ------------------------------------------------------------ splitting
    def _shard_bounds(self, total):
        """(start, stop) of each local replica's rows (see batches.shard_bounds)."""
        collective = self._collective
        return batches.shard_bounds(total, len(self.devices), collective.process_count, collective.process_index)

    def _prepare(self, x, y=None, sample_weight=None):
        x, y, sample_weight = (batches.to_arrays(value) for value in (x, y, sample_weight))
        self._ensure_replicas(x)
        total = batches.batch_length(x)
        shards = [(batches.rows(x, a, b), batches.rows(y, a, b), batches.rows(sample_weight, a, b), b - a)
                  for a, b in self._shard_bounds(total)]
        return x, y, sample_weight, total, shards

    def _group_for(self, counts):
        """The collective for BatchNormalization statistics among the
        replicas that have samples in this step."""
        active = tuple(rank for rank, count in enumerate(counts) if count)
        group = self._groups.get(active)
        if group is None:
            group = self._groups[active] = LocalAllReduce([self.devices[rank] for rank in active])
        return group, {rank: position for position, rank in enumerate(active)}

    def _run(self, make_task, shards, collectives=()):
        """Run ``make_task(rank, shard)`` on every replica's thread; when one
        fails, release the others from their collectives and re-raise."""
        def guarded(rank, shard):
            def task():
                running.owner = self
                try:
                    return make_task(rank, shard)
                except BaseException:
                    for collective in collectives:
                        collective.abort()
                    raise
                finally:
                    running.owner = None
            return task

        try:
            return self._workers.run([guarded(rank, shard) for rank, shard in enumerate(shards)])
        except BaseException:
            for collective in collectives:
                collective.reset()
            raise

    # ---------------------------------------------------------------- steps
    def make_train_function(self, force=False):
        """The callable ``fit`` runs: every replica's ``train_step`` on its
        rows of each batch; returns the last batch's logs."""
        if self.train_function is None or force:
            self.train_function = _ReplicatedFunction(self, training=True)
        return self.train_function

    def make_test_function(self, force=False):
        """The callable ``evaluate`` runs: every replica's ``test_step``."""
        if self.test_function is None or force:
            self.test_function = _ReplicatedFunction(self, training=False)
        return self.test_function

    def make_predict_function(self, force=False):
        """The callable ``predict`` runs: every replica's ``predict_step``
        on its rows, the outputs joined in batch order (NumPy)."""
        if self.predict_function is None or force:
            self.predict_function = _PredictFunction(self)
        return self.predict_function

    def _step(self, data, training):
        """One synchronous train (or test) step of every replica on its rows
        of ``data``; returns the logs (read lazily).

        Raises:
            ResourceExhaustedError: a replica ran out of memory; no replica
                applied an update, the layer state is unchanged (it changes
                only when the step succeeds on every replica), and the
                gradients are released.
        """
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        x, y, sample_weight, total, shards = self._prepare(x, y, sample_weight)
        self._compile_replicas()
        counts = [shard[3] for shard in shards]
        first_global = self._collective.process_index * len(self.devices)
        relay = UpdateRelay() if training and self._leader_weights is not None else None

        def replica_step(rank, shard):
            shard_x, shard_y, shard_weight, count = shard
            if not count:  # keeps the others company on one borrowed row (replica_step.py)
                shard_x, shard_y, shard_weight = (batches.rows(value, 0, 1) for value in (x, y, sample_weight))
            replica = self._replicas[rank]
            context = ReplicaContext(self._collective, rank, first_global + rank, count, total,
                                     self._state_weights[rank], relay,
                                     self._leader_weights[rank] if relay is not None else None)
            batch = pack_x_y_sample_weight(shard_x, shard_y, shard_weight)
            with device_scope(self.devices[rank]), replica_context.running_as(context):
                if not training:
                    with no_grad():
                        return replica.test_step(batch)
                replacements = {name: ReplicaOptimizer(optimizer, name)
                                for name, optimizer in replica_tools.optimizer_attributes(replica)}
                with optimizers_replaced(replica, replacements):
                    return replica.run_train_step(batch)

        if training:
            self._step_group = self._group_for(counts)
            collectives = (self._collective, self._step_group[0]) + ((relay,) if relay is not None else ())
        else:
            collectives = ()
        try:
            logs = self._run(replica_step, shards, collectives)
        finally:
            self._step_group = None
        if training:
            self._outdated_wrapped = self._replicas[0] is not self.model
        active = [rank for rank, count in enumerate(counts) if count]
        return LazyLogs(lambda: self._combined_logs(logs, active))

    def _combined_logs(self, replica_logs, active):
        """One step's logs: a metric's entry is the result of every
        replica's copy combined; any other entry (a value a custom step
        returns) is the mean over the replicas that had rows, as Keras
        reduces per-replica outputs."""
        results = self.get_metrics_result()
        flat = [flatten_logs(logs) if logs is not None else {} for logs in replica_logs]
        keys = list(flat[0])
        others = {key: [flat[rank][key] for rank in active if key in flat[rank]]
                  for key in keys if key not in results}
        means = self._mean_over_replicas(others)
        return {key: results[key] if key in results else means[key] for key in keys}

    def _mean_over_replicas(self, values):
        """``{key: mean of the values}`` (the replicas of this process)."""
        return {key: (sum(items) / len(items) if items else float("nan")) for key, items in values.items()}

    def _predict_batch(self, data, through_predict_step=True, **kwargs):
        """Every replica's outputs for its rows of ``data``, joined (host arrays)."""
        x, _, _ = unpack_x_y_sample_weight(data)
        x, _, _, _, shards = self._prepare(x)

        def forward(rank, shard):
            if not shard[3]:
                return None
            replica = self._replicas[rank]
            with device_scope(self.devices[rank]), no_grad():
                if through_predict_step:
                    return batches.to_host(replica.predict_step(pack_x_y_sample_weight(shard[0])))
                return batches.to_host(replica(shard[0], training=False, **kwargs))

        with self._run_context():
            return batches.concatenate([out for out in self._run(forward, shards) if out is not None])

    def __call__(self, inputs, training=None, **kwargs):
        """Inference on every replica's shard of ``inputs``; the outputs are
        concatenated on the first device (detached: train with fit or
        train_on_batch, not through this call)."""
        if training:
            raise ValueError("MirroredModel(x, training=True) is not supported: train with fit() or train_on_batch().")
        outputs = self._predict_batch(pack_x_y_sample_weight(inputs), through_predict_step=False, **kwargs)
        if isinstance(outputs, list):
            return [Tensor(out, device=self.devices[0]) for out in outputs]
        if isinstance(outputs, dict):
            return {key: Tensor(out, device=self.devices[0]) for key, out in outputs.items()}
        return Tensor(outputs, device=self.devices[0])

    # ------------------------------------------------------------- metrics
    @property
    def metrics(self):
        """The model's metrics with every replica's counts combined (new
        objects, snapshots of the current state: read them, do not update)."""
        self.flush_logs()
        return self._combined_metrics()

    def _combined_metrics(self):
        per_replica = [replica.metrics for replica in self._replicas or [self.model]]
        return [metric_state.combined(copies) for copies in zip(*per_replica)]

    def flush_logs(self):
        """Bring every replica's waiting steps into its metrics."""
        for replica in self._replicas or ():
            replica.flush_logs()

    def get_metrics_result(self):
        """The combined results of every metric, as a flat dict of floats."""
        self.flush_logs()
        logs = {}
        for metric in self._combined_metrics():
            result = metric.result()
            if isinstance(result, dict):
                logs.update(flatten_logs(result))
            else:
                logs[metric.name] = log_value(result)
        return logs

    def reset_metrics(self):
        """Reset every replica's metrics."""
        for replica in self._replicas or [self.model]:
            replica.reset_own_metrics()

    # ----------------------------------------------------- Model behaviour
    @property
    def optimizer(self):
        """The wrapped model's optimizer (its learning rate and settings
        are every replica's)."""
        return self.model.optimizer

    @property
    def compiled_loss(self):
        """The wrapped model's compiled loss."""
        return self.model.__dict__.get("compiled_loss")

    @property
    def compiled_metrics(self):
        """The wrapped model's compiled metrics."""
        return self.model.__dict__.get("compiled_metrics")

    @property
    def steps_per_execution(self):
        """The wrapped model's ``steps_per_execution``."""
        return getattr(self.model, "steps_per_execution", 1)

    def compile(self, *args, **kwargs):
        """Compile the wrapped model with its own ``compile`` (a subclass's
        override included); every replica is then compiled the same way
        (``replicas.mirror_compiled_state``) before its next step."""
        self.model.compile(*args, **kwargs)
        if getattr(self.model, "jit_compile", False):
            warnings.warn(f"jit_compile=True: the replicas of '{self.model.name}' run their steps eagerly (a CUDA "
                          "graph captures one device's step).", UserWarning, stacklevel=2)
        self._mirrored_compile = None
        self.train_function = self.test_function = self.predict_function = None

    def _format(self, logs, return_dict):
        return self.model._format(logs, return_dict)

    def _run_context(self):
        """The trainer's hook: fewer BLAS threads while replicas share the CPU."""
        return replicas_share_cores(self.devices, self.cpu_blas_threads)

    def _sync_wrapped(self):
        """Copy replica 0's weights and optimizer state into the wrapped
        model if it is not replica 0 and is behind."""
        if self._outdated_wrapped and self._replicas:
            primary = self._replicas[0]
            self.model.set_weights(primary.get_weights())
            for (_, source), (_, target) in zip(replica_tools.optimizer_attributes(primary),
                                                replica_tools.optimizer_attributes(self.model)):
                if source.built:
                    if not target.built:
                        replica_tools.copy_optimizer_state(source, primary, target, self.model)
                    else:
                        target.set_state(source.get_state())
            self._outdated_wrapped = False

    def fit(self, *args, **kwargs):
        """Train as ``Model.fit`` (same arguments, callbacks and History)."""
        try:
            return super().fit(*args, **kwargs)
        finally:
            self._sync_wrapped()

    def train_on_batch(self, *args, **kwargs):
        """One step on one batch, as ``Model.train_on_batch``."""
        try:
            return super().train_on_batch(*args, **kwargs)
        finally:
            self._sync_wrapped()

    def close(self):
        """Stop the worker threads and release the collectives (also done
        when the object is garbage collected)."""
        self._finalizer()

    def __repr__(self):
        return f"<MirroredModel of {self.model.name!r} on {[d.name for d in self.devices]}>"


class _ReplicatedFunction:
    """MirroredModel's train (or test) function: ``_step`` on each batch of
    one execution; returns the last logs."""

    def __init__(self, mirrored, training):
        self.mirrored = mirrored
        self.training = training

    def __call__(self, batches_of_execution):
        logs = None
        for data in batches_of_execution:
            logs = self.mirrored._step(data, self.training)
        return logs


class _PredictFunction:
    """MirroredModel's predict function: the joined outputs of each batch."""

    def __init__(self, mirrored):
        self.mirrored = mirrored

    def __call__(self, batches_of_execution):
        return [self.mirrored._predict_batch(data) for data in batches_of_execution]


def _shut_down(workers, collective):
    workers.close()
    collective.close()
