"""MirroredModel: synchronous data parallelism over several devices.

Like TensorFlow's MirroredStrategy, as one wrapper object: a replica of the
model per device, each batch split across the replicas, the replicas run at
once (one persistent worker thread per device), gradients all-reduced, and
the same update applied by every replica's own optimizer.

How one training step runs, on every replica r with n_r of the batch's N
samples:

1. forward and loss on its shard; the loss is scaled by ``n_r / N`` (the
   weight penalties, which do not depend on the data, are added by replica
   0 alone, unscaled, so that they count once);
2. backward, so each replica holds ``n_r / N`` times the gradient of its
   mean loss; a SUM all-reduce then gives every replica the sample-weighted
   mean of the replicas' gradients, which is the gradient of the mean loss
   over the whole batch. (Chainer's data parallelism sums the replicas'
   gradients; minikeras averages them, weighted by each replica's share,
   so that results do not depend on the number of devices.)
3. every replica applies that gradient with its own optimizer: the same
   arithmetic on the same numbers, so the replicas never drift.

BatchNormalization: by default each replica normalises with its own shard's
statistics and the moving statistics are averaged after every step
(weighted by the shards' sizes), so they stay identical. With
``sync_batch_norm=True`` (or a layer built with ``synchronized=True``) the
batch statistics are those of the whole global batch, through cross-replica
sums of x, x**2 and counts in forward and of the gradient sums in backward:
training then matches one device on the whole batch.
"""
import weakref

import numpy

from minikeras.autograd import Tensor, no_grad
from minikeras.device import Device, registry, replicas_share_cores
from minikeras.device import device as device_scope
from minikeras.distribute import batches
from minikeras.distribute import replicas as replica_tools
from minikeras.distribute.all_reduce import AllReduce, default_all_reduce
from minikeras.distribute.batch_norm_sync import CrossReplicaStats, ReplicaBatchNorms, running
from minikeras.distribute.local_all_reduce import LocalAllReduce
from minikeras.distribute.model_facade import WrappedModelFacade
from minikeras.distribute.workers import DeviceWorkers
from minikeras.layers.normalization import batch_norm_layers
from minikeras.layers.state_updates import collect_state_updates
from minikeras.models.training import Trainer


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


class _Shard:
    """What one replica's step hands back to the main thread."""

    __slots__ = ("loss", "parts", "outputs", "gradients")

    def __init__(self, loss=0.0, parts=None, outputs=None):
        self.loss, self.parts, self.outputs = loss, parts or {}, outputs
        self.gradients = None  # the reduced gradients, when the main thread applies them


