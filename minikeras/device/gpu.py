"""A logical GPU: CuPy arrays on the device's own stream and memory pool.

Streams, and why the GPU path is race-free
------------------------------------------
Each logical GPU owns one CuPy memory pool and one stream, created
*blocking* (``cupy.cuda.Stream(non_blocking=False)``), and
:meth:`GpuDevice.activate` makes the physical CUDA device, that stream and
that pool current (once: an activation inside another of the same device
and stream enters nothing, ``_Activation``). The library keeps these rules:

1. Every op forward (``Function.apply``), every backward step
   (``autograd.engine``), the optimizer update, the loss and metric
   updates, weight assignment and every host read (``to_host``, ``item``)
   run inside ``activate()`` of the device that owns the arrays. So all
   work on a logical GPU is issued to its one stream, in program order, and
   a stream runs its work in issue order: reads after writes, writes after
   reads and frees before reuse are all ordered on that stream.
2. Memory: CuPy's pool returns a freed block to the arena of the stream
   that allocated it (memory.pyx: a chunk keeps its arena) and hands it out
   again only to work on that stream, which is this device's stream (rule
   1), so a reused block is never written while an earlier kernel of this
   stream still reads it; reads by another device's stream are ordered
   before the free by rule 4's second event.
3. Host reads go through ``to_host``: the copy is issued on the device's
   stream after the work that produced the array, and ``get()`` waits for
   it before returning, so the host never sees stale data. Host uploads
   (``asarray``) are issued on the same stream, before the work that reads
   them.
4. Copies between devices (``asarray`` of an array another device
   allocated, another logical GPU of the same physical GPU included, as
   ``Tensor.to``, ``autograd/transfer.py`` and the optimizer's state moves do)
   record an event on the source stream and make the target stream wait
   for it before the copy, so the copy reads finished data; then they
   record an event on the target stream and make the source stream wait
   for it, so the source block is not freed and reused under the copy.
5. Anything that still slipped outside ``activate()`` would run on the
   legacy null stream; because the device streams are blocking, the null
   stream waits for them and they wait for it, so such a slip costs
   concurrency, never correctness.

Allocations inside ``activate()`` come from the device's pool through an
allocator that turns CuPy's OutOfMemoryError into
:class:`~minikeras.errors.ResourceExhaustedError`; ``activate()`` itself
converts any OutOfMemoryError raised in its scope, so the raw CuPy error
never reaches the user.

Memory (CuPy 14.2 facts from cupy/cuda/memory.pyx):

- The user's limit is enforced by that allocator, from the pool's count of
  bytes in use (``used_bytes``: live chunks, each rounded up to 512 bytes,
  ``_round_size``), before the pool is asked. CuPy's own ``set_limit`` is
  also set, as a cap on what the pool may hold in total, but CuPy checks it
  only on a cache miss, so with the up-front reserve cached it would let
  any allocation that fits the cache through.
- The reserve is taken from the pool directly, not through the allocator,
  so it is never counted in ``current`` or ``peak``.
- A pool that is dropped never gives its cached blocks back to the driver
  (its arenas hold their chunks by raw references), so :meth:`release_memory`
  (``free_all_blocks``) runs before a device is dropped, and on
  ``config.release_memory`` / ``keras.backend.clear_session()``.
- Each array allocated in ``activate()`` carries its owner: its memory
  (``array.data.mem``, a ``PooledMemory``, which has a ``__dict__``) is
  tagged with a weak reference to the logical GPU, so two logical GPUs of
  one physical GPU never claim each other's arrays.

This class is the only GPU device. The test suite runs it on a simulated
CuPy (``minikeras.testing.sim_cupy``, with ``MINIKERAS_SIMULATED_GPU=1``),
whose race detector checks the rules above on every run: a read, write or
reuse of memory by one stream with no event after another stream's use is
an error there.
"""
import sys
import threading
import weakref

import numpy

