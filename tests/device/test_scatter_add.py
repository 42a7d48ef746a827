"""device.scatter_add for every dtype: CuPy 14's add.at accepts only some
(device/scatter.py); the simulated GPU refuses the others as CuPy does."""
import numpy
import pytest

from minikeras.device import registry


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "uint8", "int16", "bool", "complex64"])
def test_scatter_add_accumulates_repeated_indices_in_every_dtype(dtype):
    device = registry.default_device()
    target = numpy.zeros(4, dtype)
    values = (numpy.array([1, 2, 3, 1]) * (1 + 1j if dtype.startswith("complex") else 1)).astype(dtype)
    indices = numpy.array([0, 2, 2, 3])
    expected = target.copy()
    numpy.add.at(expected, indices, values)
    with device.activate():
        on_device = device.asarray(target)
        device.scatter_add(on_device, device.asarray(indices), device.asarray(values))
    numpy.testing.assert_array_equal(device.to_host(on_device), expected)


def test_the_simulated_gpu_refuses_add_at_where_cupy_does(simulated_gpu):
    with simulated_gpu.activate():
        target = simulated_gpu.asarray(numpy.zeros(3, "int8"))
        with pytest.raises(TypeError, match="cupy.add.at only supports"):
            simulated_gpu.xp.add.at(target, simulated_gpu.asarray(numpy.array([0])), 1)
