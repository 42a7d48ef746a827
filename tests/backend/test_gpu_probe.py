"""backend.gpu_available / gpu_unavailable_reason: each missing piece is named.

No GPU here, so the probe runs on the simulated CuPy (minikeras.testing.sim_cupy),
with one of its pieces made to fail the way a real machine fails.
"""
import pytest

from minikeras import backend
from minikeras.backend import gpu_probe
from minikeras.testing import sim_cupy
from minikeras.testing.sim_cupy.simulation import ENVIRONMENT_VARIABLE


@pytest.fixture
def cupy(monkeypatch):
    """The simulated CuPy with one device; monkeypatch its pieces to break them."""
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "1")
    return sim_cupy


def _probe_with(cupy):
    return gpu_probe.run_probe(lambda: cupy)


def _raise(error):
    def fail(*args, **kwargs):
        raise error
    return fail


def test_a_working_gpu_is_available(cupy):
    assert _probe_with(cupy) == (cupy, None)


def test_cupy_not_installed(monkeypatch):
    monkeypatch.setattr(gpu_probe, "_import_cupy", _raise(ImportError("No module named 'cupy'")))
    module, reason = gpu_probe.run_probe()
    assert module is None
    assert "CuPy is not installed" in reason and "minikeras[gpu]" in reason


def test_cupy_broken_at_import():
    module, reason = gpu_probe.run_probe(_raise(OSError("libcudart.so.12: cannot open shared object file")))
    assert module is None and "failed to import" in reason and "libcudart" in reason


def test_no_driver(cupy, monkeypatch):
    monkeypatch.setattr(cupy.cuda.runtime, "getDeviceCount", _raise(cupy.cuda.runtime.CUDARuntimeError(35)))
    module, reason = _probe_with(cupy)
    assert module is None
    assert "driver" in reason and "cudaErrorInsufficientDriver" in reason


def test_driver_but_no_device(cupy, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "0")
    module, reason = _probe_with(cupy)
    assert module is None and "no CUDA device" in reason


def test_nvrtc_missing(cupy, monkeypatch):
    monkeypatch.setattr(cupy, "arange", _raise(RuntimeError("CuPy failed to load libnvrtc.so.12")))
    module, reason = _probe_with(cupy)
    assert module is None
    assert "NVRTC" in reason and "libnvrtc.so.12" in reason


def test_nvrtc_missing_even_when_the_kernel_is_cached(cupy, monkeypatch):
    # the kernel itself would run (found in CuPy's kernel cache)
    monkeypatch.setattr(cupy.cuda.nvrtc, "getVersion", _raise(RuntimeError("CuPy failed to load libnvrtc.so.12")))
    module, reason = _probe_with(cupy)
    assert module is None and "NVRTC" in reason


def test_wrong_elementwise_result_is_not_trusted(cupy, monkeypatch):
    zeros = cupy.zeros
    monkeypatch.setattr(cupy, "arange", lambda n, dtype: zeros(n, dtype))
    module, reason = _probe_with(cupy)
    assert module is None and "elementwise" in reason


def test_cublas_missing(cupy, monkeypatch):
    monkeypatch.setattr(cupy, "matmul", _raise(RuntimeError("libcublas.so.12: cannot open shared object file")))
    module, reason = _probe_with(cupy)
    assert module is None
    assert "cuBLAS" in reason and "libcublas" in reason


def test_wrong_matmul_result_is_not_trusted(cupy, monkeypatch):
    monkeypatch.setattr(cupy, "matmul", lambda a, b: a + b)
    module, reason = _probe_with(cupy)
    assert module is None and "matmul" in reason


def test_checks_run_in_order_and_stop_at_the_first_failure(cupy, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "0")
    monkeypatch.setattr(cupy, "arange", _raise(AssertionError("the kernel must not run without a device")))
    assert "no CUDA device" in _probe_with(cupy)[1]


def test_the_probe_works_on_its_own_stream(cupy):
    # The simulated CuPy refuses work on the legacy default stream, as the
    # library's GPU code never issues any there (device/gpu.py, rule 1).
    with cupy.cuda.Device(0), pytest.raises(RuntimeError, match="legacy default stream"):
        cupy.arange(4, dtype="float32")
    assert _probe_with(cupy)[1] is None


def test_public_functions_use_the_cached_probe(cupy, monkeypatch):
    calls = []

    def import_broken():
        calls.append(1)
        monkeypatch.setattr(cupy, "matmul", _raise(RuntimeError("no cuBLAS")))
        return cupy

    monkeypatch.setattr(gpu_probe, "_import_cupy", import_broken)
    gpu_probe._reset_for_tests()
    try:
        assert backend.gpu_available() is False
        assert "cuBLAS" in backend.gpu_unavailable_reason()
        assert backend.gpu_available() is False
        assert len(calls) == 1  # cached: the kernel is compiled once per process
        monkeypatch.undo()
        monkeypatch.setenv(ENVIRONMENT_VARIABLE, "1")
        monkeypatch.setattr(gpu_probe, "_import_cupy", lambda: cupy)
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
