"""Physical devices, logical-device configuration, and the Device base class.

A logical device is an instance of a :class:`Device` subclass, which owns
everything that differs by backend (Chainer's ``chainer.backend`` device
classes are the model):

- :class:`~minikeras.device.cpu.CpuDevice`: NumPy arrays, the op-thread pool
  and the BLAS thread policy (``host_kernels`` is True: ops may use the
  host-tuned kernels and ``parallel_blocks``).
- :class:`~minikeras.device.gpu.GpuDevice`: CuPy arrays on one stream and one
  memory pool per logical GPU (its docstring gives the stream and
  race-freedom argument). It is the only GPU device: the test suite runs it
  on a simulated CuPy (``minikeras.testing.sim_cupy``), handed to the
  registry in place of ``cupy`` when ``MINIKERAS_SIMULATED_GPU`` is set.

Code outside ``backend/`` and ``device/`` never asks which kind a device is;
it calls the device: ``device.xp`` (the array module), ``device.asarray``
(host or other-device array to this device), ``device.to_host`` (the only
device-to-host path), ``device.activate()`` (the context every op, backward,
optimizer update, loss/metric update and host read runs in),
``device.bounds``, ``device.compiles_kernels`` and ``device.one_kernel()`` (how
``minikeras.kernels`` runs a fused kernel here), the block helpers (``device.matmul``,
``device.matmul_all``, ``device.parallel_blocks``, ``device.row_blocks``,
``device.elementwise_blocks``, ``device.sum_in_order``), ``device.worker_context``
(for a thread that serves one device), ``device.scatter_add``, ``device.new_rng``/``device.normal``, and
``device.stats`` (host syncs, uploads and kernel launches, for tests and debugging).
"""
import contextlib
from dataclasses import dataclass

import numpy

from minikeras.backend.blocks import sum_in_order
from minikeras.device.names import canonical_name


@dataclass(frozen=True)
class PhysicalDevice:
    """A piece of hardware, like ``tf.config.PhysicalDevice``.

    Attributes:
        name: ``/physical_device:GPU:0``.
        device_type: ``"CPU"`` or ``"GPU"``.
        index: position among the visible devices of that type.
        total_memory: bytes of memory the hardware has (host RAM for the CPU).
    """

    name: str
    device_type: str
    index: int = 0
    total_memory: int = 0

    @property
    def kind(self):
        return self.device_type.lower()


class LogicalDeviceConfiguration:
    """How one logical device carved out of a physical device is set up.

    Args:
        memory_limit: megabytes (2**20 bytes) the logical device may hold,
            as in TensorFlow; None for no limit.
    """

    def __init__(self, memory_limit=None):
        if memory_limit is not None:
            if isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, float)):
                raise TypeError(f"memory_limit must be a number of megabytes or None, received {memory_limit!r}.")
            if not 0 < memory_limit < float("inf"):
                # inf (or nan) would pass here and then fail every allocation
                # with an OverflowError converting it to bytes.
                raise ValueError(f"memory_limit must be finite and > 0 megabytes, received {memory_limit!r}.")
        self.memory_limit = memory_limit

    @property
    def memory_limit_bytes(self):
        return None if self.memory_limit is None else int(self.memory_limit * 2**20)

    def __repr__(self):
        return f"LogicalDeviceConfiguration(memory_limit={self.memory_limit})"

    def __eq__(self, other):
        return isinstance(other, LogicalDeviceConfiguration) and other.memory_limit == self.memory_limit

    def __hash__(self):
        return hash(self.memory_limit)


class DeviceStats:
    """Debug counters of one logical device.

    Attributes:
        host_syncs: times the host waited for the device (a device-to-host
            copy, ``.item()``, ``float()``, ``bool()``, ``synchronize()``).
        uploads: host-to-device copies.
        device_copies: copies from another device.
        kernel_launches: kernels launched on the device. On the simulated
            CuPy every array-module call or array operator that computes
            counts one (views, reshapes, metadata and bare allocations do
            not; see ``minikeras/testing/sim_cupy/_calls.py``), and so does
            each fused kernel of ``minikeras.kernels``, whose reference runs
            there as one launch (``one_kernel``). On a real GPU only the
            ``minikeras.kernels`` launches are counted (wrapping every CuPy
            call would cost more than the launch it counts; use Nsight
            Systems for the rest). The CPU counts nothing.
        graph_launches: captured steps replayed as one graph
            (``jit_compile=True``).
    """

    __slots__ = ("host_syncs", "uploads", "device_copies", "kernel_launches", "graph_launches")
    HOST_TRAFFIC = ("host_syncs", "uploads", "device_copies")

    def __init__(self):
        self.reset()

    def reset(self):
        self.host_syncs = self.uploads = self.device_copies = 0
        self.kernel_launches = self.graph_launches = 0

    def snapshot(self):
        """``{"host_syncs": n, "uploads": n, "device_copies": n, "kernel_launches": n, "graph_launches": n}``."""
        return {name: getattr(self, name) for name in self.__slots__}

    def host_traffic(self):
        """``{"host_syncs": n, "uploads": n, "device_copies": n}``."""
        return {name: getattr(self, name) for name in self.HOST_TRAFFIC}

    def __repr__(self):
        return f"DeviceStats({self.snapshot()})"


