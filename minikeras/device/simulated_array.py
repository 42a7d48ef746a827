"""The strict simulated GPU's arrays and array module (tests only).

:class:`SimulatedArray` wraps a NumPy array but behaves like
``cupy.ndarray`` where NumPy is lenient, so that the CPU test suite runs
the GPU code path:

- implicit conversion to NumPy raises TypeError (``numpy.asarray(a)``,
  ``a.__array__()``, passing it to a NumPy function), as CuPy does; the
  host copy is explicit: ``a.get()`` or ``device.to_host(a)``;
- mixing it with a NumPy array in arithmetic raises TypeError, as CuPy's
  elementwise kernels do;
- ``flags`` has only ``c_contiguous``, ``f_contiguous`` and ``owndata``,
  and attributes ``cupy.ndarray`` lacks (``ctypes``, ``setflags``,
  ``resize``, ...) are absent;
- ``.get()``, ``.item()``, ``.tolist()``, ``float()``, ``int()``,
  ``bool()`` count as host synchronisations (``device.stats``);
- any computation or allocation outside its device's ``activate()``
  raises RuntimeError, which is how the suite proves that every op,
  backward, update and host read runs in the device's context.

:data:`SimulatedNumpy` objects stand in for the ``cupy`` module: their
functions unwrap arguments, call NumPy and wrap the results (0-d arrays
instead of NumPy scalars, as CuPy returns), so the kernels stay NumPy.
"""
import threading
import types
import weakref

import numpy

from minikeras.device import graph, simulated_indexing, simulated_limits, simulated_streams

_local = threading.local()

# Public attributes of cupy.ndarray (CuPy 14.2) that the simulation offers;
# everything else NumPy has is absent, as on a real GPU.
_CUPY_ARRAY_METHODS = frozenset(
    "all any argmax argmin argpartition argsort astype choose clip compress conj conjugate copy cumprod "
    "cumsum diagonal dot fill flatten max mean min nonzero partition prod ptp put ravel repeat reshape round "
    "searchsorted sort squeeze std sum swapaxes take trace transpose var view".split()
)
_HOST_METHODS = frozenset("get item tolist tobytes".split())
_CREATION = frozenset(
    "asarray array asanyarray ascontiguousarray asfortranarray".split()
)


def active_device():
    """The simulated device whose ``activate()`` this thread is in, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def push(device):
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(device)


def pop():
    _local.stack.pop()


def _require(device, what):
    """Raise unless ``device`` is the active simulated device."""
    active = active_device()
    if active is None or (device is not None and active.physical is not device.physical):
        where = "outside any device's activate()" if active is None else f"inside {active.canonical}'s activate()"
        target = device.canonical if device is not None else "a simulated GPU"
        raise RuntimeError(
            f"Simulated GPU: {what} on {target} ran {where}. On a real GPU this work would go to the wrong "
            "stream or pool; run it inside the device's activate()."
        )
    return active if device is None else device


class _Flags:
    """CuPy's flags: contiguity and ownership only (no ``writeable``)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, flags):
        self.c_contiguous = flags.c_contiguous
        self.f_contiguous = flags.f_contiguous
        self.owndata = flags.owndata

    def __getitem__(self, name):
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous,
                "OWNDATA": self.owndata}[name]


class _CudaDevice:
    """What ``cupy.ndarray.device`` gives: the physical device's ``id``."""

    __slots__ = ("id",)

    def __init__(self, index):
        self.id = index

    def __eq__(self, other):
        return isinstance(other, _CudaDevice) and other.id == self.id

    def __hash__(self):
        return hash(self.id)


def _root(array):
    """The NumPy array that owns ``array``'s buffer (views share it)."""
    while isinstance(array.base, numpy.ndarray):
        array = array.base
    return array


_buffers = {}  # address of a buffer handed out as a pointer -> weak reference to its owner
_buffers_lock = threading.Lock()


class _Memory:
    """``cupy.cuda.PooledMemory`` stand-in: the buffer a pointer points into."""

    __slots__ = ("ptr", "size", "device_id", "__dict__")

    def __init__(self, root, device):
        self.ptr = root.__array_interface__["data"][0]
        self.size = root.nbytes
        self.device_id = device.physical.index


class _MemoryPointer:
    """``cupy.cuda.MemoryPointer`` stand-in: ``ptr`` and ``mem``."""

    __slots__ = ("ptr", "mem", "device_id")

    def __init__(self, array, device):
        root = _root(array)
        self.mem = _Memory(root, device)
        self.ptr = array.__array_interface__["data"][0]
        self.device_id = device.physical.index
        with _buffers_lock:
            if len(_buffers) > 256:  # forget buffers that died
                for address in [a for a, ref in _buffers.items() if ref() is None]:
                    del _buffers[address]
            _buffers[self.mem.ptr] = weakref.ref(root)


