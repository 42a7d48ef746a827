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


@pytest.mark.parametrize("op", ["maximum", "minimum", "multiply", "add"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int8", "uint16", "bool"])
def test_scatter_reduce_matches_numpys_ufunc_at_in_every_dtype(op, dtype, rng):
    """device.scatter_reduce gives NumPy's ``ufunc.at`` on every device, where
    CuPy's ``maximum.at``/``minimum.at`` refuse 16-bit and small dtypes and
    ``multiply.at`` does not exist (device/scatter.py)."""
    from minikeras.backend.dtypes import bfloat16

    numpy_dtype = bfloat16() if dtype == "bfloat16" else numpy.dtype(dtype)
    device = registry.default_device()
    indices = numpy.array([3, 0, 3, 1, 3, 0, 4])  # row 2 untouched, row 3 three times
    values = rng.integers(-2 if dtype not in ("uint16", "bool") else 0, 3, size=(7, 2)).astype(numpy_dtype)
    target = rng.integers(1, 3, size=(5, 2)).astype(numpy_dtype)
    wide = numpy.float64 if dtype == "bfloat16" else numpy_dtype  # NumPy's ufunc.at has no bfloat16 loop
    expected = target.astype(wide)
    getattr(numpy, op).at(expected, indices, values.astype(wide))
    with device.activate():
        on_device = device.asarray(target)
        device.scatter_reduce(op, on_device, device.asarray(indices), device.asarray(values))
    numpy.testing.assert_array_equal(device.to_host(on_device).astype(wide), expected.astype(numpy_dtype).astype(wide))
