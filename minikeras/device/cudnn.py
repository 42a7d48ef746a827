"""cuDNN's convolutions through its backend (graph) API, called through
ctypes (CuPy 14 has no cuDNN); opt-in with ``MINIKERAS_CUDNN=1``.

On an H100 and an H200 minikeras's convolutions were an im2col kernel and a
cuBLAS GEMM (``ops/nn/sliding_window.py``), and the CIFAR CNN's step took
2.2 ms of GPU time against PyTorch's 1.6 with cuDNN, im2col and col2im
alone 1.0 ms (benchmarks/NOTES.md). The CUDA wheels that CuPy and PyTorch
install carry cuDNN 9 (``nvidia-cudnn-cu13``/``-cu12``, the gpu extras).

Why the backend API: cuDNN 9's legacy API (``cudnnConvolutionForward``
and kin, which minikeras called before) plans its engine anew on every
call, about 140 us of host time each (cProfile on an H200's host), which
made an eager step slower than im2col's although its kernels were faster
(CIFAR CNN eager 5.52 ms against 4.45; benchmarks/NOTES.md). As PyTorch
does through cudnn-frontend, minikeras now builds an execution plan once
per (shape, direction, TF32, determinism) and keeps it (an LRU of
``PLAN_CACHE_SIZE`` per thread); a call is one variant pack and one
``cudnnBackendExecute`` (``device/cudnn_graph.py``). It stays opt-in until
a card has measured it (benchmarks/NOTES.md, "Issue 33 §3, built without a
card").

What minikeras asks of cuDNN, and why:

- channels-last tensors, Keras's layout, so no transposes of activations;
  the kernel in cuDNN's (filters, kh, kw, channels) layout (one small
  transpose of Keras's (kh, kw, channels, filters) per step);
- float32 only (16-bit convolutions compute in float32 already,
  ``autograd.function.in_float32``; float64 keeps im2col), TF32 as
  ``device/precision.py`` says: engines noted
  ``CUDNN_NUMERICAL_NOTE_TENSOR_CORE`` only while TF32 is on and the GPU is
  Ampere or newer, as PyTorch filters them from ``allow_tf32``;
- the forward pass and the input's gradient always (their engines are
  deterministic ones once ``enable_op_determinism()`` is called); the
  kernel's gradient only while determinism is off and cuDNN's first allowed
  engine is an atomic one (noted non-deterministic, as the legacy
  ``CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0``): cuDNN 9.19's deterministic
  channels-last filter-gradient engines took 0.4 to 0.7 ms a launch for the
  CIFAR CNN's layers on an H200 against im2col's 2.2 ms for the whole step,
  so with determinism (or without an atomic engine) it stays im2col +
  cuBLAS (``ops/nn/conv.py``);
- symmetric padding only: TensorFlow's "same" padding may put one more row
  or column at the bottom/right; such layers (and any shape every allowed
  engine declines) keep the im2col path.

One cuDNN handle per host thread and CUDA device (a MirroredModel's replica
threads each have their own, as cuBLAS's), pointed at the current stream
before each call; each thread's plans are built on its handle. The
workspace is an array of the device's pool, allocated per call on the
current stream (so graph capture and the pool's stream rules hold as for
any other array); a tensor whose address is not 16-byte aligned (a view)
is copied, as the plans promise cuDNN that alignment.

The library is the process's cuDNN, or the double a simulated CuPy provides
for itself (``device/native.py``; minikeras.testing.sim_cupy's libs/cudnn.py
models the backend API at the ctypes boundary, refusals included), so the
suite runs this module's calls without a GPU.
"""
import collections
import ctypes
import functools
import glob
import os
import threading

import numpy

from minikeras.device import cudnn_graph, determinism, native, precision

PLAN_CACHE_SIZE = 256  # execution plans kept per thread (least recently used dropped)
_OUT = ctypes.POINTER(ctypes.c_void_p)
# The C prototypes of every cuDNN function called here and in cudnn_graph.py (cudnn_graph.h, cuDNN 9;
# benchmarks/ctypes_audit.py checks them against the header): name -> (restype, argtypes). Enums
# (status, descriptor, attribute name and type) are C ints, handles and descriptors pointers, counts int64_t.
# Only the restypes are declared (device/native.py says why); the calls pass ctypes objects for the rest.
SIGNATURES = {
    "cudnnGetVersion": (ctypes.c_size_t, ()),
    "cudnnGetErrorString": (ctypes.c_char_p, (ctypes.c_int,)),
    "cudnnCreate": (ctypes.c_int, (_OUT,)),
    "cudnnSetStream": (ctypes.c_int, (ctypes.c_void_p, ctypes.c_void_p)),
    "cudnnBackendCreateDescriptor": (ctypes.c_int, (ctypes.c_int, _OUT)),
    "cudnnBackendDestroyDescriptor": (ctypes.c_int, (ctypes.c_void_p,)),
    "cudnnBackendSetAttribute": (ctypes.c_int, (ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                                                ctypes.c_void_p)),
    "cudnnBackendGetAttribute": (ctypes.c_int, (ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                                                ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p)),
    "cudnnBackendFinalize": (ctypes.c_int, (ctypes.c_void_p,)),
    "cudnnBackendExecute": (ctypes.c_int, (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)),
}


