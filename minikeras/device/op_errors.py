"""Errors an op's array work raises, as the library's own, naming the op and the device.

Called where every op's work runs: ``Function.apply`` and the engine's
``backward`` (through :func:`reraise`, free on the path without errors) and
the creation ops (the :func:`translated` context). What it turns:

- an allocation the host cannot make (NumPy's ``MemoryError``, or its
  ``ValueError`` "array is too big" for a size no machine has), e.g.
  ``ops.one_hot(x, 10**12)``: :class:`~minikeras.errors.ResourceExhaustedError`
  naming the op and the bytes asked for, as the GPU pool raises;
- CuPy's CUDA errors (cuBLAS, runtime, driver, NVRTC): cuda_errors.py.

Anything else passes unchanged: it is a bug to fix where it is raised, not
to rename here.
"""
import contextlib

from minikeras.device import cuda_errors
from minikeras.errors import DeviceError, ResourceExhaustedError

_TOO_BIG = ("array is too big", "maximum allowed dimension exceeded", "maximum supported dimension")


def _requested_bytes(error):
    """The bytes a NumPy ``_ArrayMemoryError`` (or CuPy's OutOfMemoryError)
    asked for; None when the error does not say (NumPy's "array is too big",
    whose size overflows, or a bare MemoryError)."""
    shape, dtype = getattr(error, "shape", None), getattr(error, "dtype", None)
    if shape is None or dtype is None:
        size = getattr(error, "_size", None)
        return int(size) if size else None
    count = 1
    for size in shape:
        count *= int(size)
    return count * dtype.itemsize


def translate(error, device, op_name=None):
    """The library error for ``error`` raised by ``op_name``'s work on ``device``, or None."""
    if isinstance(error, ResourceExhaustedError):
        return _named(error, op_name)
    if isinstance(error, DeviceError):
        return None
    too_big = isinstance(error, ValueError) and any(text in str(error).lower() for text in _TOO_BIG)
    if (isinstance(error, MemoryError) and cuda_errors.component(error) is None) or too_big:
        memory = getattr(device, "memory", None)
        cause = " (its size in bytes does not fit in 64 bits)" if too_big else f" ({error})"
        replacement = ResourceExhaustedError(
            device.canonical, _requested_bytes(error), getattr(memory, "current", 0) or 0,
            getattr(memory, "limit", None), _advice(op_name, cause))
        replacement.op = op_name
        return replacement
    return cuda_errors.translate(error, device, op_name)


def _advice(op_name, cause=""):
    where = f"{op_name}" if op_name else "an allocation"
    return (f"{where} could not allocate its result{cause}. Check the sizes passed to {where} (a shape, a "
            "depth or a repeat count far larger than intended?), or use a smaller batch.")


def _named(error, op_name):
    """A device allocator's ResourceExhaustedError (a GPU pool's, raised
    inside the op's work, knows no op) again, naming the innermost op; None
    when it already names one or there is none to name."""
    if op_name is None or error.op is not None:
        return None
    detail = " ".join(filter(None, [_advice(op_name), error.detail]))
    replacement = ResourceExhaustedError(error.device, error.requested, error.in_use, error.limit, detail)
    replacement.op = op_name
    return replacement


def reraise(device, op_name=None):
    """Called in an ``except`` block (without ``as``, on the hot paths): raise the
    library's error for the exception being handled, or re-raise it."""
    cuda_errors.reraise(device, op_name, translate)


@contextlib.contextmanager
def translated(device, op_name=None):
    """Run an op's array work, raising the library's error for the failures above."""
    try:
        yield
    except Exception:  # noqa: BLE001  (translate() picks; the rest re-raise unchanged)
        reraise(device, op_name)
