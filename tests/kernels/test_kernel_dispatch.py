"""What ``kernels.get`` hands out per device (kernels/kernel.py), and the
launch arguments kept between launches: on the CPU the bare reference, no
launch-counting context entered; on the simulated GPU the reference counted
as one launch; pooling's twelve geometry arguments made once per geometry."""
import numpy

from minikeras import kernels
from minikeras.device import registry
from minikeras.kernels import pooling
from minikeras.ops.nn.sliding_window import WindowGeometry


def test_on_the_cpu_a_kernel_is_its_bare_reference(monkeypatch):
    cpu = registry.get_device("cpu:0")

    def refused():
        raise AssertionError("the CPU counts no launches: one_kernel() is not entered")

    monkeypatch.setattr(cpu, "one_kernel", refused)
    out = numpy.array([[-1.0, 2.0], [3.0, -4.0]], "float32")
    result = kernels.get("bias_relu", cpu)(out, numpy.array([0.5, 0.5], "float32"), True)
    assert result is out and out.tolist() == [[0.0, 2.5], [3.5, 0.0]]


def test_on_the_simulated_gpu_a_kernel_counts_one_launch(simulated_gpu):
    out = simulated_gpu.asarray(numpy.array([[-1.0, 2.0]], "float32"))
    before = simulated_gpu.stats.kernel_launches
    with simulated_gpu.activate():
        kernels.get("bias_relu", simulated_gpu)(out, simulated_gpu.asarray(numpy.ones(2, "float32")), True)
    assert simulated_gpu.stats.kernel_launches == before + 1
    assert simulated_gpu.to_host(out).tolist() == [[0.0, 3.0]]


def test_pooling_geometry_arguments_are_made_once_per_geometry():
    geometry = WindowGeometry("max_pool2d", (16, 28, 28, 32), (2, 2), (2, 2), (1, 1), "same")
    first = pooling._geometry_arguments(geometry)
    hits = pooling._geometry_values.cache_info().hits
    again = pooling._geometry_arguments(WindowGeometry("max_pool2d", (16, 28, 28, 32), (2, 2), (2, 2), (1, 1), "same"))
    assert again is first and pooling._geometry_values.cache_info().hits == hits + 1
    assert [type(value) for value in first] == [numpy.int64] * 6 + [numpy.int32] * 6
    assert [int(value) for value in first] == [16, 28, 28, 32, 14, 14, 2, 2, 2, 2, 0, 0]
