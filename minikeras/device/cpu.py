"""The CPU: NumPy arrays, the op-thread pool and the BLAS thread policy."""
import numpy

from minikeras.device.device import Device


class CpuDevice(Device):
    """A logical CPU device.

    Arrays are NumPy arrays in host memory, so ``to_host`` returns the array
    itself and ``asarray`` copies only what comes from another device.
    Heavy ops share their blocks among the op threads
    (``minikeras.backend.threads``, which also keeps BLAS single-threaded
    meanwhile): ``parallel_blocks`` and ``matmul`` are the hooks ops call.
    """

    kind = "cpu"
    xp = numpy
    host_kernels = True

    def asarray(self, value, dtype=None):
        from minikeras.device import registry

        if not isinstance(value, numpy.ndarray) and registry.is_device_array(value):
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
        if a.ndim == 2 and b.ndim == 2:
            from minikeras.backend import threads

            return threads.matmul(a, b)
        return a @ b

    def parallel_blocks(self, work, count, setup=None):
        from minikeras.backend import threads

        return threads.parallel_blocks(work, count, setup if setup is not None else (lambda: None))

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