class CudnnError(RuntimeError):
    """A cuDNN call failed (its status, the call, the shapes); cuda_errors.py
    turns it into the library's DeviceError, or ResourceExhaustedError for
    ``CUDNN_STATUS_ALLOC_FAILED``, naming the op, as CuPy's errors."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _candidates():
    """Paths of libcudnn to try, best first: CUDA's own locator, the wheel's folder, the loader."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        yield load_nvidia_dynamic_lib("cudnn").abs_path
    except Exception:  # noqa: BLE001  (not installed, or no cuDNN there: try the next way)
        pass
    try:
        import nvidia.cudnn

        for base in nvidia.cudnn.__path__:
            yield from sorted(glob.glob(os.path.join(base, "lib", "libcudnn.so*")))
    except ImportError:
        pass
    yield "libcudnn.so.9"


def enabled():
    """True when ``MINIKERAS_CUDNN=1`` asks for cuDNN (module docstring: why
    it is not the default), read at each convolution."""
    return os.environ.get("MINIKERAS_CUDNN", "0").strip() == "1"


def for_device(cupy, cuda_id):
    """The Convolutions of CUDA device ``cuda_id`` of the array module
    ``cupy`` (shared by its logical GPUs), or None without cuDNN."""
    if not enabled():
        return None
    library = native.provided(cupy, "cudnn") or load()[0]
    if library is None:
        return None
    native.declare(library, SIGNATURES)
    key = (id(library), cuda_id)
    with _DEVICES_LOCK:
        if key not in _DEVICES:
            _DEVICES[key] = Convolutions(library, cuda_id)
        return _DEVICES[key]


_DEVICES = {}  # (id of the library, CUDA device id) -> Convolutions
_DEVICES_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def load():
    """``(library, None)``, or ``(None, why not)`` when cuDNN 9 cannot be
    loaded (then convolutions use im2col + cuBLAS)."""
    reasons = []
    for path in _candidates():
        try:
            library = ctypes.CDLL(path)
        except OSError as error:
            reasons.append(str(error))
            continue
        try:
            native.declare(library, SIGNATURES)
        except AttributeError as error:  # not cuDNN 9's backend API
            reasons.append(f"{path}: {error}")
            continue
        if library.cudnnGetVersion() < 90000:
            reasons.append(f"{path} is cuDNN {library.cudnnGetVersion()}, not 9")
            continue
        return library, None
    return None, "; ".join(reasons) or "no libcudnn found"


class Spec(tuple):
    """``(batch, height, width, channels, filters, window, strides, dilation,
    pads, out)``: what a plan is for. ``pads`` is (top, left), applied on
    both sides; ``out`` is (out_h, out_w)."""

    __slots__ = ()
    batch = property(lambda self: self[0])
    height = property(lambda self: self[1])
    width = property(lambda self: self[2])
    channels = property(lambda self: self[3])
    filters = property(lambda self: self[4])
    window = property(lambda self: self[5])
    strides = property(lambda self: self[6])
    dilation = property(lambda self: self[7])
    pads = property(lambda self: self[8])
    out = property(lambda self: self[9])


def spec_for(geometry, filters):
    """The Spec of a convolution (``sliding_window.WindowGeometry`` and its
    filter count), or None when cuDNN cannot express its padding: the same
    output size with the top/left padding on both sides."""
    (top, bottom), (left, right) = geometry.pads
    effective = [(k - 1) * d + 1 for k, d in zip(geometry.window, geometry.dilation)]
    out = tuple((size + 2 * pad - e) // s + 1 for size, pad, e, s in
                zip((geometry.height, geometry.width), (top, left), effective, geometry.strides))
    if out != (geometry.out_h, geometry.out_w) or bottom < top or right < left:
        return None
    return Spec((geometry.batch, geometry.height, geometry.width, geometry.channels, filters,
                 tuple(geometry.window), tuple(geometry.strides), tuple(geometry.dilation), (top, left), out))


