"""What a replica's thread runs in: the model's own step, made data-parallel at two seams.

MirroredModel (and the multi-worker model) run ``replica.run_train_step(shard)``
-- the model's own ``train_step``, whatever it overrides -- on every replica,
each in its own thread, under three things from this module:

- a :class:`ReplicaContext` (``minikeras/replica_context.py``): the replica's
  rank and its share of the global batch. At the end of the step the layer
  state changes (BatchNormalization's moving statistics) are combined across
  replicas by the variables' ``aggregation`` (:meth:`ReplicaContext.combine_state_changes`);
- a :class:`ReplicaOptimizer` in place of each optimizer the model holds
  (``model.optimizer``, a GAN's ``d_optimizer``...): its ``apply_gradients``
  all-reduces the gradients, each replica's weighted by its share of the
  rows, and then calls the wrapped optimizer (chainermn's seam), so every
  replica applies the same update to the same weights;
- the device scope of the replica.

Shares: a replica with ``n_r`` of the batch's ``N`` rows has share ``n_r / N``;
its gradients are those of its mean loss, so ``sum_r share_r * grad_r`` is
the gradient of the mean loss over the whole batch, whatever the split.
(Chainer's data parallelism sums the replicas' gradients; minikeras weights
them by rows, so that results do not depend on the number of devices.)
The built-in step calls ``optimizer.scale_loss(loss)`` before ``backward()``
(for a LossScaleOptimizer's scale); the replica optimizer's multiplies the
loss by the share there, so the gradients come out weighted at no cost, as
Keras's TensorFlow trainer scales the loss by its replicas. A step that does
not call it (a GAN's two tapes) has its gradients weighted before the
all-reduce instead: one more pass over them, the same numbers.

Replicas that share the host's cores (logical CPUs) compute each update
once: replica 0 applies it and the others copy its new weights
(:class:`UpdateRelay`), instead of repeating the optimizer's dozen passes over
the weights on cores they share; the values are the same either way. While
the others wait for it, replica 0's update runs on every core (its ops use
the op threads again: ``Device.worker_context(alone=True)``).

A replica with no rows (a batch smaller than the number of replicas) still
runs the step, on one borrowed row, so that it calls the same collectives as
the others in the same order; it only keeps them company
(``keeps_company``): it contributes nothing to the sums, records no logs and
updates no metric, and then applies the same update as everyone.
"""
import contextlib
import threading

from minikeras.autograd import Tensor
from minikeras.distribute.all_reduce import ReplicaAborted


class ReplicaContext:
    """One replica's place in one step (see the module docstring).

    Args:
        collective: the :class:`~minikeras.distribute.AllReduce` of the replicas.
        rank: the replica's position among this process's replicas.
        global_rank: its position among the replicas of every process.
        rows: its rows of this batch; total: the global batch's rows.
        state_weights: the replica's variables whose changes are combined
            (an ``aggregation`` other than "none"), the same order on every replica.
    """

    def __init__(self, collective, rank, global_rank, rows, total, state_weights, relay=None, leader_weights=None):
        self.collective = collective
        self.rank = rank
        self.global_rank = global_rank
        self.keeps_company = rows == 0
        self.share = rows / total if total else 0.0
        self.state_weights = state_weights
        self.relay = relay  # an UpdateRelay when replica 0 computes the updates for everyone
        self.leader_weights = leader_weights  # id(this replica's weight) -> replica 0's
        self.updates_seen = 0
        # Set by the step's ``optimizer.scale_loss`` (ReplicaOptimizer): the
        # gradients of this backward are already weighted by ``share``.
        self.loss_weighted = False

    @property
    def device(self):
        """The replica's device."""
        return self.collective.devices[self.rank]

    def all_reduce_gradients(self, grads, tag, weighted=False):
        """The sample-weighted sum of every replica's ``grads`` (arrays,
        Tensors or None), on this replica's device; ``weighted=True``: the
        grads are already this replica's share (those of a loss multiplied
        by it, :meth:`ReplicaOptimizer.scale_loss`)."""
        arrays = []
        for grad in grads:
            if grad is None or self.keeps_company:
                arrays.append(None)
                continue
            data = grad.data if isinstance(grad, Tensor) else grad
            if self.share != 1.0 and not weighted:
                device = grad.device if isinstance(grad, Tensor) else None
                with (device.activate() if device is not None else contextlib.nullcontext()):
                    data = data * self.share
            arrays.append(data)
        return self.collective.all_reduce(self.rank, arrays, tag=tag)

    def combine_state_changes(self, updates):
        """Give each aggregated variable the combination of every replica's
        change in this step (``updates``: the step's
        :class:`~minikeras.layers.state_updates.StateUpdates`)."""
        if not self.state_weights:
            return
        entries = []
        for weight in self.state_weights:
            original = updates.original(weight)
            if self.keeps_company or weight.data is original:
                entries.append(None)
                continue
            with weight.device.activate():
                change = weight.data - original
                if weight.aggregation == "mean":
                    change = change * self.share
            if weight.aggregation == "only_first_replica" and self.global_rank != 0:
                change = None
            entries.append(change)
        combined = self.collective.all_reduce(self.rank, entries)
        for weight, change in zip(self.state_weights, combined):
            if change is None:
                continue
            original = updates.original(weight)
            with weight.device.activate():
                updates.record(weight, original + weight.device.asarray(change))