_NO_CONTEXT = contextlib.nullcontext()


class _ActivateResult:
    """``device.activation_context``: what ``device.activate()`` returns (a
    device whose activation is one object, the GPU, sets the attribute itself,
    so the per-op ``with device.activation_context:`` makes no call)."""

    def __get__(self, device, owner=None):
        return self if device is None else device.activate()


class Device:
    """A logical device: where tensors live and ops run (base class).

    ``device.name`` is short (``"gpu:1"``), ``str(device)`` canonical
    (``"/device:GPU:1"``). ``device.xp`` is the array module.

    Args:
        index: logical index among devices of its kind.
        physical: the PhysicalDevice it is carved from.
        memory: its MemoryStats.

    Attributes:
        kind: ``"cpu"`` or ``"gpu"`` (for names and display only: code asks
            the device what it can do instead of testing the kind).
        host_kernels: True when arrays live in host memory and ops may use
            the host-tuned kernels (op threads, chunked im2col).
        cuda_id: the CUDA device id of a real GPU (what NCCL needs), else
            None.
        rng: the device's random state, set by ``minikeras.random``.
        stats: a :class:`DeviceStats`.
    """

    kind = None
    xp = numpy
    array_type = numpy.ndarray  # the class of the arrays ops return here
    host_kernels = False
    cuda_id = None
    activation_context = _ActivateResult()

    def __init__(self, index, physical, memory):
        self.index = index
        self.physical = physical
        self.memory = memory
        self.name = f"{self.kind}:{index}"
        self.canonical = canonical_name(self.kind, index)
        self.device_type = self.kind.upper()
        self.rng = None
        self.stats = DeviceStats()

    # ---------------------------------------------------------- execution
    # Whether ``minikeras.kernels`` may compile its CUDA sources for this
    # device (a real GPU with CuPy); elsewhere a kernel runs its reference.
    compiles_kernels = False
    # Whether ``one_kernel()`` counts anything: where it does not, a fused
    # kernel's reference runs without entering it (kernels/kernel.py).
    counts_kernel_launches = False

    def one_kernel(self):
        """Context in which a fused kernel's reference runs: its array calls
        count as one kernel launch (a GPU: ``GpuDevice.one_kernel``), or
        nothing (CPU)."""
        return _NO_CONTEXT

    def activate(self):
        """Context in which this device's arrays are made and its work runs."""
        return _NO_CONTEXT

    def convolutions(self):
        """cuDNN's convolutions on this device (``device/cudnn.py``), or None
        (the CPU; a GPU without cuDNN 9; a GPU unless ``MINIKERAS_CUDNN=1``
        asks for it): then convolutions are im2col and a matrix product."""
        return None

    # Whether ``capture()`` records CUDA graphs here (device/graph.py).
    supports_graphs = False
    # Whether fit/evaluate/predict upload batches through pinned buffers on a
    # copy stream, the next one while a step runs (device/batch_staging.py).
    stages_batches = False

    def capture(self, mode="relaxed"):
        """Capture the work issued in this block as a graph (``device/graph.py``):
        only a GPU has graphs."""
        from minikeras.device.graph import GraphCaptureError

        raise GraphCaptureError(f"{self.canonical} has no graphs to capture (only a GPU does); run the work eagerly.")

    def synchronize(self):
        """Wait for the work queued on this device to finish."""

    def release_memory(self):
        """Return memory cached by the device's allocator and not in use to
        the system (a GPU's pool gives its free blocks back to the driver);
        nothing to do where arrays are freed at once (NumPy)."""

    # ------------------------------------------------------------- arrays
    def is_array(self, value):
        """True when ``value`` is an array of this device's array module."""
        return isinstance(value, numpy.ndarray)

    def owns(self, array):
        """True when ``array`` lives on this device (was allocated by it)."""
        return self.is_array(array)

    def copy_array(self, array):
        """A copy of an array of this device, on this device."""
        with self.activate():
            return array.copy()

    def asarray(self, value, dtype=None):
        """``value`` (a host array, a number, a list, or an array of any
        device) as an array on this device; a copy unless already here."""
        raise NotImplementedError

    def to_host(self, array):
        """A NumPy copy of ``array`` (the only device-to-host path)."""
        raise NotImplementedError

    def copy_from(self, array, source):
        """A copy on this device of ``array``, which lives on device
        ``source`` (ordered after the source's pending work)."""
        raise NotImplementedError

    def item(self, array):
        """The value of a one-element array as a Python number."""
        return self.to_host(array).reshape(()).item()

    def bounds(self, array):
        """``(min, max)`` of a non-empty integer array as Python ints, in
        one transfer."""
        xp = self.xp
        with self.activate():
            low, high = self.to_host(xp.stack([array.min(), array.max()])).tolist()
        return int(low), int(high)

    # ------------------------------------------------------------ kernels
    def matmul(self, a, b):
        """``a @ b``, in the inputs' dtype.

        16-bit floats (both inputs float16, or both bfloat16) keep their
        dtype, accumulating in float32 as the tensor cores do (a GPU calls
        ``cublasGemmEx`` for them: ``GpuDevice.matmul``). Here batched
        bfloat16 products (more than 2 axes) are done in float32 and
        rounded back, and NumPy with ml_dtypes returns float32 for a
        bfloat16 product, which is rounded back too.
        """
        if a.dtype == b.dtype and a.dtype.name == "bfloat16":
            if a.ndim > 2 or b.ndim > 2:
                return (a.astype(numpy.float32) @ b.astype(numpy.float32)).astype(a.dtype)
            return (a @ b).astype(a.dtype, copy=False)
        return a @ b

    def gemm(self, a, b, out=None):
        """``a @ b`` (into ``out`` when given) exactly as the array module
        computes it, from any thread (no op-thread splitting): the products
        of the im2col convolutions. On a GPU that is capturing a graph it
        calls cuBLAS directly (``device/cublas_direct.py``), since CuPy
        refuses cuBLAS during a capture."""
        if out is None:
            return a @ b
        return self.xp.matmul(a, b, out=out)

    def matmul_all(self, pairs):
        """``[a @ b for a, b in pairs]`` for independent 2-D products (the
        CPU runs several small ones at once, one per op thread)."""
        return [self.matmul(a, b) for a, b in pairs]

    def parallel_blocks(self, work, count, setup=None):
        """``[work(block, state) for block in range(count)]`` with
        ``state = setup()``; the CPU shares the blocks among its op threads."""
        state = setup() if setup is not None else None
        return [work(block, state) for block in range(count)]

    def row_blocks(self, work, rows, elements):
        """``[work(start, stop) for each block of rows]`` of an array with
        ``rows`` rows and ``elements`` elements: here one call over all rows
        (one kernel per op); the CPU cuts cache-sized blocks and shares them
        among its op threads. Combine per-block results with
        :meth:`sum_in_order` so the bits do not depend on the split."""
        return [work(0, rows)]

    def elementwise_blocks(self, work, arrays):
        """``work(*pieces)`` over matching pieces of same-shaped ``arrays``
        (None entries stay None), updated in place: here one call on the
        whole arrays; the CPU splits large C-contiguous ones into flat
        slices shared among its op threads."""
        work(*arrays)

    def sum_in_order(self, parts, shape=None, dtype=None):
        """The sum of per-block results in block order (same bits however
        the blocks were run); ``zeros(shape, dtype)`` when there are none."""
        return sum_in_order(self.xp, parts, shape, dtype)

    def worker_context(self, alone=False):
        """Context for a thread that serves this device alone (a replica
        worker): on the CPU its ops then run their blocks in that thread,
        since the replicas already share the cores. ``alone=True``, inside
        it: the other replicas wait for this one (replica 0's update that
        they copy), so its ops use the op threads again."""
        return _NO_CONTEXT

    def scatter_add(self, target, indices, values):
        """``target[indices] += values`` with repeated indices accumulating."""
        self.xp.add.at(target, indices, values)

    def scatter_reduce(self, op, target, indices, values):
        """``target[indices] = op(target[indices], values)`` with repeated
        indices accumulating, ``op`` one of "add", "maximum", "minimum",
        "multiply" (for multiply, ``indices`` is one integer array indexing
        the first axis). A GPU routes what CuPy's ``ufunc.at`` lacks
        (device/scatter.py)."""
        getattr(self.xp, op).at(target, indices, values)

    # ------------------------------------------------------------- random
    def new_rng(self, entropy):
        """A random generator seeded from ``entropy`` (a list of ints, or None)."""
        raise NotImplementedError

    def normal(self, rng, size, loc, scale):
        """Samples of N(loc, scale^2) from ``rng`` (only what CuPy's
        Generator has: ``standard_normal``)."""
        return rng.standard_normal(size=size) * scale + loc

    def uniform(self, rng, size, low, high):
        """Samples of U[low, high) from ``rng``."""
        return rng.random(size=size) * (high - low) + low

    def __copy__(self):
        # A device is the process's one handle on that hardware (its pool,
        # stream and counters): copying a model or a tensor keeps it.
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        # Pickled by name (its pool, stream and locks belong to this
        # process): loading finds the device of that name where it loads.
        return _device_named, (self.name,)

    def __repr__(self):
        return f"Device({self.canonical!r})"

    def __str__(self):
        return self.canonical


def _device_named(name):
    """The logical device called ``name`` (how a pickled Device loads)."""
    from minikeras.device import registry  # the registry builds Devices: imported when a pickle loads

    return registry.get_device(name)
