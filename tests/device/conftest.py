"""Fixtures of the device tests: two simulated GPUs with the default memory
policy, and a log of the CUDA calls GpuDevice makes on them."""
import pytest

from minikeras.device import registry
from minikeras.testing import sim_cupy
from minikeras.testing.sim_cupy import _calls, simulation
from minikeras.testing.sim_cupy.cuda import memory, runtime, stream as stream_module


@pytest.fixture
def sim_gpus(monkeypatch, fresh_devices):
    """Two simulated physical GPUs behind the simulated CuPy, logical GPUs not
    yet built (configure them first); returns the ``sim_cupy`` module."""
    # These tests are about the default (memory growth off); a GPU run of the
    # suite sets TF_FORCE_GPU_ALLOW_GROWTH so its processes share the GPU.
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    physical, split = registry._registry.physical, registry._split_for_tests[0]
    monkeypatch.setenv(simulation.ENVIRONMENT_VARIABLE, "2")
    registry._prefer_default_for_tests(None)
    registry._split_gpus_for_tests(1)
    registry._registry.physical = None
    registry._reset_for_tests()
    yield sim_cupy
    registry._reset_for_tests()
    monkeypatch.undo()
    registry._registry.physical = physical
    registry._split_gpus_for_tests(split)


@pytest.fixture
def cuda_log(monkeypatch):
    """Each CUDA call that matters, as it is made: ``(what, *details)`` with
    the current device and stream where they count. Entries: ("record",
    stream, event), ("wait", stream, event), (array call or "copy across",
    device, stream),
    ("pool <method>", pool, current device[, size, stream])."""
    log = []
    record, wait = stream_module._BaseStream.record, stream_module._BaseStream.wait_event

    def logged_record(self, event=None):
        event = record(self, event)
        log.append(("record", self, event))
        return event

    def logged_wait(self, event):
        log.append(("wait", self, event))
        return wait(self, event)

    monkeypatch.setattr(stream_module._BaseStream, "record", logged_record)
    monkeypatch.setattr(stream_module._BaseStream, "wait_event", logged_wait)
    call = _calls.call

    def logged_call(function, what, args, kwargs, allow_host=False):
        log.append((what, runtime.getDevice(), stream_module._current()))
        return call(function, what, args, kwargs, allow_host)

    monkeypatch.setattr(_calls, "call", logged_call)
    across = _calls.copy_across

    def logged_copy_across(source, order="C"):
        log.append(("copy across", runtime.getDevice(), stream_module._current()))
        return across(source, order)

    monkeypatch.setattr(_calls, "copy_across", logged_copy_across)
    for name in ("malloc", "used_bytes", "set_limit", "free_all_blocks"):
        method = getattr(memory.MemoryPool, name)

        def logged(self, *args, _method=method, _name=name, **kwargs):
            entry = (f"pool {_name}", self, runtime.getDevice())
            if _name == "malloc":
                entry += (args[0], stream_module._current())
            log.append(entry)
            return _method(self, *args, **kwargs)

        monkeypatch.setattr(memory.MemoryPool, name, logged)
    return log