from minikeras.device import cublas_direct, graph, precision, scatter
from minikeras.device.device import Device
from minikeras.device import cuda_errors
from minikeras.errors import ResourceExhaustedError


class GpuDevice(Device):
    """A logical GPU (one CuPy stream and memory pool) on a physical GPU.

    Args:
        index: logical index among GPUs.
        physical: the PhysicalDevice (``physical.index`` is the CUDA id).
        memory: its GpuMemoryStats (reads its pool).
        cupy: the cupy module.
        pool: the CuPy MemoryPool of this logical device.
        stream: its (blocking) CuPy stream.
    """

    kind = "gpu"

    def __init__(self, index, physical, memory, cupy, pool, stream):
        super().__init__(index, physical, memory)
        self.xp = cupy
        self.cuda_id = physical.index
        self.pool = pool
        self.stream = stream
        self._allocator = _pool_allocator(self)  # holds no reference to the device: no cycle
        # What activate() returns, as an attribute: Function.apply and the
        # backward pass enter it per op without calling activate().
        self.activation_context = _Activation(self)
        self.array_type = cupy.ndarray  # Function.apply: an op's output needs no conversion
        # minikeras.kernels compiles its CUDA sources where CuPy can (RawKernel);
        # a CuPy without a CUDA compiler (the test suite's simulated CuPy) runs
        # each fused kernel's NumPy reference instead, counted as one launch.
        self.compiles_kernels = hasattr(cupy, "RawKernel")

    supports_graphs = True
    counts_kernel_launches = True
    stages_batches = True  # device/batch_staging.py

    def one_kernel(self):
        """The array calls inside count as one kernel launch in ``stats``:
        a fused kernel's NumPy reference, which a GPU that compiles the
        kernel runs as one (``minikeras.kernels``)."""
        return _OneKernel(self.stats)

    def capture(self, mode="relaxed"):
        """Capture the work issued in this block into a CUDA graph
        (``device/graph.py``): ``with device.capture() as c: ...``, then
        ``c.graph.launch()``."""
        graph.check_mode(mode)  # here, not when the block is entered
        return graph.capture_cuda(self, mode)

    def activate(self):
        """Context in which this logical GPU's arrays are made and its work
        runs: its CUDA device, stream and pool current (module docstring).
        Re-entrant and cheap when already inside (:class:`_Activation`)."""
        return self.activation_context

    def convolutions(self):
        from minikeras.device import cudnn

        return cudnn.for_device(self.xp, self.cuda_id)

    def matmul(self, a, b):
        """``a @ b`` on cuBLAS. 16-bit and batched products of one float
        dtype go to ``cublasGemmEx`` / ``cublasGemmStridedBatchedEx``
        directly (``device/cublas_direct.py``: 16-bit inputs and outputs,
        float32 accumulation, TF32 for float32 as ``device/precision.py``
        says), eagerly and during a capture; 2-D float32/float64 products are
        CuPy's outside a capture (its compute type follows the TF32 switch),
        cuBLAS's GEMM called directly during one (CuPy refuses cuBLAS then)."""
        capturing = getattr(graph.thread_state, "capture", None) is not None  # graph.active_capture(), inline
        if cublas_direct.takes(a, b):
            if capturing or a.ndim > 2 or b.ndim > 2 or a.dtype.name in ("float16", "bfloat16"):
                return cublas_direct.matmul(self.xp, a, b, capturing)
            precision.sync_cupy(self.xp, self.cuda_id)
            return a @ b  # 2-D float32/float64: Device.matmul's product, without the call
        return super().matmul(a, b)  # other dtypes: CuPy's (refused during a capture where it is cuBLAS)

    def gemm(self, a, b, out=None):
        if getattr(graph.thread_state, "capture", None) is not None:  # CuPy refuses cuBLAS now: call it directly
            return cublas_direct.gemm(self.xp, a, b, out)
        if a.dtype.name in ("float16", "bfloat16") and a.ndim == 2 and b.ndim == 2 and cublas_direct.takes(a, b):
            result = cublas_direct.matmul(self.xp, a, b)
            if out is None:
                return result
            out[...] = result
            return out
        precision.sync_cupy(self.xp, self.cuda_id)
        if out is None:  # Device.gemm, without the call
            return a @ b
        return self.xp.matmul(a, b, out=out)

    def synchronize(self):
        graph.refuse_in_capture(self, "synchronize()", graph.HOST_SYNC)
        self.stats.host_syncs += 1
        self.stream.synchronize()

    def is_array(self, value):
        return isinstance(value, self.xp.ndarray)

    def owns(self, array):
        """True for an array allocated in this logical GPU's ``activate()``
        (its memory is tagged with this device: module docstring)."""
        if not isinstance(array, self.array_type):
            return False
        # None: allocated outside any activate() (a zero-size array's memory has no __dict__)
        owner = getattr(getattr(array.data, "mem", None), "minikeras_owner", None)
        return owner is not None and owner() is self

    def release_memory(self):
        """Give the pool's cached, unused blocks back to the driver
        (``free_all_blocks``); arrays in use keep theirs."""
        with self.xp.cuda.Device(self.physical.index):
            self.pool.free_all_blocks()

    def asarray(self, value, dtype=None):
        cupy = self.xp
        with self.activate():
            if isinstance(value, cupy.ndarray):
                # Another logical GPU's array, even on this physical GPU, is
                # copied with events (rule 4): read in place, it would be read
                # on this stream, unordered with the stream that wrote it.
                array = value if self.owns(value) else self.copy_from(value, _owner(value))
            else:
                from minikeras.device import registry

                if not isinstance(value, numpy.ndarray) and registry.is_device_array(value):
                    value = registry.owner_of(value).to_host(value)
                graph.refuse_in_capture(self, "an upload from the host", graph.UPLOAD)
                self.stats.uploads += 1
                array = cupy.asarray(value)
            if dtype is not None and array.dtype != dtype:
                array = array.astype(dtype)
        return array

    def copy_from(self, array, source):
        """A copy of ``array`` (on device ``source``) on this device, ordered
        after the source's pending work by events (module docstring, rule 4)."""
        cupy = self.xp
        graph.refuse_in_capture(self, f"a copy from {source.canonical if source else 'the host'}",
                                "work of another stream or the host is not part of the captured stream.")
        if not isinstance(array, cupy.ndarray):  # a host (or other kind of) array: upload it
            host = array if source is None else source.to_host(array)
            with self.activate():
                self.stats.uploads += 1
                return cupy.array(host, copy=True)
        self.stats.device_copies += 1
        if source is not None:
            ready = source.stream.record()
            self.stream.wait_event(ready)
        with self.activate():
            copied = cupy.array(array, copy=True)
        if source is not None:
            done = self.stream.record()
            source.stream.wait_event(done)
        return copied

    def to_host(self, array):
        if isinstance(array, numpy.ndarray):
            return array
        graph.refuse_in_capture(self, "a read to the host", graph.HOST_SYNC)
        self.stats.host_syncs += 1
        with self.activate():
            return array.get(stream=self.stream)

    def item(self, array):
        return self.to_host(array).reshape(()).item()

    def scatter_add(self, target, indices, values):
        scatter.scatter_add(self.xp, target, indices, values)  # CuPy's add.at takes only some dtypes

    def scatter_reduce(self, op, target, indices, values):
        scatter.scatter_reduce(self.xp, op, target, indices, values)  # CuPy's ufunc.at: some ops and dtypes

    def new_rng(self, entropy):
        seed = None if entropy is None else int(numpy.random.SeedSequence(entropy).generate_state(1)[0])
        with self.activate():
            return _Generator(self.xp.random.default_rng(seed), self, entropy)

    def copy_array(self, array):
        with self.activate():
            return array.copy()