class Convolutions:
    """cuDNN's convolutions on one CUDA device (see the module docstring).

    ``forward(xp, x, kernel, spec)``, ``backward_data(xp, grad, kernel,
    spec)`` and ``backward_filter(xp, x, grad, spec)`` take and return
    C-contiguous float32 arrays of the current device: ``x`` and its
    gradient (N, H, W, C), ``grad`` (N, Ho, Wo, K), ``kernel`` and its
    gradient (K, kh, kw, C). ``usable(xp, spec)`` says whether cuDNN has
    plans for the forward pass and the input gradient;
    ``filter_gradient_usable(xp, spec)`` whether the kernel's gradient
    should be cuDNN's (module docstring).
    """

    def __init__(self, library, cuda_id):
        self._lib = library
        self.cuda_id = cuda_id
        self._local = threading.local()

    def _check(self, status, call, spec=None):
        if status:
            reason = self._lib.cudnnGetErrorString(status).decode()
            shape = "" if spec is None else f" for input {spec[:4]} and {spec.filters} filters of {spec.window}"
            raise CudnnError(f"cuDNN's {call} failed on CUDA device {self.cuda_id}{shape}: {reason} "
                             f"(status {status}).", status)

    def _handle(self, xp):
        """This thread's handle, on the current stream."""
        handle = getattr(self._local, "handle", None)
        if handle is None:
            handle = ctypes.c_void_p()
            self._check(self._lib.cudnnCreate(ctypes.byref(handle)), "cudnnCreate")
            self._local.handle, self._local.stream = handle, None
            self._local.plans = collections.OrderedDict()
        stream = xp.cuda.get_current_stream().ptr
        if stream != self._local.stream:
            self._check(self._lib.cudnnSetStream(handle, ctypes.c_void_p(stream)), "cudnnSetStream")
            self._local.stream = stream
        return handle

    def plans(self, xp):
        """This thread's plan cache (an LRU of PLAN_CACHE_SIZE), oldest first."""
        self._handle(xp)
        return self._local.plans

    def _plan(self, xp, spec, direction):
        """The cached Plan of ``spec`` in ``direction`` under the switches now
        (TF32, determinism), built on first use; None when cuDNN declines."""
        handle = self._handle(xp)
        key = (spec, direction, precision.tf32_on(xp, self.cuda_id), determinism.enabled())
        plans = self._local.plans
        if key in plans:
            plans.move_to_end(key)
            return plans[key]
        try:
            plan = cudnn_graph.build_plan(self._lib, lambda status, call: self._check(status, call, spec), handle,
                                          spec, direction, key[2], key[3])
        except cudnn_graph.Declined:
            plan = None
        plans[key] = plan
        while len(plans) > PLAN_CACHE_SIZE:
            _, evicted = plans.popitem(last=False)
            if evicted is not None:
                cudnn_graph.Builder(self._lib, self._check).destroy(evicted.descriptors)
        return plan

    def usable(self, xp, spec):
        """True when cuDNN has plans for the forward pass and the input gradient."""
        return all(self._plan(xp, spec, direction) is not None for direction in ("forward", "backward_data"))

    def filter_gradient_usable(self, xp, spec):
        """True when the kernel's gradient should be cuDNN's: determinism is
        off and cuDNN's first allowed engine is a fast atomic one (noted
        non-deterministic); otherwise im2col + cuBLAS (module docstring)."""
        if determinism.enabled():
            return False
        plan = self._plan(xp, spec, "backward_filter")
        return plan is not None and not plan.deterministic

    def _run(self, xp, spec, direction, arrays, out):
        plan = self._plan(xp, spec, direction)
        handle = self._handle(xp)
        # The plan promises cuDNN 16-byte aligned tensors: a view that is not gets copied.
        arrays = dict(arrays, **out)
        arrays = {role: a if a.data.ptr % cudnn_graph.ALIGNMENT == 0 else a.copy() for role, a in arrays.items()}
        workspace = xp.empty(plan.workspace_bytes, numpy.uint8) if plan.workspace_bytes else None
        cudnn_graph.execute(self._lib, lambda status, call: self._check(status, call, spec), handle, plan,
                            {role: a.data.ptr for role, a in arrays.items()},
                            None if workspace is None else workspace.data.ptr)
        return arrays

    def forward(self, xp, x, kernel, spec):
        out = xp.empty((spec.batch,) + spec.out + (spec.filters,), numpy.float32)
        return self._run(xp, spec, "forward", {"x": x, "w": kernel}, {"y": out})["y"]

    def backward_data(self, xp, grad, kernel, spec):
        out = xp.empty((spec.batch, spec.height, spec.width, spec.channels), numpy.float32)
        return self._run(xp, spec, "backward_data", {"y": grad, "w": kernel}, {"x": out})["x"]

    def backward_filter(self, xp, x, grad, spec):
        out = xp.empty((spec.filters,) + spec.window + (spec.channels,), numpy.float32)
        return self._run(xp, spec, "backward_filter", {"x": x, "y": grad}, {"w": out})["w"]
