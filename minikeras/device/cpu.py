"""The CPU: NumPy arrays, the op-thread pool and the BLAS thread policy.

This module and ``backend/`` are the only places that know about the op
threads (``minikeras.backend.threads``) and the BLAS thread count; ops,
optimizers and the distribution code call the device's block helpers.
"""
import contextlib
import os

import numpy

from minikeras.backend import blas_threads, threads, tuning
from minikeras.device.device import Device


class CpuDevice(Device):
    """A logical CPU device.

    Arrays are NumPy arrays in host memory, so ``to_host`` returns the array
    itself and ``asarray`` copies only what comes from another device.
    Heavy ops share their blocks among the op threads
    (``minikeras.backend.threads``, which also keeps BLAS single-threaded
    meanwhile): ``parallel_blocks``, ``row_blocks``, ``elementwise_blocks``,
    ``matmul`` and ``matmul_all`` are the hooks ops call.
    """

    kind = "cpu"
    xp = numpy
    host_kernels = True

    def asarray(self, value, dtype=None):
        if not isinstance(value, numpy.ndarray):
            from minikeras.device import registry  # registry imports this module

            if registry.is_device_array(value):
                value = registry.owner_of(value).to_host(value)
        array = numpy.asarray(value)
        if dtype is not None and array.dtype != dtype:
            array = array.astype(dtype)
        return array

    def to_host(self, array):
        if isinstance(array, numpy.ndarray):
            return array
        return numpy.asarray(array)

    def item(self, array):
        return array.reshape(()).item()

    def bounds(self, array):
        return int(array.min()), int(array.max())

    def matmul(self, a, b):
        """``a @ b``; float16 and bfloat16 products run as float32 BLAS
        calls rounded back to the 16-bit dtype (NumPy has no 16-bit BLAS:
        its float16 loop is ~300x slower than float32 and ml_dtypes'
        bfloat16 one returns float32). The result equals a 16-bit GEMM with
        float32 accumulation, what GPU tensor cores compute."""
        if a.dtype.itemsize == 2 and a.dtype == b.dtype and a.dtype.name in ("float16", "bfloat16"):
            return self.matmul(a.astype(numpy.float32), b.astype(numpy.float32)).astype(a.dtype)
        if a.ndim == 2 and b.ndim == 2:
            return threads.matmul(a, b)
        return a @ b

    def matmul_all(self, pairs):
        # Products each too small to split run at once, one per op thread;
        # larger ones are split in turn; all together too small to be worth
        # a hand-off to a thread, they run here one after another.
        work = [a.shape[0] * a.shape[1] * b.shape[1] if a.ndim == 2 and b.ndim == 2 else None for a, b in pairs]
        if None not in work and sum(work) < tuning.PARALLEL_PRODUCTS_MIN:
            return [self.matmul(a, b) for a, b in pairs]
        if all(a.shape[0] * a.shape[1] * b.shape[1] < tuning.PARALLEL_MATMUL_MIN and a.dtype.itemsize > 2
               for a, b in pairs):
            return self.parallel_blocks(lambda block, _: pairs[block][0] @ pairs[block][1], len(pairs))
        return [self.matmul(a, b) for a, b in pairs]

    def parallel_blocks(self, work, count, setup=None):
        return threads.parallel_blocks(work, count, setup if setup is not None else (lambda: None))

    def row_blocks(self, work, rows, elements):
        return threads.row_blocks(numpy, work, rows, elements)

    def elementwise_blocks(self, work, arrays):
        present = [a for a in arrays if a is not None]
        if (not present or present[0].size < tuning.ELEMENTWISE_PARALLEL_MIN or threads.num_threads() == 1
                or not all(a.flags.c_contiguous for a in present)):
            work(*arrays)  # small, or a flat view would be a copy
            return
        flat = [None if a is None else a.reshape(-1) for a in arrays]
        threads.elementwise_blocks(lambda piece: work(*[None if a is None else a[piece] for a in flat]),
                                   present[0].size)

    def worker_context(self, alone=False):
        return threads.single_threaded(not alone)

    def scatter_add(self, target, indices, values):
        numpy.add.at(target, indices, values)

    def new_rng(self, entropy):
        return numpy.random.default_rng(entropy)

    def normal(self, rng, size, loc, scale):
        return rng.normal(loc=loc, scale=scale, size=size)

    def copy_array(self, array):
        return array.copy()

    def copy_from(self, array, source):
        host = source.to_host(array)
        return host.copy() if host is array else host


def replicas_share_cores(devices, blas_count="auto"):
    """Context in which replicas on ``devices`` run at once: while two or
    more of them are CPU devices, BLAS uses at most ``blas_count`` threads
    (``"auto"``: cores // CPU replicas; None: BLAS left alone), since the
    replicas' threads already use the cores and BLAS threads on top of them
    oversubscribe the cores (backend/blas_threads.py)."""
    cpus = [device for device in devices if device.host_kernels]
    if blas_count is None or len(cpus) < 2:
        return contextlib.nullcontext()
    if blas_count == "auto":
        blas_count = max(1, (os.cpu_count() or 1) // len(cpus))
    return blas_threads.at_most(blas_count)
