"""CUDA graph capture and replay (``device/graph.py``): GpuDevice's capture
on the simulated CuPy, which models what CUDA does and refuses
(minikeras/testing/sim_cupy/cuda/graph.py), and on a real GPU."""
import numpy
import pytest

from minikeras.device import registry
from minikeras.device.graph import GraphCaptureError


def _arrays(device, *values):
    with device.activate():
        return [device.asarray(numpy.asarray(value, numpy.float32)) for value in values]


def _capture_axpy(device):
    """A graph of ``total += a * scale + 1`` over buffers made before it."""
    a, scale, total = _arrays(device, numpy.ones(4), 2.0, numpy.zeros(4))
    with device.capture() as capture:
        with device.activate():
            total += a * scale + 1.0
    return capture.graph, a, scale, total


def test_a_capture_runs_nothing_and_each_launch_replays_on_the_current_contents(simulated_gpu):
    graph, a, scale, total = _capture_axpy(simulated_gpu)
    assert simulated_gpu.to_host(total).tolist() == [0, 0, 0, 0]  # as on CUDA, capturing ran nothing
    before = simulated_gpu.stats.snapshot()
    graph.launch()
    graph.launch()
    assert simulated_gpu.to_host(total).tolist() == [6, 6, 6, 6]
    with simulated_gpu.activate():
        a[...] = 10.0  # a replay reads the buffer's contents now: static inputs work
        scale[...] = 3.0
    graph.launch()
    assert simulated_gpu.to_host(total).tolist() == [37, 37, 37, 37]
    after = simulated_gpu.stats.snapshot()
    assert after["graph_launches"] - before["graph_launches"] == 3
    assert len(graph._graph._nodes) == 3  # the simulated CUDA graph: a * scale, + 1.0, total +=


def test_a_replay_uses_the_python_scalars_of_the_capture(simulated_gpu):
    (total,) = _arrays(simulated_gpu, numpy.zeros(2))
    rate = 0.5
    with simulated_gpu.capture() as capture:
        with simulated_gpu.activate():
            total += rate
    rate = 100.0  # too late: the kernel's argument was baked in
    capture.graph.launch()
    assert simulated_gpu.to_host(total).tolist() == [0.5, 0.5]


def test_replays_allocate_nothing_the_device_counts(simulated_gpu):
    graph, _, _, total = _capture_axpy(simulated_gpu)
    graph.launch()
    held = simulated_gpu.memory.current
    for _ in range(5):
        graph.launch()
    assert simulated_gpu.memory.current == held


_LIBRARY_REFUSAL = "the host cannot wait for the device inside a graph"  # device.to_host/synchronize say why
_CUDA_REFUSAL = "cudaErrorStreamCaptureUnsupported"  # CUDA's own error for a synchronous copy in a capture


@pytest.mark.parametrize("read, message", [
    (lambda d, x: d.to_host(x), _LIBRARY_REFUSAL), (lambda d, x: d.synchronize(), _LIBRARY_REFUSAL),
    (lambda d, x: float(x.sum()), _CUDA_REFUSAL), (lambda d, x: x.item(), _CUDA_REFUSAL),
    (lambda d, x: bool(x[0] > 0), _CUDA_REFUSAL)], ids=["to_host", "synchronize", "float", "item", "bool"])
def test_a_host_read_during_a_capture_is_refused(simulated_gpu, read, message):
    (x,) = _arrays(simulated_gpu, [1.0])
    with pytest.raises(GraphCaptureError, match=message):
        with simulated_gpu.capture():
            with simulated_gpu.activate():
                read(simulated_gpu, x * 2)


def test_an_upload_during_a_capture_is_refused(simulated_gpu):
    (x,) = _arrays(simulated_gpu, [1.0, 2.0])
    for upload, message in ((lambda d, xp: d.asarray(numpy.ones(2)), "static device buffers"),
                            (lambda d, xp: x + xp.asarray(numpy.ones(2)), _CUDA_REFUSAL),
                            (lambda d, xp: x.set(numpy.ones(2, numpy.float32)), _CUDA_REFUSAL)):
        with pytest.raises(GraphCaptureError, match=message):
            with simulated_gpu.capture():
                with simulated_gpu.activate():
                    upload(simulated_gpu, simulated_gpu.xp)


def test_work_on_another_device_during_a_capture_is_refused(simulated_gpus):
    first, second = simulated_gpus("1x2")
    (x,) = _arrays(first, [1.0])
    (y,) = _arrays(second, [1.0])
    with pytest.raises(GraphCaptureError, match="another device's stream"):
        with first.capture():
            with second.activate():
                y + 1.0
    with pytest.raises(GraphCaptureError, match="another stream"):
        with first.capture():
            first.asarray(y)


def test_a_random_draw_during_a_capture_is_refused(simulated_gpu):
    rng = simulated_gpu.new_rng([1])
    with pytest.raises(GraphCaptureError, match="random"):
        with simulated_gpu.capture():
            with simulated_gpu.activate():
                rng.random(size=3)


