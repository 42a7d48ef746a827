"""BatchNormalization across replicas.

Local statistics (the default): each replica normalises with its own
shard's statistics and updates its moving statistics from them; after the
step every replica sets ``moving = start + sum_r (n_r / N) * change_r``,
the sample-weighted mean change (the mean itself for the moving mean, since
the shards' means average to the batch mean), so the replicas stay
identical, and a statistic nobody changed (a frozen layer) stays exactly.

Synchronized statistics (``sync_batch_norm=True``, or a layer made with
``synchronized=True``): the layer's ``_cross_replica_stats`` hook sums the
per-feature sums of x and x**2 and the counts over the replicas that have
samples in this step (and, in backward, the sums of the output gradient and
of gradient * x_hat), so every replica normalises with the statistics of
the global batch and updates its moving statistics identically. A replica
with no samples in a step takes replica 0's change.
"""
import threading
import weakref

running = threading.local()  # .owner: the MirroredModel whose step this thread runs


class CrossReplicaStats:
    """The ``_cross_replica_stats`` hook of one replica's layer: sums its
    arguments over this step's replicas with samples. Outside a step of its
    MirroredModel (the wrapped model used alone) it changes nothing.

    Args:
        mirrored: the MirroredModel (held weakly).
        rank: the replica's position.
    """

    def __init__(self, mirrored, rank):
        self._mirrored = weakref.ref(mirrored)
        self._rank = rank

    def __call__(self, total, squares, count):
        mirrored = self._mirrored()
        if mirrored is None or getattr(running, "owner", None) is not mirrored:
            return total, squares, count
        group, positions = mirrored._step_group
        return tuple(group.all_reduce(positions[self._rank], [total, squares, count]))


class ReplicaBatchNorms:
    """One replica's BatchNormalization layers and how each is kept in step.

    Args:
        layers: the replica's BatchNormalization layers, in the same order on
            every replica.
        synchronized: one flag per layer (global statistics or not).
    """

    def __init__(self, layers, synchronized):
        self.layers = list(layers)
        self.synchronized = list(synchronized)

    def snapshot(self):
        """Copies of the moving statistics, before a step."""
        return [(layer.moving_mean.data.copy(), layer.moving_variance.data.copy()) for layer in self.layers]

    def restore(self, before):
        """Put the moving statistics back (the step failed)."""
        for layer, (mean, variance) in zip(self.layers, before):
            layer.moving_mean.data[...] = mean
            layer.moving_variance.data[...] = variance

    def changes(self, before, rank, count, total):
        """This replica's contribution to each statistic's change, for a SUM
        all-reduce (None: nothing): local statistics give their change times
        the replica's share of the batch; synchronized ones, identical on all
        replicas with samples, are given by replica 0 alone (never idle).
        ``rank`` counts the replicas of every process (the global rank)."""
        share = count / total
        result = []
        for layer, synchronized, start in zip(self.layers, self.synchronized, before):
            for weight, value in zip((layer.moving_mean, layer.moving_variance), start):
                if synchronized:
                    result.append(weight.data - value if rank == 0 else None)
                else:
                    result.append((weight.data - value) * share if count else None)
        return result

    def apply(self, before, changes):
        """Set every statistic to ``start + summed change`` (the same on
        every replica)."""
        changes = iter(changes)
        for layer, start in zip(self.layers, before):
            for weight, value in zip((layer.moving_mean, layer.moving_variance), start):
                change = next(changes)
                if change is not None:
                    weight.data[...] = value + change