class ReplicaOptimizer:
    """A replica's view of one of the model's optimizers: ``apply_gradients``
    and ``apply`` all-reduce the gradients (:meth:`ReplicaContext.all_reduce_gradients`)
    and then update through the wrapped optimizer; everything else
    (``learning_rate``, ``iterations``, ``scale_loss``...) is the wrapped one's.

    Args:
        optimizer: the replica's own optimizer.
        tag: names this optimizer's gradient all-reduce (its attribute name).
    """

    def __init__(self, optimizer, tag):
        self.__dict__["optimizer"] = optimizer
        self.__dict__["_tag"] = f"gradients:{tag}"

    def scale_loss(self, loss):
        """The wrapped optimizer's ``scale_loss`` of the loss times this
        replica's share of the batch: the gradients of what it returns
        (the built-in ``train_step`` calls it before ``backward()``) come
        out weighted for the all-reduce, with no pass over them; a step
        that does not call it has its gradients weighted in ``apply``."""
        from minikeras import replica_context

        context = replica_context.current()
        if context.share != 1.0:
            loss = loss * context.share
        context.loss_weighted = True
        return self.optimizer.scale_loss(loss)

    def apply_gradients(self, grads_and_vars):
        """All-reduce the gradients, then ``optimizer.apply_gradients``."""
        pairs = list(grads_and_vars)
        if not pairs:
            return self.optimizer.iterations
        grads, variables = zip(*pairs)
        self.apply(grads, variables)
        return self.optimizer.iterations

    def apply(self, grads, trainable_variables=None):
        """All-reduce the gradients, then ``optimizer.apply`` (or, on a
        replica that shares the host's cores with replica 0, take replica
        0's updated weights: :class:`UpdateRelay`)."""
        from minikeras import replica_context

        context = replica_context.current()
        weighted, context.loss_weighted = context.loss_weighted, False
        reduced = context.all_reduce_gradients(list(grads), self._tag, weighted)
        relay = context.relay if self.optimizer.replicas_may_share_updates else None
        if relay is None:
            self.optimizer.apply(reduced, trainable_variables)
        elif context.rank == 0:
            try:
                # The others wait for this update: its passes may use every core.
                with context.device.worker_context(alone=True):
                    self.optimizer.apply(reduced, trainable_variables)
            except BaseException:
                relay.fail()
                raise
            relay.publish()
        else:
            variables = list(trainable_variables if trainable_variables is not None
                             else self.optimizer.built_variables())
            context.updates_seen += 1
            relay.wait(context.updates_seen)
            for variable, grad in zip(variables, reduced):
                if grad is not None:
                    variable.data[...] = context.leader_weights[id(variable)].data
            self.optimizer.count_steps(1)

    def __getattr__(self, name):
        return getattr(self.optimizer, name)

    def __setattr__(self, name, value):
        setattr(self.optimizer, name, value)

    def __repr__(self):
        return f"<ReplicaOptimizer of {self.optimizer!r}>"


class UpdateRelay:
    """Replica 0's updates, handed to the replicas that copy them: replica 0
    publishes after each ``apply``, the others wait for as many as they made.

    It also answers ``abort``/``reset`` as a collective does, so that a
    replica failing elsewhere releases the waiting ones.
    """

    def __init__(self):
        self._condition = threading.Condition()
        self._published = 0
        self._failed = False

    def publish(self):
        with self._condition:
            self._published += 1
            self._condition.notify_all()

    def fail(self):
        with self._condition:
            self._failed = True
            self._condition.notify_all()

    abort = fail

    def reset(self):
        """Nothing to reset: a relay lives for one step."""

    def wait(self, count):
        with self._condition:
            self._condition.wait_for(lambda: self._published >= count or self._failed)
            if self._failed:
                raise ReplicaAborted("replica 0's update failed during this step; the step was abandoned")


@contextlib.contextmanager
def optimizers_replaced(model, replacements):
    """``model``'s optimizer attributes replaced by ``replacements``
    (``{attribute: ReplicaOptimizer}``) for the block."""
    saved = {name: model.__dict__[name] for name in replacements}
    model.__dict__.update(replacements)
    try:
        yield
    finally:
        model.__dict__.update(saved)
