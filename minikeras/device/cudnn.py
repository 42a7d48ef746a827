"""cuDNN's convolutions, called through ctypes (CuPy 14 has no cuDNN); opt-in
with ``MINIKERAS_CUDNN=1``.

On an H100 and an H200 minikeras's convolutions were an im2col kernel and a
cuBLAS GEMM (``ops/nn/sliding_window.py``), and the CIFAR CNN's step took
2.2 ms of GPU time against PyTorch's 1.6 with cuDNN, im2col and col2im
alone 1.0 ms (benchmarks/NOTES.md). The CUDA wheels that CuPy and PyTorch
install carry cuDNN 9 (``nvidia-cudnn-cu13``), and its legacy convolution
API needs nothing compiled: descriptors, a heuristic choice of algorithm,
and the calls (``benchmarks/gpu_cudnn_probe.py`` checked forward, backward
data and backward filter against PyTorch in float64 on an H100 and an H200:
relative errors under 5e-7).

minikeras takes two of them, the forward pass and the input's gradient.
The kernel's gradient stays im2col + cuBLAS (``ops/nn/conv.py``): cuDNN
9.19's deterministic channels-last filter-gradient engines
(``wgrad_alg1_engine_NHWC``, ``wgrad_implicit_gemm_indexed``) took 0.4 to
0.7 ms a launch for the CIFAR CNN's layers on an H200, and added a copy
from the host per call (their index tables): the CIFAR CNN's step took
3.3 ms of GPU time with them against 2.2 with im2col. Its fast filter
gradient (``CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0``) sums with atomics, so a
step's weights would change from run to run.

Why it is opt-in: each call of cuDNN 9's legacy API costs about 140 us of
host time (cProfile on an H200's host: 220 calls, 31 ms in the calls
themselves), as it plans its engine anew each call. With forward and
input gradient through cuDNN, the CIFAR CNN's GPU time per step fell from
about 2.2 ms to 1.94 (PyTorch: 1.66), but its eager step rose from 4.45 to
5.52 ms and the Fashion CNN's from 3.17 to 3.58 (same H200, same run,
benchmarks/NOTES.md): an eager step is bound by host time. What would make
it the default is cuDNN's backend (graph) API with an execution plan built
once per shape, as PyTorch does through cudnn-frontend, so that a call is
one ``cudnnBackendExecute``; that needs a GPU session to build and check.

What minikeras asks of cuDNN, and why:

- channels-last tensors (``CUDNN_TENSOR_NHWC``), Keras's layout, so no
  transposes of activations; the kernel in cuDNN's NHWC filter layout
  ``(filters, kh, kw, channels)`` (one small transpose of Keras's
  ``(kh, kw, channels, filters)`` per step);
- float32 only, with the math type PyTorch picks from ``allow_tf32``:
  ``CUDNN_DEFAULT_MATH`` (TF32 allowed) while
  ``config.experimental.tensor_float_32_execution_enabled()`` and the GPU is
  Ampere or newer (``device/precision.py``), ``CUDNN_FMA_MATH`` (exact
  float32) otherwise; a plan is kept per math type (16-bit convolutions
  compute in float32 already, ``half_precision.in_float32``; float64 keeps
  im2col);
- deterministic algorithms only (a heuristic's first deterministic choice):
  the same step gives the same weights, eager or in a CUDA graph, as the
  im2col path did;
- symmetric padding only: TensorFlow's "same" padding may put one more row
  or column at the bottom/right, which cuDNN cannot express; such layers,
  and any shape cuDNN declines, keep the im2col path.

One cuDNN handle per host thread and CUDA device (a MirroredModel's replica
threads each have their own, as cuBLAS's), pointed at the current stream
before each call. Descriptors, algorithms and workspace sizes are planned
once per shape and kept. The workspace is an array of the device's pool,
allocated per call on the current stream (so graph capture and the pool's
stream rules hold as for any other array).

The library is the process's cuDNN, or the double a simulated CuPy provides
for itself (``device/native.py``; minikeras.testing.sim_cupy's libs/cudnn.py
models these calls at the ctypes boundary), so the suite runs this module's
calls without a GPU.
"""
import ctypes
import functools
import glob
import os
import threading

import numpy

from minikeras.device import native, precision