def host_view(pointer, count, dtype):
    """The ``count`` elements of ``dtype`` at device ``pointer`` (an address
    taken from ``array.data.ptr`` of a live simulated array), as a writable
    NumPy view: what a CUDA library (NCCL) given the pointer would touch."""
    dtype = numpy.dtype(dtype)
    with _buffers_lock:
        candidates = [ref() for ref in _buffers.values()]
    for root in candidates:
        if root is None:
            continue
        start = root.__array_interface__["data"][0]
        if start <= pointer and pointer + count * dtype.itemsize <= start + root.nbytes:
            flat = (root if root.flags.c_contiguous else root.T).reshape(-1).view(numpy.uint8)
            offset = pointer - start
            return flat[offset:offset + count * dtype.itemsize].view(dtype)
    raise ValueError(f"Simulated GPU: {pointer:#x} ({count} x {dtype}) is not inside a live device buffer.")


def _unwrap(value, device_box, what, allow_host):
    if type(value) is SimulatedArray:
        if device_box[0] is None:
            device_box[0] = value._device
        elif device_box[0].physical is not value._device.physical:
            raise ValueError(
                f"Simulated GPU: {what} mixes arrays of {device_box[0].canonical} and {value._device.canonical}; "
                "copy them to one device first."
            )
        return value._array
    if isinstance(value, numpy.ndarray):
        if not allow_host:
            raise TypeError(
                f"Simulated GPU: {what} received a numpy.ndarray; device arrays do not mix with host arrays "
                "(CuPy: 'Unsupported type <class 'numpy.ndarray'>'). Upload it with device.asarray first."
            )
        device_box.append("upload")
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(item, device_box, what, allow_host) for item in value)
    if isinstance(value, dict):
        return {key: _unwrap(item, device_box, what, allow_host) for key, item in value.items()}
    return value


def _wrap(value, device):
    if isinstance(value, numpy.ndarray):
        return SimulatedArray(value, device)
    if isinstance(value, numpy.generic):
        return SimulatedArray(numpy.asarray(value), device)
    if isinstance(value, tuple):
        return tuple(_wrap(item, device) for item in value)
    if isinstance(value, list):
        return [_wrap(item, device) for item in value]
    return value


def _call(function, what, args, kwargs, allow_host=False):
    box = [None]
    reads, writes = _accessed(what, args, kwargs)
    args = _unwrap(args, box, what, allow_host)
    kwargs = _unwrap(kwargs, box, what, allow_host)
    device = _require(box[0], what)
    capture = graph.active_capture()
    if capture is not None:
        _check_capture(capture, device, what, box)
        capture.will_write(writes)
    if "upload" in box:
        device.stats.uploads += 1
    result = function(*args, **kwargs)
    _issue(what, reads, writes, result)
    if "upload" not in box:
        count_launch(device, what, args, kwargs, result)
    wrapped = _wrap(result, device)
    if capture is not None:
        capture.record(function, args, kwargs, reads, writes, _inner(wrapped))
    return wrapped, box[0]


def _check_capture(capture, device, what, box):
    """Refuse what a CUDA graph capture refuses (device/simulated_graph.py)."""
    if capture.device is not device:
        graph.refuse_in_capture(device, what, "work on another device's stream is not part of the captured "
                                "stream (CUDA would run it once, now, and never at a replay).")
    if "upload" in box:
        graph.refuse_in_capture(device, f"{what} of a host array", graph.UPLOAD)
    if what in _CUBLAS and not getattr(_local, "direct_cublas", 0):
        graph.refuse_in_capture(device, what, "CuPy 14 refuses cuBLAS calls while a stream captures "
                                "(NotImplementedError from cublas.setStream); products go through "
                                "device.matmul or device.gemm, which call cuBLAS directly.")


# Calls CuPy runs on cuBLAS, which CuPy 14.2 refuses while a stream captures
# (cublas.setStream raises NotImplementedError); the devices' matmul/gemm
# call cuBLAS directly instead (device/cublas_direct.py).
_CUBLAS = frozenset("__matmul__ __rmatmul__ __imatmul__ matmul dot ndarray.dot vdot inner tensordot einsum".split())


class direct_cublas:
    """Array products inside run as the direct cuBLAS calls of a capture."""

    def __enter__(self):
        _local.direct_cublas = getattr(_local, "direct_cublas", 0) + 1

    def __exit__(self, *exc):
        _local.direct_cublas -= 1
        return False


