"""NcclAllReduce: sums across GPUs with NCCL (``cupy.cuda.nccl``).

Used when every replica is on its own physical GPU and CuPy was built with
NCCL (NCCL refuses two ranks on one GPU: logical GPUs carved from one
physical GPU use LocalAllReduce). CuPy's NCCL module is imported only here,
only when asked for.

Each call: the replicas agree at a host barrier on the entries (a replica
with no samples passes None, and then contributes zeros of the agreed
shape), then each packs its arrays into one flat buffer per dtype on its
own stream and runs ``ncclAllReduce`` in place. The barrier comes first so
that a replica that failed earlier in the step breaks it and nobody is left
waiting inside NCCL. Ring all-reduce gives every rank the same bits.

Untested in this repository's CI (no GPU); see tests/distribute (gpu marker).
"""
import threading

import numpy

from minikeras.distribute.all_reduce import AllReduce, ReplicaAborted


def _nccl_module():
    try:
        from cupy.cuda import nccl
    except Exception:  # ImportError, or CuPy built without NCCL
        return None
    if not getattr(nccl, "available", True):
        return None
    return nccl


def usable(devices):
    """True when NCCL can all-reduce across ``devices``: two or more logical
    GPUs, each on a different physical GPU, and NCCL importable."""
    devices = list(devices)
    if len(devices) < 2 or any(device.cuda_id is None for device in devices):
        return False
    physical = [device.cuda_id for device in devices]
    if len(set(physical)) != len(physical):
        return False
    return _nccl_module() is not None


class NcclAllReduce(AllReduce):
    """All-reduce over NCCL, one communicator per GPU (see module docstring).

    Args:
        devices: logical GPUs, each on a distinct physical GPU.

    Raises:
        RuntimeError: NCCL is not available or the devices do not qualify.
    """

    def __init__(self, devices):
        super().__init__(devices)
        if not usable(self.devices):
            raise RuntimeError(
                "NcclAllReduce needs two or more logical GPUs on distinct physical GPUs and CuPy with NCCL; "
                f"received {[device.canonical for device in self.devices]}. Use LocalAllReduce instead."
            )
        nccl = self._nccl = _nccl_module()
        self._types = {
            numpy.dtype("float16"): nccl.NCCL_FLOAT16,
            numpy.dtype("float32"): nccl.NCCL_FLOAT32,
            numpy.dtype("float64"): nccl.NCCL_FLOAT64,
        }
        self._comms = nccl.NcclCommunicator.initAll([device.physical.index for device in self.devices])
        self._slots = [None] * self.size
        self._layout = None
        self._agreed = threading.Barrier(self.size, action=self._agree)

    def all_reduce(self, rank, arrays, tag=None):
        """See :meth:`AllReduce.all_reduce`."""
        arrays = list(arrays)
        device = self.devices[rank]
        self._slots[rank] = [_describe(value) for value in arrays]
        try:
            self._agreed.wait()
        except threading.BrokenBarrierError:
            raise ReplicaAborted("another replica failed during this step; the step was abandoned") from None
        layout = self._layout
        self._slots[rank] = None
        results = list(layout.numbers)
        cupy = device.xp
        with device.activate():
            for dtype, entries in layout.groups.items():
                total = sum(size for _, _, size in entries)
                flat = cupy.empty(total, dtype=dtype)
                offset = 0
                for index, shape, size in entries:
                    value = arrays[index]
                    if value is None:
                        flat[offset:offset + size] = 0
                    else:
                        flat[offset:offset + size] = value.reshape(-1)
                    offset += size
                self._comms[rank].allReduce(flat.data.ptr, flat.data.ptr, total, self._types[dtype],
                                            self._nccl.NCCL_SUM, device.stream.ptr)
                device.memory.track(flat)
                offset = 0
                for index, shape, size in entries:
                    results[index] = flat[offset:offset + size].reshape(shape)
                    offset += size
        return results

    def _agree(self):
        """Once every replica described its entries: one layout for all."""
        counts = {len(slot) for slot in self._slots}
        if len(counts) != 1:
            raise ValueError(f"all_reduce: the replicas passed different numbers of arrays: {sorted(counts)}.")
        (count,) = counts
        numbers = [None] * count
        groups = {}
        for index in range(count):
            described = [slot[index] for slot in self._slots if slot[index] is not None]
            if not described:
                continue
            if described[0][0] == "number":
                total = described[0][1]
                for _, value in described[1:]:
                    total = total + value
                numbers[index] = total
                continue
            _, shape, dtype = described[0]
            if dtype not in self._types:
                raise TypeError(f"NcclAllReduce: dtype {dtype} is not supported (float16/32/64 only).")
            groups.setdefault(dtype, []).append((index, shape, int(numpy.prod(shape, dtype=numpy.int64))))
        self._layout = _Layout(numbers, groups)

    def abort(self):
        """See :meth:`AllReduce.abort`."""
        self._agreed.abort()

    def reset(self):
        """See :meth:`AllReduce.reset`."""
        self._agreed.reset()
        self._slots = [None] * self.size

    def close(self):
        """Destroy the NCCL communicators."""
        for comm in self._comms or ():
            comm.destroy()
        self._comms = None


class _Layout:
    __slots__ = ("numbers", "groups")

    def __init__(self, numbers, groups):
        self.numbers = numbers
        self.groups = groups  # dtype -> [(entry index, shape, size)]


def _describe(value):
    if value is None:
        return None
    if not hasattr(value, "dtype") or not hasattr(value, "shape"):
        return ("number", value)
    return ("array", tuple(value.shape), numpy.dtype(value.dtype))
