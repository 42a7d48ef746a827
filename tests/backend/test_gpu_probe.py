"""backend.gpu_available / gpu_unavailable_reason: each missing piece is named.

No GPU here, so CuPy is replaced by a NumPy-backed fake whose steps can be
made to fail the way a real machine fails.
"""
import contextlib
import types

import numpy
import pytest

from minikeras import backend
from minikeras.backend import gpu_probe


class _CudaRuntimeError(RuntimeError):
    pass


def _fake_cupy(device_count=1):
    """A stand-in for ``cupy`` with just what the probe uses, on NumPy."""
    runtime = types.SimpleNamespace(getDeviceCount=lambda: device_count)
    nvrtc = types.SimpleNamespace(getVersion=lambda: (12, 9))
    cuda = types.SimpleNamespace(runtime=runtime, nvrtc=nvrtc, Device=lambda index: contextlib.nullcontext())
    return types.SimpleNamespace(
        cuda=cuda, arange=numpy.arange, ones=numpy.ones, matmul=numpy.matmul, asnumpy=numpy.asarray)


def _probe_with(fake):
    return gpu_probe.run_probe(lambda: fake)


def _raise(error):
    def fail(*args, **kwargs):
        raise error
    return fail


def test_a_working_gpu_is_available():
    fake = _fake_cupy()
    assert _probe_with(fake) == (fake, None)


def test_cupy_not_installed(monkeypatch):
    monkeypatch.setattr(gpu_probe, "_import_cupy", _raise(ImportError("No module named 'cupy'")))
    module, reason = gpu_probe.run_probe()
    assert module is None
    assert "CuPy is not installed" in reason and "minikeras[gpu]" in reason


def test_cupy_broken_at_import():
    module, reason = gpu_probe.run_probe(_raise(OSError("libcudart.so.12: cannot open shared object file")))
    assert module is None and "failed to import" in reason and "libcudart" in reason


def test_no_driver():
    fake = _fake_cupy()
    fake.cuda.runtime.getDeviceCount = _raise(_CudaRuntimeError("cudaErrorInsufficientDriver"))
    module, reason = _probe_with(fake)
    assert module is None
    assert "driver" in reason and "cudaErrorInsufficientDriver" in reason


def test_driver_but_no_device():
    module, reason = _probe_with(_fake_cupy(device_count=0))
    assert module is None and "no CUDA device" in reason


def test_nvrtc_missing():
    fake = _fake_cupy()
    fake.arange = _raise(RuntimeError("CuPy failed to load libnvrtc.so.12"))
    module, reason = _probe_with(fake)
    assert module is None
    assert "NVRTC" in reason and "libnvrtc.so.12" in reason


def test_nvrtc_missing_even_when_the_kernel_is_cached():
    fake = _fake_cupy()  # the kernel itself would run (found in CuPy's kernel cache)
    fake.cuda.nvrtc.getVersion = _raise(RuntimeError("CuPy failed to load libnvrtc.so.12"))
    module, reason = _probe_with(fake)
    assert module is None and "NVRTC" in reason


def test_wrong_elementwise_result_is_not_trusted():
    fake = _fake_cupy()
    fake.arange = lambda n, dtype: numpy.zeros(n, dtype)
    module, reason = _probe_with(fake)
    assert module is None and "elementwise" in reason


def test_cublas_missing():
    fake = _fake_cupy()
    fake.matmul = _raise(RuntimeError("libcublas.so.12: cannot open shared object file"))
    module, reason = _probe_with(fake)
    assert module is None
    assert "cuBLAS" in reason and "libcublas" in reason


def test_wrong_matmul_result_is_not_trusted():
    fake = _fake_cupy()
    fake.matmul = lambda a, b: a + b
    module, reason = _probe_with(fake)
    assert module is None and "matmul" in reason


def test_checks_run_in_order_and_stop_at_the_first_failure():
    fake = _fake_cupy(device_count=0)
    fake.arange = _raise(AssertionError("the kernel must not run without a device"))
    assert "no CUDA device" in _probe_with(fake)[1]


def test_public_functions_use_the_cached_probe(monkeypatch):
    calls = []

    def import_fake():
        calls.append(1)
        fake = _fake_cupy()
        fake.matmul = _raise(RuntimeError("no cuBLAS"))
        return fake

    monkeypatch.setattr(gpu_probe, "_import_cupy", import_fake)
    gpu_probe._reset_for_tests()
    try:
        assert backend.gpu_available() is False
        assert "cuBLAS" in backend.gpu_unavailable_reason()
        assert backend.gpu_available() is False
        assert len(calls) == 1  # cached: the kernel is compiled once per process
        monkeypatch.setattr(gpu_probe, "_import_cupy", _fake_cupy)
        assert gpu_probe.probe(refresh=True)[1] is None
        assert backend.gpu_available() is True and backend.gpu_unavailable_reason() is None
    finally:
        gpu_probe._reset_for_tests()


def test_real_machine_reason_is_consistent():
    # Whatever this machine has, the two public answers agree.
    available, reason = backend.gpu_available(), backend.gpu_unavailable_reason()
    assert available == (reason is None)
    if not available:
        assert isinstance(reason, str) and reason