def _inner(value):
    if type(value) is SimulatedArray:
        return value._array
    if isinstance(value, (tuple, list)):
        return type(value)(_inner(item) for item in value)
    return None


# Operations that write their first argument in place: the race detector's
# writes (every device array an operation receives is a read), and kernels
# for the launch count even when they return nothing.
_WRITES_FIRST = frozenset(
    "setitem ndarray.fill ndarray.sort ndarray.put ndarray.partition copyto put put_along_axis place putmask "
    "fill_diagonal".split()
    + [f"__i{name}__" for name in "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift".split()]
)


def _arrays_in(value, found):
    if type(value) is SimulatedArray:
        found.append(value._array)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _arrays_in(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _arrays_in(item, found)
    return found


def _accessed(what, args, kwargs):
    """(arrays read, arrays written in place) by one call (NumPy arrays)."""
    reads = _arrays_in(kwargs, _arrays_in(args, []))
    writes = _arrays_in(kwargs.get("out"), []) if "out" in kwargs else []
    if args and (what in _WRITES_FIRST or what.endswith(".at")):
        writes += _arrays_in(args[0], [])
    return reads, writes


def _issue(what, reads, writes, result=None):
    """Tell the race detector about an operation issued to the active
    device's stream (device/simulated_streams.py)."""
    active = active_device()
    stream = getattr(active, "stream", None)
    if stream is not None:
        fresh = _fresh_arrays(result, [])
        simulated_streams.access(stream, what, reads, writes, fresh)


def _fresh_arrays(value, found):
    if isinstance(value, numpy.ndarray):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _fresh_arrays(item, found)
    return found



# ------------------------------------------------------------ kernel launches
# Calls that make a new array without running a kernel (cudaMalloc only).
_ALLOCATES_ONLY = frozenset("empty empty_like".split())


def count_launch(device, what, args, kwargs, result):
    """Count one kernel launch on ``device`` if the call ``what`` computed.

    This is the one place where the simulated GPU counts launches
    (``device.stats.kernel_launches``), by what CuPy would do: a call that
    writes into an array, or returns an array that is not a view of one of
    its inputs (a reduction's 0-d result included), launches one kernel;
    views (``reshape`` of a contiguous array, ``transpose``, basic
    indexing, ``astype`` to the same dtype without a copy), metadata
    (``shape``, ``result_type``) and bare allocations (``empty``) launch
    none. Uploads are counted as such by the caller, not as kernels.
    """
    if what in _ALLOCATES_ONLY:
        return
    if (what in _WRITES_FIRST or what.endswith(".at") or kwargs.get("out") is not None
            or (result is None and what.startswith("ndarray."))  # fill, sort, put
            or _fresh(result, args)):
        count_kernel(device)


def count_kernel(device):
    """Count one launch on ``device`` (unless inside a fused kernel's reference)."""
    if not getattr(_local, "fused", 0):
        device.stats.kernel_launches += 1


class one_launch:
    """The array calls inside count as one kernel launch on ``device``: a
    fused kernel's reference (``minikeras.kernels``), which a real GPU runs
    as one compiled kernel."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        _local.fused = getattr(_local, "fused", 0) + 1
        return self.device

    def __exit__(self, *exc):
        _local.fused -= 1
        if not _local.fused and exc[0] is None:
            self.device.stats.kernel_launches += 1
        return False


def _fresh(result, args):
    """Whether ``result`` holds a newly computed array (not a view of ``args``)."""
    if isinstance(result, numpy.generic):
        return True
    if isinstance(result, (tuple, list)):
        return any(_fresh(item, args) for item in result)
    if not isinstance(result, numpy.ndarray):
        return False
    owner = _memory_owner(result)
    return not any(_memory_owner(value) is owner for value in _arrays(args))


def _memory_owner(array):
    # ``base`` may be a non-array holder with its own ``base`` (as_strided's).
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def _arrays(values):
    for value in values:
        if isinstance(value, numpy.ndarray):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from _arrays(value)


class SimulatedArray:
    """A NumPy array dressed as a ``cupy.ndarray`` (module docstring)."""

    __slots__ = ("_array", "_device", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, array, device):
        self._array = array
        self._device = device

    # ------------------------------------------------------- strict refusals
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy "
            "array explicitly. (simulated GPU array)"
        )

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented

    def __array_function__(self, func, types_, args, kwargs):
        return NotImplemented

    # ------------------------------------------------------------ metadata
    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)
    size = property(lambda self: self._array.size)
    nbytes = property(lambda self: self._array.nbytes)
    itemsize = property(lambda self: self._array.itemsize)
    strides = property(lambda self: self._array.strides)
    flags = property(lambda self: _Flags(self._array.flags))
    device = property(lambda self: _CudaDevice(self._device.physical.index))

    @property
    def data(self):
        """A ``cupy.cuda.MemoryPointer`` stand-in: ``ptr`` (the address of
        the first element) and ``mem`` (the whole buffer, shared by views)."""
        return _MemoryPointer(self._array, self._device)

    @property
    def base(self):
        base = self._array.base
        return None if base is None else SimulatedArray(base, self._device)

    @property
    def real(self):
        return SimulatedArray(self._array.real, self._device)

    @property
    def imag(self):
        return SimulatedArray(self._array.imag, self._device)

    @property
    def T(self):
        return SimulatedArray(self._array.T, self._device)

    def __len__(self):
        return len(self._array)

    def __repr__(self):
        return f"simulated_gpu_array({numpy.array2string(self._array, separator=', ')}, device={self._device.name})"

    __str__ = __repr__

    # ----------------------------------------------------------- host reads
    def _host(self, what):
        device = _require(self._device, what)
        graph.refuse_in_capture(device, what, graph.HOST_SYNC)
        device.stats.host_syncs += 1
        _issue(what, (self._array,), ())
        return self._array

    def get(self, stream=None, out=None):
        """The explicit device-to-host copy (a host synchronisation)."""
        return self._host("get()").copy()

    def item(self):
        return self._host("item()").item()

    def tolist(self):
        return self._host("tolist()").tolist()

    def tobytes(self, order="C"):
        return self._host("tobytes()").tobytes(order)

    def __float__(self):
        return float(self._host("float()"))

    def __int__(self):
        return int(self._host("int()"))

    def __complex__(self):
        return complex(self._host("complex()"))

    def __bool__(self):
        return bool(self._host("bool()"))

    def set(self, array, stream=None):
        """Copy a host array into this one (an upload), as ``cupy.ndarray.set``."""
        device = _require(self._device, "set()")
        graph.refuse_in_capture(device, "set() from the host", graph.UPLOAD)
        device.stats.uploads += 1
        _issue("set()", (), (self._array,))
        self._array[...] = array

    # ------------------------------------------------------------- methods
    def __getattr__(self, name):
        if name not in _CUPY_ARRAY_METHODS:
            raise AttributeError(f"'cupy.ndarray' (simulated) object has no attribute {name!r}")
        cupy_method = simulated_indexing.METHODS.get(name)  # where CuPy differs: out-of-range ids wrap

        def call(*args, **kwargs):
            simulated_limits.check_method(name, self, args, kwargs)
            method = cupy_method or (lambda array, *rest, **options: getattr(array, name)(*rest, **options))
            return _call(method, f"ndarray.{name}", (self,) + args, kwargs)[0]

        return call

    # Integer-array indices wrap around as in CuPy (device/simulated_indexing.py).
    def __getitem__(self, key):
        return _call(lambda array, key: array[simulated_indexing.wrap_index(array.shape, key)], "getitem",
                     (self, key), {}, allow_host=True)[0]

    def __setitem__(self, key, value):
        def assign(array, key, value):
            array[simulated_indexing.wrap_index(array.shape, key)] = value

        _call(assign, "setitem", (self, key, value), {}, allow_host=True)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        # CuPy's ndarray.__deepcopy__ copies under its own device
        # (cupy/_core/core.pyx): here, inside its device's activate().
        with self._device.activate():
            return self.copy()


def _binary(name, reflected=False, inplace=False):
    operator = getattr(numpy.ndarray, name)

    def method(self, other):
        if isinstance(other, numpy.ndarray):
            raise TypeError(
                f"Unsupported type <class 'numpy.ndarray'> in {name} with a simulated GPU array: device arrays "
                "do not mix with host arrays."
            )
        if not isinstance(other, (SimulatedArray, int, float, complex, bool, numpy.generic)):
            return NotImplemented
        if "matmul" in name:
            simulated_limits.check_matmul(*((other, self) if reflected else (self, other)))
        result, _ = _call(operator, name, (self, other), {})
        return self if inplace else result

    method.__name__ = name
    return method


for _name in ("add sub mul truediv floordiv mod pow matmul and or xor lshift rshift divmod").split():
    setattr(SimulatedArray, f"__{_name}__", _binary(f"__{_name}__"))
    setattr(SimulatedArray, f"__r{_name}__", _binary(f"__r{_name}__", reflected=True))
    if _name != "divmod":
        setattr(SimulatedArray, f"__i{_name}__", _binary(f"__i{_name}__", inplace=True))
for _name in "lt le gt ge eq ne".split():
    setattr(SimulatedArray, f"__{_name}__", _binary(f"__{_name}__"))


def _unary(name):
    operator = getattr(numpy.ndarray, name)

    def method(self):
        return _call(operator, name, (self,), {})[0]

    method.__name__ = name
    return method


for _name in "neg pos abs invert".split():
    setattr(SimulatedArray, f"__{_name}__", _unary(f"__{_name}__"))


class _Ufunc:
    """A NumPy ufunc on simulated arrays (``at``, ``reduce``, ... included)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args, **kwargs):
        simulated_limits.check_function(self.__name__, args, kwargs)  # matmul is a ufunc in NumPy 2
        return _call(self._ufunc, self.__name__, args, kwargs)[0]

    def __getattr__(self, name):
        method = getattr(self._ufunc, name)
        if not callable(method):
            return method
        ufunc_name = self.__name__

        def call(*args, **kwargs):
            # CuPy's ufunc.at/reduce/accumulate refuse more than NumPy's (simulated_limits.py).
            simulated_limits.check_ufunc_method(ufunc_name, name, args, kwargs)
            result = _call(_wrapping_at(method) if name == "at" else method, f"{ufunc_name}.{name}", args,
                           kwargs)[0]
            if name == "at" and ufunc_name in ("maximum", "minimum"):
                _round_like_cupys_double_atomics(args, kwargs)
            return result

        return call


