"""Per-step scalars of a captured training step, read from device memory.

An eager step hands its kernels the learning rate and Adam's bias-corrected
step size as Python floats, computed on the host from ``iterations`` and the
schedule. A CUDA graph would freeze the values of the step it captured
(``device/graph.py``), so while a step is captured the optimizer asks
:meth:`StepScalars.bind` instead (``Optimizer._step_value``): the kernel
gets a 0-d view of one slot of a small device buffer, and the captured step
calls :meth:`StepScalars.refresh` before every replay, which recomputes each
value on the host exactly as the eager step computes it (same schedule, same
``iterations``, same float64 arithmetic, rounded to the variables' dtype as
a kernel argument is) and uploads them all in one copy. So a replayed step
updates the weights with the bits an eager step would, for any schedule or
callable learning rate, at the cost of one small host-to-device copy.
"""
import numpy

from minikeras.device.graph import GraphCaptureError

SLOTS = 16


class StepScalars:
    """A device buffer of per-step scalars and how to recompute each.

    Args:
        device: the device of the captured step (made before the capture:
            no allocation or upload may happen inside it).
        dtype: the dtype of the variables (what the kernels compute in).
    """

    def __init__(self, device, dtype):
        self.device = device
        self.dtype = numpy.dtype(dtype)
        with device.activate():
            self.buffer = device.xp.zeros(SLOTS, self.dtype)
        self._recompute = []

    def bind(self, value, recompute):
        """A 0-d device view standing for ``value`` in the step being
        captured; ``recompute()`` gives its value at a later step."""
        index = len(self._recompute)
        if index == SLOTS:
            raise GraphCaptureError(f"a captured step may use at most {SLOTS} per-step scalars.")
        self._recompute.append(recompute)
        with self.device.activate():
            return self.buffer[index:index + 1].reshape(())

    def refresh(self):
        """Recompute every bound scalar for the coming step and upload them."""
        values = numpy.zeros(SLOTS, self.dtype)
        values[:len(self._recompute)] = [recompute() for recompute in self._recompute]
        with self.device.activate():
            self.buffer.set(values, stream=self.device.stream)  # asynchronous, in the device's order