# This thread's activations, innermost last: (device, stream, contexts entered).
_activations = threading.local()


class _Activation:
    """``GpuDevice.activate()``: one per logical GPU, re-entrant (its state
    lives on a per-thread stack).

    Entering makes the CUDA device, the device's stream and its allocator
    current, unless this thread's innermost activation is already of this
    device *and* its current stream: then CuPy's three contexts are current
    and nothing is entered, which is what most activations are (an op inside
    a layer inside a training step). The stream object is compared because a
    graph capture swaps ``device.stream`` (and the allocator with it) for its
    side stream (``device/graph.py``): an activation inside a capture enters
    the side stream even inside an activation from before it. Every
    activation, entered or not, checks that no other device is capturing and
    turns CuPy's out-of-memory and CUDA errors into the library's.
    """

    __slots__ = ("_device",)

    def __init__(self, device):
        self._device = weakref.ref(device)  # the device holds its activation: no cycle

    def __enter__(self):
        device = self._device()
        capture = getattr(graph.thread_state, "capture", None)  # graph.active_capture(), inline: once per op
        if capture is not None and capture.device is not device:
            graph.refuse_in_capture(device, "work", "work on another device's stream is not part of the captured "
                                    "stream (CUDA would run it once, now, and never at a replay).")
        stream = device.stream
        try:
            stack = _activations.stack
        except AttributeError:
            stack = _activations.stack = []
        if stack and stack[-1][0] is device and stack[-1][1] is stream:
            stack.append((device, stream, ()))
            return device
        cuda = device.xp.cuda
        contexts = (cuda.Device(device.cuda_id), stream, cuda.using_allocator(device._allocator))
        entered = []
        try:
            for context in contexts:
                context.__enter__()
                entered.append(context)
        except BaseException:
            for context in reversed(entered):
                context.__exit__(None, None, None)
            raise
        stack.append((device, stream, entered))
        return device

    def __exit__(self, kind, value, traceback):
        device, _, entered = _activations.stack.pop()
        for context in reversed(entered):
            context.__exit__(None, None, None)
        if kind is None or not issubclass(kind, Exception):
            return False
        del value, traceback  # no frame on the new error's traceback keeps the old one (cuda_errors.reraise)
        if issubclass(kind, device.xp.cuda.memory.OutOfMemoryError):
            error = sys.exc_info()[1]
            size = getattr(error, "size", 0) or 0
            del error
            raise ResourceExhaustedError(device.canonical, size, device.memory.current, device.memory.limit) from None
        if cuda_errors.component(sys.exc_info()[1]) is not None:  # CUDA errors of work outside an op
            cuda_errors.reraise(device)
        return False