def _wrapping_at(method):
    """``ufunc.at`` as CuPy's ``_scatter_op``: integer-array indices wrap."""
    def at(a, indices, *rest):
        return method(a, simulated_indexing.wrap_index(a.shape, indices), *rest)

    return at


def _round_like_cupys_double_atomics(args, kwargs):
    """CuPy 14.2's double atomicMax/atomicMin compare with fmaxf/fminf
    (cupy/_core/include/cupy/atomics.cuh): every float64 element that
    ``maximum.at``/``minimum.at`` touches is stored rounded to float32."""
    target = args[0] if args else kwargs.get("a")
    indices = args[1] if len(args) > 1 else kwargs.get("indices")
    if type(target) is not SimulatedArray or target.dtype != numpy.float64:
        return
    if not simulated_limits._has_integer_array(indices):
        return
    host = target._array
    touched = numpy.zeros(host.shape, dtype=bool)
    touched[simulated_indexing.wrap_index(host.shape, _unwrap(indices, [None], "ufunc.at", True))] = True
    host[touched] = host[touched].astype(numpy.float32)


# Functions whose CuPy 14.2 result differs from NumPy's on the same input:
# out-of-range integer indices wrap (device/simulated_indexing.py).
_CUPY_SEMANTICS = dict(simulated_indexing.FUNCTIONS)


