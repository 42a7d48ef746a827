"""``Function.half_in_float32``: ops whose kernels take no 16-bit floats
(linalg, fft, einsum) compute float16/bfloat16 inputs in float32, return
the inputs' dtype, and give each input its gradient in its own dtype."""
import numpy
import pytest

import minikeras as mk
from minikeras import ops
from minikeras.autograd import Function
from minikeras.backend.dtypes import as_numpy_dtype

_MATRIX = numpy.array([[2.0, 0.5], [0.25, 1.5]])


class _Recorder(Function):
    """Doubles its input and records the dtypes forward and backward saw."""

    half_in_float32 = True
    seen = []

    def forward(self, x):
        type(self).seen.append(("forward", x.dtype.name))
        return x * 2

    def backward(self, grad):
        type(self).seen.append(("backward", grad.dtype.name))
        return grad * 2


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_forward_and_backward_run_in_float32_and_keep_the_dtype(dtype):
    _Recorder.seen = []
    x = mk.Tensor(numpy.array([1.0, -3.0]).astype(as_numpy_dtype(dtype)), requires_grad=True)
    out = _Recorder().apply(x)
    assert out.dtype.name == dtype
    out.sum().backward()
    assert _Recorder.seen == [("forward", "float32"), ("backward", "float32")]
    assert x.grad.dtype.name == dtype
    numpy.testing.assert_array_equal(x.grad.numpy().astype("float32"), [2.0, 2.0])


def test_32_bit_inputs_are_not_touched():
    _Recorder.seen = []
    x = mk.Tensor(numpy.array([1.0, -3.0], "float32"), requires_grad=True)
    function = _Recorder()
    function.apply(x).sum().backward()
    assert _Recorder.seen == [("forward", "float32"), ("backward", "float32")]
    assert function._half_inputs is None


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_linalg_inverse_of_16_bit_matrices(dtype):
    a = mk.Tensor(_MATRIX.astype(as_numpy_dtype(dtype)), requires_grad=True)
    inverse = ops.inv(a)
    assert inverse.dtype.name == dtype
    rounded = a.numpy().astype("float64")
    numpy.testing.assert_allclose(inverse.numpy().astype("float64"), numpy.linalg.inv(rounded), rtol=1e-2)
    inverse.astype("float32").sum().backward()
    assert a.grad.dtype.name == dtype
    inverse_t = numpy.linalg.inv(rounded).T
    expected = -(inverse_t @ numpy.ones((2, 2)) @ inverse_t)
    numpy.testing.assert_allclose(a.grad.numpy().astype("float64"), expected, rtol=2e-2, atol=1e-2)


def test_mixed_16_and_32_bit_inputs_give_float32():
    a = mk.tensor(_MATRIX.astype("float16"))
    b = mk.tensor(_MATRIX.astype("float32"))
    out = ops.einsum("ij,jk->ik", a, b)
    assert out.dtype == numpy.float32
    numpy.testing.assert_allclose(out.numpy(), _MATRIX.astype("float16").astype("float64") @ _MATRIX, rtol=1e-6)


def test_fft_of_bfloat16_gives_float32():
    x = mk.tensor(numpy.array([1.0, 2.0, 0.0, -1.0])).astype("bfloat16")
    real, imag = ops.rfft(x)
    assert real.dtype.name == imag.dtype.name == "float32"  # Keras 3's spectrum of a 16-bit signal
    expected = numpy.fft.rfft([1.0, 2.0, 0.0, -1.0])
    numpy.testing.assert_allclose(real.numpy().astype("float64"), expected.real, atol=1e-6)
    numpy.testing.assert_allclose(imag.numpy().astype("float64"), expected.imag, atol=1e-6)