class _OneKernel:
    """``GpuDevice.one_kernel()``: whatever the array module counted inside
    (the simulated CuPy counts each call), one launch; none on an error."""

    __slots__ = ("stats", "before")

    def __init__(self, stats):
        self.stats = stats

    def __enter__(self):
        self.before = self.stats.kernel_launches

    def __exit__(self, kind, value, traceback):
        self.stats.kernel_launches = self.before + (1 if kind is None else 0)
        return False


def _owner(array):
    from minikeras.device import registry

    return registry.owner_of(array)


class _Generator:
    """A ``cupy.random.Generator`` that ``copy.deepcopy`` (of a model whose
    layers hold seeded generators) can copy: CuPy's BitGenerator holds a
    ``threading.Lock`` (cupy/random/_bit_generator.pyx, v14.2.0), which
    cannot be copied, and its cuRAND states live in a device array
    (``_state``). The copy gets a new lock and its own copy of the states,
    so it draws what the original would draw next, independently."""

    __slots__ = ("_generator", "_device", "entropy", "__weakref__")

    def __init__(self, generator, device, entropy=None):
        self._generator = generator
        self._device = weakref.ref(device)  # device.rng holds the generator: no cycle
        self.entropy = entropy  # what it was seeded from: the key of its stream in a captured step

    @property
    def device(self):
        """The device it draws on (kernels/captured_random.py)."""
        return self._device()

    def __getattr__(self, name):
        value = getattr(self._generator, name)
        if callable(value) and graph.active_capture() is not None:
            graph.refuse_in_capture(self._device(), f"Generator.{name}", "random layers draw from generators "
                                    "that are not captured (a graph would replay this step's random numbers).")
        return value

    def __deepcopy__(self, memo):
        import copy
        import threading

        device = self._device()
        xp = device.xp
        with device.activate():
            bit_generator = copy.copy(self._generator.bit_generator)
            bit_generator.lock = threading.Lock()
            clone = copy.copy(self._generator)
            clone.bit_generator = bit_generator
            for owner in (bit_generator, clone):
                for name, value in vars(owner).items():
                    if isinstance(value, xp.ndarray):
                        setattr(owner, name, value.copy())
        return _Generator(clone, device, self.entropy)


