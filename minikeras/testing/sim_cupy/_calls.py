"""How the simulated CuPy runs one array call: the checks CuPy and CUDA
make, the call itself in NumPy, and what the simulation records.

Every call (a module function, a ufunc and its methods, an ndarray method
or operator) goes through :func:`call`:

1. it is issued to the current stream of the current device in this
   thread; work for the legacy null stream is refused (minikeras issues all
   its work to its devices' streams: device/gpu.py, rule 1), and so is an
   array of another device (CuPy: "Peer access is unavailable");
2. a host (NumPy) array is refused, except by the creation functions,
   which upload it (refused while the stream captures: a pageable copy);
3. while the stream captures: the capture is checked (an invalidated one
   refuses everything), cuBLAS-backed products of floating arrays are
   refused as CuPy 14.2 refuses them (``NotImplementedError`` from
   ``cublas.setStream``), and the blocks the call writes are kept, to be put
   back when the capture ends (cuda/graph.py);
4. NumPy computes (CuPy's own semantics where they differ: _indexing.py,
   _limits.py); each new result buffer is allocated from the current
   allocator (the pool of the library's device, inside its activate());
5. the race detector records the blocks read, written and made (_races.py),
   a kernel launch is counted (_counting.py: one per call that computes,
   none for views, metadata and bare allocations), and a capture records the
   call as a node.
"""
import numpy

from minikeras.testing.sim_cupy import _counting, _races
from minikeras.testing.sim_cupy.cuda import device as device_module
from minikeras.testing.sim_cupy.cuda import graph, memory, pinned_memory, runtime, stream as stream_module

ndarray = None  # the simulated ndarray class (set by _array.py)

# Calls CuPy runs on cuBLAS (for floating operands), which CuPy 14.2 refuses
# while a stream captures (cublas.setStream raises NotImplementedError).
CUBLAS = frozenset("__matmul__ __rmatmul__ __imatmul__ matmul dot ndarray.dot vdot inner tensordot einsum".split())

# Operations that write their first argument in place: the race detector's
# writes, and kernels for the launch count even when they return nothing.
WRITES_FIRST = frozenset(
    "setitem ndarray.fill ndarray.sort ndarray.put ndarray.partition copyto put put_along_axis place putmask "
    "fill_diagonal".split()
    + [f"__i{name}__" for name in "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift".split()]
)
# Calls that make a new array without running a kernel (an allocation only).
ALLOCATES_ONLY = frozenset("empty empty_like".split())


def stream_for(arrays, what):
    """The stream a call on ``arrays`` is issued to (module docstring, 1)."""
    current_device = runtime.getDevice()
    for array in arrays:
        if array._mem.device_id != current_device:
            raise ValueError(f"The device where the array resides ({array._mem.device_id}) is different from the "
                             f"current device ({current_device}). Peer access is unavailable between these devices.")
    stream = stream_module._current()
    if stream.ptr in (0, 1):
        raise RuntimeError(
            f"Simulated CUDA: {what} was issued to the legacy default stream of device {current_device}, outside any "
            "device's activate(). minikeras issues all its work to its devices' streams (device/gpu.py, rule 1): "
            "run it inside the device's activate().")
    return stream


def _unwrap(value, found, what, allow_host, uploads):
    if type(value) is ndarray:
        found.append(value)
        return value._array
    if isinstance(value, numpy.ndarray):
        if not allow_host:
            raise TypeError(
                f"Unsupported type {type(value)} in {what}: device arrays do not mix with host arrays (simulated "
                "CuPy). Upload it with device.asarray first.")
        uploads.append(value)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(item, found, what, allow_host, uploads) for item in value)
    if isinstance(value, dict):
        return {key: _unwrap(item, found, what, allow_host, uploads) for key, item in value.items()}
    return value


def _blocks(values, found):
    """The memory blocks of the simulated arrays in ``values``."""
    if type(values) is ndarray:
        found.append(values._mem)
    elif isinstance(values, (list, tuple)):
        for item in values:
            _blocks(item, found)
    elif isinstance(values, dict):
        for item in values.values():
            _blocks(item, found)
    return found