def test_global_mode_refuses_allocations_and_relaxed_mode_takes_them(simulated_gpu):
    (x,) = _arrays(simulated_gpu, [1.0])
    with pytest.raises(GraphCaptureError, match=_CUDA_REFUSAL):  # cudaMalloc by the capture's fresh pool
        with simulated_gpu.capture(mode="global"):
            with simulated_gpu.activate():
                x + 1.0
    with simulated_gpu.capture(mode="global") as capture:  # in place: no allocation
        with simulated_gpu.activate():
            x += 1.0
    capture.graph.launch()
    assert simulated_gpu.to_host(x).tolist() == [2.0]
    with pytest.raises(ValueError, match="capture mode"):
        simulated_gpu.capture(mode="strict")


def test_a_failed_capture_leaves_the_device_as_it_was(simulated_gpu):
    (x,) = _arrays(simulated_gpu, [1.0])
    stream = simulated_gpu.stream
    with pytest.raises(GraphCaptureError):
        with simulated_gpu.capture():
            with simulated_gpu.activate():
                x += 5.0
                x.item()
    assert simulated_gpu.stream is stream
    assert simulated_gpu.to_host(x).tolist() == [1.0]  # the capture's write was not run
    with simulated_gpu.activate():
        assert float((x + 1.0).sum()) == 2.0  # host reads work again


def test_cupys_products_are_refused_during_a_capture_and_the_direct_cublas_path_is_captured(simulated_gpu):
    # Seen on an H200: CuPy 14.2 refuses every cuBLAS call while a stream
    # captures (NotImplementedError from cublas.setStream). The simulated CuPy
    # refuses its cuBLAS-backed calls as CuPy does; device.gemm calls cuBLAS's
    # GEMM itself (device/cublas_direct.py, on the simulated libcublas), which a
    # graph holds.
    a, b, out = _arrays(simulated_gpu, numpy.ones((3, 4)), numpy.ones((4, 2)), numpy.zeros((3, 2)))
    xp = simulated_gpu.xp
    for product in (lambda: xp.matmul(a, b), lambda: a @ b, lambda: xp.tensordot(a, b, 1),
                    lambda: xp.einsum("ij,jk->ik", a, b)):
        with pytest.raises(GraphCaptureError, match="cuBLAS API during stream capture"):
            with simulated_gpu.capture():
                with simulated_gpu.activate():
                    product()
    with simulated_gpu.capture() as capture:
        with simulated_gpu.activate():
            simulated_gpu.gemm(a, b.T.copy().T, out=out)  # a transposed operand goes as op T
            simulated_gpu.matmul(a, b)
    assert simulated_gpu.to_host(out).tolist() == [[0.0] * 2] * 3  # the capture ran nothing
    with simulated_gpu.activate():
        a[...] = 2.0
    capture.graph.launch()
    assert simulated_gpu.to_host(out).tolist() == [[8.0] * 2] * 3
    with pytest.raises(GraphCaptureError, match="products of one float dtype"):
        with simulated_gpu.capture():
            with simulated_gpu.activate():
                simulated_gpu.gemm(a.astype("float16"), b)  # 16-bit products are captured: mixed ones are not


def test_cupys_cublas_wrapper_refuses_a_capturing_stream():
    from minikeras.testing.sim_cupy.libs import cublas
    from minikeras.testing import sim_cupy

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINIKERAS_SIMULATED_GPU", "1")
        with sim_cupy.cuda.Device(0):
            handle = sim_cupy.cuda.device.get_cublas_handle()
            stream = sim_cupy.cuda.Stream(non_blocking=True)
            cublas.setStream(handle, stream.ptr)  # before the capture: fine (cublas_direct.prepare)
            stream.begin_capture()
            with pytest.raises(NotImplementedError, match="during stream capture is currently unsupported"):
                cublas.setStream(handle, stream.ptr)
            stream.end_capture()


def test_the_cpu_has_no_graphs():
    cpu = registry.get_device("cpu:0")
    assert not cpu.supports_graphs
    with pytest.raises(GraphCaptureError, match="no graphs"):
        cpu.capture()


@pytest.mark.gpu
def test_a_cuda_graph_replays_on_static_buffers_with_a_private_pool():
    gpu = registry.get_device("gpu:0")
    graph, a, scale, total = _capture_axpy(gpu)
    assert gpu.to_host(total).tolist() == [0, 0, 0, 0]
    graph.launch()
    graph.launch()
    with gpu.activate():
        a[...] = 10.0
    held = gpu.pool.used_bytes()
    graph.launch()
    assert gpu.to_host(total).tolist() == [27, 27, 27, 27]
    assert gpu.pool.used_bytes() == held  # the graph's temporaries live in its own pool
    with pytest.raises(GraphCaptureError):
        with gpu.capture():
            with gpu.activate():
                gpu.to_host(total + 1.0)
    with gpu.activate():
        assert float((total + 1.0).sum()) == 112.0  # the device works after a refused capture
    graph.release()
