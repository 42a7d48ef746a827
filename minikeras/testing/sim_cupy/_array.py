"""``cupy.ndarray`` of the simulated CuPy: a NumPy buffer in a device block.

An array holds its NumPy array (``_array``) and the memory block it lives
in (``_mem``: a pool chunk, shared by its views; ``data`` is a
``MemoryPointer`` into it). It behaves like ``cupy.ndarray`` where NumPy is
lenient:

- implicit conversion to NumPy raises TypeError (``numpy.asarray(a)``,
  ``a.__array__()``, a NumPy function given it), as CuPy does; the host copy
  is explicit: ``a.get()``; mixing it with a NumPy array in arithmetic
  raises TypeError, as CuPy's kernels do;
- ``flags`` has only ``c_contiguous``, ``f_contiguous`` and ``owndata``,
  and attributes ``cupy.ndarray`` lacks (``ctypes``, ``setflags``,
  ``resize``, ...) are absent;
- ``item()``, ``tolist()``, ``float()``, ``int()``, ``bool()`` are host
  synchronisations, counted (``_counting.py``; ``get()`` is the library's
  own ``device.to_host``, which counts itself);
- integer-array indices wrap around as in CuPy 14.2 (``_indexing.py``) and
  what CuPy refuses is refused (``_limits.py``);
- every computation runs through ``_calls.call`` (streams, captures, the
  race detector, launch counts).
"""
import numpy

from minikeras.testing.sim_cupy import _calls, _indexing, _limits
from minikeras.testing.sim_cupy.cuda import memory, runtime

# Public methods of cupy.ndarray (CuPy 14.2) that the simulation offers;
# everything else NumPy has is absent, as on a real GPU.
METHODS = frozenset(
    "all any argmax argmin argpartition argsort astype choose clip compress conj conjugate copy cumprod cumsum "
    "diagonal dot fill flatten max mean min nonzero partition prod ptp put ravel repeat reshape round searchsorted "
    "sort squeeze std sum swapaxes take trace transpose var view".split()
)


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