def _accessed(what, args, kwargs):
    """(blocks read, blocks written in place) by one call."""
    reads = _blocks(kwargs, _blocks(args, []))
    writes = _blocks(kwargs.get("out"), []) if "out" in kwargs else []
    if args and (what in WRITES_FIRST or what.endswith(".at")):
        writes += _blocks(args[0], [])
    return reads, writes


def memory_owner(array):
    """The object that owns ``array``'s buffer (its ``base`` chain's end)."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def allocate(root):
    """A block of the current allocator for the NumPy buffer ``root``."""
    block = memory.alloc(root.nbytes).mem
    block._host = root
    return block


def wrap(value, owners, fresh):
    """``value`` (NumPy results) as simulated arrays: views of an input share
    its block (``owners``: id of a buffer -> block), new buffers get a block
    of their own (appended to ``fresh``). Returns (wrapped, NumPy arrays)."""
    if isinstance(value, numpy.ndarray):
        owner = memory_owner(value)
        block = owners.get(id(owner))
        if block is None:
            if not isinstance(owner, numpy.ndarray):
                owner = value if value.base is None else numpy.ascontiguousarray(value)
                value = owner
            block = allocate(owner)
            owners[id(owner)] = block
            fresh.append(block)
        return ndarray._make(value, block), value
    if isinstance(value, numpy.generic):
        return wrap(numpy.asarray(value), owners, fresh)
    if isinstance(value, (tuple, list)):
        pairs = [wrap(item, owners, fresh) for item in value]
        return _same_kind(value, [pair[0] for pair in pairs]), _same_kind(value, [pair[1] for pair in pairs])
    return value, None


def _same_kind(sequence, items):
    """``items`` as a sequence of ``sequence``'s type (a named tuple's too)."""
    if hasattr(sequence, "_fields"):
        return type(sequence)(*items)
    return type(sequence)(items)


def _detached(result, hosts):
    """``result`` with no buffer shared with the host arrays ``hosts`` (ids of
    their owners): an upload copies, where NumPy may return its input."""
    if isinstance(result, numpy.ndarray):
        return result.copy() if id(memory_owner(result)) in hosts else result
    if isinstance(result, (tuple, list)):
        return _same_kind(result, [_detached(item, hosts) for item in result])
    return result


def _floating(arrays):
    return any(array._array.dtype.kind in "fcV" for array in arrays)


# CuPy's products through tensordot_core_v11, which passes its float32 compute
# type (TF32 or not, _core.py); its batched matmul and einsum do not.
_TENSORDOT_CORE = frozenset("dot ndarray.dot tensordot inner".split())
_MATRIX_PRODUCTS = frozenset("__matmul__ __rmatmul__ matmul".split())


def _tf32_inputs(what, args, arrays):
    """``args`` with float32 arrays rounded to TF32 when CuPy's float32
    compute type is TF32 and ``what`` is one of its GEMMs that honour it."""
    from minikeras.testing.sim_cupy import _core
    from minikeras.testing.sim_cupy.libs import cublas

    if not (what in _TENSORDOT_CORE or (what in _MATRIX_PRODUCTS and all(a._array.ndim <= 2 for a in arrays))):
        return args
    if any(a._array.dtype != numpy.float32 for a in arrays) or \
            _core.get_compute_type(numpy.float32) != _core._routines_linalg.COMPUTE_TYPE_TF32:
        return args
    return tuple(cublas.to_tf32(arg) if isinstance(arg, numpy.ndarray) else arg for arg in args)


def call(function, what, args, kwargs, allow_host=False):
    """Run ``function`` (NumPy) on ``args``/``kwargs`` as the simulated CuPy
    call ``what`` (module docstring). Returns the wrapped result."""
    arrays, uploads = [], []
    reads, writes = _accessed(what, args, kwargs)
    args = _unwrap(args, arrays, what, allow_host, uploads)
    kwargs = _unwrap(kwargs, arrays, what, allow_host, uploads)
    stream = stream_for(arrays, what)
    capture = stream.capture
    if capture is not None:
        capture.check()
        if uploads:
            capture.fail(runtime.CUDARuntimeError(runtime._errorStreamCaptureUnsupported))
        if what in CUBLAS and _floating(arrays):
            raise NotImplementedError("calling cuBLAS API during stream capture is currently unsupported")
        capture.will_write(writes)
    elif uploads:
        graph._refuse_unsafe_call(f"{what} from host memory")
    if what in CUBLAS and _floating(arrays):
        device_module.get_cublas_handle()
        args = _tf32_inputs(what, args, arrays)
    result = function(*args, **kwargs)
    if uploads:
        result = _detached(result, {id(memory_owner(host)) for host in uploads})
    owners = {id(array._mem._host): array._mem for array in arrays}
    fresh = []
    wrapped, inner = wrap(result, owners, fresh)
    _races.access(stream, what, reads, writes, fresh)
    if not uploads and what not in ALLOCATES_ONLY and (
            fresh or writes or what.endswith(".at") or kwargs.get("out") is not None
            or (result is None and what.startswith("ndarray."))):
        _counting.launch(stream)
    if capture is not None:
        capture.record(function, args, kwargs, reads, writes, inner, fresh)
    return wrapped


def copy_across(source, order="C"):
    """``source.copy()`` of an array of another device, on the current one
    (CuPy's ``ndarray.copy``: a peer copy of a contiguous array, issued to
    the current stream, which reads the source's block)."""
    flags = source._array.flags
    if not flags.c_contiguous and not flags.f_contiguous:
        raise NotImplementedError("CuPy cannot copy non-contiguous array between devices.")
    stream = stream_for((), "copy from another device")
    if stream.capture is not None:
        stream.capture.check()
    host = source._array.copy(order=order)
    fresh = []
    copied, _ = wrap(host, {}, fresh)
    _races.access(stream, f"copy from device {source._mem.device_id}", [source._mem], (), fresh)
    _counting.launch(stream)
    if stream.capture is not None:
        stream.capture.record(numpy.copyto, (host, source._array), {}, [source._mem], (), None, fresh)
    return copied


def issue(stream, what, reads, writes, compute, fresh=(), run=True):
    """A kernel of a CUDA library double (libs/, random.py): ``compute()``
    does its work on the host buffers of the blocks it ``reads`` and
    ``writes`` (``fresh``: blocks it allocated; ``run=False``: the caller ran
    it already). Issued to ``stream`` as any call: capture, race detector,
    launch count."""
    capture = stream.capture
    writes = [block for block in writes if all(block is not made for made in fresh)]
    if capture is not None:
        capture.check()
        for block in fresh:
            capture.fresh.add(id(block))
        capture.will_write(writes)
    if run:
        compute()
    _races.access(stream, what, reads, writes, fresh)
    _counting.launch(stream)
    if capture is not None:
        capture.record(compute, (), {}, reads, writes, None, fresh)


def host_read(array, what, count=True):
    """The host reads ``array`` (a synchronous copy on the current stream):
    refused while the stream captures; counted as a host sync (``count``)."""
    stream = stream_for((array,), what)
    graph._refuse_host_wait(stream, what)
    if count:
        _counting.host_sync(stream)
    _races.access(stream, what, (array._mem,), ())
    pinned_memory._host_waits(stream.clock)  # the read returns when the stream got there
    return array._array


def host_write(array, what, source=None):
    """The host writes ``array`` (an upload into it, ``ndarray.set``) from the
    NumPy array ``source``: counted; a copy from pinned memory is recorded as
    still reading it (cuda/pinned_memory.py)."""
    stream = stream_for((array,), what)
    graph._refuse_host_wait(stream, what)
    _counting.upload(stream)
    _races.access(stream, what, (), (array._mem,))
    if source is not None:
        pinned_memory._copy_from_host(stream, what, source)
    return array._array
