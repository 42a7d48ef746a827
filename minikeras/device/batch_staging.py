"""Batches uploaded to a GPU through pinned memory, on a copy stream.

A plain upload (``device.asarray`` of a NumPy batch) is a copy from
pageable memory on the device's stream: the host stages the bytes and the
device's work waits behind it. :class:`BatchStaging` uploads a batch
instead while the previous step still runs (``models/prefetch.py`` asks for
batch k+1 before step k is issued):

1. the host copies each array of the batch into a pinned (page-locked)
   buffer of its slot (NumPy; a cast to the dtype asked for is done by the
   same copy); the slots are two per array of the batch, used in turn, and
   kept across the run (a larger array grows its buffer; a smaller one, the
   last partial batch, uses the front of it);
2. the copy to the device is ``ndarray.set(pinned, stream=copy_stream)``
   (``cudaMemcpyAsync``) on the logical GPU's copy stream (one per logical
   GPU, ``Stream(non_blocking=True)``), into arrays allocated as any of the
   device's arrays (its pool, its stream's arena); an event recorded after
   the copies is the batch's;
3. :meth:`Staged.arrays` makes the device's own stream wait for that event
   before the step that reads the arrays is issued.

The race-freedom rules (device/gpu.py's, for this second stream):

- a slot's pinned buffer is written by the host again only after the host
  waited for the event of the copies that last read it (two batches
  earlier: done long before, unless the host runs far ahead of the GPU);
- the arrays come from the device stream's arena, whose blocks that stream
  may still be reading (CuPy reuses a freed block at once, in stream
  order), so the copy stream waits for an event of the device's stream
  recorded after the allocations: issued before step k, it covers step k-1,
  and the copy of batch k+1 runs beside step k;
- the device's stream reads the arrays only after waiting for their copy
  (:meth:`Staged.arrays`), and waits for it too when a staged batch is not
  used (:meth:`Staged.discard`): the blocks go back to its arena, to be
  written by its later work.

Keeping the arrays in the device stream's arena (rather than the copy
stream's) keeps the pool as it was: a block cached in another arena would
serve the device's own work no more, and under a memory limit split the
budget in two.

The simulated CuPy checks each rule (its race detector and its model of
pinned memory, ``testing/sim_cupy/cuda/pinned_memory.py``).
"""
import weakref

import numpy

SLOTS = 2  # pinned buffers per array of a batch, used in turn
_copy_streams = weakref.WeakKeyDictionary()  # logical GPU -> its copy stream


def copy_stream(device):
    """The logical GPU's copy stream, made on first use and kept for the
    device's life."""
    stream = _copy_streams.get(device)
    if stream is None:
        with device.xp.cuda.Device(device.cuda_id):
            stream = _copy_streams[device] = device.xp.cuda.Stream(non_blocking=True)
    return stream


def stages(array):
    """Whether ``array`` is uploaded through the staging buffers: a
    C-contiguous NumPy array of numbers with at least one element (anything
    else takes the plain path)."""
    return (type(array) is numpy.ndarray and array.dtype.kind in "biuf" and array.ndim > 0 and array.size > 0
            and array.flags.c_contiguous)


class BatchStaging:
    """Uploads of batches to one logical GPU (module docstring). One per
    run of fit/evaluate/predict; :meth:`close` when the run ends.

    Args:
        device: a GpuDevice.
    """

    def __init__(self, device):
        self.device = device
        self.stream = copy_stream(device)
        self._buffers = {}  # (array position, slot) -> pinned memory pointer
        self._last_copy = [None] * SLOTS  # per slot: the event of the copies that read its buffers last
        self._turn = 0

    def stage(self, arrays):
        """Launch the uploads of one batch.

        Args:
            arrays: ``(array, dtype)`` pairs: host arrays accepted by
                :func:`stages` and the dtype each is uploaded as.

        Returns:
            A :class:`Staged` whose ``arrays()`` are the device arrays.
        """
        slot, self._turn = self._turn, (self._turn + 1) % SLOTS
        previous = self._last_copy[slot]
        if previous is not None:
            previous.synchronize()  # the copies that read this slot's buffers are done
        device, stream = self.device, self.stream
        cupy = device.xp
        with device.activate():
            uploaded = [cupy.empty(array.shape, dtype) for array, dtype in arrays]
            self._follow_device()
            for position, ((array, dtype), target) in enumerate(zip(arrays, uploaded)):
                dtype = numpy.dtype(dtype)
                host = self._pinned(position, slot, array.size * dtype.itemsize)
                host = numpy.frombuffer(host, dtype, array.size).reshape(array.shape)
                numpy.copyto(host, array, casting="unsafe")
                target.set(host, stream=stream)
                device.stats.uploads += 1
            event = stream.record()
        self._last_copy[slot] = event
        return Staged(device, uploaded, event)

    def _follow_device(self):
        """The copy stream waits for the work issued so far to the device's
        stream: the last uses of the blocks just allocated (module
        docstring)."""
        self.stream.wait_event(self.device.stream.record())

    def _pinned(self, position, slot, nbytes):
        """The pinned buffer of array ``position`` in ``slot``, at least
        ``nbytes`` long (a new one, from CuPy's pinned pool, only when the
        array is larger than any before)."""
        key = (position, slot)
        buffer = self._buffers.get(key)
        if buffer is None or buffer.size() < nbytes:
            self._buffers[key] = buffer = self.device.xp.cuda.alloc_pinned_memory(max(nbytes, 1))
        return buffer

    def close(self):
        """Wait for the copies still reading the pinned buffers, then hand the
        buffers back to CuPy's pinned pool (which reuses them at once)."""
        for event in self._last_copy:
            if event is not None:
                event.synchronize()
        self._last_copy = [None] * SLOTS
        self._buffers.clear()


class Staged:
    """One batch's uploads, in flight on the copy stream."""

    __slots__ = ("device", "_arrays", "_event")

    def __init__(self, device, arrays, event):
        self.device, self._arrays, self._event = device, arrays, event

    def arrays(self):
        """The device arrays, once the device's stream waits for their copy:
        call it right before the work that reads them is issued."""
        self.device.stream.wait_event(self._event)
        arrays, self._arrays = self._arrays, None
        return arrays

    def discard(self):
        """A batch that will not be used: the device's stream waits for its
        copy all the same, before the arrays' blocks go back to its arena."""
        if self._arrays is not None:
            self.device.stream.wait_event(self._event)
            self._arrays = None
