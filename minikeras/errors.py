"""The library's own exceptions."""


class ResourceExhaustedError(RuntimeError):
    """Raised when an allocation would go past a device's memory limit.

    Like TensorFlow's error of the same name. The allocation that failed is
    not made; the process can go on, e.g. with a smaller batch.

    Attributes:
        device: canonical name of the logical device, e.g. ``/device:GPU:0``.
        requested: bytes asked for (None when the allocator did not say:
            a size past what 64 bits address, or a bare MemoryError).
        in_use: bytes held on the device when the request was made.
        limit: the device's limit in bytes (None when the device itself ran out).
    """

    def __init__(self, device, requested, in_use, limit, detail=""):
        self.device = device
        self.requested = None if requested is None else int(requested)
        self.in_use = int(in_use)
        self.limit = None if limit is None else int(limit)
        self.detail = detail
        self.op = None  # the op whose work asked, once op_errors.translate names it
        asked = "an allocation of unknown size" if self.requested is None else f"{self.requested} bytes"
        limit_text = "the device's capacity" if limit is None else f"limit {self.limit} bytes"
        message = f"Out of memory on {device}: asked for {asked} with {self.in_use} bytes in use, {limit_text}."
        if detail:
            message += " " + detail
        super().__init__(message)


class DeviceError(RuntimeError):
    """A device failed while running an op: a CUDA library (cuBLAS, the CUDA
    runtime or driver, NVRTC compiling a kernel) reported an error.

    Like TensorFlow's ``InternalError`` for a failed GPU kernel, but the
    message names the device, the op and what to try. The CuPy error is the
    ``__cause__``.

    Attributes:
        device: canonical name of the logical device, e.g. ``/device:GPU:0``.
        op: the op that was running (None outside an op).
        component: the CUDA component that failed (``"cuBLAS"``, ``"CUDA runtime"``...).
        status: its status code, if it has one.
    """

    def __init__(self, device, op, component, status, message):
        self.device, self.op, self.component, self.status = device, op, component, status
        super().__init__(message)


class WorkerDiedError(RuntimeError):
    """A worker process loading a PyDataset's batches died (killed by the
    system, crashed in native code, or ended by ``os._exit``). The message
    names the dataset class and the batches in flight; the pool's
    BrokenProcessPool is the cause."""


class TensorFlowAPIError(NotImplementedError):
    """A TensorFlow-only API met a minikeras tensor, in a script ported from
    Keras's TensorFlow backend: ``@tf.function`` tracing minikeras code
    (TensorFlow would freeze its result into the graph as a constant), or a
    ``tf.GradientTape`` asked to differentiate minikeras tensors (it cannot
    see minikeras's graph). The message names minikeras's replacement:
    ``minikeras.GradientTape``, and ``compile(jit_compile=True)`` for a
    captured training step. A NotImplementedError (as TensorFlow's own
    "Cannot convert a symbolic tf.Tensor" is), never a TypeError, which
    TensorFlow would catch and replace with a message of its own."""


class TensorFlowTapeError(TensorFlowAPIError, AttributeError):
    """``tf.GradientTape.gradient`` reached a minikeras tensor (TensorFlow
    reads its ``_id``; an AttributeError too, so probes with ``hasattr``
    still answer False)."""