_FLOAT = 0
_NHWC = 1
_CROSS_CORRELATION = 1
_DEFAULT_MATH, _FMA_MATH = 0, 3
_DETERMINISTIC = 1
_ALGORITHMS = 8  # how many heuristic choices to ask for


class CudnnError(RuntimeError):
    """A cuDNN call failed (its status, the call, the shapes); cuda_errors.py
    turns it into the library's DeviceError, or ResourceExhaustedError for
    ``CUDNN_STATUS_ALLOC_FAILED``, naming the op, as CuPy's errors."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class _AlgoPerf(ctypes.Structure):
    """cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t (one layout for all three)."""
    _fields_ = [("algo", ctypes.c_int), ("status", ctypes.c_int), ("time", ctypes.c_float),
                ("memory", ctypes.c_size_t), ("determinism", ctypes.c_int), ("mathType", ctypes.c_int),
                ("reserved", ctypes.c_int * 3)]


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
        library.cudnnGetVersion.restype = ctypes.c_size_t
        library.cudnnGetErrorString.restype = ctypes.c_char_p
        if library.cudnnGetVersion() < 90000:
            reasons.append(f"{path} is cuDNN {library.cudnnGetVersion()}, not 9")
            continue
        return library, None
    return None, "; ".join(reasons) or "no libcudnn found"


class Plan:
    """The descriptors of one convolution shape, and the algorithms and
    workspace sizes chosen for it (each direction on first use)."""

    def __init__(self, spec):
        self.spec = spec
        self.descriptors = None
        self.chosen = {}


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

    ``forward(xp, x, kernel, spec)`` and ``backward_data(xp, grad, kernel,
    spec)`` take and return C-contiguous float32 arrays of the current
    device: ``x`` and its gradient (N, H, W, C), ``grad`` (N, Ho, Wo, K),
    ``kernel`` (K, kh, kw, C). ``usable(spec)`` says whether cuDNN has a
    deterministic algorithm for both.
    """

    def __init__(self, library, cuda_id):
        self._lib = library
        self.cuda_id = cuda_id
        self._local = threading.local()
        self._plans = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------ plumbing
    def _check(self, status, call, spec):
        if status:
            reason = self._lib.cudnnGetErrorString(status).decode()
            message = (f"cuDNN's {call} failed on CUDA device {self.cuda_id} for input {spec[:4]} and "
                       f"{spec.filters} filters of {spec.window}: {reason} (status {status}).")
            raise CudnnError(message, status)

    def _handle(self, xp, spec):
        """This thread's handle, on the current stream."""
        handle = getattr(self._local, "handle", None)
        if handle is None:
            handle = ctypes.c_void_p()
            self._check(self._lib.cudnnCreate(ctypes.byref(handle)), "cudnnCreate", spec)
            self._local.handle, self._local.stream = handle, None
        stream = xp.cuda.get_current_stream().ptr
        if stream != self._local.stream:
            self._check(self._lib.cudnnSetStream(handle, ctypes.c_void_p(stream)), "cudnnSetStream", spec)
            self._local.stream = stream
        return handle

    def _descriptor(self, kind, spec, *dims):
        descriptor = ctypes.c_void_p()
        create, set_ = {"tensor": ("cudnnCreateTensorDescriptor", "cudnnSetTensor4dDescriptor"),
                        "filter": ("cudnnCreateFilterDescriptor", "cudnnSetFilter4dDescriptor")}[kind]
        self._check(getattr(self._lib, create)(ctypes.byref(descriptor)), create, spec)
        if kind == "tensor":  # (format, type, n, c, h, w)
            self._check(self._lib.cudnnSetTensor4dDescriptor(descriptor, _NHWC, _FLOAT, *dims), set_, spec)
        else:  # (type, format, k, c, h, w)
            self._check(self._lib.cudnnSetFilter4dDescriptor(descriptor, _FLOAT, _NHWC, *dims), set_, spec)
        return descriptor

    def _describe(self, spec, math):
        n, h, w, c, k = spec[:5]
        (kh, kw), (sh, sw), (dh, dw), (ph, pw), (ho, wo) = spec[5:]
        x = self._descriptor("tensor", spec, n, c, h, w)
        y = self._descriptor("tensor", spec, n, k, ho, wo)
        f = self._descriptor("filter", spec, k, c, kh, kw)
        conv = ctypes.c_void_p()
        self._check(self._lib.cudnnCreateConvolutionDescriptor(ctypes.byref(conv)),
                    "cudnnCreateConvolutionDescriptor", spec)
        self._check(self._lib.cudnnSetConvolution2dDescriptor(conv, ph, pw, sh, sw, dh, dw, _CROSS_CORRELATION,
                                                              _FLOAT), "cudnnSetConvolution2dDescriptor", spec)
        self._check(self._lib.cudnnSetConvolutionMathType(conv, math), "cudnnSetConvolutionMathType", spec)
        return {"x": x, "y": y, "filter": f, "conv": conv}

    def math_type(self, xp):
        """The convolutions' cuDNN math type now (module docstring)."""
        return _DEFAULT_MATH if precision.tf32_on(xp, self.cuda_id) else _FMA_MATH

    def _plan(self, xp, spec):
        key = (spec, self.math_type(xp))
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = Plan(spec)
                    plan.descriptors = self._describe(spec, key[1])
                    self._plans[key] = plan
        return plan

    # Per direction: the heuristic, the workspace query, and the order of
    # the descriptors both take.
    _DIRECTIONS = {
        "forward": ("cudnnGetConvolutionForwardAlgorithm_v7", "cudnnGetConvolutionForwardWorkspaceSize",
                    ("x", "filter", "conv", "y")),
        "backward_data": ("cudnnGetConvolutionBackwardDataAlgorithm_v7",
                          "cudnnGetConvolutionBackwardDataWorkspaceSize", ("filter", "y", "conv", "x")),
    }

    def _choose(self, xp, plan, direction):
        """``(algorithm, workspace bytes)`` for one direction, or None when no
        deterministic algorithm is offered."""
        if direction in plan.chosen:
            return plan.chosen[direction]
        heuristic, workspace_query, order = self._DIRECTIONS[direction]
        handle = self._handle(xp, plan.spec)
        descriptors = [plan.descriptors[name] for name in order]
        results = (_AlgoPerf * _ALGORITHMS)()
        count = ctypes.c_int()
        self._check(getattr(self._lib, heuristic)(handle, *descriptors, _ALGORITHMS, ctypes.byref(count), results),
                    heuristic, plan.spec)
        choice = None
        for result in results[:count.value]:
            if result.status == 0 and result.determinism == _DETERMINISTIC:
                size = ctypes.c_size_t()
                status = getattr(self._lib, workspace_query)(handle, *descriptors, result.algo, ctypes.byref(size))
                if status == 0:
                    choice = (result.algo, size.value)
                    break
        plan.chosen[direction] = choice
        return choice

    def usable(self, xp, spec):
        """True when cuDNN offers a deterministic algorithm in every direction."""
        plan = self._plan(xp, spec)
        return all(self._choose(xp, plan, direction) is not None for direction in self._DIRECTIONS)

    def _run(self, xp, spec, direction, call, first, second, out):
        plan = self._plan(xp, spec)
        algorithm, workspace_bytes = self._choose(xp, plan, direction)
        handle = self._handle(xp, spec)
        workspace = xp.empty(max(1, workspace_bytes), numpy.uint8)
        one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        d = plan.descriptors
        names = self._DIRECTIONS[direction][2]
        # Every call is (handle, alpha, desc, ptr, desc, ptr, conv, algo, workspace, size, beta, desc, ptr).
        self._check(getattr(self._lib, call)(
            handle, ctypes.byref(one), d[names[0]], ctypes.c_void_p(first.data.ptr), d[names[1]],
            ctypes.c_void_p(second.data.ptr), d["conv"], algorithm, ctypes.c_void_p(workspace.data.ptr),
            ctypes.c_size_t(workspace_bytes), ctypes.byref(zero), d[names[3]], ctypes.c_void_p(out.data.ptr)),
            call, spec)
        return out

    def forward(self, xp, x, kernel, spec):
        out = xp.empty((spec.batch,) + spec.out + (spec.filters,), numpy.float32)
        return self._run(xp, spec, "forward", "cudnnConvolutionForward", x, kernel, out)

    def backward_data(self, xp, grad, kernel, spec):
        out = xp.empty((spec.batch, spec.height, spec.width, spec.channels), numpy.float32)
        return self._run(xp, spec, "backward_data", "cudnnConvolutionBackwardData", kernel, grad, out)
