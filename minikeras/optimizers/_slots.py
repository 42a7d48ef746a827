"""Storage shared by the optimizers: named state entries and scratch buffers."""
import numpy

from minikeras.device import to_host


class StateEntry:
    """One array of optimizer state, with the name it is saved under.

    Args:
        name: e.g. ``"kernel_momentum"``.
        array: the live array (numpy or cupy).
        device: the Device the array lives on, or None for host scalars.
    """

    __slots__ = ("name", "array", "device")

    def __init__(self, name, array, device=None):
        self.name = name
        self.array = array
        self.device = device

    def assign(self, value):
        """Copy ``value`` into the array in place (shape already checked)."""
        if self.device is None:
            self.array[...] = to_host(value)
            return
        with self.device.activate():
            self.array[...] = self.device.asarray(value, self.array.dtype)


    def to_host(self):
        """A NumPy copy of the array."""
        if self.device is None:
            return numpy.array(self.array, copy=True)
        host = self.device.to_host(self.array)
        return host.copy() if host is self.array else host


class ScratchBuffers:
    """Flat work arrays, one set per (device, dtype), reused by every update.

    A variable gets views of the first ``size`` elements reshaped to its
    shape, so a step allocates no weight-sized temporaries.
    """

    def __init__(self):
        self._buffers = {}  # (device, dtype) -> list of flat arrays
        self._views = {}  # id(variable) -> views shaped like it (variables are kept alive by the optimizer)

    def __deepcopy__(self, memo):
        # Scratch holds nothing between steps, and its views are keyed by
        # the ids of the original's variables: a copy (of an optimizer, of
        # a model) gets new buffers of the same sizes and makes its views on
        # first use, so its first step allocates no more than a later one.
        clone = ScratchBuffers()
        for (device, dtype), buffers in self._buffers.items():
            with device.activate():
                copies = [device.xp.empty(buffer.size, dtype=dtype) for buffer in buffers]
            for buffer in copies:
                device.memory.track(buffer)
            clone._buffers[(device, dtype)] = copies
        return clone

    def reserve(self, variables, count):
        """Allocate ``count`` buffers per (device, dtype), each large enough
        for the largest of ``variables``."""
        for variable in variables:
            self._ensure(variable, count)

    def get(self, variable, count):
        """``count`` arrays shaped and typed like ``variable``, on its device."""
        views = self._views.get(id(variable))
        if views is None or len(views) < count or views[0].shape != variable.data.shape:
            buffers = self._ensure(variable, count)
            size, shape = variable.data.size, variable.shape
            with variable.device.activate():
                views = [buffer[:size].reshape(shape) for buffer in buffers]
            self._views[id(variable)] = views
        return views[:count]

    def _ensure(self, variable, count):
        key = (variable.device, variable.dtype)
        buffers = self._buffers.get(key, [])
        size = variable.data.size
        if len(buffers) < count or buffers[0].size < size:
            device = variable.device
            length = max(size, buffers[0].size if buffers else 0)
            with device.activate():
                buffers = [device.xp.empty(length, dtype=variable.dtype) for _ in range(max(count, len(buffers)))]
            for buffer in buffers:
                device.memory.track(buffer)
            self._buffers[key] = buffers
            self._views.clear()  # views of the old buffers are stale
        return buffers
