"""BatchNormalization across replicas.

Local statistics (the default): each replica normalises with its own
shard's statistics and updates its moving statistics from them; at the end
of the step every replica sets ``moving = start + sum_r (n_r / N) * change_r``,
the sample-weighted mean change (the moving statistics declare
``aggregation="mean"``; distribute/replica_step.py combines them), so the
replicas stay identical, and a statistic nobody changed (a frozen layer)
stays exactly.

Synchronized statistics (``sync_batch_norm=True``, or a layer made with
``synchronized=True``): the layer's ``_cross_replica_stats`` hook sums the
per-feature sums of x and x**2 and the counts over the replicas that have
samples in this step (and, in backward, the sums of the output gradient and
of gradient * x_hat), so every replica normalises with the statistics of
the global batch and updates its moving statistics identically. A replica
with no samples in a step (it keeps the others company on a borrowed row)
stays out of the sums and normalises with its own row.
"""
import threading
import weakref

from minikeras import replica_context

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

    def __call__(self, total, squares, count, gradients=False):
        mirrored = self._mirrored()
        if mirrored is None or getattr(running, "owner", None) is not mirrored or mirrored._step_group is None:
            return total, squares, count
        group, positions = mirrored._step_group
        if self._rank not in positions:  # no rows in this batch: not one of the statistics' replicas
            return total, squares, count
        if not gradients:
            return tuple(group.all_reduce(positions[self._rank], [total, squares, count]))
        # Each replica's output gradient is that of its own mean loss, a share
        # ``n_r / N`` of the global one: the global sums are the shares'
        # weighted sums, handed back in the replica's own scale. (A loss that
        # the step's scale_loss weighted already: plain sums.)
        context = replica_context.current()
        if context.loss_weighted:
            return tuple(group.all_reduce(positions[self._rank], [total, squares, count]))
        share = context.share
        total, squares, count = group.all_reduce(positions[self._rank], [total * share, squares * share, count])
        return total / share, squares / share, count