class SimulatedNumpy(types.SimpleNamespace):
    """The simulated GPU's array module: NumPy's API on :class:`SimulatedArray`."""

    def __init__(self, module, name):
        super().__init__()
        self.__dict__["_module"] = module
        self.__dict__["__name__"] = name
        self.__dict__["ndarray"] = SimulatedArray

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if isinstance(value, types.ModuleType):
            wrapped = SimulatedNumpy(value, f"{self.__name__}.{name}")
        elif isinstance(value, numpy.ufunc):
            wrapped = _Ufunc(value)
        elif isinstance(value, type) or not callable(value):
            wrapped = value  # dtypes, constants (pi, newaxis), exception types
        elif self._module is numpy and name in _CUPY_SEMANTICS:
            wrapped = _function(_CUPY_SEMANTICS[name], name)
        else:
            wrapped = _function(value, name)
        self.__dict__[name] = wrapped
        return wrapped

    def __repr__(self):
        return f"<simulated array module {self.__name__}>"


def _function(function, name):
    allow_host = name in _CREATION

    def call(*args, **kwargs):
        simulated_limits.check_function(name, args, kwargs)  # what CuPy refuses and NumPy computes
        if name in _CREATION and args and type(args[0]) is SimulatedArray:
            source = args[0]
            copy = name == "array" and kwargs.get("copy", True)
            dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
            order_ok = name != "ascontiguousarray" or source._array.flags.c_contiguous
            if not copy and order_ok and (dtype is None or numpy.dtype(dtype) == source.dtype):
                _require(source._device, name)
                return source
        return _call(function, name, args, kwargs, allow_host=allow_host)[0]

    call.__name__ = name
    return call


def simulated_xp():
    """A fresh array module object standing in for ``cupy``."""
    return SimulatedNumpy(numpy, "simulated_cupy")
