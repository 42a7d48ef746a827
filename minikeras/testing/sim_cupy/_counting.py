"""What the simulated CUDA counts, charged to minikeras's logical GPUs.

Where a profiler charges kernels to the stream they ran on, the simulation
charges each kernel launch, each implicit host synchronisation (``float``,
``int``, ``bool``, ``item()``, ``tolist()`` of an array: the reads CuPy does
without the library's ``device.to_host``, which counts its own) and each
upload into an existing array (``ndarray.set``; ``device.asarray`` counts its
own), to ``stats`` of the logical GPU whose stream it was issued to: the device
registry's GPU whose ``stream`` that is (during a capture, its side
stream). Work on a stream no logical GPU uses is counted nowhere.
"""
import weakref


def device_of(stream):
    """The registry's logical GPU issuing work to ``stream``, or None."""
    owner = stream.owner
    if owner is not None:
        device = owner()
        if device is not None:
            return device
    from minikeras.device import registry

    if not registry.is_initialized():
        return None
    for device in registry.list_logical_devices("GPU"):
        if getattr(device, "stream", None) is stream:
            stream.owner = weakref.ref(device)
            return device
    return None


def launch(stream):
    """One kernel launched on ``stream``."""
    device = device_of(stream)
    if device is not None:
        device.stats.kernel_launches += 1


def host_sync(stream):
    """The host waited for ``stream`` (an implicit read of an array)."""
    device = device_of(stream)
    if device is not None:
        device.stats.host_syncs += 1


def upload(stream):
    """A host-to-device copy into an array on ``stream`` (``ndarray.set``)."""
    device = device_of(stream)
    if device is not None:
        device.stats.uploads += 1
