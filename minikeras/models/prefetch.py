"""fit/evaluate/predict on a GPU: each batch's inputs uploaded while the
previous step runs.

:func:`batches` wraps the batches a run reads (``(x, y, sample_weight)``
from ``data/data_adapter.py``). Where the model's inputs go to a device
that stages batches (a GPU: ``device.stages_batches``), it reads one batch
ahead: before step k is issued, batch k+1 is read and the NumPy arrays of
its ``x`` are uploaded through pinned buffers on the device's copy stream
(``device/batch_staging.py``), so the copy runs beside step k; step k+1
then gets its ``x`` as Tensors already on the device, its stream ordered
after their copy. Elsewhere (the CPU, a MirroredModel or distributed model, a captured
``jit_compile`` step, which copies its batches into its own static
buffers), the batches pass through untouched, at no cost.

What the step sees is what it saw before: each array is uploaded in the
dtype the model's own input conversion gives it (``Layer._convert_input``:
floating inputs cast on the host to the model's input dtype), so the
results are bit-identical. ``y`` and ``sample_weight`` stay on the host:
the compiled metrics read them there (``models/compile_utils.py``), and
the loss uploads them as before. Reading one batch ahead means that the
data source is read (and runs out, and warns that it did) one batch
earlier than the step, and that a run stopped early (``stop_training``)
has read one batch it did not use; an error raised while reading batch
k+1 is raised after step k, where the plain loop raises it.

``enabled`` (module attribute) switches it off: tests and benchmarks
compare the two paths.
"""
from minikeras.autograd.tensor import from_array
from minikeras.backend.dtypes import as_numpy_dtype, is_float_dtype
from minikeras.device import placement_device
from minikeras.device.batch_staging import BatchStaging, stages
from minikeras._support.nest import flatten, pack_sequence_as

enabled = True


def batches(model, source, training=False):
    """``source`` (an iterable of ``(x, y, sample_weight)``) with ``x``'s
    arrays uploaded one batch ahead where the model's inputs go to a GPU
    (module docstring); ``source`` itself elsewhere."""
    if not enabled or not hasattr(model, "_convert_input") or model._distributed_runner() is not None:
        return source  # (a trainer that is no Layer, MirroredModel, splits the host batches among its replicas)
    if training and model.__dict__.get("_captured_step") is not None:
        return source
    device = placement_device()
    if not device.stages_batches:
        return source
    return _read_ahead(model, device, source)


def _read_ahead(model, device, source):
    staging = BatchStaging(device)
    iterator = iter(source)
    current = following = None
    try:
        current = _stage(model, staging, next(iterator, None))
        while current is not None:
            error = None
            try:
                following = _stage(model, staging, next(iterator, None))
            except Exception as raised:  # noqa: BLE001  (raised after this step, as the plain loop would)
                following, error = None, raised
            yield current.batch()
            if error is not None:
                try:
                    raise error
                finally:
                    error = None  # no frame of this generator keeps the traceback alive
            current = following
    finally:
        for ahead in (current, following):  # a run stopped early, or failed: batches staged and not used
            if ahead is not None:
                ahead.discard()
        staging.close()


def _stage(model, staging, batch):
    """The uploads of ``batch``'s ``x`` launched (a :class:`_Ahead`), or None
    at the end of the source."""
    if batch is None:
        return None
    x, y, sample_weight = batch
    leaves = flatten(x)
    positions = [index for index, leaf in enumerate(leaves) if stages(leaf)]
    if not positions:
        return _Ahead(batch, None, None, positions, None)
    staged = staging.stage([(leaves[i], _input_dtype(model, leaves[i])) for i in positions])
    return _Ahead((x, y, sample_weight), staging.device, leaves, positions, staged)


class _Ahead:
    """One batch read ahead, its uploads in flight."""

    __slots__ = ("_batch", "_device", "_leaves", "_positions", "_staged")

    def __init__(self, batch, device, leaves, positions, staged):
        self._batch, self._device, self._leaves = batch, device, leaves
        self._positions, self._staged = positions, staged

    def discard(self):
        if self._staged is not None:
            self._staged.discard()

    def batch(self):
        """``(x, y, sample_weight)`` with x's staged arrays as device Tensors
        (the device's stream now waits for their copy)."""
        if self._staged is None:
            return self._batch
        x, y, sample_weight = self._batch
        leaves = list(self._leaves)
        for index, array in zip(self._positions, self._staged.arrays()):
            leaves[index] = from_array(array, self._device)
        if len(leaves) == 1 and self._leaves[0] is x:  # one array: no structure to rebuild
            return leaves[0], y, sample_weight
        packed = pack_sequence_as(x, leaves)
        leaves.clear()  # nest's recursive closure (a reference cycle) keeps an iterator over this list
        return packed, y, sample_weight


def _input_dtype(model, array):
    """The dtype the model's input conversion gives the NumPy ``array``
    (``Layer._convert_input``: a floating array is cast on the host to the
    compute dtype where the model autocasts its inputs, else to its variable
    dtype; other arrays keep theirs)."""
    policy = model._dtype_policy
    compute = policy.compute_dtype
    wanted = model._casts_inputs and model.autocast and is_float_dtype(compute)
    if not wanted and is_float_dtype(compute):
        compute = policy.variable_dtype
    if is_float_dtype(compute) and is_float_dtype(array.dtype) and array.dtype.name != compute:
        return as_numpy_dtype(compute)
    return array.dtype
