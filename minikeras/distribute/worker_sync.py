"""Starting workers from the same point: model check, broadcasts, checksums.

Workers need not share a seed: before the first step, process 0's weights
and optimizer state are sent to every worker, and a checksum of each
worker's copy is compared, so the equality is checked, not assumed. First
the models' architectures are compared layer by layer, so that a worker
built with other layer sizes stops every worker with an error naming the
layer instead of a shape error deep inside an all-reduce.
"""
import json
import zlib

import numpy


def _describe_layer(layer):
    return [layer.name, type(layer).__name__,
            [[list(weight.shape), str(numpy.dtype(weight.dtype))] for weight in layer.weights]]


def _same(first, second):
    """Layers match by class and weights; names may differ between workers
    (automatic names count the layers a process made before)."""
    return first[1:] == second[1:]


def _format(description):
    name, kind, weights = description
    shapes = ", ".join(f"{tuple(shape)} {dtype}" for shape, dtype in weights) or "no weights"
    return f"layer {name!r} ({kind}) with weights [{shapes}]"


def check_same_model(group, model):
    """Raise on every worker when the workers' models differ.

    Args:
        group: the ProcessGroup.
        model: this worker's built Model.

    Raises:
        ValueError: on every worker, naming the first layer (position, name,
            class and weight shapes) where some worker's model differs from
            worker 0's in class or weight shapes.
    """
    mine = [_describe_layer(layer) for layer in model.layers]
    reference = json.loads(group.broadcast_bytes(json.dumps(mine).encode(), what="model check").decode())
    first = next((i for i, (a, b) in enumerate(zip(mine, reference)) if not _same(a, b)), None)
    if first is None and len(mine) != len(reference):
        first = min(len(mine), len(reference))
    differences = group.gather_scalars(-1 if first is None else first, what="model check")
    if (differences < 0).all():
        return
    workers = [int(p) for p in numpy.flatnonzero(differences >= 0)]
    position = int(min(differences[differences >= 0]))
    culprit = next(p for p in workers if differences[p] == position)
    # Every worker prints the same full message: the culprit's layer too.
    own = _format(mine[position]) if position < len(mine) else f"no layer (only {len(mine)} layers)"
    theirs = group.broadcast_bytes(own.encode(), root=culprit, what="model check").decode()
    reference_layer = (_format(reference[position]) if position < len(reference)
                       else f"no layer (only {len(reference)} layers)")
    raise ValueError(f"The workers' models differ (workers {workers} differ from worker 0): at layer #{position} "
                     f"worker {culprit} has {theirs}, worker 0 has {reference_layer}. Every worker must build the "
                     "same model.")


def broadcast_arrays(group, arrays, what="broadcast"):
    """Process 0's values of ``arrays`` (host arrays, same shapes and dtypes
    on every worker), one flat buffer per dtype."""
    arrays = [numpy.asarray(array) for array in arrays]
    result = [None] * len(arrays)
    by_dtype = {}
    for index, array in enumerate(arrays):
        by_dtype.setdefault(array.dtype, []).append(index)
    for dtype, indexes in by_dtype.items():
        flat = numpy.concatenate([arrays[i].reshape(-1) for i in indexes]) if indexes else numpy.zeros(0, dtype)
        flat = group.broadcast(flat, what=what)
        offset = 0
        for i in indexes:
            size = arrays[i].size
            result[i] = flat[offset:offset + size].reshape(arrays[i].shape)
            offset += size
    return result


def checksum(arrays):
    """A CRC32 of the arrays' bytes (values, shapes and dtypes)."""
    value = 0
    for array in arrays:
        array = numpy.ascontiguousarray(array)
        value = zlib.crc32(repr((array.shape, array.dtype.str)).encode(), value)
        value = zlib.crc32(array.view(numpy.uint8).reshape(-1), value)
    return value


def check_in_sync(group, arrays, what):
    """Raise on every worker unless every worker holds the same ``arrays``
    bit for bit.

    Raises:
        RuntimeError: naming the workers whose copies differ from worker 0's.
    """
    sums = group.gather_scalars(checksum(arrays), what=f"{what} check")
    if (sums != sums[0]).any():
        raise RuntimeError(f"{what} differ between workers: workers "
                           f"{[int(p) for p in numpy.flatnonzero(sums != sums[0])]} hold other values than worker 0.")


def sync_model(group, model):
    """Check the architectures, then give every worker process 0's weights
    (checked by checksum)."""
    check_same_model(group, model)
    values = broadcast_arrays(group, model.get_weights(), what="weight broadcast")
    model.set_weights(values)
    check_in_sync(group, model.get_weights(), "weights")


def sync_optimizers(group, optimizers):
    """Give every optimizer process 0's state of the first (all built on the
    same architecture), checked by checksum."""
    state = broadcast_arrays(group, optimizers[0].get_state(), what="optimizer state broadcast")
    for optimizer in optimizers:
        optimizer.set_state(state)
    check_in_sync(group, optimizers[0].get_state(), "optimizer states")