class ndarray:
    """``cupy.ndarray`` (module docstring). ``ndarray(shape, dtype=float)``
    allocates one, uninitialised, with the current allocator."""

    __slots__ = ("_array", "_mem", "__weakref__")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        if memptr is not None or strides is not None:
            raise NotImplementedError("simulated CuPy: ndarray(memptr=, strides=) is not modelled")
        _calls.stream_for((), "ndarray()")
        host = numpy.empty(shape, dtype, order=order)
        self._array, self._mem = host, _calls.allocate(host)

    @classmethod
    def _make(cls, array, block):
        made = object.__new__(cls)
        made._array = array
        made._mem = block
        return made

    # ------------------------------------------------------- strict refusals
    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy "
            "array explicitly.")

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

    @property
    def device(self):
        from minikeras.testing.sim_cupy.cuda.device import Device

        return Device(self._mem.device_id)

    @property
    def data(self):
        """A ``MemoryPointer`` to the first element, in the array's block."""
        block = self._mem
        offset = 0
        if block._host is not None and block.ptr:
            offset = self._array.__array_interface__["data"][0] - block._host.__array_interface__["data"][0]
        return memory.MemoryPointer(block, offset)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "descr": self.dtype.descr, "strides": None
                if self._array.flags.c_contiguous else self.strides, "data": (self.data.ptr, False), "version": 3}

    @property
    def base(self):
        base = self._array.base
        return ndarray._make(base, self._mem) if isinstance(base, numpy.ndarray) else None

    @property
    def real(self):
        return ndarray._make(self._array.real, self._mem)

    @property
    def imag(self):
        return ndarray._make(self._array.imag, self._mem)

    @property
    def T(self):
        return ndarray._make(self._array.T, self._mem)

    def __len__(self):
        return len(self._array)

    def __repr__(self):
        text = numpy.array2string(self._array, separator=", ")
        return f"array({text})  # simulated CuPy, device {self._mem.device_id}"

    __str__ = __repr__

    # ------------------------------------------------------------- DLPack
    def __dlpack_device__(self):
        return (2, self._mem.device_id)  # kDLCUDA

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """What ``from_dlpack`` of the simulated CuPy reads (a real capsule
        would hold a raw pointer). As CuPy's: when the consumer names its
        ``stream``, that stream waits for the work of the current one (the
        exporter's)."""
        from minikeras.testing.sim_cupy.cuda import stream as stream_module

        current = stream_module._current()
        if stream is not None and stream not in (0, 1, 2) and stream != current.ptr and current.ptr not in (0, 1):
            consumer = stream_module._from_pointer(stream)
            if consumer is not None:
                consumer.wait_event(current.record())
        return _Capsule(self)

    # ----------------------------------------------------------- host reads
    def get(self, stream=None, order="C", out=None, blocking=True):
        """The explicit device-to-host copy (``device.to_host`` counts it)."""
        if stream is not None:
            with stream:
                host = _calls.host_read(self, "get()", count=False)
        else:
            host = _calls.host_read(self, "get()", count=False)
        if out is not None:
            out[...] = host
            return out
        return numpy.array(host, order=order, copy=True)

    def item(self):
        return _calls.host_read(self, "item()").item()

    def tolist(self):
        return _calls.host_read(self, "tolist()").tolist()

    def tobytes(self, order="C"):
        return _calls.host_read(self, "tobytes()").tobytes(order)

    def __float__(self):
        return float(_calls.host_read(self, "float()"))

    def __int__(self):
        return int(_calls.host_read(self, "int()"))

    def __complex__(self):
        return complex(_calls.host_read(self, "complex()"))

    def __bool__(self):
        return bool(_calls.host_read(self, "bool()"))

    def __index__(self):
        return _calls.host_read(self, "index").__index__()

    def set(self, arr, stream=None):
        """Copy the host array ``arr`` into this one: CuPy 14.2's
        ``cudaMemcpyAsync`` on ``stream`` (the current one by default), with
        its checks; from pinned memory the host may not write ``arr`` again
        before the copy is known done (cuda/pinned_memory.py)."""
        if not isinstance(arr, numpy.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if self.dtype != arr.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if self.shape != arr.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        if not (self._array.flags.c_contiguous or self._array.flags.f_contiguous):
            raise RuntimeError("Cannot set to non-contiguous array")
        if stream is not None:
            with stream:
                host = _calls.host_write(self, "set()", arr)
        else:
            host = _calls.host_write(self, "set()", arr)
        host[...] = arr

    # ------------------------------------------------------------- methods
    def __getattr__(self, name):
        if name not in METHODS:
            raise AttributeError(f"'cupy.ndarray' object has no attribute {name!r} (simulated CuPy 14.2)")
        cupy_method = _indexing.METHODS.get(name)  # where CuPy differs: out-of-range ids wrap
        if name == "copy" and self._mem.device_id != runtime.getDevice():
            return lambda order="C": _calls.copy_across(self, order)

        def method(*args, **kwargs):
            _limits.check_method(name, self, args, kwargs)
            function = cupy_method or (lambda array, *rest, **options: getattr(array, name)(*rest, **options))
            return _calls.call(function, f"ndarray.{name}", (self,) + args, kwargs)

        return method

    def __getitem__(self, key):
        return _calls.call(_getitem, "getitem", (self, key), {}, allow_host=True)

    def __setitem__(self, key, value):
        _calls.call(_setitem, "setitem", (self, key, value), {}, allow_host=True)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self)))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        # CuPy's ndarray.__deepcopy__ copies under its own device
        # (cupy/_core/core.pyx), on that device's current stream.
        with self.device:
            return self.copy()


class _Capsule:
    """A DLPack export of a simulated array (see ``ndarray.__dlpack__``)."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def _getitem(array, key):
    return array[_indexing.wrap_index(array.shape, key)]


def _setitem(array, key, value):
    array[_indexing.wrap_index(array.shape, key)] = value


def _binary(name, reflected=False, inplace=False):
    operator = getattr(numpy.ndarray, name)

    def method(self, other):
        if isinstance(other, numpy.ndarray):
            raise TypeError(f"Unsupported type <class 'numpy.ndarray'> in {name} with a cupy.ndarray: device arrays "
                            "do not mix with host arrays (simulated CuPy).")
        if not isinstance(other, (ndarray, int, float, complex, bool, numpy.generic)):
            return NotImplemented
        if "matmul" in name:
            _limits.check_matmul(*((other, self) if reflected else (self, other)))
        result = _calls.call(operator, name, (self, other), {})
        return self if inplace else result

    method.__name__ = name
    return method


for _name in ("add sub mul truediv floordiv mod pow matmul and or xor lshift rshift divmod").split():
    setattr(ndarray, f"__{_name}__", _binary(f"__{_name}__"))
    setattr(ndarray, f"__r{_name}__", _binary(f"__r{_name}__", reflected=True))
    if _name != "divmod":
        setattr(ndarray, f"__i{_name}__", _binary(f"__i{_name}__", inplace=True))
for _name in "lt le gt ge eq ne".split():
    setattr(ndarray, f"__{_name}__", _binary(f"__{_name}__"))


def _unary(name):
    operator = getattr(numpy.ndarray, name)

    def method(self):
        return _calls.call(operator, name, (self,), {})

    method.__name__ = name
    return method


for _name in "neg pos abs invert".split():
    setattr(ndarray, f"__{_name}__", _unary(f"__{_name}__"))

_calls.ndarray = ndarray