class MirroredModel(WrappedModelFacade, Trainer):
    """Train a Model on several devices at once (see the module docstring).

    Gradients are combined as the SAMPLE-WEIGHTED MEAN of the replicas'
    gradients: each replica's mean-loss gradient weighted by its share of
    the batch (Chainer sums them; minikeras averages, so that N steps on k
    devices give the weights of N steps on one device). Batches are split
    in order, the first replicas taking one extra sample when the size does
    not divide; a replica with no samples (a last batch smaller than the
    number of devices) contributes nothing but still applies the update.

    ``compile``, ``fit``, ``evaluate``, ``predict``, ``train_on_batch``,
    ``summary`` and ``save`` behave as the wrapped model's (the same loop,
    callbacks, progress bar and History; only the steps differ). Saving
    writes the plain wrapped model, loadable without MirroredModel.

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
        self._init_training()
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
        self._optimizers = None
        self._outdated_wrapped = False
        self._host_outputs = False
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
        self._replicas = replicas
        self._batch_norms = []
        for rank, replica in enumerate(replicas):
            layers = batch_norm_layers(replica)
            synchronized = [self.sync_batch_norm or bool(getattr(layer, "synchronized", False)) for layer in layers]
            for layer, flag in zip(layers, synchronized):
                if flag:
                    layer._cross_replica_stats = CrossReplicaStats(self, rank)
            self._batch_norms.append(ReplicaBatchNorms(layers, synchronized))

    def _ensure_replicas(self, x):
        if self._replicas is None:
            self._build_replicas(x)

    def _ensure_optimizers(self):
        """One optimizer per replica: the compiled one for replica 0, clones
        (same config, same state) for the others; all built up front."""
        primary = self.optimizer
        weight_lists = [replica.trainable_weights for replica in self._replicas]
        if self._optimizers is None or self._optimizers[0] is not primary:
            if primary.built and not replica_tools.built_on(primary, weight_lists[0]):
                state = primary.get_state()
                primary = replica_tools.clone_optimizer(primary)
                primary.build(weight_lists[0])
                primary.set_state(state)
                self.optimizer = primary
            others = [replica_tools.clone_optimizer(primary) for _ in self._replicas[1:]]
            if primary.built:
                state = primary.get_state()
                for optimizer, weights in zip(others, weight_lists[1:]):
                    optimizer.build(weights)
                    optimizer.set_state(state)
            self._optimizers = [primary] + others
        snapshots = replica_tools.build_optimizers(self._optimizers, weight_lists)
        for optimizer in self._optimizers[1:]:
            replica_tools.copy_hyperparameters(primary, optimizer)
        return weight_lists, snapshots

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

    # --------------------------------------------------------------- losses
    def _replica_loss(self, rank, x, y, sample_weight, count, total, training):
        """The replica's share of the global loss: ``n_r / N`` times (its
        mean data loss + call losses), plus the weight penalties on the
        global replica 0 only. Also returns its per-output losses, scaled
        the same way, and its predictions."""
        replica = self._replicas[rank]
        replica._clear_call_losses()
        y_pred = replica(x, training=training)
        data_loss, parts = self.compiled_loss.compute(y, y_pred, sample_weight)
        from_calls = replica_tools.call_losses(replica)
        loss = data_loss
        for term in from_calls:
            loss = loss + term
        share = count / total
        loss = loss * share
        if rank == 0 and self._collective.process_index == 0:
            for term in replica_tools.weight_losses(replica, from_calls):
                loss = loss + term
        parts = {name: float(part.item()) * share for name, part in parts.items()}
        return loss, parts, y_pred

    # ---------------------------------------------------------------- steps
    def _train_batch(self, x, y, sample_weight=None):
        """One synchronous step on every replica; returns the batch's loss.

        Raises:
            ResourceExhaustedError: a replica ran out of memory; no replica
                applied an update, the BatchNormalization moving statistics
                are unchanged (their updates apply only after the
                all-reduce), and the gradients are released.
        """
        x, y, sample_weight, total, shards = self._prepare(x, y, sample_weight)
        weight_lists, snapshots = self._ensure_optimizers()
        if self.compiled_metrics is None:
            self._make_metrics()
        self._step_group = self._group_for([shard[3] for shard in shards])
        try:
            results = self._run(lambda rank, shard: self._train_replica(rank, shard, total, weight_lists[rank]),
                                shards, (self._collective, self._step_group[0]))
            if self._copy_updates:
                # Here, not in replica 0's thread: the replicas are done, so
                # the update's passes may use every core (the op threads).
                with device_scope(self.devices[0]):
                    self._optimizers[0].apply_gradients(zip(results[0].gradients, weight_lists[0]))
                    replica_tools.apply_constraints(weight_lists[0])
                results[0].gradients = None
        except BaseException:
            replica_tools.unbuild_optimizers(self._optimizers, snapshots)
            raise
        finally:
            self._step_group = None
        if self._copy_updates:
            self._copy_primary_weights(weight_lists)
        self._outdated_wrapped = self._replicas[0] is not self.model
        return self._record(results, y, sample_weight)

    def _train_replica(self, rank, shard, total, weights):
        x, y, sample_weight, count = shard
        batch_norms = self._batch_norms[rank]
        result = _Shard()
        with device_scope(self.devices[rank]):
            try:
                grads, updates = [None] * len(weights), []
                if count:
                    with collect_state_updates() as updates:  # applied below, once every replica succeeded
                        loss, result.parts, y_pred = self._replica_loss(rank, x, y, sample_weight, count, total,
                                                                        True)
                    # Scaled by replica 0's LossScaleOptimizer (its scale is the one that
                    # changes when only replica 0 applies the update); others: as is.
                    self._optimizers[0].scale_loss(loss).backward()
                    grads = [None if w.grad is None else w.grad.data for w in weights]
                    result.loss = float(loss.item())
                    result.outputs = batches.to_host(y_pred)
                    loss = y_pred = None
                for weight in weights:
                    weight.grad = None
                # One all-reduce for the gradients and the moving-statistic changes.
                # The global rank: synchronized statistics' change comes from global replica 0 alone.
                leader = self._collective.process_index * len(self.devices) + rank
                reduced = self._collective.all_reduce(
                    rank, grads + _statistic_changes(batch_norms, updates, leader, count, total))
                grads = None
            except BaseException:
                for weight in weights:
                    weight.grad = None
                raise
            _add_statistic_changes(batch_norms, reduced[len(weights):])
            if not self._copy_updates:
                self._optimizers[rank].apply_gradients(zip(reduced[:len(weights)], weights))
                replica_tools.apply_constraints(weights)
            elif rank == 0:  # applied by train_step, once the replicas are done
                result.gradients = reduced[:len(weights)]
        return result

    @property
    def _copy_updates(self):
        """On CPU devices the update is computed once, for replica 0 by the
        main thread once the replicas are done (so over all the op threads),
        and its weights are copied to the others (train_step): every replica
        holds the same values either way, and the optimizer's dozen passes
        over the weights are not repeated on cores the replicas share."""
        return all(device.host_kernels for device in self.devices)

    def _copy_primary_weights(self, weight_lists):
        primary = self._optimizers[0]
        for rank in range(1, len(weight_lists)):
            for target, source in zip(weight_lists[rank], weight_lists[0]):
                target.data[...] = source.data
            self._optimizers[rank]._iterations = primary._iterations

    def _test_batch(self, x, y, sample_weight=None):
        """Loss and metrics on one batch, every replica on its shard."""
        x, y, sample_weight, total, shards = self._prepare(x, y, sample_weight)
        if self.compiled_metrics is None:
            self._make_metrics()
        results = self._run(lambda rank, shard: self._evaluate_replica(rank, shard, total), shards)
        return self._record(results, y, sample_weight)

    def _evaluate_replica(self, rank, shard, total):
        x, y, sample_weight, count = shard
        if not count:
            return _Shard()
        with device_scope(self.devices[rank]), no_grad():
            loss, parts, y_pred = self._replica_loss(rank, x, y, sample_weight, count, total, False)
            return _Shard(float(loss.item()), parts, batches.to_host(y_pred))

    def _record(self, results, y, sample_weight):
        loss = sum(result.loss for result in results)
        parts = {}
        for result in results:
            for name, value in result.parts.items():
                parts[name] = parts.get(name, 0.0) + value
        outputs = batches.concatenate([result.outputs for result in results if result.outputs is not None])
        self._update_logs(numpy.float64(loss), y, outputs, sample_weight,
                          {name: numpy.float64(value) for name, value in parts.items()})
        return loss

    def __call__(self, inputs, training=None, **kwargs):
        """Inference on every replica's shard of ``inputs``; the outputs are
        concatenated on the first device (detached: train with fit or
        train_on_batch, not through this call)."""
        if training:
            raise ValueError("MirroredModel(x, training=True) is not supported: train with fit() or train_on_batch().")
        x, _, _, _, shards = self._prepare(inputs)

        def forward(rank, shard):
            if not shard[3]:
                return None
            with device_scope(self.devices[rank]), no_grad():
                return batches.to_host(self._replicas[rank](shard[0], training=False, **kwargs))

        with self._run_context():
            outputs = batches.concatenate([out for out in self._run(forward, shards) if out is not None])
        if self._host_outputs:
            return outputs
        if isinstance(outputs, list):
            return [Tensor(out, device=self.devices[0]) for out in outputs]
        return Tensor(outputs, device=self.devices[0])

    # ----------------------------------------------------- Model behaviour
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, **kwargs):
        """Configure training as ``Model.compile``; the wrapped model is
        compiled with the same arguments (and the primary optimizer) so that
        saving it keeps the training configuration."""
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, loss_weights=loss_weights, **kwargs)
        self.model.compile(optimizer=self.optimizer, loss=loss, metrics=metrics, loss_weights=loss_weights)
        self._optimizers = None

    def _run_context(self):
        """The trainer's hook: fewer BLAS threads while replicas share the CPU."""
        return replicas_share_cores(self.devices, self.cpu_blas_threads)

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

    def predict(self, *args, **kwargs):
        """Outputs as NumPy arrays, as ``Model.predict``."""
        self._host_outputs = True
        try:
            return super().predict(*args, **kwargs)
        finally:
            self._host_outputs = False

    def predict_on_batch(self, x):
        """Outputs for one batch as NumPy arrays."""
        self._host_outputs = True
        try:
            return super().predict_on_batch(x)
        finally:
            self._host_outputs = False

    def close(self):
        """Stop the worker threads and release the collectives (also done
        when the object is garbage collected)."""
        self._finalizer()

    def __repr__(self):
        return f"<MirroredModel of {self.model.name!r} on {[d.name for d in self.devices]}>"


def _shut_down(workers, collective):
    workers.close()
    collective.close()


def _statistic_changes(batch_norms, updates, rank, count, total):
    """This replica's contribution to each moving statistic's change, for a
    SUM all-reduce (None: nothing), from the step's collected updates:
    local statistics give their change times the replica's share of the
    batch; synchronized ones, identical on all replicas with samples, are
    given by replica 0 alone (never idle). ``rank`` is the global rank."""
    new_values = {id(weight): value for weight, value in updates}
    share = count / total
    result = []
    for layer, synchronized in zip(batch_norms.layers, batch_norms.synchronized):
        for weight in (layer.moving_mean, layer.moving_variance):
            new = new_values.get(id(weight))
            change = None if new is None else new - weight.data
            if synchronized:
                result.append(change if rank == 0 else None)
            else:
                result.append(change * share if count and change is not None else None)
    return result


def _add_statistic_changes(batch_norms, changes):
    """Add the summed changes to the moving statistics (the same on every
    replica)."""
    changes = iter(changes)
    for layer in batch_norms.layers:
        for weight in (layer.moving_mean, layer.moving_variance):
            change = next(changes)
            if change is not None:
                weight.data[...] = weight.data + change
