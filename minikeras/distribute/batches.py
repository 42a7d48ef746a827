"""Splitting batches across replicas and gathering their outputs."""
import numpy

from minikeras import backend
from minikeras.device import registry
from minikeras.autograd import Tensor


def to_arrays(structure):
    """Batch leaves (arrays, Tensors, lists of numbers) as arrays, same nesting."""
    if structure is None:
        return None
    if isinstance(structure, (list, tuple)):
        return type(structure)(to_arrays(item) for item in structure)
    if isinstance(structure, dict):
        return {key: to_arrays(value) for key, value in structure.items()}
    if isinstance(structure, Tensor):
        return structure.data
    return structure if backend.is_array(structure) else numpy.asarray(structure)


def rows(structure, start, stop):
    """Rows ``start:stop`` of every leaf (views, no copies)."""
    if structure is None:
        return None
    if isinstance(structure, (list, tuple)):
        return type(structure)(rows(item, start, stop) for item in structure)
    if isinstance(structure, dict):
        return {key: rows(value, start, stop) for key, value in structure.items()}
    return structure[start:stop]


def batch_length(structure):
    """Samples in a batch (the first leaf's length)."""
    if isinstance(structure, (list, tuple)):
        return batch_length(structure[0])
    if isinstance(structure, dict):
        return batch_length(structure[sorted(structure)[0]])
    return len(structure)


def shard_bounds(total, local_replicas, process_count=1, process_index=0):
    """``(start, stop)`` of each local replica's rows.

    The batch is split evenly over all replicas of all processes, in order;
    the first ``total % replicas`` replicas take one sample more, so a
    batch smaller than the number of replicas leaves the last ones empty.
    """
    everyone = local_replicas * process_count
    base, extra = divmod(total, everyone)
    bounds, start = [], 0
    for rank in range(everyone):
        stop = start + base + (1 if rank < extra else 0)
        bounds.append((start, stop))
        start = stop
    first = process_index * local_replicas
    return bounds[first:first + local_replicas]


def to_host(outputs):
    """Model outputs (a Tensor, or a list or dict of them) as NumPy arrays."""
    if isinstance(outputs, (list, tuple)):
        return [to_host(item) for item in outputs]
    if isinstance(outputs, dict):
        return {key: to_host(item) for key, item in outputs.items()}
    return outputs.numpy() if isinstance(outputs, Tensor) else registry.to_host(outputs)


def concatenate(pieces):
    """The replicas' host outputs joined back in batch order."""
    if isinstance(pieces[0], list):
        return [numpy.concatenate([piece[i] for piece in pieces]) for i in range(len(pieces[0]))]
    if isinstance(pieces[0], dict):
        return {key: numpy.concatenate([piece[key] for piece in pieces]) for key in pieces[0]}
    return numpy.concatenate(pieces) if len(pieces) > 1 else pieces[0]