def _round_size(size):
    """CuPy's ``_round_size`` (memory.pyx): up to a multiple of 512 bytes."""
    return -(-int(size) // 512) * 512


def _fragmentation(pool, size, limit):
    """Why the pool refused what the bytes in use leave room for: the blocks
    it holds are split around live arrays, which CuPy cannot give back
    (``free_all_blocks`` frees whole chunks only), and a new chunk would take
    what it holds past the limit or the driver's free memory."""
    held, used = pool.total_bytes(), pool.used_bytes()
    if limit is None or used + _round_size(size) > limit:
        return ""
    return (f"The pool holds {held} bytes, {held - used} of them free but split around live arrays, "
            f"and no free block fits: the memory is fragmented.")


def _pool_allocator(device, pool=None):
    """The logical GPU's pool as CuPy's allocator (module docstring): the
    user's limit checked on the bytes in use (of ``pool``, the device's own
    by default), CuPy's OutOfMemoryError turned into
    ResourceExhaustedError, the peak kept, and each allocation tagged with
    its owner. The closure holds the device weakly, so the device and its
    allocator form no reference cycle.

    The pool is read only when it must be: before an allocation when a
    limit is set, and after one only when the pool may have passed the peak.
    Its bytes in use grow only by this allocator's allocations (each exactly
    its size rounded up to 512 bytes), so they are at most what was last
    read plus what was allocated since; while that bound is below the peak,
    no allocation can have made a new one, and the peak stays exact."""
    pool = device.pool if pool is None else pool  # another: a graph capture's private pool
    memory, name = device.memory, device.canonical
    owner = weakref.ref(device)
    out_of_memory = device.xp.cuda.memory.OutOfMemoryError
    # [bytes in use when the pool was last read (unknown yet: read at the first allocation), bytes allocated since]
    last_read = [float("inf"), 0]

    def malloc(size):
        rounded = -(-size // 512) * 512  # _round_size, inline: this runs for every array
        limit = memory.limit
        if limit is not None:
            in_use = pool.used_bytes()  # in activate(): the pool's CUDA device is current
            if in_use + rounded > limit:
                raise ResourceExhaustedError(name, size, in_use, limit)
            last_read[0], last_read[1] = in_use, 0
        try:
            pointer = pool.malloc(size)
        except out_of_memory:
            raise ResourceExhaustedError(name, size, pool.used_bytes(), limit, _fragmentation(pool, size, limit)) from None
        bound = last_read[0] + last_read[1] + rounded
        if bound > memory.peak:
            used = pool.used_bytes()
            last_read[0], last_read[1] = used, 0
            if used > memory.peak:
                memory.peak = used
        else:
            last_read[1] += rounded
        try:
            pointer.mem.minikeras_owner = owner
        except AttributeError:  # a zero-size allocation's plain Memory(0): no __dict__, nothing to own
            pass
        return pointer

    return malloc
